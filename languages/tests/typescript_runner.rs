//! End to end over the JavaScript/TypeScript runner fixtures: vitest
//! (`fixtures/typescript/runner-cases`), jest (`fixtures/javascript/runner-cases-jest`) and
//! node:test (`fixtures/javascript/runner-cases-node`). Each runs the whole suite twice
//! (the flaky test flips), a selection that must report exactly the requested ids, a hung
//! test killed with its process group, and SWE-bench's log parser fed the runner's real
//! output. Without Node.js or the fixture's `node_modules` (`scripts/setup` installs them) a
//! test is ignored with the reason, except under `CI`, where it fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};
use carve_languages::typescript::detect::PackageManager;
use carve_languages::typescript::runner::{Kind, harness};

use TestStatus::{Failed, Missing, Passed, Skipped, Timeout};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel).canonicalize().unwrap()
}

/// Every file of the tree outside node_modules, with its content.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == "node_modules") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

struct Case {
    rel: &'static str,
    kind: Kind,
    command: TestCommand,
    /// The test file's path and the flaky file's path, relative to the fixture.
    math: &'static str,
    flaky: &'static str,
}

fn vitest() -> Case {
    Case {
        rel: "fixtures/typescript/runner-cases",
        kind: Kind::Vitest,
        command: TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] },
        math: "tests/math.test.ts",
        flaky: "tests/nested/flaky.test.ts",
    }
}

fn jest() -> Case {
    Case {
        rel: "fixtures/javascript/runner-cases-jest",
        kind: Kind::Jest,
        command: TestCommand::Jest { package_manager: PackageManager::Npm, args: vec![] },
        math: "tests/math.test.js",
        flaky: "tests/nested/flaky.test.js",
    }
}

fn node() -> Case {
    Case {
        rel: "fixtures/javascript/runner-cases-node",
        kind: Kind::NodeTest,
        command: TestCommand::NodeTest { package_manager: PackageManager::Npm, args: vec![] },
        math: "test/math.test.js",
        flaky: "test/nested/flaky.test.js",
    }
}

impl Case {
    fn request(&self, root: &Path, scratch: &Path, counters: &Path, tests: Option<Vec<String>>) -> RunRequest {
        let mut req = RunRequest::new(root, self.command.clone(), scratch);
        req.tests = tests;
        req.env = vec![("CARVE_FLAKY_DIR".into(), counters.display().to_string())];
        req.timeout = Duration::from_secs(300);
        req.test_timeout = Duration::from_secs(60);
        req
    }

    fn id(&self, path: &str, names: &str) -> String {
        format!("{path} > {names}")
    }

    /// The suite's statuses on the first run (the flaky test passes on even counts).
    fn expected(&self, flaky: TestStatus) -> BTreeMap<String, TestStatus> {
        let m = self.math;
        let mut want: Vec<(String, TestStatus)> = vec![
            (self.id(m, "adds two numbers"), Passed),
            (self.id(m, "fails on purpose"), Failed),
            (self.id(m, "is skipped"), Skipped),
            (self.id(m, "is still to do"), Skipped),
            (self.id(m, "divide > divides"), Passed),
            (self.id(m, "divide > throws on zero"), Passed),
            (self.id(m, "divide > edge cases > keeps the sign (a.k.a. [negative] numbers)"), Passed),
            (self.id(m, "divide > edge cases > divide(1, 1) = 1"), Passed),
            (self.id(m, "divide > edge cases > divide(9, 3) = 3"), Passed),
            (self.id(m, "divide > edge cases > divide(1, 4) = 0.25"), Passed),
            (self.id(self.flaky, "flaky > passes every other run"), flaky),
            (self.id(self.flaky, "same name > adds two numbers"), Passed),
        ];
        if self.kind == Kind::NodeTest {
            want.push((self.id(m, "subtests"), Failed));
            want.push((self.id(m, "subtests > first"), Passed));
            want.push((self.id(m, "subtests > second"), Failed));
        }
        want.into_iter().collect()
    }
}

fn statuses(r: &RunResult) -> BTreeMap<String, TestStatus> {
    r.statuses.iter().map(|(k, v)| (k.clone(), v.status)).collect()
}

fn whole_suite_twice_flaky_flips_and_the_tree_is_untouched(case: Case) {
    let root = fixture(case.rel);
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let before = snapshot(&root);
    let req = case.request(&root, scratch.path(), counters.path(), None);
    let first = carve_languages::run_tests(&req).unwrap();
    assert_eq!(statuses(&first), case.expected(Passed), "{}\n{}", first.stdout_tail, first.stderr_tail);
    let failed = &first.statuses[&case.id(case.math, "fails on purpose")];
    assert!(failed.message.as_deref().is_some_and(|m| m.contains('5') || m.contains("equal")), "{failed:?}");
    let second = carve_languages::run_tests(&req).unwrap();
    assert_eq!(statuses(&second), case.expected(Failed));
    assert_eq!(snapshot(&root), before, "the run wrote into the tree");
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "the scratch directory was not cleaned");

    // The harness round trip: SWE-bench's parser over the runner's own output.
    if case.kind != Kind::NodeTest {
        let log = if case.kind == Kind::Jest { &first.stderr_tail } else { &first.stdout_tail };
        let parsed =
            if case.kind == Kind::Jest { harness::parse_log_jest(log) } else { harness::parse_log_vitest(log) };
        let mut want: BTreeMap<String, TestStatus> = BTreeMap::new();
        for (id, o) in &first.statuses {
            // jest prints a todo test as `✎ todo …`, which the parser does not read.
            if case.kind == Kind::Jest && id.ends_with("is still to do") {
                continue;
            }
            let h = harness::harness_id_for(case.kind, id, o.status).unwrap();
            if o.status != Skipped {
                assert_eq!(carve_languages::harness_id(&case.command, id), Some(h.clone()));
            }
            want.insert(h, o.status);
        }
        assert_eq!(parsed, want, "log:\n{log}");
    }
}

#[carve_testutil::needs("node", "fixtures/typescript/runner-cases/node_modules/.bin/vitest")]
fn vitest_whole_suite() {
    whole_suite_twice_flaky_flips_and_the_tree_is_untouched(vitest());
}

#[carve_testutil::needs("node", "fixtures/javascript/runner-cases-jest/node_modules/.bin/jest")]
fn jest_whole_suite() {
    whole_suite_twice_flaky_flips_and_the_tree_is_untouched(jest());
}

#[carve_testutil::needs("node")]
fn node_test_whole_suite() {
    whole_suite_twice_flaky_flips_and_the_tree_is_untouched(node());
}

fn a_selection_reports_exactly_the_requested_ids(case: Case) {
    let root = fixture(case.rel);
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let m = case.math;
    let requested = vec![
        case.id(m, "fails on purpose"),
        case.id(m, "divide > edge cases > divide(1, 4) = 0.25"),
        case.id(m, "divide > edge cases > keeps the sign (a.k.a. [negative] numbers)"),
        case.id(m, "is skipped"),
        case.id(case.flaky, "same name > adds two numbers"),
        case.id(m, "no such test"),
        "tests/absent.test.js > x".to_string(),
    ];
    let req = case.request(&root, scratch.path(), counters.path(), Some(requested.clone()));
    let r = carve_languages::run_tests(&req).unwrap();
    let want: BTreeMap<String, TestStatus> = [Failed, Passed, Passed, Skipped, Passed, Missing, Missing]
        .into_iter()
        .zip(requested.iter().cloned())
        .map(|(s, id)| (id, s))
        .collect();
    assert_eq!(statuses(&r), want, "{}\n{}", r.stdout_tail, r.stderr_tail);
    // The top-level "adds two numbers" shares its title with the requested one: not reported.
    assert!(!r.statuses.contains_key(&case.id(m, "adds two numbers")));

    // A describe block stands for the tests under it (vitest and jest match name prefixes).
    if case.kind != Kind::NodeTest {
        let req = case.request(&root, scratch.path(), counters.path(), Some(vec![case.id(m, "divide > edge cases")]));
        let r = carve_languages::run_tests(&req).unwrap();
        let got: BTreeSet<String> = r.statuses.keys().cloned().collect();
        let want: BTreeSet<String> = case
            .expected(Passed)
            .into_keys()
            .filter(|id| id.starts_with(&case.id(m, "divide > edge cases > ")))
            .collect();
        assert_eq!(got, want);
    }
}

#[carve_testutil::needs("node", "fixtures/typescript/runner-cases/node_modules/.bin/vitest")]
fn vitest_selection() {
    a_selection_reports_exactly_the_requested_ids(vitest());
}

#[carve_testutil::needs("node", "fixtures/javascript/runner-cases-jest/node_modules/.bin/jest")]
fn jest_selection() {
    a_selection_reports_exactly_the_requested_ids(jest());
}

#[carve_testutil::needs("node")]
fn node_test_selection() {
    a_selection_reports_exactly_the_requested_ids(node());
}

fn collect_lists_without_running(case: Case) {
    let root = fixture(case.rel);
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let req = case.request(&root, scratch.path(), counters.path(), None);
    let c = carve_languages::collect_tests(&req).unwrap();
    let mut want: BTreeSet<String> = case.expected(Passed).into_keys().collect();
    if case.kind == Kind::NodeTest {
        // node:test's subtests exist only once their parent runs.
        want.retain(|id| !id.contains("subtests > "));
    }
    assert_eq!(c.ids, want);
    assert_eq!(std::fs::read_dir(counters.path()).unwrap().count(), 0, "collecting ran the flaky test");
}

#[carve_testutil::needs("node", "fixtures/typescript/runner-cases/node_modules/.bin/vitest")]
fn vitest_collect() {
    collect_lists_without_running(vitest());
}

#[carve_testutil::needs("node", "fixtures/javascript/runner-cases-jest/node_modules/.bin/jest")]
fn jest_collect() {
    collect_lists_without_running(jest());
}

#[carve_testutil::needs("node")]
fn node_test_collect() {
    collect_lists_without_running(node());
}

/// A copy of the fixture (node_modules linked) with a test file whose second test never
/// returns.
fn hanging_copy(case: &Case, dir: &Path) -> PathBuf {
    let root = dir.join("project");
    let src = fixture(case.rel);
    for entry in ["package.json", "src"] {
        copy(&src.join(entry), &root.join(entry));
    }
    if src.join("node_modules").exists() {
        std::os::unix::fs::symlink(src.join("node_modules"), root.join("node_modules")).unwrap();
    }
    let test_dir = root.join(Path::new(case.math).parent().unwrap());
    std::fs::create_dir_all(&test_dir).unwrap();
    let header = match case.kind {
        Kind::Vitest => "import { it, expect } from \"vitest\";\n",
        Kind::Jest | Kind::Mocha => "",
        Kind::NodeTest => {
            "const { it } = require(\"node:test\");\nconst expect = (v) => ({ toBe: (w) => require(\"node:assert\").equal(v, w) });\n"
        }
    };
    let ext = Path::new(case.math).extension().unwrap().to_str().unwrap();
    std::fs::write(
        test_dir.join(format!("hang.test.{ext}")),
        format!("{header}it(\"before\", () => {{ expect(1).toBe(1); }});\nit(\"spins\", () => {{ while (true) {{}} }});\nit(\"after\", () => {{ expect(2).toBe(2); }});\n"),
    )
    .unwrap();
    std::fs::write(
        test_dir.join(format!("z_after.test.{ext}")),
        format!("{header}it(\"still runs\", () => {{ expect(3).toBe(3); }});\n"),
    )
    .unwrap();
    root
}

fn copy(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
}

fn a_hung_test_is_killed_and_the_rest_still_run(case: Case) {
    let dir = tempfile::tempdir().unwrap();
    let root = hanging_copy(&case, dir.path());
    let scratch = tempfile::tempdir().unwrap();
    let counters = tempfile::tempdir().unwrap();
    let mut req = case.request(&root, scratch.path(), counters.path(), None);
    req.test_timeout = Duration::from_secs(8);
    let r = carve_languages::run_tests(&req).unwrap();
    let dir_of = Path::new(case.math).parent().unwrap().display().to_string();
    let ext = Path::new(case.math).extension().unwrap().to_str().unwrap().to_string();
    let hang = format!("{dir_of}/hang.test.{ext}");
    let got = statuses(&r);
    assert_eq!(
        got.get(&format!("{dir_of}/z_after.test.{ext} > still runs")),
        Some(&Passed),
        "{:#?}\n{}\n{}",
        r.statuses,
        r.stdout_tail,
        r.stderr_tail
    );
    assert!(r.processes >= 2);
    if case.kind == Kind::NodeTest {
        // node:test runs each file in a child process whose reports a busy test never lets
        // out: the file is what is known to hang.
        assert_eq!(got.get(&hang), Some(&Timeout), "{got:?}");
        assert_eq!(r.timed_out.as_deref(), Some(hang.as_str()));
        return;
    }
    assert_eq!(got.get(&format!("{hang} > spins")), Some(&Timeout), "{got:?}\n{}\n{}", r.stdout_tail, r.stderr_tail);
    assert_eq!(r.timed_out.as_deref(), Some(format!("{hang} > spins").as_str()));
    assert_eq!(got.get(&format!("{hang} > before")), Some(&Passed), "{got:?}");
    assert_eq!(got.get(&format!("{hang} > after")), Some(&Passed), "{got:?}");
    assert!(r.processes >= 2);
}

#[carve_testutil::needs("node", "fixtures/typescript/runner-cases/node_modules/.bin/vitest")]
fn vitest_hang() {
    a_hung_test_is_killed_and_the_rest_still_run(vitest());
}

#[carve_testutil::needs("node", "fixtures/javascript/runner-cases-jest/node_modules/.bin/jest")]
fn jest_hang() {
    a_hung_test_is_killed_and_the_rest_still_run(jest());
}

#[carve_testutil::needs("node")]
fn node_test_hang() {
    a_hung_test_is_killed_and_the_rest_still_run(node());
}

#[test]
fn detection_reads_the_fixtures() {
    let d = carve_languages::detect(&fixture("fixtures/typescript/runner-cases"));
    let ts = d.iter().find(|d| d.language == carve_languages::Language::TypeScript).expect("typescript detected");
    assert_eq!(ts.command, TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] });
    assert_eq!(ts.setup.as_deref(), Some("npm ci"));
    let d = carve_languages::detect(&fixture("fixtures/javascript/runner-cases-jest"));
    assert!(matches!(d.first().map(|d| &d.command), Some(TestCommand::Jest { .. })), "{d:?}");
    let d = carve_languages::detect(&fixture("fixtures/javascript/runner-cases-node"));
    assert!(matches!(d.first().map(|d| &d.command), Some(TestCommand::NodeTest { .. })), "{d:?}");
    assert_eq!(d.first().and_then(|d| d.setup.clone()), None);
}

/// The TypeScript fixture of the static issue runs on vitest 2: every test passes, ids are
/// `path > describe > test`, and the tree is untouched.
#[carve_testutil::needs("node", "fixtures/typescript/ledger/node_modules/.bin/vitest")]
fn ledger_fixture_on_vitest_2() {
    let rel = "fixtures/typescript/ledger";
    let root = fixture(rel);
    let before = snapshot(&root);
    let scratch = tempfile::tempdir().unwrap();
    let detected = carve_languages::detect(&root);
    let command = detected.first().expect("ledger detected").command.clone();
    assert!(matches!(command, TestCommand::Vitest { .. }), "{command:?}");
    let r = carve_languages::run_tests(&RunRequest::new(&root, command, scratch.path())).unwrap();
    assert!(r.statuses.len() >= 5, "{:?}", r.statuses);
    for (id, o) in &r.statuses {
        assert_eq!(o.status, Passed, "{id}: {o:?}");
        assert!(id.contains(".test.ts > ") || id.contains(".spec.ts > "), "{id}");
    }
    assert!(r.statuses.contains_key("tests/money.test.ts > Money > keeps cents exactly"));
    assert_eq!(snapshot(&root), before);
}

/// A copy of a fixture's package.json with its node_modules linked, and `files` written.
fn project_with(rel: &str, dir: &Path, files: &[(&str, &str)]) -> PathBuf {
    let root = dir.join("project");
    let src = fixture(rel);
    copy(&src.join("package.json"), &root.join("package.json"));
    std::os::unix::fs::symlink(src.join("node_modules"), root.join("node_modules")).unwrap();
    for (path, text) in files {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    }
    root
}

#[carve_testutil::needs("node", "fixtures/typescript/runner-cases/node_modules/.bin/vitest")]
fn a_broken_vitest_config_is_an_error_with_the_output_tail() {
    let rel = "fixtures/typescript/runner-cases";
    let dir = tempfile::tempdir().unwrap();
    let root = project_with(
        rel,
        dir.path(),
        &[
            ("vitest.config.ts", "throw new Error(\"config exploded on purpose\");\n"),
            ("tests/a.test.ts", "import { it } from \"vitest\";\nit(\"x\", () => {});\n"),
        ],
    );
    let scratch = tempfile::tempdir().unwrap();
    let err =
        carve_languages::run_tests(&RunRequest::new(&root, vitest().command, scratch.path())).unwrap_err().to_string();
    assert!(err.contains("config exploded on purpose"), "{err}");
    assert!(err.contains("vitest"), "{err}");
}

#[carve_testutil::needs(
    "node",
    "fixtures/typescript/runner-cases/node_modules/.bin/vitest",
    "fixtures/javascript/runner-cases-jest/node_modules/.bin/jest"
)]
fn a_test_file_that_does_not_load_is_a_collection_error_and_its_requested_tests_errors() {
    for case in [vitest(), jest()] {
        let ext = Path::new(case.math).extension().unwrap().to_str().unwrap().to_string();
        let header = if case.kind == Kind::Vitest { "import { it, expect } from \"vitest\";\n" } else { "" };
        let dir = tempfile::tempdir().unwrap();
        let broken = format!("tests/broken.test.{ext}");
        let good = format!("tests/good.test.{ext}");
        let root = project_with(
            case.rel,
            dir.path(),
            &[
                (broken.as_str(), "it(\"never\", () => {\n"),
                (good.as_str(), &format!("{header}it(\"works\", () => {{ expect(1).toBe(1); }});\n")),
            ],
        );
        let scratch = tempfile::tempdir().unwrap();
        let counters = tempfile::tempdir().unwrap();
        let req = case.request(
            &root,
            scratch.path(),
            counters.path(),
            Some(vec![format!("{broken} > never"), format!("{good} > works")]),
        );
        let r = carve_languages::run_tests(&req).unwrap();
        assert_eq!(r.status(&format!("{good} > works")), Passed, "{:?}", r.statuses);
        assert_eq!(r.status(&format!("{broken} > never")), TestStatus::Error, "{:?}", r.statuses);
        assert!(r.collection_errors.contains_key(&broken), "{:?}", r.collection_errors);
    }
}

/// vitest 0.8 loads no reporter file: carve runs it through a configuration file of its own
/// that loads the project's (whose set-up file must still run) and adds carve's reporter.
#[carve_testutil::needs("node", "fixtures/typescript/vitest-old/node_modules/.bin/vitest")]
fn old_vitest_runs_collects_and_selects_through_carves_configuration() {
    let root = fixture("fixtures/typescript/vitest-old");
    let scratch = tempfile::tempdir().unwrap();
    let before = snapshot(&root);
    let command = TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] };
    let request = |tests: Option<Vec<String>>| {
        let mut req = RunRequest::new(&root, command.clone(), scratch.path());
        req.tests = tests;
        req.timeout = Duration::from_secs(300);
        req
    };
    let ids = [
        "tests/format.test.ts > format > humanizes lengths",
        "tests/format.test.ts > format > picks the best unit",
        "tests/format.test.ts > format > rounds to digits",
        "tests/units.test.ts > runs after the project's own set-up file",
        "tests/units.test.ts > units > converts between units",
        "tests/units.test.ts > units > knows its factors",
    ];
    let all = carve_languages::run_tests(&request(None)).unwrap();
    let want: BTreeMap<String, TestStatus> = ids.iter().map(|id| (id.to_string(), Passed)).collect();
    assert_eq!(statuses(&all), want, "{}\n{}", all.stdout_tail, all.stderr_tail);

    let picked = vec![ids[4].to_string(), "tests/units.test.ts > units > no such test".to_string()];
    let some = carve_languages::run_tests(&request(Some(picked.clone()))).unwrap();
    let want: BTreeMap<String, TestStatus> = picked.into_iter().zip([Passed, Missing]).collect();
    assert_eq!(statuses(&some), want, "{}\n{}", some.stdout_tail, some.stderr_tail);

    let collected = carve_languages::collect_tests(&request(None)).unwrap();
    assert_eq!(collected.ids, ids.iter().map(|id| id.to_string()).collect::<BTreeSet<_>>());
    assert_eq!(snapshot(&root), before, "the run wrote into the tree");
}

const MOCHA: &str = "fixtures/javascript/mocha-geometry";

/// The mocha fixture's command, as `carve init` detects it from the test script.
fn mocha_command() -> TestCommand {
    let d = carve_languages::detect(&fixture(MOCHA));
    let command = d.first().map(|d| d.command.clone()).expect("mocha detected");
    let args = ["--require", "./support/setup.js"].map(String::from).to_vec();
    assert_eq!(command, TestCommand::Mocha { package_manager: PackageManager::Npm, args });
    command
}

fn mocha_request(root: &Path, scratch: &Path, tests: Option<Vec<String>>) -> RunRequest {
    let mut req = RunRequest::new(root, mocha_command(), scratch);
    req.tests = tests;
    req.timeout = Duration::from_secs(300);
    req.test_timeout = Duration::from_secs(60);
    req
}

/// The fixture's statuses: `.mocharc.yml`'s `recursive` finds test/nested/, the script's
/// `--require` module runs, a pending test is skipped and a failing `before all` hook is an
/// error for the test it stops.
fn mocha_expected() -> BTreeMap<String, TestStatus> {
    [
        ("test/area.test.js > area > of a circle", Passed),
        ("test/area.test.js > area > of a rectangle", Passed),
        ("test/area.test.js > area > triangle > from base and height", Passed),
        ("test/area.test.js > area > triangle > is zero when flat", Passed),
        ("test/cases.test.js > adds at the top level", Passed),
        ("test/cases.test.js > cases > fails on purpose", Failed),
        ("test/cases.test.js > cases > is skipped", Skipped),
        ("test/cases.test.js > cases > is still to do", Skipped),
        ("test/cases.test.js > cases > broken hook > never runs", TestStatus::Error),
        ("test/nested/units.test.js > units > rounds to digits", Passed),
        ("test/nested/units.test.js > units > converts inches (a.k.a. [in]) to cm", Passed),
        ("test/nested/units.test.js > units > sees the --require module", Passed),
        ("test/perimeter.test.js > perimeter > of a circle", Passed),
        ("test/perimeter.test.js > perimeter > of a rectangle", Passed),
    ]
    .into_iter()
    .map(|(id, s)| (id.to_string(), s))
    .collect()
}

#[carve_testutil::needs("node", "fixtures/javascript/mocha-geometry/node_modules/.bin/mocha")]
fn mocha_whole_suite_and_swebenchs_tap_parser_over_the_eval_command() {
    let root = fixture(MOCHA);
    let scratch = tempfile::tempdir().unwrap();
    let before = snapshot(&root);
    let r = carve_languages::run_tests(&mocha_request(&root, scratch.path(), None)).unwrap();
    assert_eq!(statuses(&r), mocha_expected(), "{}\n{}", r.stdout_tail, r.stderr_tail);
    let failed = &r.statuses["test/cases.test.js > cases > fails on purpose"];
    assert!(failed.message.as_deref().is_some_and(|m| m.contains("equal")), "{failed:?}");
    let hook = &r.statuses["test/cases.test.js > cases > broken hook > never runs"];
    assert!(hook.message.as_deref().is_some_and(|m| m.contains("\"before all\" hook")), "{hook:?}");
    // stdout is mocha's own spec reporter.
    assert!(r.stdout_tail.contains("of a rectangle") && r.stdout_tail.contains("passing"), "{}", r.stdout_tail);
    assert_eq!(snapshot(&root), before, "the run wrote into the tree");
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "the scratch directory was not cleaned");

    // The export's eval command (TAP) read by SWE-bench's parse_log_tap gives every test that
    // ran, under carve's harness ids.
    let command = mocha_command();
    let eval = carve_languages::eval_command(&command, &[]).unwrap();
    let out = std::process::Command::new("sh").args(["-c", &eval]).current_dir(&root).output().unwrap();
    let parsed = harness::parse_log_tap(&String::from_utf8_lossy(&out.stdout));
    for (id, o) in r.statuses.iter().filter(|(_, o)| o.status != TestStatus::Error) {
        let h = harness::harness_id_for(Kind::Mocha, id, o.status).unwrap();
        let want = if o.status == Skipped { Passed } else { o.status };
        assert_eq!(parsed.get(&h), Some(&want), "{id} as {h}: {parsed:?}");
        if o.status != Skipped {
            assert_eq!(carve_languages::harness_id(&command, id), Some(h));
        }
    }
    assert_eq!(snapshot(&root), before, "the eval command wrote into the tree");
}

#[carve_testutil::needs("node", "fixtures/javascript/mocha-geometry/node_modules/.bin/mocha")]
fn mocha_selection_collection_and_a_hung_test() {
    let root = fixture(MOCHA);
    let scratch = tempfile::tempdir().unwrap();
    let requested: Vec<String> = [
        "test/nested/units.test.js > units > converts inches (a.k.a. [in]) to cm",
        "test/perimeter.test.js > perimeter > of a circle",
        "test/cases.test.js > cases > is skipped",
        "test/cases.test.js > cases > fails on purpose",
        "test/area.test.js > area > no such test",
        "test/absent.test.js > x",
    ]
    .map(String::from)
    .to_vec();
    let r = carve_languages::run_tests(&mocha_request(&root, scratch.path(), Some(requested.clone()))).unwrap();
    let want: BTreeMap<String, TestStatus> =
        requested.iter().cloned().zip([Passed, Passed, Skipped, Failed, Missing, Missing]).collect();
    assert_eq!(statuses(&r), want, "{}\n{}", r.stdout_tail, r.stderr_tail);
    assert!(r.command_line.contains("--grep"), "{}", r.command_line);
    // A suite stands for the tests under it.
    let triangle = "test/area.test.js > area > triangle".to_string();
    let r = carve_languages::run_tests(&mocha_request(&root, scratch.path(), Some(vec![triangle.clone()]))).unwrap();
    let want: BTreeSet<String> = mocha_expected().into_keys().filter(|id| id.starts_with(&triangle)).collect();
    assert_eq!(r.statuses.keys().cloned().collect::<BTreeSet<_>>(), want);

    let c = carve_languages::collect_tests(&mocha_request(&root, scratch.path(), None)).unwrap();
    assert_eq!(c.ids, mocha_expected().into_keys().collect::<BTreeSet<_>>());

    // A test that never returns is killed; the tests after it run in a new process.
    let dir = tempfile::tempdir().unwrap();
    let hang = "it(\"before\", () => {});\nit(\"spins\", () => { while (true) {} });\nit(\"after\", () => {});\n";
    let copy = project_with(MOCHA, dir.path(), &[("support/setup.js", ""), ("test/hang.test.js", hang)]);
    let mut req = mocha_request(&copy, scratch.path(), None);
    req.test_timeout = Duration::from_secs(8);
    let r = carve_languages::run_tests(&req).unwrap();
    let got = statuses(&r);
    assert_eq!(got.get("test/hang.test.js > spins"), Some(&Timeout), "{got:?}\n{}", r.stderr_tail);
    assert_eq!(got.get("test/hang.test.js > before"), Some(&Passed), "{got:?}");
    assert_eq!(got.get("test/hang.test.js > after"), Some(&Passed), "{got:?}");
    assert!(r.processes >= 2);
}
