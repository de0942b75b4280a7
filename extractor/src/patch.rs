//! The patches of a bundle, as `carve_core::patch::unified_diff`s of chosen files between
//! the original and the masked tree.
//!
//! A bundle has three: `mask.patch` (original → masked, F2P test removal included),
//! `gold.patch` (masked → original, non-test files) and `test.patch` (adds the F2P tests
//! back): original + mask + test + gold = original.

use std::collections::BTreeSet;
use std::path::Path;

use carve_core::patch::unified_diff;

use crate::ExtractError;
use crate::mask::MaskOutcome;

/// The three patches of a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patches {
    pub mask: String,
    pub gold: String,
    pub test: String,
}

/// Patches for a masked tree: `mask` covers every changed and removed file, `gold` the
/// changed files that are not F2P-test-only edits; `test` restores the removed test files
/// and F2P-test-only edits.
pub fn build_patches(original: &Path, masked: &Path, outcome: &MaskOutcome) -> Result<Patches, ExtractError> {
    let task: BTreeSet<String> = outcome.changed_files.difference(&outcome.test_edited_files).cloned().collect();
    let tests: BTreeSet<String> = outcome.removed_files.union(&outcome.test_edited_files).cloned().collect();
    // mask.patch alone takes the original to the masked state, F2P test removal included:
    // original + mask + test + gold = original.
    let all: BTreeSet<String> = task.union(&tests).cloned().collect();
    Ok(Patches {
        mask: unified_diff(original, masked, &all)?,
        gold: unified_diff(masked, original, &task)?,
        test: unified_diff(masked, original, &tests)?,
    })
}
