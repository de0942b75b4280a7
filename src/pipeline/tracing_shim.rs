//! The traced run through a language's [`TraceShim`] (every language but Python, whose
//! shim `tracing.rs` still drives directly): shadow copy, `prepare` (probes, runtime,
//! environment), the language's runner on the copy with the shim's environment and
//! arguments, then the trace files the runtime wrote.

use anyhow::{Context, Result};
use carve_languages::trace::{TraceMode, TraceRequest, TraceShim};
use carve_tracer::trace::Trace;

use super::baseline::{RunExtras, run_tests};
use super::tracing::TraceRun;
use super::{Session, TestId};
use crate::cli::EdgeMode;
use crate::workspace;

pub fn trace_with_shim(
    session: &Session,
    shim: &dyn TraceShim,
    tests: &[TestId],
    edges: EdgeMode,
    cached_path: &std::path::Path,
) -> Result<TraceRun> {
    let scratch = session.scratch("trace")?;
    let tree = scratch.join("tree");
    workspace::shadow_copy(&session.repo, &tree)?;
    let trace_dir = scratch.join("trace");
    let shim_dir = session.out.join("shim");
    std::fs::create_dir_all(&shim_dir).with_context(|| format!("failed to create {}", shim_dir.display()))?;
    let mode = match edges {
        EdgeMode::FirstHits => TraceMode::FirstHits,
        EdgeMode::Exact => TraceMode::Exact,
    };
    session.progress.step(format!("trace: probing a copy of the sources ({} shim)", shim.name()));
    let req = TraceRequest {
        index: &session.index,
        repo: &session.repo,
        tree: &tree,
        shim_dir: &shim_dir,
        trace_dir: &trace_dir,
        mode,
    };
    let setup = shim.prepare(&req).with_context(|| format!("failed to prepare the {} tracing shim", shim.name()))?;
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
        trace.write_json(cached_path)?;
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
