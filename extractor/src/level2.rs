//! The Level 2 tree: F2P test files rewritten to import the feature from the solution
//! package, and the solution package itself — a reference made from the original
//! implementation (Python: `agent_code/__init__.py` running the feature's own definitions
//! beside the masked project; Go: a copy of them; TypeScript: copies of their files), used to
//! validate the task, and an empty one that must fail the rewritten tests. The language's
//! `Level2Packaging` writes both.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use carve_languages::index::{DefinitionIndex, NodeId};
use carve_languages::{CarriedTests, Language, Level2Packaging, Level2Sources, edit, support};

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
                let edits = support(file.language)
                    .level2()
                    .map(|l2| l2.rewrite_test_imports(original_root, text, file, index, extracted, package))
                    .unwrap_or_default();
                if edits.is_empty() {
                    None
                } else {
                    let out = edit::apply(text, &edits)
                        .map_err(|source| ExtractError::Apply { path: rel.clone(), source })?;
                    if let Some((line, message)) = support(file.language).parse_errors(&out).into_iter().next() {
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

/// A file of a Level 2 solution package: its path relative to the tree
/// (`agent_code/__init__.py`) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    pub path: String,
    pub text: String,
}

fn packaging(language: Language) -> Result<&'static dyn Level2Packaging, ExtractError> {
    support(language).level2().ok_or(ExtractError::NoLevel2 { language })
}

/// The reference solution, made by the language from the original tree `root`: Python runs
/// the original text of every name the Level 2 task asks for beside the masked project; Go
/// copies the feature's code into the package; TypeScript copies the feature's files under the
/// package and re-exports its names from them. `package` is the package's import path
/// ([`package_import`]). Its files, the init file first (Go: one per package of a feature
/// that spans several).
pub fn reference_package(
    contract: &Contract,
    root: &Path,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
) -> Result<Vec<PackageFile>, ExtractError> {
    let l2 = packaging(contract.language)?;
    let names = contract.level2_names();
    let sources = Level2Sources { root, index, extracted, names: &names, package };
    let files =
        l2.reference_files(&sources).map_err(|reason| ExtractError::Level2 { language: contract.language, reason })?;
    Ok(files.into_iter().map(|(path, text)| PackageFile { path, text }).collect())
}

/// What the package must declare besides the contract's objects, as a sentence for the
/// problem statement (see `Level2Packaging::support_note`).
pub fn support_note(
    contract: &Contract,
    root: &Path,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
) -> Option<String> {
    let l2 = packaging(contract.language).ok()?;
    let names = contract.level2_names();
    l2.support_note(&Level2Sources { root, index, extracted, names: &names, package })
}

/// The import path of the Level 2 package named `name` in the tree at `root` of `index`.
pub fn package_import(
    language: Language,
    root: &Path,
    index: &DefinitionIndex,
    name: &str,
) -> Result<String, ExtractError> {
    packaging(language)?.package_import(root, index, name).map_err(|reason| ExtractError::Level2 { language, reason })
}

/// Whether the reference solution of `language` needs the original implementation restored.
pub fn reference_restores_original(language: Language) -> bool {
    support(language).level2().is_none_or(|l2| l2.reference_restores_original())
}

/// Write the files besides the package's init file that make it usable into `tree` (a copy
/// of the masked project holding the init file): the package's manifest and the project's
/// files that must name it (see `Level2Packaging::project_files`). Returns their paths.
pub fn write_project_files(
    language: Language,
    tree: &Path,
    package: &str,
    env: &[(String, String)],
) -> Result<Vec<String>, ExtractError> {
    packaging(language)?.project_files(tree, package, env).map_err(|reason| ExtractError::Level2 { language, reason })
}

/// The F2P `tests` the language carries into the Level 2 test patch as new tests that import
/// from `package` (Rust: doctests become an integration test), read from the tree at `root`;
/// `Ok(None)` when none (see `Level2Packaging::carried_tests`).
pub fn carried_tests(
    language: Language,
    root: &Path,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    tests: &[String],
    package: &str,
) -> Result<Option<CarriedTests>, ExtractError> {
    packaging(language)?
        .carried_tests(root, index, extracted, tests, package)
        .map_err(|reason| ExtractError::Level2 { language, reason })
}

/// Why the F2P tests, as `(test id, file)`, cannot import from the package, if they cannot
/// (see `Level2Packaging::tests_blocker`).
pub fn tests_blocker(language: Language, index: &DefinitionIndex, tests: &[(String, String)]) -> Option<String> {
    support(language).level2().and_then(|l2| l2.tests_blocker(index, tests))
}

/// A package that exposes nothing: the rewritten tests must fail against it.
pub fn empty_package(language: Language, package: &str) -> Result<PackageFile, ExtractError> {
    let l2 = packaging(language)?;
    Ok(PackageFile { path: l2.init_file(package), text: l2.empty(package) })
}

/// The empty states of the reference's other files among `paths` (the files a Level 2 gold
/// patch adds): see `Level2Packaging::empty_file`.
pub fn empty_files(language: Language, package: &str, paths: &[&str]) -> Result<Vec<PackageFile>, ExtractError> {
    let l2 = packaging(language)?;
    let init = l2.init_file(package);
    Ok(paths
        .iter()
        .filter(|p| **p != init)
        .filter_map(|p| Some(PackageFile { path: p.to_string(), text: l2.empty_file(package, p)? }))
        .collect())
}

/// Write `file` under `tree`; returns its path.
pub fn write_package(tree: &Path, file: &PackageFile) -> Result<PathBuf, ExtractError> {
    let path = tree.join(&file.path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    std::fs::write(&path, &file.text).map_err(io_err(&path))?;
    Ok(path)
}
