//! Tests of the TypeScript/JavaScript index, masking and build check, mostly over the
//! `fixtures/typescript/ledger` project.

mod index;
mod mask;
mod robust;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::edit::{Edit, apply};
use crate::index::{DefinitionIndex, NodeId};

pub(super) fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/typescript/ledger")
}

/// `(path, bytes)` of every TypeScript/JavaScript file of the fixture (no node_modules).
pub(super) fn fixture_sources() -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != "node_modules" {
                    walk(root, &p, out);
                }
            } else if crate::Language::from_path(&p).is_some() {
                let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read(&p).expect("fixture file is readable")));
            }
        }
    }
    let mut out = Vec::new();
    let root = fixture_root();
    walk(&root, &root, &mut out);
    out.sort();
    assert!(out.len() >= 10, "fixture not found under {}", root.display());
    out
}

pub(super) fn fixture_index() -> DefinitionIndex {
    DefinitionIndex::from_sources(&fixture_sources())
}

/// The extractor's delete-or-stub split (`extractor::plan::split_removals`), restated so
/// that this crate's tests do not depend on the extractor: a removed definition is
/// stubbed when a definition outside the removed ones, or module-level code, names it.
pub(super) fn split(index: &DefinitionIndex, remove: &BTreeSet<NodeId>) -> (BTreeSet<NodeId>, BTreeSet<NodeId>) {
    let within = |id: &str| index.lineage(id).any(|c| remove.contains(c));
    let mut referenced: BTreeSet<&NodeId> = BTreeSet::new();
    for d in index.definitions.values().filter(|d| !within(&d.id)) {
        referenced.extend(d.references.iter());
        referenced.extend(d.load_references.iter().map(|l| &l.target));
    }
    for f in index.files.values() {
        referenced.extend(f.module_references.iter().map(|m| &m.target));
    }
    let (mut stub, mut delete): (BTreeSet<NodeId>, BTreeSet<NodeId>) =
        remove.iter().cloned().partition(|id| referenced.contains(id));
    // What a stub's signature (or a stubbed type's body) needs is stubbed too.
    let removed_root = |id: &str| index.lineage(id).filter(|c| remove.contains(*c)).last().map(str::to_string);
    let mut queue: Vec<NodeId> = stub.iter().cloned().collect();
    while let Some(s) = queue.pop() {
        let in_subtree = |id: &str| index.lineage(id).any(|c| c == s);
        let needs: Vec<NodeId> = index
            .definitions
            .values()
            .filter(|d| in_subtree(&d.id))
            .flat_map(|d| d.load_references.iter().filter_map(|l| removed_root(&l.target)))
            .collect();
        for n in needs {
            if delete.remove(&n) {
                stub.insert(n.clone());
                queue.push(n);
            }
        }
    }
    (delete, stub)
}

/// Mask every file of `sources` for `remove`; returns the changed files' new text.
pub(super) fn mask_all(
    sources: &[(String, Vec<u8>)],
    index: &DefinitionIndex,
    remove: &BTreeSet<NodeId>,
) -> Vec<(String, String)> {
    let (delete, stub) = split(index, remove);
    let mut out = Vec::new();
    for (path, bytes) in sources {
        let Some(file) = index.files.get(path) else {
            continue;
        };
        let Ok(source) = std::str::from_utf8(bytes) else {
            continue;
        };
        let edits: Vec<Edit> = super::edit::mask_file(source, file, index, &delete, &stub)
            .unwrap_or_else(|e| panic!("masking {path} for {remove:?}: {e}"));
        if !edits.is_empty() {
            let masked = apply(source, &edits).unwrap_or_else(|e| panic!("applying edits to {path}: {e}"));
            out.push((path.clone(), masked));
        }
    }
    out
}

pub(super) fn set(ids: &[&str]) -> BTreeSet<NodeId> {
    ids.iter().map(|s| s.to_string()).collect()
}
