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
    let s: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect();
    DefinitionIndex::from_sources(&s)
}

/// id → (kind, parent, is_test, references), compact enough to review.
fn summary(index: &DefinitionIndex) -> BTreeMap<String, String> {
    index
        .definitions
        .values()
        .map(|d| {
            let mut line = format!("{:?}", d.kind);
            if let Some(p) = &d.parent {
                line.push_str(&format!(" parent={p}"));
            }
            if d.is_test {
                line.push_str(" test");
            }
            if !d.references.is_empty() {
                line.push_str(&format!(" refs=[{}]", d.references.join(", ")));
            }
            for l in &d.load_references {
                line.push_str(&format!(" load={}", l.target));
            }
            (d.id.clone(), line)
        })
        .collect()
}

#[test]
fn fixture_index_summary() {
    let index = fixture_index();
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    insta::assert_yaml_snapshot!(summary(&index));
}
