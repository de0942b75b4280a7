//! The chain bundle (`docs/formats.md`, "Chain bundle"): reference states, per-stage tests
//! selected on paired states, specs and contracts, written by [`build`] and re-checked by
//! [`validate`].
//!
//! Stage gate trees: for stage k, *before* is S_k's code with every hidden test file of the
//! chain at its S0 content and stage k's test files overlaid as at S_(k+1); *after* is the
//! same with S_(k+1)'s code. F2P_k are the stage's own new or changed tests that fail before
//! and pass after in both of two runs; P2P_k pass in all four runs; tests whose status differs
//! between two runs of one tree are excluded as flaky, and other tests failing before (a
//! module that cannot load yet) are excluded as collateral.

use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_languages::Language;
use carve_languages::runner::TestCommand;
use carve_pipeline::runs::TestRuns;
use serde::Serialize;

use crate::HistoryError;
use crate::mine::Chain;

mod gates;
mod states;
mod validate;
mod write;

/// One gate's selection of tests: the pipeline's, from the gate's two states run twice each.
pub use carve_pipeline::selection::Selection;
pub use validate::validate;

pub const BUNDLE_VERSION: u32 = carve_formats::chain::VERSION;

/// What `build` needs to know about the project.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    pub language: Language,
    pub test: TestCommand,
    pub run_timeout: Duration,
    pub test_timeout: Duration,
    /// The project configuration as `carve init` writes it (copied to `carve.toml`).
    pub carve_toml: String,
    pub repo_name: String,
}

impl BuildConfig {
    /// How the chain's states run their tests (no set-up command: a state's dependencies are
    /// carve's to provide, see `crate::deps`).
    pub fn test_runs(&self) -> TestRuns {
        TestRuns::new(self.test.clone(), self.run_timeout, self.test_timeout)
    }
}

/// `chain.json`, typed in `carve_formats::chain` (shared with its readers), with the
/// language as [`Language`].
pub type ChainFile = carve_formats::chain::ChainFile<Language>;
pub use carve_formats::chain::{ChainSuite, MergedStage, Repair, StageEntry};

/// How many commits `build` pulls into a chain before it drops it.
pub const MAX_REPAIRS: usize = 3;

/// Outcome of `build`: where the bundle is and what each gate selected.
#[derive(Debug, Clone, Serialize)]
pub struct BuildOutcome {
    pub dir: PathBuf,
    pub chain: ChainFile,
    pub selections: Vec<Selection>,
    pub chain_selection: Selection,
    /// Identifiers the hidden tests of a stage use, defined by the stage, absent from its spec.
    pub unnamed_identifiers: Vec<Vec<String>>,
}

/// One gate's re-check.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub gate: String,
    pub passed: bool,
    pub problems: Vec<String>,
}

/// Build the bundle of `chain` (mined from `repo`) under `out/<chain_id>/`.
pub fn build(repo: &Path, chain: &Chain, cfg: &BuildConfig, out: &Path) -> Result<BuildOutcome, HistoryError> {
    build_with(repo, chain, cfg, out, false)
}

/// [`build`], and each later stage's F2P tests are traced at S_(k+1) under the language's
/// shim (through the pipeline's trace stage) to record which definitions of earlier stages
/// they execute ([`crate::calls`]).
pub fn build_traced(repo: &Path, chain: &Chain, cfg: &BuildConfig, out: &Path) -> Result<BuildOutcome, HistoryError> {
    build_with(repo, chain, cfg, out, true)
}

fn build_with(
    repo: &Path,
    chain: &Chain,
    cfg: &BuildConfig,
    out: &Path,
    trace: bool,
) -> Result<BuildOutcome, HistoryError> {
    let id = chain.chain_id.clone();
    let err = |message: String| HistoryError::Build { chain: id.clone(), message };
    let scratch =
        tempfile::tempdir().map_err(HistoryError::io("create a scratch directory in", &std::env::temp_dir()))?;
    let tracer = if trace { Some(crate::calls::StateTracer::new(&cfg.carve_toml)?) } else { None };
    // Every state builds (repaired where it does not), then each gate selects its tests.
    let reference = states::reference_states(repo, chain, cfg.language, scratch.path(), &err)?;
    let trees = gates::GateTrees::new(&reference.states, reference.chain.stages.len(), cfg.language, scratch.path())
        .map_err(&err)?;
    let selected = gates::select_tests(&trees, &reference.chain, &cfg.test_runs(), &err)?;
    write::write_bundle(&trees, &reference, &selected, cfg, tracer.as_ref(), out, &err)
}
