//! How a project's tests run: the parts of `carve.toml` (docs/formats.md) evaluation needs —
//! the language, the `[test]` runner table and the timeouts — or, without a file, what
//! `carve init` would detect. Unknown keys are ignored (the binary's reader checks them),
//! except in `[timeouts]`, a type the binary shares.

use carve_languages::Language;
use carve_languages::runner::{RunRequest, TestCommand, TestStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Error;
use crate::results::Statuses;

/// `[timeouts]` of `carve.toml`, also the binary's (`carve::config::Timeouts`): a field
/// left out takes its default; an unknown one is an error.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timeouts {
    /// A whole test run, seconds.
    pub run: u64,
    /// One test without progress, seconds.
    pub test: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { run: 1800, test: 120 }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Project {
    pub version: u32,
    pub language: Language,
    #[serde(default)]
    pub setup: Option<String>,
    pub test: TestCommand,
    #[serde(default)]
    pub timeouts: Timeouts,
    /// The environment `carve env` made for the repository (not part of carve.toml).
    #[serde(skip)]
    pub environment: Option<RunEnvironment>,
}

/// How runs use an environment `carve env` made: its interpreter, its variables, and its
/// installed folders (`(folder, repository-relative place)`) linked into a tree that has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunEnvironment {
    pub interpreter: Option<std::path::PathBuf>,
    pub vars: Vec<(String, String)>,
    pub linked: Vec<(std::path::PathBuf, String)>,
}

impl Project {
    /// Run with `env` from now on (its interpreter replaces the configured one).
    pub fn use_environment(&mut self, env: RunEnvironment) {
        if let Some(python) = &env.interpreter {
            self.test.set_interpreter(python);
        }
        self.environment = Some(env);
    }

    pub fn read(path: &Path) -> Result<Project, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        let p: Project = toml::from_str(&text)
            .map_err(|e| Error::Format { path: path.to_path_buf(), detail: format!("not a valid carve.toml: {e}") })?;
        if p.version != 1 {
            return Err(Error::Format {
                path: path.to_path_buf(),
                detail: format!("carve.toml version {}, this carve reads version 1", p.version),
            });
        }
        Ok(p)
    }

    /// `explicit`, else `<repo>/carve.toml`, else detected from the repository's files.
    pub fn load(repo: &Path, explicit: Option<&Path>) -> Result<Project, Error> {
        if let Some(p) = explicit {
            return Project::read(p);
        }
        let in_repo = repo.join("carve.toml");
        if in_repo.is_file() {
            return Project::read(&in_repo);
        }
        let found = carve_languages::detect(repo);
        let first = found.first().ok_or_else(|| {
            Error::Usage(format!(
                "could not detect how the tests of {} run; pass --config with a carve.toml (see docs/formats.md)",
                repo.display()
            ))
        })?;
        Ok(Project {
            version: 1,
            language: first.language,
            setup: first.setup.clone(),
            test: first.command.clone(),
            timeouts: Timeouts::default(),
            environment: None,
        })
    }

    /// Run `tests` in `tree`; one status per test (`missing` for what the runner did not
    /// report). Output tails of the run go with the error when the runner cannot start.
    pub fn run(&self, tree: &Path, tests: &[String], scratch: &Path) -> Result<TestRun, String> {
        if tests.is_empty() {
            return Ok(TestRun::default());
        }
        std::fs::create_dir_all(scratch).map_err(|e| format!("could not create {}: {e}", scratch.display()))?;
        let mut req = RunRequest::new(tree, self.test.clone(), scratch);
        if let Some(env) = &self.environment {
            for (from, rel) in &env.linked {
                if from.exists() && std::fs::symlink_metadata(tree.join(rel)).is_err() {
                    carve_languages::tree::link_tree(from, &tree.join(rel))
                        .map_err(|e| format!("could not link the environment's {rel} into {}: {e}", tree.display()))?;
                }
            }
            req.env = env.vars.clone();
        }
        req.tests = Some(tests.to_vec());
        req.timeout = Duration::from_secs(self.timeouts.run);
        req.test_timeout = Duration::from_secs(self.timeouts.test);
        let result = carve_languages::run_tests(&req).map_err(|e| {
            let hint = self.setup.as_deref().map(|s| format!(" (set-up command: `{s}`)")).unwrap_or_default();
            format!("{e}{hint}")
        })?;
        let mut statuses = BTreeMap::new();
        let mut messages = BTreeMap::new();
        for t in tests {
            let o = result.statuses.get(t);
            let status = o.map_or(TestStatus::Missing, |o| o.status);
            statuses.insert(t.clone(), status.name().to_string());
            if let Some(m) = o.and_then(|o| o.message.clone()) {
                messages.insert(t.clone(), m);
            }
        }
        Ok(TestRun { statuses, messages, output_tail: format!("{}{}", result.stdout_tail, result.stderr_tail) })
    }
}

#[derive(Debug, Clone, Default)]
pub struct TestRun {
    pub statuses: Statuses,
    /// The runner's one-line reason per test, where it gave one.
    pub messages: BTreeMap<String, String>,
    pub output_tail: String,
}

impl TestRun {
    /// Statuses of `ids` only.
    pub fn of(&self, ids: &[String]) -> Statuses {
        ids.iter().map(|t| (t.clone(), self.statuses.get(t).cloned().unwrap_or_else(|| "missing".into()))).collect()
    }
}

/// A folder for scratch work: `--work`, else a fresh temporary one (removed with the guard).
pub fn scratch_root(explicit: Option<&Path>) -> Result<(Option<tempfile::TempDir>, PathBuf), Error> {
    match explicit {
        Some(p) => {
            std::fs::create_dir_all(p).map_err(|e| Error::io("create", p, e))?;
            Ok((None, p.to_path_buf()))
        }
        None => {
            let g = tempfile::Builder::new()
                .prefix("carve-eval-")
                .tempdir()
                .map_err(|e| Error::io("create", &std::env::temp_dir(), e))?;
            let p = g.path().to_path_buf();
            Ok((Some(g), p))
        }
    }
}
