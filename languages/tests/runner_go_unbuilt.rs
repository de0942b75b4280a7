//! End to end: `fixtures/go/vet-fails`, whose `example_test.go` fails the `go vet` checks
//! `go test` runs (a non-constant format string, reported since Go 1.24), as a public module
//! did under today's Go. A whole-suite run is an error naming the package, vet's message and
//! the fix; with `-vet=off` the tests run; a selected run reports the tests as `error`.
//! Ignored when `go` is absent (failing in CI).

use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_languages::runner::{RunRequest, TestCommand, TestStatus};

const PACKAGE: &str = "example.com/vetfails/greet";

fn fixture() -> PathBuf {
    carve_testutil::fixture("go/vet-fails")
}

fn request(scratch: &Path, args: &[&str], tests: Option<Vec<String>>) -> RunRequest {
    let command = TestCommand::GoTest { args: args.iter().map(|a| a.to_string()).collect(), packages: None };
    let mut r = RunRequest::new(fixture(), command, scratch.join("s"));
    r.tests = tests;
    r.timeout = Duration::from_secs(300);
    r
}

#[carve_testutil::needs("go")]
fn a_package_failing_vet_is_an_error_naming_it_with_the_fix() {
    let scratch = tempfile::tempdir().unwrap();
    for attempt in [
        carve_languages::run_tests(&request(scratch.path(), &[], None)).err(),
        carve_languages::collect_tests(&request(scratch.path(), &[], None)).err(),
    ] {
        let msg = attempt.expect("a suite whose tests do not build is not an empty success").to_string();
        assert!(msg.contains(&format!("the tests of package {PACKAGE} does not build")), "{msg}");
        assert!(msg.contains("non-constant format string in call to fmt.Printf"), "{msg}");
        assert!(msg.contains("greet/example_test.go:11"), "{msg}");
        assert!(msg.contains(r#"args = ["-vet=off"]"#), "{msg}");
    }

    // The fix the message names works.
    let result = carve_languages::run_tests(&request(scratch.path(), &["-vet=off"], None)).unwrap();
    let statuses: Vec<(&str, TestStatus)> = result.statuses.iter().map(|(id, o)| (id.as_str(), o.status)).collect();
    assert!(statuses.contains(&(&format!("{PACKAGE}/TestHello"), TestStatus::Passed)), "{statuses:?}");

    // A selection (validation's runs) still gets one status per requested test.
    let id = format!("{PACKAGE}/TestHello");
    let result = carve_languages::run_tests(&request(scratch.path(), &[], Some(vec![id.clone()]))).unwrap();
    assert_eq!(result.statuses[&id].status, TestStatus::Error, "{:?}", result.statuses);
}
