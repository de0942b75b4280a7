//! The cargo runner on copies of `fixtures/rust/runner-cases` (and broken variants), each
//! with its own scratch directory (cargo's target directory is per tree anyway).

use super::*;
use std::path::PathBuf;
use std::time::Duration;

fn fixture() -> PathBuf {
    carve_testutil::fixture("rust/runner-cases")
}

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
        let command = TestCommand::Cargo { args: vec![], test_args: vec![], workspace: true, nextest: false };
        let mut r = RunRequest::new(self.root.path(), command, self.scratch.path());
        r.tests = tests.map(|t| t.iter().map(|s| s.to_string()).collect());
        r.timeout = Duration::from_secs(600);
        r.test_timeout = Duration::from_secs(300);
        r.env.push(("CARVE_FLAKY_COUNTER".into(), self.scratch.path().join("flaky").display().to_string()));
        r.env.push(("RUST_BACKTRACE".into(), "0".into()));
        r
    }
}

fn statuses(r: &RunResult) -> Vec<(&str, TestStatus)> {
    r.statuses.iter().map(|(k, v)| (k.as_str(), v.status)).collect()
}

#[test]
fn a_whole_run_reports_every_binary_and_doctest() {
    let c = Copy::new();
    let r = run(&c.request(None)).unwrap();
    let want = vec![
        ("helper::tests::doubles", TestStatus::Passed),
        ("one::only_in_one", TestStatus::Passed),
        ("one::shared_name", TestStatus::Passed),
        ("runner_cases::doctest::src/lib.rs - add", TestStatus::Passed),
        ("runner_cases::doctest::src/lib.rs - sign", TestStatus::Passed),
        ("runner_cases::tests::adds", TestStatus::Passed),
        ("runner_cases::tests::fails", TestStatus::Failed),
        ("runner_cases::tests::flaky", TestStatus::Passed),
        ("runner_cases::tests::hangs", TestStatus::Passed),
        ("runner_cases::tests::ignored", TestStatus::Skipped),
        ("runner_cases::tests::nested::deeper::deep", TestStatus::Passed),
        ("runner_cases::tests::panics", TestStatus::Passed),
        ("runner_cases::tests::sign_cases::negative", TestStatus::Passed),
        ("runner_cases::tests::sign_cases::positive", TestStatus::Passed),
        ("runner_cases::tests::sign_cases::wrong", TestStatus::Failed),
        ("runner_cases::tests::sign_cases::zero", TestStatus::Passed),
        ("two::group::fails_in_two", TestStatus::Failed),
        ("two::shared_name", TestStatus::Passed),
    ];
    assert_eq!(statuses(&r), want);
    let msg = |id: &str| r.statuses[id].message.clone().unwrap_or_default();
    assert_eq!(msg("runner_cases::tests::fails"), "assertion `left == right` failed: deliberately failing");
    assert_eq!(msg("two::group::fails_in_two"), "deliberately failing in two");
    assert_eq!(msg("runner_cases::tests::ignored"), "deliberately ignored");
    assert_eq!(r.processes, 1);
    assert!(r.command_line.starts_with("cargo test --locked --no-fail-fast --workspace"), "{}", r.command_line);
    let again = run(&c.request(None)).unwrap();
    assert_eq!(again.status("runner_cases::tests::flaky"), TestStatus::Failed);
    assert!(!c.root.path().join("target").exists(), "cargo wrote a target directory into the tree");
}

#[test]
fn a_selection_runs_exactly_the_requested_tests_per_binary() {
    let c = Copy::new();
    let wanted = [
        "two::shared_name",
        "runner_cases::tests::sign_cases",
        "runner_cases::doctest::src/lib.rs - sign",
        "runner_cases::tests::absent",
        "nowhere::x",
    ];
    let req = c.request(Some(&wanted));
    let r = run(&req).unwrap();
    assert_eq!(
        statuses(&r),
        vec![
            ("nowhere::x", TestStatus::Missing),
            ("runner_cases::doctest::src/lib.rs - sign", TestStatus::Passed),
            ("runner_cases::tests::absent", TestStatus::Missing),
            ("runner_cases::tests::sign_cases::negative", TestStatus::Passed),
            ("runner_cases::tests::sign_cases::positive", TestStatus::Passed),
            ("runner_cases::tests::sign_cases::wrong", TestStatus::Failed),
            ("runner_cases::tests::sign_cases::zero", TestStatus::Passed),
            ("two::shared_name", TestStatus::Passed),
        ]
    );
    let work = WorkDir::create(&req, "t").unwrap();
    let suite = Suite::list(&req, &work, Instant::now() + req.timeout).unwrap();
    // Inside a run, doctests go by rustdoc's names (`… - sign (line 17)`).
    let raw = suite.doctest_ids.raw_request(&req);
    let runs = suite.selection_args(&raw, &raw.tests.clone().unwrap());
    work.remove();
    let lines: Vec<String> = runs.iter().map(|a| display(a)).collect();
    assert_eq!(
        lines,
        vec![
            "cargo test --locked --no-fail-fast -p runner-cases --lib --test two -- --test-threads=1 shared_name tests::sign_cases",
            "cargo test --locked --no-fail-fast -p runner-cases --doc -- --test-threads=1 sign",
        ]
    );
}

#[test]
fn a_hanging_test_is_killed_and_the_rest_still_runs() {
    let c = Copy::new();
    let wanted =
        ["runner_cases::tests::adds", "runner_cases::tests::hangs", "runner_cases::tests::nested", "one::shared_name"];
    let mut req = c.request(Some(&wanted));
    req.env.push(("CARVE_FIXTURE_HANG".into(), "1".into()));
    req.test_timeout = Duration::from_secs(5);
    let r = run(&req).unwrap();
    assert_eq!(r.status("runner_cases::tests::hangs"), TestStatus::Timeout, "{:#?}", r.statuses);
    assert_eq!(r.timed_out.as_deref(), Some("runner_cases::tests::hangs"));
    assert_eq!(r.status("runner_cases::tests::adds"), TestStatus::Passed);
    assert_eq!(r.status("runner_cases::tests::nested::deeper::deep"), TestStatus::Passed);
    assert_eq!(r.status("one::shared_name"), TestStatus::Passed);
    assert_eq!(r.processes, 2);
}

#[test]
fn a_target_that_does_not_compile_costs_only_its_own_tests() {
    let c = Copy::new();
    let two = c.root.path().join("tests/two.rs");
    let mut text = std::fs::read_to_string(&two).unwrap();
    text.push_str("\nfn broken() -> i32 { \"x\" }\n");
    std::fs::write(&two, text).unwrap();
    let r = run(&c.request(None)).unwrap();
    assert_eq!(r.status("one::shared_name"), TestStatus::Passed);
    assert_eq!(r.status("runner_cases::tests::adds"), TestStatus::Passed);
    assert_eq!(r.status("runner_cases::doctest::src/lib.rs - add"), TestStatus::Passed);
    assert_eq!(r.status("helper::tests::doubles"), TestStatus::Passed);
    assert!(!r.statuses.keys().any(|id| id.starts_with("two::")), "{:?}", r.statuses.keys());
    let message = &r.collection_errors["two"];
    assert!(message.contains("tests/two.rs") && message.contains("could not compile"), "{message}");
    // Requested tests of the broken target are errors with the compiler's output.
    let r = run(&c.request(Some(&["two::shared_name", "one::shared_name"]))).unwrap();
    assert_eq!(r.status("two::shared_name"), TestStatus::Error);
    assert!(r.statuses["two::shared_name"].message.as_deref().unwrap().contains("tests/two.rs"));
    assert_eq!(r.status("one::shared_name"), TestStatus::Passed);
}

#[test]
fn a_library_that_does_not_compile_is_the_runs_error() {
    let c = Copy::new();
    let lib = c.root.path().join("helper/src/lib.rs");
    std::fs::write(&lib, "pub fn double(n: i32) -> i32 { \"x\" }\n").unwrap();
    let mut req = c.request(None);
    req.command = TestCommand::Cargo { args: vec![], test_args: vec![], workspace: false, nextest: false };
    // Without --workspace the broken member is not built at all.
    assert_eq!(run(&req).unwrap().status("runner_cases::tests::adds"), TestStatus::Passed);
    let lib = c.root.path().join("src/lib.rs");
    std::fs::write(&lib, "pub fn add() -> i32 { \"x\" }\n").unwrap();
    let err = run(&req).unwrap_err().to_string();
    assert!(err.contains("does not compile") && err.contains("src/lib.rs"), "{err}");
}

#[test]
fn a_missing_lock_file_names_the_setup_command() {
    let c = Copy::new();
    std::fs::remove_file(c.root.path().join("Cargo.lock")).unwrap();
    let err = run(&c.request(None)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RunnerError::MissingDependencies { .. }), "{text}");
    assert!(text.contains("cargo generate-lockfile"), "{text}");
    assert!(!c.root.path().join("Cargo.lock").exists(), "cargo wrote Cargo.lock into the tree");
}

/// dtolnay/itoa: a dev-dependency pulls the crate itself from crates.io, so `Cargo.lock`
/// holds two packages named `itoa` and `cargo test -p itoa` is ambiguous. Here a vendored
/// older `runner-cases` plays the released crate.
#[test]
fn a_member_whose_name_a_dependency_shares_is_selected_by_its_package_id() {
    let c = Copy::new();
    let root = c.root.path();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let manifest = manifest.replace("members = [\"helper\"]", "members = [\"helper\"]\nexclude = [\"vendor\"]");
    let manifest = format!(
        "{manifest}\n[dev-dependencies]\nreleased = {{ package = \"runner-cases\", path = \"vendor/runner-cases\" }}\n"
    );
    carve_testutil::write_files(
        root,
        &[
            ("Cargo.toml", manifest.as_str()),
            (
                "vendor/runner-cases/Cargo.toml",
                "[package]\nname = \"runner-cases\"\nversion = \"0.0.9\"\nedition = \"2021\"\n",
            ),
            ("vendor/runner-cases/src/lib.rs", "pub fn released() -> i32 { 9 }\n"),
        ],
    );
    let lock = Command::new("cargo").args(["generate-lockfile", "--offline"]).current_dir(root).output().unwrap();
    assert!(lock.status.success(), "{}", String::from_utf8_lossy(&lock.stderr));
    let r = run(&c.request(Some(&["runner_cases::tests::adds", "runner_cases::doctest::src/lib.rs - add"]))).unwrap();
    assert_eq!(
        statuses(&r),
        vec![
            ("runner_cases::doctest::src/lib.rs - add", TestStatus::Passed),
            ("runner_cases::tests::adds", TestStatus::Passed)
        ]
    );
}

#[carve_testutil::needs("cargo-nextest")]
fn nextest_reports_what_cargo_test_reports() {
    let c = Copy::new();
    let mut req = c.request(None);
    req.command = TestCommand::Cargo { args: vec![], test_args: vec![], workspace: true, nextest: true };
    let r = run(&req).unwrap();
    assert!(r.command_line.starts_with("cargo nextest run --locked --no-fail-fast --workspace"), "{}", r.command_line);
    let mut libtest = run(&c.request(None)).unwrap();
    // The flaky test ran once per run: it alternates.
    assert_ne!(r.status("runner_cases::tests::flaky"), libtest.status("runner_cases::tests::flaky"));
    libtest.statuses.remove("runner_cases::tests::flaky");
    let mut nx = r.statuses.clone();
    nx.remove("runner_cases::tests::flaky");
    let strip = |m: &BTreeMap<TestId, TestOutcome>| m.iter().map(|(k, v)| (k.clone(), v.status)).collect::<Vec<_>>();
    assert_eq!(strip(&nx), strip(&libtest.statuses));
    assert!(!c.root.path().join("target").exists(), "nextest wrote its store into the tree");

    // Selection and a hang: nextest kills the test after the per-test timeout.
    let mut req =
        c.request(Some(&["runner_cases::tests::hangs", "two::shared_name", "runner_cases::doctest::src/lib.rs - add"]));
    req.command = TestCommand::Cargo { args: vec![], test_args: vec![], workspace: true, nextest: true };
    req.env.push(("CARVE_FIXTURE_HANG".into(), "1".into()));
    req.test_timeout = Duration::from_secs(3);
    let r = run(&req).unwrap();
    assert_eq!(
        statuses(&r),
        vec![
            ("runner_cases::doctest::src/lib.rs - add", TestStatus::Passed),
            ("runner_cases::tests::hangs", TestStatus::Timeout),
            ("two::shared_name", TestStatus::Passed),
        ]
    );
}

#[test]
fn the_commands_own_thread_count_wins() {
    let command = TestCommand::Cargo {
        args: vec![],
        test_args: vec!["--test-threads=4".into()],
        workspace: false,
        nextest: false,
    };
    assert_eq!(suite_args(&command).join(" "), "test --locked --no-fail-fast -- --test-threads=4");
    let command = TestCommand::Cargo {
        args: vec!["--features".into(), "x".into()],
        test_args: vec![],
        workspace: true,
        nextest: false,
    };
    assert_eq!(
        suite_args(&command).join(" "),
        "test --locked --no-fail-fast --workspace --features x -- --test-threads=1"
    );
}

/// Regression (servo/rust-smallvec commits no Cargo.lock): an exported crate state gets
/// one (history's states call it through `carve_languages::lock_offline`).
#[test]
fn a_crate_state_without_a_lock_file_gets_one_offline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"s\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap();
    crate::lock_offline(dir.path());
    assert!(dir.path().join("Cargo.lock").is_file());
}

/// A build that fails on its first error and then warns many times (itoa's Level 2 reference:
/// `unexpected cfg` warnings after the error): the message still leads with the error.
#[test]
fn a_build_error_followed_by_many_warnings_is_in_the_message() {
    let mut output = String::from(
        "   Compiling agent_code v0.1.0\nerror[E0432]: unresolved import `gate`\n --> agent_code/src/lib.rs:5:5\n  |\n5 | use gate::weigh;\n  |     ^^^^ use of unresolved module\n\n",
    );
    for k in 0..20 {
        output.push_str(&format!(
            "warning: unexpected `cfg` condition value: `gate`\n --> agent_code/src/lib.rs:{k}:7\n  |\n  = note: no expected values for `feature`\n\n"
        ));
    }
    output.push_str("error: could not compile `agent_code` (lib) due to 1 previous error; 20 warnings emitted\n");
    let last = last_lines(&output, 60);
    assert!(!last.contains("E0432"), "the case needs an error beyond the last lines");
    let message = with_first_error(&output, last);
    assert!(message.starts_with("error[E0432]: unresolved import `gate`\n --> agent_code/src/lib.rs:5:5"), "{message}");
    assert!(message.ends_with("due to 1 previous error; 20 warnings emitted"), "{message}");
    let short = "error[E0425]: cannot find value `RNG`\nerror: could not compile `x`\n";
    assert_eq!(with_first_error(short, last_lines(short, 60)), last_lines(short, 60), "already there: as it was");
}
