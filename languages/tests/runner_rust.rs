//! End to end: the cargo runner on `fixtures/rust/runner-cases` itself (the tree must stay
//! byte-identical: no target/, no Cargo.lock rewrite) — a selected run reports exactly the
//! requested ids, the same test name in two binaries stays two ids, and SWE-bench's
//! `parse_log_cargo`, fed the runner's own output, yields exactly the harness ids carve
//! records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use carve_languages::harness_id;
use carve_languages::runner::{RunRequest, TestCommand, TestStatus};
use carve_languages::rust::runner::{harness, suite_args};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/runner-cases")
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn request(scratch: &Path, tests: Option<&[&str]>, counter: &str) -> RunRequest {
    let command = TestCommand::Cargo { args: vec![], test_args: vec![], workspace: true, nextest: false };
    let mut r = RunRequest::new(fixture(), command, scratch);
    r.tests = tests.map(|t| t.iter().map(|s| s.to_string()).collect());
    r.timeout = Duration::from_secs(600);
    r.test_timeout = Duration::from_secs(300);
    r.env.push(("CARVE_FLAKY_COUNTER".into(), scratch.join(counter).display().to_string()));
    r.env.push(("RUST_BACKTRACE".into(), "0".into()));
    r
}

#[test]
fn a_selected_run_reports_exactly_the_requested_ids() {
    let before = snapshot(&fixture());
    let scratch = tempfile::tempdir().unwrap();
    let wanted = [
        "two::shared_name",
        "runner_cases::tests::nested",
        "runner_cases::doctest::src/lib.rs - add (line 8)",
        "runner_cases::tests::ignored",
        "helper::tests::doubles",
        "runner_cases::tests::nope",
    ];
    let r = carve_languages::run_tests(&request(scratch.path(), Some(&wanted), "flaky")).unwrap();
    // A module stands for the tests in it: it gets no status of its own.
    let got: Vec<(&str, TestStatus)> = r.statuses.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
    assert_eq!(
        got,
        vec![
            ("helper::tests::doubles", TestStatus::Passed),
            ("runner_cases::doctest::src/lib.rs - add (line 8)", TestStatus::Passed),
            ("runner_cases::tests::ignored", TestStatus::Skipped),
            ("runner_cases::tests::nested::deeper::deep", TestStatus::Passed),
            ("runner_cases::tests::nope", TestStatus::Missing),
            ("two::shared_name", TestStatus::Passed),
        ]
    );
    assert_eq!(snapshot(&fixture()), before, "the run wrote into the fixture");
}

#[test]
fn swebench_parse_log_cargo_yields_the_recorded_harness_ids() {
    let scratch = tempfile::tempdir().unwrap();
    let req = request(scratch.path(), None, "flaky-run");
    let result = carve_languages::run_tests(&req).unwrap();
    assert_eq!(result.status("one::shared_name"), TestStatus::Passed);
    assert_eq!(result.status("two::shared_name"), TestStatus::Passed);
    // The same command, its raw output kept (a fresh flaky counter: the same statuses).
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" 2>&1")
        .arg("cargo")
        .args(suite_args(&req.command))
        .current_dir(fixture())
        .env("CARGO_TARGET_DIR", scratch.path().join("raw-target"))
        .env("CARVE_FLAKY_COUNTER", scratch.path().join("flaky-raw"))
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stdout);
    let parsed = harness::parse_log_cargo(&log);
    // `test <name> - should panic ... ok` does not match the parser's pattern.
    let should_panic: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.split_once(" - should panic ... ").map(|(n, _)| n))
        .collect();
    assert_eq!(should_panic, vec!["tests::panics"]);
    let mut recorded: BTreeMap<String, &str> = BTreeMap::new();
    for (id, outcome) in &result.statuses {
        let short = harness_id(&req.command, id);
        let status = match outcome.status {
            TestStatus::Passed => "PASSED",
            TestStatus::Failed => "FAILED",
            // parse_log_cargo records neither ignored tests nor doctests.
            _ => continue,
        };
        let Some(short) = short else {
            assert!(id.contains("::doctest::"), "{id} has no harness id");
            continue;
        };
        if should_panic.contains(&short.as_str()) {
            continue;
        }
        if let Some(previous) = recorded.insert(short.clone(), status) {
            assert_eq!(previous, status, "{short} differs between binaries");
        }
    }
    assert!(recorded.contains_key("shared_name") && recorded.contains_key("tests::sign_cases::wrong"));
    assert_eq!(parsed.into_iter().collect::<BTreeMap<_, _>>(), recorded);
}

/// The Rust fixture of the static issue (`fixtures/rust/geometry`): every test passes,
/// unit tests under the crate name, integration tests under their target, and the tree is
/// left as it was.
#[test]
fn the_geometry_fixture_passes_through_the_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/geometry");
    let before = snapshot(&root);
    let scratch = tempfile::tempdir().unwrap();
    let detected = carve_languages::detect(&root);
    let command = detected.iter().find(|d| d.language == carve_languages::Language::Rust).unwrap().command.clone();
    let r = carve_languages::run_tests(&RunRequest::new(&root, command, scratch.path())).unwrap();
    assert!(r.statuses.len() >= 5, "{:?}", r.statuses.keys());
    assert!(r.statuses.keys().any(|id| id.starts_with("geometry::")));
    assert!(r.statuses.keys().any(|id| id.starts_with("integration::")));
    for (id, o) in &r.statuses {
        assert_eq!(o.status, TestStatus::Passed, "{id}: {:?}", o.message);
    }
    assert_eq!(snapshot(&root), before);
}
