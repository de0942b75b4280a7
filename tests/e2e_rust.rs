//! `carve tasks` end to end on `fixtures/rust/geometry`: the Rust tracer, the classifier and
//! the extractor give one validated Level 1 task per candidate feature (the library's unit
//! tests, each `tests/*.rs` binary), and each task's classification is the one
//! `fixtures/rust/geometry/carve-expected.toml` writes down. One run of the whole pipeline
//! (cargo builds are slow), the repository untouched.

mod common;

use std::collections::BTreeSet;

use common::expected::*;
use common::*;
use serde_json::Value;

#[needs("cargo")]
fn tasks_on_the_rust_fixture_are_validated_level1_tasks_with_the_expected_classification() {
    let exp = expectations("rust/geometry");
    let features = exp["features"].as_table().unwrap();
    let (_tmp, repo) = fixture_copy("rust/geometry");
    let (out, tasks) = tasks_of(&repo);

    let mut seen = BTreeSet::new();
    // The catalog feature's Level 2 bundle (a crate of its own) is e2e_level2.rs's; the other
    // features have none (inline tests; a reference whose copied types the crate rejects).
    let lv2: Vec<&str> = tasks.iter().filter(|t| t["level"] == 2).filter_map(|t| t["instance_id"].as_str()).collect();
    assert!(lv2.len() == 1 && lv2[0].contains(".catalog."), "{lv2:?}");
    for task in tasks.iter().filter(|t| t["level"] == 1) {
        let id = task["instance_id"].as_str().unwrap();
        let bundle = out.path().join(id);
        let validation: Value =
            serde_json::from_str(&std::fs::read_to_string(bundle.join("validation.json")).unwrap()).unwrap();
        assert_eq!(validation["valid"], true, "{id}: {validation}");
        let audit: Value = serde_json::from_str(&std::fs::read_to_string(bundle.join("audit.json")).unwrap()).unwrap();
        let name = audit["feature"].as_str().unwrap().to_string();
        let f = features.get(&name).unwrap_or_else(|| panic!("feature {name} is not in carve-expected.toml"));
        assert_eq!(json_strings(&audit["f2p"]), strings(f.get("f2p")), "{name}: F2P tests");
        assert_eq!(json_strings(&task["FAIL_TO_PASS"]), strings(f.get("f2p")), "{name}: tasks.jsonl F2P");
        check_feature(&name, f, &audit);
        seen.insert(name);
    }
    let want: BTreeSet<String> = features.keys().cloned().collect();
    assert_eq!(seen, want, "one validated task per expected feature");
}

/// One F2P test of an integration file that keeps two others (a per-test candidate, as
/// `bench/corpus_rust.py` forms them): the masked file loses the test and the imports only
/// it used (`summarize`, `Polygon`), still builds, and the test patch puts them back.
#[needs("cargo")]
fn a_single_f2p_test_leaves_its_file_with_its_unused_imports_and_is_a_validated_task() {
    let (_tmp, repo) = fixture_copy("rust/geometry");
    let out = tempfile::tempdir().unwrap();
    let args = ["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--level", "1"];
    carve_ok(&[&args[..], &["--f2p", "integration::summaries"]].concat(), 0);
    let jsonl = std::fs::read_to_string(out.path().join("tasks.jsonl")).unwrap();
    let tasks: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(tasks.len(), 1, "{jsonl}");
    assert_eq!(json_strings(&tasks[0]["FAIL_TO_PASS"]), BTreeSet::from(["integration::summaries".to_string()]));
    let bundle = out.path().join(tasks[0]["instance_id"].as_str().unwrap());
    let validation: Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("validation.json")).unwrap()).unwrap();
    assert_eq!(validation["valid"], true, "{validation}");
    let test_patch = std::fs::read_to_string(bundle.join("test.patch")).unwrap();
    for added in
        ["+fn summaries()", "+use geometry::shapes::polygon::Polygon;", "+use geometry::report::{summarize, Report};"]
    {
        assert!(test_patch.contains(added), "the test patch lacks {added}:\n{test_patch}");
    }
    assert!(test_patch.contains("-use geometry::report::{Report};"), "{test_patch}");
    let gold = std::fs::read_to_string(bundle.join("gold.patch")).unwrap();
    assert!(!gold.contains("tests/integration.rs"), "the gold patch holds test code:\n{gold}");
}

/// A candidate holding a test that passed under the shim but left no trace (a doctest that
/// only expands a macro reaches no probed function; bluss/either's `try_left` is one) is
/// not rejected for it ("has no trace", as either's default candidate was): the test is
/// left out of the F2P tests with a note and stays a P2P test, which must pass on the
/// masked state; the rest of the candidate (a doctest with its own `fn main`, attributed
/// through the linker wrapper's note) becomes a validated task.
#[needs("cargo")]
fn an_untraced_test_leaves_the_f2p_tests_instead_of_rejecting_the_candidate() {
    let (_tmp, repo) = fixture_copy("rust/doctest-main");
    let out = tempfile::tempdir().unwrap();
    let (square, bump) = ("doctest_main::doctest::src/lib.rs - square", "doctest_main::doctest::src/lib.rs - bump");
    let args = ["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--level", "1"];
    let run = carve_ok(&[&args[..], &["--f2p", square, bump]].concat(), 0);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("1 test(s) have no trace") && stderr.contains(bump), "{stderr}");
    let jsonl = std::fs::read_to_string(out.path().join("tasks.jsonl")).unwrap();
    let tasks: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(tasks.len(), 1, "{jsonl}");
    assert_eq!(json_strings(&tasks[0]["FAIL_TO_PASS"]), BTreeSet::from([square.to_string()]));
    assert!(json_strings(&tasks[0]["PASS_TO_PASS"]).contains(bump), "{}", tasks[0]["PASS_TO_PASS"]);
    let bundle = out.path().join(tasks[0]["instance_id"].as_str().unwrap());
    let audit: Value = serde_json::from_str(&std::fs::read_to_string(bundle.join("audit.json")).unwrap()).unwrap();
    assert_eq!(ids(&audit["extracted"]), BTreeSet::from(["src/lib.rs::square".to_string()]), "{audit}");
}

/// `fixtures/rust/doctest-owner`: the doctest in `Counter::add_capped`'s doc comment goes
/// with the method (an F2P test, `owned_doctests`) instead of keeping it alive as a P2P test
/// (which left nothing to extract); `Counter::new`'s doctest stays P2P, and so does
/// `Counter::reset`'s: the feature's tests reach `Counter` but never `reset`, so its doctest
/// is not the feature's (it was, when any reached ancestor of the owner counted, and then
/// made `reset` an entry point of its own: arrayvec). The bundle re-validates on its own.
#[needs("cargo")]
fn a_doctest_goes_with_the_method_whose_doc_comment_holds_it() {
    let (_tmp, repo) = fixture_copy("rust/doctest-owner");
    let (add, new) = (
        "doctest_owner::doctest::src/lib.rs - Counter::add_capped",
        "doctest_owner::doctest::src/lib.rs - Counter::new",
    );
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &["tests/capped.rs"]);
    assert_eq!(extracted(&inst), ["src/lib.rs::Counter.add_capped", "src/lib.rs::capped"], "{inst:#}");
    assert!(json_strings(&inst["FAIL_TO_PASS"]).contains(add), "{inst:#}");
    assert!(json_strings(&inst["PASS_TO_PASS"]).contains(new), "{inst:#}");
    let reset = "doctest_owner::doctest::src/lib.rs - Counter::reset";
    assert!(json_strings(&inst["PASS_TO_PASS"]).contains(reset), "{inst:#}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(json_strings(&audit["owned_doctests"]), BTreeSet::from([add.to_string()]), "{audit}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
}

/// `fixtures/rust/doctest-owner` with `Counter::room`'s doctest as the F2P test: it calls
/// `reset`, whose only test is its own doctest. The F2P tests include a doctest of
/// `src/lib.rs`, so that file's other doctests were left out by choice and stay P2P:
/// `reset` stays, only `room` is extracted. Before, `reset`'s doctest moved into the
/// feature and made `reset` an entry point (bench/accuracy.py: arrayvec's `pop`, bit-vec's
/// `from_fn`, which the commits did not add).
#[needs("cargo")]
fn a_doctest_of_a_file_whose_doctests_were_given_stays_p2p() {
    let (_tmp, repo) = fixture_copy("rust/doctest-owner");
    let out = tempfile::tempdir().unwrap();
    let room = "doctest_owner::doctest::src/lib.rs - Counter::room";
    let audit: Value =
        serde_json::from_slice(&carve_on("audit", &repo, out.path(), &["--f2p", room, "--format", "json"], 0).stdout)
            .unwrap();
    assert_eq!(ids(&audit["extracted"]), BTreeSet::from(["src/lib.rs::Counter.room".to_string()]), "{audit}");
    assert!(json_strings(&audit["owned_doctests"]).is_empty(), "{audit}");
    assert_eq!(json_strings(&audit["f2p"]), BTreeSet::from([room.to_string()]), "{audit}");
    assert!(ids(&audit["remained"]).contains("src/lib.rs::Counter.reset"), "{audit}");
}
