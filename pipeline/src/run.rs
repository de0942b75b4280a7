//! One run of the project's tests in a shadow copy through its runner, with the warnings
//! every stage wants about it (missing dependencies, hung tests, crashes). Baseline, trace
//! and validate all run tests through here.

use crate::Result;
use carve_languages::runner::{RunRequest, RunResult};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Session, TestId};

/// Extra settings of one run (for the traced run: the shim's environment and plugin).
#[derive(Default, Clone)]
pub struct RunExtras {
    pub env: Vec<(String, String)>,
    pub pythonpath: Vec<PathBuf>,
    pub args: Vec<String>,
}

/// A test run that failed as a whole, with the runner's message (and set-up hint).
#[derive(Debug)]
pub struct RunFailed {
    pub message: String,
    /// The output tail, when the runner could not collect the tests.
    pub collection_tail: Option<String>,
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunFailed {}

/// Run tests of `tree` (a shadow copy) through the project's runner.
pub fn run_tests(
    session: &Session,
    tree: &Path,
    tests: Option<Vec<TestId>>,
    extras: &RunExtras,
    scratch: &Path,
) -> Result<RunResult> {
    let cfg = &session.config;
    // The environment `carve env` made: its installed folders in the tree, its variables.
    let mut env = Vec::new();
    if let Some(active) = &session.environment {
        active.prepare(tree)?;
        env = active.vars();
    }
    env.extend(extras.env.iter().cloned());
    let request = RunRequest {
        root: tree.to_path_buf(),
        command: cfg.test.clone(),
        tests,
        env,
        pythonpath_prepend: extras.pythonpath.clone(),
        extra_args: extras.args.clone(),
        timeout: Duration::from_secs(cfg.timeouts.run),
        test_timeout: Duration::from_secs(cfg.timeouts.test),
        scratch: scratch.to_path_buf(),
    };
    let result = carve_languages::run_tests(&request).map_err(|e| {
        let hint = cfg.setup.as_deref().map(|s| format!(" (set-up command: `{s}`)")).unwrap_or_default();
        let collection_tail = match &e {
            carve_languages::runner::RunnerError::Collection { tail, .. } => Some(tail.clone()),
            _ => None,
        };
        crate::Error::RunFailed(RunFailed { message: format!("{e}{hint}"), collection_tail })
    })?;
    // Test files that cannot import a module usually mean dependencies are not installed.
    if let Some((file, err)) =
        result.collection_errors.iter().find(|(_, e)| e.contains("No module named") || e.contains("Cannot find module"))
    {
        let setup =
            cfg.setup.as_deref().map(|s| format!(": run `{s}` in {}", session.repo.display())).unwrap_or_default();
        session.progress.note(format!(
            "warning: {file} could not be loaded ({err}); the project's dependencies may not be installed{setup}"
        ));
    }
    if let Some(t) = &result.timed_out {
        session
            .progress
            .note(format!("warning: test {t} hung and was killed after its timeout (with its process group)"));
    }
    if result.crashed {
        session.progress.note(format!(
            "warning: the test process crashed during `{}`; tests it did not finish are reported as errors",
            result.command_line
        ));
    }
    Ok(result)
}
