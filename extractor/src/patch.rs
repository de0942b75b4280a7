//! The patches of a bundle, as `carve_core::patch::unified_diff`s of chosen files between
//! the original and the masked tree.
//!
//! A bundle has three: `mask.patch` (original → masked, F2P test removal included),
//! `gold.patch` (masked → original for the feature's code only: no test code) and
//! `test.patch` (masked → original for the F2P tests only). `test.patch` alone puts the F2P
//! tests back on the masked state; gold and test applied in either order give the original:
//! original + mask + gold + test = original.

use std::collections::BTreeSet;
use std::path::Path;

use carve_core::patch::{apply_patch, file_diff, unified_diff};

use crate::mask::{MaskOutcome, SplitFile};
use crate::{ExtractError, io_err};

/// The three patches of a bundle, and what the user should know about them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patches {
    pub mask: String,
    pub gold: String,
    pub test: String,
    /// Split files whose gold and test hunks could not be kept apart (see
    /// [`build_patches`]).
    pub warnings: Vec<String>,
}

/// Patches for a masked tree: `mask` covers every changed and removed file; `test` the
/// removed test files and the files whose every change is test code
/// (`MaskOutcome::test_edited_files`); `gold` the other changed files. A file that lost both
/// code and F2P tests (`MaskOutcome::split_files`) is split: its gold part takes the masked
/// file to `code_restored`, its test part to `tests_restored`, so each applies alone to the
/// masked state and the two apply after each other in either order. The context of its
/// hunks narrows (3, 2, then 1 line) until both orders give the original (checked with `git
/// apply`); when even one line of context joins them, the whole file goes to the gold patch
/// as before, with a warning.
pub fn build_patches(original: &Path, masked: &Path, outcome: &MaskOutcome) -> Result<Patches, ExtractError> {
    let split: BTreeSet<String> = outcome.split_files.keys().cloned().collect();
    let task: BTreeSet<String> =
        outcome.changed_files.difference(&outcome.test_edited_files).filter(|f| !split.contains(*f)).cloned().collect();
    let tests: BTreeSet<String> = outcome.removed_files.union(&outcome.test_edited_files).cloned().collect();
    let all: BTreeSet<String> = task.iter().chain(&tests).chain(&split).cloned().collect();
    let mut patches = Patches { mask: unified_diff(original, masked, &all)?, ..Default::default() };
    // File by file in sorted order, so a split file's parts sit where its name sorts.
    for rel in task.iter().chain(&tests).chain(&split).collect::<BTreeSet<_>>() {
        let one: BTreeSet<String> = [rel.clone()].into();
        let Some(parts) = outcome.split_files.get(rel) else {
            let target = if tests.contains(rel) { &mut patches.test } else { &mut patches.gold };
            target.push_str(&unified_diff(masked, original, &one)?);
            continue;
        };
        let read = |root: &Path| std::fs::read_to_string(root.join(rel)).map_err(io_err(root.join(rel)));
        let (masked_text, original_text) = (read(masked)?, read(original)?);
        match split_patches(rel, &masked_text, &original_text, parts)? {
            Some((gold, test)) => {
                patches.gold.push_str(&gold);
                patches.test.push_str(&test);
            }
            None => {
                patches.warnings.push(format!(
                    "{rel} lost feature code and F2P tests within a line of each other: its whole change, tests included, is in gold.patch"
                ));
                patches.gold.push_str(&unified_diff(masked, original, &one)?);
            }
        }
    }
    Ok(patches)
}

/// The gold and test parts of a split file, with the widest context (3 to 1 lines) at which
/// each part applies alone to the masked file and both, in either order, give the original.
fn split_patches(
    rel: &str,
    masked: &str,
    original: &str,
    parts: &SplitFile,
) -> Result<Option<(String, String)>, ExtractError> {
    for context in [3, 2, 1] {
        let gold = file_diff(rel, masked, &parts.code_restored, context);
        let test = file_diff(rel, masked, &parts.tests_restored, context);
        if gives_original(rel, masked, original, &gold, &test)? && gives_original(rel, masked, original, &test, &gold)?
        {
            return Ok(Some((gold, test)));
        }
    }
    Ok(None)
}

/// Whether `first` then `second`, applied with `git apply` to a tree holding `masked` at
/// `rel`, leave `original` there.
fn gives_original(rel: &str, masked: &str, original: &str, first: &str, second: &str) -> Result<bool, ExtractError> {
    let dir = tempfile::tempdir().map_err(io_err(std::env::temp_dir()))?;
    let tree = dir.path().join("tree");
    let path = tree.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    std::fs::write(&path, masked).map_err(io_err(&path))?;
    for patch in [first, second] {
        if apply_patch(&tree, patch, false, &dir.path().join("p.patch")).is_err() {
            return Ok(false);
        }
    }
    Ok(std::fs::read_to_string(&path).map_err(io_err(&path))? == original)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Rust-like file: code at the top, its test module at the bottom.
    const ORIGINAL: &str = "fn keep() {}\n\nfn feature() {}\n\nfn other() {}\n\nfn more() {}\n\nmod tests {\n    fn t_keep() {}\n\n    fn t_feature() {}\n}\n";

    fn outcome(masked: &str, code_restored: &str, tests_restored: &str) -> (tempfile::TempDir, MaskOutcome) {
        let dir = tempfile::tempdir().unwrap();
        for (side, text) in [("o", ORIGINAL), ("m", masked)] {
            std::fs::create_dir_all(dir.path().join(side)).unwrap();
            std::fs::write(dir.path().join(side).join("lib.rs"), text).unwrap();
        }
        let split = SplitFile { code_restored: code_restored.into(), tests_restored: tests_restored.into() };
        let outcome = MaskOutcome {
            changed_files: ["lib.rs".to_string()].into(),
            split_files: [("lib.rs".to_string(), split)].into(),
            ..Default::default()
        };
        (dir, outcome)
    }

    #[test]
    fn a_file_that_loses_code_and_tests_is_split_between_gold_and_test() {
        let masked = "fn keep() {}\n\nfn other() {}\n\nfn more() {}\n\nmod tests {\n    fn t_keep() {}\n}\n";
        let code_restored = ORIGINAL.replace("\n\n    fn t_feature() {}", "");
        let tests_restored = ORIGINAL.replace("fn feature() {}\n\n", "");
        let (dir, outcome) = outcome(masked, &code_restored, &tests_restored);
        let p = build_patches(&dir.path().join("o"), &dir.path().join("m"), &outcome).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert!(p.gold.contains("+fn feature() {}") && !p.gold.contains("t_feature"), "{}", p.gold);
        assert!(p.test.contains("+    fn t_feature() {}") && !p.test.contains("+fn feature"), "{}", p.test);
        assert!(p.mask.contains("-fn feature() {}") && p.mask.contains("-    fn t_feature() {}"), "{}", p.mask);
    }

    #[test]
    fn hunks_too_close_for_any_context_keep_the_whole_file_in_gold_with_a_warning() {
        // The code and the test removed are neighbours: one line of context of either part
        // is a line the other part changes.
        let original_close = "fn a() {}\nfn feature() {}\nfn t_feature() {}\nfn b() {}\n";
        let dir = tempfile::tempdir().unwrap();
        for (side, text) in [("o", original_close), ("m", "fn a() {}\nfn b() {}\n")] {
            std::fs::create_dir_all(dir.path().join(side)).unwrap();
            std::fs::write(dir.path().join(side).join("lib.rs"), text).unwrap();
        }
        let split = SplitFile {
            code_restored: "fn a() {}\nfn feature() {}\nfn b() {}\n".into(),
            tests_restored: "fn a() {}\nfn t_feature() {}\nfn b() {}\n".into(),
        };
        let outcome = MaskOutcome {
            changed_files: ["lib.rs".to_string()].into(),
            split_files: [("lib.rs".to_string(), split)].into(),
            ..Default::default()
        };
        let p = build_patches(&dir.path().join("o"), &dir.path().join("m"), &outcome).unwrap();
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(p.test.is_empty() && p.gold.contains("+fn t_feature() {}"), "{}", p.gold);
    }
}
