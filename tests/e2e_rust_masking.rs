//! Rust masking and classification patterns found on real crates (issue 29), each on a
//! fixture of ours: `carve tasks` gives a validated Level 1 task where the pattern used to
//! cost precision or break the masked build.

mod common;

use common::*;
use serde_json::Value;

/// Issue 29 item 9 (`fixtures/rust/foreign-impls`): impls of the crate's trait for types
/// the crate does not define (`impl Weight for [Item]`, `for [Item; N]`) that the F2P tests
/// reach were extracted as whole blocks ("class of reached member"), although code that
/// stays may use them through the trait (`kilos<W: Weight>`). They stay while the trait
/// does, as impls for the crate's own types do; the methods only the F2P tests run are
/// extracted (stubbed), and the masked crate builds.
#[needs("cargo")]
fn trait_impls_for_slices_and_arrays_stay_while_their_trait_does() {
    let (_tmp, repo) = fixture_copy("rust/foreign-impls");
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &["tests/pack.rs"]);
    assert_eq!(
        extracted(&inst),
        ["src/lib.rs::[Item; N].<Weight>.weight", "src/lib.rs::[Item].<Weight>.weight", "src/pack.rs::fill"],
        "{inst:#}"
    );
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    for imp in ["src/lib.rs::[Item].<Weight>", "src/lib.rs::[Item; N].<Weight>"] {
        let kept = audit["remained"].as_array().unwrap().iter().find(|r| r["id"] == imp);
        let reasons = kept.map(|r| r["reasons"].to_string()).unwrap_or_default();
        assert!(reasons.contains("implementation of `Weight`"), "{imp} should stay for its trait: {audit:#}");
    }
    let gold = read(&bundle.join("gold.patch"));
    assert!(!gold.contains("-impl Weight for [Item]"), "the gold patch restores the slice impl:\n{gold}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
}

/// heck's `ToTrainCase` (issue 29, `fixtures/rust/foreign-impls`, `src/label.rs`): a trait of
/// the crate whose one method has no body, implemented by the feature only for `u32` (a type
/// the crate does not define) and re-exported by `lib.rs`. The trait never runs, so the F2P
/// tests never reached it; it stayed, and its impl for `u32` stayed with it (an impl for a
/// foreign type stays while its trait does). Reached through that implementation, the trait
/// goes with the feature, its impl and its method declaration too, and the masked crate builds.
/// (`AsLabel`, the wrapper, stays: the build check names it after the mask; not looked into.)
#[needs("cargo")]
fn a_trait_only_the_feature_implements_goes_with_its_implementation() {
    let (_tmp, repo) = fixture_copy("rust/foreign-impls");
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &["tests/label.rs"]);
    let got = extracted(&inst);
    for id in [
        "src/label.rs::ToLabel",
        "src/label.rs::ToLabel.to_label",
        "src/label.rs::u32.<ToLabel>",
        "src/label.rs::u32.<ToLabel>.to_label",
    ] {
        assert!(got.contains(&id), "{id} is not extracted: {got:?}");
    }
    assert!(got.iter().all(|id| id.starts_with("src/label.rs::")), "only the labels go: {got:?}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let trait_ = audit["extracted"].as_array().unwrap().iter().find(|r| r["id"] == "src/label.rs::ToLabel");
    assert!(trait_.unwrap()["reasons"].to_string().contains("implemented by reached"), "{audit:#}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
}

/// bitflags' layout (`fixtures/rust/unit-test-modules`): unit tests in `src/tests/*.rs`,
/// declared by `mod apply;` in `src/tests.rs`. Twelve of bitflags' 34 candidates were
/// rejected because the F2P file went and its `mod` item stayed ("file not found for module",
/// E0583, which no build repair can fix). The `mod` item goes with the file (the test patch
/// puts both back), and `Scale`'s impl, whose only method is extracted, keeps the `const`
/// that `unit` names. What the removed file names is stubbed, not deleted.
#[needs("cargo")]
fn a_unit_test_file_goes_with_its_mod_item_and_an_emptied_impl_keeps_its_const() {
    let (_tmp, repo) = fixture_copy("rust/unit-test-modules");
    let (_out, bundle, inst) = one_level1_task_with(&repo, &[], &["src/tests/apply.rs"]);
    assert_eq!(extracted(&inst), ["src/lib.rs::Scale.<impl>", "src/lib.rs::Scale.apply"], "{inst:#}");
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("-mod apply;"), "{mask}");
    assert!(!mask.contains("-    pub const UNIT"), "the const stays:\n{mask}");
    // The restored test is compiled into the lib's test binary: `apply` keeps its
    // signature (stubbed) so that it builds and fails, and the P2P test beside it passes.
    assert!(mask.contains("+        todo!()"), "{mask}");
    let test_patch = read(&bundle.join("test.patch"));
    assert!(test_patch.contains("+mod apply;") && test_patch.contains("+fn applies()"), "{test_patch}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
}
