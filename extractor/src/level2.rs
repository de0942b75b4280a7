//! The Level 2 tree: F2P test files rewritten to import the feature from the solution
//! package (see `carve_languages::edit::rewrite_imports_for_level2`), and the solution
//! package itself — a reference `agent_code/__init__.py` that re-exports the original
//! implementation (`from pkg.mod import X`), used to validate the task, and an empty one
//! that must fail the rewritten tests.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use carve_languages::edit;
use carve_languages::index::{DefinitionIndex, NodeId};

use crate::contract::Contract;
use crate::{ExtractError, io_err};

/// Rewrite each of `test_files` (repository-relative) read from `original_root` so the
/// `extracted` objects are imported from `package`, and write it to the same path under
/// `out_root` (created as needed; `original_root` is only read). Files the index does not
/// know are copied unchanged. Returns the files whose text changed.
pub fn write_rewritten_tests(
    original_root: &Path,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    test_files: &BTreeSet<String>,
    package: &str,
    out_root: &Path,
) -> Result<BTreeSet<String>, ExtractError> {
    let mut changed = BTreeSet::new();
    for rel in test_files {
        let src = original_root.join(rel);
        let bytes = std::fs::read(&src).map_err(io_err(&src))?;
        let dst = out_root.join(rel);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let rewritten = match (index.files.get(rel), std::str::from_utf8(&bytes)) {
            (Some(file), Ok(text)) => {
                let edits = edit::rewrite_imports_for_level2(file.language, text, file, index, extracted, package);
                if edits.is_empty() {
                    None
                } else {
                    let out = edit::apply(text, &edits)
                        .map_err(|source| ExtractError::Apply { path: rel.clone(), source })?;
                    if let Some((line, message)) = edit::parse_errors(file.language, &out).into_iter().next() {
                        return Err(ExtractError::MaskedParse { path: rel.clone(), line, message });
                    }
                    Some(out)
                }
            }
            _ => None,
        };
        match rewritten {
            Some(text) => {
                std::fs::write(&dst, text).map_err(io_err(&dst))?;
                changed.insert(rel.clone());
            }
            None => {
                std::fs::write(&dst, &bytes).map_err(io_err(&dst))?;
            }
        }
    }
    Ok(changed)
}

/// The reference solution's `__init__.py`: re-exports the original implementation of every
/// name the Level 2 task asks for.
pub fn reference_agent_code(contract: &Contract) -> String {
    let names = contract.level2_names();
    let mut out = String::from("\"\"\"Reference solution: re-exports the original implementation.\"\"\"\n\n");
    for (module, name) in &names {
        let _ = writeln!(out, "from {module} import {name}");
    }
    out.push_str("\n__all__ = [");
    out.push_str(&names.iter().map(|(_, n)| format!("{n:?}")).collect::<Vec<_>>().join(", "));
    out.push_str("]\n");
    out
}

/// An `__init__.py` that exposes nothing: the rewritten tests must fail against it.
pub fn empty_agent_code() -> String {
    "\"\"\"Empty solution: exposes nothing.\"\"\"\n".to_string()
}

/// Write `<tree>/<package>/__init__.py` with `init_py`; returns its path.
pub fn write_agent_code(tree: &Path, package: &str, init_py: &str) -> Result<PathBuf, ExtractError> {
    let dir = tree.join(package);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let path = dir.join("__init__.py");
    std::fs::write(&path, init_py).map_err(io_err(&path))?;
    Ok(path)
}
