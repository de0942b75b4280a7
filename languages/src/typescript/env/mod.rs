//! JavaScript/TypeScript environments: the repository's manifests and lockfile copied into a
//! folder carve owns (`{env}/src`) and installed there by the package manager the repository
//! declares (`packageManager`, else its lockfile, else npm) — pnpm and yarn through corepack,
//! whose shims go to `{env}/bin` —; every tree a test run uses gets that `node_modules` (and
//! the workspace packages') hard-linked in. Dependencies' install scripts are not run (as npm
//! 11 does by default). `engines.node` is checked against the Node here and reported: it is
//! often stricter than the suite needs, so the verification run decides.

pub mod build;
pub mod manifest;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sha2::Digest;

use crate::Language;
use crate::env::{
    Activation, EnvError, EnvPlan, EnvSupport, Failures, Finding, ImageRecipe, Inventory, ProjectBuild, Repairs, Step,
    StepDir, Tool, ToolRequirement,
};
use manifest::Manager;

pub struct ScriptEnv;

/// The finding that names the project's build (see [`build`]).
const BUILD_FOUND: &str = "build-found";

pub static SCRIPT_ENV: ScriptEnv = ScriptEnv;

/// Runs the words after it with corepack's registry set from npm's (without the trailing
/// slash corepack refuses).
const WITH_REGISTRY: &str =
    "R=$(npm config get registry 2>/dev/null); export COREPACK_NPM_REGISTRY=\"${R%/}\"; exec \"$0\" \"$@\"";

/// corepack's settings: its own home in the environment, no prompt, no signature check of
/// the managers it fetches (the keys it ships go stale), no refusal when a script runs
/// another manager than `packageManager`.
const COREPACK_VARS: &[(&str, &str)] = &[
    ("COREPACK_HOME", "{env}/corepack"),
    ("COREPACK_ENABLE_DOWNLOAD_PROMPT", "0"),
    ("COREPACK_INTEGRITY_KEYS", "0"),
    ("COREPACK_ENABLE_STRICT", "0"),
];

fn with_corepack(mut step: Step) -> Step {
    for (k, v) in COREPACK_VARS {
        step = step.with_env(k, v);
    }
    step
}

fn node_version() -> Option<String> {
    let out = Command::new("node").arg("--version").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().trim_start_matches('v').to_string())
}

fn tool_version(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn plan_manager(plan: &EnvPlan) -> (String, Option<String>, bool, bool) {
    let f = plan.findings.iter().find(|f| f.what == "package-manager");
    let value = f.map_or("npm", |f| f.value.as_str());
    let (name, version) = value.split_once(' ').map_or((value, None), |(n, v)| (n, Some(v.to_string())));
    let declared = f.is_some_and(|f| f.source == "package.json packageManager");
    let locked = plan.findings.iter().any(|f| f.what == "lockfile");
    (name.to_string(), version.filter(|v| !v.is_empty()), declared, locked)
}

impl EnvSupport for ScriptEnv {
    fn inputs(&self, repo: &Path) -> Vec<String> {
        manifest::inputs(repo)
    }

    fn detect(&self, repo: &Path) -> Result<EnvPlan, EnvError> {
        let Some(pkg) = manifest::read_package(repo)? else {
            return Err(EnvError::NoMetadata(
                "no package.json at the repository's root: carve installs JavaScript/TypeScript dependencies from it"
                    .into(),
            ));
        };
        let mut findings = Vec::new();
        let m: Manager = manifest::manager(repo, &pkg, &mut findings);
        if let Some(lock) = m.lockfile {
            findings.push(Finding::new("lockfile", lock, "pins every installed version"));
        }
        let engines = pkg.get("engines").and_then(|e| e.get("node")).and_then(Value::as_str);
        if let Some(range) = engines {
            findings.push(Finding::new("toolchain", format!("node {range}"), "package.json engines.node"));
        }
        for f in [".nvmrc", ".node-version"] {
            if let Ok(text) = std::fs::read_to_string(repo.join(f)) {
                findings.push(Finding::new("note", format!("node {} pinned", text.trim()), f));
            }
        }
        let dirs = manifest::workspace_dirs(repo, &pkg);
        if !dirs.is_empty() {
            findings.push(Finding::new("workspaces", dirs.join(", "), "package.json workspaces / pnpm-workspace.yaml"));
        }
        let deps = ["dependencies", "devDependencies", "optionalDependencies"]
            .iter()
            .filter_map(|k| pkg.get(k).and_then(Value::as_object))
            .map(|o| o.len())
            .sum::<usize>();
        findings.push(Finding::new("install", format!("{deps} direct dependencies"), "package.json"));
        if let Some(b) = build::find(repo, &pkg) {
            findings.push(Finding::new(
                BUILD_FOUND,
                b.command,
                format!("{}; run before the tests if they load a file of the project the tree lacks", b.source),
            ));
        }
        let requires = vec![ToolRequirement {
            tool: "node".into(),
            wanted: engines.map(str::to_string),
            source: "package.json engines.node".into(),
        }];
        Ok(EnvPlan {
            language: Language::TypeScript,
            inputs: manifest::inputs(repo),
            whole_source: false,
            requires,
            findings,
        })
    }

    fn provided(&self, repo: &Path) -> Option<String> {
        (repo.join("node_modules").is_dir() || repo.join(".pnp.cjs").is_file())
            .then(|| "the repository's own installed node_modules is used".to_string())
    }

    fn toolchain(&self, plan: &EnvPlan) -> Result<Vec<Tool>, EnvError> {
        let Some(node) = node_version() else {
            return Err(EnvError::ToolMissing {
                tool: "node".into(),
                why: "install the dependencies and run the tests".into(),
                hint: "install Node.js (with npm and corepack) and put it on PATH".into(),
            });
        };
        let mut tools = vec![Tool { tool: "node".into(), version: node, program: "node".into() }];
        let (name, version, _, _) = plan_manager(plan);
        let program = if name == "npm" { "npm" } else { "corepack" };
        let Some(found) = tool_version(program) else {
            return Err(EnvError::ToolMissing {
                tool: program.into(),
                why: format!("install the dependencies with {name}"),
                hint: "it comes with Node.js (corepack since Node 16.9); reinstall Node.js or install it with `npm i -g corepack`".into(),
            });
        };
        let version = if name == "npm" { found } else { version.unwrap_or_else(|| "corepack's default".into()) };
        tools.push(Tool { tool: name, version, program: program.into() });
        Ok(tools)
    }

    fn install_steps(&self, plan: &EnvPlan, _tools: &[Tool]) -> Vec<Step> {
        let (name, version, declared, locked) = plan_manager(plan);
        let why =
            plan.findings.iter().find(|f| f.what == "package-manager").map_or(String::new(), |f| f.source.clone());
        if name == "npm" {
            let verb = if locked { "ci" } else { "install" };
            return vec![Step::new(
                &["npm", verb, "--ignore-scripts", "--no-audit", "--no-fund"],
                StepDir::Src,
                format!("npm ({why})"),
            )];
        }
        let pm = if declared { name.clone() } else { format!("{name}@{}", version.clone().unwrap_or_default()) };
        let mut steps = vec![Step::new(&["mkdir", "-p", "{env}/bin"], StepDir::Env, "the folder of corepack's shims")];
        steps.push(with_corepack(Step::new(
            &["sh", "-c", WITH_REGISTRY, "corepack", "enable", "--install-directory", "{env}/bin"],
            StepDir::Src,
            "shims of pnpm and yarn for scripts that call them",
        )));
        let install: Vec<&str> = match name.as_str() {
            "pnpm" => vec!["install", "--frozen-lockfile", "--ignore-scripts", "--store-dir", "{env}/pnpm-store"],
            "yarn" if version.as_deref().is_some_and(|v| v.starts_with('1')) => {
                vec![
                    "install",
                    "--frozen-lockfile",
                    "--ignore-scripts",
                    "--non-interactive",
                    "--cache-folder",
                    "{env}/yarn-cache",
                ]
            }
            _ => vec!["install", "--immutable"],
        };
        let mut argv = vec!["sh", "-c", WITH_REGISTRY, "corepack", pm.as_str()];
        argv.extend(install);
        let mut step = with_corepack(Step::new(&argv, StepDir::Src, format!("{name} ({why})")));
        if name == "yarn" && !version.as_deref().is_some_and(|v| v.starts_with('1')) {
            for (k, v) in [
                ("YARN_ENABLE_SCRIPTS", "0"),
                ("YARN_NODE_LINKER", "node-modules"),
                ("YARN_CACHE_FOLDER", "{env}/yarn-cache"),
                ("YARN_ENABLE_GLOBAL_CACHE", "0"),
                ("YARN_ENABLE_TELEMETRY", "0"),
            ] {
                step = step.with_env(k, v);
            }
        }
        steps.push(step);
        steps
    }

    fn activation(&self, plan: &EnvPlan, _tools: &[Tool]) -> Activation {
        let mut linked = vec!["node_modules".to_string()];
        if let Some(ws) = plan.findings.iter().find(|f| f.what == "workspaces") {
            linked.extend(ws.value.split(", ").map(|d| format!("{d}/node_modules")));
        }
        let mut vars = vec![("PATH".to_string(), "{env}/bin".to_string())];
        vars.extend(COREPACK_VARS.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Activation { interpreter: None, vars, linked, build: Vec::new() }
    }

    fn retry(&self, _plan: &EnvPlan, step: &Step, output: &str) -> Option<Step> {
        let has = |w: &str| step.argv.iter().any(|a| a == w);
        let mut alt = step.clone();
        if step.argv.first().is_some_and(|p| p == "npm") {
            if output.contains("ERESOLVE") && !has("--legacy-peer-deps") {
                alt.argv.push("--legacy-peer-deps".into());
                alt.why =
                    format!("{}; --legacy-peer-deps: npm found conflicting peer dependencies (ERESOLVE)", step.why);
                return Some(alt);
            }
            if has("ci")
                && (output.contains("can only install packages when your package.json and package-lock.json")
                    || output.contains("EUSAGE"))
            {
                alt.argv[1] = "install".into();
                alt.why = format!("{}; npm install: package-lock.json is out of sync with package.json", step.why);
                return Some(alt);
            }
        }
        if output.contains("is incompatible with this module") && has("--frozen-lockfile") && !has("--ignore-engines") {
            alt.argv.push("--ignore-engines".into());
            alt.why = format!("{}; --ignore-engines: yarn 1 refuses a dependency's engines", step.why);
            return Some(alt);
        }
        None
    }

    fn repairs(&self, plan: &EnvPlan, failures: &Failures, done: &[Step]) -> Repairs {
        let text = format!("{}\n{}", failures.messages.join("\n"), failures.output);
        let (name, ..) = plan_manager(plan);
        let mut missing: BTreeMap<String, String> = BTreeMap::new();
        for line in text.lines() {
            for (start, end) in [
                ("Cannot find module '", '\''),
                ("Cannot find package '", '\''),
                ("Failed to resolve import \"", '"'),
                ("Failed to load url ", ' '),
            ] {
                if let Some(rest) = line.split(start).nth(1) {
                    let spec: String = rest.chars().take_while(|c| *c != end).collect();
                    if let Some(pkg) = package_of(&spec) {
                        missing.entry(pkg).or_insert_with(|| line.trim().chars().take(200).collect());
                    }
                }
            }
        }
        let asked: Vec<&String> = done.iter().flat_map(|s| s.argv.iter()).collect();
        let mut r = Repairs { build: build_repair(plan, &text), ..Repairs::default() };
        let new: Vec<(String, String)> = missing.into_iter().filter(|(p, _)| !asked.contains(&p)).collect();
        if new.is_empty() {
            return r;
        }
        if name != "npm" {
            for (p, why) in new {
                r.unresolved.push(format!("{why}: `{p}` is imported but not installed; add it to package.json"));
            }
            return r;
        }
        let mut argv: Vec<String> =
            ["npm", "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund"].map(String::from).to_vec();
        argv.extend(new.iter().map(|(p, _)| p.clone()));
        let why = new.iter().map(|(p, w)| format!("{w} → {p}")).collect::<Vec<_>>().join("; ");
        r.steps.push(Step {
            argv,
            dir: StepDir::Src,
            env: Vec::new(),
            why: format!("repair: {why}"),
            needs_source: false,
        });
        r
    }

    fn inventory(&self, plan: &EnvPlan, tools: &[Tool], env: &Path) -> Inventory {
        let src = env.join("src");
        let mut packages = BTreeMap::new();
        let nm = src.join("node_modules");
        for e in std::fs::read_dir(&nm).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let dirs: Vec<(String, std::path::PathBuf)> = if name.starts_with('@') {
                std::fs::read_dir(e.path())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|s| (format!("{name}/{}", s.file_name().to_string_lossy()), s.path()))
                    .collect()
            } else if name.starts_with('.') {
                Vec::new()
            } else {
                vec![(name, e.path())]
            };
            for (n, dir) in dirs {
                let version = std::fs::read(dir.join("package.json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                    .and_then(|v| v.get("version").and_then(Value::as_str).map(str::to_string));
                if let Some(v) = version {
                    packages.insert(n, v);
                }
            }
        }
        let lock = ["package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock"]
            .into_iter()
            .find(|f| src.join(f).is_file());
        let (name, ..) = plan_manager(plan);
        let lock = lock.filter(|f| match name.as_str() {
            "pnpm" => *f == "pnpm-lock.yaml",
            "yarn" => *f == "yarn.lock",
            _ => f.ends_with(".json"),
        });
        let bytes = lock.and_then(|f| std::fs::read(src.join(f)).ok());
        Inventory {
            packages,
            lockfile: lock.map(str::to_string),
            lockfile_sha256: bytes.map(|b| hex::encode(sha2::Sha256::digest(&b))),
            tools: tools.iter().map(|t| (t.tool.clone(), t.version.clone())).collect(),
        }
    }

    fn image(&self, plan: &EnvPlan, tools: &[Tool], steps: &[Step], inventory: &Inventory, env: &Path) -> ImageRecipe {
        let major = tools.first().map_or("20", |t| t.version.split('.').next().unwrap_or("20"));
        let (_, _, _, locked) = plan_manager(plan);
        let mut context_files = BTreeMap::new();
        let mut install: Vec<Step> = steps.to_vec();
        // npm without a lockfile: the one the install wrote pins the image's install.
        if !locked && inventory.lockfile.as_deref() == Some("package-lock.json") {
            let text = std::fs::read_to_string(env.join("src/package-lock.json")).unwrap_or_default();
            context_files.insert("package-lock.json".to_string(), text);
            install.insert(
                0,
                Step::new(
                    &["cp", "{env}/package-lock.json", "{src}/package-lock.json"],
                    StepDir::Env,
                    "the lockfile carve's install wrote",
                ),
            );
            for s in install.iter_mut() {
                if s.argv.first().is_some_and(|p| p == "npm")
                    && s.argv.get(1).is_some_and(|v| v == "install")
                    && !s.why.starts_with("repair")
                {
                    s.argv[1] = "ci".into();
                }
            }
        }
        let activation = self.activation(plan, tools);
        ImageRecipe {
            base: format!("node:{major}-bookworm-slim"),
            inputs: plan.inputs.clone(),
            context_files,
            install,
            after_source: Vec::new(),
            env: activation
                .vars
                .iter()
                .map(|(k, v)| if k == "PATH" { (k.clone(), format!("{v}:$PATH")) } else { (k.clone(), v.clone()) })
                .collect(),
            linked: activation.linked,
            build: Vec::new(),
        }
    }
}

/// The project's build, when a run stopped on a file of the project the tree lacks and the
/// plan found a build.
fn build_repair(plan: &EnvPlan, text: &str) -> Option<ProjectBuild> {
    let spec = crate::typescript::runner::unbuilt::missing_relative_module(text)?;
    let found = plan.findings.iter().find(|f| f.what == BUILD_FOUND)?;
    Some(ProjectBuild {
        argv: build::argv(&found.value),
        why: format!(
            "the tests load `{spec}`, a file of the project the tree lacks → the project's build `{}` ({}) before every test run",
            found.value,
            found.source.split("; run before").next().unwrap_or_default()
        ),
    })
}

/// The package a module specifier names (`@scope/pkg/sub` → `@scope/pkg`), or `None` for a
/// relative or absolute path, a URL or a Node built-in.
pub fn package_of(spec: &str) -> Option<String> {
    const BUILTINS: &[&str] = &[
        "assert",
        "async_hooks",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "crypto",
        "dgram",
        "dns",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "inspector",
        "module",
        "net",
        "os",
        "path",
        "perf_hooks",
        "process",
        "querystring",
        "readline",
        "stream",
        "string_decoder",
        "test",
        "timers",
        "tls",
        "tty",
        "url",
        "util",
        "v8",
        "vm",
        "worker_threads",
        "zlib",
    ];
    let spec = spec.trim();
    if spec.is_empty() || spec.starts_with(['.', '/', '#', '~']) || spec.contains(':') || spec.contains('\\') {
        return None;
    }
    let mut parts = spec.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') { format!("{first}/{}", parts.next()?) } else { first.to_string() };
    (!BUILTINS.contains(&name.as_str()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "@/-_.".contains(c)))
        .then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(files: &[(&str, &str)]) -> EnvPlan {
        let d = tempfile::tempdir().unwrap();
        for (p, text) in files {
            std::fs::write(d.path().join(p), text).unwrap();
        }
        SCRIPT_ENV.detect(d.path()).unwrap()
    }

    #[test]
    fn npm_ci_with_a_lockfile_and_corepack_for_pnpm() {
        let plan = plan_of(&[
            ("package.json", r#"{"devDependencies":{"vitest":"1"},"engines":{"node":">=18"}}"#),
            ("package-lock.json", "{}"),
        ]);
        let steps = SCRIPT_ENV.install_steps(&plan, &[]);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].display(), "npm ci --ignore-scripts --no-audit --no-fund");
        assert_eq!(plan.requires[0].wanted.as_deref(), Some(">=18"));
        let plan = plan_of(&[
            ("package.json", r#"{"packageManager":"pnpm@9.1.0"}"#),
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
        ]);
        let steps = SCRIPT_ENV.install_steps(&plan, &[]);
        assert_eq!(steps.len(), 3);
        assert!(
            steps[2]
                .display()
                .ends_with("corepack pnpm install --frozen-lockfile --ignore-scripts --store-dir {env}/pnpm-store"),
            "{}",
            steps[2].display()
        );
        assert!(steps[2].env.iter().any(|(k, v)| k == "COREPACK_INTEGRITY_KEYS" && v == "0"));
    }

    #[test]
    fn retries_and_repairs() {
        let plan = plan_of(&[("package.json", "{}")]);
        let step = &SCRIPT_ENV.install_steps(&plan, &[])[0];
        let alt = SCRIPT_ENV.retry(&plan, step, "npm error code ERESOLVE").unwrap();
        assert!(alt.argv.ends_with(&["--legacy-peer-deps".to_string()]));
        assert!(SCRIPT_ENV.retry(&plan, &alt, "npm error code ERESOLVE").is_none());
        let f = Failures {
            messages: vec![
                "Error: Cannot find module 'lodash/fp' from 'test/a.test.js'".into(),
                "Cannot find module './local'".into(),
            ],
            output: String::new(),
            repo: "/r".into(),
        };
        let r = SCRIPT_ENV.repairs(&plan, &f, &[]);
        assert_eq!(r.steps[0].argv.last().map(String::as_str), Some("lodash"));
        assert_eq!(package_of("@scope/pkg/sub"), Some("@scope/pkg".into()));
        assert_eq!(package_of("node:fs"), None);
        assert_eq!(package_of("fs"), None);
        assert_eq!(r.build, None, "no build found: a relative module asks for nothing");
    }

    #[test]
    fn a_missing_project_file_asks_for_the_build_the_plan_found() {
        let plan = plan_of(&[(
            "package.json",
            r#"{"scripts": {"build": "babel src -d .", "pretest": "npm run build && npm run lint", "test": "mocha"}}"#,
        )]);
        let f = Failures {
            messages: vec![],
            output: "Error: Cannot find module '../index'\nRequire stack:".into(),
            repo: "/r".into(),
        };
        let r = SCRIPT_ENV.repairs(&plan, &f, &[]);
        let build = r.build.expect("the build");
        assert_eq!(build.argv, vec!["npm", "run", "build"]);
        assert!(build.why.starts_with("the tests load `../index`"), "{}", build.why);
        assert!(r.steps.is_empty(), "nothing to install: {:?}", r.steps);
        let other = Failures { output: "Error: Cannot find module 'lodash'".into(), ..f };
        assert_eq!(SCRIPT_ENV.repairs(&plan, &other, &[]).build, None, "a package is not the build's");
    }
}
