//! The traced run: install the shim into a private folder (never the user's
//! site-packages), hand it the probe map, run the tests once in a shadow copy, and merge
//! what every process wrote into one canonical trace.

use anyhow::{Context, Result, bail};
use carve_languages::python::shim::{self, TraceMode};
use carve_tracer::probe_map::ProbeMap;
use carve_tracer::trace::Trace;
use sha2::{Digest, Sha256};

use super::baseline::{RunExtras, run_tests};
use super::{Session, TestId};
use crate::cli::EdgeMode;
use crate::workspace;

pub struct TraceRun {
    pub trace: Trace,
    pub native: bool,
    pub tests_run: usize,
    pub cached: bool,
    /// Tests that passed at baseline but not under the shim: left out of features.
    pub shim_failures: std::collections::BTreeSet<TestId>,
    /// The private folder the shim was installed into (put on PYTHONPATH), when installed.
    pub shim_dir: Option<std::path::PathBuf>,
}

pub fn mode(edges: EdgeMode) -> TraceMode {
    match edges {
        EdgeMode::FirstHits => TraceMode::FirstHits,
        EdgeMode::Exact => TraceMode::Exact,
    }
}

/// Tracing needs a shim for the repository's language.
pub fn ensure_traceable(session: &Session) -> Result<()> {
    let language = session.config.language;
    if language != carve_languages::Language::Python && carve_languages::trace::shim_for(language).is_none() {
        bail!(
            "tracing {} tests is not implemented yet (the Python and TypeScript/JavaScript shims are): \
             `carve index`, `carve extract --remove`, `carve init` and `carve baseline` work for this repository",
            session.config.language
        );
    }
    Ok(())
}

/// Trace `tests` (ids) in one run, or load the trace from the cache.
pub fn trace(session: &Session, tests: &[TestId], edges: EdgeMode, fresh: bool) -> Result<TraceRun> {
    ensure_traceable(session)?;
    if tests.is_empty() {
        bail!("no passing tests to trace in {} (run `carve baseline` to see their statuses)", session.repo.display());
    }
    let mut h = Sha256::new();
    h.update(session.tree_digest.as_bytes());
    h.update(format!("{edges:?}").as_bytes());
    h.update(session.config.to_toml().as_bytes());
    for t in tests {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(h.finalize())[..20].to_string();
    let cached_path = session.cache_dir().join(format!("trace-{key}.json"));
    if !fresh && cached_path.is_file() {
        if let Ok(trace) = Trace::read_json(&cached_path) {
            let native = shim::find_native_extension().is_some();
            return Ok(TraceRun {
                trace,
                native,
                tests_run: tests.len(),
                cached: true,
                shim_failures: Default::default(),
                shim_dir: None,
            });
        }
    }

    if let Some(shim) = carve_languages::trace::shim_for(session.config.language) {
        return super::tracing_shim::trace_with_shim(session, shim, tests, edges, &cached_path);
    }
    session.progress.step("trace: installing the shim");
    let native = shim::find_native_extension();
    let install = shim::install_python_shim(&session.out.join("shim"), native.as_deref())
        .context("failed to install the Python tracing shim")?;
    if !install.native {
        session.progress.note("warning: the native recorder is not built; tracing with the pure-Python fallback (slower). Build it with `maturin build --release -m shims/python/Cargo.toml -o target/shim`.");
    }
    let scratch = session.scratch("trace")?;
    let tree = scratch.join("tree");
    workspace::shadow_copy(&session.repo, &tree)?;
    // Kept in the output folder: users and the benchmark run the shim by hand with it.
    let probe_map_path = session.out.join("probe-map.json");
    ProbeMap::from_index(&session.index, &tree).write(&probe_map_path)?;
    let trace_dir = scratch.join("trace");
    std::fs::create_dir_all(&trace_dir)?;
    let extras = RunExtras {
        env: install.env(&probe_map_path, &trace_dir, mode(edges)),
        pythonpath: vec![install.pythonpath_entry().to_path_buf()],
        args: install.pytest_args(),
    };
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
    session.progress.step("trace: writing the trace");
    if trace.partial.is_empty() && failed.is_empty() {
        trace.write_json(&cached_path)?;
    }
    let _ = std::fs::remove_dir_all(&tree);
    Ok(TraceRun {
        trace,
        native: install.native,
        tests_run: tests.len(),
        cached: false,
        shim_failures: failed.into_iter().collect(),
        shim_dir: Some(install.pythonpath_entry().to_path_buf()),
    })
}

/// The merged trace as written to `<out>/trace.json`.
pub fn write_trace(session: &Session, trace: &Trace) -> Result<std::path::PathBuf> {
    let path = session.out.join("trace.json");
    let tmp = session.out.join(".trace.json.tmp");
    trace.write_json(&tmp)?;
    std::fs::rename(&tmp, &path).with_context(|| format!("failed to write {}", path.display()))?;
    Ok(path)
}
