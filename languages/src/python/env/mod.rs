//! Python environments: a virtualenv carve owns (`{env}/venv`), made with the CPython the
//! project's `requires-python` allows, into which one `pip install` puts the project itself
//! (not editable: carve's redirect loads it from the tree a run uses) with its test extras,
//! the test requirements found (see [`metadata`]) and the pytest plugins its configuration
//! needs (see [`plugins`]). Repairs install what a failed run names ([`repair`]). The
//! installed set is pinned as `requirements.lock`, from which the image's dependency layer
//! installs exactly that set with `--no-deps`.

pub mod ini;
pub mod interpreters;
pub mod metadata;
pub mod plugins;
pub mod repair;
pub mod requirements;
pub mod sources;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::Language;
use crate::env::{
    Activation, EnvError, EnvPlan, EnvSupport, Failures, Finding, GeneratedFile, IMAGE_REPO, ImageRecipe, Inventory,
    Repairs, Step, StepDir, Tool, ToolRequirement,
};

pub struct PythonEnv;

pub static PYTHON_ENV: PythonEnv = PythonEnv;

const VENV_PYTHON: &str = "{env}/venv/bin/python";
const ROOT_FILES: &[&str] =
    &["pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py", "pytest.ini", ".python-version"];

/// The `project` finding's value: `NAME SPEC`, where NAME may hold spaces (an unnamed project is
/// [`metadata::UNNAMED`]) and SPEC (`.` or `.[extras]`) holds none.
fn project_finding(value: &str) -> (&str, &str) {
    value.rsplit_once(' ').unwrap_or((value, "."))
}

/// The project's name as the lockfile leaves it out (it is the source, not a dependency).
fn project_name(plan: &EnvPlan) -> Option<String> {
    let f = plan.findings.iter().find(|f| f.what == "project")?;
    let (name, _) = project_finding(&f.value);
    (name != metadata::UNNAMED).then(|| name.to_string())
}

impl EnvSupport for PythonEnv {
    fn inputs(&self, repo: &Path) -> Vec<String> {
        let mut out: BTreeSet<String> =
            ROOT_FILES.iter().filter(|f| repo.join(f).is_file()).map(|f| f.to_string()).collect();
        let list = |dir: &str, keep: &dyn Fn(&str) -> bool| -> Vec<String> {
            let Ok(entries) = std::fs::read_dir(repo.join(dir)) else { return Vec::new() };
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| keep(n))
                .map(|n| if dir.is_empty() { n } else { format!("{dir}/{n}") })
                .collect()
        };
        out.extend(list("", &|n| n.contains("requirements") && n.ends_with(".txt")));
        out.extend(list("requirements", &|n| n.ends_with(".txt") || n.ends_with(".in")));
        for d in ["tests", "test"] {
            out.extend(list(d, &|n| n == "requirements.txt"));
        }
        out.extend(list(".github/workflows", &|n| n.ends_with(".yml") || n.ends_with(".yaml")));
        out.into_iter().collect()
    }

    fn detect(&self, repo: &Path) -> Result<EnvPlan, EnvError> {
        let Some(meta) = metadata::read_repo(repo)? else {
            return Err(EnvError::NoMetadata(
                "no Python install metadata: none of pyproject.toml, setup.py, setup.cfg, requirements*.txt, \
                 requirements/*.txt, tox.ini, noxfile.py or a CI workflow with `pip install`; add one (a \
                 requirements-test.txt listing what the tests import is enough), or install by hand and pass --python"
                    .into(),
            ));
        };
        let mut findings = Vec::new();
        let requires = vec![ToolRequirement {
            tool: "python".into(),
            wanted: meta.requires_python.as_ref().map(|r| r.0.clone()),
            source: meta.requires_python.as_ref().map_or("nothing asks for a version".into(), |r| r.1.clone()),
        }];
        if let Some((range, source)) = &meta.requires_python {
            findings.push(Finding::new("interpreter", format!("CPython {range}"), source.clone()));
        }
        if let Some(pin) = &meta.pin {
            findings.push(Finding::new("interpreter-pin", pin.clone(), ".python-version"));
        }
        if let Some(name) = &meta.project {
            let extras: Vec<&str> = meta.extras.iter().map(|(e, _)| e.as_str()).collect();
            let spec = if extras.is_empty() { ".".to_string() } else { format!(".[{}]", extras.join(",")) };
            findings.push(Finding::new("project", format!("{name} {spec}"), meta.project_source.clone()));
        }
        for (extra, source) in &meta.extras {
            findings.push(Finding::new("extra", extra.clone(), source.clone()));
        }
        let mut named: BTreeSet<String> = BTreeSet::new();
        for (req, source) in &meta.requirements {
            named.insert(requirements::name(req));
            findings.push(Finding::new("install", req.clone(), source.clone()));
        }
        let (plugins, _) = plugins::required(repo);
        for p in plugins {
            if named.insert(requirements::normalize(&p.value)) {
                findings.push(p);
            }
        }
        if !named.contains("pytest") {
            findings.push(Finding::new("install", "pytest", "carve: the tests run under pytest"));
        }
        for (k, v, why) in &meta.build_env {
            findings.push(Finding::new("build-env", format!("{k}={v}"), why.clone()));
        }
        findings.extend(meta.notes.iter().cloned());
        Ok(EnvPlan {
            language: Language::Python,
            inputs: self.inputs(repo),
            whole_source: meta.project.is_some(),
            requires,
            findings,
        })
    }

    fn provided(&self, repo: &Path) -> Option<String> {
        for venv in [".venv", "venv", "env"] {
            if repo.join(venv).join("pyvenv.cfg").is_file() {
                return Some(format!("the repository's own virtualenv {venv}/ is used"));
            }
        }
        std::env::var("VIRTUAL_ENV")
            .ok()
            .filter(|v| !v.is_empty())
            .map(|v| format!("the active virtualenv {v} is used"))
    }

    fn toolchain(&self, plan: &EnvPlan) -> Result<Vec<Tool>, EnvError> {
        let req = plan.requires.iter().find(|r| r.tool == "python");
        let pin = plan.findings.iter().find(|f| f.what == "interpreter-pin").map(|f| f.value.as_str());
        let found = interpreters::found();
        let tool = interpreters::choose(
            &found,
            req.and_then(|r| r.wanted.as_deref()),
            req.map_or("", |r| r.source.as_str()),
            pin,
        )?;
        Ok(vec![tool])
    }

    fn install_steps(&self, plan: &EnvPlan, tools: &[Tool]) -> Vec<Step> {
        let python = tools.first().map_or("python3", |t| t.program.as_str());
        let version = tools.first().map_or("", |t| t.version.as_str());
        let mut steps = vec![Step::new(
            &[python, "-m", "venv", "{env}/venv"],
            StepDir::Env,
            format!("a virtualenv carve owns, with CPython {version}"),
        )];
        let mut words: Vec<String> =
            ["{env}/venv/bin/python", "-m", "pip", "install", "--disable-pip-version-check"].map(String::from).to_vec();
        let mut why = Vec::new();
        let mut needs_source = false;
        for f in &plan.findings {
            match f.what.as_str() {
                "project" => {
                    let (_, spec) = project_finding(&f.value);
                    words.push(spec.to_string());
                    why.push(format!("the project ({})", f.source));
                    needs_source = true;
                }
                "install" | "plugin" => {
                    words.push(f.value.clone());
                    why.push(format!("{} ({})", f.value, f.source));
                }
                _ => {}
            }
        }
        let mut step = Step { argv: words, dir: StepDir::Src, env: Vec::new(), why: why.join("; "), needs_source };
        for f in plan.findings.iter().filter(|f| f.what == "build-env") {
            if let Some((k, v)) = f.value.split_once('=') {
                step = step.with_env(k, v);
            }
        }
        steps.push(step);
        steps
    }

    fn activation(&self, _plan: &EnvPlan, _tools: &[Tool]) -> Activation {
        Activation {
            interpreter: Some(VENV_PYTHON.into()),
            vars: vec![("PATH".into(), "{env}/venv/bin".into()), ("VIRTUAL_ENV".into(), "{env}/venv".into())],
            linked: Vec::new(),
            build: Vec::new(),
        }
    }

    fn repairs(&self, _plan: &EnvPlan, failures: &Failures, done: &[Step]) -> Repairs {
        let own = own_modules(&failures.repo);
        let asked: BTreeSet<String> =
            done.iter().flat_map(|s| s.argv.iter()).map(|w| requirements::name(w)).filter(|n| !n.is_empty()).collect();
        let mut text = failures.messages.join("\n");
        text.push('\n');
        text.push_str(&failures.output);
        let mut dists: BTreeMap<String, String> = BTreeMap::new();
        let mut unresolved = Vec::new();
        for need in repair::needs(&text, &own) {
            match need {
                repair::Need::Dist { dist, why } if !repair::already(&dist, &asked) => {
                    dists.entry(dist).or_insert(why);
                }
                repair::Need::Dist { dist, why } => {
                    unresolved.push(format!("{why}: {dist} is installed already and the error remains"))
                }
                repair::Need::Unresolved(u) => unresolved.push(u),
            }
        }
        let mut steps = Vec::new();
        if !dists.is_empty() {
            let mut argv: Vec<String> =
                ["{env}/venv/bin/python", "-m", "pip", "install", "--disable-pip-version-check"]
                    .map(String::from)
                    .to_vec();
            argv.extend(dists.keys().cloned());
            let why = dists.iter().map(|(d, w)| format!("{w} → {d}")).collect::<Vec<_>>().join("; ");
            steps.push(Step {
                argv,
                dir: StepDir::Env,
                env: Vec::new(),
                why: format!("repair: {why}"),
                needs_source: false,
            });
        }
        unresolved.sort();
        unresolved.dedup();
        Repairs { steps, build: None, unresolved }
    }

    /// `.py` files the build wrote inside the project's packages (hatch-vcs' and
    /// setuptools-scm's `_version.py`), and the extension modules it compiled into
    /// `build/lib.*/` (pallets/markupsafe's `_speedups`, without which its tests of the native
    /// code skip): the tree a run uses has no build, so it gets them.
    fn generated(&self, plan: &EnvPlan, env: &Path, repo: &Path) -> Vec<GeneratedFile> {
        if !plan.whole_source {
            return Vec::new();
        }
        let src = env.join("src");
        let mut out: Vec<GeneratedFile> = ignore::WalkBuilder::new(&src)
            .standard_filters(false)
            .filter_entry(|e| {
                let n = e.file_name().to_string_lossy();
                !(n == "build"
                    || n == "dist"
                    || n == ".eggs"
                    || n == "node_modules"
                    || n.ends_with(".egg-info")
                    || n == ".git")
            })
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && e.path().extension().is_some_and(|x| x == "py"))
            .filter(|e| e.path().parent().is_some_and(|d| d.join("__init__.py").is_file()))
            .filter_map(|e| e.path().strip_prefix(&src).ok().map(|p| p.to_string_lossy().replace('\\', "/")))
            .filter(|rel| !repo.join(rel).exists())
            .map(|path| GeneratedFile { path, built_at: None })
            .collect();
        out.extend(extension_modules(&src, repo));
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    fn inventory(&self, plan: &EnvPlan, tools: &[Tool], env: &Path) -> Inventory {
        let python = env.join("venv/bin/python");
        let out = std::process::Command::new(&python)
            .args(["-m", "pip", "list", "--format", "json", "--disable-pip-version-check"])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        let listed: Vec<BTreeMap<String, String>> =
            out.ok().and_then(|o| serde_json::from_slice(&o.stdout).ok()).unwrap_or_default();
        let project = project_name(plan).map(|n| requirements::normalize(&n));
        let mut packages = BTreeMap::new();
        let mut tool_versions = BTreeMap::new();
        for p in listed {
            let (Some(name), Some(version)) = (p.get("name"), p.get("version")) else { continue };
            let norm = requirements::normalize(name);
            if norm == "pip" {
                tool_versions.insert("pip".to_string(), version.clone());
            } else if Some(&norm) != project.as_ref() {
                packages.insert(name.clone(), version.clone());
            }
        }
        if let Some(t) = tools.first() {
            tool_versions.insert("python".into(), t.version.clone());
        }
        let lock = lockfile(&packages);
        Inventory {
            packages,
            lockfile: Some("requirements.lock".into()),
            lockfile_sha256: Some(hex::encode(sha2::Sha256::digest(lock.as_bytes()))),
            tools: tool_versions,
        }
    }

    fn image(&self, plan: &EnvPlan, tools: &[Tool], steps: &[Step], inventory: &Inventory, _env: &Path) -> ImageRecipe {
        let version = tools.first().map_or("3", |t| t.version.as_str());
        let minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
        let mut context_files = BTreeMap::new();
        context_files.insert("requirements.lock".to_string(), lockfile(&inventory.packages));
        let mut install = vec![
            Step::new(&["python", "-m", "venv", "{env}/venv"], StepDir::Env, "the virtualenv"),
            Step::new(
                &[
                    VENV_PYTHON,
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "-r",
                    "{env}/requirements.lock",
                ],
                StepDir::Env,
                "exactly the installed set (requirements.lock)",
            ),
        ];
        // What a helper did beyond the package manager is replayed as it was run.
        install.extend(steps.iter().filter(|s| s.why.starts_with("helper:")).cloned());
        let mut after_source = Vec::new();
        if let Some(step) = steps.iter().find(|s| s.needs_source) {
            // Built in place: what the build writes into the source (a version file) stays there.
            let script = format!("{VENV_PYTHON} -m pip install --disable-pip-version-check --no-deps {IMAGE_REPO}");
            let mut s =
                Step::new(&["sh", "-c", &script], StepDir::Env, "the project itself (its metadata and entry points)");
            s.env = step.env.clone();
            after_source.push(s);
        }
        let _ = plan;
        ImageRecipe {
            base: format!("python:{minor}-slim-bookworm"),
            inputs: Vec::new(),
            context_files,
            install,
            after_source,
            // Test ids are computed at collection, and some depend on string hashing (a
            // parametrized id pytest disambiguates from a set: w3lib's `…-output185`): a
            // harness that runs the tests in the image gets the ids carve recorded.
            env: vec![
                ("VIRTUAL_ENV".into(), "{env}/venv".into()),
                ("PATH".into(), "{env}/venv/bin:$PATH".into()),
                ("PYTHONHASHSEED".into(), "0".into()),
            ],
            linked: Vec::new(),
            build: Vec::new(),
        }
    }
}

/// `name==version` per line, sorted by name: what `pip install --no-deps -r` reinstalls.
pub fn lockfile(packages: &BTreeMap<String, String>) -> String {
    let mut lines: Vec<(String, String)> =
        packages.iter().map(|(n, v)| (requirements::normalize(n), format!("{n}=={v}"))).collect();
    lines.sort();
    let mut out = String::from("# The installed set of carve's environment (pip list), pinned.\n");
    for (_, l) in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Top-level module names the repository provides itself (at the root or under `src/`).
fn own_modules(repo: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in [repo.to_path_buf(), repo.join("src")] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            if path.is_dir() && (path.join("__init__.py").is_file() || name == "tests" || name == "test") {
                out.push(name);
            } else if let Some(stem) = name.strip_suffix(".py") {
                out.push(stem.to_string());
            }
        }
    }
    out.sort();
    out
}

/// Extension modules (`.so`, `.pyd`) a setuptools build compiled into `{src}/build/lib.*/`,
/// each placed where the repository keeps its package (at the top or under `src/`, `lib/`,
/// `python/`), when the repository does not hold one there already.
fn extension_modules(src: &Path, repo: &Path) -> Vec<GeneratedFile> {
    let Ok(entries) = std::fs::read_dir(src.join("build")) else { return Vec::new() };
    let mut libs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("lib")))
        .collect();
    libs.sort();
    let mut out = Vec::new();
    for lib in libs {
        for e in ignore::WalkBuilder::new(&lib).standard_filters(false).build().flatten() {
            let path = e.path();
            let is_extension = path.extension().is_some_and(|x| x == "so" || x == "pyd");
            if !is_extension || !path.parent().is_some_and(|d| d.join("__init__.py").is_file()) {
                continue;
            }
            let (Ok(in_lib), Ok(built_at)) = (path.strip_prefix(&lib), path.strip_prefix(src)) else { continue };
            let in_lib = in_lib.to_string_lossy().replace('\\', "/");
            let package = in_lib.rsplit_once('/').map_or("", |(d, _)| d);
            let home = ["", "src/", "lib/", "python/"]
                .into_iter()
                .find(|top| repo.join(format!("{top}{package}")).join("__init__.py").is_file());
            if let Some(top) = home
                && !repo.join(format!("{top}{in_lib}")).exists()
            {
                let built_at = Some(built_at.to_string_lossy().replace('\\', "/"));
                out.push(GeneratedFile { path: format!("{top}{in_lib}"), built_at });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(files: &[(&str, &str)]) -> (tempfile::TempDir, EnvPlan) {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let plan = PYTHON_ENV.detect(d.path()).unwrap();
        (d, plan)
    }

    #[test]
    fn one_pip_install_of_the_project_extras_requirements_and_plugins() {
        let (_d, plan) = plan_of(&[
            (
                "pyproject.toml",
                "[build-system]\nrequires=['setuptools']\n[project]\nname='demo'\n[project.optional-dependencies]\ntest=['pytest']\n[tool.pytest.ini_options]\naddopts='--cov=demo'\n",
            ),
            ("requirements-test.txt", "pyyaml\n"),
        ]);
        assert!(plan.whole_source);
        assert_eq!(plan.inputs, vec!["pyproject.toml", "requirements-test.txt"]);
        let tools =
            vec![Tool { tool: "python".into(), version: "3.11.7".into(), program: "/usr/bin/python3.11".into() }];
        let steps = PYTHON_ENV.install_steps(&plan, &tools);
        assert_eq!(steps[0].display(), "/usr/bin/python3.11 -m venv {env}/venv");
        assert_eq!(
            steps[1].display(),
            "{env}/venv/bin/python -m pip install --disable-pip-version-check '.[test]' pyyaml pytest-cov pytest"
        );
        assert!(steps[1].needs_source);
        assert!(
            steps[1].why.contains("pytest-cov (pyproject.toml [tool.pytest.ini_options] addopts `--cov=demo`)"),
            "{}",
            steps[1].why
        );
    }

    /// python-slugify (7b6d5d9): `setup.py` computes its name, so the project is unnamed; the
    /// install line once read `'project .'` out of "the project ." and pip refused it.
    #[test]
    fn a_project_whose_name_carve_cannot_read_is_installed_as_itself() {
        let (_d, plan) = plan_of(&[
            ("pyproject.toml", "[build-system]\nrequires=['setuptools>=61.2']\n"),
            ("setup.py", "about = {}\nsetup(name=about['__title__'])\n"),
        ]);
        let tools =
            vec![Tool { tool: "python".into(), version: "3.11.7".into(), program: "/usr/bin/python3.11".into() }];
        let steps = PYTHON_ENV.install_steps(&plan, &tools);
        assert_eq!(steps[1].display(), "{env}/venv/bin/python -m pip install --disable-pip-version-check . pytest");
        assert_eq!(project_name(&plan), None);
    }

    #[test]
    fn repairs_install_what_is_missing_once() {
        let (d, plan) = plan_of(&[("requirements.txt", "requests\n"), ("mypkg/__init__.py", "")]);
        let failures = Failures {
            messages: vec!["ModuleNotFoundError: No module named 'yaml'".into(), "No module named 'mypkg.x'".into()],
            output: String::new(),
            repo: d.path().to_path_buf(),
        };
        let r = PYTHON_ENV.repairs(&plan, &failures, &[]);
        assert_eq!(r.steps.len(), 1);
        assert_eq!(r.steps[0].argv.last().map(String::as_str), Some("PyYAML"));
        assert_eq!(r.steps[0].why, "repair: No module named 'yaml' → PyYAML");
        let again = PYTHON_ENV.repairs(&plan, &failures, &r.steps);
        assert!(again.steps.is_empty());
        assert!(again.unresolved[0].contains("installed already"), "{:?}", again.unresolved);
    }

    #[test]
    fn version_files_the_build_wrote_are_generated() {
        let (repo, plan) =
            plan_of(&[("pyproject.toml", "[build-system]\n[project]\nname='p'\n"), ("src/p/__init__.py", "")]);
        let env = tempfile::tempdir().unwrap();
        for f in ["src/src/p/__init__.py", "src/src/p/_version.py", "src/build/lib/p/_version.py", "src/src/p/data.txt"]
        {
            std::fs::create_dir_all(env.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(env.path().join(f), "").unwrap();
        }
        std::fs::write(env.path().join("src/build/lib/p/__init__.py"), "").unwrap();
        let generated = PYTHON_ENV.generated(&plan, env.path(), repo.path());
        assert_eq!(generated, vec![GeneratedFile { path: "src/p/_version.py".into(), built_at: None }]);
    }

    /// pallets/markupsafe: `pip install .` compiles `_speedups` into `build/lib.*/` only; the
    /// run tree gets it beside the package's sources, where an in-place build puts it.
    #[test]
    fn extension_modules_the_build_compiled_are_generated_where_the_package_lives() {
        let (repo, plan) = plan_of(&[
            ("pyproject.toml", "[build-system]\n[project]\nname='p'\n"),
            ("src/p/__init__.py", ""),
            ("src/p/_speedups.c", ""),
        ]);
        let env = tempfile::tempdir().unwrap();
        let lib = "src/build/lib.linux-x86_64-cpython-311/p";
        for f in ["src/src/p/__init__.py", &format!("{lib}/__init__.py"), &format!("{lib}/_speedups.cpython-311.so")] {
            std::fs::create_dir_all(env.path().join(f).parent().unwrap()).unwrap();
            std::fs::write(env.path().join(f), "").unwrap();
        }
        let generated = PYTHON_ENV.generated(&plan, env.path(), repo.path());
        assert_eq!(
            generated,
            vec![GeneratedFile {
                path: "src/p/_speedups.cpython-311.so".into(),
                built_at: Some("build/lib.linux-x86_64-cpython-311/p/_speedups.cpython-311.so".into()),
            }]
        );
    }

    #[test]
    fn the_lockfile_is_sorted_by_normalized_name() {
        let mut p = BTreeMap::new();
        p.insert("PyYAML".to_string(), "6.0.2".to_string());
        p.insert("attrs".to_string(), "25.1.0".to_string());
        p.insert("Zope.Interface".to_string(), "7".to_string());
        assert_eq!(
            lockfile(&p).lines().skip(1).collect::<Vec<_>>(),
            vec!["attrs==25.1.0", "PyYAML==6.0.2", "Zope.Interface==7"]
        );
    }
}
