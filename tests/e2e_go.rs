//! End-to-end tests over `fixtures/go/shapes`: the classification of every feature (one
//! `_test.go` file each) against the fixture's written-down expectations
//! (`carve-expected.toml`), the methods the masked state must keep as stubs for interface
//! satisfaction, one test taken out of a shared test file, and an untouched working tree.

mod common;

use common::expected::*;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// The line of `masked` declaring method `Type.Method` (value or pointer receiver).
fn method_line<'a>(masked: &'a str, qual: &str) -> Option<(usize, &'a str)> {
    let (ty, method) = qual.split_once('.')?;
    masked.lines().enumerate().find(|(_, l)| {
        l.starts_with("func (")
            && (l.contains(&format!(" {ty}) {method}(")) || l.contains(&format!("*{ty}) {method}(")))
    })
}

#[needs("go")]
fn audit_matches_the_go_fixture_expectations_for_every_feature() {
    let (_tmp, repo) = fixture_copy("go/shapes");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let (repo_s, out_s) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let exp = expectations("go/shapes");
    let features = exp["features"].as_table().unwrap();
    assert!(features.len() >= 5, "the fixture has several features");
    for (name, f) in features {
        let f2p: Vec<String> = strings(f.get("f2p")).into_iter().collect();
        let mut args = vec!["audit", repo_s, "--out", out_s, "--format", "json", "--f2p"];
        args.extend(f2p.iter().map(String::as_str));
        let report: Value = serde_json::from_slice(&carve_ok(&args, 0).stdout).unwrap();
        // A file names all of its tests, subtests included.
        assert!(report["f2p"].as_array().unwrap().len() >= 1, "feature {name}: {report}");
        check_feature(name, f, &report);
        // Methods that keep their type implementing an interface stay as stubs.
        let stubbed = strings(f.get("stubbed"));
        if !stubbed.is_empty() {
            let mut args = vec!["extract", repo_s, "--out", out_s, "--format", "json", "--f2p"];
            args.extend(f2p.iter().map(String::as_str));
            carve_ok(&args, 0);
            for id in stubbed {
                let (path, qual) = id.split_once("::").unwrap();
                let masked = std::fs::read_to_string(out.path().join("extract/masked").join(path)).unwrap();
                let (at, _) = method_line(&masked, qual).unwrap_or_else(|| panic!("{id} was deleted:\n{masked}"));
                let body = masked.lines().nth(at + 1).unwrap_or("");
                assert_eq!(body.trim(), "panic(\"not implemented\")", "{id} is not a stub:\n{masked}");
            }
        }
    }
    // One test of a shared `_test.go` file (with its subtests) leaves the masked state alone:
    // the helper the other tests call stays, and the masked tests still build and vet
    // (extract fails otherwise).
    let args =
        ["extract", repo_s, "--out", out_s, "--format", "json", "--f2p", "example.com/shapes/catalog/TestSelect"];
    carve_ok(&args, 0);
    let masked = std::fs::read_to_string(out.path().join("extract/masked/catalog/catalog_test.go")).unwrap();
    assert!(!masked.contains("func TestSelect("), "{masked}");
    assert!(masked.contains("func sample(") && masked.contains("func TestReport("), "{masked}");
    let test_patch = std::fs::read_to_string(out.path().join("extract/test.patch")).unwrap();
    assert!(test_patch.contains("+func TestSelect(") && !test_patch.contains("+func TestReport("), "{test_patch}");
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// `carve tasks` to a validated bundle: the restored state (masked + gold.patch +
/// test.patch) is the original tree byte for byte, although `tools/gen/` is a nested module
/// that is one `main` package, which a plain `go build ./...` in the masked tree would
/// write a binary into (every spf13/cast candidate was rejected so), and the bundle
/// re-validates on its own.
#[needs("go")]
fn tasks_restore_the_tree_exactly_beside_a_nested_main_module() {
    let (_tmp, repo) = fixture_copy("go/shapes");
    assert!(repo.join("tools/gen/go.mod").is_file(), "the fixture has its nested generator module");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let (repo_s, out_s) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let exp = expectations("go/shapes");
    let f2p: Vec<String> = strings(exp["features"]["stats"].get("f2p")).into_iter().collect();
    let mut args = vec!["tasks", repo_s, "--out", out_s, "--format", "json", "--level", "1", "--f2p"];
    args.extend(f2p.iter().map(String::as_str));
    let report: Value = serde_json::from_slice(&carve_ok(&args, 0).stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{report}");
    let bundle = out.path().join(tasks[0].as_str().unwrap());
    let validation: Value = serde_json::from_slice(&std::fs::read(bundle.join("validation.json")).unwrap()).unwrap();
    // The restored tree is the original again: its state is ok with the original's digest
    // (and so not run again), with no "not byte-identical" problem.
    let states = validation["states"].as_array().unwrap();
    let restored = states.iter().find(|s| s["state"] == "restored").expect("a restored state");
    assert_eq!(restored["ok"], true, "{validation}");
    assert!(restored["problems"].as_array().is_none_or(|p| p.is_empty()), "{validation}");
    let inst: Value = serde_json::from_slice(&std::fs::read(bundle.join("instance.json")).unwrap()).unwrap();
    assert_eq!(restored["tree_digest"], inst["carve"]["tree_digest"], "{validation}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo_s], 0);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

const LABEL: &str = "example.com/subtests/label";

/// `fixtures/go/subtests`: the F2P test is one subtest, `TestLabel/WithUpper`. Its parent
/// `TestLabel` is no P2P test that ran everything its subtests ran (which kept the feature):
/// it is an F2P test too (it fails when its subtest does), what it ran itself (`New`) and
/// what its other subtests ran (`WithPrefix`) stays, and those subtests, which leave the
/// masked state with the `TestLabel` function, are neither F2P nor P2P. The bundle
/// re-validates on its own.
#[needs("go")]
fn an_f2p_subtest_takes_its_feature_although_its_parent_test_passes() {
    let (_tmp, repo) = fixture_copy("go/subtests");
    let before = tree_snapshot(&repo);
    let with_upper = format!("{LABEL}/TestLabel/WithUpper");
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &[&with_upper]);
    assert_eq!(extracted(&inst), ["label/label.go::WithUpper", "label/label.go::upper"], "{inst:#}");
    let f2p = json_strings(&inst["FAIL_TO_PASS"]);
    assert_eq!(f2p, BTreeSet::from([format!("{LABEL}/TestLabel"), with_upper.clone()]), "{inst:#}");
    let p2p = json_strings(&inst["PASS_TO_PASS"]);
    assert!(p2p.contains(&format!("{LABEL}/TestShout")), "{p2p:?}");
    assert!(!p2p.iter().any(|t| t.starts_with(&format!("{LABEL}/TestLabel"))), "{p2p:?}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let dropped = json_strings(&audit["dropped_cases"]);
    assert_eq!(dropped, BTreeSet::from([format!("{LABEL}/TestLabel/Plain"), format!("{LABEL}/TestLabel/WithPrefix")]));
    let remained = ids(&audit["remained"]);
    assert!(remained.contains("label/label.go::New") && remained.contains("label/label.go::Label.String"), "{audit}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// `fixtures/go/subtests`: `ExampleLabel_Shout` documents `Label.Shout`, the feature
/// `TestShout` tests. The example goes with the method (an F2P test, `owned_doctests`)
/// instead of keeping it alive as a P2P test; `ExampleNew`, of a method that stays, is P2P.
#[needs("go")]
fn an_example_goes_with_the_method_it_documents() {
    let (_tmp, repo) = fixture_copy("go/subtests");
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &[&format!("{LABEL}/TestShout")]);
    assert_eq!(extracted(&inst), ["label/label.go::Label.Shout", "label/label.go::exclaim"], "{inst:#}");
    let example = format!("{LABEL}/ExampleLabel_Shout");
    assert!(json_strings(&inst["FAIL_TO_PASS"]).contains(&example), "{inst:#}");
    assert!(json_strings(&inst["PASS_TO_PASS"]).contains(&format!("{LABEL}/ExampleNew")), "{inst:#}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(json_strings(&audit["owned_doctests"]), BTreeSet::from([example]), "{audit}");
    // The example is a test function of its own: it leaves the masked state, and only it.
    let test_patch = read(&bundle.join("test.patch"));
    assert!(
        test_patch.contains("+func ExampleLabel_Shout(") && !test_patch.contains("+func ExampleNew("),
        "{test_patch}"
    );
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
}

const RENDER: &str = "example.com/registry/render";

/// `fixtures/go/registry`: functions registered by name in a package-level map literal, as
/// Masterminds/sprig's template functions are, which the tests reach only through the
/// map. The entry `"greet": greet,` is no reason to keep `greet`: it is extracted, the mask
/// deletes the entry with it (the masked package builds and vets, so the task validates),
/// the gold patch puts both back, and the bundle re-validates on its own. The audit of each
/// feature matches `carve-expected.toml` (`exclaim`, named in a package-level call, stays).
#[needs("go")]
fn a_function_registered_in_a_package_level_map_goes_with_its_entry() {
    let (_tmp, repo) = fixture_copy("go/registry");
    let before = tree_snapshot(&repo);
    let (repo_s, exp) = (repo.to_str().unwrap(), expectations("go/registry"));
    let audit_out = tempfile::tempdir().unwrap();
    for (name, f) in exp["features"].as_table().unwrap() {
        let mut args = vec!["audit", repo_s, "--out", audit_out.path().to_str().unwrap(), "--format", "json", "--f2p"];
        let f2p: Vec<String> = strings(f.get("f2p")).into_iter().collect();
        args.extend(f2p.iter().map(String::as_str));
        let report: Value = serde_json::from_slice(&carve_ok(&args, 0).stdout).unwrap();
        check_feature(name, f, &report);
    }

    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &[&format!("{RENDER}/TestGreet")]);
    assert_eq!(extracted(&inst), ["render/funcs.go::greet"], "{inst:#}");
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("-\t\"greet\": greet,\n") && mask.contains("-func greet("), "{mask}");
    assert!(!mask.contains("-\t\"join\":"), "only greet's entry goes:\n{mask}");
    let gold = read(&bundle.join("gold.patch"));
    assert!(gold.contains("+\t\"greet\": greet,\n") && gold.contains("+func greet("), "{gold}");
    let p2p = json_strings(&inst["PASS_TO_PASS"]);
    assert!(p2p.contains(&format!("{RENDER}/TestJoin")) && p2p.contains(&format!("{RENDER}/TestShout")), "{p2p:?}");
    common::patches::check_bundle(&repo, &bundle, &inst);
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo_s], 0);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}
