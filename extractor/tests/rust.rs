//! Rust end to end on `fixtures/rust/geometry`: the contract of chosen removals (methods
//! of types that stay, inherent and trait impl; a whole type with its impls; a whole trait
//! impl; a trait's default method; a free function) as a snapshot, and `mask_tree` with
//! removals and their F2P tests named by cargo ids — unit tests inside `#[cfg(test)]`
//! modules of source files and an integration test — whose output must pass
//! `cargo check --all-targets`. The Level 1 statement of the contract is a snapshot too.

use std::collections::BTreeSet;
use std::path::PathBuf;

use carve_extractor::{Level, MaskPlan, StatementContext, build_contract, mask_tree, render_problem_statement};
use carve_languages::index::{DefinitionIndex, IndexOptions};

fn fixture() -> PathBuf {
    carve_testutil::fixture("rust/geometry")
}

fn index() -> DefinitionIndex {
    let opts = IndexOptions { include: Vec::new(), exclude: vec!["target".to_string()] };
    let index = DefinitionIndex::build(&fixture(), &opts).expect("index the fixture");
    assert!(index.files.contains_key("src/report.rs"), "{:?}", index.files.keys().collect::<Vec<_>>());
    index
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn extracted() -> BTreeSet<String> {
    ids(&["src/report.rs::Report.total_area", "src/shapes.rs::Rect.is_square"])
}

/// As the cargo runner names them: `target::module::test`.
const F2P: &[&str] = &[
    "geometry::report::tests::total_in_millimetres",
    "geometry::shapes::tests::rect_square",
    "integration::mixed_report",
];

#[test]
fn contract_names_the_type_and_trait_of_methods() {
    let index = index();
    let chosen = ids(&[
        "src/report.rs::Report.total_area",
        "src/report.rs::Report.<Display>.fmt",
        "src/shapes.rs::Circle",
        "src/shapes.rs::Circle.<impl>",
        "src/shapes.rs::Circle.new",
        "src/shapes.rs::Circle.<Shape>.area",
        "src/shapes.rs::Shape.name",
        "src/shapes/polygon.rs::Polygon.<Shape>",
        "src/units.rs::convert",
    ]);
    let contract = build_contract(&index, &chosen);
    let find = |id: &str| {
        fn walk<'a>(o: &'a carve_extractor::ContractObject, id: &str) -> Option<&'a carve_extractor::ContractObject> {
            if o.id == id { Some(o) } else { o.members.iter().find_map(|m| walk(m, id)) }
        }
        contract.objects.iter().find_map(|o| walk(o, id)).unwrap_or_else(|| panic!("{id} not in the contract"))
    };
    // An inherent method of a type that stays: listed under that type, imported through it.
    let report = contract.objects.iter().find(|o| o.id == "src/report.rs::Report").expect("Report entry");
    assert!(report.existing);
    let total = find("src/report.rs::Report.total_area");
    assert_eq!(total.enclosing_class.as_deref(), Some("Report"));
    assert_eq!((total.enclosing_trait.as_deref(), total.enclosing_function.as_deref()), (None, None));
    assert_eq!(total.enclosing_impl.as_deref(), Some("impl<'a, S: Shape + ?Sized> Report<'a, S>"));
    assert_eq!(total.import_path.as_deref(), Some("use crate::report::Report;"));
    assert_eq!(total.access, "Report::total_area");
    // A trait impl's method names the trait as the impl writes it.
    let fmt = find("src/report.rs::Report.<Display>.fmt");
    assert_eq!(
        (fmt.enclosing_class.as_deref(), fmt.enclosing_trait.as_deref()),
        (Some("Report"), Some("fmt::Display"))
    );
    assert_eq!(fmt.access, "<Report as fmt::Display>::fmt");
    // A whole type lists the methods of all its impl blocks.
    let circle = contract.objects.iter().find(|o| o.id == "src/shapes.rs::Circle").expect("Circle entry");
    let members: Vec<&str> = circle.members.iter().map(|m| m.access.as_str()).collect();
    assert_eq!(
        members,
        [
            "Circle::new",
            "Circle::diameter",
            "<Circle as Shape>::area",
            "<Circle as Shape>::perimeter",
            "<Circle as Shape>::name"
        ]
    );
    insta::assert_json_snapshot!("geometry_contract", contract);
    // The statement writes methods inside their impl blocks.
    let ctx = StatementContext::new(Level::One, "geometry", F2P.iter().map(|s| s.to_string()).collect());
    let statement = render_problem_statement(&contract, &ctx);
    assert!(statement.contains("impl<S: Shape + ?Sized> fmt::Display for Report<'_, S> {\n    fn fmt("), "{statement}");
    insta::assert_snapshot!("geometry_statement_level1", statement);
}

#[carve_testutil::needs("cargo")]
fn masked_tree_builds() {
    let index = index();
    let plan = MaskPlan {
        extracted: extracted(),
        remove_test_files: BTreeSet::new(),
        remove_tests: ids(F2P),
        ..Default::default()
    };
    let out = tempfile::tempdir().expect("tempdir");
    let masked = out.path().join("masked");
    let outcome = mask_tree(&fixture(), &index, &plan, &masked).expect("mask the fixture");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let report = std::fs::read_to_string(masked.join("src/report.rs")).expect("masked report.rs");
    // `Display::fmt` stays and calls `total_area`: stubbed.
    assert!(report.contains("pub fn total_area(&self) -> f64 {\n        todo!()\n    }"), "{report}");
    let shapes = std::fs::read_to_string(masked.join("src/shapes.rs")).expect("masked shapes.rs");
    // Only `rect_square`, removed with it, called `is_square`: deleted, not stubbed.
    assert!(!shapes.contains("is_square") && shapes.contains("fn circle_area()"), "{shapes}");
    // Only the named test of the `#[cfg(test)]` module goes.
    assert!(!report.contains("fn total_in_millimetres") && report.contains("fn largest_rect()"), "{report}");
    let integration = std::fs::read_to_string(masked.join("tests/integration.rs")).expect("masked integration.rs");
    assert!(!integration.contains("fn mixed_report") && integration.contains("fn summaries()"), "{integration}");
    carve_languages::rust::build_check(&masked).unwrap_or_else(|e| panic!("{e}"));
}
