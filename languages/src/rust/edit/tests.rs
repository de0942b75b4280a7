//! Masking tests on the geometry fixture: snapshots of masked sources and the masked crate
//! builds with cargo for chosen removals. Every definition removed alone (re-parses, builds)
//! and mutated sources (never panic) are tested for all languages in
//! `extractor/tests/robustness.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::plan;
use crate::Language;
use crate::edit::{Edit, MaskError, apply};
use crate::index::{DefinitionIndex, NodeId};
use crate::parse_errors;
use crate::rust::index::tests_support::{fixture_index, fixture_root};

fn set(ids: &[&str]) -> BTreeSet<NodeId> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// Delete-or-stub as the extractor decides it (`extractor::plan::split_removals`):
/// stubbed when code outside the removed set references it.
fn split(index: &DefinitionIndex, remove: &BTreeSet<NodeId>) -> (BTreeSet<NodeId>, BTreeSet<NodeId>) {
    let within = |id: &str| index.lineage(id).any(|c| remove.contains(c));
    let mut referenced = BTreeSet::new();
    for d in index.definitions.values().filter(|d| !within(&d.id)) {
        referenced.extend(d.references.iter().cloned());
        referenced.extend(d.load_references.iter().map(|l| l.target.clone()));
    }
    for f in index.files.values() {
        referenced.extend(f.module_references.iter().map(|m| m.target.clone()));
    }
    remove.iter().cloned().partition(|id| !referenced.contains(id))
}

/// Masked text of every changed file.
fn mask_tree(index: &DefinitionIndex, root: &Path, remove: &BTreeSet<NodeId>) -> BTreeMap<String, String> {
    let (delete, stub) = split(index, remove);
    let mut out = BTreeMap::new();
    for (path, file) in &index.files {
        let source = std::fs::read_to_string(root.join(path)).unwrap();
        let edits = crate::mask_file(Language::Rust, &source, file, index, &delete, &stub).unwrap();
        if !edits.is_empty() {
            out.insert(path.clone(), apply(&source, &edits).unwrap());
        }
    }
    out
}

fn render(masked: &BTreeMap<String, String>) -> String {
    masked.iter().map(|(p, t)| format!("=== {p}\n{t}")).collect()
}

#[test]
fn removing_a_type_removes_its_impls_and_dead_uses() {
    let index = fixture_index();
    let remove = set(&["src/shapes/polygon.rs::Point", "src/shapes/polygon.rs::Polygon"]);
    let (delete, stub) = split(&index, &remove);
    let r = plan(&index, &delete, &stub);
    // Polygon stays (tests name it) as a stub, and its field keeps Point.
    assert!(!r.gone.contains("src/shapes/polygon.rs::Point"), "{:?}", r.gone);
    assert!(r.stubbed.contains("src/shapes/polygon.rs::Polygon.with"), "{:?}", r.stubbed);
    insta::assert_snapshot!(render(&mask_tree(&index, &fixture_root(), &remove)));
}

#[test]
fn stubs_referenced_functions_and_deletes_the_rest() {
    let index = fixture_index();
    let remove = set(&[
        "src/report.rs::summarize",
        "src/report.rs::largest",
        "src/report.rs::tests.largest_rect",
        "src/units.rs::round_to",
        "src/shapes.rs::Circle.diameter",
        "src/shapes.rs::Circle.<Shape>.perimeter",
    ]);
    let (delete, stub) = split(&index, &remove);
    assert!(delete.contains("src/report.rs::largest"), "{delete:?}");
    assert!(stub.contains("src/units.rs::round_to"), "{stub:?}");
    insta::assert_snapshot!(render(&mask_tree(&index, &fixture_root(), &remove)));
}

#[test]
fn removing_a_trait_removes_its_impls() {
    let index = fixture_index();
    let r = plan(&index, &set(&["src/shapes.rs::Shape"]), &BTreeSet::new());
    for id in
        ["src/shapes.rs::Circle.<Shape>", "src/shapes.rs::Rect.<Shape>.area", "src/shapes/polygon.rs::Polygon.<Shape>"]
    {
        assert!(r.gone.contains(id), "{id} should go with its trait: {:?}", r.gone);
    }
    assert!(!r.gone.contains("src/shapes.rs::Circle.<impl>"));
}

#[test]
fn removing_every_method_of_an_inherent_impl_removes_the_impl() {
    let index = fixture_index();
    let r = plan(&index, &set(&["src/units.rs::Unit.factor", "src/units.rs::Unit.symbol"]), &BTreeSet::new());
    assert!(r.gone.contains("src/units.rs::Unit.<impl>"), "{:?}", r.gone);
    let r = plan(&index, &set(&["src/units.rs::Unit.factor"]), &BTreeSet::new());
    assert!(!r.gone.contains("src/units.rs::Unit.<impl>"));
}

#[test]
fn trait_impl_methods_are_stubbed_not_deleted() {
    let index = fixture_index();
    let r = plan(&index, &set(&["src/shapes.rs::Rect.<Shape>.area"]), &BTreeSet::new());
    assert!(r.gone.is_empty(), "{:?}", r.gone);
    assert!(r.stubbed.contains("src/shapes.rs::Rect.<Shape>.area"));
}

/// Found by `extractor/tests/robustness.rs`: the impl of a trait the index does not have
/// (`fmt::Display`) was taken for an inherent impl, so deleting its only method deleted it
/// (and `to_string()` callers broke); a trait impl removed on its own was deleted too.
#[test]
fn impls_of_outside_traits_and_trait_impls_removed_alone_are_stubbed() {
    let index = fixture_index();
    let fmt = "src/report.rs::Report.<Display>.fmt";
    for removed in [fmt, "src/report.rs::Report.<Display>"] {
        let r = plan(&index, &set(&[removed]), &BTreeSet::new());
        assert!(r.gone.is_empty(), "removing {removed}: {:?}", r.gone);
        assert!(r.stubbed.contains(fmt), "removing {removed}: {:?}", r.stubbed);
    }
    let r = plan(&index, &set(&["src/shapes.rs::Circle.<Shape>"]), &BTreeSet::new());
    assert!(r.gone.is_empty(), "{:?}", r.gone);
    assert!(r.stubbed.contains("src/shapes.rs::Circle.<Shape>.area"), "{:?}", r.stubbed);
    // With its type the trait impl still goes.
    let r = plan(&index, &set(&["src/shapes.rs::Circle", "src/shapes.rs::Circle.<Shape>"]), &BTreeSet::new());
    assert!(r.gone.contains("src/shapes.rs::Circle.<Shape>"), "{:?}", r.gone);
}

#[test]
fn remove_tests_inside_source_files() {
    let index = fixture_index();
    let masked = mask_tree(&index, &fixture_root(), &set(&["src/units.rs::tests.rounds"]));
    let units = &masked["src/units.rs"];
    assert!(!units.contains("fn rounds"), "{units}");
    assert!(units.contains("fn converts_between_units"));
}

/// The masked fixture builds (`cargo check --all-targets`) for removals that exercise
/// every rule: a type with its impls, stubs, a trait-impl method, a test in a source file.
#[carve_testutil::needs("cargo")]
fn masked_fixture_builds() {
    let index = fixture_index();
    let root = fixture_root();
    let cases: &[&[&str]] = &[
        &["src/shapes/polygon.rs::Point", "src/shapes/polygon.rs::Polygon", "src/shapes/polygon.rs::Polygon.edges"],
        &[
            "src/report.rs::summarize",
            "src/report.rs::largest",
            "src/units.rs::round_to",
            "src/report.rs::tests.largest_rect",
        ],
        &[
            "src/shapes.rs::Circle.diameter",
            "src/shapes.rs::Circle.<Shape>.perimeter",
            "src/units.rs::Unit.factor",
            "src/units.rs::Unit.symbol",
        ],
        &["src/report.rs::Report", "src/lib.rs::square"],
    ];
    for remove in cases {
        let dir = tempfile::tempdir().unwrap();
        carve_testutil::copy_dir(&root, dir.path());
        for (path, text) in mask_tree(&index, &root, &set(remove)) {
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        if let Err(e) = crate::rust::build_check(dir.path()) {
            panic!("masking {remove:?} does not build: {e}");
        }
    }
}

/// The fixture itself is a working crate: `cargo test` passes (unit tests in source files
/// and the integration test under `tests/`).
#[carve_testutil::needs("cargo")]
fn fixture_tests_pass() {
    let root = fixture_root();
    let target = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("cargo")
        .args(["test", "--offline", "--quiet"])
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "cargo test failed in {}:\n{text}", root.display());
    assert!(text.contains("test result: ok. 7 passed"), "{text}");
    assert!(text.contains("test result: ok. 3 passed"), "{text}");
}

/// Masking a whole generated crate (thousands of definitions) stays fast: the delete/stub
/// plan is computed once per set of removals, not once per file.
#[test]
fn one_plan_masks_every_file() {
    let mut sources = vec![("Cargo.toml".to_string(), b"[package]\nname = \"big\"\n".to_vec())];
    let mut lib = String::new();
    for m in 0..150 {
        lib.push_str(&format!("pub mod m{m};\n"));
        let mut text = String::from("use crate::m0::helper;\n");
        for s in 0..10 {
            text.push_str(&format!(
                "pub struct S{s} {{ pub x: i64 }}\nimpl S{s} {{\n    pub fn get(&self) -> i64 {{ helper(self.x) }}\n}}\n"
            ));
        }
        text.push_str("pub fn helper(x: i64) -> i64 { x + 1 }\n");
        sources.push((format!("src/m{m}.rs"), text.into_bytes()));
    }
    sources.push(("src/lib.rs".to_string(), lib.into_bytes()));
    let index = DefinitionIndex::from_sources(&sources);
    assert!(index.definitions.len() > 4000);
    let delete = set(&["src/m3.rs::S1", "src/m7.rs::helper"]);
    let none = BTreeSet::new();
    // Planned once for the tree (the plan looks at the whole index), then file by file.
    let plan = crate::support(crate::Language::Rust).plan_mask(crate::MaskRequest::new(&index, &delete, &none));
    let mut changed = 0;
    for (path, bytes) in &sources {
        let Some(file) = index.files.get(path) else {
            continue;
        };
        let text = String::from_utf8(bytes.clone()).unwrap();
        if !plan.mask_file(&text, file).unwrap().is_empty() {
            changed += 1;
        }
    }
    assert_eq!(changed, 2);
}

fn mask_sources(files: &[(&str, &str)], delete: &[&str]) -> BTreeMap<String, String> {
    let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
    let index = DefinitionIndex::from_sources(&sources);
    let delete = set(delete);
    let mut out = BTreeMap::new();
    for (path, text) in files {
        let file = &index.files[*path];
        let edits = crate::mask_file(Language::Rust, text, file, &index, &delete, &BTreeSet::new()).unwrap();
        let masked = apply(text, &edits).unwrap();
        assert!(parse_errors(Language::Rust, &masked).is_empty(), "{path}:\n{masked}");
        out.insert(path.to_string(), masked);
    }
    out
}

#[test]
fn impls_in_other_files_and_nested_use_leaves_go_with_their_type() {
    let out = mask_sources(
        &[
            ("src/lib.rs", "pub mod a;\npub mod b;\npub use a::{inner::{Gone, Kept}, other};\n"),
            (
                "src/a.rs",
                "pub mod inner {\n    /// Gone.\n    pub struct Gone;\n    pub struct Kept;\n}\npub fn other() {}\n",
            ),
            ("src/b.rs", "use crate::a::inner::Gone;\n\nimpl Gone {\n    pub fn f(&self) {}\n}\n\npub fn keep() {}\n"),
        ],
        &["src/a.rs::inner.Gone"],
    );
    assert_eq!(out["src/lib.rs"], "pub mod a;\npub mod b;\npub use a::{inner::{Kept}, other};\n");
    assert_eq!(out["src/a.rs"], "pub mod inner {\n    pub struct Kept;\n}\npub fn other() {}\n");
    assert_eq!(out["src/b.rs"], "pub fn keep() {}\n");
}

/// F2P tests removed one by one from files that keep other tests take with them the test
/// helpers and `use` leaves only they used: the report module's `largest_rect` (its
/// `rects` helper and `Ordering`), the integration file's `summaries` (`summarize`,
/// `Polygon`); what the remaining tests use stays.
#[test]
fn f2p_tests_take_their_unused_helpers_and_uses() {
    let index = fixture_index();
    let removed = set(&["src/report.rs::tests.largest_rect", "tests/integration.rs::summaries"]);
    let masked = mask_tree(&index, &fixture_root(), &removed);
    let (report, integration) = (&masked["src/report.rs"], &masked["tests/integration.rs"]);
    assert!(!report.contains("fn rects") && !report.contains("Ordering"), "{report}");
    assert!(report.contains("use crate::shapes::Rect;") && report.contains("fn total_in_millimetres"), "{report}");
    assert!(!integration.contains("summarize") && !integration.contains("Polygon"), "{integration}");
    assert!(integration.contains("use geometry::report::{Report};"), "{integration}");
    insta::assert_snapshot!(render(&masked));
}

/// What the per-test removal leaves: a helper another test still calls, a helper no test
/// called before, a trait imported for its methods, a glob, and every `use` of a module
/// that lost no test.
#[test]
fn per_test_removal_keeps_what_stays_in_use() {
    let lib = "pub fn double(x: i64) -> i64 { x * 2 }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use std::collections::BTreeSet;\n    use std::fmt::Write;\n\n    fn shared() -> i64 { 2 }\n\n    fn never_called() {}\n\n    fn only_gone() -> BTreeSet<i64> { BTreeSet::from([double(shared())]) }\n\n    #[test]\n    fn gone() {\n        let mut s = String::new();\n        write!(s, \"{:?}\", only_gone()).unwrap();\n        assert_eq!(double(shared()), 4);\n    }\n\n    #[test]\n    fn stays() {\n        let mut s = String::new();\n        write!(s, \"{}\", shared()).unwrap();\n    }\n}\n\n#[cfg(test)]\nmod other {\n    use std::collections::BTreeSet;\n\n    #[test]\n    fn untouched() {\n        assert!(BTreeSet::<i64>::new().is_empty());\n    }\n}\n";
    let out = mask_sources(&[("src/lib.rs", lib)], &["src/lib.rs::tests.gone"]);
    let masked = &out["src/lib.rs"];
    assert!(!masked.contains("fn gone") && !masked.contains("fn only_gone"), "{masked}");
    assert_eq!(masked.matches("use std::collections::BTreeSet;").count(), 1, "{masked}");
    for kept in
        ["use super::*;", "use std::fmt::Write;", "fn shared()", "fn never_called()", "fn stays()", "fn untouched()"]
    {
        assert!(masked.contains(kept), "{kept} is gone:\n{masked}");
    }
}

/// The masked fixture with F2P tests removed per test compiles its tests with no unused
/// helper or import left (`-D dead_code -D unused_imports`): without the per-test clean-up
/// `rects` and `Ordering` would be reported.
#[carve_testutil::needs("cargo")]
fn per_test_removal_leaves_no_unused_test_code() {
    let (index, root) = (fixture_index(), fixture_root());
    let dir = tempfile::tempdir().unwrap();
    carve_testutil::copy_dir(&root, dir.path());
    let removed = set(&["src/report.rs::tests.largest_rect", "tests/integration.rs::summaries"]);
    for (path, text) in mask_tree(&index, &root, &removed) {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let out = std::process::Command::new("cargo")
        .args(["check", "--offline", "--quiet", "--tests"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .env("RUSTFLAGS", "-D dead_code -D unused_imports")
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo check --tests failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn dead_neighbouring_use_leaves_go_as_one_run() {
    let src = "use geometry::{Circle, Rect, Shape};\n";
    let span = |name: &str| {
        let s = src.find(name).unwrap();
        (s, s + name.len())
    };
    let apply = |spans: Vec<(usize, usize)>| apply(src, &super::leaf_edits(src, spans)).unwrap();
    assert_eq!(apply(vec![span("Rect"), span("Shape")]), "use geometry::{Circle};\n");
    assert_eq!(apply(vec![span("Circle"), span("Rect")]), "use geometry::{Shape};\n");
    assert_eq!(apply(vec![span("Circle"), span("Shape")]), "use geometry::{Rect};\n");
}

/// An inherent impl whose methods all go keeps its associated `const`s, which code that
/// stays names (`Foo::A`); before, the whole impl went and the crate did not build
/// (the pattern of bitflags' `impl Flags { const … }` blocks).
#[test]
fn an_emptied_impl_keeps_its_consts() {
    let lib = "pub struct Foo;\n\nimpl Foo {\n    pub const A: u8 = 1;\n\n    pub fn f(&self) -> u8 {\n        1\n    }\n}\n\npub struct Bar;\n\nimpl Bar {\n    pub fn g(&self) {}\n}\n\npub fn user() -> u8 {\n    Foo::A\n}\n";
    let out = mask_sources(&[("src/lib.rs", lib)], &["src/lib.rs::Foo.f", "src/lib.rs::Bar.g"]);
    insta::assert_snapshot!(out["src/lib.rs"]);
}

/// A removed unit-test module file (`src/tests/apply.rs`, compiled into the lib's test
/// binary) names `Scale::apply`: the method is stubbed, not deleted, so the test patch
/// compiles again; the `mod apply;` item goes with the file.
#[test]
fn what_a_removed_unit_test_module_names_is_stubbed() {
    let files = [
        (
            "src/lib.rs",
            "pub struct Scale;\n\nimpl Scale {\n    pub fn apply(&self) -> u32 {\n        1\n    }\n}\n\n#[cfg(test)]\nmod tests;\n",
        ),
        ("src/tests.rs", "mod apply;\nmod unit;\n"),
        ("src/tests/apply.rs", "use crate::Scale;\n\n#[test]\nfn applies() {\n    assert_eq!(Scale.apply(), 1);\n}\n"),
    ];
    let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
    let index = DefinitionIndex::from_sources(&sources);
    let removed: BTreeSet<String> = ["src/tests/apply.rs".to_string()].into();
    let delete = set(&["src/lib.rs::Scale.apply", "src/lib.rs::Scale.<impl>"]);
    let (delete, stub) = super::stub_what_removed_modules_name(&index, &delete, &BTreeSet::new(), &removed);
    let mut r = plan(&index, &delete, &stub);
    r.removed_files = removed;
    let mut out = String::new();
    for (path, text) in &files[..2] {
        let edits = super::mask_file_with(text, &index.files[*path], &index, &r).unwrap();
        out.push_str(&format!("=== {path}\n{}", apply(text, &edits).unwrap()));
    }
    insta::assert_snapshot!(out);
}

/// Overlapping deletions (a stale index's neighbouring items) become their union; a
/// replacement that overlaps a deletion is the stale-index error.
#[test]
fn overlapping_deletions_merge_and_a_replacement_inside_one_is_an_error() {
    let merged = super::merge_overlapping_deletions(
        vec![Edit::delete(0, 10), Edit::delete(8, 20), Edit::delete(20, 22)],
        "src/lib.rs",
    );
    assert_eq!(merged, Ok(vec![Edit::delete(0, 20), Edit::delete(20, 22)]));
    let err = super::merge_overlapping_deletions(vec![Edit::delete(0, 10), Edit::replace(5, 7, "x")], "src/lib.rs");
    assert_eq!(err, Err(MaskError::EditsOverlap { path: "src/lib.rs".into(), position: 5 }));
}
