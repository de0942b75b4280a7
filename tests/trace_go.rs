//! The Go tracer end to end on `fixtures/go/shapes`: index a copy, `prepare` the Go shim
//! on a shadow copy of it, run `go test` through carve's Go runner with the setup's
//! environment and arguments, read the trace as carve does, and check what specific tests
//! ran, who called whom, the `<import>` pseudo-test, and that the probed tree still builds
//! with every line where it was.

mod common;

use carve_languages::DefinitionIndex;
use carve_languages::runner::{RunRequest, RunResult, TestCommand, TestStatus};
use carve_languages::trace::{TraceMode, TraceRequest, TraceSetup};
use carve_tracer::trace::{Caller, Trace};
use common::*;
use std::path::{Path, PathBuf};

struct Traced {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    tree: PathBuf,
    trace: Trace,
    statuses: std::collections::BTreeMap<String, TestStatus>,
}

fn trace_fixture(mode: TraceMode) -> Traced {
    let (tmp, repo) = fixture_copy("go/shapes");
    let run = run_traced(tmp.path(), &repo, mode);
    assert!(run.setup.notes.is_empty(), "{:?}", run.setup.notes);
    assert_eq!(run.setup.args, ["-p", "1", "-parallel", "1"]);
    let statuses = run.result.statuses.iter().map(|(id, o)| (id.clone(), o.status)).collect();
    Traced { _tmp: tmp, repo, tree: run.tree, trace: run.trace, statuses }
}

/// A traced `go test` of `repo`, as carve runs it: the repository indexed, the Go shim
/// prepared in `mode` on a copy of it (`<dir>/tree`), `go test` run there with the setup's
/// environment and arguments, and the trace read back.
struct GoRun {
    setup: TraceSetup,
    tree: PathBuf,
    result: RunResult,
    trace: Trace,
}

fn run_traced(dir: &Path, repo: &Path, mode: TraceMode) -> GoRun {
    let index = DefinitionIndex::build(repo, &Default::default()).unwrap();
    let tree = dir.join("tree");
    copy_dir(repo, &tree);
    let (shim_dir, trace_dir) = (dir.join("shim"), dir.join("trace"));
    let req =
        TraceRequest { index: &index, repo, tree: &tree, shim_dir: &shim_dir, trace_dir: &trace_dir, mode, env: &[] };
    let setup = carve_languages::go::trace::shim().prepare(&req).unwrap();
    let command = TestCommand::GoTest { args: Vec::new(), packages: None };
    let mut run = RunRequest::new(&tree, command, dir.join("scratch"));
    run.env = setup.env.clone();
    run.extra_args = setup.args.clone();
    std::fs::create_dir_all(&run.scratch).unwrap();
    let result = carve_languages::run_tests(&run).unwrap();
    let trace = Trace::read_dir(&trace_dir).unwrap();
    GoRun { setup, tree, result, trace }
}

fn edge(caller: &str, callee: &str) -> (Caller, String) {
    (Caller::parse(caller), callee.to_string())
}

#[needs("go")]
fn go_tests_are_traced_per_test_with_callers_and_import_time_code() {
    let t = trace_fixture(TraceMode::FirstHits);
    // Every test passes under the probes, and every test the runner reports has a record
    // under exactly the runner's id (subtests included).
    assert!(t.statuses.len() > 25, "{:?}", t.statuses);
    for (id, status) in &t.statuses {
        assert_eq!(*status, TestStatus::Passed, "{id}");
        assert!(t.trace.test(id).is_some(), "no trace record for {id}: {:?}", t.trace.tests.keys());
    }
    assert!(t.trace.partial.is_empty(), "{:?}", t.trace.partial);

    let total = t.trace.test("example.com/shapes/catalog/TestTotalAreaAndLargest").unwrap();
    for hit in ["catalog/catalog.go::Catalog.TotalArea", "stats/stats.go::Sum", "geometry/shape.go::Circle.Area"] {
        assert!(total.hits.contains(hit), "{hit} not in {:?}", total.hits);
    }
    assert!(!total.hits.contains("catalog/catalog.go::Catalog.Report"));
    for (caller, callee) in [
        ("catalog/catalog_test.go::TestTotalAreaAndLargest", "catalog/catalog.go::Catalog.TotalArea"),
        // A helper in a test file is named as the caller.
        ("catalog/catalog_test.go::sample", "catalog/catalog.go::New"),
        ("catalog/catalog.go::Catalog.TotalArea", "stats/stats.go::Sum"),
        ("geometry/shape.go::Rect.Area", "geometry/shape.go::Rect.Width"),
        // Code in a function literal counts as the definition it is written in.
        ("catalog/catalog.go::Catalog.TotalArea", "geometry/shape.go::Circle.Area"),
    ] {
        assert!(total.edges.contains(&edge(caller, callee)), "{caller} -> {callee} not in {:?}", total.edges);
    }

    // Subtests are attributed to their own ids; the parent holds only what it ran itself
    // (the catalog its subtests share), not what they ran.
    let sub = t.trace.test("example.com/shapes/catalog/TestSelect/above_one").unwrap();
    assert!(sub.hits.contains("catalog/catalog.go::LargerThan"), "{:?}", sub.hits);
    let parent = t.trace.test("example.com/shapes/catalog/TestSelect").unwrap();
    assert!(parent.hits.contains("catalog/catalog.go::Catalog.Add"), "{:?}", parent.hits);
    assert!(!parent.hits.contains("catalog/catalog.go::LargerThan"), "{:?}", parent.hits);
    let report = t.trace.test("example.com/shapes/catalog/TestReport").unwrap();
    assert!(!report.hits.contains("catalog/catalog.go::LargerThan"), "{:?}", report.hits);

    // A test whose work runs on a goroutine still gets it.
    let goroutine = t.trace.test("example.com/shapes/geometry/TestUnitShapeOnAGoroutine").unwrap();
    assert!(goroutine.hits.contains("geometry/registry.go::UnitShape"), "{:?}", goroutine.hits);
    assert!(goroutine.hits.contains("geometry/shape.go::Rect.Area"));

    // init() and package-level var initialisers run at load time: <import>, not a test.
    let import = t.trace.test("<import>").expect("an <import> record");
    for hit in ["geometry/registry.go::init", "geometry/registry.go::Register", "geometry/registry.go::defaultUnit"] {
        assert!(import.hits.contains(hit), "{hit} not in <import>: {:?}", import.hits);
    }
    assert!(import.edges.contains(&edge("<module>geometry/registry.go", "geometry/registry.go::defaultUnit")));
    assert!(import.edges.contains(&edge("geometry/registry.go::init", "geometry/registry.go::Register")));
    let kinds = t.trace.test("example.com/shapes/geometry/TestKinds").unwrap();
    assert!(kinds.hits.contains("geometry/registry.go::Kinds"));
    assert!(!kinds.hits.contains("geometry/registry.go::init"), "{:?}", kinds.hits);

    // Every hit is a node id of the index.
    let index = DefinitionIndex::build(&t.repo, &Default::default()).unwrap();
    for (id, test) in &t.trace.tests {
        for hit in &test.hits {
            assert!(index.get(hit).is_some(), "{id}: {hit} is not a node id");
        }
    }

    // The probed tree keeps every line where it was and still builds and vets; the
    // repository is untouched.
    for path in index.files.keys() {
        let old = std::fs::read_to_string(t.repo.join(path)).unwrap();
        let new = std::fs::read_to_string(t.tree.join(path)).unwrap();
        assert_eq!(old.lines().count(), new.lines().count(), "{path}");
        if path == "catalog/catalog.go" {
            assert_ne!(old, new, "catalog.go was not probed");
        }
    }
    assert!(!t.repo.join("internal/carveprobe").exists());
    for args in [&["build", "./..."][..], &["vet", "./..."]] {
        let out = std::process::Command::new("go").args(args).current_dir(&t.tree).output().unwrap();
        assert!(out.status.success(), "go {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[needs("go")]
fn exact_mode_records_the_same_tests() {
    let exact = trace_fixture(TraceMode::Exact);
    assert_eq!(exact.trace.mode, carve_tracer::trace::TraceMode::Exact);
    let first = trace_fixture(TraceMode::FirstHits);
    assert_eq!(first.trace.mode, carve_tracer::trace::TraceMode::FirstHits);
    assert_eq!(exact.trace.tests.keys().collect::<Vec<_>>(), first.trace.tests.keys().collect::<Vec<_>>());
    // Hits do not depend on the mode; exact edges include the first-hits ones.
    for (id, t) in &exact.trace.tests {
        let f = &first.trace.tests[id];
        assert_eq!(t.hits, f.hits, "{id}");
        assert!(t.edges.is_superset(&f.edges), "{id}");
    }
}

/// `carve trace` on a Go module: the pipeline prepares the shim, runs the tests traced and
/// writes the merged trace; the repository is untouched; `carve baseline` on a module
/// whose tests fail `go vet` is an error naming the package and the fix.
#[needs("go")]
fn carve_trace_and_baseline_on_go_modules() {
    let (_tmp, repo) = fixture_copy("go/shapes");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let o = carve_ok(&["trace", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json"], 0);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["native"], true, "{summary}");
    let trace = Trace::read_json(&out.path().join("trace.json")).unwrap();
    let kinds = trace.test("example.com/shapes/geometry/TestKinds").expect("TestKinds traced");
    assert!(kinds.hits.contains("geometry/registry.go::Kinds"), "{:?}", kinds.hits);
    assert!(trace.test("<import>").is_some_and(|t| t.hits.contains("geometry/registry.go::init")));
    assert_eq!(before, tree_snapshot(&repo), "carve trace modified the repository");

    let (_tmp, repo) = fixture_copy("go/vet-fails");
    let out = tempfile::tempdir().unwrap();
    let o = carve_ok(&["baseline", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()], 2);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("example.com/vetfails/greet") && stderr.contains("-vet=off"), "{stderr}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("0 flaky"));
}

/// A package with its own `TestMain` (set-up code, `os.Exit(m.Run())`) and parallel
/// subtests: the set-up is `<import>`, the file is complete (the `end` record is written
/// before `os.Exit`), and each parallel subtest gets what it ran, not its siblings' work (nor
/// its parent).
#[needs("go")]
fn test_main_and_parallel_subtests_are_attributed() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let files = [
        ("go.mod", "module example.com/par\n\ngo 1.22\n"),
        (
            "par/par.go",
            "package par\n\n// Setup prepares.\nfunc Setup() int { return 1 }\n\n// A is a.\nfunc A() int { return 1 }\n\n\
             // B is b.\nfunc B() int { return 2 }\n",
        ),
        (
            "par/par_test.go",
            "package par\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tSetup()\n\
             \tos.Exit(m.Run())\n}\n\nfunc TestPar(t *testing.T) {\n\tt.Run(\"a\", func(t *testing.T) {\n\t\tt.Parallel()\n\
             \t\tA()\n\t})\n\tt.Run(\"b\", func(t *testing.T) {\n\t\tt.Parallel()\n\t\tB()\n\t})\n}\n",
        ),
    ];
    write_files(&repo, &files);
    let GoRun { tree, result, trace, .. } = run_traced(tmp.path(), &repo, TraceMode::FirstHits);
    assert!(!tree.join("par").join(carve_languages::go::trace::MAIN_FILE).exists(), "the package has a TestMain");
    assert!(result.statuses.values().all(|o| o.status == TestStatus::Passed), "{:?}", result.statuses);
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    assert!(trace.test("<import>").unwrap().hits.contains("par/par.go::Setup"));
    let a = &trace.test("example.com/par/par/TestPar/a").unwrap().hits;
    let b = &trace.test("example.com/par/par/TestPar/b").unwrap().hits;
    assert!(a.contains("par/par.go::A") && !a.contains("par/par.go::B"), "{a:?}");
    assert!(b.contains("par/par.go::B") && !b.contains("par/par.go::A"), "{b:?}");
    // The parent ran nothing itself: its record is empty, not its subtests' work.
    let parent = &trace.test("example.com/par/par/TestPar").unwrap().hits;
    assert!(!parent.contains("par/par.go::A") && !parent.contains("par/par.go::B"), "{parent:?}");
}

/// spf13/cast's `cast_test.go` form: example functions have no `*testing.T` to mark, so
/// each is current from its entry to its return (`E`), and its record carries the id
/// `go test` reports for it (`pkg/Example`, `pkg/ExampleDouble`), which baseline reports.
#[needs("go")]
fn example_functions_are_attributed_by_their_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let files = [
        ("go.mod", "module example.com/ex\n\ngo 1.22\n"),
        (
            "ex.go",
            "package ex\n\n// Double doubles.\nfunc Double(n int) int { return 2 * n }\n\n// Half halves.\nfunc Half(n int) int { return n / 2 }\n",
        ),
        (
            "ex_test.go",
            "package ex_test\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n\n\t\"example.com/ex\"\n)\n\nfunc Example() {\n\tfmt.Println(ex.Double(2))\n\
             \t// Output: 4\n}\n\nfunc ExampleHalf() {\n\tfmt.Println(ex.Half(4))\n\t// Output: 2\n}\n\n\
             func TestHalf(t *testing.T) {\n\tif ex.Half(2) != 1 {\n\t\tt.Fatal(\"half\")\n\t}\n}\n",
        ),
    ];
    write_files(&repo, &files);
    let GoRun { result, trace, .. } = run_traced(tmp.path(), &repo, TraceMode::FirstHits);
    let ids: Vec<&str> = result.statuses.keys().map(String::as_str).collect();
    assert_eq!(ids, ["example.com/ex/Example", "example.com/ex/ExampleHalf", "example.com/ex/TestHalf"]);
    assert!(result.statuses.values().all(|o| o.status == TestStatus::Passed), "{:?}", result.statuses);
    assert!(trace.partial.is_empty(), "{:?}", trace.partial);
    let example = &trace.test("example.com/ex/Example").expect("the example is traced").hits;
    assert!(example.contains("ex.go::Double") && !example.contains("ex.go::Half"), "{example:?}");
    let half = &trace.test("example.com/ex/ExampleHalf").expect("the example is traced").hits;
    assert!(half.contains("ex.go::Half") && !half.contains("ex.go::Double"), "{half:?}");
    assert!(!trace.test("<import>").is_some_and(|t| t.hits.contains("ex.go::Double")));
}
