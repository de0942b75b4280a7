//! `carve extract`: the masked state, contract, problem statement and patches of one
//! feature (classified from its F2P tests, or explicit node ids with `--remove`).

use anyhow::{Result, bail};
use serde_json::json;
use std::collections::BTreeSet;

use crate::Status;
use crate::cli::{Common, EdgeMode, ProtectArgs, StatementArgs};
use crate::output::emit;
use carve_core::fs::write_atomic;
use carve_pipeline::classify::feature_for;
use carve_pipeline::emit::pretty;
use carve_pipeline::extract::{self, explicit_removal, removal_of_tests, split_test_args};

pub fn run(
    common: &Common,
    f2p: &[String],
    remove: &[String],
    remove_tests: &[String],
    edges: EdgeMode,
    protect: &ProtectArgs,
    statement_args: &StatementArgs,
) -> Result<Status> {
    let session = super::open_named(common, statement_args.repo_name.as_deref())?;
    if f2p.is_empty() == remove.is_empty() {
        bail!("pass either --f2p (classify the feature's tests) or --remove (explicit node ids), not both or neither");
    }
    let (extracted, test_files, tests, f2p_set, calls) = if !remove.is_empty() {
        let set = explicit_removal(&session, remove)?;
        let (files, tests) = split_test_args(&session, remove_tests);
        (set, files, tests, BTreeSet::new(), Vec::new())
    } else {
        let mode = super::trace_mode(edges);
        let (b, _, feature) = feature_for(&session, f2p, mode, None, protect.protect, protect.budget())?;
        let (files, tests) = removal_of_tests(&session, &b.known(), &feature.f2p);
        (feature.extracted(), files, tests, feature.f2p.clone(), feature.classification.removed_calls.clone())
    };
    let dir = session.out.join("extract");
    std::fs::create_dir_all(&dir)?;
    let ext = extract::extract(&session, &extracted, &calls, test_files, tests, &dir)?;
    let statement = extract::statement(&session, &ext, &f2p_set, 1, statement_args.describe.as_deref())?;
    write_atomic(&dir.join("contract.json"), &pretty(&ext.contract))?;
    write_atomic(&dir.join("problem_statement.md"), statement.as_bytes())?;
    write_atomic(&dir.join("mask.patch"), ext.mask_patch.as_bytes())?;
    write_atomic(&dir.join("gold.patch"), ext.gold_patch.as_bytes())?;
    write_atomic(&dir.join("test.patch"), ext.test_patch.as_bytes())?;
    let summary = json!({
        "out": dir,
        "masked": ext.masked,
        "extracted": ext.extracted,
        "changed_files": ext.outcome.changed_files,
        "removed_files": ext.outcome.removed_files,
        "stats": ext.outcome.stats,
        "build_repairs": ext.build_repairs,
    });
    emit(common.format, &summary, || {
        format!(
            "masked {} definitions in {} files ({} files removed) -> {}\n",
            ext.extracted.len(),
            ext.outcome.changed_files.len(),
            ext.outcome.removed_files.len(),
            dir.display()
        )
    })?;
    Ok(Status::Success)
}
