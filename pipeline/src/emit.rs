//! Emit: one directory per task (written under a temporary name and renamed only when
//! complete) with `instance.json`, the patches, contract, problem statement, validation and
//! audit, and the `tasks.jsonl` dataset of every emitted task.

use crate::{Context, Result};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

use crate::Session;
use crate::classify::Feature;
use crate::extract::Extraction;
use crate::validate::Validation;
use crate::workspace;

pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A candidate feature (or one level of it) that gave no task, and why.
#[derive(Debug, serde::Serialize)]
pub struct Rejected {
    pub feature: String,
    pub level: Option<u8>,
    pub reason: String,
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
    format!(
        "{}__{}.{}.{}.{}.lv{}",
        crate::identity::id_component(&id.owner),
        id.name,
        id.commit8(),
        feature.slug,
        hash8,
        level
    )
}

/// The FeatureBench-style size fields and carve's own, shared by both levels.
fn instance_json(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    task: &Task<'_>,
    instance_id: &str,
    problem_statement: &str,
    trace_digest: &str,
) -> Value {
    let (level, patch, test_patch) = (task.level, task.gold_patch, task.test_patch);
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
        .filter_map(|t| match carve_languages::harness_id(&session.config.test, t) {
            Some(h) if &h == t => None,
            Some(h) => Some((t.clone(), Value::String(h))),
            None => Some((t.clone(), Value::Null)),
        })
        .collect();
    json!({
        "instance_id": instance_id,
        "repo": id.full_name(),
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
            // mask.patch removes the F2P tests too (bundles without this flag left them in
            // and `carve validate` took them out with the reversed f2p_tests_patch).
            "mask_removes_f2p_tests": true,
            // Masked state -> original F2P tests (test.patch of Level 1).
            "f2p_tests_patch": ext.test_patch,
            "extracted": ext.extracted.iter().collect::<Vec<_>>(),
            "entry_points": feature.classification.entry_points,
            "contract_summary": {
                "objects": ext.contract.objects.len(),
                "ids": top,
            },
            "trace_digest": trace_digest,
            "protection": crate::classify::protection_report(feature, Some(&task.validation.broken_tests)),
            "harness_ids": harness,
            "tree_digest": session.tree_digest,
            // `base_commit` is the original commit: its `.git` holds the gold code. What
            // an agent is given is the workspace (`carve workspace`), one fresh commit.
            "workspace": task.validation.workspace.as_ref().map(|w| json!({
                "tree": w.tree,
                "commit": w.commit,
                "files": w.files,
                "make": "carve workspace <bundle> --repo <repository at base_commit> --out <dir>",
                "note": "give the agent this workspace, never a checkout of base_commit (its history holds the gold code)",
            })),
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

/// One task of a feature at one level: its patches and its validation.
pub struct Task<'a> {
    pub level: u8,
    pub gold_patch: &'a str,
    pub test_patch: &'a str,
    pub validation: &'a Validation,
}

/// Write the bundle of one task under `<out>/<instance_id>/`; returns its instance id and
/// `instance.json`.
pub fn emit_task(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    task: &Task<'_>,
    audit: &Value,
    trace_digest: &str,
    describe: Option<&str>,
) -> Result<(String, Value)> {
    let id = instance_id(session, feature, task.level);
    let statement = crate::extract::statement(session, ext, &feature.f2p, task.level, describe)?;
    let (gold, test) = (task.gold_patch, task.test_patch);
    let inst = instance_json(session, feature, ext, task, &id, &statement, trace_digest);
    write_bundle(
        &session.out,
        &id,
        &[
            ("instance.json", pretty(&inst)),
            ("problem_statement.md", statement.into_bytes()),
            ("contract.json", pretty(&ext.contract)),
            ("gold.patch", gold.as_bytes().to_vec()),
            ("test.patch", test.as_bytes().to_vec()),
            ("mask.patch", ext.mask_patch.as_bytes().to_vec()),
            ("validation.json", pretty(task.validation)),
            ("audit.json", pretty(audit)),
        ],
    )?;
    Ok((id, inst))
}

/// `<out>/tasks.jsonl`: one instance per line, sorted by instance id.
pub fn write_dataset(out: &Path, emitted: &mut [(String, Value)]) -> Result<()> {
    emitted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut jsonl = String::new();
    for (_, inst) in emitted.iter() {
        jsonl.push_str(&serde_json::to_string(inst)?);
        jsonl.push('\n');
    }
    workspace::write_atomic(&out.join("tasks.jsonl"), jsonl.as_bytes())
}
