//! The tests of a task or a gate run in a tree: the pipeline's test runs
//! ([`carve_pipeline::runs::TestRuns`]), configured by the project's `carve.toml` (or what
//! `carve init` would detect), with one status per test as the results formats name them.

use carve_languages::runner::TestStatus;
use carve_pipeline::config::Config;
use carve_pipeline::runs::{RunExtras, TestRuns};
use std::collections::BTreeMap;
use std::path::Path;

use crate::Error;
use crate::results::Statuses;

/// The configuration of `repo`: `explicit`, else `<repo>/carve.toml`, else detected from the
/// repository's files.
pub fn config(repo: &Path, explicit: Option<&Path>) -> Result<Config, Error> {
    match carve_pipeline::config::find(repo, explicit) {
        Some(path) => Ok(Config::read(&path)?),
        None => Config::detect(repo).map_err(|_| {
            Error::Usage(format!(
                "could not detect how the tests of {} run; pass --config with a carve.toml (see docs/formats.md)",
                repo.display()
            ))
        }),
    }
}

/// Run `tests` in `tree`; one status per test (`missing` for what the runner did not
/// report). Output tails of the run go with the error when the runner cannot start.
pub fn run(runs: &TestRuns, tree: &Path, tests: &[String], scratch: &Path) -> Result<TestRun, String> {
    if tests.is_empty() {
        return Ok(TestRun::default());
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("could not create {}: {e}", scratch.display()))?;
    let result = runs.run(tree, Some(tests), &RunExtras::default(), scratch).map_err(|e| e.message)?;
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
