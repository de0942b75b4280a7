//! Writing a chain bundle: `s0.patch`, `carve.toml`, per stage its gold patch, hidden tests,
//! spec, contract and `validation.json` (with the verified call dependency of a later stage,
//! traced through the pipeline: `crate::calls`), the chain suite's tests and
//! `validation.json`, and `chain.json` (`docs/formats.md`, "Chain bundle").

use std::collections::BTreeMap;
use std::path::Path;

use carve_languages::DefinitionIndex;
use serde::Serialize;
use serde_json::json;

use super::gates::{GateTrees, Selected};
use super::states::Reference;
use super::{BUNDLE_VERSION, BuildConfig, BuildOutcome, ChainFile, ChainSuite, StageEntry};
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
    let chain_validation = json!({
        "version": BUNDLE_VERSION,
        "gate": "chain",
        "before_state": "S0",
        "after_state": format!("S{n}"),
        "runs_per_state": 2,
        "f2p": chain_sel.f2p, "p2p": chain_sel.p2p,
        "excluded": {"flaky": chain_sel.flaky, "collateral": chain_sel.collateral, "failing_after": chain_sel.failing_after},
        "before": chain_sel.before, "after": chain_sel.after,
        "p2p_on_own_tests": chain_sel.p2p_on_own_tests, "before_own_tests": chain_sel.before_own_tests,
        "passed": !chain_sel.f2p.is_empty(),
    });
    write(&dir.join("validation.json"), &json_bytes(&chain_validation))?;
    let chain_file = ChainFile {
        version: BUNDLE_VERSION,
        chain_id: chain.chain_id.clone(),
        repo: cfg.repo_name.clone(),
        language: cfg.language,
        final_commit: reference.final_commit.clone(),
        stages: entries,
        chain: ChainSuite {
            tests_dir: "chain/tests".into(),
            f2p: chain_sel.f2p.clone(),
            p2p: chain_sel.p2p.clone(),
            p2p_on_own_tests: chain_sel.p2p_on_own_tests,
        },
        shared_context: states.shared.clone(),
        by_definition: states.by_definition.clone(),
        pulled_files: states.pulled.clone(),
        repairs: reference.repairs.clone(),
        inline_tests: trees.inline.iter().cloned().collect(),
        merged_stages: reference.merged.clone(),
        dependencies: states.dependencies(),
    };
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
    sel: &carve_pipeline::selection::Selection,
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
    let validation = json!({
        "version": BUNDLE_VERSION,
        "stage": k,
        "gate": "stage",
        "before_state": format!("S{k}"),
        "after_state": format!("S{}", k + 1),
        "runs_per_state": 2,
        "f2p": sel.f2p, "p2p": sel.p2p,
        "excluded": {"flaky": sel.flaky, "collateral": sel.collateral, "failing_after": sel.failing_after},
        "before": sel.before, "after": sel.after,
        "p2p_on_own_tests": sel.p2p_on_own_tests, "before_own_tests": sel.before_own_tests,
        "identifier_scan": {"unnamed": stage_spec.unnamed, "flagged": !stage_spec.unnamed.is_empty()},
        "passed": true,
    });
    let call_dependency = match tracer {
        Some(t) if k > 0 => {
            Some(calls::check(|tree, tests| t.executed(tree, tests), &chain.stages, k, &idx_after, &after, &sel.f2p))
        }
        _ => None,
    };
    let mut validation = validation;
    if let Some(c) = &call_dependency {
        validation["call_dependency"] = serde_json::to_value(c).expect("a call check serializes");
    }
    write(&dir.join(&sd).join("validation.json"), &json_bytes(&validation))?;
    let _ = std::fs::remove_dir_all(&after);
    let _ = std::fs::remove_dir_all(&before);
    let entry = StageEntry {
        index: k,
        commits: reference.stage_commits[k].clone(),
        title: st.title.clone(),
        spec: format!("{sd}/spec.md"),
        contract: format!("{sd}/contract.json"),
        gold_patch: format!("{sd}/gold.patch"),
        tests_dir: format!("{sd}/tests"),
        f2p: sel.f2p.clone(),
        p2p: sel.p2p.clone(),
        p2p_on_own_tests: sel.p2p_on_own_tests,
        evidence: st.evidence.clone(),
        call_dependency,
    };
    Ok(WrittenStage { entry, unnamed: stage_spec.unnamed })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), HistoryError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(HistoryError::io("create", parent))?;
    }
    std::fs::write(path, bytes).map_err(HistoryError::io("write", path))
}

fn json_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    let mut s = serde_json::to_vec_pretty(v).unwrap_or_default();
    s.push(b'\n');
    s
}
