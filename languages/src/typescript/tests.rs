//! Tests of the TypeScript/JavaScript index, masking and build check.

use std::path::{Path, PathBuf};

use crate::index::DefinitionIndex;

pub(super) fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/typescript/ledger")
}

/// `(path, bytes)` of every source file of the fixture (no node_modules).
pub(super) fn fixture_sources() -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "node_modules" {
                    walk(root, &p, out);
                }
            } else if crate::Language::from_path(&p).is_some() {
                let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    let mut out = Vec::new();
    let root = fixture_root();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

pub(super) fn fixture_index() -> DefinitionIndex {
    DefinitionIndex::from_sources(&fixture_sources())
}

#[test]
fn dump() {
    let idx = fixture_index();
    for d in idx.definitions.values() {
        eprintln!("{} [{:?}] L{} parent={:?}\n   sig={:?} ret={:?} tp={:?} doc={:?}\n   refs={:?}", d.id, d.kind, d.def_line, d.parent, d.signature.text, d.signature.returns, d.signature.type_parameters, d.docstring.as_deref().map(|s| s.chars().take(30).collect::<String>()), d.references);
    }
    for f in idx.files.values() {
        eprintln!("FILE {} test={} exported={:?} mrefs={:?}", f.path, f.is_test, f.exported, f.module_references);
        for i in &f.imports {
            eprintln!("   import {} -> {:?} {:?}", i.module, i.resolved_path, i.names.iter().map(|n| (&n.name, &n.alias, &n.target)).collect::<Vec<_>>());
        }
    }
    eprintln!("skipped {:?}", idx.skipped);
}
