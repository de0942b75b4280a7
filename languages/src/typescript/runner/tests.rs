use super::*;
use crate::runner::{TestCommand, TestOutcome};

#[test]
fn a_file_level_blame_covers_the_requested_tests_in_that_file() {
    let cmd = TestCommand::Jest { package_manager: PackageManager::Npm, args: vec![] };
    let mut req = RunRequest::new("/nonexistent", cmd, "/tmp/x");
    req.tests = Some(vec!["t/a.test.js > x".into(), "t/b.test.js > y".into()]);
    let mut result = RunResult::default();
    result.statuses.insert("t/a.test.js".into(), TestOutcome::new(TestStatus::Timeout, Some("no progress".into())));
    result.statuses.insert("t/a.test.js > x".into(), TestOutcome::new(TestStatus::Missing, None));
    result.statuses.insert("t/b.test.js".into(), TestOutcome::new(TestStatus::Error, None));
    result.statuses.insert("t/b.test.js > y".into(), TestOutcome::new(TestStatus::Passed, None));
    settle(&req, &mut result);
    assert_eq!(result.status("t/a.test.js > x"), TestStatus::Timeout);
    assert_eq!(result.status("t/b.test.js > y"), TestStatus::Passed);
    assert!(!result.statuses.contains_key("t/b.test.js"));
    assert!(!result.statuses.contains_key("t/a.test.js"));
}

#[test]
fn commands_serialize_with_their_runner_tag() {
    let cmd = TestCommand::NodeTest { package_manager: PackageManager::Pnpm, args: vec![] };
    assert_eq!(serde_json::to_string(&cmd).unwrap(), r#"{"runner":"node-test","package_manager":"pnpm","args":[]}"#);
    let back: TestCommand = serde_json::from_str(r#"{"runner":"vitest","package_manager":"npm"}"#).unwrap();
    assert_eq!(back, TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] });
    assert_eq!(spec(&back).map(|s| s.0), Some(Kind::Vitest));
}

#[test]
fn missing_node_modules_names_the_setup_command() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("package.json"), r#"{"devDependencies":{"vitest":"3"}}"#).unwrap();
    std::fs::write(dir.path().join("package-lock.json"), "{}").unwrap();
    let cmd = TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] };
    let err = run(&RunRequest::new(dir.path(), cmd, scratch.path())).unwrap_err().to_string();
    assert!(err.contains("`npm ci`"), "{err}");
    assert!(err.contains("node_modules/.bin/vitest"), "{err}");
}

#[test]
fn mocha_is_named_mocha_in_carve_toml_and_needs_its_binary() {
    let cmd: TestCommand =
        serde_json::from_str(r#"{"runner":"mocha","package_manager":"npm","args":["--ui","tdd"]}"#).unwrap();
    let args = vec!["--ui".to_string(), "tdd".to_string()];
    assert_eq!(cmd, TestCommand::Mocha { package_manager: PackageManager::Npm, args });
    assert_eq!((cmd.runner_name(), spec(&cmd).map(|s| s.0)), ("mocha", Some(Kind::Mocha)));
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("package.json"), r#"{"devDependencies":{"mocha":"10"}}"#).unwrap();
    let err = run(&RunRequest::new(dir.path(), cmd, scratch.path())).unwrap_err().to_string();
    assert!(err.contains("`npm install`") && err.contains("node_modules/.bin/mocha"), "{err}");
}

/// jest before 26 (iamkun/dayjs pins 22) calls a reporter's `onTestStart`/`onTestResult`,
/// never the `onTestFile*` names: without the two, carve saw no progress and killed dayjs's
/// whole suite as hung ("0 passed … 93 hung or missing"). jest 22's objects, as it passes them.
#[carve_testutil::needs("node")]
fn the_jest_reporter_reports_through_the_names_old_jest_calls() {
    let dir = tempfile::tempdir().unwrap();
    let reporter = dir.path().join("carve_jest_reporter.cjs");
    std::fs::write(&reporter, JEST_REPORTER).unwrap();
    let progress = dir.path().join("progress.jsonl");
    let script = r#"
        const R = require(process.argv[1]);
        const r = new R();
        const test = { path: process.env.CARVE_ROOT + "/test/a.test.js" };
        r.onRunStart();
        r.onTestStart(test);
        r.onTestResult(test, { testResults: [{ ancestorTitles: ["A"], title: "works", status: "passed", duration: 3, failureMessages: [] }] });
        r.onRunComplete();
    "#;
    let out = std::process::Command::new("node")
        .args(["-e", script])
        .arg(&reporter)
        .env("CARVE_PROGRESS", &progress)
        .env("CARVE_ROOT", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<serde_json::Value> =
        std::fs::read_to_string(&progress).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["header", "file_start", "collected", "result", "finished"]);
    assert_eq!(events[1]["file"], "test/a.test.js");
    assert_eq!(events[3]["id"], "test/a.test.js > A > works");
    assert_eq!(events[3]["status"], "passed");
}
