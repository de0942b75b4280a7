//! Go environments: the module's dependencies downloaded with `go mod download` into a
//! module cache carve owns (`GOMODCACHE={env}/gomodcache`), and test runs given that cache with
//! `GOPROXY=off`, so a run proves the environment holds everything (nothing is fetched behind
//! its back). The `go` directive is the toolchain range asked for; `GOTOOLCHAIN=local` keeps
//! the `toolchain` directive from downloading another Go. Modules nested in the repository
//! (their own `go.mod`, outside `./...`) are noted, not set up.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use sha2::Digest;

use crate::Language;
use crate::env::{
    Activation, EnvError, EnvPlan, EnvSupport, Failures, Finding, IMAGE_REPO, ImageRecipe, Inventory, Repairs, Step,
    StepDir, Tool, ToolRequirement, version_cmp,
};

pub struct GoEnv;

pub static GO_ENV: GoEnv = GoEnv;

const INPUTS: &[&str] = &["go.mod", "go.sum", "go.work", "go.work.sum"];

/// What `go.mod` says: its module, `go` and `toolchain` directives and how many requires.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GoMod {
    pub module: Option<String>,
    pub go: Option<String>,
    pub toolchain: Option<String>,
    pub requires: usize,
}

pub fn parse_go_mod(text: &str) -> GoMod {
    let mut m = GoMod::default();
    let mut in_require = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if in_require {
            if line == ")" {
                in_require = false;
            } else if !line.is_empty() {
                m.requires += 1;
            }
            continue;
        }
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("module"), Some(v)) => m.module = Some(v.trim_matches('"').to_string()),
            (Some("go"), Some(v)) => m.go = Some(v.to_string()),
            (Some("toolchain"), Some(v)) => m.toolchain = Some(v.to_string()),
            (Some("require"), Some("(")) => in_require = true,
            (Some("require"), Some(_)) => m.requires += 1,
            _ => {}
        }
    }
    m
}

/// The `go` on this machine: its version (`1.26.8`).
fn local_go() -> Option<String> {
    let out = Command::new("go").arg("version").env("GOTOOLCHAIN", "local").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("go").filter(|v| v.starts_with(|c: char| c.is_ascii_digit())))
        .map(str::to_string)
}

/// Folders below the root holding their own `go.mod` (not under `vendor/` or `testdata/`).
fn nested_modules(repo: &Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(repo)
        .max_depth(Some(4))
        .filter_entry(|e| e.file_name() != "vendor" && e.file_name() != "testdata")
        .build()
        .flatten()
        .filter(|e| e.file_name() == "go.mod" && e.depth() > 1)
        .filter_map(|e| e.path().parent()?.strip_prefix(repo).ok().map(|p| p.display().to_string()))
        .collect();
    out.sort();
    out
}

impl EnvSupport for GoEnv {
    fn inputs(&self, repo: &Path) -> Vec<String> {
        INPUTS.iter().filter(|f| repo.join(f).is_file()).map(|f| f.to_string()).collect()
    }

    fn detect(&self, repo: &Path) -> Result<EnvPlan, EnvError> {
        let Ok(text) = std::fs::read_to_string(repo.join("go.mod")) else {
            return Err(EnvError::NoMetadata(
                "no go.mod at the repository's root: run `go mod init <module path>` (and `go mod tidy`) first".into(),
            ));
        };
        let m = parse_go_mod(&text);
        let mut findings = Vec::new();
        if let Some(module) = &m.module {
            findings.push(Finding::new("module", module.clone(), "go.mod module"));
        }
        if let Some(go) = &m.go {
            findings.push(Finding::new("toolchain", format!("go >= {go}"), "go.mod go directive"));
        }
        if let Some(t) = &m.toolchain {
            findings.push(Finding::new(
                "note",
                format!("toolchain {t} suggested; carve uses the local Go (GOTOOLCHAIN=local) when it meets the go directive"),
                "go.mod toolchain directive",
            ));
        }
        let vendored = repo.join("vendor/modules.txt").is_file();
        if vendored {
            findings.push(Finding::new(
                "install",
                "nothing to download: the dependencies are vendored",
                "vendor/modules.txt",
            ));
        } else {
            findings.push(Finding::new(
                "install",
                format!("go mod download ({} requires)", m.requires),
                if repo.join("go.sum").is_file() {
                    "go.mod require, pinned by go.sum"
                } else {
                    "go.mod require (no go.sum)"
                },
            ));
        }
        for nested in nested_modules(repo) {
            findings.push(Finding::new(
                "note",
                format!("{nested}/ is a module of its own, outside ./...: not set up or tested"),
                format!("{nested}/go.mod"),
            ));
        }
        let requires = vec![ToolRequirement {
            tool: "go".into(),
            wanted: m.go.as_ref().map(|g| format!(">={g}")),
            source: "go.mod go directive".into(),
        }];
        Ok(EnvPlan { language: Language::Go, inputs: self.inputs(repo), whole_source: false, requires, findings })
    }

    fn toolchain(&self, plan: &EnvPlan) -> Result<Vec<Tool>, EnvError> {
        let Some(version) = local_go() else {
            return Err(EnvError::ToolMissing {
                tool: "go".into(),
                why: "download the module's dependencies and run its tests".into(),
                hint: "install Go (https://go.dev/dl) and put it on PATH".into(),
            });
        };
        if let Some(wanted) = plan.requires.iter().find_map(|r| r.wanted.as_deref()) {
            let min = wanted.trim_start_matches(">=");
            if version_cmp(&version, min) == std::cmp::Ordering::Less {
                return Err(EnvError::Unavailable {
                    tool: "Go".into(),
                    wanted: wanted.to_string(),
                    origin: "go.mod go directive".into(),
                    present: format!("go {version}"),
                    hint: format!(
                        "install Go {min} or newer, or let Go fetch it (GOTOOLCHAIN=go{min}+auto downloads it as a module)"
                    ),
                });
            }
        }
        Ok(vec![Tool { tool: "go".into(), version, program: "go".into() }])
    }

    fn install_steps(&self, plan: &EnvPlan, _tools: &[Tool]) -> Vec<Step> {
        if plan.findings.iter().any(|f| f.source == "vendor/modules.txt") {
            return Vec::new();
        }
        let why = plan.findings.iter().find(|f| f.what == "install").map_or("go.mod".into(), |f| f.source.clone());
        vec![
            Step::new(&["go", "mod", "download", "-x"], StepDir::Src, why)
                .with_env("GOMODCACHE", "{env}/gomodcache")
                .with_env("GOTOOLCHAIN", "local")
                .with_env("GOFLAGS", "-mod=mod"),
        ]
    }

    fn activation(&self, _plan: &EnvPlan, _tools: &[Tool]) -> Activation {
        Activation {
            interpreter: None,
            vars: vec![
                ("GOMODCACHE".into(), "{env}/gomodcache".into()),
                ("GOPROXY".into(), "off".into()),
                ("GOTOOLCHAIN".into(), "local".into()),
            ],
            linked: vec!["go.sum".into()],
            build: Vec::new(),
        }
    }

    fn repairs(&self, _plan: &EnvPlan, failures: &Failures, done: &[Step]) -> Repairs {
        let text = format!("{}\n{}", failures.messages.join("\n"), failures.output);
        let mut r = Repairs::default();
        let asked_all = done.iter().any(|s| s.argv.iter().any(|w| w == "all"));
        if (text.contains("GOPROXY=off") || text.contains("module lookup disabled")) && !asked_all {
            r.steps.push(
                Step::new(&["go", "mod", "download", "all"], StepDir::Src, "repair: a module the tests need was not downloaded (module lookup disabled by GOPROXY=off) → every module of the build list")
                    .with_env("GOMODCACHE", "{env}/gomodcache")
                    .with_env("GOTOOLCHAIN", "local")
                    .with_env("GOFLAGS", "-mod=mod"),
            );
        }
        if text.contains("missing go.sum entry") {
            r.unresolved.push(
                "the repository's go.sum lacks entries the tests need: run `go mod tidy` and commit go.sum".into(),
            );
        }
        for tool in ["gcc", "cc", "git", "pkg-config"] {
            if text.contains(&format!("exec: \"{tool}\": executable file not found")) {
                r.unresolved
                    .push(format!("the build runs `{tool}`, which is not installed (install it on this machine)"));
            }
        }
        r
    }

    fn inventory(&self, _plan: &EnvPlan, tools: &[Tool], env: &Path) -> Inventory {
        let sum = std::fs::read(env.join("src/go.sum")).unwrap_or_default();
        let mut packages = BTreeMap::new();
        for line in String::from_utf8_lossy(&sum).lines() {
            let mut w = line.split_whitespace();
            if let (Some(module), Some(version)) = (w.next(), w.next())
                && !version.ends_with("/go.mod")
            {
                packages.insert(module.to_string(), version.to_string());
            }
        }
        let mut tool_versions = BTreeMap::new();
        if let Some(t) = tools.first() {
            tool_versions.insert("go".to_string(), t.version.clone());
        }
        let has_sum = !sum.is_empty();
        Inventory {
            packages,
            lockfile: has_sum.then(|| "go.sum".to_string()),
            lockfile_sha256: has_sum.then(|| hex::encode(sha2::Sha256::digest(&sum))),
            tools: tool_versions,
        }
    }

    fn image(
        &self,
        plan: &EnvPlan,
        tools: &[Tool],
        steps: &[Step],
        _inventory: &Inventory,
        _env: &Path,
    ) -> ImageRecipe {
        let version = tools.first().map_or("1", |t| t.version.as_str());
        let minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
        let mut env = self.activation(plan, tools).vars;
        // The build cache in the image: a fresh container compiles nothing the image did
        // (without it every run in the image builds the standard library again, ~1 min).
        env.push(("GOCACHE".into(), "{env}/gocache".into()));
        let script = format!("cd {IMAGE_REPO} && go test -count=1 -run '^$' ./... >/dev/null 2>&1 || true");
        let mut warm = Step::new(
            &["sh", "-c", &script],
            StepDir::Env,
            "the build cache: the packages and their tests compiled once (a package that does not build is left to the runs)",
        );
        warm.env = env.clone();
        ImageRecipe {
            base: format!("golang:{minor}-bookworm"),
            inputs: plan.inputs.clone(),
            context_files: BTreeMap::new(),
            install: steps.to_vec(),
            after_source: vec![warm],
            env,
            linked: Vec::new(),
            build: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_mod_directives_and_requires() {
        let m = parse_go_mod(
            "module github.com/x/y/v2 // c\n\ngo 1.25.0\n\ntoolchain go1.26.1\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tgithub.com/c/d v0.1.0 // indirect\n)\nrequire github.com/e/f v1.2.3\n",
        );
        assert_eq!(
            m,
            GoMod {
                module: Some("github.com/x/y/v2".into()),
                go: Some("1.25.0".into()),
                toolchain: Some("go1.26.1".into()),
                requires: 3
            }
        );
    }

    #[test]
    fn a_plan_with_its_sources_and_nested_modules_noted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("go.mod"), "module example.com/m\n\ngo 1.21\n").unwrap();
        std::fs::create_dir_all(d.path().join("arc")).unwrap();
        std::fs::write(d.path().join("arc/go.mod"), "module example.com/m/arc\n").unwrap();
        let plan = GO_ENV.detect(d.path()).unwrap();
        assert_eq!(plan.inputs, vec!["go.mod"]);
        assert_eq!(plan.requires[0].wanted.as_deref(), Some(">=1.21"));
        assert!(
            plan.findings.iter().any(|f| f.what == "note" && f.value.starts_with("arc/ is a module of its own")),
            "{:?}",
            plan.findings
        );
        let err = GO_ENV.detect(tempfile::tempdir().unwrap().path()).unwrap_err().to_string();
        assert!(err.contains("no go.mod"), "{err}");
    }

    #[carve_testutil::needs("go")]
    fn a_go_directive_newer_than_the_local_go_is_an_error_naming_both() {
        let plan = EnvPlan {
            language: Language::Go,
            inputs: vec![],
            whole_source: false,
            requires: vec![ToolRequirement {
                tool: "go".into(),
                wanted: Some(">=9.99".into()),
                source: "go.mod go directive".into(),
            }],
            findings: vec![],
        };
        let err = GO_ENV.toolchain(&plan).unwrap_err().to_string();
        assert!(err.contains(">=9.99") && err.contains("this machine has go 1."), "{err}");
    }

    #[test]
    fn lookup_disabled_asks_for_every_module_once() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("go.mod"), "module m\n").unwrap();
        let plan = GO_ENV.detect(d.path()).unwrap();
        let f = Failures {
            messages: vec!["go: module lookup disabled by GOPROXY=off".into()],
            output: String::new(),
            repo: "/r".into(),
        };
        let r = GO_ENV.repairs(&plan, &f, &[]);
        assert_eq!(r.steps[0].argv, vec!["go", "mod", "download", "all"]);
        assert!(GO_ENV.repairs(&plan, &f, &r.steps).steps.is_empty());
    }
}
