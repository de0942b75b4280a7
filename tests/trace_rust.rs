//! The Rust tracer end to end on `fixtures/rust/geometry`: index a copy, `prepare` the Rust
//! shim on a shadow copy, run the tests through carve's cargo runner (`cargo test
//! --test-threads=1`, and, in a test of its own, cargo-nextest's one process per test) with the
//! setup's environment, read the trace as carve does, and check per-test hits under
//! exactly the runner's ids, who called whom, the `<import>` pseudo-test for a `LazyLock`
//! initialiser, a test whose work runs on a thread it spawns, and that the probed tree kept
//! every line and still builds.

mod common;

use carve_languages::DefinitionIndex;
use carve_languages::runner::{RunRequest, TestCommand, TestStatus};
use carve_languages::trace::{TraceMode, TraceRequest};
use carve_tracer::trace::{Caller, Trace};
use common::*;
use std::path::Path;

fn edge(caller: &str, callee: &str) -> (Caller, String) {
    (Caller::parse(caller), callee.to_string())
}

#[needs("cargo")]
fn rust_tests_are_traced_per_test_under_cargo_test() {
    traced_per_test(false);
}

#[needs("cargo", "cargo-nextest")]
fn rust_tests_are_traced_per_test_under_nextest() {
    traced_per_test(true);
}

/// A copy of `fixtures/<rel>` probed by the Rust shim in `<tmp>/tree`, with the folders a
/// traced run needs and the shim's set-up.
struct Probed {
    tmp: tempfile::TempDir,
    repo: std::path::PathBuf,
    index: DefinitionIndex,
    tree: std::path::PathBuf,
    trace_dir: std::path::PathBuf,
    scratch: std::path::PathBuf,
    setup: carve_languages::trace::TraceSetup,
}

fn probed(rel: &str) -> Probed {
    probed_in(rel, &[], |_, _| {})
}

/// [`probed`] with the variables of an environment, whose files `link` puts into the copy
/// (given the temporary folder and the copy) before the shim installs.
fn probed_in(rel: &str, env: &[(String, String)], link: impl FnOnce(&Path, &Path)) -> Probed {
    let (tmp, repo) = fixture_copy(rel);
    let index = DefinitionIndex::build(&repo, &Default::default()).unwrap();
    let tree = tmp.path().join("tree");
    copy_dir(&repo, &tree);
    link(tmp.path(), &tree);
    let (shim_dir, trace_dir, scratch) = (tmp.path().join("shim"), tmp.path().join("trace"), tmp.path().join("s"));
    std::fs::create_dir_all(&scratch).unwrap();
    let shim = carve_languages::support(carve_languages::Language::Rust).trace_shim().expect("a Rust shim");
    let req = TraceRequest {
        index: &index,
        repo: &repo,
        tree: &tree,
        shim_dir: &shim_dir,
        trace_dir: &trace_dir,
        mode: TraceMode::FirstHits,
        env,
    };
    let setup = shim.prepare(&req).unwrap();
    std::fs::create_dir_all(&trace_dir).unwrap();
    Probed { tmp, repo, index, tree, trace_dir, scratch, setup }
}

/// Probe a copy of `fixtures/rust/geometry`, run its suite under cargo test or nextest with
/// the shim's environment, and check the trace, the line numbers and the untouched repository.
fn traced_per_test(nextest: bool) {
    let Probed { tmp: _tmp, repo, index, tree, trace_dir, scratch, setup } = probed("rust/geometry");
    assert!(setup.notes.is_empty(), "{:?}", setup.notes);
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace: false, nextest };
    let mut run = RunRequest::new(&tree, command, scratch.clone());
    run.env = vec![
        ("CARVE_TRACE_DIR".into(), trace_dir.display().to_string()),
        ("CARVE_TRACE_MODE".into(), "first-hits".into()),
    ];
    let result = carve_languages::run_tests(&run).unwrap();
    let trace = Trace::read_dir(&trace_dir).unwrap();
    check(&trace, &result.statuses, &index, nextest);

    // Every line where it was; the repository untouched; the probed copy builds.
    for path in index.files.keys().filter(|p| p.ends_with(".rs")) {
        let old = std::fs::read_to_string(repo.join(path)).unwrap();
        let new = std::fs::read_to_string(tree.join(path)).unwrap();
        assert_eq!(old.lines().count(), new.lines().count(), "{path}");
        if path == "src/report.rs" {
            assert_ne!(old, new, "report.rs was not probed");
        }
    }
    assert!(!std::fs::read_to_string(repo.join("Cargo.toml")).unwrap().contains("carve_probe"));
}

fn check(
    trace: &Trace,
    statuses: &std::collections::BTreeMap<String, carve_languages::runner::TestOutcome>,
    index: &DefinitionIndex,
    nextest: bool,
) {
    let run = if nextest { "nextest" } else { "cargo test" };
    assert!(statuses.len() >= 12, "{run}: {:?}", statuses.keys());
    assert!(trace.partial.is_empty(), "{run}: {:?}", trace.partial);
    for (id, o) in statuses {
        assert_eq!(o.status, TestStatus::Passed, "{run}: {id}: {:?}", o.message);
        assert!(trace.test(id).is_some(), "{run}: no record for {id}: {:?}", trace.tests.keys());
    }
    for id in trace.tests.keys() {
        assert!(id == "<import>" || statuses.contains_key(id), "{run}: {id} is not a runner id");
    }

    let total = trace.test("geometry::report::tests::total_in_millimetres").unwrap();
    for hit in ["src/report.rs::Report.total_area", "src/units.rs::convert", "src/units.rs::Unit.factor"] {
        assert!(total.hits.contains(hit), "{run}: {hit} not in {:?}", total.hits);
    }
    assert!(!total.hits.contains("src/report.rs::largest"), "{run}");
    for (caller, callee) in [
        // Test code is named as the caller; so is a method calling another.
        ("src/report.rs::tests.total_in_millimetres", "src/report.rs::Report.total_area"),
        ("src/report.rs::Report.total_area", "src/units.rs::convert"),
        ("src/units.rs::convert", "src/units.rs::Unit.factor"),
        // Through `dyn`/generic dispatch and an expression closure: the function it runs in.
        ("src/report.rs::Report.total_area", "src/shapes.rs::Rect.<Shape>.area"),
    ] {
        assert!(total.edges.contains(&edge(caller, callee)), "{run}: {caller} -> {callee} not in {:?}", total.edges);
    }
    let mixed = trace.test("integration::mixed_report").unwrap();
    assert!(mixed.hits.contains("src/report.rs::Report.<Display>.fmt"), "{run}: {:?}", mixed.hits);
    assert!(mixed.edges.contains(&edge("tests/integration.rs::mixed_report", "src/report.rs::Report.add")));

    // The LazyLock initialiser is load-time code: <import>, with the module as first caller.
    let import = trace.test("<import>").expect("an <import> record");
    assert!(import.hits.contains("src/catalog.rs::unit_area"), "{run}: {:?}", import.hits);
    assert!(import.edges.contains(&edge("<module>src/catalog.rs", "src/catalog.rs::unit_area")), "{run}");
    // A test whose work runs on a thread it spawned gets it.
    let threaded = trace.test("catalog::unit_areas_on_a_thread").unwrap();
    assert!(threaded.hits.contains("src/catalog.rs::unit"), "{run}: {:?}", threaded.hits);
    assert!(!threaded.hits.contains("src/catalog.rs::names"), "{run}");

    for (id, test) in &trace.tests {
        for hit in &test.hits {
            assert!(index.get(hit).is_some(), "{run}: {id}: {hit} is not a node id");
        }
    }
}

/// Doctests that are processes of their own (edition < 2024, as most crates on crates.io):
/// each records under carve's doctest id (rustdoc's name without its line), found by the
/// runtime from the `_doctest_main_<file>_<line>` frame and the runner's `CARVE_DOCTESTS`
/// list. Before, bluss/either's 33 doctests recorded nothing and every candidate that
/// held one was rejected with "has no trace".
#[needs("cargo")]
fn doctests_record_under_their_own_ids() {
    let Probed { tmp: _tmp, tree, trace_dir, scratch, .. } = probed("rust/runner-cases");
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace: true, nextest: false };
    let mut run = RunRequest::new(&tree, command, scratch);
    let (add, sign) = ("runner_cases::doctest::src/lib.rs - add", "runner_cases::doctest::src/lib.rs - sign");
    run.tests = Some(vec![add.to_string(), sign.to_string(), "runner_cases::tests::adds".to_string()]);
    run.env = vec![("CARVE_TRACE_DIR".into(), trace_dir.display().to_string())];
    let result = carve_languages::run_tests(&run).unwrap();
    assert_eq!(result.status(add), TestStatus::Passed, "{:?}", result.statuses);
    assert_eq!(result.status(sign), TestStatus::Passed);
    let trace = Trace::read_dir(&trace_dir).unwrap();
    let hits = |id: &str| {
        trace.test(id).map(|t| t.hits.clone()).unwrap_or_else(|| panic!("no record for {id}: {:?}", trace.tests.keys()))
    };
    assert!(hits(add).contains("src/lib.rs::add"), "{:?}", hits(add));
    assert!(!hits(add).contains("src/lib.rs::sign"), "{:?}", hits(add));
    assert!(hits(sign).contains("src/lib.rs::sign"), "{:?}", hits(sign));
    // The doctest's own code is not probed: the first call comes from outside.
    assert!(trace.test(add).unwrap().edges.contains(&edge("<external>", "src/lib.rs::add")));
    assert!(trace.test("runner_cases::tests::adds").is_some());
}

/// Doctests that write their own `fn main` (bluss/either's `try_left`, dtolnay/itoa's crate
/// example): rustdoc wraps them in no `_doctest_main_…` function, so the runtime finds them
/// by the note the shim's linker wrapper writes beside each doctest binary (the file and
/// line rustdoc compiled it for), on `fixtures/rust/doctest-main`: one example rustdoc
/// wraps, one with its own `main`, two of one item four lines apart (each must get its own
/// id), and one that only expands a macro, which reaches no probed code and records
/// nothing (it passes; `carve tasks` leaves it out of a candidate's F2P tests).
#[needs("cargo")]
fn doctests_with_their_own_main_record_under_their_own_ids() {
    let Probed { tmp: _tmp, tree, trace_dir, scratch, setup, .. } = probed("rust/doctest-main");
    assert!(setup.env.iter().any(|(k, v)| k == "CARGO_ENCODED_RUSTDOCFLAGS" && v.contains("carve-doctest-link")));
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace: false, nextest: false };
    let mut run = RunRequest::new(&tree, command, scratch);
    run.env = setup.env.clone();
    let result = carve_languages::run_tests(&run).unwrap();
    let id = |item: &str| format!("doctest_main::doctest::src/lib.rs - {item}");
    for item in ["double", "square", "cube", "cube (example 2)", "bump"] {
        assert_eq!(result.status(&id(item)), TestStatus::Passed, "{item}: {:?}", result.statuses);
    }
    let trace = Trace::read_dir(&trace_dir).unwrap();
    let hits = |item: &str| {
        let t = trace.test(&id(item)).unwrap_or_else(|| panic!("no record for {item}: {:?}", trace.tests.keys()));
        t.hits.iter().cloned().collect::<Vec<_>>()
    };
    assert_eq!(hits("double"), ["src/lib.rs::double"]);
    assert_eq!(hits("square"), ["src/lib.rs::square"]);
    assert_eq!(hits("cube"), ["src/lib.rs::cube"]);
    assert_eq!(hits("cube (example 2)"), ["src/lib.rs::cube", "src/lib.rs::halve"]);
    assert!(trace.test(&id("bump")).is_none(), "{:?}", trace.test(&id("bump")));
    assert_eq!(trace.test("doctest_main::tests::doubles").map(|t| t.hits.len()), Some(1));
}

/// A crate with no `Cargo.lock` of its own, run in an environment `carve env` made (its lock
/// file linked into the copy, its `CARGO_HOME` holding what that lock names): the shim adds
/// its runtime crate to the environment's lock, resolving with the environment's variables,
/// and leaves the environment's file alone. Before, `cargo metadata` resolved a fresh lock
/// from the user's own cargo cache: bluss/arrayvec got `borsh 1.5.7` where the environment
/// had fetched 1.8.1, and every traced run stopped offline ("dependencies are missing").
/// Here the dependency exists only in the environment's vendored source.
#[needs("cargo")]
fn the_probed_crate_resolves_in_its_environment() {
    let lock = "version = 3\n\n[[package]]\nname = \"carve_env_dep\"\nversion = \"0.1.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"env_lock\"\nversion = \"0.1.0\"\ndependencies = [\n \"carve_env_dep\",\n]\n";
    let env_dir = tempfile::tempdir().unwrap();
    let (home, vendor) = (env_dir.path().join("cargo-home"), env_dir.path().join("vendor/carve_env_dep"));
    std::fs::create_dir_all(vendor.join("src")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let replace = format!(
        "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = {:?}\n",
        env_dir.path().join("vendor").display().to_string()
    );
    std::fs::write(home.join("config.toml"), replace).unwrap();
    std::fs::write(
        vendor.join("Cargo.toml"),
        "[package]\nname = \"carve_env_dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(vendor.join("src/lib.rs"), "pub fn twice(x: u32) -> u32 { x * 2 }\n").unwrap();
    std::fs::write(vendor.join(".cargo-checksum.json"), "{\"files\":{},\"package\":null}").unwrap();
    let env_lock = env_dir.path().join("Cargo.lock");
    std::fs::write(&env_lock, lock).unwrap();
    let vars = vec![
        ("CARGO_HOME".to_string(), home.display().to_string()),
        ("CARGO_NET_OFFLINE".to_string(), "true".to_string()),
    ];
    let Probed { tmp: _tmp, tree, trace_dir, scratch, setup, .. } =
        probed_in("rust/env-lock", &vars, |_, tree| std::fs::hard_link(&env_lock, tree.join("Cargo.lock")).unwrap());
    assert_eq!(std::fs::read_to_string(&env_lock).unwrap(), lock, "the environment's lock file was rewritten");
    assert!(std::fs::read_to_string(tree.join("Cargo.lock")).unwrap().contains("carve_probe"));
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace: false, nextest: false };
    let mut run = RunRequest::new(&tree, command, scratch);
    run.env = [vars, setup.env.clone()].concat();
    let result = carve_languages::run_tests(&run).unwrap();
    assert_eq!(result.status("double::doubles"), TestStatus::Passed, "{:?}", result.statuses);
    let trace = Trace::read_dir(&trace_dir).unwrap();
    assert!(trace.test("double::doubles").is_some_and(|t| t.hits.contains("src/lib.rs::double")));
}

/// `const fn`s (`fixtures/rust/const-fns`): one that only run-time code calls loses `const`
/// in the traced copy and is probed, so the tests and the doctest that run it record it;
/// those a const context calls (a `static`, an associated `const`, a doctest's `const` item,
/// and a kept `const fn`'s callee) stay `const` and the copy builds with every test passing.
/// Before, no `const fn` was ever probed: bluss/arrayvec's `remaining_capacity` (a `const fn`
/// its commit added with a doctest) was "not reached by the F2P tests".
#[needs("cargo")]
fn const_fns_that_only_run_time_code_calls_are_traced() {
    let Probed { tmp: _tmp, tree, trace_dir, scratch, setup, .. } = probed("rust/const-fns");
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace: true, nextest: false };
    let mut run = RunRequest::new(&tree, command, scratch);
    run.env = setup.env.clone();
    let result = carve_languages::run_tests(&run).unwrap();
    let (doc, counts) = ("const_fns::doctest::src/lib.rs - Slots::remaining", "slots::counts_what_is_left");
    for id in [doc, counts, "slots::stops_when_full", "const_fns::doctest::src/lib.rs - in_doctest"] {
        assert_eq!(result.status(id), TestStatus::Passed, "{id}: {:?}", result.statuses);
    }
    let source = std::fs::read_to_string(tree.join("src/lib.rs")).unwrap();
    assert!(source.contains("pub       fn remaining(&self) -> usize { let __carve_g"), "{source}");
    for kept in ["pub const fn new()", "pub const fn capacity()", "const fn zero()", "pub const fn in_doctest()"] {
        assert!(source.contains(kept), "{kept} should stay const: {source}");
    }
    let trace = Trace::read_dir(&trace_dir).unwrap();
    let hits = |id: &str| trace.test(id).map(|t| t.hits.clone()).unwrap_or_default();
    assert!(hits(counts).contains("src/lib.rs::Slots.remaining"), "{:?}", hits(counts));
    assert!(hits(counts).contains("src/lib.rs::Slots.is_full"), "{:?}", hits(counts));
    assert!(hits(doc).contains("src/lib.rs::Slots.remaining"), "{:?}", hits(doc));
    assert!(!hits(counts).contains("src/lib.rs::Slots.capacity"), "{:?}", hits(counts));
}
