//! `carve tasks`: one traced run for the whole repository, then for every candidate
//! feature classify -> extract (with the build check) -> validate -> emit, and the
//! `tasks.jsonl` dataset of what passed.

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::Status;
use crate::cli::{Common, EdgeMode};
use crate::output::emit;
use crate::pipeline::baseline::Baseline;
use crate::pipeline::classify::{self, Feature, audit_report, classify_feature, slug_for};
use crate::pipeline::emit::{Rejected, Task, emit_task, write_dataset};
use crate::pipeline::extract::{self, removal_of_tests};
use crate::pipeline::validate::{validate_level1, validate_level2};
use crate::pipeline::{Session, trace};

pub fn run(
    common: &Common,
    groups: &[Vec<String>],
    edges: EdgeMode,
    levels: &[u8],
    threshold: f64,
    entry_filter: Option<&str>,
) -> Result<Status> {
    for l in levels {
        if *l != 1 && *l != 2 {
            bail!("--level takes 1 or 2, not {l}");
        }
    }
    if !(0.0..=1.0).contains(&threshold) {
        bail!("--f2p-pass-threshold is a share between 0 and 1, not {threshold}");
    }
    let session = super::open(common)?;
    let (b, t) = trace::baseline_and_trace(&session, super::trace_mode(edges))?;
    let graph = carve_tracer::graph::ObjectGraph::build(&session.index, &t.trace);
    let candidates = classify::candidates(&b, &t, groups)?;
    let trace_digest = t.trace.digest();
    let mut emitted: Vec<(String, Value)> = Vec::new();
    let mut rejected: Vec<Rejected> = Vec::new();
    for (n, cand) in candidates.into_iter().enumerate() {
        let slug = slug_for(&cand);
        session.progress.step(format!("candidate {} ({slug})", n + 1));
        let feature = match classify_feature(&session, &b, &t.trace, &graph, cand, &t.shim_failures, entry_filter) {
            Ok(f) => f,
            Err(e) => {
                rejected.push(Rejected { feature: slug, level: None, reason: format!("{e:#}") });
                continue;
            }
        };
        if feature.extracted().is_empty() {
            rejected.push(Rejected {
                feature: slug,
                level: None,
                reason: "nothing to extract: everything the F2P tests reach is run by P2P tests, at import time, or needed to load".into(),
            });
            continue;
        }
        match feature_tasks(&session, &b, &feature, levels, threshold, &trace_digest) {
            Ok((ok, bad)) => {
                emitted.extend(ok);
                rejected.extend(bad);
            }
            Err(e) => rejected.push(Rejected { feature: feature.slug.clone(), level: None, reason: format!("{e:#}") }),
        }
    }
    write_dataset(&session.out, &mut emitted)?;
    let _ = std::fs::remove_dir_all(session.out.join("work"));
    let ids: Vec<&String> = emitted.iter().map(|(id, _)| id).collect();
    let report = json!({"out": session.out, "tasks": ids, "rejected": rejected});
    emit(common.format, &report, || {
        let mut s = format!("{} task(s) written to {}\n", ids.len(), session.out.display());
        for id in &ids {
            s.push_str(&format!("  {id}\n"));
        }
        for r in &rejected {
            let lv = r.level.map(|l| format!(" level {l}")).unwrap_or_default();
            s.push_str(&format!("rejected {}{lv}: {}\n", r.feature, r.reason));
        }
        s
    })?;
    Ok(if emitted.is_empty() { Status::ValidationFailed } else { Status::Success })
}

type Made = (Vec<(String, Value)>, Vec<Rejected>);

/// Extract, validate and emit the tasks of one classified feature at `levels`.
fn feature_tasks(
    session: &Session,
    b: &Baseline,
    feature: &Feature,
    levels: &[u8],
    threshold: f64,
    trace_digest: &str,
) -> Result<Made> {
    let dir = session.scratch(&format!("task-{}", feature.slug))?;
    let (files, tests) = removal_of_tests(session, &b.known(), &feature.f2p);
    let ext = extract::extract(session, &feature.extracted(), files, tests, &dir)?;
    let v1 = validate_level1(session, b, feature, &ext, threshold, &dir)?;
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    if !v1.valid {
        bad.push(Rejected { feature: feature.slug.clone(), level: None, reason: v1.reason().unwrap_or_default() });
        return Ok((ok, bad));
    }
    let audit = audit_report(feature);
    if levels.contains(&1) {
        let task = Task { level: 1, gold_patch: &ext.gold_patch, test_patch: &ext.test_patch, validation: &v1 };
        ok.push(emit_task(session, feature, &ext, &task, &audit, trace_digest)?);
    }
    if levels.contains(&2) && !ext.contract.level2_supported() {
        bad.push(Rejected {
            feature: feature.slug.clone(),
            level: Some(2),
            reason: "no Level 2 task: the feature includes methods of classes that stay, nested functions, or two objects of one name, which a from-scratch package cannot provide".into(),
        });
    } else if levels.contains(&2) {
        let l2 = extract::level2(session, feature, &ext, &dir)?;
        let v2 = validate_level2(session, feature, &ext, &l2, threshold, &dir)?;
        if v2.valid {
            let mut v = v1.clone();
            for s in v2.states {
                v.push(s);
            }
            let task = Task { level: 2, gold_patch: &l2.gold_patch, test_patch: &l2.test_patch, validation: &v };
            ok.push(emit_task(session, feature, &ext, &task, &audit, trace_digest)?);
        } else {
            bad.push(Rejected {
                feature: feature.slug.clone(),
                level: Some(2),
                reason: v2.reason().unwrap_or_default(),
            });
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok((ok, bad))
}
