//! Emit: one directory per task (written under a temporary name and renamed only when
//! complete) with `instance.json`, the patches, contract, problem statement, validation and
//! audit, and the `tasks.jsonl` dataset of every emitted task.

use crate::{Context, Result};
use carve_formats::instance::{CarveFields, ContractSummary, EnvironmentRef, HarnessIds, Instance, WorkspaceRef};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

use crate::Session;
use crate::classify::Feature;
use crate::extract::Extraction;
use crate::validate::Validation;
use carve_core::fs;

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

/// A task's `instance.json` (`carve_formats::instance`), with the language as
/// `carve_languages` names it.
pub type TaskInstance = Instance<carve_languages::Language>;

/// The FeatureBench-style size fields and carve's own, shared by both levels.
fn instance_json(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    task: &Task<'_>,
    instance_id: &str,
    problem_statement: &str,
    trace_digest: &str,
) -> TaskInstance {
    let id = &session.identity;
    let stats = &ext.outcome.stats;
    // FeatureBench's top objects: extracted definitions whose parent stays (or that have none).
    let top: Vec<String> = ext
        .extracted
        .iter()
        .filter(|id| session.index.get(id).and_then(|d| d.parent.as_ref()).is_none_or(|p| !ext.extracted.contains(p)))
        .cloned()
        .collect();
    // Ids that a common harness log parser (SWE-bench's) prints differently: id -> its id
    // there, or null when that parser cannot name the test at all.
    let harness: Vec<(String, Option<String>)> = feature
        .f2p
        .iter()
        .chain(&feature.p2p)
        .filter_map(|t| match carve_languages::harness_id(&session.config.test, t) {
            Some(h) if &h == t => None,
            h => Some((t.clone(), h)),
        })
        .collect();
    let mut carve = CarveFields::new(TOOL_VERSION.to_string(), session.config.language, feature.slug.clone());
    carve.mask_patch = ext.mask_patch.clone();
    // mask.patch removes the F2P tests too (bundles without this flag left them in and
    // `carve validate` took them out with the reversed f2p_tests_patch).
    carve.mask_removes_f2p_tests = true;
    // Masked state -> original F2P tests (test.patch of Level 1).
    carve.f2p_tests_patch = Some(ext.test_patch.clone());
    carve.extracted = ext.extracted.iter().cloned().collect();
    carve.entry_points = feature.classification.entry_points.clone();
    carve.contract_summary = ContractSummary::new(ext.contract.objects.len(), top.clone());
    carve.trace_digest = trace_digest.to_string();
    carve.protection = Some(crate::classify::protection_report(feature, Some(&task.validation.broken_tests)));
    carve.group = feature.group.clone();
    carve.harness_ids = HarnessIds(harness);
    carve.tree_digest = session.tree_digest.clone();
    // `base_commit` is the original commit: its `.git` holds the gold code. What an agent is
    // given is the workspace (`carve workspace`), one fresh commit.
    carve.workspace = task.validation.workspace.as_ref().map(|w| {
        WorkspaceRef::new(
            w.tree.clone(),
            w.commit.clone(),
            w.files,
            "carve workspace <bundle> --repo <repository at base_commit> --out <dir>".into(),
            "give the agent this workspace, never a checkout of base_commit (its history holds the gold code)".into(),
        )
    });
    carve.environment = session.environment.as_ref().map(|e| {
        let status = serde_json::to_value(e.record.status).ok().and_then(|v| v.as_str().map(String::from));
        EnvironmentRef::new(
            e.record.key.clone(),
            status.unwrap_or_default(),
            "Dockerfile".into(),
            e.record.tools.clone(),
        )
    });
    let mut inst = Instance::new(instance_id.to_string(), task.level, carve);
    inst.repo = id.full_name();
    inst.base_commit = id.commit.clone();
    // The image of the environment `carve env` recorded (its Dockerfile is in the bundle).
    inst.image_name = session.environment.as_ref().map(|e| e.record.image.name.clone());
    inst.patch = task.gold_patch.to_string();
    inst.test_patch = task.test_patch.to_string();
    inst.problem_statement = problem_statement.to_string();
    inst.fail_to_pass = feature.f2p.iter().cloned().collect();
    inst.pass_to_pass = feature.p2p.iter().cloned().collect();
    inst.created_at = id.created_at.clone();
    inst.lines = stats.lines;
    inst.files = stats.files;
    inst.functions = stats.functions;
    inst.top_objects = top;
    inst
}

/// Write a bundle atomically: every file into `<out>/.<id>.partial`, then rename.
pub fn write_bundle(out: &Path, instance_id: &str, files: &[(&str, Vec<u8>)]) -> Result<PathBuf> {
    let staged = out.join(format!(".{instance_id}.partial"));
    if staged.exists() {
        std::fs::remove_dir_all(&staged)?;
    }
    std::fs::create_dir_all(&staged)?;
    for (name, bytes) in files {
        let path = staged.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("failed to write {name} of {instance_id}"))?;
    }
    let dest = out.join(instance_id);
    fs::replace_dir(&staged, &dest)?;
    Ok(dest)
}

/// A format's file as carve writes it: pretty JSON and a newline.
pub fn pretty(v: &impl serde::Serialize) -> Vec<u8> {
    carve_formats::to_pretty(v)
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
) -> Result<(String, TaskInstance)> {
    let id = instance_id(session, feature, task.level);
    let statement = crate::extract::statement(session, ext, &feature.f2p, task.level, describe)?;
    let (gold, test) = (task.gold_patch, task.test_patch);
    let inst = instance_json(session, feature, ext, task, &id, &statement, trace_digest);
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("instance.json", pretty(&inst)),
        ("problem_statement.md", statement.into_bytes()),
        ("contract.json", pretty(&ext.contract)),
        ("gold.patch", gold.as_bytes().to_vec()),
        ("test.patch", test.as_bytes().to_vec()),
        ("mask.patch", ext.mask_patch.as_bytes().to_vec()),
        ("validation.json", pretty(task.validation)),
        ("audit.json", pretty(audit)),
    ]
    .into_iter()
    .map(|(n, b)| (n.to_string(), b))
    .collect();
    if let Some(env) = &session.environment {
        files.extend(crate::env::image_files(&env.dir)?);
    }
    let named: Vec<(&str, Vec<u8>)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    write_bundle(&session.out, &id, &named)?;
    Ok((id, inst))
}

/// `<out>/tasks.jsonl`: one instance per line, sorted by instance id.
pub fn write_dataset(out: &Path, emitted: &mut [(String, TaskInstance)]) -> Result<()> {
    emitted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut jsonl = String::new();
    for (_, inst) in emitted.iter() {
        jsonl.push_str(&serde_json::to_string(inst)?);
        jsonl.push('\n');
    }
    Ok(fs::write_atomic(&out.join("tasks.jsonl"), jsonl.as_bytes())?)
}
