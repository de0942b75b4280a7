//! What a Python repository's own files say about installing its tests, each fact with the
//! file and part it came from: the project itself and its test extras (`pyproject.toml`,
//! `setup.cfg`, `setup.py`), dependency groups, the dev/test tables of Poetry, PDM, Hatch and
//! uv, requirements files, tox and nox, and the CI workflows' `pip install` lines as a last
//! source; `requires-python` and a `.python-version` pin.

use std::collections::BTreeSet;
use std::path::Path;

use super::ini;
use super::requirements::{self, Line};
use crate::env::{EnvError, Finding};

/// Extras and groups that hold what the tests need, best first.
/// The `project` name of a project whose metadata names it nowhere carve reads (a `setup.py`
/// that computes it).
pub const UNNAMED: &str = "the project";

pub const TEST_NAMES: &[&str] = &["test", "tests", "testing"];
/// Used when no test extra or group exists: development sets usually include the tests'.
pub const DEV_NAMES: &[&str] = &["dev", "develop", "development", "devel"];

/// What was found, in the order found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Meta {
    /// The project's name when the repository is an installable project.
    pub project: Option<String>,
    /// Where the project's build is declared (`pyproject.toml [build-system]`, `setup.py`).
    pub project_source: String,
    /// Extras of the project to install with it, and where each was found.
    pub extras: Vec<(String, String)>,
    /// Requirement strings (PEP 508) and where each was found.
    pub requirements: Vec<(String, String)>,
    pub requires_python: Option<(String, String)>,
    /// `.python-version`'s pin.
    pub pin: Option<String>,
    /// Build variables the project's build needs in a copy without `.git` (setuptools-scm).
    pub build_env: Vec<(String, String, String)>,
    pub inputs: BTreeSet<String>,
    pub notes: Vec<Finding>,
}

impl Meta {
    fn require(&mut self, req: &str, source: &str) {
        let name = requirements::name(req);
        // pip itself is the installer's, not a test dependency (`pip install --upgrade pip`).
        if name.is_empty()
            || name == "pip"
            || self.project.as_deref().is_some_and(|p| requirements::normalize(p) == name)
        {
            return;
        }
        // One requirement per name and environment marker: boltons (967864f) asks for
        // `pytest>=7,<8; python_version < '3.8'` and `pytest>=8; python_version >= '3.8'`, and
        // keeping only the first left pip nothing to install on 3.11.
        let key = |r: &str| (requirements::name(r), marker(r));
        if !self.requirements.iter().any(|(r, _)| key(r) == (name.clone(), marker(req))) {
            self.requirements.push((req.trim().to_string(), source.to_string()));
        }
    }

    fn extra(&mut self, extra: &str, source: &str) {
        if !self.extras.iter().any(|(e, _)| e == extra) {
            self.extras.push((extra.to_string(), source.to_string()));
        }
    }

    /// Whether anything test-specific was found (beyond the project's runtime set).
    pub fn has_test_set(&self) -> bool {
        !self.extras.is_empty() || !self.requirements.is_empty()
    }

    fn note(&mut self, value: impl Into<String>, source: impl Into<String>) {
        self.notes.push(Finding::new("note", value, source));
    }

    /// The lines of a requirements file (or a tox/nox/CI line), applied.
    fn apply(&mut self, lines: Vec<Line>, source: &str) {
        for line in lines {
            match line {
                Line::Requirement(r) => self.require(&r, source),
                Line::Project { extras } => {
                    if self.project.is_none() {
                        self.note("the project itself (`.`) is asked for but no build is declared", source);
                    }
                    for e in extras {
                        self.extra(&e, source);
                    }
                }
                Line::Skipped(what) => self.note(format!("not used: {what}"), source),
            }
        }
    }
}

fn read(repo: &Path, rel: &str, meta: &mut Meta) -> Option<String> {
    let text = std::fs::read_to_string(repo.join(rel)).ok()?;
    meta.inputs.insert(rel.to_string());
    Some(text)
}

/// Read everything; `Ok(None)` when the repository has no Python project file at all.
pub fn read_repo(repo: &Path) -> Result<Option<Meta>, EnvError> {
    let mut meta = Meta::default();
    let pyproject = match read(repo, "pyproject.toml", &mut meta) {
        Some(text) => Some(toml::from_str::<toml::Table>(&text).map_err(|e| EnvError::BadFile {
            file: "pyproject.toml".into(),
            message: format!("not valid TOML ({}); fix it so its dependencies can be read", e.message()),
        })?),
        None => None,
    };
    let setup_cfg = read(repo, "setup.cfg", &mut meta).map(|t| ini::parse(&t));
    let setup_py = read(repo, "setup.py", &mut meta);
    project(&mut meta, pyproject.as_ref(), setup_cfg.as_deref(), setup_py.as_deref(), repo);
    if let Some(py) = &pyproject {
        dependency_groups(&mut meta, py);
        tool_tables(&mut meta, py);
    }
    requirement_files(&mut meta, repo);
    if !meta.has_test_set() {
        super::sources::tox(&mut meta, repo);
    }
    if !meta.has_test_set() {
        super::sources::nox(&mut meta, repo);
    }
    if !meta.has_test_set() {
        super::sources::workflows(&mut meta, repo);
    }
    if let Some(pin) = read(repo, ".python-version", &mut meta) {
        meta.pin = pin.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_string);
    }
    let found_any = pyproject.is_some()
        || setup_cfg.is_some()
        || setup_py.is_some()
        || !meta.requirements.is_empty()
        || !meta.inputs.is_empty();
    Ok(found_any.then_some(meta))
}

/// The project's name, its build, its extras and `requires-python`.
fn project(
    meta: &mut Meta,
    py: Option<&toml::Table>,
    cfg: Option<&[(String, String, String)]>,
    setup_py: Option<&str>,
    repo: &Path,
) {
    let table = |t: Option<&toml::Table>, path: &[&str]| -> Option<toml::Value> {
        let mut v = toml::Value::Table(t?.clone());
        for p in path {
            v = v.get(p)?.clone();
        }
        Some(v)
    };
    let name = table(py, &["project", "name"])
        .and_then(|v| v.as_str().map(str::to_string))
        .or_else(|| table(py, &["tool", "poetry", "name"]).and_then(|v| v.as_str().map(str::to_string)))
        .or_else(|| cfg.and_then(|c| ini::get(c, "metadata", "name")).map(str::to_string))
        .or_else(|| setup_py.and_then(|s| super::sources::setup_py_string(s, "name")));
    let build = if py.is_some_and(|p| p.contains_key("build-system")) {
        Some("pyproject.toml [build-system]")
    } else if setup_py.is_some() {
        Some("setup.py")
    } else if py.is_some_and(|p| p.contains_key("project")) {
        Some("pyproject.toml [project] (setuptools, pip's default build)")
    } else {
        None
    };
    if let Some(build) = build {
        meta.project = Some(name.clone().unwrap_or_else(|| UNNAMED.into()));
        meta.project_source = build.to_string();
        scm_version(meta, py, setup_py, repo);
    }
    // Extras: the test ones, else the development ones.
    let mut extras: Vec<(String, String)> = Vec::new();
    if let Some(toml::Value::Table(t)) = table(py, &["project", "optional-dependencies"]) {
        extras.extend(t.keys().map(|k| (k.clone(), "pyproject.toml [project.optional-dependencies]".into())));
    }
    if let Some(toml::Value::Table(t)) = table(py, &["tool", "poetry", "extras"]) {
        extras.extend(t.keys().map(|k| (k.clone(), "pyproject.toml [tool.poetry.extras]".into())));
    }
    if let Some(c) = cfg {
        extras.extend(
            ini::section(c, "options.extras_require")
                .iter()
                .map(|(k, _)| (k.to_string(), "setup.cfg [options.extras_require]".into())),
        );
    }
    if let Some(s) = setup_py {
        extras.extend(super::sources::setup_py_extras(s).into_iter().map(|k| (k, "setup.py extras_require".into())));
    }
    if meta.project.is_some() {
        for (e, source) in pick(&extras) {
            meta.extra(&e, &format!("{source} {e}"));
        }
        if let Some(s) = setup_py {
            for r in super::sources::setup_py_list(s, "tests_require") {
                meta.require(&r, "setup.py tests_require");
            }
        }
    }
    let rp = table(py, &["project", "requires-python"])
        .and_then(|v| v.as_str().map(|s| (s.to_string(), "pyproject.toml [project] requires-python".to_string())))
        .or_else(|| {
            table(py, &["tool", "poetry", "dependencies", "python"]).and_then(|v| {
                v.as_str().map(|s| (s.to_string(), "pyproject.toml [tool.poetry.dependencies] python".to_string()))
            })
        })
        .or_else(|| {
            cfg.and_then(|c| ini::get(c, "options", "python_requires"))
                .map(|s| (s.to_string(), "setup.cfg [options] python_requires".to_string()))
        })
        .or_else(|| {
            setup_py
                .and_then(|s| super::sources::setup_py_string(s, "python_requires"))
                .map(|s| (s, "setup.py python_requires".to_string()))
        });
    meta.requires_python = rp;
}

/// The test-named entries of `names` (with their sources), else the development ones.
fn pick(names: &[(String, String)]) -> Vec<(String, String)> {
    for set in [TEST_NAMES, DEV_NAMES] {
        let found: Vec<(String, String)> =
            names.iter().filter(|(n, _)| set.contains(&n.to_lowercase().as_str())).cloned().collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// setuptools-scm and hatch-vcs read the version from `.git`, which carve's copies leave out:
/// the version is given to the build from the repository's latest tag.
fn scm_version(meta: &mut Meta, py: Option<&toml::Table>, setup_py: Option<&str>, repo: &Path) {
    let text = py.map(|p| toml::to_string(p).unwrap_or_default()).unwrap_or_default();
    let uses_scm = [
        "setuptools_scm",
        "setuptools-scm",
        "hatch-vcs",
        "hatch_vcs",
        "versioningit",
        "pdm-backend",
        "flit_scm",
        "poetry-dynamic-versioning",
    ]
    .iter()
    .any(|s| text.contains(s) || setup_py.is_some_and(|t| t.contains(s) || t.contains("use_scm_version")));
    if !uses_scm {
        return;
    }
    let tag = std::process::Command::new("git")
        .args(["describe", "--tags", "--abbrev=0"])
        .current_dir(repo)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().trim_start_matches('v').to_string())
        .filter(|t| {
            t.chars().next().is_some_and(|c| c.is_ascii_digit())
                && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        });
    let (version, why) = match tag {
        Some(t) => (t, "the repository's latest tag (git describe)"),
        None => ("0.0.0".to_string(), "no tag found"),
    };
    for var in ["SETUPTOOLS_SCM_PRETEND_VERSION", "PDM_BUILD_SCM_VERSION"] {
        meta.build_env.push((
            var.into(),
            version.clone(),
            format!("the build reads its version from git, which carve's copy has not: {why}"),
        ));
    }
}

/// A requirement's environment marker (after `;`), white space removed; empty when none.
fn marker(req: &str) -> String {
    req.split_once(';').map(|(_, m)| m.chars().filter(|c| !c.is_whitespace()).collect()).unwrap_or_default()
}

/// `[dependency-groups]` (PEP 735): the test groups, else the development ones, with
/// `{include-group = "x"}` entries followed.
fn dependency_groups(meta: &mut Meta, py: &toml::Table) {
    let Some(toml::Value::Table(groups)) = py.get("dependency-groups") else { return };
    let names: Vec<(String, String)> = groups.keys().map(|k| (k.clone(), String::new())).collect();
    for (g, _) in pick(&names) {
        let mut seen = BTreeSet::new();
        for r in group_items(groups, &g, &mut seen) {
            meta.require(&r, &format!("pyproject.toml [dependency-groups] {g}"));
        }
    }
}

fn group_items(groups: &toml::Table, name: &str, seen: &mut BTreeSet<String>) -> Vec<String> {
    if !seen.insert(name.to_string()) {
        return Vec::new();
    }
    let Some(toml::Value::Array(items)) = groups.get(name) else { return Vec::new() };
    let mut out = Vec::new();
    for item in items {
        match item {
            toml::Value::String(s) => out.push(s.clone()),
            toml::Value::Table(t) => {
                if let Some(inc) = t.get("include-group").and_then(|v| v.as_str()) {
                    out.extend(group_items(groups, inc, seen));
                }
            }
            _ => {}
        }
    }
    out
}

/// Poetry's groups and dev-dependencies, PDM's dev-dependencies, uv's dev-dependencies and
/// Hatch's test/default environments.
fn tool_tables(meta: &mut Meta, py: &toml::Table) {
    let tool = py.get("tool").and_then(|t| t.as_table());
    let Some(tool) = tool else { return };
    if let Some(poetry) = tool.get("poetry").and_then(|t| t.as_table()) {
        let mut sets: Vec<(String, String)> = Vec::new();
        if let Some(groups) = poetry.get("group").and_then(|g| g.as_table()) {
            sets.extend(
                groups.keys().map(|k| (k.clone(), format!("pyproject.toml [tool.poetry.group.{k}.dependencies]"))),
            );
        }
        let mut chosen = pick(&sets);
        if chosen.is_empty() && poetry.contains_key("dev-dependencies") {
            chosen.push(("dev".into(), "pyproject.toml [tool.poetry.dev-dependencies]".into()));
        }
        for (g, source) in chosen {
            let table = if source.ends_with("dev-dependencies]") {
                poetry.get("dev-dependencies")
            } else {
                poetry.get("group").and_then(|t| t.get(&g)).and_then(|t| t.get("dependencies"))
            };
            if let Some(toml::Value::Table(deps)) = table {
                for (name, spec) in deps {
                    if name != "python" {
                        meta.require(&poetry_requirement(name, spec), &source);
                    }
                }
            }
        }
    }
    let lists: [(&[&str], &str); 2] = [
        (&["pdm", "dev-dependencies"], "pyproject.toml [tool.pdm.dev-dependencies]"),
        (&["uv"], "pyproject.toml [tool.uv]"),
    ];
    for (path, source) in lists {
        let mut v = toml::Value::Table(tool.clone());
        for p in path {
            v = match v.get(p) {
                Some(x) => x.clone(),
                None => toml::Value::Boolean(false),
            };
        }
        match &v {
            toml::Value::Table(t) if path[0] == "pdm" => {
                let names: Vec<(String, String)> = t.keys().map(|k| (k.clone(), String::new())).collect();
                for (g, _) in pick(&names) {
                    for r in t.get(&g).and_then(|x| x.as_array()).into_iter().flatten().filter_map(|x| x.as_str()) {
                        meta.require(r, &format!("{source} {g}"));
                    }
                }
            }
            toml::Value::Table(t) => {
                for r in t
                    .get("dev-dependencies")
                    .and_then(|x| x.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str())
                {
                    meta.require(r, &format!("{source} dev-dependencies"));
                }
            }
            _ => {}
        }
    }
    if let Some(envs) = tool.get("hatch").and_then(|h| h.get("envs")).and_then(|e| e.as_table()) {
        let names: Vec<(String, String)> = envs.keys().map(|k| (k.clone(), String::new())).collect();
        let mut chosen: Vec<String> = pick(&names).into_iter().map(|(n, _)| n).collect();
        if chosen.is_empty() && envs.contains_key("default") {
            chosen.push("default".into());
        }
        for env in chosen {
            let t = &envs[&env];
            for key in ["dependencies", "extra-dependencies"] {
                for r in t.get(key).and_then(|x| x.as_array()).into_iter().flatten().filter_map(|x| x.as_str()) {
                    meta.require(r, &format!("pyproject.toml [tool.hatch.envs.{env}] {key}"));
                }
            }
            for e in t.get("features").and_then(|x| x.as_array()).into_iter().flatten().filter_map(|x| x.as_str()) {
                meta.extra(e, &format!("pyproject.toml [tool.hatch.envs.{env}] features"));
            }
        }
    }
}

/// A Poetry dependency (`pytest = "^7.0"`, `{version = "^1", extras = ["x"]}`) as a PEP 508
/// requirement (`pytest>=7.0,<8`).
pub fn poetry_requirement(name: &str, spec: &toml::Value) -> String {
    let (version, extras) = match spec {
        toml::Value::String(s) => (s.clone(), Vec::new()),
        toml::Value::Table(t) => (
            t.get("version").and_then(|v| v.as_str()).unwrap_or("*").to_string(),
            t.get("extras")
                .and_then(|e| e.as_array())
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
        ),
        _ => ("*".to_string(), Vec::new()),
    };
    let extras = if extras.is_empty() { String::new() } else { format!("[{}]", extras.join(",")) };
    format!("{name}{extras}{}", poetry_range(&version))
}

/// `^1.2` → `>=1.2,<2`, `~1.2` → `>=1.2,<1.3`, `*` → nothing, `1.2` → `==1.2`, others as written.
fn poetry_range(v: &str) -> String {
    let v = v.trim();
    let bump = |base: &str, keep: usize| -> String {
        let parts: Vec<u64> = base.split('.').map_while(|p| p.parse().ok()).collect();
        let keep = keep.min(parts.len()).max(1);
        let mut upper: Vec<u64> = parts[..keep].to_vec();
        if let Some(last) = upper.last_mut() {
            *last += 1;
        }
        format!(">={base},<{}", upper.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("."))
    };
    if v.is_empty() || v == "*" {
        String::new()
    } else if let Some(base) = v.strip_prefix('^') {
        let parts: Vec<&str> = base.split('.').collect();
        let keep = parts.iter().position(|p| *p != "0").map_or(parts.len(), |i| i + 1);
        bump(base, keep)
    } else if let Some(base) = v.strip_prefix('~').filter(|b| !b.starts_with('=')) {
        bump(base, if base.split('.').count() >= 2 { 2 } else { 1 })
    } else if v.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        format!("=={v}")
    } else {
        v.replace(' ', "")
    }
}

/// Requirement file names for tests, best first; `requirements.txt` itself only when the
/// project is not installable (its runtime set then comes from there).
const TEST_FILES: &[&str] = &[
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "requirements-testing.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
    "tests/requirements.txt",
    "test/requirements.txt",
];
const DEV_FILES: &[&str] = &[
    "requirements-dev.txt",
    "requirements_dev.txt",
    "dev-requirements.txt",
    "dev_requirements.txt",
    "requirements/dev.txt",
    "requirements/develop.txt",
    "requirements/development.txt",
];

fn requirement_files(meta: &mut Meta, repo: &Path) {
    let test: Vec<&str> = TEST_FILES.iter().copied().filter(|f| repo.join(f).is_file()).collect();
    let files = if !test.is_empty() || !meta.extras.is_empty() {
        test
    } else {
        DEV_FILES.iter().copied().filter(|f| repo.join(f).is_file()).collect()
    };
    let mut files: Vec<&str> = files;
    if meta.project.is_none() && repo.join("requirements.txt").is_file() {
        files.insert(0, "requirements.txt");
    }
    for f in files {
        let mut read_files = BTreeSet::new();
        let lines = requirements::read_file(repo, f, &mut read_files);
        meta.inputs.extend(read_files);
        meta.apply(lines, f);
    }
}

/// Apply the lines of a tox/nox/CI source (for `sources`).
pub(super) fn apply_lines(meta: &mut Meta, lines: Vec<Line>, source: &str) {
    meta.apply(lines, source);
}

/// Note a file carve read (for `sources`).
pub(super) fn read_input(repo: &Path, rel: &str, meta: &mut Meta) -> Option<String> {
    read(repo, rel, meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    use carve_testutil::temp_tree as repo;

    fn reqs(m: &Meta) -> Vec<(&str, &str)> {
        m.requirements.iter().map(|(r, s)| (r.as_str(), s.as_str())).collect()
    }

    #[test]
    fn pyproject_test_extras_win_over_dev_and_record_their_source() {
        let d = repo(&[(
            "pyproject.toml",
            "[build-system]\nrequires=['hatchling']\n[project]\nname='demo'\nrequires-python='>=3.9'\n[project.optional-dependencies]\ntests=['pytest']\ndev=['black']\n",
        )]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(m.project.as_deref(), Some("demo"));
        assert_eq!(
            m.extras,
            vec![("tests".to_string(), "pyproject.toml [project.optional-dependencies] tests".to_string())]
        );
        assert_eq!(m.requires_python, Some((">=3.9".into(), "pyproject.toml [project] requires-python".into())));
        assert!(m.requirements.is_empty());
    }

    #[test]
    fn one_name_under_two_markers_is_two_requirements() {
        let d = repo(&[(
            "pyproject.toml",
            "[project]\nname='demo'\n[dependency-groups]\ndev=[\"pytest>=7,<8; python_version < '3.8'\", \"pytest>=8; python_version >= '3.8'\", 'pytest>=8']\n",
        )]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(
            reqs(&m),
            vec![
                ("pytest>=7,<8; python_version < '3.8'", "pyproject.toml [dependency-groups] dev"),
                ("pytest>=8; python_version >= '3.8'", "pyproject.toml [dependency-groups] dev"),
                ("pytest>=8", "pyproject.toml [dependency-groups] dev"),
            ]
        );
    }

    #[test]
    fn dependency_groups_follow_includes() {
        let d = repo(&[(
            "pyproject.toml",
            "[project]\nname='demo'\n[dependency-groups]\ntest=['pytest>=8', {include-group='typing'}]\ntyping=['mypy']\ndev=['ruff']\n",
        )]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(
            reqs(&m),
            vec![
                ("pytest>=8", "pyproject.toml [dependency-groups] test"),
                ("mypy", "pyproject.toml [dependency-groups] test")
            ]
        );
    }

    #[test]
    fn poetry_pdm_uv_and_hatch_tables() {
        let d = repo(&[(
            "pyproject.toml",
            "[tool.poetry]\nname='p'\n[tool.poetry.dependencies]\npython='^3.8'\n[tool.poetry.group.test.dependencies]\npytest='^7.2'\nhypothesis={version='~6.1', extras=['cli']}\n[tool.pdm.dev-dependencies]\ntest=['pytest-mock']\n[tool.uv]\ndev-dependencies=['freezegun']\n[tool.hatch.envs.test]\ndependencies=['coverage']\nfeatures=['yaml']\n",
        )]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(m.project, None, "no build-system, no [project]: poetry alone does not make it installable here");
        assert_eq!(m.requires_python.as_ref().map(|r| r.0.as_str()), Some("^3.8"));
        let r = reqs(&m);
        assert!(r.contains(&("pytest>=7.2,<8", "pyproject.toml [tool.poetry.group.test.dependencies]")), "{r:?}");
        assert!(
            r.contains(&("hypothesis[cli]>=6.1,<6.2", "pyproject.toml [tool.poetry.group.test.dependencies]")),
            "{r:?}"
        );
        assert!(r.contains(&("pytest-mock", "pyproject.toml [tool.pdm.dev-dependencies] test")), "{r:?}");
        assert!(r.contains(&("freezegun", "pyproject.toml [tool.uv] dev-dependencies")), "{r:?}");
        assert!(r.contains(&("coverage", "pyproject.toml [tool.hatch.envs.test] dependencies")), "{r:?}");
        assert_eq!(m.extras, vec![("yaml".to_string(), "pyproject.toml [tool.hatch.envs.test] features".to_string())]);
    }

    #[test]
    fn setup_cfg_and_setup_py_extras() {
        let d = repo(&[(
            "setup.cfg",
            "[metadata]\nname = legacy\n[options]\npython_requires = >=3.7\n[options.extras_require]\ntesting =\n    pytest\n",
        )]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(m.project, None, "setup.cfg alone has no build");
        let d = repo(&[
            (
                "setup.cfg",
                "[metadata]\nname = legacy\n[options]\npython_requires = >=3.7\n[options.extras_require]\ntesting =\n    pytest\n",
            ),
            (
                "setup.py",
                "from setuptools import setup\nsetup(tests_require=['mock'], extras_require={'docs': ['sphinx'], \"tests\": ['pytest']})\n",
            ),
        ]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(m.project.as_deref(), Some("legacy"));
        let extras: Vec<&str> = m.extras.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(extras, vec!["testing", "tests"]);
        assert_eq!(reqs(&m), vec![("mock", "setup.py tests_require")]);
        assert_eq!(m.requires_python.as_ref().map(|r| r.0.as_str()), Some(">=3.7"));
    }

    #[test]
    fn requirement_files_with_includes_and_the_project_line() {
        let d = repo(&[
            ("requirements.txt", "requests>=2\n"),
            (
                "requirements/test.txt",
                "-r ../requirements.txt\n-e .[extra]\npytest  # the runner\n--index-url https://example.invalid/simple\n",
            ),
        ]);
        let m = read_repo(d.path()).unwrap().unwrap();
        assert_eq!(reqs(&m), vec![("requests>=2", "requirements.txt"), ("pytest", "requirements/test.txt")]);
        assert!(m.inputs.contains("requirements/test.txt") && m.inputs.contains("requirements.txt"));
        assert!(m.notes.iter().any(|n| n.value.contains("--index-url")), "{:?}", m.notes);
        assert!(m.notes.iter().any(|n| n.value.contains("no build is declared")), "{:?}", m.notes);
    }

    #[test]
    fn a_broken_pyproject_names_the_file_and_nothing_at_all_is_none() {
        let d = repo(&[("pyproject.toml", "[project\n")]);
        let err = read_repo(d.path()).unwrap_err().to_string();
        assert!(err.starts_with("pyproject.toml: not valid TOML"), "{err}");
        let d = repo(&[("README.md", "hi")]);
        assert_eq!(read_repo(d.path()).unwrap(), None);
    }

    #[test]
    fn poetry_ranges() {
        assert_eq!(poetry_range("^1.2.3"), ">=1.2.3,<2");
        assert_eq!(poetry_range("^0.3"), ">=0.3,<0.4");
        assert_eq!(poetry_range("~1.2"), ">=1.2,<1.3");
        assert_eq!(poetry_range("*"), "");
        assert_eq!(poetry_range("2.0"), "==2.0");
        assert_eq!(poetry_range(">= 1.0, < 2"), ">=1.0,<2");
    }
}
