//! `carve tasks` (everything, for every candidate feature) and `carve validate` (re-check a
//! bundle), plus the problem statement and Level 2 pieces they share.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::Status;
use crate::cli::{Common, EdgeMode, Format};
use crate::commands::{audit_json, baseline_and_trace, open};
use crate::output::emit;
use crate::pipeline::bundle::{self, Extraction, pretty};
use crate::pipeline::feature::{Feature, classify_feature, slug_for};
use crate::pipeline::validate::{Validation, prepare_state, run_state};
use crate::pipeline::{Session, SessionOptions, TestId, resolve_tests, test_file};
use crate::workspace;

/// The problem statement of a task at `level`.
pub fn statement(session: &Session, ext: &Extraction, f2p: &BTreeSet<TestId>, level: u8) -> String {
    use carve_extractor::statement::{Level, StatementContext, render_problem_statement};
    let level = if level == 2 { Level::Two } else { Level::One };
    let repo = format!("{}/{}", session.identity.owner, session.identity.name);
    let mut ctx = StatementContext::new(level, repo, f2p.iter().cloned().collect());
    // The F2P tests' own docstrings describe the feature best.
    let tests: Vec<String> = f2p.iter().cloned().collect();
    ctx.test_docstrings = carve_extractor::statement::test_docstrings(&session.index, &tests);
    render_problem_statement(&ext.contract, &ctx)
}

#[derive(serde::Serialize)]
struct Rejected {
    feature: String,
    level: Option<u8>,
    reason: String,
}

pub fn tasks(
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
    let session = open(common)?;
    let (b, t) = baseline_and_trace(&session, edges)?;
    let graph = carve_tracer::graph::ObjectGraph::build(&session.index, &t.trace);
    let known = b.known();
    let usable: BTreeSet<TestId> = b.stable_passing().difference(&t.shim_failures).cloned().collect();
    let candidates: Vec<BTreeSet<TestId>> = if groups.is_empty() {
        let mut by_file: BTreeMap<&str, BTreeSet<TestId>> = BTreeMap::new();
        for id in &usable {
            by_file.entry(test_file(id)).or_default().insert(id.clone());
        }
        by_file.into_values().collect()
    } else {
        // A group names a candidate; its tests that cannot be F2P (flaky, not passing at
        // baseline, failing under the shim) are left out of it, as they are of the default
        // per-file candidates.
        let mut out = Vec::new();
        for g in groups {
            let all = resolve_tests(g, &known)?;
            let left: BTreeSet<TestId> = all.intersection(&usable).cloned().collect();
            if left.len() < all.len() {
                session.progress.note(format!(
                    "{}: {} of {} test(s) left out (flaky, not passing at baseline, or failing under the shim)",
                    slug_for(&all),
                    all.len() - left.len(),
                    all.len()
                ));
            }
            out.push(if left.is_empty() { all } else { left });
        }
        out
    };
    let trace_digest = t.trace.digest();
    let mut emitted: Vec<(String, Value)> = Vec::new();
    let mut rejected: Vec<Rejected> = Vec::new();
    for (n, cand) in candidates.into_iter().enumerate() {
        let slug = slug_for(&cand);
        session.progress.step(format!("candidate {} ({slug})", n + 1));
        let (mut cand, mut moved) = (cand, BTreeSet::new());
        // Repair, not rejection: F2P tests that still pass on the masked state leave F2P and
        // stay as P2P tests; the rest is classified, masked and validated again.
        for round in 0..=MAX_REPAIR_ROUNDS {
            let mut feature =
                match classify_feature(&session, &b, &t.trace, &graph, cand.clone(), &t.shim_failures, entry_filter) {
                    Ok(f) => f,
                    Err(e) => {
                        rejected.push(Rejected { feature: slug.clone(), level: None, reason: format!("{e:#}") });
                        break;
                    }
                };
            feature.moved_to_p2p = moved.clone();
            if feature.extracted().is_empty() {
                rejected.push(Rejected {
                    feature: slug.clone(),
                    level: None,
                    reason: "nothing to extract: everything the F2P tests reach is run by P2P tests, at import time, or needed to load".into(),
                });
                break;
            }
            match make_tasks(&session, &b, &feature, levels, threshold, &trace_digest) {
                Ok(Outcome::Retry(still_passing)) if round < MAX_REPAIR_ROUNDS => {
                    session.progress.note(format!(
                        "{slug}: {} F2P test(s) still pass on the masked state; they stay as P2P tests",
                        still_passing.len()
                    ));
                    cand = cand.difference(&still_passing).cloned().collect();
                    moved.extend(still_passing);
                }
                Ok(Outcome::Retry(_)) => {
                    rejected.push(Rejected {
                        feature: slug.clone(),
                        level: None,
                        reason: format!(
                            "F2P tests still pass on the masked state after {MAX_REPAIR_ROUNDS} repair rounds"
                        ),
                    });
                    break;
                }
                Ok(Outcome::Made((ok, bad))) => {
                    emitted.extend(ok);
                    rejected.extend(bad);
                    break;
                }
                Err(e) => {
                    rejected.push(Rejected { feature: feature.slug.clone(), level: None, reason: format!("{e:#}") });
                    break;
                }
            }
        }
    }
    emitted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut jsonl = String::new();
    for (_, inst) in &emitted {
        jsonl.push_str(&serde_json::to_string(inst)?);
        jsonl.push('\n');
    }
    workspace::write_atomic(&session.out.join("tasks.jsonl"), jsonl.as_bytes())?;
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

/// Rounds of moving still-passing F2P tests to P2P before a candidate is rejected.
const MAX_REPAIR_ROUNDS: usize = 2;

enum Outcome {
    Made(Made),
    /// The only problem: these F2P tests (some, not all) still pass on the masked state.
    Retry(BTreeSet<TestId>),
}

/// The F2P tests that passed on the masked state when that is the validation's only
/// problem and some F2P tests did fail (otherwise nothing is left to repair).
fn still_passing(v: &Validation, f2p: &BTreeSet<TestId>) -> Option<BTreeSet<TestId>> {
    let failed: Vec<&crate::pipeline::validate::StateResult> = v.states.iter().filter(|s| !s.ok).collect();
    let [state] = failed.as_slice() else { return None };
    if state.state != "masked+tests" {
        return None;
    }
    let passing: BTreeSet<TestId> = state
        .statuses
        .iter()
        .filter(|(t, s)| **s == carve_languages::runner::TestStatus::Passed && f2p.contains(*t))
        .map(|(t, _)| t.clone())
        .collect();
    (!passing.is_empty() && passing.len() < f2p.len()).then_some(passing)
}

fn make_tasks(
    session: &Session,
    b: &crate::pipeline::baseline::Baseline,
    feature: &Feature,
    levels: &[u8],
    threshold: f64,
    trace_digest: &str,
) -> Result<Outcome> {
    let dir = session.scratch(&format!("task-{}", feature.slug))?;
    let (files, tests) = bundle::removal_of_tests(session, &b.known(), &feature.f2p);
    let ext = bundle::extract(session, &feature.extracted(), files, tests, &dir)?;
    let v1 = bundle::validate_level1(session, b, feature, &ext, threshold, &dir)?;
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    if !v1.valid {
        if let Some(passing) = still_passing(&v1, &feature.f2p) {
            let _ = std::fs::remove_dir_all(&dir);
            return Ok(Outcome::Retry(passing));
        }
        bad.push(Rejected { feature: feature.slug.clone(), level: None, reason: v1.reason().unwrap_or_default() });
        return Ok(Outcome::Made((ok, bad)));
    }
    let audit = audit_json(feature);
    if levels.contains(&1) {
        let id = bundle::instance_id(session, feature, 1);
        let ps = statement(session, &ext, &feature.f2p, 1);
        let inst =
            bundle::instance_json(session, feature, &ext, 1, &id, &ps, &ext.gold_patch, &ext.test_patch, trace_digest);
        write(session, &id, &inst, &ps, &ext, &ext.gold_patch, &ext.test_patch, &v1, &audit)?;
        ok.push((id, inst));
    }
    if levels.contains(&2) && !ext.contract.level2_supported() {
        bad.push(Rejected {
            feature: feature.slug.clone(),
            level: Some(2),
            reason: "no Level 2 task: the feature includes methods of classes that stay, nested functions, or two objects of one name, which a from-scratch package cannot provide".into(),
        });
    } else if levels.contains(&2) {
        let l2 = level2(session, feature, &ext, threshold, &dir)?;
        if l2.validation.valid {
            let mut v = v1.clone();
            for s in l2.validation.states {
                v.push(s);
            }
            let id = bundle::instance_id(session, feature, 2);
            let ps = statement(session, &ext, &feature.f2p, 2);
            let inst = bundle::instance_json(
                session,
                feature,
                &ext,
                2,
                &id,
                &ps,
                &l2.gold_patch,
                &l2.test_patch,
                trace_digest,
            );
            write(session, &id, &inst, &ps, &ext, &l2.gold_patch, &l2.test_patch, &v, &audit)?;
            ok.push((id, inst));
        } else {
            bad.push(Rejected {
                feature: feature.slug.clone(),
                level: Some(2),
                reason: l2.validation.reason().unwrap_or_default(),
            });
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Outcome::Made((ok, bad)))
}

#[allow(clippy::too_many_arguments)]
fn write(
    session: &Session,
    id: &str,
    inst: &Value,
    ps: &str,
    ext: &Extraction,
    gold: &str,
    test: &str,
    v: &Validation,
    audit: &Value,
) -> Result<()> {
    bundle::write_bundle(
        &session.out,
        id,
        &[
            ("instance.json", pretty(inst)),
            ("problem_statement.md", ps.as_bytes().to_vec()),
            ("contract.json", pretty(&ext.contract)),
            ("gold.patch", gold.as_bytes().to_vec()),
            ("test.patch", test.as_bytes().to_vec()),
            ("mask.patch", ext.mask_patch.as_bytes().to_vec()),
            ("validation.json", pretty(v)),
            ("audit.json", pretty(audit)),
        ],
    )?;
    Ok(())
}

pub struct Level2 {
    pub gold_patch: String,
    pub test_patch: String,
    pub validation: Validation,
}

/// Level 2: the F2P tests rewritten to import the feature from `agent_code`; the gold
/// patch restores the repository and adds an `agent_code` that re-exports it. The
/// reference must pass the rewritten tests and an empty `agent_code` must fail them.
fn level2(session: &Session, feature: &Feature, ext: &Extraction, threshold: f64, dir: &Path) -> Result<Level2> {
    use carve_extractor::level2;
    let test_files: BTreeSet<String> = feature.f2p.iter().map(|t| test_file(t).to_string()).collect();
    // Trees to diff: masked, masked + rewritten tests, masked + reference agent_code.
    let with_tests = dir.join("l2-tests");
    workspace::shadow_copy(&ext.masked, &with_tests)?;
    level2::write_rewritten_tests(
        &session.repo,
        &session.index,
        &ext.extracted,
        &test_files,
        "agent_code",
        &with_tests,
    )?;
    let test_patch = carve_extractor::unified_diff(&ext.masked, &with_tests, &test_files)?;
    let agent = dir.join("l2-agent");
    std::fs::create_dir_all(agent.join("before"))?;
    let reference = level2::reference_agent_code(&ext.contract);
    workspace::write_atomic(&agent.join("after/agent_code/__init__.py"), reference.as_bytes())?;
    let agent_files: BTreeSet<String> = ["agent_code/__init__.py".to_string()].into();
    let agent_patch = carve_extractor::unified_diff(&agent.join("before"), &agent.join("after"), &agent_files)?;
    let gold_patch = format!("{}{}", ext.gold_patch, agent_patch);

    let mut v = Validation::new(threshold);
    let reference_state = dir.join("state-l2-reference");
    prepare_state(&ext.masked, &reference_state, &[("gold", &gold_patch), ("test", &test_patch)])?;
    v.push(run_state(
        session,
        "level2-reference",
        &reference_state,
        &feature.f2p,
        true,
        threshold,
        &dir.join("run-l2-ref"),
    )?);
    let empty_state = dir.join("state-l2-empty");
    prepare_state(&ext.masked, &empty_state, &[("test", &test_patch)])?;
    workspace::write_atomic(&empty_state.join("agent_code/__init__.py"), level2::empty_agent_code().as_bytes())?;
    v.push(run_state(
        session,
        "level2-empty",
        &empty_state,
        &feature.f2p,
        false,
        threshold,
        &dir.join("run-l2-empty"),
    )?);
    Ok(Level2 { gold_patch, test_patch, validation: v })
}

/// `carve validate BUNDLE --repo REPO`: rebuild the masked state from the repository and
/// `mask.patch`, then re-run every state of the bundle's level.
pub fn validate_bundle(
    bundle_dir: &Path,
    repo: &Path,
    format: Format,
    python: Option<&Path>,
    out: Option<&Path>,
) -> Result<Status> {
    let inst_path = bundle_dir.join("instance.json");
    let text = std::fs::read_to_string(&inst_path)
        .with_context(|| format!("{} is not a task bundle (no instance.json)", bundle_dir.display()))?;
    let inst: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not valid JSON", inst_path.display()))?;
    let strs = |k: &str| -> Result<BTreeSet<TestId>> {
        inst.get(k)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .with_context(|| format!("{} has no `{k}` list", inst_path.display()))
    };
    let f2p = strs("FAIL_TO_PASS")?;
    let p2p = strs("PASS_TO_PASS")?;
    let level = inst.get("level").and_then(|l| l.as_u64()).unwrap_or(1) as u8;
    let read = |name: &str| {
        std::fs::read_to_string(bundle_dir.join(name))
            .with_context(|| format!("bundle {} lacks {name}", bundle_dir.display()))
    };
    let mask_patch = read("mask.patch")?;
    let gold = read("gold.patch")?;
    let test = read("test.patch")?;
    let scratch_root = tempfile::tempdir()?;
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| scratch_root.path().to_path_buf());
    let session = Session::open(SessionOptions {
        repo,
        out: Some(&out),
        config: None,
        python,
        timeout: None,
        test_timeout: None,
    })?;
    let dir = session.scratch("validate")?;
    let masked = dir.join("masked");
    // mask.patch leaves the F2P tests in place; the Level 1 test patch in reverse takes
    // them out (for Level 2 bundles, test.patch adds the rewritten tests instead).
    let f2p_tests_patch = inst["carve"]["f2p_tests_patch"].as_str().map(String::from).unwrap_or_else(|| test.clone());
    prepare_state(&session.repo, &masked, &[("mask", &mask_patch), ("-test", &f2p_tests_patch)])?;
    let threshold = 0.0;
    let mut v = Validation::new(threshold);
    let all: BTreeSet<TestId> = f2p.union(&p2p).cloned().collect();
    let orig = dir.join("original");
    prepare_state(&session.repo, &orig, &[])?;
    v.push(run_state(&session, "baseline", &orig, &all, true, threshold, &dir.join("run-base"))?);
    if level == 1 {
        let m = dir.join("state-masked");
        prepare_state(&masked, &m, &[])?;
        v.push(run_state(&session, "masked", &m, &p2p, true, threshold, &dir.join("run-masked"))?);
        let mt = dir.join("state-masked-tests");
        prepare_state(&masked, &mt, &[("test", &test)])?;
        v.push(run_state(&session, "masked+tests", &mt, &f2p, false, threshold, &dir.join("run-mt"))?);
        let r = dir.join("state-restored");
        prepare_state(&masked, &r, &[("gold", &gold), ("test", &test)])?;
        v.push(run_state(&session, "restored", &r, &all, true, threshold, &dir.join("run-restored"))?);
    } else {
        let r = dir.join("state-l2-reference");
        prepare_state(&masked, &r, &[("gold", &gold), ("test", &test)])?;
        v.push(run_state(&session, "level2-reference", &r, &f2p, true, threshold, &dir.join("run-l2r"))?);
        let e = dir.join("state-l2-empty");
        prepare_state(&masked, &e, &[("test", &test)])?;
        workspace::write_atomic(
            &e.join("agent_code/__init__.py"),
            carve_extractor::level2::empty_agent_code().as_bytes(),
        )?;
        v.push(run_state(&session, "level2-empty", &e, &f2p, false, threshold, &dir.join("run-l2e"))?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    emit(format, &v, || {
        let mut s = String::new();
        for st in &v.states {
            s.push_str(&format!("{:<18} {}  ({})\n", st.state, if st.ok { "ok" } else { "FAILED" }, st.expect));
            for p in &st.problems {
                s.push_str(&format!("    {p}\n"));
            }
        }
        s.push_str(if v.valid { "valid\n" } else { "invalid\n" });
        s
    })?;
    Ok(if v.valid { Status::Success } else { Status::ValidationFailed })
}
