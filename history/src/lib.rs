//! FeatureArc for carve: same-feature chains mined from a repository's git history, turned
//! into multi-stage tasks whose every stage is validated by the project's own tests.
//!
//! The crate owns the history side of carve, deterministically and with no model in the loop:
//! - [`git`] reads first-parent history with gix (pure Rust; never writes to the repository);
//! - [`analysis`] walks a commit range and records per commit the definitions added,
//!   modified, removed and renamed, the tests added or modified and the import graph,
//!   re-indexing only the files each commit changed (FeatureArc III-A);
//! - [`mine`] builds the evidence graph between commits (shared definitions, references
//!   from later code into earlier additions, shared files, imports) and searches it for
//!   chains of 2–10 stages, keeping a chain only when every stage changes tests that
//!   exercise the feature and builds on code an earlier stage added (III-B);
//! - [`review`] hands kept chains to an optional external reviewer command (JSON in, JSON out);
//! - [`recipe`] builds a git repository from a recipe of commits (fixtures and tests);
//! - [`bundle`] constructs the reference states S0 … Sn of a chain, selects per-stage F2P
//!   and P2P tests with the project's runner, writes specs and contracts and the chain
//!   bundle (`docs/formats.md`, "Chain bundle"), and re-validates a bundle (III-C … III-E);
//! - [`calls`] traces later stages' F2P tests to verify they call earlier stages' code.
//!
//! Chain states and stage gates are built on `carve-pipeline`, the single-feature pipeline:
//! its test runs (`carve_pipeline::runs`, twice per state), its F2P/P2P selection, its
//! reading of build errors for repairs, its judging of statuses, and its trace stage.
//!
//! Language facts come from `carve-languages` (index, test paths, runners, build checks)
//! through the [`carve_languages::Language`] value; nothing here names a language.

pub mod analysis;
pub mod bundle;
pub mod calls;
pub mod deps;
pub mod git;
pub mod mine;
pub mod recipe;
pub mod review;
pub mod spec;
pub mod states;

pub use analysis::{CommitAnalysis, History, analyze};
pub use mine::{Chain, MineOptions, MineReport, mine};

/// Why reading history, mining or building a chain failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    #[error("git: could not {what}: {message}")]
    Git { what: String, message: String },
    #[error("could not {what} {}: {source}", path.display())]
    Io { what: &'static str, path: std::path::PathBuf, source: std::io::Error },
    #[error("{0}")]
    Recipe(String),
    #[error("no chain `{id}` among the chains mined from {repo}; run `carve arc mine {repo}` to list them")]
    NoSuchChain { id: String, repo: String },
    #[error("chain {chain}: {message}")]
    Build { chain: String, message: String },
    #[error("bundle {}: {message}", path.display())]
    Bundle { path: std::path::PathBuf, message: String },
}

impl HistoryError {
    pub(crate) fn io<'a>(
        what: &'static str,
        path: &'a std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> HistoryError + 'a {
        move |source| HistoryError::Io { what, path: path.to_path_buf(), source }
    }
}
