//! One function per subcommand: open a session, run the pipeline steps it needs, report.

use anyhow::{Result, bail};
use serde_json::json;
use std::collections::BTreeSet;

use crate::Status as ExitStatus;
use carve_tracer::classify::Status;

use crate::cli::{Cli, Command, Common, EdgeMode};
use crate::config::Config;
use crate::output::emit;
use crate::pipeline::baseline::{self, Baseline};
use crate::pipeline::feature::{Feature, classify_feature};
use crate::pipeline::{Session, SessionOptions, TestId, bundle, resolve_tests, tracing};
use crate::workspace;

pub fn run(cli: Cli) -> Result<ExitStatus> {
    match cli.command {
        Command::Init { common, force } => init(&common, force),
        Command::Index { common } => index(&common),
        Command::Baseline { common, tests, fresh } => baseline_cmd(&common, &tests, fresh),
        Command::Trace { common, edges, tests, fresh } => trace_cmd(&common, edges, &tests, fresh),
        Command::Audit { common, feature } => {
            audit(&common, &feature.f2p, feature.edges, feature.entry_filter.as_deref())
        }
        Command::Extract { common, f2p, remove, remove_tests, edges } => {
            extract_cmd(&common, &f2p, &remove, &remove_tests, edges)
        }
        Command::Validate { bundle, repo, format, python, out } => {
            crate::tasks::validate_bundle(&bundle, &repo, format, python.as_deref(), out.as_deref())
        }
        Command::Tasks { common, f2p_groups, edges, level, f2p_pass_threshold, entry_filter, .. } => {
            crate::tasks::tasks(&common, &f2p_groups, edges, &level, f2p_pass_threshold, entry_filter.as_deref())
        }
    }
}

pub fn open(common: &Common) -> Result<Session> {
    Session::open(SessionOptions {
        repo: &common.repo,
        out: common.out.as_deref(),
        config: common.config.as_deref(),
        python: common.python.as_deref(),
        timeout: common.timeout,
        test_timeout: common.test_timeout,
    })
}

fn init(common: &Common, force: bool) -> Result<ExitStatus> {
    let repo = workspace::repo_dir(&common.repo)?;
    let out = workspace::out_dir(&repo, common.out.as_deref())?;
    let path = out.join("carve.toml");
    if path.exists() && !force {
        bail!("{} already exists; pass --force to overwrite it", path.display());
    }
    let mut cfg = Config::detect(&repo)?;
    if let Some(p) = &common.python {
        cfg.set_python(p)?;
        cfg.detected.push(format!("python = {}: from --python", p.display()));
    }
    workspace::write_atomic(&path, cfg.to_toml().as_bytes())?;
    emit(common.format, &json!({"config": path, "settings": cfg}), || {
        let mut s = format!("wrote {}\n", path.display());
        for d in &cfg.detected {
            s.push_str(&format!("  {d}\n"));
        }
        s
    })?;
    Ok(ExitStatus::Success)
}

fn index(common: &Common) -> Result<ExitStatus> {
    let session = open(common)?;
    let idx = &session.index;
    emit(common.format, idx, || {
        let mut s = String::new();
        for f in idx.files.values() {
            s.push_str(&format!("{}{}\n", f.path, if f.is_test { "  (test)" } else { "" }));
            for d in &f.definitions {
                if let Some(def) = idx.get(d) {
                    s.push_str(&format!("  {:>5}  {:?}  {}\n", def.span.start_line, def.kind, def.qualname));
                }
            }
        }
        for sk in &idx.skipped {
            s.push_str(&format!("skipped {}: {}\n", sk.path, sk.reason));
        }
        s
    })?;
    Ok(ExitStatus::Success)
}

fn baseline_cmd(common: &Common, tests: &[String], fresh: bool) -> Result<ExitStatus> {
    let session = open(common)?;
    let selection = (!tests.is_empty()).then_some(tests);
    let b = baseline::baseline(&session, selection, fresh)?;
    emit(common.format, &b, || baseline_text(&b))?;
    Ok(ExitStatus::Success)
}

fn baseline_text(b: &Baseline) -> String {
    let mut s = String::new();
    for (id, e) in &b.tests {
        let st = format!("{:?}", e.status).to_lowercase();
        s.push_str(&format!("{:<8} {}{}\n", st, id, if e.flaky { "  (flaky)" } else { "" }));
    }
    let counts: Vec<String> = b.counts().iter().map(|(k, v)| format!("{v} {k}")).collect();
    s.push_str(&format!("{}\n", counts.join(", ")));
    s
}

/// Baseline + trace of every stable passing test (the shared first half of audit/tasks).
pub fn baseline_and_trace(session: &Session, edges: EdgeMode) -> Result<(Baseline, tracing::TraceRun)> {
    tracing::ensure_traceable(session)?;
    let b = baseline::baseline(session, None, false)?;
    let passing: Vec<TestId> = b.stable_passing().into_iter().collect();
    let t = tracing::trace(session, &passing, edges, false)?;
    Ok((b, t))
}

fn trace_cmd(common: &Common, edges: EdgeMode, tests: &[String], fresh: bool) -> Result<ExitStatus> {
    let session = open(common)?;
    tracing::ensure_traceable(&session)?;
    let b = baseline::baseline(&session, None, false)?;
    let passing = b.stable_passing();
    let selected: Vec<TestId> = if tests.is_empty() {
        passing.into_iter().collect()
    } else {
        resolve_tests(tests, &b.known())?.into_iter().filter(|t| passing.contains(t)).collect()
    };
    let run = tracing::trace(&session, &selected, edges, fresh)?;
    session.progress.step("writing trace.json");
    let path = tracing::write_trace(&session, &run.trace)?;
    session.progress.step("done");
    let summary = json!({
        "trace": path,
        "tests": run.trace.tests.len(),
        "native": run.native,
        "cached": run.cached,
        "partial": run.trace.partial,
        "digest": run.trace.digest(),
        "probe_map": session.out.join("probe-map.json"),
        "shim": run.shim_dir,
    });
    emit(common.format, &summary, || {
        format!(
            "traced {} tests ({} recorder{}) -> {}\n",
            run.tests_run,
            if run.native { "native" } else { "pure-Python" },
            if run.cached { ", cached" } else { "" },
            path.display()
        )
    })?;
    Ok(ExitStatus::Success)
}

pub fn feature_for(
    session: &Session,
    f2p_args: &[String],
    edges: EdgeMode,
    entry_filter: Option<&str>,
) -> Result<(Baseline, tracing::TraceRun, Feature)> {
    let (b, t) = baseline_and_trace(session, edges)?;
    let f2p = resolve_tests(f2p_args, &b.known())?;
    let graph = carve_tracer::graph::ObjectGraph::build(&session.index, &t.trace);
    let feature = classify_feature(session, &b, &t.trace, &graph, f2p, &t.shim_failures, entry_filter)?;
    Ok((b, t, feature))
}

fn audit(common: &Common, f2p: &[String], edges: EdgeMode, entry_filter: Option<&str>) -> Result<ExitStatus> {
    let session = open(common)?;
    let (_, _, feature) = feature_for(&session, f2p, edges, entry_filter)?;
    let report = audit_json(&feature);
    workspace::write_atomic(&session.out.join(format!("audit-{}.json", feature.slug)), &bundle::pretty(&report))?;
    emit(common.format, &report, || audit_text(&feature))?;
    Ok(ExitStatus::Success)
}

pub fn audit_json(feature: &Feature) -> serde_json::Value {
    let c = &feature.classification;
    let list = |extracted: bool| -> Vec<serde_json::Value> {
        c.nodes
            .iter()
            .filter(|(_, d)| (d.status == Status::Extracted) == extracted)
            .map(|(id, d)| json!({"id": id, "reasons": d.reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>()}))
            .collect()
    };
    json!({
        "version": 1,
        "feature": feature.slug,
        "f2p": feature.f2p,
        "p2p_count": feature.p2p.len(),
        "moved_to_p2p": feature.moved_to_p2p,
        "entry_points": c.entry_points,
        "extracted": list(true),
        "remained": list(false),
        "classification": c,
    })
}

fn audit_text(feature: &Feature) -> String {
    let c = &feature.classification;
    let mut s = format!("feature {}: {} F2P tests, {} P2P tests\n", feature.slug, feature.f2p.len(), feature.p2p.len());
    s.push_str(&format!("entry points: {}\n", c.entry_points.join(", ")));
    for (title, extracted) in [("extracted", true), ("remained", false)] {
        let rows: Vec<_> = c.nodes.iter().filter(|(_, d)| (d.status == Status::Extracted) == extracted).collect();
        s.push_str(&format!("{title} ({}):\n", rows.len()));
        for (id, d) in rows {
            let reasons: Vec<String> = d.reasons.iter().map(|r| r.to_string()).collect();
            s.push_str(&format!("  {id}\n      {}\n", reasons.join("; ")));
        }
    }
    s
}

fn extract_cmd(
    common: &Common,
    f2p: &[String],
    remove: &[String],
    remove_tests: &[String],
    edges: EdgeMode,
) -> Result<ExitStatus> {
    let session = open(common)?;
    if f2p.is_empty() == remove.is_empty() {
        bail!("pass either --f2p (classify the feature's tests) or --remove (explicit node ids), not both or neither");
    }
    let (extracted, test_files, tests, f2p_set) = if !remove.is_empty() {
        let mut set = BTreeSet::new();
        for id in remove {
            if session.index.get(id).is_none() {
                let known: BTreeSet<String> = session.index.definitions.keys().cloned().collect();
                let close = carve_languages::runner::close_matches(id, &known);
                bail!(
                    "no definition `{id}` in the index{}",
                    if close.is_empty() {
                        String::new()
                    } else {
                        format!("; close matches:\n  {}", close.join("\n  "))
                    }
                );
            }
            set.insert(id.clone());
        }
        let (files, tests) = split_test_args(&session, remove_tests);
        (set, files, tests, BTreeSet::new())
    } else {
        let (b, _, feature) = feature_for(&session, f2p, edges, None)?;
        let (files, tests) = bundle::removal_of_tests(&session, &b.known(), &feature.f2p);
        (feature.extracted(), files, tests, feature.f2p.clone())
    };
    let dir = session.out.join("extract");
    std::fs::create_dir_all(&dir)?;
    let ext = bundle::extract(&session, &extracted, test_files, tests, &dir)?;
    // The masked project must still build (TypeScript, Go and Rust keep stubs for that).
    let languages: BTreeSet<carve_languages::Language> =
        ext.outcome.changed_files.iter().filter_map(|p| session.index.files.get(p).map(|f| f.language)).collect();
    for lang in languages {
        session.progress.step(format!("extract: {}", carve_languages::build::build_check_name(lang)));
        if let Err(report) = carve_languages::build::build_check(lang, &ext.masked) {
            bail!(
                "the masked {lang} project does not build ({}) in {}:\n{report}",
                carve_languages::build::build_check_name(lang),
                ext.masked.display()
            );
        }
    }
    let statement = crate::tasks::statement(&session, &ext, &f2p_set, 1);
    workspace::write_atomic(&dir.join("contract.json"), &bundle::pretty(&ext.contract))?;
    workspace::write_atomic(&dir.join("problem_statement.md"), statement.as_bytes())?;
    workspace::write_atomic(&dir.join("mask.patch"), ext.mask_patch.as_bytes())?;
    workspace::write_atomic(&dir.join("gold.patch"), ext.gold_patch.as_bytes())?;
    workspace::write_atomic(&dir.join("test.patch"), ext.test_patch.as_bytes())?;
    let summary = json!({
        "out": dir,
        "masked": ext.masked,
        "extracted": ext.extracted,
        "changed_files": ext.outcome.changed_files,
        "removed_files": ext.outcome.removed_files,
        "stats": ext.outcome.stats,
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
    Ok(ExitStatus::Success)
}

/// `--remove-tests` arguments: whole files, or single test ids.
fn split_test_args(session: &Session, args: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
    let files = session.test_files();
    let mut whole = BTreeSet::new();
    let mut single = BTreeSet::new();
    for a in args {
        if files.contains(a) {
            whole.insert(a.clone());
        } else {
            single.insert(a.clone());
        }
    }
    (whole, single)
}
