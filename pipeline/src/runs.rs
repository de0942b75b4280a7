//! Test runs: a project's tests run in a tree through its runner, once or N times, with
//! one status per test, the tests whose status differs between runs (flaky), and a failed
//! run's message with the set-up hint. [`TestRuns`] needs only the `[test]` runner and the
//! timeouts of `carve.toml` — no session, no definition index — so FeatureArc's chain states
//! and evaluation's gates run tests through it as the stages of a [`Session`] do
//! ([`run_tests`]: the same run, with the warnings every stage wants about it).

use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Result;
use crate::config::Config;
use crate::image_runs::ImageRuntime;
use crate::{Session, TestId};

/// How a project's tests run: its runner, the timeouts of a run and of one test, and the
/// set-up command a failed run names.
#[derive(Debug, Clone)]
pub struct TestRuns {
    pub command: TestCommand,
    pub run_timeout: Duration,
    pub test_timeout: Duration,
    /// `carve.toml`'s `setup`: a run that cannot start says to run it.
    pub setup: Option<String>,
    /// The environment `carve env` made, when the runs use one.
    pub environment: Option<RunEnvironment>,
    /// `--runtime oci`: the runs happen inside this image (with its own environment; the
    /// local one above is not used).
    pub image: Option<std::sync::Arc<ImageRuntime>>,
    /// The project's build, run in every tree before its tests (the environment's
    /// `activation.build`; empty: none).
    pub build: Vec<String>,
}

/// How runs use an environment `carve env` made: its interpreter, its variables, and its
/// installed folders (`(folder, repository-relative place)`) linked into a tree that has none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunEnvironment {
    pub interpreter: Option<PathBuf>,
    pub vars: Vec<(String, String)>,
    pub linked: Vec<(PathBuf, String)>,
    /// The project's build, run in every tree before its tests.
    pub build: Vec<String>,
}

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

impl RunFailed {
    /// Whether the runner could not collect the tests (nothing compiles, a file does not
    /// load), as opposed to a run that could not start or was killed.
    pub fn is_collection(&self) -> bool {
        self.collection_tail.is_some()
    }
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunFailed {}

impl TestRuns {
    /// Runs with `command` and these timeouts, and no set-up command to name.
    pub fn new(command: TestCommand, run_timeout: Duration, test_timeout: Duration) -> TestRuns {
        TestRuns { command, run_timeout, test_timeout, setup: None, environment: None, image: None, build: Vec::new() }
    }

    /// Runs as `carve.toml` says: its `[test]` runner, `[timeouts]` and `setup`.
    pub fn of(config: &Config) -> TestRuns {
        TestRuns {
            command: config.test.clone(),
            run_timeout: Duration::from_secs(config.timeouts.run),
            test_timeout: Duration::from_secs(config.timeouts.test),
            setup: config.setup.clone(),
            environment: None,
            image: None,
            build: Vec::new(),
        }
    }

    /// Run with `env` from now on (its interpreter replaces the configured one).
    pub fn use_environment(&mut self, env: RunEnvironment) {
        if let Some(python) = &env.interpreter {
            self.command.set_interpreter(python);
        }
        self.build = env.build.clone();
        self.environment = Some(env);
    }

    /// Run `tests` (ids or files; all: `None`) of `tree` once; the runner keeps what it
    /// needs under `scratch`.
    pub fn run(
        &self,
        tree: &Path,
        tests: Option<&[TestId]>,
        extras: &RunExtras,
        scratch: &Path,
    ) -> Result<RunResult, RunFailed> {
        if let Some(image) = &self.image {
            let limits = (self.run_timeout, self.test_timeout);
            return image
                .run(&self.command, &self.build, limits, tree, tests, extras, scratch)
                .map_err(|e| self.with_hint(e));
        }
        let mut env = Vec::new();
        if let Some(e) = &self.environment {
            for (from, rel) in &e.linked {
                if from.exists() && std::fs::symlink_metadata(tree.join(rel)).is_err() {
                    carve_core::tree::link_tree(from, &tree.join(rel), carve_languages::skip_policy()).map_err(
                        |err| RunFailed {
                            message: format!("could not link the environment's {rel} into {}: {err}", tree.display()),
                            collection_tail: None,
                        },
                    )?;
                }
            }
            env = e.vars.clone();
        }
        env.extend(extras.env.iter().cloned());
        let request = RunRequest {
            root: tree.to_path_buf(),
            command: self.command.clone(),
            tests: tests.map(<[TestId]>::to_vec),
            env,
            pythonpath_prepend: extras.pythonpath.clone(),
            extra_args: extras.args.clone(),
            timeout: self.run_timeout,
            test_timeout: self.test_timeout,
            scratch: scratch.to_path_buf(),
            build: self.build.clone(),
        };
        carve_languages::run_tests(&request).map_err(|e| {
            let collection_tail = match &e {
                carve_languages::runner::RunnerError::Collection { tail, .. } => Some(tail.clone()),
                _ => None,
            };
            self.with_hint(RunFailed { message: e.to_string(), collection_tail })
        })
    }

    /// `failed` naming the set-up command of `carve.toml`, when there is one.
    fn with_hint(&self, mut failed: RunFailed) -> RunFailed {
        if let Some(s) = self.setup.as_deref() {
            failed.message.push_str(&format!(" (set-up command: `{s}`)"));
        }
        failed
    }

    /// Run `tests` (all: `None`) of `tree` `n` times, one run after the other in the same
    /// tree; the first run that fails as a whole ends them.
    pub fn repeat(&self, tree: &Path, tests: Option<&[TestId]>, n: usize, scratch: &Path) -> Result<Runs, RunFailed> {
        let mut runs = Vec::with_capacity(n);
        for _ in 0..n {
            let result = self.run(tree, tests, &RunExtras::default(), scratch)?;
            runs.push(result.statuses.into_iter().map(|(id, o)| (id, o.status)).collect());
        }
        Ok(Runs { runs })
    }
}

/// The statuses of the tests of one tree in each of several runs of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    runs: Vec<BTreeMap<TestId, TestStatus>>,
}

impl<const N: usize> From<[BTreeMap<TestId, TestStatus>; N]> for Runs {
    fn from(runs: [BTreeMap<TestId, TestStatus>; N]) -> Runs {
        Runs { runs: runs.into() }
    }
}

impl Runs {
    /// How many runs there are.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The status of `id` in run `i` (`missing` when that run did not report it, or there
    /// is no run `i`: a tree whose tests could not be collected has no runs).
    pub fn status(&self, i: usize, id: &str) -> TestStatus {
        self.runs.get(i).and_then(|r| r.get(id)).copied().unwrap_or(TestStatus::Missing)
    }

    /// Every test some run reported, sorted.
    pub fn ids(&self) -> BTreeSet<&TestId> {
        self.runs.iter().flat_map(|r| r.keys()).collect()
    }

    /// Whether the status of `id` differs between the runs (a test one run did not report is
    /// `missing` there).
    pub fn is_flaky(&self, id: &str) -> bool {
        (1..self.len()).any(|i| self.status(i, id) != self.status(0, id))
    }

    /// The tests whose status differs between the runs ([`Runs::is_flaky`]).
    pub fn flaky(&self) -> BTreeSet<&TestId> {
        self.ids().into_iter().filter(|id| self.is_flaky(id)).collect()
    }

    /// Whether every test reported is one of `requested` (what a runner reports when it
    /// could not select tests: one entry per requested file, and nothing else).
    pub fn only_of(&self, requested: &[TestId]) -> bool {
        self.runs.iter().all(|run| run.keys().all(|id| requested.contains(id)))
    }

    /// These runs without the entries of `requested` (a requested file gets an entry of its
    /// own next to its tests).
    pub fn without(self, requested: &[TestId]) -> Runs {
        let runs = self.runs.into_iter().map(|r| r.into_iter().filter(|(id, _)| !requested.contains(id)).collect());
        Runs { runs: runs.collect() }
    }
}

/// Run tests of `tree` (a shadow copy) through the project's runner, as a stage of `session`
/// does: with warnings about missing dependencies, hung tests and crashes.
pub fn run_tests(
    session: &Session,
    tree: &Path,
    tests: Option<Vec<TestId>>,
    extras: &RunExtras,
    scratch: &Path,
) -> Result<RunResult> {
    let cfg = &session.config;
    // The environment `carve env` made: its installed folders in the tree, its variables.
    let mut extras = extras.clone();
    let mut runs = TestRuns::of(cfg);
    runs.image = session.image.clone();
    if let Some(active) = &session.environment {
        runs.build = active.activation().build.clone();
    }
    if let (Some(active), None) = (&session.environment, &session.image) {
        active.prepare(tree)?;
        let mut env = active.vars();
        env.append(&mut extras.env);
        extras.env = env;
    }
    let result = runs.run(tree, tests.as_deref(), &extras, scratch).map_err(crate::Error::RunFailed)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::{Failed, Passed};

    fn run(statuses: &[(&str, TestStatus)]) -> BTreeMap<TestId, TestStatus> {
        statuses.iter().map(|(id, s)| (id.to_string(), *s)).collect()
    }

    #[test]
    fn a_test_whose_status_differs_between_runs_is_flaky() {
        let runs = Runs::from([
            run(&[("same", Passed), ("flip", Passed), ("gone", Failed)]),
            run(&[("same", Passed), ("flip", Failed)]),
        ]);
        assert_eq!(runs.status(1, "gone"), TestStatus::Missing, "a test a run did not report is missing there");
        assert_eq!(runs.flaky(), BTreeSet::from([&"flip".to_string(), &"gone".to_string()]));
        assert_eq!(Runs::default().status(0, "same"), TestStatus::Missing, "no run: missing");
        assert!(Runs::default().flaky().is_empty());
    }

    #[test]
    fn requested_files_are_told_from_their_tests() {
        let runs = Runs::from([run(&[("t.py", Failed)]), run(&[("t.py", Failed)])]);
        let requested = vec!["t.py".to_string()];
        assert!(runs.only_of(&requested), "only the requested file's entry: the runner could not select");
        let runs = Runs::from([run(&[("t.py", Failed), ("t.py::a", Passed)])]);
        assert!(!runs.only_of(&requested));
        assert_eq!(runs.without(&requested).ids(), BTreeSet::from([&"t.py::a".to_string()]));
    }

    /// A run that cannot start names the set-up command of `carve.toml`; one configured
    /// without it does not.
    #[test]
    fn a_run_that_cannot_start_names_the_set_up_command() {
        let dir = tempfile::tempdir().unwrap();
        let command = TestCommand::GoTest { args: vec![], packages: None };
        let mut runs = TestRuns::new(command, Duration::from_secs(60), Duration::from_secs(60));
        runs.setup = Some("make deps".into());
        let missing = dir.path().join("no-such-tree");
        let err = runs.run(&missing, None, &RunExtras::default(), dir.path()).unwrap_err();
        assert!(err.message.ends_with(" (set-up command: `make deps`)"), "{}", err.message);
        assert!(!err.is_collection(), "{err:?}");
        runs.setup = None;
        let err = runs.run(&missing, None, &RunExtras::default(), dir.path()).unwrap_err();
        assert!(!err.message.contains("set-up command"), "{}", err.message);
    }
}
