//! Rust end to end on `fixtures/rust/geometry`: `mask_tree` with chosen removals (an
//! inherent method another impl calls, a method only tests call) and their F2P tests named
//! by cargo ids — unit tests inside `#[cfg(test)]` modules of source files and an
//! integration test — whose output must pass `cargo check --all-targets`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use carve_extractor::{MaskPlan, mask_tree};
use carve_languages::index::{DefinitionIndex, IndexOptions};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/geometry")
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
const F2P: &[&str] =
    &["geometry::report::tests::total_in_millimetres", "geometry::shapes::tests::rect_square", "integration::mixed_report"];

#[test]
fn masked_tree_builds() {
    let cargo = std::process::Command::new("cargo").arg("--version").output().is_ok_and(|o| o.status.success());
    if !cargo {
        assert!(std::env::var_os("CI").is_none(), "cargo is not installed but CI is set");
        eprintln!("skipping masked_tree_builds: `cargo` is not on PATH");
        return;
    }
    let index = index();
    let plan = MaskPlan { extracted: extracted(), remove_test_files: BTreeSet::new(), remove_tests: ids(F2P) };
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
