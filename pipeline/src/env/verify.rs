//! The verification run: the whole suite once, in a copy of the repository, with the
//! environment being built (its interpreter, variables and installed folders), counted and
//! turned into what the language's repairs read.

use std::path::Path;
use std::time::Duration;

use carve_languages::env::{Activation, Failures};
use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};

use super::record::{BaselineCounts, FAILING_SHOWN};
use super::store::ActiveEnv;
use crate::Result;
use crate::Session;

/// The test command with the environment's interpreter (`dir` for `{env}`).
pub fn command_in(command: &TestCommand, activation: &Activation, dir: &Path) -> TestCommand {
    let mut command = command.clone();
    if let Some(python) = activation.interpreter_in(dir) {
        command.set_interpreter(&python);
    }
    command
}

/// Run the suite once with the environment at `env.dir`; `Err` only for carve's own failures
/// (a copy that cannot be made), a run that cannot start is in the counts' `run_error`.
pub fn run_suite(session: &Session, env: &ActiveEnv, scratch: &Path) -> Result<(BaselineCounts, Failures)> {
    let tree = scratch.join("tree");
    carve_core::tree::shadow_copy(&session.repo, &tree, carve_languages::skip_policy())?;
    env.prepare(&tree)?;
    let runner_scratch = scratch.join("run");
    std::fs::create_dir_all(&runner_scratch)?;
    let cfg = &session.config;
    let request = RunRequest {
        root: tree.clone(),
        command: command_in(&cfg.test, env.activation(), &env.dir),
        tests: None,
        env: env.vars(),
        pythonpath_prepend: Vec::new(),
        extra_args: Vec::new(),
        timeout: Duration::from_secs(cfg.timeouts.run),
        test_timeout: Duration::from_secs(cfg.timeouts.test),
        scratch: runner_scratch,
        build: env.activation().build.clone(),
    };
    let outcome = carve_languages::run_tests(&request);
    let _ = std::fs::remove_dir_all(&tree);
    let repo = session.repo.clone();
    Ok(match outcome {
        Ok(result) => (counts(&result), failures(&result, repo)),
        Err(e) => {
            let text = e.to_string();
            let counts = BaselineCounts { run_error: Some(text.clone()), ..BaselineCounts::default() };
            (counts, Failures { messages: Vec::new(), output: text, repo })
        }
    })
}

/// The counts of a run, with up to [`FAILING_SHOWN`] failing tests by name.
pub fn counts(result: &RunResult) -> BaselineCounts {
    let mut c = BaselineCounts { collection_errors: result.collection_errors.clone(), ..BaselineCounts::default() };
    for (id, o) in &result.statuses {
        match o.status {
            TestStatus::Passed => c.passed += 1,
            TestStatus::Skipped => c.skipped += 1,
            TestStatus::Failed => c.failed += 1,
            TestStatus::Error => c.errors += 1,
            TestStatus::Missing | TestStatus::Timeout => c.other += 1,
        }
        if !matches!(o.status, TestStatus::Passed | TestStatus::Skipped) && c.failing.len() < FAILING_SHOWN {
            let msg = o.message.clone().unwrap_or_else(|| o.status.name().to_string());
            c.failing.insert(id.clone(), msg);
        }
    }
    c
}

fn failures(result: &RunResult, repo: std::path::PathBuf) -> Failures {
    let mut messages: Vec<String> = result
        .statuses
        .values()
        .filter(|o| !matches!(o.status, TestStatus::Passed | TestStatus::Skipped))
        .filter_map(|o| o.message.clone())
        .collect();
    messages.extend(result.collection_errors.values().cloned());
    messages.sort();
    messages.dedup();
    let output = format!("{}\n{}", result.stdout_tail, result.stderr_tail);
    Failures { messages, output, repo }
}

impl BaselineCounts {
    /// Every test that ran passed or was skipped, and at least one passed.
    pub fn all_pass(&self) -> bool {
        self.passed > 0
            && self.failed + self.errors + self.other == 0
            && self.collection_errors.is_empty()
            && self.run_error.is_none()
    }

    /// One line: `12 passed, 1 failed, 2 errors, 0 skipped`.
    pub fn summary(&self) -> String {
        let mut s =
            format!("{} passed, {} failed, {} errors, {} skipped", self.passed, self.failed, self.errors, self.skipped);
        if self.other > 0 {
            s.push_str(&format!(", {} hung or missing", self.other));
        }
        if !self.collection_errors.is_empty() {
            s.push_str(&format!(", {} files not collected", self.collection_errors.len()));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_languages::runner::TestOutcome;

    #[test]
    fn counts_and_failures_of_a_run() {
        let mut r = RunResult::default();
        r.statuses.insert("a::ok".into(), TestOutcome::new(TestStatus::Passed, None));
        r.statuses.insert("a::bad".into(), TestOutcome::new(TestStatus::Failed, Some("No module named 'yaml'".into())));
        r.statuses.insert("a::skip".into(), TestOutcome::new(TestStatus::Skipped, None));
        r.collection_errors.insert("b.py".into(), "ImportError: x".into());
        let c = counts(&r);
        assert_eq!((c.passed, c.failed, c.skipped, c.errors), (1, 1, 1, 0));
        assert_eq!(c.failing.get("a::bad").map(String::as_str), Some("No module named 'yaml'"));
        assert!(!c.all_pass());
        assert_eq!(c.summary(), "1 passed, 1 failed, 0 errors, 1 skipped, 1 files not collected");
        let f = failures(&r, "/r".into());
        assert_eq!(f.messages, vec!["ImportError: x".to_string(), "No module named 'yaml'".to_string()]);
    }
}
