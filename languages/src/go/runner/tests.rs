//! The `go test` runner on copies of `fixtures/go/runner-cases` (and variants made here).
//! Ignored (with the reason) when `go` is absent, unless `CI` is set.

use super::*;
use std::path::PathBuf;
use std::time::Duration;

fn fixture() -> PathBuf {
    carve_testutil::fixture("go/runner-cases")
}

/// A copy of the fixture (so variants can break it), a scratch dir and a flaky counter.
struct Copy {
    root: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

impl Copy {
    fn new() -> Copy {
        let root = tempfile::tempdir().unwrap();
        carve_testutil::copy_dir(&fixture(), root.path());
        Copy { root, scratch: tempfile::tempdir().unwrap() }
    }

    fn request(&self, tests: Option<&[&str]>) -> RunRequest {
        let command = TestCommand::GoTest { args: vec![], packages: None };
        let mut r = RunRequest::new(self.root.path(), command, self.scratch.path().join("s"));
        r.tests = tests.map(|t| t.iter().map(|s| s.to_string()).collect());
        r.timeout = Duration::from_secs(300);
        r.test_timeout = Duration::from_secs(120);
        r.env.push(("CARVE_FLAKY_COUNTER".into(), self.scratch.path().join("flaky").display().to_string()));
        r
    }
}

fn statuses(r: &RunResult) -> Vec<(&str, TestStatus)> {
    r.statuses.iter().map(|(k, v)| (k.as_str(), v.status)).collect()
}

const M: &str = "example.com/runnercases";

#[test]
fn patterns_are_anchored_escaped_and_per_level() {
    assert_eq!(run_pattern(&["TestA", "TestB"]).as_deref(), Some("^(TestA|TestB)$"));
    assert_eq!(
        run_pattern(&["TestSign/with_space", "TestSign/a.b"]).as_deref(),
        Some(r"^(TestSign)$/^(a\.b|with_space)$")
    );
    // A whole test and a subtest of another: the subtest level stays open.
    assert_eq!(run_pattern(&["TestA", "TestB/x"]).as_deref(), Some("^(TestA|TestB)$"));
    assert_eq!(run_pattern(&["", "TestB/x"]), None);
    assert_eq!(quote_meta("a(b)|c*[d]{e}^$+?."), r"a\(b\)\|c\*\[d\]\{e\}\^\$\+\?\.");
    let pkgs: BTreeSet<String> = [M.to_string(), format!("{M}/strs")].into();
    assert_eq!(package_of(&pkgs, &format!("{M}/strs/TestAdd")), Some("example.com/runnercases/strs"));
    assert_eq!(package_of(&pkgs, &format!("{M}/TestAdd")), Some(M));
    assert_eq!(package_of(&pkgs, "other.org/x/TestAdd"), None);
}

#[carve_testutil::needs("go")]
fn a_whole_run_reports_every_test_and_subtest() {
    let c = Copy::new();
    let r = run(&c.request(None)).unwrap();
    let s = |id: &str| r.status(&format!("{M}/{id}"));
    assert_eq!(s("TestAdd"), TestStatus::Passed);
    assert_eq!(s("TestFails"), TestStatus::Failed);
    assert_eq!(s("TestSkipped"), TestStatus::Skipped);
    assert_eq!(s("TestSign/with_space"), TestStatus::Passed);
    assert_eq!(s("TestSign/wrong"), TestStatus::Failed);
    assert_eq!(s("TestSign"), TestStatus::Failed);
    assert_eq!(s("TestNested/outer/inner"), TestStatus::Passed);
    assert_eq!(s("TestNested/outer/skipped"), TestStatus::Skipped);
    assert_eq!(s("TestNested/dup#01"), TestStatus::Passed);
    assert_eq!(s("ExampleAdd"), TestStatus::Passed);
    assert_eq!(s("strs/TestAdd"), TestStatus::Passed);
    assert_eq!(s("strs/TestShout/yz"), TestStatus::Passed);
    assert_eq!(r.statuses.len(), 21, "{:#?}", statuses(&r));
    let fails = &r.statuses[&format!("{M}/TestFails")];
    assert_eq!(fails.message.as_deref(), Some("calc_test.go:21: Add(2, 2) = 4, want 5 (deliberately failing)"));
    assert!(r.command_line.starts_with("go test -json -count=1"), "{}", r.command_line);
    assert_eq!(r.processes, 1);
    // The flaky test alternates on its counter outside the tree.
    let again = run(&c.request(None)).unwrap();
    assert_ne!(again.status(&format!("{M}/TestFlaky")), r.status(&format!("{M}/TestFlaky")));
    assert!(std::fs::read_dir(c.scratch.path().join("s")).unwrap().next().is_none(), "scratch left behind");
}

#[carve_testutil::needs("go")]
fn a_package_that_does_not_build_errors_its_requested_tests() {
    let c = Copy::new();
    std::fs::write(c.root.path().join("strs/broken.go"), "package strs\n\nfunc broken() int { return \"x\" }\n")
        .unwrap();
    let wanted = [format!("{M}/strs/TestShout"), format!("{M}/TestAdd")];
    let r = run(&c.request(Some(&wanted.iter().map(String::as_str).collect::<Vec<_>>()))).unwrap();
    assert_eq!(statuses(&r), vec![(wanted[1].as_str(), TestStatus::Passed), (wanted[0].as_str(), TestStatus::Error)]);
    let message = r.statuses[&wanted[0]].message.as_deref().unwrap();
    assert!(message.contains("broken.go:3") && message.contains("cannot use"), "{message}");
    assert!(r.collection_errors.contains_key(&format!("{M}/strs")));
}

#[carve_testutil::needs("go")]
fn a_hanging_test_is_killed_and_the_rest_still_runs() {
    let c = Copy::new();
    let wanted = [format!("{M}/TestHang"), format!("{M}/TestNested"), format!("{M}/TestAdd")];
    let mut req = c.request(Some(&wanted.iter().map(String::as_str).collect::<Vec<_>>()));
    req.env.push(("CARVE_FIXTURE_HANG".into(), "1".into()));
    req.test_timeout = Duration::from_secs(4);
    let started = Instant::now();
    let r = run(&req).unwrap();
    assert!(started.elapsed() < Duration::from_secs(100), "{:?}", started.elapsed());
    assert_eq!(r.status(&wanted[0]), TestStatus::Timeout);
    assert_eq!(r.timed_out.as_deref(), Some(wanted[0].as_str()));
    assert_eq!(r.status(&wanted[1]), TestStatus::Passed);
    assert_eq!(r.status(&format!("{M}/TestNested/outer/inner")), TestStatus::Passed);
    assert_eq!(r.status(&wanted[2]), TestStatus::Passed);
}

#[carve_testutil::needs("go")]
fn missing_modules_name_the_setup_command() {
    let c = Copy::new();
    let uses = "package strs\n\nimport _ \"github.com/nowhere-carve/absent\"\n";
    std::fs::write(c.root.path().join("strs/uses.go"), uses).unwrap();
    let mut req = c.request(None);
    req.env.push(("GOPROXY".into(), "off".into()));
    req.env.push(("GOFLAGS".into(), String::new()));
    let err = run(&req).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RunnerError::MissingDependencies { .. }), "{text}");
    assert!(text.contains(SETUP), "{text}");
}

#[carve_testutil::needs("go")]
fn a_directory_without_go_mod_is_an_error_with_a_hint() {
    let root = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("x_test.go"), "package x\n").unwrap();
    let mut req = RunRequest::new(root.path(), TestCommand::GoTest { args: vec![], packages: None }, scratch.path());
    req.env.push(("GO111MODULE".into(), "on".into()));
    let text = run(&req).unwrap_err().to_string();
    assert!(text.contains("go.mod"), "{text}");
}

#[carve_testutil::needs("go")]
fn a_test_main_that_exits_early_errors_its_packages_tests() {
    let c = Copy::new();
    let main = "package strs\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n\
                func TestMain(m *testing.M) {\n\tfmt.Println(\"setup exploded\")\n\tos.Exit(3)\n}\n";
    std::fs::write(c.root.path().join("strs/main_test.go"), main).unwrap();
    let r = run(&c.request(None)).unwrap();
    let message = &r.collection_errors[&format!("{M}/strs")];
    assert!(message.contains("setup exploded"), "{message}");
    assert_eq!(r.status(&format!("{M}/TestAdd")), TestStatus::Passed);
    let id = format!("{M}/strs/TestShout");
    let r = run(&c.request(Some(&[id.as_str()]))).unwrap();
    assert_eq!(r.status(&id), TestStatus::Error);
    let message = r.statuses[&id].message.as_deref().unwrap();
    assert!(message.contains("setup exploded"), "{message}");
}
