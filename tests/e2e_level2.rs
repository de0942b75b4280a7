//! Level 2 (from scratch) beyond Python, end to end: `carve tasks` on `fixtures/go/shapes`
//! makes a Go Level 2 bundle for the catalog feature — the feature's code as a package of its
//! own (`agent_code/` at the module root), the F2P test file rewritten to use it — and the
//! bundle holds up without carve: on the masked state with the rewritten tests, an empty
//! `agent_code` package fails the F2P tests and the gold patch (the package alone, the
//! repository is not restored) passes them. `carve validate` re-checks it on its own.
//! TypeScript: `fixtures/typescript/ledger`'s reports feature becomes `agent_code/index.ts`
//! and a copy of its code under `agent_code/`; the rewritten tests fail with an empty module and
//! pass with the gold patch (the package alone) beside the masked project.
//! Rust: `fixtures/rust/geometry`'s catalog feature becomes a crate `agent_code/` that the
//! repository names as a dev-dependency; its feature tested by `#[cfg(test)]` modules has no
//! Level 2 task, and says why. `fixtures/rust/dice`'s feature, tested by its doctests too,
//! gets one: the doctests are carried into an integration test against `agent_code`.

mod common;

use common::expected::json_strings;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `go test -count=1 -run PATTERN PACKAGE` in `dir`: whether it passed, and its output.
fn go_test(dir: &Path, package: &str, pattern: &str) -> (bool, String) {
    let out = Command::new("go")
        .args(["test", "-count=1", "-run", pattern, package])
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod")
        .output()
        .expect("go runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[needs("go")]
fn a_go_feature_becomes_a_package_of_its_own() {
    let (_tmp, repo) = fixture_copy("go/shapes");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let args = ["--format", "json", "--level", "1", "2", "--f2p", "catalog/catalog_test.go"];
    let report: Value = serde_json::from_slice(&carve_on("tasks", &repo, out.path(), &args, 0).stdout).unwrap();
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let lv2 = tasks.iter().find(|t| t.ends_with(".lv2")).unwrap_or_else(|| panic!("no Level 2 bundle: {report}"));
    let bundle = out.path().join(lv2);
    let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    assert_eq!(inst["level"], 2, "{inst}");

    // The gold patch is the package alone; the test patch makes the tests use it.
    let gold = read(&bundle.join("gold.patch"));
    let touched: Vec<&str> = gold.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    assert_eq!(touched, ["agent_code/agent_code.go"], "{gold}");
    assert!(gold.contains("+package agent_code") && gold.contains("+func New() *Catalog {"), "{gold}");
    let test = read(&bundle.join("test.patch"));
    assert!(test.contains("+import \"example.com/shapes/agent_code\""), "{test}");
    assert!(test.contains("c := agent_code.New()"), "{test}");
    // The statement says where the package goes and what it must declare that it cannot import.
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("imported as `example.com/shapes/agent_code`"), "{statement}");
    assert!(statement.contains("`Entry`, `Filter`"), "{statement}");
    // The interface imports every object from the package (contract.json stays Level 1's).
    assert!(statement.contains("import \"example.com/shapes/agent_code\""), "{statement}");
    assert!(!statement.contains("import \"example.com/shapes/catalog\""), "{statement}");

    // Without carve: masked state + rewritten tests, then an empty package, then the gold one.
    let (_work, tree) = masked_with_tests(&repo, &bundle);
    std::fs::create_dir_all(tree.join("agent_code")).unwrap();
    std::fs::write(tree.join("agent_code/agent_code.go"), "package agent_code\n").unwrap();
    let (ok, log) =
        go_test(&tree, "./catalog/", "TestSelect|TestReport|TestTotalAreaAndLargest|TestAddRejectsDuplicates");
    assert!(!ok, "the rewritten F2P tests pass with an empty agent_code:\n{log}");
    std::fs::remove_dir_all(tree.join("agent_code")).unwrap();
    git_apply(&tree, &bundle.join("gold.patch"));
    let (ok, log) =
        go_test(&tree, "./catalog/", "TestSelect|TestReport|TestTotalAreaAndLargest|TestAddRejectsDuplicates");
    assert!(ok, "the rewritten F2P tests fail with the reference agent_code:\n{log}");
    // The package does not import the catalog package (its tests import the package).
    let reference = read(&tree.join("agent_code/agent_code.go"));
    assert!(!reference.contains("\"example.com/shapes/catalog\""), "{reference}");

    // carve re-checks the bundle on its own, Level 2 states included.
    let v: Value = serde_json::from_slice(
        &carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap(), "--format", "json"], 0)
            .stdout,
    )
    .unwrap();
    let states: Vec<&str> = v["states"].as_array().unwrap().iter().filter_map(|s| s["state"].as_str()).collect();
    assert!(states.contains(&"level2-reference") && states.contains(&"level2-empty"), "{v}");
}

/// A copy of `repo` in the Level 2 state of `bundle` before the package is written: masked,
/// with the rewritten tests.
fn masked_with_tests(repo: &Path, bundle: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("repo");
    copy_dir(repo, &tree);
    git_apply(&tree, &bundle.join("mask.patch"));
    git_apply(&tree, &bundle.join("test.patch"));
    (work, tree)
}

/// `carve tasks --level 1 2 --f2p F2P` on the Go module `repo` into `out`: its Level 2
/// bundle (the test fails when there is none).
fn go_level2_bundle(repo: &Path, out: &Path, f2p: &str) -> std::path::PathBuf {
    let args = ["--format", "json", "--level", "1", "2", "--f2p", f2p];
    let report: Value = serde_json::from_slice(&carve_on("tasks", repo, out, &args, 0).stdout).unwrap();
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let lv2 = tasks.iter().find(|t| t.ends_with(".lv2")).unwrap_or_else(|| panic!("no Level 2 bundle: {report}"));
    out.join(lv2)
}

/// A feature one of whose methods belongs to a type that stays (`Series.Spread` of the stats
/// feature, `Series` run by no other test) gets a Level 2 task all the same: the package
/// declares its own `Series` with every method, and the statement says so. A feature whose
/// reference cannot work (the registry's `Kinds` reads a map that `init()` of its package
/// fills) is rejected by the Level 2 validation, not emitted.
#[needs("go")]
fn a_method_of_a_type_that_stays_takes_its_type_along() {
    let (_tmp, repo) = fixture_copy("go/shapes");
    let out = tempfile::tempdir().unwrap();
    let bundle = go_level2_bundle(&repo, out.path(), "stats/stats_test.go");
    let gold = read(&bundle.join("gold.patch"));
    assert!(gold.contains("+type Series []float64") && gold.contains(") Spread() float64"), "{gold}");
    let test = read(&bundle.join("test.patch"));
    assert!(test.contains("(agent_code.Series{3, 1, 4, 1, 5}).Spread()"), "{test}");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("declares its own `Series` with every method"), "{statement}");

    let out = tempfile::tempdir().unwrap();
    let args = ["--format", "json", "--level", "1", "2", "--f2p", "geometry/registry_test.go"];
    let report: Value = serde_json::from_slice(&carve_on("tasks", &repo, out.path(), &args, 0).stdout).unwrap();
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tasks.iter().any(|t| t.ends_with(".lv1")) && !tasks.iter().any(|t| t.ends_with(".lv2")), "{report}");
    let rejected = report["rejected"].as_array().unwrap();
    let why = |r: &&Value| r["level"] == 2 && r["reason"].as_str().is_some_and(|s| s.starts_with("level2-reference"));
    assert!(rejected.iter().any(|r| why(&r)), "{report}");
}

/// A feature that spans two packages (`fixtures/go/cache`: `Cache.Resize` in the root
/// package calls `simple.LRU.Resize`, which only `resize_test.go` runs) gets a Level 2 task
/// whose package mirrors both: `agent_code` and `agent_code/simple`, the first importing the
/// second as the root package imported `simple`. Without carve, on the masked state with the
/// rewritten tests: empty packages in both places fail, the gold patch passes.
#[needs("go")]
fn a_feature_of_two_go_packages_gets_a_package_of_each() {
    let (_tmp, repo) = fixture_copy("go/cache");
    let out = tempfile::tempdir().unwrap();
    let bundle = go_level2_bundle(&repo, out.path(), "resize_test.go");
    let gold = read(&bundle.join("gold.patch"));
    let touched: Vec<&str> = gold.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    assert_eq!(touched, ["agent_code/agent_code.go", "agent_code/simple/simple.go"], "{gold}");
    assert!(gold.contains("+\tsimple \"example.com/cache/agent_code/simple\""), "{gold}");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("import agent_code_simple \"example.com/cache/agent_code/simple\""), "{statement}");

    let (_work, tree) = masked_with_tests(&repo, &bundle);
    std::fs::create_dir_all(tree.join("agent_code/simple")).unwrap();
    std::fs::write(tree.join("agent_code/agent_code.go"), "package agent_code\n").unwrap();
    std::fs::write(tree.join("agent_code/simple/simple.go"), "package simple\n").unwrap();
    let (ok, log) = go_test(&tree, ".", "TestResizeEvictsTheOldest");
    assert!(!ok, "the rewritten F2P test passes with empty packages:\n{log}");
    std::fs::remove_dir_all(tree.join("agent_code")).unwrap();
    git_apply(&tree, &bundle.join("gold.patch"));
    let (ok, log) = go_test(&tree, ".", "TestResizeEvictsTheOldest");
    assert!(ok, "the rewritten F2P test fails with the reference packages:\n{log}");
}

/// A copy of the TypeScript fixture `name` with its installed node_modules linked in.
fn ts_fixture_copy(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy(name);
    if !repo.join("node_modules").exists() {
        let from = fixture(name).join("node_modules");
        let ok = Command::new("cp").arg("-al").arg(&from).arg(repo.join("node_modules")).status().unwrap();
        assert!(ok.success(), "cp -al {}", from.display());
    }
    (tmp, repo)
}

/// [`masked_with_tests`] of a TypeScript fixture copy, its node_modules linked in.
fn ts_masked_with_tests(repo: &Path, bundle: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let (work, tree) = masked_with_tests(repo, bundle);
    if !tree.join("node_modules").exists() {
        let ok = Command::new("cp").arg("-al").arg(repo.join("node_modules")).arg(tree.join("node_modules")).status();
        assert!(ok.unwrap().success());
    }
    (work, tree)
}

/// `vitest run FILE` in `dir`: whether it passed, and its output.
fn vitest(dir: &Path, file: &str) -> (bool, String) {
    let out =
        Command::new("node_modules/.bin/vitest").args(["run", file]).current_dir(dir).output().expect("vitest runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// On a copy of the TypeScript fixture `repo` with the Level 2 `bundle`'s mask and test
/// patches, `vitest run TEST` fails with an empty `agent_code/index.ts` and passes with the
/// gold patch (the package alone, beside the masked project).
fn empty_fails_and_gold_passes(repo: &Path, bundle: &Path, test: &str) {
    let (_work, tree) = ts_masked_with_tests(repo, bundle);
    std::fs::create_dir_all(tree.join("agent_code")).unwrap();
    std::fs::write(tree.join("agent_code/index.ts"), "export {};\n").unwrap();
    let (ok, log) = vitest(&tree, test);
    assert!(!ok, "the rewritten F2P tests pass with an empty agent_code:\n{log}");
    std::fs::remove_dir_all(tree.join("agent_code")).unwrap();
    git_apply(&tree, &bundle.join("gold.patch"));
    let (ok, log) = vitest(&tree, test);
    assert!(ok, "the rewritten F2P tests fail with the package beside the masked project:\n{log}");
}

/// `carve tasks --format json --level 1 2 ARGS` on `repo` into `out`: the report and its
/// bundles' names.
fn tasks_on(repo: &Path, out: &Path, args: &[&str]) -> (Value, Vec<String>) {
    let args: Vec<&str> = ["--format", "json", "--level", "1", "2"].iter().chain(args).copied().collect();
    let report: Value = serde_json::from_slice(&carve_on("tasks", repo, out, &args, 0).stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).map(String::from).collect();
    (report, tasks)
}

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn a_typescript_feature_is_imported_from_agent_code() {
    let (_tmp, repo) = ts_fixture_copy("typescript/ledger");
    let out = tempfile::tempdir().unwrap();
    let (report, tasks) = tasks_on(&repo, out.path(), &["--f2p", "tests/reports.spec.ts"]);
    let lv2 = tasks.iter().find(|t| t.ends_with(".lv2")).unwrap_or_else(|| panic!("no Level 2 bundle: {report}"));
    let bundle = out.path().join(lv2);
    // The test imports `renderTable` from the project's index (`export *` and named
    // re-exports): the import moves to the package, the rest stays.
    let test = read(&bundle.join("test.patch"));
    assert!(test.contains("+import { renderTable } from \"../agent_code/index.js\";"), "{test}");
    let gold = read(&bundle.join("gold.patch"));
    assert!(gold.contains("+export { renderTable } from \"./src/reports/summary.js\";"), "{gold}");
    // The copy imports what stays from the project, and the other copies from its own folder.
    assert!(gold.contains("+import { cleanCell } from \"../../../src/util/text.js\";"), "{gold}");
    assert!(gold.contains("+import { alignColumns, groupBy, round } from \"../util/collections.js\";"), "{gold}");
    let touched: Vec<&str> = gold.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    assert!(touched.iter().all(|f| f.starts_with("agent_code/")), "the gold patch restores the project: {gold}");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("import { renderTable } from \"./agent_code/index.js\";"), "{statement}");

    empty_fails_and_gold_passes(&repo, &bundle, "tests/reports.spec.ts");
}

/// The TypeScript reference is a copy of the feature's code beside the masked project, not a
/// re-export of the restored original: `fixtures/typescript/wordcase`'s `words` feature gets a
/// Level 2 bundle whose gold patch is `agent_code/` alone (its copy of `src/words.ts` imports
/// the project's `squeeze` from its own folder) and holds up without carve; the `title`
/// feature, whose test calls `format` (which stays and calls the masked `titleCase`), gets
/// none, with the test that fails. With the re-export, both had a Level 2 task, and no package
/// written from scratch could pass `title`'s.
#[needs("node", "fixtures/typescript/wordcase/node_modules")]
fn a_typescript_reference_runs_beside_the_masked_project() {
    let (_tmp, repo) = ts_fixture_copy("typescript/wordcase");
    let out = tempfile::tempdir().unwrap();
    let (report, tasks) = tasks_on(&repo, out.path(), &["--protect", "all"]);
    assert!(tasks.iter().any(|t| t.contains(".title-test.") && t.ends_with(".lv1")), "{report}");
    assert!(!tasks.iter().any(|t| t.contains(".title-test.") && t.ends_with(".lv2")), "{report}");
    let rejected = report["rejected"].as_array().unwrap();
    let title = rejected.iter().find(|r| r["feature"] == "title-test" && r["level"] == 2);
    let reason = title.and_then(|r| r["reason"].as_str()).unwrap_or_else(|| panic!("no Level 2 reason: {report}"));
    assert!(reason.starts_with("level2-reference: ") && reason.contains("is what format gives with title"), "{reason}");

    let lv2 = tasks.iter().find(|t| t.contains(".words-test.") && t.ends_with(".lv2"));
    let bundle = out.path().join(lv2.unwrap_or_else(|| panic!("no Level 2 bundle for words: {report}")));
    let gold = read(&bundle.join("gold.patch"));
    let touched: Vec<&str> = gold.lines().filter_map(|l| l.strip_prefix("+++ b/")).collect();
    assert_eq!(touched, ["agent_code/index.ts", "agent_code/src/words.ts"], "{gold}");
    assert!(gold.contains("+export { words } from \"./src/words.js\";"), "{gold}");
    assert!(gold.contains("+import { squeeze } from \"../../src/util/space.js\";"), "{gold}");

    empty_fails_and_gold_passes(&repo, &bundle, "tests/words.test.ts");
}

/// `cargo test --locked --test NAME` in `dir`, building into `target`: whether it passed, and
/// its output.
fn cargo_test(dir: &Path, target: &Path, name: &str) -> (bool, String) {
    let out = Command::new("cargo")
        .args(["test", "--locked", "--offline", "--test", name])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// A copy of `repo` with the Level 2 `bundle`'s mask, test and gold patches: `cargo test
/// --test NAME` with the gold crate emptied, then as the gold patch wrote it.
fn empty_and_reference_runs(repo: &Path, bundle: &Path, name: &str) -> ((bool, String), (bool, String)) {
    let (work, tree) = masked_with_tests(repo, bundle);
    git_apply(&tree, &bundle.join("gold.patch"));
    let lib = tree.join("agent_code/src/lib.rs");
    let reference = read(&lib);
    std::fs::write(&lib, "//! Where the feature is to be written.\n").unwrap();
    let target = work.path().join("target");
    let empty = cargo_test(&tree, &target, name);
    std::fs::write(&lib, reference).unwrap();
    (empty, cargo_test(&tree, &target, name))
}

/// One run over every candidate of the geometry fixture (cargo builds are slow): the catalog
/// feature, tested by `tests/catalog.rs`, gets a Level 2 bundle whose gold patch is the crate
/// `agent_code/` and the manifest lines that name it, and which holds up under plain
/// `cargo test`: an empty crate fails the rewritten tests, the reference passes them. The
/// feature the library's `#[cfg(test)]` modules test gets its Level 1 task and no Level 2
/// one, with the reason.
#[needs("cargo")]
fn a_rust_feature_becomes_a_crate_of_its_own_and_inline_tests_have_none() {
    let (_tmp, repo) = fixture_copy("rust/geometry");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let args = ["--format", "json", "--level", "1", "2"];
    let report: Value = serde_json::from_slice(&carve_on("tasks", &repo, out.path(), &args, 0).stdout).unwrap();
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let lv2: Vec<&&str> = tasks.iter().filter(|t| t.ends_with(".lv2")).collect();
    assert_eq!(lv2.len(), 1, "{report}");
    assert!(lv2[0].contains(".catalog."), "{report}");
    let bundle = out.path().join(lv2[0]);

    // The gold patch: the crate, the dev-dependency and the lock file's entries; nothing else.
    let gold = read(&bundle.join("gold.patch"));
    let touched: Vec<&str> = gold.lines().filter_map(|l| l.strip_prefix("diff --git a/")).collect();
    assert_eq!(
        touched,
        [
            "Cargo.lock b/Cargo.lock",
            "Cargo.toml b/Cargo.toml",
            "agent_code/Cargo.toml b/agent_code/Cargo.toml",
            "agent_code/src/lib.rs b/agent_code/src/lib.rs"
        ],
        "{gold}"
    );
    assert!(gold.contains("+agent_code = { path = \"agent_code\" }"), "{gold}");
    assert!(gold.contains("+geometry = { path = \"..\" }"), "{gold}");
    // The catalog's private static and helper are copied, the public types used from the crate.
    assert!(gold.contains("+static UNIT_AREAS: LazyLock") && gold.contains("+fn unit_area("), "{gold}");
    assert!(gold.contains("+use geometry::shapes::Circle;"), "{gold}");
    let test = read(&bundle.join("test.patch"));
    assert!(test.contains("+use agent_code::{names, unit};"), "{test}");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("Rust library crate named `agent_code`"), "{statement}");
    assert!(statement.contains("use agent_code::names;"), "{statement}");
    assert!(statement.contains("`UNIT_AREAS`, `unit_area`"), "{statement}");

    // Without carve: masked state, rewritten tests, the gold crate emptied, then as it is.
    let (empty, reference) = empty_and_reference_runs(&repo, &bundle, "catalog");
    assert!(!empty.0, "the rewritten F2P tests pass with an empty agent_code:\n{}", empty.1);
    assert!(reference.0, "the rewritten F2P tests fail with the reference agent_code:\n{}", reference.1);

    // The library's unit tests cannot be pointed at another crate: Level 1 only, and why.
    assert!(tasks.iter().any(|t| t.contains(".geometry.") && t.ends_with(".lv1")), "{report}");
    let rejected = report["rejected"].as_array().unwrap();
    let inline = rejected
        .iter()
        .find(|r| r["feature"] == "geometry" && r["level"] == 2)
        .unwrap_or_else(|| panic!("no Level 2 rejection of the inline-tested feature: {report}"));
    let reason = inline["reason"].as_str().unwrap();
    assert!(reason.contains("`geometry::shapes::tests::rect_square`") && reason.contains("#[cfg(test)]"), "{reason}");
}

/// `fixtures/rust/dice`: the feature's F2P tests include the doctests of its items (`roll`,
/// `rolls` twice, one `should_panic` and one with a hidden `fn main`, and `bag::sides`). Its
/// Level 2 task carries them into `tests/carve_doctests.rs`, calling `agent_code`, under new
/// ids; the reference copies `rolls` (its module names `Vec` through `alloc`) and `sides`
/// (through `std`) with one `use std::vec::Vec;`, the `thread_local!` static `sides` counts
/// in, `rolls` under the `alloc` feature `std` implies, `d6` (made by the crate's `die!`
/// around `roll`, which `tests/rolls.rs` now takes from `agent_code`), and `roll`'s use of
/// the optional dependency `gate` under its `cfg`. Under plain `cargo test`, an empty crate
/// fails the carried doctests and the reference passes them.
#[needs("cargo")]
fn doctests_among_the_f2p_tests_are_carried_into_an_integration_test() {
    let (_tmp, repo) = fixture_copy("rust/dice");
    let out = tempfile::tempdir().unwrap();
    let args = ["--format", "json", "--level", "1", "2"];
    let report: Value = serde_json::from_slice(&carve_on("tasks", &repo, out.path(), &args, 0).stdout).unwrap();
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let lv2: Vec<&&str> = tasks.iter().filter(|t| t.ends_with(".lv2")).collect();
    assert_eq!(lv2.len(), 1, "{report}");
    let bundle = out.path().join(lv2[0]);
    let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    let f2p = json_strings(&inst["FAIL_TO_PASS"]);
    for id in
        ["carve_doctests::doctest_roll", "carve_doctests::doctest_rolls", "carve_doctests::doctest_rolls_example_2"]
    {
        assert!(f2p.contains(id), "{id} not among {f2p:?}");
    }
    assert!(!f2p.iter().any(|t| t.contains("::doctest::")), "{f2p:?}");

    let test = read(&bundle.join("test.patch"));
    assert!(test.contains("+++ b/tests/carve_doctests.rs"), "{test}");
    assert!(test.contains("+let bag = agent_code::sides(&[4, 6]);"), "{test}");
    assert!(test.contains("+#[should_panic]\n+fn doctest_rolls_example_2() {"), "{test}");
    let gold = read(&bundle.join("gold.patch"));
    assert_eq!(gold.matches("+use std::vec::Vec;").count(), 1, "{gold}");
    for line in ["+std::thread_local! {", "+die!(d6, 6);", "+#[cfg(feature = \"gate\")] use gate::weigh;"] {
        assert!(gold.contains(line), "{line} not in {gold}");
    }
    assert!(test.contains("+    assert_eq!(agent_code::d6(), 6);"), "{test}");

    let (empty, reference) = empty_and_reference_runs(&repo, &bundle, "carve_doctests");
    assert!(!empty.0, "the carried doctests pass with an empty agent_code:\n{}", empty.1);
    assert!(reference.0, "the carried doctests fail with the reference agent_code:\n{}", reference.1);
    assert!(reference.1.contains("test result: ok. 4 passed"), "{}", reference.1);
}
