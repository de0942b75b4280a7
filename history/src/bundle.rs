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
    // Every state builds (repaired where it does not), then each gate selects its tests; a
    // stage that cannot be gated is merged into its neighbour and the chain built again.
    let (reference, selected, attempt) = shortened(repo, chain, cfg, scratch.path(), &err)?;
    let trees = gates::GateTrees::new(&reference.states, &reference.chain, cfg.language, &attempt).map_err(&err)?;
    write::write_bundle(&trees, &reference, &selected, cfg, tracer.as_ref(), out, &err)
}

/// The chain's reference states and its gates' selections, with every stage that cannot be
/// gated (no test file left at S_(k+1), no test failing at S_k and passing at S_(k+1)) merged
/// into its neighbour, and every state that no repair makes pass the build check taken out
/// (S0: the first stage leaves the chain; S_k: stage k joins stage k-1), while the chain keeps
/// at least two stages — rather than dropping the whole chain. Each merge is recorded in
/// `merged_stages` with its reason. Returns the scratch folder of the attempt that built.
fn shortened(
    repo: &Path,
    chain: &Chain,
    cfg: &BuildConfig,
    scratch: &Path,
    err: &dyn Fn(String) -> HistoryError,
) -> Result<(states::Reference, gates::Selected, PathBuf), HistoryError> {
    let mut chain = chain.clone();
    let mut cut: Vec<MergedStage> = Vec::new();
    loop {
        let attempt = scratch.join(format!("shortened-{}", cut.len()));
        std::fs::create_dir_all(&attempt).map_err(HistoryError::io("create", &attempt))?;
        let mut reference = match states::reference_states(repo, &chain, cfg.language, &attempt, err) {
            Ok(r) => r,
            Err(states::StatesFailure::Other(e)) => return Err(e),
            Err(states::StatesFailure::Unbuildable { state, reason, chain: built, mut merged, order }) => {
                // A state that no repair makes build is taken out, while two stages remain.
                if built.stages.len() <= 2 {
                    return Err(err(reason));
                }
                cut.append(&mut merged);
                chain = built;
                cut.push(states::drop_state(&mut chain, &order, state, &reason));
                let _ = std::fs::remove_dir_all(&attempt);
                continue;
            }
        };
        let trees = gates::GateTrees::new(&reference.states, &reference.chain, cfg.language, &attempt).map_err(err)?;
        let failure = match gates::select_tests(&trees, &reference.chain, &cfg.test_runs()) {
            Ok(selected) => {
                cut.append(&mut reference.merged);
                reference.merged = cut;
                return Ok((reference, selected, attempt));
            }
            Err(f) => f,
        };
        let stages = reference.chain.stages.len();
        let gates::GateFailure::Ungateable { stage, reason } = failure else {
            return Err(err(failure.message().to_string()));
        };
        if stages <= 2 {
            return Err(err(format!("{reason}; merged into its neighbour the chain would have a single stage")));
        }
        // The chain as built (test-only stages already merged) without the repairs' commits,
        // which the next attempt finds again if it needs them.
        cut.append(&mut reference.merged);
        chain = reference.chain.clone();
        let mut commits: Vec<Vec<String>> = chain.stages.iter().map(|s| s.commits.clone()).collect();
        let order = reference.states.first_parent_order().map_err(err)?;
        let why =
            format!("{reason}; merged into {}", if stage == 0 { "the next stage" } else { "the stage before it" });
        cut.push(states::merge_stage(&mut chain, &mut commits, &mut [], &order, stage, why));
        drop(trees);
        drop(reference);
        let _ = std::fs::remove_dir_all(&attempt);
    }
}
