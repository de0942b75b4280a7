//! The traced run through a language's [`TraceShim`] (issue 8's interface; the Python shim
//! still has its own path in `tracing.rs`): shadow copy, `prepare`, the language's runner
//! on the copy with the setup's environment and arguments, `Trace::read_dir`. Nothing here
//! names a language but [`shim_for`], which the language registry replaces.

use anyhow::{Context, Result, anyhow, bail};
use carve_languages::Language;
use carve_languages::trace::{TraceMode, TraceRequest, TraceShim};
use carve_tracer::trace::Trace;
use sha2::{Digest, Sha256};

use super::baseline::{RunExtras, run_tests};
use super::tracing::TraceRun;
use super::{Session, TestId};
use crate::cli::EdgeMode;
use crate::workspace;

/// The tracing shim of a language that has one behind the common interface.
pub fn shim_for(language: Language) -> Option<&'static dyn TraceShim> {
    (language == Language::Go).then(carve_languages::go::trace::shim)
}

fn mode(edges: EdgeMode) -> TraceMode {
    match edges {
        EdgeMode::FirstHits => TraceMode::FirstHits,
        EdgeMode::Exact => TraceMode::Exact,
    }
}

/// Trace `tests` (ids) in one run under `shim`, or load the trace from the cache.
pub fn trace(
    session: &Session,
    shim: &'static dyn TraceShim,
    tests: &[TestId],
    edges: EdgeMode,
    fresh: bool,
) -> Result<TraceRun> {
    if tests.is_empty() {
        bail!("no passing tests to trace in {} (run `carve baseline` to see their statuses)", session.repo.display());
    }
    let mut h = Sha256::new();
    h.update(session.tree_digest.as_bytes());
    h.update(shim.name().as_bytes());
    h.update(format!("{edges:?}").as_bytes());
    h.update(session.config.to_toml().as_bytes());
    for t in tests {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(h.finalize())[..20].to_string();
    let cached_path = session.cache_dir().join(format!("trace-{key}.json"));
    let shim_dir = session.out.join("shim");
    if !fresh && cached_path.is_file() {
        if let Ok(trace) = Trace::read_json(&cached_path) {
            return Ok(TraceRun {
                trace,
                native: shim.native_available(),
                tests_run: tests.len(),
                cached: true,
                shim_failures: Default::default(),
                shim_dir: None,
            });
        }
    }
    let scratch = session.scratch("trace")?;
    let tree = scratch.join("tree");
    workspace::shadow_copy(&session.repo, &tree)?;
    let trace_dir = scratch.join("trace");
    session.progress.step(format!("trace: inserting the {} probes", shim.name()));
    let req = TraceRequest {
        index: &session.index,
        repo: &session.repo,
        tree: &tree,
        shim_dir: &shim_dir,
        trace_dir: &trace_dir,
        mode: mode(edges),
    };
    let setup = shim.prepare(&req).map_err(|e| anyhow!("failed to prepare the {} tracing shim: {e}", shim.name()))?;
    for note in &setup.notes {
        session.progress.note(note.clone());
    }
    let extras = RunExtras { env: setup.env.clone(), pythonpath: setup.path_entries.clone(), args: setup.args.clone() };
    session.progress.step(format!("trace: running {} tests under the shim", tests.len()));
    let result = run_tests(session, &tree, Some(tests.to_vec()), &extras, &scratch.join("runner"))?;
    session.progress.step("trace: reading the trace");
    let trace =
        Trace::read_dir(&trace_dir).with_context(|| format!("failed to read the trace in {}", trace_dir.display()))?;
    for p in &trace.partial {
        session
            .progress
            .note(format!("warning: partial trace: {} ({}); the tests it finished are kept", p.file, p.reason));
    }
    let failed: Vec<String> = result
        .statuses
        .iter()
        .filter(|(_, o)| o.status != carve_languages::runner::TestStatus::Passed)
        .map(|(id, _)| id.clone())
        .collect();
    if !failed.is_empty() {
        session.progress.note(format!(
            "warning: {} test(s) passed at baseline but not under the shim (first: {}); they are left out of features",
            failed.len(),
            failed[0]
        ));
    }
    if trace.partial.is_empty() && failed.is_empty() {
        trace.write_json(&cached_path)?;
    }
    let _ = std::fs::remove_dir_all(&tree);
    Ok(TraceRun {
        trace,
        native: setup.native,
        tests_run: tests.len(),
        cached: false,
        shim_failures: failed.into_iter().collect(),
        shim_dir: Some(shim_dir),
    })
}
