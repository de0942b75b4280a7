//! Turning a classified feature into task bundles: the masked state, patches, contract,
//! problem statements (Level 1 and 2), validation, and the bundle directory written under
//! a temporary name and renamed only when complete.

use anyhow::{Context, Result};
use carve_extractor::contract::{Contract, build_contract};
use carve_extractor::{MaskOptions, MaskOutcome, MaskPlan, build_patches, mask_tree_with};
use carve_languages::NodeId;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::baseline::Baseline;
use super::feature::Feature;
use super::validate::{self, Validation, prepare_state, run_state};
use super::{Session, TestId};
use crate::workspace;

pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The masked state of one feature and everything derived from it.
pub struct Extraction {
    pub masked: PathBuf,
    pub extracted: BTreeSet<NodeId>,
    pub outcome: MaskOutcome,
    pub mask_patch: String,
    pub gold_patch: String,
    pub test_patch: String,
    pub contract: Contract,
}

/// Which test files go whole, which test definitions go alone.
pub fn removal_of_tests(
    session: &Session,
    known: &BTreeSet<TestId>,
    f2p: &BTreeSet<TestId>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut files = BTreeSet::new();
    let mut single = BTreeSet::new();
    let file_of = |t: &str| super::test_file_in(&session.index, t);
    let f2p_files: BTreeSet<String> = f2p.iter().map(|t| file_of(t)).collect();
    for file in f2p_files {
        let all_in_file = known.iter().filter(|t| file_of(t) == file).all(|t| f2p.contains(t));
        if all_in_file {
            files.insert(file);
        } else {
            for t in f2p.iter().filter(|t| file_of(t) == file) {
                single.insert(t.clone());
            }
        }
    }
    (files, single)
}

pub fn extract(
    session: &Session,
    extracted: &BTreeSet<NodeId>,
    test_files: BTreeSet<String>,
    tests: BTreeSet<String>,
    dir: &Path,
) -> Result<Extraction> {
    session.progress.step("extract: masking");
    let masked = dir.join("masked");
    if masked.exists() {
        std::fs::remove_dir_all(&masked)?;
    }
    let plan = MaskPlan { extracted: extracted.clone(), remove_test_files: test_files.clone(), remove_tests: tests };
    let python = match &session.config.test {
        carve_languages::runner::TestCommand::Pytest { python, .. } => Some(python.clone()),
        #[allow(unreachable_patterns)]
        _ => None,
    };
    let options = MaskOptions { python };
    let outcome = mask_tree_with(&session.repo, &session.index, &plan, &masked, &options)
        .context("failed to write the masked state")?;
    // Tests and build checks of the masked state need the installed dependencies too.
    workspace::link_dependencies(&session.repo, &masked)?;
    for w in &outcome.warnings {
        session.progress.note(format!("warning: {w}"));
    }
    let patches = build_patches(&session.repo, &masked, &outcome)?;
    let contract = build_contract(&session.index, extracted);
    Ok(Extraction {
        masked,
        extracted: extracted.clone(),
        outcome,
        mask_patch: patches.mask,
        gold_patch: patches.gold,
        test_patch: patches.test,
        contract,
    })
}

pub fn instance_id(session: &Session, feature: &Feature, level: u8) -> String {
    let mut h = Sha256::new();
    for t in &feature.f2p {
        h.update(t.as_bytes());
        h.update([0]);
    }
    h.update([1]);
    for n in feature.extracted() {
        h.update(n.as_bytes());
        h.update([0]);
    }
    let hash8 = &hex::encode(h.finalize())[..8];
    let id = &session.identity;
    format!("{}__{}.{}.{}.{}.lv{}", id.owner, id.name, id.commit8(), feature.slug, hash8, level)
}

/// Validate Level 1 for an extraction.
pub fn validate_level1(
    session: &Session,
    baseline: &Baseline,
    feature: &Feature,
    ext: &Extraction,
    threshold: f64,
    dir: &Path,
) -> Result<Validation> {
    let mut v = Validation::new(threshold);
    v.push(validate::baseline_state(baseline, &feature.f2p, &feature.p2p));
    if !v.valid {
        return Ok(v);
    }
    // Masked state as shipped: P2P pass.
    let masked = dir.join("state-masked");
    prepare_state(&ext.masked, &masked, &[])?;
    v.push(run_state(session, "masked", &masked, &feature.p2p, true, threshold, &dir.join("run-masked"))?);
    // Masked state with the F2P tests added back: they fail.
    let with_tests = dir.join("state-masked-tests");
    prepare_state(&ext.masked, &with_tests, &[("test", &ext.test_patch)])?;
    v.push(run_state(
        session,
        "masked+tests",
        &with_tests,
        &feature.f2p,
        false,
        threshold,
        &dir.join("run-masked-tests"),
    )?);
    // Gold and test patches applied: everything passes, and the tree is the original again.
    let restored = dir.join("state-restored");
    prepare_state(&ext.masked, &restored, &[("gold", &ext.gold_patch), ("test", &ext.test_patch)])?;
    let all: BTreeSet<TestId> = feature.f2p.union(&feature.p2p).cloned().collect();
    let mut state = run_state(session, "restored", &restored, &all, true, threshold, &dir.join("run-restored"))?;
    if workspace::tree_digest(&restored)? != session.tree_digest {
        state.ok = false;
        state.problems.push("masked + gold.patch + test.patch is not byte-identical to the original tree".into());
    }
    v.push(state);
    for d in [masked, with_tests, restored] {
        let _ = std::fs::remove_dir_all(d);
    }
    Ok(v)
}

/// The FeatureBench-style size fields and carve's own, shared by both levels.
pub fn instance_json(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    level: u8,
    instance_id: &str,
    problem_statement: &str,
    patch: &str,
    test_patch: &str,
    trace_digest: &str,
) -> Value {
    let id = &session.identity;
    let stats = &ext.outcome.stats;
    // FeatureBench's top objects: extracted definitions whose parent stays (or that have none).
    let top: Vec<&str> = ext
        .extracted
        .iter()
        .filter(|id| session.index.get(id).and_then(|d| d.parent.as_ref()).is_none_or(|p| !ext.extracted.contains(p)))
        .map(String::as_str)
        .collect();
    // Ids that a common harness log parser (SWE-bench's) prints differently: id -> its id
    // there, or null when that parser cannot name the test at all.
    let harness: serde_json::Map<String, Value> = feature
        .f2p
        .iter()
        .chain(&feature.p2p)
        .filter_map(|t| match carve_languages::runner::harness_id(&session.config.test, t) {
            Some(h) if &h == t => None,
            Some(h) => Some((t.clone(), Value::String(h))),
            None => Some((t.clone(), Value::Null)),
        })
        .collect();
    json!({
        "instance_id": instance_id,
        "repo": format!("{}/{}", id.owner, id.name),
        "base_commit": id.commit,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": problem_statement,
        "FAIL_TO_PASS": feature.f2p.iter().collect::<Vec<_>>(),
        "PASS_TO_PASS": feature.p2p.iter().collect::<Vec<_>>(),
        "created_at": id.created_at,
        "version": "1.0",
        "level": level,
        "lines": stats.lines,
        "files": stats.files,
        "functions": stats.functions,
        "top_objects": top,
        "carve": {
            "tool_version": TOOL_VERSION,
            "language": session.config.language,
            "feature": feature.slug,
            "mask_patch": ext.mask_patch,
            // Original F2P tests -> masked state (test.patch of Level 1): with mask.patch it
            // rebuilds the masked state from the original tree (`carve validate`).
            "f2p_tests_patch": ext.test_patch,
            "extracted": ext.extracted.iter().collect::<Vec<_>>(),
            "entry_points": feature.classification.entry_points,
            "contract_summary": {
                "objects": ext.contract.objects.len(),
                "ids": top,
            },
            "trace_digest": trace_digest,
            "harness_ids": harness,
            "tree_digest": session.tree_digest,
        }
    })
}

/// Write a bundle atomically: every file into `<out>/.<id>.partial`, then rename.
pub fn write_bundle(out: &Path, instance_id: &str, files: &[(&str, Vec<u8>)]) -> Result<PathBuf> {
    let staged = out.join(format!(".{instance_id}.partial"));
    if staged.exists() {
        std::fs::remove_dir_all(&staged)?;
    }
    std::fs::create_dir_all(&staged)?;
    for (name, bytes) in files {
        std::fs::write(staged.join(name), bytes).with_context(|| format!("failed to write {name} of {instance_id}"))?;
    }
    let dest = out.join(instance_id);
    workspace::replace_dir(&staged, &dest)?;
    Ok(dest)
}

pub fn pretty(v: &impl serde::Serialize) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}
