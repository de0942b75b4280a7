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
use carve_languages::runner::{TestCommand, TestId};
use carve_pipeline::runs::TestRuns;
use serde::{Deserialize, Serialize};

use crate::HistoryError;
use crate::calls::CallCheck;
use crate::mine::{Chain, Evidence};
use crate::states::{DefinitionLevelFile, SharedContext};

mod gates;
mod states;
mod validate;
mod write;

/// One gate's selection of tests: the pipeline's, from the gate's two states run twice each.
pub use carve_pipeline::selection::Selection;
pub use validate::validate;

pub const BUNDLE_VERSION: u32 = 1;

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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageEntry {
    pub index: usize,
    pub commits: Vec<String>,
    pub title: String,
    pub spec: String,
    pub contract: String,
    pub gold_patch: String,
    pub tests_dir: String,
    pub f2p: Vec<TestId>,
    pub p2p: Vec<TestId>,
    /// P2P was judged on S_k with S_k's own tests, because S_k's code with this stage's tests
    /// did not compile (Rust inline tests naming code S_k lacks): `p2p` pass there and after.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p2p_on_own_tests: bool,
    pub evidence: Vec<Evidence>,
    /// The verified call dependency (stages after the first, when built with a tracer): which
    /// definitions of earlier stages this stage's F2P tests execute at S_(k+1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_dependency: Option<CallCheck>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChainSuite {
    pub tests_dir: String,
    pub f2p: Vec<TestId>,
    pub p2p: Vec<TestId>,
    /// As a stage's: `p2p` was judged on S0 with its own tests (the chain's tests do not
    /// compile against S0's code).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p2p_on_own_tests: bool,
}

/// `chain.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChainFile {
    pub version: u32,
    pub chain_id: String,
    pub repo: String,
    pub language: Language,
    pub final_commit: String,
    pub stages: Vec<StageEntry>,
    pub chain: ChainSuite,
    /// Non-code files (docs, release notes) of the chain's commits left at their final
    /// content because removing their change for S0 conflicted with a later commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_context: Vec<SharedContext>,
    /// Code and test files whose historical patches did not come off the final checkpoint
    /// (a later commit rewrote lines a stage added): their states hold the final file without
    /// the definitions later stages added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_definition: Vec<DefinitionLevelFile>,
    /// Commits outside the mined chain pulled into a stage so that every state builds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<Repair>,
    /// Repository files pulled into states that import them before the stage that created
    /// them (a state did not build without them): `States::pull_imported_files`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pulled_files: Vec<crate::states::PulledFile>,
    /// Source files with tests inside (Rust's `#[cfg(test)]` modules and `#[test]` functions
    /// in `src/`) split into code and tests: their files under a `tests_dir` hold the test
    /// part alone, which a gate joins with the tree's own code of that file
    /// (`carve_languages::rust::inline_tests::with_tests_of`) instead of replacing the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inline_tests: Vec<String>,
    /// Mined stages that changed only tests (no code outside inline tests and comments), each
    /// merged into a neighbouring stage: a gate on them could not fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_stages: Vec<MergedStage>,
    /// Per state, the installed dependencies it used (the checkout's, or its own install of
    /// the dependencies its manifest declares): `crate::deps`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<crate::deps::StateDependencies>,
}

/// A mined stage merged into its neighbour because it changed only tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedStage {
    /// The merged stage's commits.
    pub commits: Vec<String>,
    /// The first commit of the stage they joined.
    pub into: String,
    pub reason: String,
}

/// One commit pulled into a stage because a state did not build without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repair {
    pub stage: usize,
    pub commit: String,
    pub reason: String,
}

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
