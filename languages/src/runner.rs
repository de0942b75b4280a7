//! Test-runner adapters: run a project's own tests through its real runner and get exactly
//! one status per test id.
//!
//! This module owns the language-neutral side: the request ([`RunRequest`]), the result
//! ([`RunResult`], one [`TestOutcome`] per [`TestId`]), the errors ([`RunnerError`]), the
//! use every runner makes of carve-core's process supervision (own process group, output to
//! files, a watchdog that kills the whole group when the run or one test hangs — see
//! `carve_core::process`) and the rerun
//! logic that keeps one hung or crashing test from costing the rest of the suite (see
//! `attempts`), and the id syntax shared by every runner ([`test_parts`], [`is_ancestor`]).
//! Language-free: each language's adapter (`<lang>/runner.rs`) only builds the command line
//! and reads its runner's progress; `crate::run_tests` reaches it through the registry.
//!
//! Adding a runner: add a [`TestCommand`] variant (and its arms in
//! [`TestCommand::language`] …), implement one *attempt* in the language's `runner.rs`
//! (spawn through `carve_core::process::supervise` with a `Progress` reader for the runner's
//! machine-readable output, return an `attempts::Attempt`), and return it from the
//! language's `LanguageSupport::run_tests`/`collect_tests`. Reruns, missing ids, timeouts
//! and crash handling come for free.
//!
//! The files a runner writes go to a fresh directory under [`RunRequest::scratch`], never
//! into [`RunRequest::root`]; it is removed when the run ends.

pub(crate) mod attempts;
pub mod build;
pub(crate) mod steps;
#[cfg(test)]
pub(crate) mod tests_support;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A test's stable id as its runner names it: pytest `path::Class::test[param]` relative to
/// the tree root, `importpath/TestX/sub`, `target::module::test`, `path > describe > test`
/// (see `docs/trace-format.md` and the design's "Test ids").
pub type TestId = String;

/// What happened to one test: the formats' status (`carve_formats::TestStatus`), which
/// every format that records test runs writes.
pub use carve_formats::TestStatus;

/// One test's outcome. `duration_ms` varies from run to run: keep it out of anything that
/// is hashed or compared for determinism.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub status: TestStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// A short reason, one line: the assertion, the skip reason, the collection error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl TestOutcome {
    pub fn new(status: TestStatus, message: Option<String>) -> TestOutcome {
        TestOutcome { status, duration_ms: None, message }
    }
}

/// What `carve init` found for one language: how to run its tests and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    pub language: crate::Language,
    pub command: TestCommand,
    /// A command that installs the project's dependencies, printed when tests cannot start.
    pub setup: Option<String>,
    /// One line per decision: what was found and what was chosen.
    pub reasons: Vec<String>,
    /// Found by the project's own manifest at the root (`pyproject.toml`, `package.json`,
    /// `go.mod`, `Cargo.toml` …) rather than by loose source files only: a manifest
    /// detection ranks first (a Rust crate with Python scripts is a Rust project).
    pub manifest: bool,
}

/// The package manager that installs the project's dependencies (from its lockfile).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PackageManager {
    #[default]
    Npm,
    Pnpm,
    Yarn,
}

impl PackageManager {
    pub fn name(self) -> &'static str {
        match self {
            PackageManager::Npm => "npm",
            PackageManager::Pnpm => "pnpm",
            PackageManager::Yarn => "yarn",
        }
    }

    /// The command that installs the dependencies of the project at `root` as its lockfile
    /// pins them.
    pub fn install_command(self, root: &Path) -> String {
        match self {
            PackageManager::Npm
                if root.join("package-lock.json").is_file() || root.join("npm-shrinkwrap.json").is_file() =>
            {
                "npm ci".into()
            }
            PackageManager::Npm => "npm install".into(),
            PackageManager::Pnpm => "pnpm install --frozen-lockfile".into(),
            PackageManager::Yarn if root.join(".yarnrc.yml").is_file() => "yarn install --immutable".into(),
            PackageManager::Yarn => "yarn install --frozen-lockfile".into(),
        }
    }
}

/// How to run the project's tests, from `carve.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "runner", rename_all = "lowercase")]
#[non_exhaustive]
pub enum TestCommand {
    /// `python -m pytest <args…>` with the project's own interpreter (its virtualenv's).
    Pytest {
        python: PathBuf,
        /// Extra pytest arguments; the project's `addopts` are kept as well.
        #[serde(default)]
        args: Vec<String>,
    },
    /// `go test -json -count=1 <args…> <packages…>` in the module root; ids
    /// `importpath/TestX/sub`.
    #[serde(rename = "go")]
    GoTest {
        /// Extra `go test` flags (e.g. `-tags=integration`, `-short`).
        #[serde(default)]
        args: Vec<String>,
        /// Package patterns; `None` is `./...`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packages: Option<Vec<String>>,
    },
    /// `cargo test --no-fail-fast <args…> -- <test_args…>` at the workspace (or package)
    /// root; ids `target::module::test`, doctests `crate::doctest::src/lib.rs - f` (rustdoc's name without its line).
    Cargo {
        /// Extra cargo flags (e.g. `--features x`).
        #[serde(default)]
        args: Vec<String>,
        /// Extra flags for every test binary, after `--`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        test_args: Vec<String>,
        /// Test every workspace member (`--workspace`), not only the root package.
        #[serde(default)]
        workspace: bool,
        /// Run with cargo-nextest (its JUnit report; doctests still with `cargo test --doc`).
        #[serde(default)]
        nextest: bool,
    },
    /// `vitest run` from the project's `node_modules`, with carve's reporters; ids
    /// `path > describe > test`.
    Vitest {
        package_manager: PackageManager,
        /// Extra vitest arguments (e.g. `--project unit`).
        #[serde(default)]
        args: Vec<String>,
    },
    /// `jest` from the project's `node_modules`, with carve's reporters; ids
    /// `path > describe > test`.
    Jest {
        package_manager: PackageManager,
        /// Extra jest arguments (e.g. `--config jest.unit.js`).
        #[serde(default)]
        args: Vec<String>,
    },
    /// `node --test` with carve's reporter; ids `path > suite > test`.
    #[serde(rename = "node-test")]
    NodeTest {
        package_manager: PackageManager,
        /// Extra node arguments before the test files (e.g. `--import tsx`).
        #[serde(default)]
        args: Vec<String>,
    },
    /// `mocha` from the project's `node_modules`, run from the root (so it reads its own
    /// `.mocharc.*`, and `test/mocha.opts` before mocha 8), with carve's reporter; ids `path >
    /// suite > test`.
    Mocha {
        package_manager: PackageManager,
        /// Extra mocha arguments (e.g. `--require @babel/register`, `--ui tdd`, spec paths).
        #[serde(default)]
        args: Vec<String>,
    },
}

impl TestCommand {
    /// This command as this machine (or image) can run it: cargo-nextest, which carve uses
    /// where it is installed, is in no official Rust image (nor in an environment's
    /// Dockerfile), so a run that asks for it where `cargo nextest` does not work runs `cargo
    /// test` (the same test ids and statuses; nextest is only faster and runs each test in its
    /// own process).
    pub fn runnable_here(mut self) -> TestCommand {
        if let TestCommand::Cargo { nextest, .. } = &mut self
            && *nextest
        {
            *nextest = std::process::Command::new("cargo")
                .args(["nextest", "--version"])
                .output()
                .is_ok_and(|o| o.status.success());
        }
        self
    }

    pub fn pytest(python: impl Into<PathBuf>, args: Vec<String>) -> TestCommand {
        TestCommand::Pytest { python: python.into(), args }
    }

    /// The language whose runner this is (its implementation runs it).
    pub fn language(&self) -> crate::Language {
        match self {
            TestCommand::Pytest { .. } => crate::Language::Python,
            TestCommand::GoTest { .. } => crate::Language::Go,
            TestCommand::Cargo { .. } => crate::Language::Rust,
            TestCommand::Vitest { .. }
            | TestCommand::Jest { .. }
            | TestCommand::NodeTest { .. }
            | TestCommand::Mocha { .. } => crate::Language::TypeScript,
        }
    }

    /// The interpreter the tests run with, when the command names one (pytest's `python`):
    /// the language's checks of masked files use it too.
    pub fn interpreter(&self) -> Option<&Path> {
        match self {
            TestCommand::Pytest { python, .. } => Some(python),
            TestCommand::GoTest { .. }
            | TestCommand::Cargo { .. }
            | TestCommand::Vitest { .. }
            | TestCommand::Jest { .. }
            | TestCommand::NodeTest { .. }
            | TestCommand::Mocha { .. } => None,
        }
    }

    /// Replace the interpreter (`--python`); `false` when the command takes none.
    pub fn set_interpreter(&mut self, interpreter: &Path) -> bool {
        match self {
            TestCommand::Pytest { python, .. } => {
                *python = interpreter.to_path_buf();
                true
            }
            TestCommand::GoTest { .. }
            | TestCommand::Cargo { .. }
            | TestCommand::Vitest { .. }
            | TestCommand::Jest { .. }
            | TestCommand::NodeTest { .. }
            | TestCommand::Mocha { .. } => false,
        }
    }

    /// The runner's name, for messages.
    pub fn runner_name(&self) -> &'static str {
        match self {
            TestCommand::Pytest { .. } => "pytest",
            TestCommand::GoTest { .. } => "go test",
            TestCommand::Cargo { .. } => "cargo test",
            TestCommand::Vitest { .. } => "vitest",
            TestCommand::Jest { .. } => "jest",
            TestCommand::NodeTest { .. } => "node:test",
            TestCommand::Mocha { .. } => "mocha",
        }
    }
}

/// One run of a project's tests.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The tree to run in (the runner's working directory and root).
    pub root: PathBuf,
    pub command: TestCommand,
    /// The tests to run: ids, or prefixes of ids (a file, a directory, a class). `None`
    /// runs the whole suite. Every requested entry gets a status (see [`RunResult`]).
    pub tests: Option<Vec<TestId>>,
    /// Extra environment for the test process (e.g. the tracing shim's settings).
    pub env: Vec<(String, String)>,
    /// Directories put first on PYTHONPATH (or the language's equivalent).
    pub pythonpath_prepend: Vec<PathBuf>,
    /// Extra runner arguments after the command's own, e.g. `["-p", "carve_shim.plugin"]`.
    pub extra_args: Vec<String>,
    /// Time limit of the whole run, reruns included.
    pub timeout: Duration,
    /// A test that makes no progress for this long is taken to hang and is killed.
    pub test_timeout: Duration,
    /// Where the runner may write its own files (a fresh subdirectory is used and removed
    /// afterwards). Must not be inside `root`.
    pub scratch: PathBuf,
    /// The project's build, run in `root` before the tests (a program and its arguments; empty:
    /// none): the tests load what it makes from the sources (see [`build`]).
    pub build: Vec<String>,
}

impl RunRequest {
    /// A request for the whole suite with no extras, 30 minutes for the run and 5 for a test.
    pub fn new(root: impl Into<PathBuf>, command: TestCommand, scratch: impl Into<PathBuf>) -> RunRequest {
        RunRequest {
            root: root.into(),
            command,
            tests: None,
            env: Vec::new(),
            pythonpath_prepend: Vec::new(),
            extra_args: Vec::new(),
            timeout: Duration::from_secs(30 * 60),
            test_timeout: Duration::from_secs(5 * 60),
            scratch: scratch.into(),
            build: Vec::new(),
        }
    }
}

/// The result of a run: one outcome per test that ran, and one per requested entry that
/// did not (`missing`, or `error` when its file failed to collect).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub statuses: BTreeMap<TestId, TestOutcome>,
    /// Exit code of the last runner process; `None` when it was killed by a signal or no
    /// process was needed.
    pub exit_code: Option<i32>,
    /// The first test that hung and was killed with its process group.
    pub timed_out: Option<TestId>,
    /// A runner process died before finishing its session (not killed by carve).
    pub crashed: bool,
    /// Collectors (files, directories) that failed to collect, with the error's last line.
    #[serde(default)]
    pub collection_errors: BTreeMap<String, String>,
    /// How many runner processes it took (1 unless a test hung or crashed).
    #[serde(default)]
    pub processes: u32,
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// The first runner process's command line, for messages.
    pub command_line: String,
}

impl RunResult {
    /// The status of `id`; `Missing` when the run has no outcome for it.
    pub fn status(&self, id: &str) -> TestStatus {
        self.statuses.get(id).map_or(TestStatus::Missing, |o| o.status)
    }

    /// The ids with the given status, sorted.
    pub fn with_status(&self, status: TestStatus) -> BTreeSet<TestId> {
        self.statuses.iter().filter(|(_, o)| o.status == status).map(|(id, _)| id.clone()).collect()
    }
}

/// The tests a runner would run, without running them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Collection {
    pub ids: BTreeSet<TestId>,
    /// Collectors that failed to collect, with the error's last line.
    pub collection_errors: BTreeMap<String, String>,
    pub command_line: String,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    #[error("the interpreter `{program}` was not found: {hint}")]
    InterpreterNotFound { program: PathBuf, hint: String },
    #[error(
        "pytest is not installed for {}: run `{} -m pip install pytest` or set `test.python` in carve.toml",
        python.display(), python.display()
    )]
    PytestNotInstalled { python: PathBuf },
    #[error("could not start `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("{runner} could not collect the tests of {} (exit code {}){hint}; command: `{command}`\n--- output tail ---\n{tail}",
        root.display(), exit_code.map_or("none".to_string(), |c| c.to_string()))]
    Collection {
        runner: &'static str,
        root: PathBuf,
        command: String,
        exit_code: Option<i32>,
        hint: String,
        tail: String,
    },
    #[error("{runner} did not finish collecting the tests of {} within {}s; command: `{command}`\n--- output tail ---\n{tail}",
        root.display(), after.as_secs())]
    CollectionTimeout { runner: &'static str, root: PathBuf, command: String, after: Duration, tail: String },
    #[error("could not understand the output of `{command}`: {detail}\n--- output tail ---\n{tail}")]
    Unparseable { command: String, detail: String, tail: String },
    #[error("the scratch directory {} is inside the tree {}; pick one outside it (nothing may be written into the tree)",
        scratch.display(), root.display())]
    ScratchInsideRoot { scratch: PathBuf, root: PathBuf },
    #[error("the tree to run {} does not exist or is not a directory", root.display())]
    RootNotFound { root: PathBuf },
    #[error("could not {what} {}: {source}", path.display())]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("`{program}` was not found: {hint}")]
    ToolNotFound { program: String, hint: String },
    #[error("{runner} cannot run the tests of {}: dependencies are missing; run `{setup}` in it first (command: `{command}`)\n--- output tail ---\n{tail}",
        root.display())]
    MissingDependencies { runner: &'static str, root: PathBuf, setup: String, command: String, tail: String },
}

impl RunnerError {
    pub(crate) fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> RunnerError + 'a {
        move |source| RunnerError::Io { what, path: path.to_path_buf(), source }
    }
}

/// A test id's file (the part before its first `::` or ` > `) and the names below it:
/// `path::Class::test[p]` → (`path`, [`Class`, `test[p]`]), `path > group > case` →
/// (`path`, [`group`, `case`]). An id without either separator (a Go id) is all file, no names.
pub fn test_parts(id: &str) -> (&str, Vec<&str>) {
    let first = [id.find("::").map(|i| (i, "::")), id.find(" > ").map(|i| (i, " > "))].into_iter().flatten().min();
    match first {
        Some((i, sep)) => (&id[..i], id[i + sep.len()..].split(sep).collect()),
        None => (id, Vec::new()),
    }
}

/// The repository-relative file of a test id (see [`test_parts`]).
pub fn test_file(id: &str) -> &str {
    test_parts(id).0
}

/// Is `ancestor` a prefix of `id` in the id hierarchy (a file, directory, class or describe
/// block containing it, or the test whose parametrized cases it names)? Separators: `::`
/// (pytest, cargo), `/` (paths, Go subtests), ` > ` (vitest/jest), `[` (pytest parameters).
pub fn is_ancestor(ancestor: &str, id: &str) -> bool {
    !ancestor.is_empty()
        && id.strip_prefix(ancestor).is_some_and(|rest| {
            rest.starts_with("::")
                || rest.starts_with('/')
                || rest.starts_with(" > ")
                || (rest.starts_with('[') && !ancestor.contains('['))
                || ancestor.ends_with('/')
        })
}

/// Known ids that look like `wanted`, best first (at most five), for "no such test" errors.
/// The test's own name weighs most; the file and class it lives in count for the rest, so a
/// typo, a test named without its file, or a test that moved to another class all match.
pub fn close_matches(wanted: &str, known: &BTreeSet<TestId>) -> Vec<TestId> {
    const LIMIT: usize = 5;
    const THRESHOLD: f64 = 0.75;
    let (wanted_parent, wanted_leaf) = split_leaf(wanted);
    let mut scored: Vec<(f64, &TestId)> = known
        .iter()
        .filter_map(|id| {
            let (parent, leaf) = split_leaf(id);
            let leaf_score = strsim::normalized_damerau_levenshtein(wanted_leaf, leaf);
            let mut score = match wanted_parent {
                None => leaf_score,
                Some(wp) => 0.7 * leaf_score + 0.3 * strsim::normalized_levenshtein(wp, parent.unwrap_or("")),
            };
            if is_ancestor(wanted, id) || is_ancestor(id, wanted) {
                score = score.max(0.85);
            }
            (score >= THRESHOLD).then_some((score, id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(LIMIT).map(|(_, id)| id.clone()).collect()
}

/// An id's container (file, class, describe block) and its last component, the test's name.
fn split_leaf(id: &str) -> (Option<&str>, &str) {
    [id.rfind("::").map(|i| (i, 2)), id.rfind(" > ").map(|i| (i, 3))]
        .into_iter()
        .flatten()
        .max()
        .map_or((None, id), |(i, sep)| (Some(&id[..i]), &id[i + sep..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(ids: &[&str]) -> BTreeSet<TestId> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn close_matches_finds_typos_and_other_classes() {
        let k = known(&[
            "tests/test_core.py::test_parse",
            "tests/test_core.py::TestParser::test_parse_empty",
            "tests/test_core.py::test_render",
            "tests/test_cli.py::test_main",
            "tests/test_other.py::TestX::test_parse",
        ]);
        assert_eq!(
            close_matches("tests/test_core.py::test_prase", &k),
            vec!["tests/test_core.py::test_parse".to_string(), "tests/test_other.py::TestX::test_parse".to_string()]
        );
        // The name alone, without its file.
        let m = close_matches("test_parse", &k);
        assert_eq!(m.first().map(String::as_str), Some("tests/test_core.py::test_parse"), "{m:?}");
        assert!(m.contains(&"tests/test_other.py::TestX::test_parse".to_string()), "{m:?}");
        assert!(!m.contains(&"tests/test_cli.py::test_main".to_string()), "{m:?}");
    }

    #[test]
    fn close_matches_is_empty_for_unrelated_and_bounded() {
        let k = known(&["tests/test_core.py::test_parse"]);
        assert!(close_matches("zzz/qqq.rs::completely_else_entirely", &k).is_empty());
        let many: BTreeSet<TestId> = (0..20).map(|i| format!("t.py::test_case_{i:02}")).collect();
        let m = close_matches("t.py::test_case_1", &many);
        assert_eq!(m.len(), 5);
        assert_eq!(m[0], "t.py::test_case_01");
        assert!(close_matches("x", &BTreeSet::new()).is_empty());
    }

    #[test]
    fn ancestors_follow_the_id_hierarchy() {
        assert!(is_ancestor("tests/a.py", "tests/a.py::T::t[1]"));
        assert!(is_ancestor("tests/a.py::T", "tests/a.py::T::t[1]"));
        assert!(is_ancestor("tests", "tests/a.py::t"));
        assert!(is_ancestor("src/a.test.ts > group", "src/a.test.ts > group > case"));
        assert!(is_ancestor("tests/a.py::t", "tests/a.py::t[1]"));
        assert!(!is_ancestor("tests/a.py::t", "tests/a.py::t2"));
        assert!(!is_ancestor("tests/a", "tests/a.py::t"));
        assert!(!is_ancestor("", "tests/a.py::t"));
        assert!(!is_ancestor("tests/a.py::t", "tests/a.py::t"));
    }

    #[test]
    fn statuses_serialize_lowercase() {
        let o = TestOutcome { status: TestStatus::Timeout, duration_ms: None, message: None };
        assert_eq!(serde_json::to_string(&o).unwrap(), r#"{"status":"timeout"}"#);
        let back: TestStatus = serde_json::from_str("\"missing\"").unwrap();
        assert_eq!(back, TestStatus::Missing);
        let cmd = TestCommand::pytest("python3", vec!["-q".into()]);
        assert_eq!(serde_json::to_string(&cmd).unwrap(), r#"{"runner":"pytest","python":"python3","args":["-q"]}"#);
    }
}
