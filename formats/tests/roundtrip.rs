//! Real carve outputs (`tests/examples/<case>/`, trimmed: long strings cut, long lists and
//! data maps shortened) parse into their types and serialize again, with the writers'
//! settings, to the same bytes: field order, nulls and left-out fields are as carve writes
//! them. `cargo run -p carve-formats --example same_bytes -- DIR` runs the same check over
//! untrimmed outputs.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn example_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { example_files(&p, out) } else { out.push(p) }
    }
}

#[test]
fn every_example_serializes_again_to_the_same_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/examples");
    let mut files = Vec::new();
    example_files(&root, &mut files);
    files.sort();
    let mut kinds = BTreeSet::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let again = common::rewritten(path, &text)
            .unwrap_or_else(|| panic!("{} is no format of carve-formats", path.display()))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            again == text.as_bytes(),
            "{} does not serialize to the same bytes: {}",
            path.display(),
            common::first_difference(text.as_bytes(), &again)
        );
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let gate = name == "validation.json" && text.contains("\"gate\":");
        kinds.insert(if gate { "gate validation.json".to_string() } else { name });
    }
    let expected = [
        "audit.json",
        "chain.json",
        "contract.json",
        "gate validation.json",
        "grade.json",
        "instance.json",
        "run.json",
        "tasks.jsonl",
        "validation.json",
    ];
    assert_eq!(kinds, expected.iter().map(|s| s.to_string()).collect(), "every format has an example");
}

#[test]
fn a_field_out_of_order_or_a_null_left_out_is_a_different_byte() {
    // The check can fail: the same instance with `created_at` moved, or left out instead of null.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/examples/python-inventory-pricing-lv1/instance.json");
    let text = std::fs::read_to_string(&root).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let created = v.as_object_mut().unwrap().shift_remove("created_at").unwrap();
    assert!(created.is_null(), "the fixture is no git work tree: created_at is null");
    let mut moved = v.clone();
    moved.as_object_mut().unwrap().insert("created_at".into(), created);
    for changed in [v, moved] {
        let mut bytes = serde_json::to_vec_pretty(&changed).unwrap();
        bytes.push(b'\n');
        let text = String::from_utf8(bytes).unwrap();
        let again = common::rewritten(&root, &text).unwrap().unwrap();
        assert_ne!(again, text.as_bytes());
    }
}
