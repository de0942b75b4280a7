//! End to end: the pytest runner on `fixtures/python/runner-cases` itself (the tree must
//! stay byte-identical) — a selected run reports exactly the requested ids, two whole runs
//! see the flaky test flip — and SWE-bench's `parse_log_pytest`, fed a real `pytest -rA`
//! log of the fixture (run in a temporary copy), yields exactly the harness ids of the
//! tests carve records. Skipped with a note when python3 or pytest is absent, unless `CI`
//! is set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use carve_languages::harness_id;
use carve_languages::python::runner::harness::{self, parse_log_pytest};
use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};

const CASES: &str = "tests/test_cases.py";
const FLAKY: &str = "tests/sub/test_flaky.py::test_flaky";

fn have_pytest() -> bool {
    let ok = Command::new("python3").args(["-c", "import pytest"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "python3 with pytest is required when CI is set");
        eprintln!("skipped: `python3 -m pytest` is not available");
    }
    ok
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/python/runner-cases")
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn command() -> TestCommand {
    TestCommand::pytest("python3", vec![])
}

/// A request on the fixture itself, with the flaky counter in `counters`.
fn request(scratch: &Path, counters: &Path, tests: Option<Vec<String>>) -> RunRequest {
    let mut r = RunRequest::new(fixture(), command(), scratch.join("s"));
    r.tests = tests;
    r.timeout = Duration::from_secs(300);
    r.test_timeout = Duration::from_secs(120);
    r.env.push(("CARVE_FLAKY_DIR".into(), counters.display().to_string()));
    r
}

fn id(name: &str) -> String {
    format!("{CASES}::{name}")
}

/// The whole suite's statuses when the flaky test has status `flaky`.
fn expected(flaky: TestStatus) -> BTreeMap<String, TestStatus> {
    use TestStatus::*;
    let mut m: BTreeMap<String, TestStatus> = [
        ("test_passes", Passed),
        ("test_fails", Failed),
        ("test_fixture_errors", Error),
        ("test_skipped", Skipped),
        ("test_skips_at_run_time", Skipped),
        ("test_expected_failure", Skipped),
        ("test_sign[with space]", Passed),
        ("test_sign[a[0]]", Passed),
        ("test_sign[neg-1]", Passed),
        ("test_sign[a - b]", Passed),
        ("test_sign[2-1]", Passed),
        ("test_add_param[1-1-2]", Passed),
        ("test_add_param[off - by one]", Failed),
        ("test_same_name", Passed),
        ("TestCalc::test_add", Passed),
        ("TestCalc::TestNested::test_inner", Passed),
        ("TestCalc::TestNested::TestDeeper::test_innermost", Passed),
    ]
    .into_iter()
    .map(|(n, s)| (id(n), s))
    .collect();
    m.insert("tests/sub/test_flaky.py::test_same_name".into(), Passed);
    m.insert(FLAKY.into(), flaky);
    m
}

fn statuses(r: &RunResult) -> BTreeMap<String, TestStatus> {
    r.statuses.iter().map(|(k, v)| (k.clone(), v.status)).collect()
}

#[test]
fn two_whole_runs_flip_the_flaky_test_and_leave_the_tree_untouched() {
    if !have_pytest() {
        return;
    }
    let before = snapshot(&fixture());
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let first = carve_languages::run_tests(&request(scratch.path(), counters.path(), None)).unwrap();
    let second = carve_languages::run_tests(&request(scratch.path(), counters.path(), None)).unwrap();
    assert_eq!(statuses(&first), expected(TestStatus::Passed), "{}", first.stdout_tail);
    assert_eq!(statuses(&second), expected(TestStatus::Failed), "{}", second.stdout_tail);
    // What `carve baseline` marks flaky: the ids whose status differs between the runs.
    let differing: Vec<&String> = first.statuses.keys().filter(|k| first.status(k) != second.status(k)).collect();
    assert_eq!(differing, vec![FLAKY]);
    assert_eq!(snapshot(&fixture()), before, "the run wrote into the fixture");
}

#[test]
fn a_selected_run_reports_exactly_the_requested_ids() {
    if !have_pytest() {
        return;
    }
    let before = snapshot(&fixture());
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let wanted: Vec<String> = vec![
        id("test_sign[with space]"),
        id("test_sign[a[0]]"),
        id("test_add_param[off - by one]"),
        id("test_fixture_errors"),
        id("test_expected_failure"),
        id("TestCalc::TestNested::TestDeeper::test_innermost"),
        "tests/sub/test_flaky.py::test_same_name".into(),
        id("test_does_not_exist"),
    ];
    let r = carve_languages::run_tests(&request(scratch.path(), counters.path(), Some(wanted.clone()))).unwrap();
    let got: BTreeSet<&String> = r.statuses.keys().collect();
    assert_eq!(got, wanted.iter().collect::<BTreeSet<_>>(), "{}", r.stdout_tail);
    let all = expected(TestStatus::Passed);
    for w in &wanted[..wanted.len() - 1] {
        assert_eq!(r.status(w), all[w], "{w}");
    }
    assert_eq!(r.status(&id("test_does_not_exist")), TestStatus::Missing);
    // Only the selection ran: the flaky test's counter was never touched.
    assert_eq!(std::fs::read_dir(counters.path()).unwrap().count(), 0);
    assert_eq!(snapshot(&fixture()), before, "the run wrote into the fixture");
}

/// `python3 -m pytest <flags>` in a fresh copy of the fixture; its stdout.
fn pytest_log(flags: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("runner-cases");
    copy(&fixture(), &tree);
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
    String::from_utf8(out.stdout).unwrap()
}

/// The status SWE-bench's parser gives a test carve recorded with `status`, or `None` when
/// the log names it only by location (a plain skip in the `-rA` summary).
fn harness_status(id: &str, status: TestStatus, verbose: bool) -> Option<&'static str> {
    match status {
        TestStatus::Passed => Some(harness::PASSED),
        TestStatus::Failed => Some(harness::FAILED),
        TestStatus::Error => Some(harness::ERROR),
        TestStatus::Skipped if id.ends_with("test_expected_failure") => Some(harness::XFAIL),
        TestStatus::Skipped => verbose.then_some(harness::SKIPPED),
        other => panic!("{id}: unexpected status {other}"),
    }
}

fn round_trip(flags: &[&str], verbose: bool) {
    if !have_pytest() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let recorded = carve_languages::run_tests(&request(scratch.path(), counters.path(), None)).unwrap();
    assert_eq!(statuses(&recorded), expected(TestStatus::Passed));

    let log = pytest_log(flags);
    let parsed = parse_log_pytest(&log);
    let mut want: BTreeMap<String, &str> = BTreeMap::new();
    for (test, outcome) in &recorded.statuses {
        let short = harness_id(&command(), test).unwrap_or_else(|| panic!("{test}: no harness id"));
        if let Some(status) = harness_status(test, outcome.status, verbose) {
            want.insert(short, status);
        }
    }
    assert_eq!(parsed, want, "log:\n{log}");
    // The ids with spaces are the ones the harness cuts.
    assert!(parsed.contains_key(&id("test_sign[with")));
    assert!(parsed.contains_key(&id("test_add_param[off")));
}

#[test]
fn swebench_parser_on_a_real_ra_log_yields_the_harness_ids() {
    round_trip(&["-rA", "--tb=no", "-p", "no:cacheprovider"], false);
}

#[test]
fn swebench_parser_on_a_real_verbose_log_also_sees_the_skips() {
    round_trip(&["-rA", "-v", "--tb=no", "-p", "no:cacheprovider"], true);
}
