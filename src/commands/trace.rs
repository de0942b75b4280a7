//! `carve trace`: run the passing tests (or the chosen ones) under the shim and write the trace.

use anyhow::Result;
use serde_json::json;

use crate::Status;
use crate::cli::{Common, EdgeMode};
use crate::output::emit;
use crate::pipeline::{TestId, baseline, resolve_tests, trace};

pub fn run(common: &Common, edges: EdgeMode, tests: &[String], fresh: bool) -> Result<Status> {
    let session = super::open(common)?;
    trace::ensure_traceable(&session)?;
    let b = baseline::baseline(&session, None, false)?;
    let passing = b.stable_passing();
    let selected: Vec<TestId> = if tests.is_empty() {
        passing.into_iter().collect()
    } else {
        resolve_tests(&session, tests, &b.known())?.into_iter().filter(|t| passing.contains(t)).collect()
    };
    let run = trace::trace(&session, &selected, super::trace_mode(edges), fresh)?;
    session.progress.step("writing trace.json");
    let path = trace::write_trace(&session, &run.trace)?;
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
    Ok(Status::Success)
}
