//! The pytest runner: runs a project's tests with `python -m pytest` and carve's report
//! plugin (`carve_report.py`, embedded here and written to a private directory under the
//! request's scratch directory), and reads the plugin's JSON lines as the run goes.
//!
//! The command is `python -m pytest <test.args> <extra_args> --rootdir <root> -p carve_report
//! -p no:cacheprovider --continue-on-collection-errors --maxfail=0 [files…]`, run with cwd =
//! root, so ids are pytest node ids relative to the root (`path::Class::test[param]`). The
//! project's `addopts` are kept; carve's flags come last so they win (`--maxfail=0` undoes a
//! `-x`). Nothing is written into the tree: no `.pytest_cache` (cacheprovider off), no
//! `__pycache__` (`PYTHONDONTWRITEBYTECODE=1`), coverage data goes to the scratch directory
//! (`COVERAGE_FILE`), and so does Hypothesis' storage (`HYPOTHESIS_STORAGE_DIRECTORY`).
//! String hashing is seeded (`PYTHONHASHSEED=0` unless the user set one), so test ids that
//! depend on it are the same in every run, and the plugin seeds Hypothesis. A bare
//! interpreter name that is a version manager's script (pyenv's `python3` shim) is resolved
//! once to the interpreter it starts (`interpreter`).
//!
//! Selection: the requested ids go to the plugin in a JSON file (`CARVE_SELECT`), which
//! deselects every other item, so there is no command-line limit; the files they live in
//! are passed as arguments (when that list is short) so pytest only collects those files —
//! a directory whose Python files are all selected as the directory (`args`: pytest
//! re-collects a file argument's directory once per file argument).
//! A collection error in one file does not stop the run: the file is reported in
//! [`RunResult::collection_errors`] and requested tests in it get `error`.

mod args;
pub mod harness;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::interpreter;
use crate::runner::attempts::{self, Attempt};
use crate::runner::steps::WorkDir;
use crate::runner::{Collection, RunRequest, RunResult, RunnerError, TestCommand, TestId, TestOutcome, TestStatus};
use args::selection_paths;
use carve_core::process::{self, Appended, Ended, Limits, Progress, Stop};

/// The report plugin, loaded with `-p carve_report`.
const PLUGIN: &str = include_str!("carve_report.py");
/// Imported by the report plugin: loads the package under test from the run's tree even
/// when an editable or regular install points elsewhere.
const REDIRECT: &str = include_str!("carve_redirect.py");
/// The version of the plugin's JSON lines this reader understands.
const REPORT_VERSION: u32 = 1;
/// Above this many bytes of file arguments, pytest collects everything and the plugin
/// filters (slower, but no command-line limit).
const MAX_FILE_ARGS_BYTES: usize = 64 * 1024;

/// Run the tests `req` asks for with pytest.
pub fn run(req: &RunRequest) -> Result<RunResult, RunnerError> {
    let dir = RunDir::create(req)?;
    let result = attempts::run_with_reruns(req, |selection, deadline, number| {
        dir.attempt(req, selection, deadline, number, Mode::Run)
    });
    dir.remove();
    result
}

/// The ids pytest would run for `req` (`req.tests` may name ids, files, directories or
/// classes), without running them.
pub fn collect(req: &RunRequest) -> Result<Collection, RunnerError> {
    let dir = RunDir::create(req)?;
    let attempt = dir.attempt(req, req.tests.as_deref(), Instant::now() + req.timeout, 0, Mode::Collect);
    dir.remove();
    attempt?.into_collection()
}

/// pytest's version for `python`, or the error that says how to install it.
pub fn check_pytest(python: &Path) -> Result<String, RunnerError> {
    let output = Command::new(python)
        .args(["-c", "import pytest; print(pytest.__version__)"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| spawn_error(python, "-c 'import pytest'".to_string(), e))?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).trim().to_string());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("No module named") {
        return Err(RunnerError::PytestNotInstalled { python: python.to_path_buf() });
    }
    Err(RunnerError::Unparseable {
        command: format!("{} -c 'import pytest'", python.display()),
        detail: "the interpreter failed to import pytest".into(),
        tail: stderr.into_owned(),
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Run,
    Collect,
}

/// A private directory under the scratch directory: the plugin, and per process the
/// selection, the report and the captured output.
struct RunDir {
    dir: PathBuf,
    plugin_dir: PathBuf,
    /// The tree, absolute and canonical.
    root: PathBuf,
}

impl RunDir {
    fn create(req: &RunRequest) -> Result<RunDir, RunnerError> {
        let WorkDir { dir, root, .. } = WorkDir::create(req, "pytest")?;
        let plugin_dir = dir.join("plugin");
        let plugin = plugin_dir.join("carve_report.py");
        std::fs::create_dir(&plugin_dir).map_err(RunnerError::io("create", &plugin_dir))?;
        std::fs::write(&plugin, PLUGIN).map_err(RunnerError::io("write", &plugin))?;
        let redirect = plugin_dir.join("carve_redirect.py");
        std::fs::write(&redirect, REDIRECT).map_err(RunnerError::io("write", &redirect))?;
        Ok(RunDir { dir, plugin_dir, root })
    }

    fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// One pytest process over `selection` (`None`: the whole suite).
    fn attempt(
        &self,
        req: &RunRequest,
        selection: Option<&[TestId]>,
        deadline: Instant,
        number: u32,
        mode: Mode,
    ) -> Result<Attempt, RunnerError> {
        let TestCommand::Pytest { python, args: command_args } = &req.command else {
            unreachable!("python::runner called for {}", req.command.runner_name())
        };
        let mut args = self.pytest_args(req, command_args, mode);
        let report = self.dir.join(format!("report-{number}.jsonl"));
        std::fs::write(&report, b"").map_err(RunnerError::io("create", &report))?;
        let mut select_file = None;
        if let Some(ids) = selection {
            let files = selection_paths(&self.root, ids);
            if files.is_empty() {
                // Nothing requested exists in this tree: every entry is missing.
                return Ok(Attempt {
                    command_line: process::display_command(python, &args),
                    collected: Some(Vec::new()),
                    results: BTreeMap::new(),
                    running: None,
                    session_finished: true,
                    collection_errors: BTreeMap::new(),
                    ended: Ended::nothing_to_run(),
                    startup_error: None,
                });
            }
            if files.iter().map(|f| f.len() + 1).sum::<usize>() <= MAX_FILE_ARGS_BYTES {
                args.extend(files);
            }
            let path = self.dir.join(format!("select-{number}.json"));
            let json = serde_json::to_vec(ids).map_err(|e| RunnerError::io("write", &path)(e.into()))?;
            std::fs::write(&path, json).map_err(RunnerError::io("write", &path))?;
            select_file = Some(path);
        }
        let command_line = process::display_command(python, &args);

        // A version manager's `python3` script resolved once, not started per process.
        let mut cmd = interpreter::resolve(python, &self.root, &req.env).command();
        cmd.args(&args).current_dir(&self.root);
        self.set_env(&mut cmd, req, &report, select_file.as_deref())?;

        let stdout = self.dir.join(format!("stdout-{number}.log"));
        let stderr = self.dir.join(format!("stderr-{number}.log"));
        let mut reader = ReportReader::new(report);
        let started = Instant::now();
        let limits = Limits::tests(deadline, req.test_timeout);
        let ended = process::supervise(cmd, &stdout, &stderr, limits, &mut reader)
            .map_err(|e| spawn_error(python, command_line.clone(), e))?;
        if let Some(detail) = reader.problem.take() {
            return Err(RunnerError::Unparseable { command: command_line, detail, tail: ended.tail() });
        }
        let startup_error = match &reader.collected {
            Some(_) => None,
            None => Some(startup_failure(python, &self.root, &command_line, &ended, started.elapsed(), reader.header)),
        };
        Ok(Attempt {
            command_line,
            collected: reader.collected,
            results: reader.results,
            running: reader.running.map(|(id, since)| (id, since.elapsed())),
            session_finished: reader.finished,
            collection_errors: reader.collection_errors,
            ended,
            startup_error,
        })
    }

    /// The interpreter's arguments before the selected files: pytest with the command's and
    /// the request's arguments, carve's plugin, and `--collect-only` when only collecting.
    fn pytest_args(&self, req: &RunRequest, command_args: &[String], mode: Mode) -> Vec<String> {
        let mut args: Vec<String> = vec!["-m".into(), "pytest".into()];
        args.extend(command_args.iter().cloned());
        args.extend(req.extra_args.iter().cloned());
        args.extend(["--rootdir".to_string(), self.root.display().to_string()]);
        args.extend(
            ["-p", "carve_report", "-p", "no:cacheprovider", "--continue-on-collection-errors", "--maxfail=0"]
                .map(String::from),
        );
        if mode == Mode::Collect {
            args.push("--collect-only".into());
        }
        args
    }

    /// The process environment: carve's report, root and selection files, the request's
    /// variables, and a `PYTHONPATH` of the plugin, the request's entries and the user's.
    fn set_env(
        &self,
        cmd: &mut Command,
        req: &RunRequest,
        report: &Path,
        select_file: Option<&Path>,
    ) -> Result<(), RunnerError> {
        // One string hash seed for every run (the user's, when set): some test ids depend on
        // it (w3lib's parametrized `…-output185` came and went from run to run).
        if std::env::var_os("PYTHONHASHSEED").is_none() {
            cmd.env("PYTHONHASHSEED", "0");
        }
        cmd.env("PYTHONDONTWRITEBYTECODE", "1")
            .env("CARVE_REPORT", report)
            .env("CARVE_RUN_ROOT", &self.root)
            .env("COVERAGE_FILE", self.dir.join(".coverage"));
        // Hypothesis keeps its examples and a cache of the modules' constants in
        // `.hypothesis/` of the working folder: the tree.
        if std::env::var_os("HYPOTHESIS_STORAGE_DIRECTORY").is_none() {
            cmd.env("HYPOTHESIS_STORAGE_DIRECTORY", self.dir.join(".hypothesis"));
        }
        match select_file {
            Some(p) => cmd.env("CARVE_SELECT", p),
            None => cmd.env_remove("CARVE_SELECT"),
        };
        let mut user_pythonpath = std::env::var_os("PYTHONPATH");
        for (k, v) in &req.env {
            if k == "PYTHONPATH" {
                user_pythonpath = Some(v.into());
            } else {
                cmd.env(k, v);
            }
        }
        let mut pythonpath: Vec<PathBuf> = vec![self.plugin_dir.clone()];
        pythonpath.extend(req.pythonpath_prepend.iter().cloned());
        if let Some(existing) = &user_pythonpath {
            pythonpath.extend(std::env::split_paths(existing).filter(|p| !p.as_os_str().is_empty()));
        }
        let joined = std::env::join_paths(&pythonpath).map_err(|e| RunnerError::Io {
            what: "put on PYTHONPATH (a path contains the separator ':')",
            path: pythonpath.iter().find(|p| p.to_string_lossy().contains(':')).cloned().unwrap_or_default(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e),
        })?;
        cmd.env("PYTHONPATH", joined);
        Ok(())
    }
}

/// Why pytest ended without reporting its collection.
fn startup_failure(
    python: &Path,
    root: &Path,
    command: &str,
    ended: &Ended,
    after: Duration,
    plugin_loaded: bool,
) -> RunnerError {
    let tail = ended.tail();
    if ended.stop != Stop::Exited {
        return RunnerError::CollectionTimeout {
            runner: "pytest",
            root: root.to_path_buf(),
            command: command.into(),
            after,
            tail,
        };
    }
    if tail.contains("No module named pytest") {
        return RunnerError::PytestNotInstalled { python: python.to_path_buf() };
    }
    if !plugin_loaded && ended.exit_code == Some(0) {
        return RunnerError::Unparseable {
            command: command.into(),
            detail:
                "pytest exited without loading carve's report plugin (is this interpreter's pytest older than 3.4?)"
                    .into(),
            tail,
        };
    }
    let hint = if tail.contains("ModuleNotFoundError") || tail.contains("ImportError") {
        "; a module could not be imported: install the project's dependencies (the `setup` command in carve.toml)"
    } else if tail.contains("unrecognized arguments") || tail.contains("usage:") {
        "; pytest rejected its arguments: check `test.args` in carve.toml and the project's addopts"
    } else {
        ""
    };
    RunnerError::Collection {
        runner: "pytest",
        root: root.to_path_buf(),
        command: command.into(),
        exit_code: ended.exit_code,
        hint: hint.into(),
        tail,
    }
}

fn spawn_error(python: &Path, command: String, e: std::io::Error) -> RunnerError {
    if e.kind() == std::io::ErrorKind::NotFound {
        RunnerError::InterpreterNotFound {
            program: python.to_path_buf(),
            hint: "install Python 3, or set `test.python` in carve.toml to the project's interpreter (e.g. .venv/bin/python)"
                .into(),
        }
    } else {
        RunnerError::Spawn { command, source: e }
    }
}

/// One line of the plugin's report.
#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    Header { version: u32 },
    Collecting {},
    CollectError { id: String, message: String },
    Collected { ids: Vec<TestId> },
    Start { id: TestId },
    Result { id: TestId, status: TestStatus, duration: Option<f64>, message: Option<String> },
    Finished {},
}

/// Follows the report file as pytest appends to it.
struct ReportReader {
    report: Appended,
    line: usize,
    header: bool,
    collected: Option<Vec<TestId>>,
    results: BTreeMap<TestId, TestOutcome>,
    running: Option<(TestId, Instant)>,
    finished: bool,
    collection_errors: BTreeMap<String, String>,
    /// The first line that could not be understood.
    problem: Option<String>,
}

impl ReportReader {
    fn new(path: PathBuf) -> ReportReader {
        ReportReader {
            report: Appended::new(path),
            line: 0,
            header: false,
            collected: None,
            results: BTreeMap::new(),
            running: None,
            finished: false,
            collection_errors: BTreeMap::new(),
            problem: None,
        }
    }

    fn handle(&mut self, line: &[u8]) {
        self.line += 1;
        let Some(event) = process::json_line::<Event>(&self.report.path, self.line, line, &mut self.problem) else {
            return;
        };
        match event {
            Event::Header { version } => {
                self.header = true;
                if version != REPORT_VERSION && self.problem.is_none() {
                    self.problem = Some(format!(
                        "{}: report version {version}, expected {REPORT_VERSION} (a stale carve_report plugin on PYTHONPATH?)",
                        self.report.path.display()
                    ));
                }
            }
            Event::Collecting {} => {}
            Event::CollectError { id, message } => {
                self.collection_errors.insert(id, message);
            }
            Event::Collected { ids } => self.collected = Some(ids),
            Event::Start { id } => self.running = Some((id, Instant::now())),
            Event::Result { id, status, duration, message } => {
                if self.running.as_ref().is_some_and(|(r, _)| *r == id) {
                    self.running = None;
                }
                let duration_ms = duration.filter(|d| d.is_finite() && *d >= 0.0).map(|d| (d * 1000.0).round() as u64);
                self.results.insert(id, TestOutcome { status, duration_ms, message });
            }
            Event::Finished {} => self.finished = true,
        }
    }
}

impl Progress for ReportReader {
    fn poll(&mut self) -> bool {
        let lines = self.report.read_lines(&mut self.problem);
        lines.iter().for_each(|line| self.handle(line));
        !lines.is_empty()
    }
}

#[cfg(test)]
mod tests;
