//! Index tests: the geometry fixture crate (snapshot), qualnames, test marking and
//! reference resolution.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::index::{DefinitionIndex, DefinitionKind, IndexOptions};

pub(crate) fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/geometry")
}

pub(crate) fn fixture_index() -> DefinitionIndex {
    DefinitionIndex::build(&fixture_root(), &IndexOptions::default()).expect("fixture indexes")
}

fn sources(files: &[(&str, &str)]) -> DefinitionIndex {
    let s: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
    DefinitionIndex::from_sources(&s)
}

#[test]
fn fixture_index_summary() {
    let index = fixture_index();
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    insta::assert_snapshot!(carve_testutil::index_summary(&index));
}

/// What the contract is built from: full signatures with generics, lifetimes, where
/// clauses, attributes, visibility, `///` docs, receivers and the enclosing impl.
#[test]
fn contract_material_of_chosen_definitions() {
    let index = fixture_index();
    let chosen = [
        "src/report.rs::Report",
        "src/report.rs::Report.<impl>",
        "src/report.rs::Report.add",
        "src/report.rs::Report.<Display>.fmt",
        "src/report.rs::summarize",
        "src/report.rs::largest",
        "src/shapes.rs::Shape",
        "src/shapes.rs::Shape.name",
        "src/shapes.rs::Circle.<Shape>",
        "src/units.rs::Unit",
        "src/lib.rs::square",
        "src/units.rs::tests.rounds",
    ];
    let picked: Vec<_> = chosen.iter().map(|id| index.get(id).unwrap_or_else(|| panic!("{id} not indexed"))).collect();
    insta::assert_yaml_snapshot!(picked);
}

#[test]
fn qualnames_nest_modules_and_tell_trait_impls_apart() {
    let index = sources(&[(
        "src/geo.rs",
        "pub mod shapes {\n    pub trait Shape { fn area(&self) -> f64; }\n    pub struct Circle;\n    impl Circle { pub fn area(&self) -> f64 { 1.0 } }\n    impl Shape for Circle { fn area(&self) -> f64 { self.area() } }\n    impl From<u8> for Circle { fn from(_: u8) -> Self { Circle } }\n    macro_rules! m { () => {} }\n}\n#[cfg(test)]\nmod tests {\n    use super::shapes::Circle;\n    #[test]\n    fn t() { let _ = Circle; }\n}\n",
    )]);
    let kinds: BTreeMap<&str, (DefinitionKind, bool)> =
        index.definitions.values().map(|d| (d.id.as_str(), (d.kind, d.is_test))).collect();
    assert_eq!(kinds.get("src/geo.rs::shapes.Circle.area"), Some(&(DefinitionKind::Method, false)));
    assert_eq!(kinds.get("src/geo.rs::shapes.Circle.<Shape>.area"), Some(&(DefinitionKind::Method, false)));
    assert_eq!(kinds.get("src/geo.rs::shapes.Circle.<From<u8>>.from"), Some(&(DefinitionKind::Method, false)));
    assert_eq!(kinds.get("src/geo.rs::shapes.Circle.<impl>"), Some(&(DefinitionKind::Impl, false)));
    assert_eq!(kinds.get("src/geo.rs::shapes.m"), Some(&(DefinitionKind::Macro, false)));
    assert_eq!(kinds.get("src/geo.rs::shapes"), Some(&(DefinitionKind::Module, false)));
    assert_eq!(kinds.get("src/geo.rs::tests.t"), Some(&(DefinitionKind::Function, true)));
    let t = index.get("src/geo.rs::tests.t").unwrap();
    assert_eq!(t.references, vec!["src/geo.rs::shapes.Circle".to_string()]);
    let imp = index.get("src/geo.rs::shapes.Circle.<Shape>").unwrap();
    assert_eq!(imp.parent.as_deref(), Some("src/geo.rs::shapes.Circle"));
    assert_eq!(imp.load_references[0].target, "src/geo.rs::shapes.Shape");
}

#[test]
fn unparsable_files_are_skipped_with_their_line() {
    let index = sources(&[("src/lib.rs", "fn ok() {}\nfn broken( {\n")]);
    assert!(index.files.is_empty());
    assert!(index.skipped[0].reason.contains("src/lib.rs:"), "{:?}", index.skipped);
}
