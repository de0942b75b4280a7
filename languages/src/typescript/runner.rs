//! The JavaScript/TypeScript runners: vitest, jest, node:test and mocha, each run through
//! the project's own installation with a machine-readable report, one status per test id
//! `path > describe > test` (path relative to the tree root; node:test and mocha `path >
//! suite > test`).
//!
//! Every runner gets a small progress reporter of carve's (`runner/carve_*_reporter.*`,
//! written to the request's scratch directory) that appends JSON lines to a file as the
//! run goes: the tests of each collected file, each test's start and result, files that
//! failed to load, the end of the session. The watchdog reads it for progress and to know
//! which test to blame when it has to kill the run ([`crate::runner::attempts`] reruns the
//! rest). vitest and jest also write their own JSON report (`--reporter=json` /
//! `--json --outputFile`), which is authoritative for the final statuses when the run
//! finished; stdout gets the runner's verbose/spec reporter, the output harness log
//! parsers read (see [`harness`]). mocha takes one reporter only: carve's
//! (`carve_mocha_reporter.cjs`) writes the progress stream and runs mocha's own spec
//! reporter for stdout (see [`mocha`]).
//!
//! Selection goes through the runner's own filtering: the files of the requested ids
//! (vitest file filters, jest `--runTestsByPath`, node:test and mocha file arguments) and
//! one anchored, escaped name pattern (`-t` / `--test-name-pattern` / `--grep`, see
//! [`selection`]). The
//! name pattern is global to the process, so a test elsewhere whose name happens to match
//! may run too; only the requested ids (and the tests under a requested file or describe
//! block) are reported, and a requested id that did not run is `missing`.
//!
//! Flags fit the installed runner's version ([`version`]). Nothing is written into the
//! tree: vitest's results cache is off (`--no-cache`, vitest 1.3+), jest's
//! cache goes to the scratch directory (`--cacheDirectory`), reports and progress go to the
//! scratch directory.

pub mod eval;
mod files;
pub mod harness;
pub mod mocha;
mod old_vitest;
mod progress;
mod report;
pub mod selection;
pub mod setup;
pub mod test_ids;
pub(crate) mod unbuilt;
mod version;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::runner::attempts::{self, Attempt};
use crate::runner::steps::{WorkDir, last_lines};
use crate::runner::{
    Collection, RunRequest, RunResult, RunnerError, TestCommand, TestId, TestOutcome, TestStatus, is_ancestor,
};
use carve_core::process::{self, Ended, Limits, Stop};

pub use crate::typescript::detect::PackageManager;
use progress::ProgressReader;

const VITEST_REPORTER: &str = include_str!("runner/carve_vitest_reporter.mjs");
const VITEST_SETUP: &str = include_str!("runner/carve_vitest_setup.mjs");
const JEST_REPORTER: &str = include_str!("runner/carve_jest_reporter.cjs");
const NODE_REPORTER: &str = include_str!("runner/carve_node_reporter.mjs");
const MOCHA_REPORTER: &str = include_str!("runner/carve_mocha_reporter.cjs");

/// A JavaScript test runner carve drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Vitest,
    Jest,
    NodeTest,
    Mocha,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Vitest => "vitest",
            Kind::Jest => "jest",
            Kind::NodeTest => "node:test",
            Kind::Mocha => "mocha",
        }
    }
}

/// The runner, package manager and extra arguments of a JavaScript [`TestCommand`].
pub fn spec(command: &TestCommand) -> Option<(Kind, PackageManager, &[String])> {
    match command {
        TestCommand::Vitest { package_manager, args } => Some((Kind::Vitest, *package_manager, args)),
        TestCommand::Jest { package_manager, args } => Some((Kind::Jest, *package_manager, args)),
        TestCommand::NodeTest { package_manager, args } => Some((Kind::NodeTest, *package_manager, args)),
        TestCommand::Mocha { package_manager, args } => Some((Kind::Mocha, *package_manager, args)),
        _ => None,
    }
}

/// Run the tests `req` asks for.
pub fn run(req: &RunRequest) -> Result<RunResult, RunnerError> {
    let job = Job::create(req)?;
    let result = attempts::run_with_reruns(req, |selection, deadline, number| {
        job.attempt(req, selection, deadline, number, false)
    });
    job.dir.remove();
    let mut result = result?;
    settle(req, &mut result);
    Ok(result)
}

/// The ids the runner would run for `req`: every test is deselected by a name pattern that
/// matches nothing, so the runner loads each file and reports its tests as skipped without
/// running one.
pub fn collect(req: &RunRequest) -> Result<Collection, RunnerError> {
    let job = Job::create(req)?;
    let attempt = job.attempt(req, req.tests.as_deref(), Instant::now() + req.timeout, 0, true);
    job.dir.remove();
    attempt?.into_collection()
}

/// After the reruns: a file-level blame (the runner was killed in a file before any of its
/// tests reported a start) covers the requested ids in that file, and file-level entries
/// that have tests of their own are dropped.
fn settle(req: &RunRequest, result: &mut RunResult) {
    let file_level: Vec<(TestId, TestOutcome)> =
        result.statuses.iter().filter(|(id, _)| !id.contains(" > ")).map(|(id, o)| (id.clone(), o.clone())).collect();
    const NOT_RUN: &str = "the runner ended its session before this test ran";
    for entry in req.tests.iter().flatten() {
        if result
            .statuses
            .get(entry)
            .is_some_and(|o| o.status == TestStatus::Error && o.message.as_deref() == Some(NOT_RUN))
        {
            result.statuses.insert(
                entry.clone(),
                TestOutcome::new(TestStatus::Missing, Some("the runner has no such test".into())),
            );
        }
    }
    for (file, outcome) in file_level {
        if req.tests.iter().flatten().any(|t| *t == file) {
            continue;
        }
        if outcome.status == TestStatus::Error && outcome.message.as_deref() == Some(NOT_RUN) {
            result.statuses.remove(&file);
            continue;
        }
        for entry in req.tests.iter().flatten() {
            if is_ancestor(&file, entry) && result.status(entry) == TestStatus::Missing {
                result.statuses.insert(entry.clone(), outcome.clone());
            }
        }
        if result.statuses.keys().any(|id| is_ancestor(&file, id)) {
            result.statuses.remove(&file);
        }
    }
}

/// A run's private directory with carve's reporters in it.
struct Job {
    dir: WorkDir,
    kind: Kind,
    package_manager: PackageManager,
    args: Vec<String>,
    reporter: PathBuf,
    /// Every test that has an outcome or was blamed, over the attempts so far: a rerun of a
    /// whole file leaves them out.
    done: RefCell<BTreeSet<TestId>>,
}

impl Job {
    fn create(req: &RunRequest) -> Result<Job, RunnerError> {
        let Some((kind, package_manager, args)) = spec(&req.command) else {
            return Err(RunnerError::Unparseable {
                command: req.command.runner_name().to_string(),
                detail: "not a JavaScript test command".into(),
                tail: String::new(),
            });
        };
        let dir = WorkDir::create(req, kind.name().trim_end_matches(":test"))?;
        let (name, text) = match kind {
            Kind::Vitest => ("carve_vitest_reporter.mjs", VITEST_REPORTER),
            Kind::Jest => ("carve_jest_reporter.cjs", JEST_REPORTER),
            Kind::NodeTest => ("carve_node_reporter.mjs", NODE_REPORTER),
            Kind::Mocha => ("carve_mocha_reporter.cjs", MOCHA_REPORTER),
        };
        let reporter = dir.dir.join(name);
        std::fs::write(&reporter, text).map_err(RunnerError::io("write", &reporter))?;
        if kind == Kind::Vitest {
            let setup = dir.dir.join("carve_vitest_setup.mjs");
            std::fs::write(&setup, VITEST_SETUP).map_err(RunnerError::io("write", &setup))?;
        }
        Ok(Job { dir, kind, package_manager, args: args.to_vec(), reporter, done: RefCell::new(BTreeSet::new()) })
    }

    /// The program that runs the runner: the project's installed binary, `yarn <bin>` under
    /// Yarn Plug'n'Play, `node` for node:test. Missing dependencies are an error naming the
    /// set-up command.
    fn program(&self, root: &Path) -> Result<(PathBuf, Vec<String>), RunnerError> {
        let bin = match self.kind {
            Kind::Vitest => "vitest",
            Kind::Jest => "jest",
            Kind::Mocha => "mocha",
            Kind::NodeTest => {
                if crate::typescript::detect::has_dependencies(root)
                    && !root.join("node_modules").is_dir()
                    && !root.join(".pnp.cjs").is_file()
                {
                    return Err(self.missing(root, "node_modules/ does not exist"));
                }
                return Ok((PathBuf::from("node"), Vec::new()));
            }
        };
        let installed = root.join("node_modules").join(".bin").join(bin);
        if installed.exists() {
            return Ok((installed, Vec::new()));
        }
        if root.join(".pnp.cjs").is_file() {
            return Ok((PathBuf::from("yarn"), vec![bin.to_string()]));
        }
        Err(self.missing(root, &format!("{} does not exist", Path::new("node_modules/.bin").join(bin).display())))
    }

    fn missing(&self, root: &Path, why: &str) -> RunnerError {
        RunnerError::MissingDependencies {
            runner: self.kind.name(),
            root: root.to_path_buf(),
            setup: self.package_manager.install_command(root),
            command: format!("{} ({why})", self.kind.name()),
            tail: String::new(),
        }
    }

    /// One runner process over `selection` (`None`: what the request asks for, or all).
    fn attempt(
        &self,
        req: &RunRequest,
        selection: Option<&[TestId]>,
        deadline: Instant,
        number: u32,
        collect_only: bool,
    ) -> Result<Attempt, RunnerError> {
        let root = &self.dir.root;
        let (program, mut args) = self.program(root)?;
        let progress = self.dir.dir.join(format!("progress-{number}.jsonl"));
        let report = self.dir.dir.join(format!("report-{number}.json"));
        std::fs::write(&progress, b"").map_err(RunnerError::io("create", &progress))?;
        let _ = std::fs::remove_file(&report);
        let plan = selection.map(|ids| {
            let mut plan = selection::Plan::new(root, ids);
            plan.exclude_done(self.done.borrow().iter());
            plan
        });
        if plan.as_ref().is_some_and(|p| p.files.is_empty()) {
            // Nothing requested exists in this tree: every entry is missing.
            return Ok(Attempt {
                command_line: process::display_command(&program, &args),
                collected: Some(Vec::new()),
                results: BTreeMap::new(),
                running: None,
                session_finished: true,
                collection_errors: BTreeMap::new(),
                ended: Ended::nothing_to_run(),
                startup_error: None,
            });
        }
        let files = Files { progress: &progress, report: &report };
        match self.kind {
            Kind::Vitest => self.vitest_args(req, plan.as_ref(), collect_only, &files, &mut args)?,
            Kind::Jest => self.jest_args(req, plan.as_ref(), collect_only, &files, &mut args)?,
            Kind::NodeTest => self.node_args(req, plan.as_ref(), collect_only, &files, &mut args),
            Kind::Mocha => mocha::args(self, req, plan.as_ref(), collect_only, &mut args),
        }
        let command_line = process::display_command(&program, &args);
        let cmd = self.command(req, &program, &args, &progress);
        let stdout = self.dir.dir.join(format!("stdout-{number}.log"));
        let stderr = self.dir.dir.join(format!("stderr-{number}.log"));
        let mut reader = ProgressReader::new(progress);
        let started = Instant::now();
        let limits = Limits::tests(deadline, req.test_timeout);
        let ended = process::supervise(cmd, &stdout, &stderr, limits, &mut reader).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RunnerError::ToolNotFound {
                    program: program.display().to_string(),
                    hint: format!(
                        "install Node.js (and `{}`), or fix `test.runner` in carve.toml",
                        self.package_manager.install_command(root)
                    ),
                }
            } else {
                RunnerError::Spawn { command: command_line.clone(), source: e }
            }
        })?;
        if let Some(detail) = reader.problem.take() {
            return Err(RunnerError::Unparseable { command: command_line, detail, tail: ended.tail() });
        }
        let mut out = reader.into_outcome();
        if out.finished
            && matches!(self.kind, Kind::Vitest | Kind::Jest)
            && let Err(detail) = merge_report(&mut out, &report, root)
        {
            return Err(RunnerError::Unparseable { command: command_line, detail, tail: ended.tail() });
        }
        if !out.finished && out.header && !collect_only {
            self.add_unreached(&mut out, plan.as_ref(), req, deadline);
        }
        self.keep_wanted(&mut out, plan.as_ref(), collect_only);
        let startup_error =
            if out.header { None } else { Some(self.startup_failure(root, &command_line, &ended, started.elapsed())) };
        Ok(Attempt {
            command_line,
            collected: out.header.then_some(out.collected),
            results: out.results,
            running: out.running.map(|(id, since)| (id, since.elapsed())),
            session_finished: out.finished,
            collection_errors: out.collection_errors,
            ended,
            startup_error,
        })
    }

    /// vitest's arguments: `run`, the configured ones, carve's reporter next to the JSON and
    /// verbose ones (before vitest 0.10 through carve's configuration file, see
    /// [`old_vitest`]), and the plan's name pattern and file filters.
    fn vitest_args(
        &self,
        req: &RunRequest,
        plan: Option<&selection::Plan>,
        collect_only: bool,
        files: &Files,
        args: &mut Vec<String>,
    ) -> Result<(), RunnerError> {
        let root = &self.dir.root;
        let reporter = self.reporter.display().to_string();
        let installed = version::installed(root, "vitest");
        args.push("run".into());
        let mut configured: Vec<String> = self.args.iter().chain(&req.extra_args).cloned().collect();
        if version::vitest_loads_reporter_files(installed) {
            args.extend(configured);
            args.extend([
                format!("--reporter={reporter}"),
                "--reporter=json".into(),
                "--reporter=verbose".into(),
                format!("--outputFile.json={}", files.report.display()),
            ]);
        } else {
            let project = old_vitest::take_project_config(root, &mut configured);
            let config = self.dir.dir.join("carve_vitest_config.mjs");
            let text = old_vitest::config_text(root, project.as_deref(), &self.reporter);
            std::fs::write(&config, text).map_err(RunnerError::io("write", &config))?;
            args.extend(configured);
            args.extend([format!("--config={}", config.display()), format!("--outputFile={}", files.report.display())]);
        }
        args.extend(["--passWithNoTests".into(), "--watch=false".into()]);
        if version::vitest_knows_no_cache(installed) {
            args.push("--no-cache".into());
        }
        args.extend(name_filter(plan, collect_only));
        if let Some(plan) = plan {
            // vitest's file filters (substrings of the path; extra matches are not reported).
            args.extend(plan.files.iter().cloned());
        }
        Ok(())
    }

    /// jest's arguments: the configured ones, carve's reporter next to the JSON and default
    /// ones, the set-up files the request adds, and the plan's name pattern and paths.
    fn jest_args(
        &self,
        req: &RunRequest,
        plan: Option<&selection::Plan>,
        collect_only: bool,
        files: &Files,
        args: &mut Vec<String>,
    ) -> Result<(), RunnerError> {
        let root = &self.dir.root;
        let reporter = self.reporter.display().to_string();
        args.extend(self.args.iter().cloned());
        args.extend(req.extra_args.iter().cloned());
        args.extend([
            "--ci".to_string(),
            "--json".into(),
            format!("--outputFile={}", files.report.display()),
            format!("--reporters={reporter}"),
            "--reporters=default".into(),
            "--verbose".into(),
            format!("--cacheDirectory={}", self.dir.dir.join("jest-cache").display()),
            "--passWithNoTests".into(),
            "--watchAll=false".into(),
            "--no-watchman".into(),
        ]);
        if let Some(first) = setup::extra(req, setup::JEST_ENV) {
            let (program, pre) = self.program(root)?;
            let configured = self.args.iter().chain(&req.extra_args).cloned().collect::<Vec<_>>();
            args.extend(setup::jest_args(&program, &pre, &configured, req, root, &first)?);
        }
        args.extend(name_filter(plan, collect_only));
        if let Some(plan) = plan {
            args.push("--runTestsByPath".into());
            args.extend(plan.files.iter().cloned());
        }
        Ok(())
    }

    /// node --test's arguments: the request's set-up file, carve's reporter (to the progress
    /// file) next to the spec one, the configured ones, and the plan's name patterns and files.
    fn node_args(
        &self,
        req: &RunRequest,
        plan: Option<&selection::Plan>,
        collect_only: bool,
        files: &Files,
        args: &mut Vec<String>,
    ) {
        let reporter = self.reporter.display().to_string();
        if let Some(first) = setup::extra(req, setup::NODE_ENV) {
            args.extend(["--require".to_string(), first]);
        }
        args.extend([
            "--test".to_string(),
            format!("--test-reporter={reporter}"),
            format!("--test-reporter-destination={}", files.progress.display()),
            "--test-reporter=spec".into(),
            "--test-reporter-destination=stdout".into(),
        ]);
        args.extend(self.args.iter().cloned());
        args.extend(req.extra_args.iter().cloned());
        if collect_only {
            args.push(format!("--test-name-pattern={}", selection::NOTHING));
        } else if let Some(plan) = plan {
            args.extend(plan.node_name_patterns().into_iter().map(|p| format!("--test-name-pattern={p}")));
        }
        if let Some(plan) = plan {
            args.extend(plan.files.iter().cloned());
        }
    }

    /// The runner's process: in the project root, with carve's progress file and root, no
    /// colours, CI mode, and the request's environment.
    fn command(&self, req: &RunRequest, program: &Path, args: &[String], progress: &Path) -> Command {
        let root = &self.dir.root;
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(root);
        cmd.env("CARVE_PROGRESS", progress)
            .env("CARVE_ROOT", root)
            .env("NO_COLOR", "1")
            .env("FORCE_COLOR", "0")
            .env("CI", "1");
        if self.kind == Kind::Vitest {
            cmd.env("CARVE_VITEST_SETUP", self.dir.dir.join("carve_vitest_setup.mjs"));
        }
        for (k, v) in &req.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Keep what this attempt was asked for: a rerun's left-out tests (reported as skipped,
    /// their outcomes are earlier ones), tests outside the plan, and, when only collecting,
    /// every result; then remember what is done.
    fn keep_wanted(&self, out: &mut progress::Outcome, plan: Option<&selection::Plan>, collect_only: bool) {
        // A rerun reports the tests it left out as skipped: their outcomes are earlier ones.
        out.results.retain(|id, _| !self.done.borrow().contains(id));
        if let Some(plan) = plan {
            let wanted = |id: &str| plan.wants(id);
            out.collected.retain(|id| wanted(id));
            out.results.retain(|id, o| wanted(id) && o.message.as_deref() != Some(selection::NODE_DESELECTED));
            if out.running.as_ref().is_some_and(|(id, _)| !wanted(id) && !plan.files.contains(id)) {
                out.running = None;
            }
        }
        if collect_only {
            // Deselected by the pattern: reported as skipped, but they were only collected.
            out.results.clear();
        }
        let mut done = self.done.borrow_mut();
        done.extend(out.results.keys().cloned());
        done.extend(out.running.iter().map(|(id, _)| id.clone()));
    }

    /// The run was killed or crashed before it finished: what it never reached goes into
    /// the collection so that the next process runs it — files that started and never
    /// listed their tests (as file-level entries; the rerun leaves out their tests that
    /// are done), files it never started (from the runner's own file listing), and
    /// requested tests in files whose tests are not all known.
    fn add_unreached(
        &self,
        out: &mut progress::Outcome,
        plan: Option<&selection::Plan>,
        req: &RunRequest,
        deadline: Instant,
    ) {
        let running = out.running.as_ref().map(|(id, _)| id.clone());
        let mut extra: Vec<TestId> = out.open_files.iter().filter(|f| Some(*f) != running.as_ref()).cloned().collect();
        if plan.is_none_or(|p| p.whole_file()) {
            let listed = files::list(self, req, deadline);
            let reached = |f: &str| {
                out.known_files.contains(f)
                    || out.open_files.iter().any(|o| o == f)
                    || out.collected.iter().any(|id| is_ancestor(f, id) || id == f)
            };
            extra.extend(listed.into_iter().filter(|f| !reached(f) && plan.is_none_or(|p| p.wants(f))));
        }
        if let Some(plan) = plan {
            for entry in plan.entries.iter().filter(|e| e.contains(" > ")) {
                let file = entry.split(" > ").next().unwrap_or_default();
                if !out.known_files.contains(file) && !out.collected.contains(entry) {
                    extra.push(entry.clone());
                }
            }
        }
        for id in extra {
            if !out.collected.contains(&id) && !out.results.contains_key(&id) {
                out.collected.push(id);
            }
        }
    }

    /// Why the runner ended without loading carve's reporter.
    fn startup_failure(&self, root: &Path, command: &str, ended: &Ended, after: std::time::Duration) -> RunnerError {
        let tail = ended.tail();
        if ended.stop != Stop::Exited {
            return RunnerError::CollectionTimeout {
                runner: self.kind.name(),
                root: root.to_path_buf(),
                command: command.into(),
                after,
                tail,
            };
        }
        if let Some(spec) = unbuilt::missing_relative_module(&tail) {
            return RunnerError::Collection {
                runner: self.kind.name(),
                root: root.to_path_buf(),
                command: command.into(),
                exit_code: ended.exit_code,
                hint: unbuilt::hint(root, &spec),
                tail: last_lines(&tail, 40),
            };
        }
        let missing_module =
            ["Cannot find module", "ERR_MODULE_NOT_FOUND", "Cannot find package"].iter().any(|m| tail.contains(m));
        if missing_module {
            return RunnerError::MissingDependencies {
                runner: self.kind.name(),
                root: root.to_path_buf(),
                setup: self.package_manager.install_command(root),
                command: command.into(),
                tail: last_lines(&tail, 40),
            };
        }
        RunnerError::Collection {
            runner: self.kind.name(),
            root: root.to_path_buf(),
            command: command.into(),
            exit_code: ended.exit_code,
            hint: "; the runner stopped before it started any test file (check its configuration and `test.args` in carve.toml)".into(),
            tail,
        }
    }
}

/// The files one attempt's runner writes: carve's progress stream and the runner's report.
struct Files<'a> {
    progress: &'a Path,
    report: &'a Path,
}

/// Merge the runner's JSON report (vitest, jest) into the outcome read from the progress
/// stream. An unreadable report is an error only when the stream has no result either.
fn merge_report(out: &mut progress::Outcome, report: &Path, root: &Path) -> Result<(), String> {
    match report::read(report, root) {
        Ok(rep) => {
            for (id, outcome) in rep.results {
                if !out.collected.contains(&id) {
                    out.collected.push(id.clone());
                }
                out.results.insert(id, outcome);
            }
            out.collection_errors.extend(rep.file_errors);
        }
        Err(detail) if out.results.is_empty() => return Err(detail),
        Err(_) => {}
    }
    Ok(())
}

/// vitest's and jest's `-t` name filter: a pattern nothing matches when only collecting,
/// else the plan's name pattern (none when the plan runs whole files).
fn name_filter(plan: Option<&selection::Plan>, collect_only: bool) -> Vec<String> {
    let pattern = if collect_only { Some(selection::NOTHING.to_string()) } else { plan.and_then(|p| p.name_pattern()) };
    pattern.map(|p| vec!["-t".to_string(), p]).unwrap_or_default()
}

#[cfg(test)]
mod tests;
