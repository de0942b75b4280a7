//! Writing a chain bundle: `s0.patch`, `carve.toml`, per stage its gold patch, hidden tests,
//! spec, contract and `validation.json` (with the verified call dependency of a later stage,
//! traced through the pipeline: `crate::calls`), the chain suite's tests and
//! `validation.json`, and `chain.json` (`docs/formats.md`, "Chain bundle").

use std::collections::BTreeMap;
use std::path::Path;

use carve_formats::gate::{Excluded, GateValidation, IdentifierScan};
use carve_languages::DefinitionIndex;
use carve_pipeline::selection::Selection;
use serde::Serialize;

use super::gates::{GateTrees, Selected};
use super::states::Reference;
use super::{BuildConfig, BuildOutcome, ChainFile, ChainSuite, StageEntry};
use crate::HistoryError;
use crate::calls::{self, StateTracer};
use crate::spec;

/// Write the bundle of the built chain under `out/<chain_id>/` (replacing it).
pub(super) fn write_bundle(
    trees: &GateTrees<'_>,
    reference: &Reference,
    selected: &Selected,
    cfg: &BuildConfig,
    tracer: Option<&StateTracer>,
    out: &Path,
    err: &dyn Fn(String) -> HistoryError,
) -> Result<BuildOutcome, HistoryError> {
    let (states, chain) = (trees.states, &reference.chain);
    let n = chain.stages.len();
    let dir = out.join(&chain.chain_id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(HistoryError::io("replace", &dir))?;
    }
    let s0_patch = states.diff(&reference.final_commit, &states.code_states[0], &[]).map_err(err)?;
    write(&dir.join("s0.patch"), &s0_patch)?;
    write(&dir.join("carve.toml"), cfg.carve_toml.as_bytes())?;
    // Gold patches leave out test files; of an inline-test file they hold the code (the code
    // states hold its tests at S0 throughout).
    let excluded: Vec<String> = trees.all_tests.iter().filter(|p| !trees.inline.contains(*p)).cloned().collect();
    let mut entries = Vec::new();
    let mut unnamed = Vec::new();
    for k in 0..n {
        let stage = write_stage(trees, reference, &selected.stages[k], &excluded, tracer, &dir, k, err)?;
        entries.push(stage.entry);
        unnamed.push(stage.unnamed);
    }
    for (p, b) in &selected.chain_tests {
        if let Some(b) = b {
            write(&dir.join("chain/tests").join(p), b)?;
        }
    }
    let chain_sel = &selected.chain;
    let mut chain_validation = gate_validation("chain", None, "S0".into(), format!("S{n}"), chain_sel);
    chain_validation.passed = !chain_sel.f2p.is_empty();
    write(&dir.join("validation.json"), &json_bytes(&chain_validation))?;
    let suite =
        ChainSuite::new("chain/tests".into(), chain_sel.f2p.clone(), chain_sel.p2p.clone(), chain_sel.p2p_on_own_tests);
    let mut chain_file = ChainFile::new(
        chain.chain_id.clone(),
        cfg.repo_name.clone(),
        cfg.language,
        reference.final_commit.clone(),
        entries,
        suite,
    );
    chain_file.shared_context = states.shared.clone();
    chain_file.by_definition = states.by_definition.clone();
    chain_file.pulled_files = states.pulled.clone();
    chain_file.repairs = reference.repairs.clone();
    chain_file.inline_tests = trees.inline.iter().cloned().collect();
    chain_file.merged_stages = reference.merged.clone();
    chain_file.dependencies = states.dependencies();
    write(&dir.join("chain.json"), &json_bytes(&chain_file))?;
    Ok(BuildOutcome {
        dir,
        chain: chain_file,
        selections: selected.stages.clone(),
        chain_selection: chain_sel.clone(),
        unnamed_identifiers: unnamed,
    })
}

/// What writing one stage gave: its `chain.json` entry and the identifiers its spec does not name.
struct WrittenStage {
    entry: StageEntry,
    unnamed: Vec<String>,
}

/// Write stage `k` under `stages/<k>/`: its gold patch, hidden tests, spec and contract, and
/// `validation.json` (with the call dependency traced, for a later stage, when `tracer`).
#[allow(clippy::too_many_arguments)]
fn write_stage(
    trees: &GateTrees<'_>,
    reference: &Reference,
    sel: &Selection,
    excluded: &[String],
    tracer: Option<&StateTracer>,
    dir: &Path,
    k: usize,
    err: &dyn Fn(String) -> HistoryError,
) -> Result<WrittenStage, HistoryError> {
    let (states, chain) = (trees.states, &reference.chain);
    let sd = format!("stages/{k}");
    let gold = states.diff(&states.code_states[k], &states.code_states[k + 1], excluded).map_err(err)?;
    write(&dir.join(&sd).join("gold.patch"), &gold)?;
    let stage_tests = &trees.stage_tests[k];
    for (p, b) in trees.at(k + 1, stage_tests.iter()) {
        if let Some(b) = b {
            write(&dir.join(&sd).join("tests").join(&p), &b)?;
        }
    }
    let after = trees.tree(&format!("spec-s{k}"), k + 1, &trees.at(k + 1, stage_tests.iter())).map_err(err)?;
    let before = trees.tree(&format!("spec-b{k}"), k, &BTreeMap::new()).map_err(err)?;
    let idx_after = DefinitionIndex::build(&after, &Default::default()).map_err(|e| err(e.to_string()))?;
    let idx_before = DefinitionIndex::build(&before, &Default::default()).map_err(|e| err(e.to_string()))?;
    let st = &chain.stages[k];
    let stage_spec = spec::stage_spec(k, st, &idx_before, &idx_after, &sel.f2p, stage_tests, &before, &after);
    write(&dir.join(&sd).join("spec.md"), stage_spec.markdown.as_bytes())?;
    write(&dir.join(&sd).join("contract.json"), &json_bytes(&stage_spec.contract))?;
    let mut validation = gate_validation("stage", Some(k), format!("S{k}"), format!("S{}", k + 1), sel);
    validation.identifier_scan = Some(IdentifierScan::new(stage_spec.unnamed.clone()));
    validation.passed = true;
    let call_dependency = match tracer {
        Some(t) if k > 0 => {
            Some(calls::check(|tree, tests| t.executed(tree, tests), &chain.stages, k, &idx_after, &after, &sel.f2p))
        }
        _ => None,
    };
    validation.call_dependency = call_dependency.clone();
    write(&dir.join(&sd).join("validation.json"), &json_bytes(&validation))?;
    let _ = std::fs::remove_dir_all(&after);
    let _ = std::fs::remove_dir_all(&before);
    let mut entry =
        StageEntry::new(k, reference.stage_commits[k].clone(), st.title.clone(), sel.f2p.clone(), sel.p2p.clone());
    entry.p2p_on_own_tests = sel.p2p_on_own_tests;
    entry.evidence = st.evidence.iter().map(crate::mine::Evidence::to_chain).collect();
    entry.call_dependency = call_dependency;
    Ok(WrittenStage { entry, unnamed: stage_spec.unnamed })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), HistoryError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(HistoryError::io("create", parent))?;
    }
    std::fs::write(path, bytes).map_err(HistoryError::io("write", path))
}

fn json_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    carve_formats::to_pretty(v)
}

/// A gate's `validation.json` from its selection (each state run twice); what only a stage
/// gate records, and whether it passed, are set by the caller.
fn gate_validation(gate: &str, stage: Option<usize>, before: String, after: String, sel: &Selection) -> GateValidation {
    let mut v = GateValidation::new(gate, stage, before, after);
    v.f2p = sel.f2p.clone();
    v.p2p = sel.p2p.clone();
    v.excluded = Excluded::new(sel.flaky.clone(), sel.collateral.clone(), sel.failing_after.clone());
    v.before = sel.before.clone();
    v.after = sel.after.clone();
    v.p2p_on_own_tests = sel.p2p_on_own_tests;
    v.before_own_tests = sel.before_own_tests.clone();
    v
}
