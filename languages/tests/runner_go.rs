//! End to end: the `go test` runner on `fixtures/go/runner-cases` itself (the tree must stay
//! byte-identical) — a selected run reports exactly the requested ids, and SWE-bench's
//! `parse_log_gotest`, fed the runner's own output, yields exactly the harness ids carve
//! records. Skipped with a note when `go` is absent, unless `CI` is set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use carve_languages::go::runner::{harness, suite_args, text_log};
use carve_languages::harness_id;
use carve_languages::runner::{RunRequest, TestCommand, TestStatus};

const M: &str = "example.com/runnercases";

fn have_go() -> bool {
    let ok = Command::new("go").arg("version").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "go is required when CI is set");
        eprintln!("skipped: `go` is not installed");
    }
    ok
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/runner-cases")
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

fn request(scratch: &Path, tests: Option<Vec<String>>, counter: &str) -> RunRequest {
    let command = TestCommand::GoTest { args: vec![], packages: None };
    let mut r = RunRequest::new(fixture(), command, scratch.join("s"));
    r.tests = tests;
    r.timeout = Duration::from_secs(300);
    r.test_timeout = Duration::from_secs(120);
    r.env.push(("CARVE_FLAKY_COUNTER".into(), scratch.join(counter).display().to_string()));
    r
}

#[test]
fn a_selected_run_reports_exactly_the_requested_ids() {
    if !have_go() {
        return;
    }
    let before = snapshot(&fixture());
    let scratch = tempfile::tempdir().unwrap();
    let wanted: Vec<String> = [
        "TestSign/with_space",
        "TestNested/outer",
        "strs/TestAdd",
        "TestSkipped",
        "TestNope",
        "TestSign/nope",
        "ExampleAdd",
    ]
    .iter()
    .map(|t| format!("{M}/{t}"))
    .collect();
    let r = carve_languages::run_tests(&request(scratch.path(), Some(wanted), "flaky")).unwrap();
    let got: Vec<(String, TestStatus)> =
        r.statuses.iter().map(|(k, v)| (k.strip_prefix(M).unwrap().to_string(), v.status)).collect();
    let want: Vec<(String, TestStatus)> = [
        ("/ExampleAdd", TestStatus::Passed),
        ("/TestNested/outer", TestStatus::Passed),
        ("/TestNested/outer/inner", TestStatus::Passed),
        ("/TestNested/outer/skipped", TestStatus::Skipped),
        ("/TestNope", TestStatus::Missing),
        ("/TestSign/nope", TestStatus::Missing),
        ("/TestSign/with_space", TestStatus::Passed),
        ("/TestSkipped", TestStatus::Skipped),
        ("/strs/TestAdd", TestStatus::Passed),
    ]
    .iter()
    .map(|(k, s)| (k.to_string(), *s))
    .collect();
    assert_eq!(got, want);
    assert_eq!(snapshot(&fixture()), before, "the run wrote into the fixture");
}

#[test]
fn swebench_parse_log_gotest_yields_the_recorded_harness_ids() {
    if !have_go() {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let req = request(scratch.path(), None, "flaky-run");
    let result = carve_languages::run_tests(&req).unwrap();
    // The same command, its raw output kept (a fresh flaky counter: the same statuses).
    let out = Command::new("go")
        .args(suite_args(&req.command))
        .current_dir(fixture())
        .env("CARVE_FLAKY_COUNTER", scratch.path().join("flaky-raw"))
        .output()
        .unwrap();
    let parsed = harness::parse_log_gotest(&text_log(&String::from_utf8_lossy(&out.stdout)));
    let mut recorded: BTreeMap<String, &str> = BTreeMap::new();
    for (id, outcome) in &result.statuses {
        let short = harness_id(&req.command, id).unwrap_or_else(|| panic!("no harness id for {id}"));
        let status = match outcome.status {
            TestStatus::Passed => "PASSED",
            TestStatus::Failed => "FAILED",
            TestStatus::Skipped => "SKIPPED",
            other => panic!("{id}: {other}"),
        };
        // The harness drops the package: one name may stand for tests of two packages.
        if let Some(previous) = recorded.insert(short.clone(), status) {
            assert_eq!(previous, status, "{short} differs between packages");
        }
    }
    assert!(recorded.contains_key("TestNested/outer/inner") && recorded.contains_key("TestSign/with_space"));
    assert_eq!(parsed.into_iter().collect::<BTreeMap<_, _>>(), recorded);
    let ids: BTreeSet<&String> = result.statuses.keys().collect();
    assert_eq!(ids.len(), 21);
}

/// The Go fixture of the static issue (`fixtures/go/shapes`): every test passes, ids carry
/// the import path, and the tree is left as it was.
#[test]
fn the_shapes_fixture_passes_through_the_runner() {
    if !have_go() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/shapes");
    let before = snapshot(&root);
    let scratch = tempfile::tempdir().unwrap();
    let detected = carve_languages::detect(&root);
    let command = detected.iter().find(|d| d.language == carve_languages::Language::Go).unwrap().command.clone();
    let r = carve_languages::run_tests(&RunRequest::new(&root, command, scratch.path())).unwrap();
    assert!(r.statuses.len() >= 10, "{:?}", r.statuses.keys());
    for (id, o) in &r.statuses {
        assert!(id.starts_with("example.com/shapes/"), "{id}");
        assert_eq!(o.status, TestStatus::Passed, "{id}: {:?}", o.message);
    }
    assert_eq!(snapshot(&root), before);
}
