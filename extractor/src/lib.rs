//! Source edits, interface contracts, problem statements and patches for carved tasks.
//!
//! This crate is grammar-free: it works on the [`DefinitionIndex`](carve_languages::DefinitionIndex)
//! and calls [`carve_languages::edit`] for the language-specific edits. It owns
//!
//! - [`mask`]: the masked tree (a copy of the repository with the feature deleted and the
//!   F2P tests removed), checked to re-parse and compile;
//! - [`patch`]: the bundle's patches between trees (`mask.patch`, `gold.patch`, `test.patch`);
//! - [`contract`]: the interface contract (`contract.json`) of what a solver must implement;
//! - [`statement`]: Level 1 and Level 2 problem statements rendered from our templates;
//! - [`level2`]: the Level 2 tree: rewritten F2P tests and the `agent_code` package.
//!
//! Formats are documented in `docs/formats.md` ("contract" and "bundle files").

pub mod contract;
pub mod level2;
pub mod mask;
pub mod patch;
pub mod plan;
pub mod statement;

pub use contract::{CONTRACT_VERSION, Contract, ContractObject, build_contract};
pub use mask::{MaskOptions, MaskOutcome, MaskPlan, Stats, list_tree_files, mask_tree, mask_tree_with};
pub use patch::{Patches, build_patches};
pub use statement::{
    Level, SOLUTION_PACKAGE, StatementContext, feature_description, render_problem_statement, test_docstrings,
    test_facts,
};

use std::path::PathBuf;

/// Everything that can go wrong while extracting; each names the file or command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// A file operation of `carve-core` (it names the path).
    #[error(transparent)]
    Fs(#[from] carve_core::fs::IoError),
    /// A patch that could not be made (it names the file).
    #[error(transparent)]
    Patch(#[from] carve_core::patch::PatchError),
    #[error("output directory {out} is inside the repository {root}; choose a directory outside it")]
    OutputInsideRepository { out: PathBuf, root: PathBuf },
    #[error("output directory {0} already exists and is not empty; remove it or choose another")]
    OutputNotEmpty(PathBuf),
    #[error("{path} is not valid UTF-8; carve only edits and diffs text files")]
    NotText { path: String },
    #[error("masking {path}: {source}")]
    Mask { path: String, source: carve_languages::edit::MaskError },
    #[error("masking {path}: edits could not be applied: {source}")]
    Apply { path: String, source: carve_languages::edit::EditError },
    #[error(
        "masked {path} does not parse: line {line}: {message} (this is a carve bug; please report it with the file)"
    )]
    MaskedParse { path: String, line: usize, message: String },
    #[error(
        "masked {path} does not compile: line {line}: {message} (this is a carve bug; please report it with the file)"
    )]
    MaskedCompile { path: String, line: usize, message: String },
    #[error("running `{command}`: {message}")]
    Command { command: String, message: String },
    #[error("{language} has no Level 2 (from-scratch) tasks; ask for Level 1 only")]
    NoLevel2 { language: carve_languages::Language },
    #[error("no {language} Level 2 package: {reason}")]
    Level2 { language: carve_languages::Language, reason: String },
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> ExtractError {
    let path = path.into();
    move |source| ExtractError::Io { path, source }
}
