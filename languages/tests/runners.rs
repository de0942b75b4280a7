//! End to end, one table for every runner with a `runner-cases` fixture (pytest, `go test`,
//! `cargo test`; the TypeScript runners have `typescript_runner.rs`). Each case is checked
//! for the same four properties, on the fixture itself (the tree must stay byte-identical):
//!
//! - a whole run reports every test with its status, and a second whole run differs from
//!   the first in exactly the fixture's flaky test (what `carve baseline` marks flaky);
//! - a selected run reports exactly the requested ids (a group stands for the tests in it)
//!   and runs nothing else;
//! - SWE-bench's log parser for the runner, fed the runner's own raw output, yields exactly
//!   the harness ids carve records (`harness_id`), with the statuses carve records;
//! - the language's main fixture passes through the runner.
//!
//! A case's tool is required by `#[needs]`: missing, its tests are ignored (failing in CI).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use TestStatus::{Error, Failed, Missing, Passed, Skipped};
use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};
use carve_languages::{go, harness_id, python, rust};
use carve_testutil::{fixture, fixture_copy, needs, tree_snapshot};

/// One runner and its fixture.
struct Case {
    fixture: &'static str,
    command: fn() -> TestCommand,
    /// The environment variable naming where the flaky test keeps its counter, and whether
    /// it names a directory (else the counter file itself).
    counter: (&'static str, bool),
    /// Prefix of every id in the tables below (left out of them).
    prefix: &'static str,
    flaky: &'static str,
    /// A whole run's statuses when the flaky test passes.
    suite: &'static [(&'static str, TestStatus)],
    requested: &'static [&'static str],
    /// What the selection of `requested` reports.
    reported: &'static [(&'static str, TestStatus)],
    /// Raw logs of the suite as the harness would see them (`scratch` holds counters and
    /// build outputs), each with whether it is verbose.
    raw_logs: fn(&Case, &RunRequest, &Path) -> Vec<(String, bool)>,
    parse_log: fn(&str) -> BTreeMap<String, &'static str>,
    /// The harness's status for a recorded test, `None` where its log does not list it.
    harness_status: fn(id: &str, status: TestStatus, verbose: bool) -> Option<&'static str>,
    /// The language's main fixture: every id of a run starts with one of `main_prefixes`,
    /// and each prefix starts at least one id.
    main: &'static str,
    main_prefixes: &'static [&'static str],
}

impl Case {
    fn id(&self, short: &str) -> String {
        format!("{}{short}", self.prefix)
    }

    fn table(&self, rows: &[(&str, TestStatus)]) -> BTreeMap<String, TestStatus> {
        rows.iter().map(|(id, s)| (self.id(id), *s)).collect()
    }

    fn request(&self, counters: &Path, tests: Option<Vec<String>>) -> RunRequest {
        let mut r = RunRequest::new(fixture(self.fixture), (self.command)(), counters.join("scratch"));
        r.tests = tests;
        r.timeout = Duration::from_secs(600);
        r.test_timeout = Duration::from_secs(300);
        r.env.push((self.counter.0.into(), self.counter_path(counters).display().to_string()));
        r.env.push(("RUST_BACKTRACE".into(), "0".into()));
        r
    }

    /// Where the flaky test counts in `counters` (a directory case's directory is made).
    fn counter_path(&self, counters: &Path) -> std::path::PathBuf {
        if self.counter.1 {
            let dir = counters.join("flaky");
            std::fs::create_dir_all(&dir).unwrap();
            dir
        } else {
            counters.join("flaky-counter")
        }
    }

    /// Whether the flaky test never counted in `counters`.
    fn counter_untouched(&self, counters: &Path) -> bool {
        let path = self.counter_path(counters);
        if self.counter.1 { std::fs::read_dir(path).unwrap().next().is_none() } else { !path.exists() }
    }
}

fn statuses(r: &RunResult) -> BTreeMap<String, TestStatus> {
    r.statuses.iter().map(|(k, v)| (k.clone(), v.status)).collect()
}

fn run(req: &RunRequest) -> RunResult {
    carve_languages::run_tests(req).unwrap_or_else(|e| panic!("{}: {e}", req.root.display()))
}

fn whole_runs_flip_only_the_flaky_test(case: &Case) {
    let before = tree_snapshot(&fixture(case.fixture));
    let counters = tempfile::tempdir().unwrap();
    let first = run(&case.request(counters.path(), None));
    let second = run(&case.request(counters.path(), None));
    let mut flipped = case.table(case.suite);
    assert_eq!(statuses(&first), flipped, "{}", first.stdout_tail);
    flipped.insert(case.id(case.flaky), Failed);
    assert_eq!(statuses(&second), flipped, "{}", second.stdout_tail);
    let differing: Vec<&String> = first.statuses.keys().filter(|k| first.status(k) != second.status(k)).collect();
    assert_eq!(differing, vec![&case.id(case.flaky)]);
    assert_eq!(tree_snapshot(&fixture(case.fixture)), before, "the runs wrote into the fixture");
}

fn a_selection_reports_exactly_the_requested_ids(case: &Case) {
    let before = tree_snapshot(&fixture(case.fixture));
    let counters = tempfile::tempdir().unwrap();
    let wanted: Vec<String> = case.requested.iter().map(|t| case.id(t)).collect();
    let r = run(&case.request(counters.path(), Some(wanted)));
    assert_eq!(statuses(&r), case.table(case.reported), "{}", r.stdout_tail);
    // Only the selection ran: the flaky test never touched its counter.
    assert!(case.counter_untouched(counters.path()), "the flaky test ran");
    assert_eq!(tree_snapshot(&fixture(case.fixture)), before, "the run wrote into the fixture");
}

fn the_harness_parser_yields_the_recorded_ids(case: &Case) {
    let counters = tempfile::tempdir().unwrap();
    let req = case.request(counters.path(), None);
    let recorded = run(&req);
    assert_eq!(statuses(&recorded), case.table(case.suite), "{}", recorded.stdout_tail);
    let raw = tempfile::tempdir().unwrap();
    for (log, verbose) in (case.raw_logs)(case, &req, raw.path()) {
        let mut want: BTreeMap<String, &str> = BTreeMap::new();
        for (id, outcome) in &recorded.statuses {
            let Some(status) = (case.harness_status)(id, outcome.status, verbose) else { continue };
            let short = harness_id(&req.command, id).unwrap_or_else(|| panic!("{id}: no harness id"));
            // A harness id may stand for tests of two packages or binaries: they must agree.
            if let Some(previous) = want.insert(short.clone(), status) {
                assert_eq!(previous, status, "{short} differs between the tests it names");
            }
        }
        assert_eq!((case.parse_log)(&log), want, "log:\n{log}");
    }
}

fn the_main_fixture_passes(case: &Case) {
    let root = fixture(case.main);
    let before = tree_snapshot(&root);
    let scratch = tempfile::tempdir().unwrap();
    let detected = carve_languages::detect(&root);
    let command = detected.first().unwrap_or_else(|| panic!("no runner detected in {}", root.display()));
    let r = run(&RunRequest::new(&root, command.command.clone(), scratch.path()));
    assert!(r.statuses.len() >= 5, "{:?}", r.statuses.keys());
    for (id, o) in &r.statuses {
        assert!(case.main_prefixes.iter().any(|p| id.starts_with(p)), "{id}");
        assert_eq!(o.status, Passed, "{id}: {:?}", o.message);
    }
    for p in case.main_prefixes {
        assert!(r.statuses.keys().any(|id| id.starts_with(p)), "no test id starts with {p}");
    }
    assert_eq!(tree_snapshot(&root), before, "the run wrote into the fixture");
}

/// The four properties as tests of one case, each behind the case's tool.
macro_rules! runner_case {
    ($name:ident, $case:expr, $tool:literal) => {
        mod $name {
            use super::*;
            #[needs($tool)]
            fn whole_runs_flip_only_the_flaky_test() {
                super::whole_runs_flip_only_the_flaky_test(&$case);
            }
            #[needs($tool)]
            fn a_selection_reports_exactly_the_requested_ids() {
                super::a_selection_reports_exactly_the_requested_ids(&$case);
            }
            #[needs($tool)]
            fn the_harness_parser_yields_the_recorded_ids() {
                super::the_harness_parser_yields_the_recorded_ids(&$case);
            }
            #[needs($tool)]
            fn the_main_fixture_passes() {
                super::the_main_fixture_passes(&$case);
            }
        }
    };
}

runner_case!(pytest, PYTEST, "pytest");
runner_case!(go_test, GO_TEST, "go");
runner_case!(cargo_test, CARGO_TEST, "cargo");

const PYTEST: Case = Case {
    fixture: "python/runner-cases",
    command: || TestCommand::pytest("python3", vec![]),
    counter: ("CARVE_FLAKY_DIR", true),
    prefix: "tests/",
    flaky: "sub/test_flaky.py::test_flaky",
    suite: &[
        ("test_cases.py::test_passes", Passed),
        ("test_cases.py::test_fails", Failed),
        ("test_cases.py::test_fixture_errors", Error),
        ("test_cases.py::test_skipped", Skipped),
        ("test_cases.py::test_skips_at_run_time", Skipped),
        ("test_cases.py::test_expected_failure", Skipped),
        ("test_cases.py::test_sign[with space]", Passed),
        ("test_cases.py::test_sign[a[0]]", Passed),
        ("test_cases.py::test_sign[neg-1]", Passed),
        ("test_cases.py::test_sign[a - b]", Passed),
        ("test_cases.py::test_sign[2-1]", Passed),
        ("test_cases.py::test_add_param[1-1-2]", Passed),
        ("test_cases.py::test_add_param[off - by one]", Failed),
        ("test_cases.py::test_same_name", Passed),
        ("test_cases.py::TestCalc::test_add", Passed),
        ("test_cases.py::TestCalc::TestNested::test_inner", Passed),
        ("test_cases.py::TestCalc::TestNested::TestDeeper::test_innermost", Passed),
        ("sub/test_flaky.py::test_same_name", Passed),
        ("sub/test_flaky.py::test_flaky", Passed),
    ],
    requested: &[
        "test_cases.py::test_sign[with space]",
        "test_cases.py::test_sign[a[0]]",
        "test_cases.py::test_add_param[off - by one]",
        "test_cases.py::test_fixture_errors",
        "test_cases.py::test_expected_failure",
        "test_cases.py::TestCalc::TestNested::TestDeeper::test_innermost",
        "sub/test_flaky.py::test_same_name",
        "test_cases.py::test_does_not_exist",
    ],
    reported: &[
        ("test_cases.py::test_sign[with space]", Passed),
        ("test_cases.py::test_sign[a[0]]", Passed),
        ("test_cases.py::test_add_param[off - by one]", Failed),
        ("test_cases.py::test_fixture_errors", Error),
        ("test_cases.py::test_expected_failure", Skipped),
        ("test_cases.py::TestCalc::TestNested::TestDeeper::test_innermost", Passed),
        ("sub/test_flaky.py::test_same_name", Passed),
        ("test_cases.py::test_does_not_exist", Missing),
    ],
    // `-rA` alone names plain skips only by location; `-v` lists them too.
    raw_logs: |case, _req, _scratch| {
        [
            (&["-rA", "--tb=no", "-p", "no:cacheprovider"][..], false),
            (&["-rA", "-v", "--tb=no", "-p", "no:cacheprovider"][..], true),
        ]
        .into_iter()
        .map(|(flags, verbose)| {
            let (tmp, tree) = fixture_copy(case.fixture);
            let out = Command::new("python3")
                .args(["-m", "pytest"])
                .args(flags)
                .current_dir(&tree)
                .env("CARVE_FLAKY_DIR", tmp.path())
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .output()
                .unwrap();
            // Exit code 1: some tests fail on purpose.
            assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
            (String::from_utf8(out.stdout).unwrap(), verbose)
        })
        .collect()
    },
    parse_log: python::runner::harness::parse_log_pytest,
    harness_status: |id, status, verbose| {
        use python::runner::harness as h;
        match status {
            Passed => Some(h::PASSED),
            Failed => Some(h::FAILED),
            Error => Some(h::ERROR),
            Skipped if id.ends_with("test_expected_failure") => Some(h::XFAIL),
            Skipped => verbose.then_some(h::SKIPPED),
            other => panic!("{id}: unexpected status {other}"),
        }
    },
    main: "python/inventory",
    main_prefixes: &["tests/"],
};

const GO: &str = "example.com/runnercases/";

const GO_TEST: Case = Case {
    fixture: "go/runner-cases",
    command: || TestCommand::GoTest { args: vec![], packages: None },
    counter: ("CARVE_FLAKY_COUNTER", false),
    prefix: GO,
    flaky: "TestFlaky",
    suite: &[
        ("ExampleAdd", Passed),
        ("TestAdd", Passed),
        ("TestFails", Failed),
        ("TestFlaky", Passed),
        ("TestHang", Skipped),
        ("TestNested", Passed),
        ("TestNested/dup", Passed),
        ("TestNested/dup#01", Passed),
        ("TestNested/outer", Passed),
        ("TestNested/outer/inner", Passed),
        ("TestNested/outer/skipped", Skipped),
        ("TestSign", Failed),
        ("TestSign/negative", Passed),
        ("TestSign/positive", Passed),
        ("TestSign/with_space", Passed),
        ("TestSign/wrong", Failed),
        ("TestSkipped", Skipped),
        ("strs/TestAdd", Passed),
        ("strs/TestShout", Passed),
        ("strs/TestShout/x", Passed),
        ("strs/TestShout/yz", Passed),
    ],
    requested: &[
        "TestSign/with_space",
        "TestNested/outer",
        "strs/TestAdd",
        "TestSkipped",
        "TestNope",
        "TestSign/nope",
        "ExampleAdd",
    ],
    reported: &[
        ("ExampleAdd", Passed),
        ("TestNested/outer", Passed),
        ("TestNested/outer/inner", Passed),
        ("TestNested/outer/skipped", Skipped),
        ("TestNope", Missing),
        ("TestSign/nope", Missing),
        ("TestSign/with_space", Passed),
        ("TestSkipped", Skipped),
        ("strs/TestAdd", Passed),
    ],
    raw_logs: |case, req, scratch| {
        let out = Command::new("go")
            .args(go::runner::suite_args(&req.command))
            .current_dir(fixture(case.fixture))
            .env("CARVE_FLAKY_COUNTER", scratch.join("flaky-raw"))
            .output()
            .unwrap();
        vec![(go::runner::text_log(&String::from_utf8_lossy(&out.stdout)), false)]
    },
    parse_log: go::runner::harness::parse_log_gotest,
    harness_status: |id, status, _| match status {
        Passed => Some(go::runner::harness::PASSED),
        Failed => Some(go::runner::harness::FAILED),
        Skipped => Some(go::runner::harness::SKIPPED),
        other => panic!("{id}: unexpected status {other}"),
    },
    main: "go/shapes",
    main_prefixes: &["example.com/shapes/"],
};

const CARGO_TEST: Case = Case {
    fixture: "rust/runner-cases",
    command: || TestCommand::Cargo { args: vec![], test_args: vec![], workspace: true, nextest: false },
    counter: ("CARVE_FLAKY_COUNTER", false),
    prefix: "",
    flaky: "runner_cases::tests::flaky",
    suite: &[
        ("helper::tests::doubles", Passed),
        ("one::only_in_one", Passed),
        ("one::shared_name", Passed),
        ("runner_cases::doctest::src/lib.rs - add", Passed),
        ("runner_cases::doctest::src/lib.rs - sign", Passed),
        ("runner_cases::tests::adds", Passed),
        ("runner_cases::tests::fails", Failed),
        ("runner_cases::tests::flaky", Passed),
        ("runner_cases::tests::hangs", Passed),
        ("runner_cases::tests::ignored", Skipped),
        ("runner_cases::tests::nested::deeper::deep", Passed),
        ("runner_cases::tests::panics", Passed),
        ("runner_cases::tests::sign_cases::negative", Passed),
        ("runner_cases::tests::sign_cases::positive", Passed),
        ("runner_cases::tests::sign_cases::wrong", Failed),
        ("runner_cases::tests::sign_cases::zero", Passed),
        ("two::group::fails_in_two", Failed),
        ("two::shared_name", Passed),
    ],
    requested: &[
        "two::shared_name",
        "runner_cases::tests::nested",
        "runner_cases::doctest::src/lib.rs - add",
        "runner_cases::tests::ignored",
        "helper::tests::doubles",
        "runner_cases::tests::nope",
    ],
    // A module stands for the tests in it: it gets no status of its own.
    reported: &[
        ("helper::tests::doubles", Passed),
        ("runner_cases::doctest::src/lib.rs - add", Passed),
        ("runner_cases::tests::ignored", Skipped),
        ("runner_cases::tests::nested::deeper::deep", Passed),
        ("runner_cases::tests::nope", Missing),
        ("two::shared_name", Passed),
    ],
    raw_logs: |case, req, scratch| {
        let out = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 2>&1")
            .arg("cargo")
            .args(rust::runner::suite_args(&req.command))
            .current_dir(fixture(case.fixture))
            .env("CARGO_TARGET_DIR", scratch.join("raw-target"))
            .env("CARVE_FLAKY_COUNTER", scratch.join("flaky-raw"))
            .env("RUST_BACKTRACE", "0")
            .output()
            .unwrap();
        vec![(String::from_utf8_lossy(&out.stdout).into_owned(), false)]
    },
    parse_log: rust::runner::harness::parse_log_cargo,
    harness_status: |id, status, _| match status {
        // parse_log_cargo's pattern does not match `test <name> - should panic ... ok`, and
        // it records neither ignored tests nor doctests (which have no harness id).
        _ if id == "runner_cases::tests::panics" || id.contains("::doctest::") => None,
        Passed => Some(rust::runner::harness::PASSED),
        Failed => Some(rust::runner::harness::FAILED),
        Skipped => None,
        other => panic!("{id}: unexpected status {other}"),
    },
    main: "rust/geometry",
    main_prefixes: &["geometry::", "integration::", "catalog::"],
};
