//! End-to-end tracing of the TypeScript fixture (`fixtures/typescript/ledger`) with the real
//! vitest: index, probe a shadow copy with the TypeScript shim, run the suite through
//! carve's runner with the shim's environment, and read the trace as carve does.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use carve_languages::DefinitionIndex;
use carve_languages::runner::{RunRequest, TestCommand, TestStatus};
use carve_languages::trace::{TraceMode, TraceRequest, TraceShim};
use carve_languages::typescript::runner::PackageManager;
use carve_tracer::trace::{Caller, IMPORT_TEST, Trace};
use common::*;

fn has_dependencies(fixture: &str) -> bool {
    let manifest = carve_testutil::workspace_root().join("fixtures").join(fixture).join("package.json");
    std::fs::read_to_string(manifest).is_ok_and(|m| m.contains("Dependencies"))
}

/// `cp -al` of a fixture's installed node_modules next to a copy of its sources.
fn link_node_modules(fixture: &str, dest: &Path) {
    let from = carve_testutil::workspace_root().join("fixtures").join(fixture).join("node_modules");
    let ok = std::process::Command::new("cp").arg("-al").arg(&from).arg(dest.join("node_modules")).status().unwrap();
    assert!(ok.success(), "cp -al {}", from.display());
}

struct Traced {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    tree: PathBuf,
    index: DefinitionIndex,
    statuses: std::collections::BTreeMap<String, TestStatus>,
    trace: Trace,
}

/// Index a copy of `fixture`, probe a second copy, run `command` there under the shim.
fn trace_fixture(fixture: &str, command: TestCommand, mode: TraceMode) -> Traced {
    trace_fixture_with(fixture, command, mode, &[])
}

/// [`trace_fixture`] with `extra` files written into both copies first.
fn trace_fixture_with(fixture: &str, command: TestCommand, mode: TraceMode, extra: &[(&str, &str)]) -> Traced {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let tree = tmp.path().join("tree");
    for dest in [&repo, &tree] {
        copy_dir(&carve_testutil::workspace_root().join("fixtures").join(fixture), dest);
        if has_dependencies(fixture) {
            link_node_modules(fixture, dest);
        }
        for (path, text) in extra {
            std::fs::write(dest.join(path), text).unwrap();
        }
    }
    let index = DefinitionIndex::build(&repo, &Default::default()).unwrap();
    let (shim_dir, trace_dir) = (tmp.path().join("shim"), tmp.path().join("trace"));
    let req = TraceRequest {
        index: &index,
        repo: &repo,
        tree: &tree,
        shim_dir: &shim_dir,
        trace_dir: &trace_dir,
        mode,
        env: &[],
    };
    let shim = &carve_languages::typescript::trace::SHIM;
    let setup = shim.prepare(&req).unwrap();
    let mut run = RunRequest::new(&tree, command, tmp.path().join("scratch"));
    run.env = setup.env.clone();
    // The runner fixtures' flaky test counts its runs outside the tree.
    run.env.push(("CARVE_FLAKY_DIR".into(), tmp.path().display().to_string()));
    run.extra_args = setup.args.clone();
    let result = carve_languages::typescript::runner::run(&run).unwrap();
    let statuses = result.statuses.iter().map(|(id, o)| (id.clone(), o.status)).collect();
    let trace = Trace::read_dir(&trace_dir).unwrap();
    Traced { _tmp: tmp, repo, tree, index, statuses, trace }
}

fn edge(caller: &str, callee: &str) -> (Caller, String) {
    (Caller::parse(caller), callee.to_string())
}

const KEEPS_CENTS: &str = "tests/money.test.ts > Money > keeps cents exactly";
const LISTS: &str = "tests/reports.spec.ts > Report > lists accounts sorted by id";
const CHILD: &str = "tests/cli.test.ts > the total command sums its arguments in a child process";
const SAVINGS: &str = "src/accounts/__tests__/savings.test.ts > savings accrue interest";

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn vitest_trace_attributes_hits_and_edges_per_test() {
    let vitest = TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] };
    let t = trace_fixture("typescript/ledger", vitest, TraceMode::FirstHits);
    assert!(
        t.statuses.values().all(|s| *s == TestStatus::Passed),
        "every test passes under the shim: {:?}",
        t.statuses
    );
    // The trace names exactly the runner's test ids, plus `<import>`.
    let traced: BTreeSet<&String> = t.trace.tests.keys().filter(|k| *k != IMPORT_TEST).collect();
    let ran: BTreeSet<&String> = t.statuses.keys().collect();
    assert_eq!(traced, ran);
    assert!(!t.trace.is_partial(), "{:?}", t.trace.partial);

    let cents = t.trace.test(KEEPS_CENTS).unwrap();
    for hit in [
        "src/money/money.ts::Money.constructor",
        "src/money/money.ts::Money.plus",
        "src/money/money.ts::Money.valueIn",
        "src/money/money.ts::Money.format",
    ] {
        assert!(cents.hits.contains(hit), "{KEEPS_CENTS} must hit {hit}: {:?}", cents.hits);
    }
    assert!(!cents.hits.iter().any(|h| h.contains("ledger.ts") || h.contains("summary.ts")), "{:?}", cents.hits);
    assert!(cents.hits.iter().all(|h| !t.index.definitions[h].is_test), "test code records no hits");
    assert!(
        cents.edges.contains(&edge("tests/money.test.ts::Money.keeps cents exactly", "src/money/money.ts::Money.plus"))
    );
    assert!(cents.edges.contains(&edge("src/money/money.ts::Money.plus", "src/money/money.ts::Money.valueIn")));

    let lists = t.trace.test(LISTS).unwrap();
    assert!(lists.edges.contains(&edge("tests/reports.spec.ts::sampleLedger", "src/accounts/ledger.ts::Ledger.open")));
    // The arrow inside `Report.lines` counts as `Report.lines`.
    assert!(lists.edges.contains(&edge("src/reports/summary.ts::Report.lines", "src/accounts/ledger.ts::Ledger.get")));
    assert!(lists.edges.contains(&edge("src/reports/summary.ts::Report.byKind", "src/util/collections.ts::groupBy")));
    assert!(!lists.hits.contains("src/reports/summary.ts::renderTable"));

    // A decorated method is reached through the decorator's wrapper (code of `logged`).
    let savings = t.trace.test(SAVINGS).unwrap();
    assert!(
        savings
            .edges
            .contains(&edge("src/accounts/account.ts::SavingsAccount.accrue", "src/util/decorators.ts::logged"))
    );
    assert!(
        savings.edges.contains(&edge("src/util/decorators.ts::logged", "src/accounts/account.ts::BaseAccount.deposit"))
    );

    // Decorators run when their module loads: `<import>`, called from the module's code.
    let import = t.trace.test(IMPORT_TEST).unwrap();
    assert!(
        import.edges.contains(&edge("<module>src/accounts/account.ts", "src/util/decorators.ts::logged")),
        "{:?}",
        import.edges
    );
    assert!(!cents.hits.contains("src/util/decorators.ts::logged"), "load-time code is not the test's");

    // A child process a test starts records under that test, its module code included.
    let cli = t.trace.test(CHILD).unwrap();
    assert!(cli.hits.contains("src/cli/total.mjs::total"), "{:?}", cli.hits);
    assert!(cli.edges.contains(&edge("<module>src/cli/total.mjs", "src/cli/total.mjs::main")));
    assert!(!t.trace.test(IMPORT_TEST).unwrap().hits.contains("src/cli/total.mjs::total"));

    // Probed files keep their lines and still type-check; the repository is untouched.
    for path in t.index.files.keys() {
        let (before, after) =
            (std::fs::read_to_string(t.repo.join(path)).unwrap(), std::fs::read_to_string(t.tree.join(path)).unwrap());
        // Declaration files hold no code: they are never probed.
        assert_eq!(after.contains("__carve_"), !path.ends_with(".d.ts"), "{path} is probed unless a .d.ts");
        for (i, (a, b)) in before.lines().zip(after.lines()).enumerate() {
            let mut rest = b.chars();
            assert!(a.chars().all(|c| rest.any(|p| p == c)), "{path}:{}: `{a}` became `{b}`", i + 1);
        }
    }
    carve_languages::typescript::build_check(&t.tree).expect("the probed tree type-checks");
    assert!(std::fs::read_to_string(t.repo.join("src/money/money.ts")).unwrap().find("__carve").is_none());
}

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn exact_mode_records_every_caller() {
    let vitest = TestCommand::Vitest { package_manager: PackageManager::Npm, args: vec![] };
    let t = trace_fixture("typescript/ledger", vitest, TraceMode::Exact);
    assert_eq!(t.trace.mode, carve_tracer::trace::TraceMode::Exact);
    let cents = t.trace.test(KEEPS_CENTS).unwrap();
    // `new Money` is called by the test and by `plus`: both callers are kept.
    assert!(
        cents
            .edges
            .contains(&edge("tests/money.test.ts::Money.keeps cents exactly", "src/money/money.ts::Money.constructor"))
    );
    assert!(cents.edges.contains(&edge("src/money/money.ts::Money.plus", "src/money/money.ts::Money.constructor")));
}

/// What every runner's trace must hold: one record per test that ran, under exactly the
/// id the runner reported (node:test runs the hooks of a `todo` test, which it reports as
/// skipped: such a record is a reported id too).
fn assert_ids_are_the_runners(t: &Traced) {
    assert!(!t.trace.is_partial(), "{:?}", t.trace.partial);
    let traced: BTreeSet<&String> = t.trace.tests.keys().filter(|k| *k != IMPORT_TEST).collect();
    let ran: BTreeSet<&String> = t
        .statuses
        .iter()
        .filter(|(_, s)| matches!(s, TestStatus::Passed | TestStatus::Failed))
        .map(|(id, _)| id)
        .collect();
    let reported: BTreeSet<&String> = t.statuses.keys().collect();
    assert!(ran.is_subset(&traced), "untraced: {:?}", ran.difference(&traced).collect::<Vec<_>>());
    assert!(
        traced.is_subset(&reported),
        "not the runner's ids: {:?}",
        traced.difference(&reported).collect::<Vec<_>>()
    );
}

#[needs("node", "fixtures/javascript/runner-cases-jest/node_modules")]
fn jest_trace_attributes_hits_per_test_with_the_runners_ids() {
    let jest = TestCommand::Jest { package_manager: PackageManager::Npm, args: vec![] };
    let t = trace_fixture("javascript/runner-cases-jest", jest, TraceMode::FirstHits);
    assert_ids_are_the_runners(&t);
    let divides = t.trace.test("tests/math.test.js > divide > divides").unwrap();
    assert!(divides.hits.contains("src/math.js::divide"), "{:?}", divides.hits);
    assert!(!divides.hits.contains("src/math.js::add"), "{:?}", divides.hits);
    assert!(divides.edges.contains(&edge("tests/math.test.js::divide.divides", "src/math.js::divide")));
    // Nested describe blocks and `it.each` titles are part of the id, as jest reports them.
    let each = t.trace.test("tests/math.test.js > divide > edge cases > divide(9, 3) = 3").unwrap();
    assert!(each.hits.contains("src/math.js::divide"));
    let adds = t.trace.test("tests/math.test.js > adds two numbers").unwrap();
    assert!(adds.hits.contains("src/math.js::add") && !adds.hits.contains("src/math.js::divide"));
    // A failing test is traced as well; the same title in another file is another test.
    assert!(t.trace.test("tests/math.test.js > fails on purpose").unwrap().hits.contains("src/math.js::add"));
    let other = t.trace.test("tests/nested/flaky.test.js > same name > adds two numbers").unwrap();
    assert!(!other.hits.contains("src/math.js::add"), "{:?}", other.hits);
}

#[needs("node")]
fn node_test_trace_attributes_hits_per_test_and_subtest() {
    let node = TestCommand::NodeTest { package_manager: PackageManager::Npm, args: vec![] };
    let t = trace_fixture("javascript/runner-cases-node", node, TraceMode::FirstHits);
    assert_ids_are_the_runners(&t);
    let divides = t.trace.test("test/math.test.js > divide > divides").unwrap();
    assert!(divides.hits.contains("src/math.js::divide") && !divides.hits.contains("src/math.js::add"));
    let deep = t.trace.test("test/math.test.js > divide > edge cases > divide(1, 4) = 0.25").unwrap();
    assert!(deep.hits.contains("src/math.js::divide"));
    let adds = t.trace.test("test/math.test.js > adds two numbers").unwrap();
    assert!(adds.hits.contains("src/math.js::add") && !adds.hits.contains("src/math.js::divide"));
    // A subtest records into its own id while it runs; its parent is a test of its own.
    assert!(t.trace.test("test/math.test.js > subtests > first").is_some());
    assert!(t.trace.test("test/math.test.js > subtests").is_some());
}

#[needs("node", "fixtures/javascript/runner-cases-jest/node_modules")]
fn jest_trace_keeps_the_projects_own_setup_files() {
    // carve's set-up file goes first on jest's command line, which replaces the configured
    // list: the project's own file must still run.
    let manifest = r#"{"name":"with-setup","private":true,"scripts":{"test":"jest"},
        "jest":{"setupFilesAfterEnv":["<rootDir>/tests/own-setup.js"]},"devDependencies":{"jest":"29.7.0"}}"#;
    let extra = [
        ("package.json", manifest),
        ("tests/own-setup.js", "globalThis.projectSetupRan = true;\n"),
        (
            "tests/own-setup.test.js",
            "const { add } = require(\"../src/math\");\ntest(\"sees the project's set-up\", () => {\n  expect(globalThis.projectSetupRan).toBe(true);\n  expect(add(1, 1)).toBe(2);\n});\n",
        ),
    ];
    let jest = TestCommand::Jest { package_manager: PackageManager::Npm, args: vec![] };
    let t = trace_fixture_with("javascript/runner-cases-jest", jest, TraceMode::FirstHits, &extra);
    let id = "tests/own-setup.test.js > sees the project's set-up";
    assert_eq!(t.statuses.get(id), Some(&TestStatus::Passed), "{:?}", t.statuses);
    assert!(t.trace.test(id).unwrap().hits.contains("src/math.js::add"));
}

#[needs("node", "fixtures/javascript/mocha-geometry/node_modules")]
fn mocha_trace_attributes_hits_per_test_with_the_reporters_ids() {
    let args = ["--require", "./support/setup.js"].map(String::from).to_vec();
    let mocha = TestCommand::Mocha { package_manager: PackageManager::Npm, args };
    let t = trace_fixture("javascript/mocha-geometry", mocha, TraceMode::FirstHits);
    assert_ids_are_the_runners(&t);
    let circle = t.trace.test("test/area.test.js > area > of a circle").unwrap();
    assert!(circle.hits.contains("lib/area.js::circleArea") && circle.hits.contains("lib/units.js::round"));
    assert!(!circle.hits.contains("lib/area.js::rectangleArea"), "{:?}", circle.hits);
    assert!(circle.edges.contains(&edge("lib/area.js::circleArea", "lib/units.js::round")));
    let flat = t.trace.test("test/area.test.js > area > triangle > is zero when flat").unwrap();
    assert!(flat.edges.contains(&edge("lib/area.js::triangleArea", "lib/area.js::halve")), "{:?}", flat.edges);
    // The suite/test names (tdd-style) and a nested folder are the same kind of id.
    let perimeter = t.trace.test("test/perimeter.test.js > perimeter > of a rectangle").unwrap();
    assert!(perimeter.hits.contains("lib/perimeter.js::sumOfSides"), "{:?}", perimeter.hits);
    assert!(!perimeter.hits.contains("lib/perimeter.js::circlePerimeter"));
    let inches = t.trace.test("test/nested/units.test.js > units > converts inches (a.k.a. [in]) to cm").unwrap();
    assert!(inches.hits.contains("lib/units.js::inchesToCm") && !inches.hits.contains("lib/area.js::circleArea"));
    // A failing test is traced too; the test a hook stopped ran nothing of its own.
    assert!(
        t.trace
            .test("test/cases.test.js > cases > fails on purpose")
            .unwrap()
            .hits
            .contains("lib/area.js::rectangleArea")
    );
    assert!(t.trace.test("test/cases.test.js > cases > broken hook > never runs").is_none());
}
