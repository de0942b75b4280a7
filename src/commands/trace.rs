//! `carve trace`: run the passing tests (or the chosen ones) under the shim and write the trace
//! (from cold, the traced run is the baseline's second run).

use anyhow::Result;
use serde_json::json;

use crate::Status;
use crate::cli::{Common, EdgeMode};
use crate::output::emit;
use carve_pipeline::trace;

pub fn run(common: &Common, edges: EdgeMode, tests: &[String], fresh: bool) -> Result<Status> {
    let session = super::open(common)?;
    let (_, run) = trace::baseline_then_trace(&session, super::trace_mode(edges), tests, fresh)?;
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
