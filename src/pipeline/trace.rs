//! The traced run: the language's shim (`LanguageSupport::trace_shim`) prepares a shadow
//! copy and its runtime in a private folder (never the user's environment), the tests run
//! once under it, and what every process wrote is merged into one canonical trace.

use anyhow::{Context, Result, bail};
/// How callers are captured while tracing.
pub use carve_languages::trace::TraceMode;
use carve_languages::trace::{TraceRequest, TraceShim};
use carve_tracer::trace::Trace;
use sha2::{Digest, Sha256};

use super::baseline::{self, Baseline};
use super::run::{RunExtras, run_tests};
use super::{Session, TestId};
use crate::workspace;

pub struct TraceRun {
    pub trace: Trace,
    pub native: bool,
    pub tests_run: usize,
    pub cached: bool,
    /// Tests that passed at baseline but not under the shim: left out of features.
    pub shim_failures: std::collections::BTreeSet<TestId>,
    /// The private folder the shim was installed into (first on the module search path),
    /// when installed.
    pub shim_dir: Option<std::path::PathBuf>,
}

/// The shim of the repository's language; tracing needs one.
pub fn shim(session: &Session) -> Result<&'static dyn TraceShim> {
    let Some(shim) = carve_languages::support(session.config.language).trace_shim() else {
        bail!(
            "tracing {} tests is not implemented yet (the Python, Go, TypeScript/JavaScript and Rust shims are): \
             `carve index`, `carve extract --remove`, `carve init` and `carve baseline` work for this repository",
            session.config.language
        );
    };
    Ok(shim)
}

/// Tracing needs a shim for the repository's language.
pub fn ensure_traceable(session: &Session) -> Result<()> {
    shim(session).map(|_| ())
}

/// Baseline, then one traced run of every stable passing test: what audit and tasks start from.
pub fn baseline_and_trace(session: &Session, mode: TraceMode) -> Result<(Baseline, TraceRun)> {
    ensure_traceable(session)?;
    let b = baseline::baseline(session, None, false)?;
    let passing: Vec<TestId> = b.stable_passing().into_iter().collect();
    let t = trace(session, &passing, mode, false)?;
    Ok((b, t))
}

/// Trace `tests` (ids) in one run, or load the trace from the cache.
pub fn trace(session: &Session, tests: &[TestId], mode: TraceMode, fresh: bool) -> Result<TraceRun> {
    let shim = shim(session)?;
    if tests.is_empty() {
        bail!("no passing tests to trace in {} (run `carve baseline` to see their statuses)", session.repo.display());
    }
    let mut h = Sha256::new();
    h.update(session.tree_digest.as_bytes());
    h.update(format!("{mode:?}").as_bytes());
    h.update(session.config.to_toml().as_bytes());
    for t in tests {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(h.finalize())[..20].to_string();
    let cached_path = session.cache_dir().join(format!("trace-{key}.json"));
    if !fresh && cached_path.is_file() {
        if let Ok(trace) = Trace::read_json(&cached_path) {
            let native = shim.native_available();
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

    session.progress.step("trace: installing the shim");
    let scratch = session.scratch("trace")?;
    let tree = scratch.join("tree");
    workspace::shadow_copy(&session.repo, &tree)?;
    let trace_dir = scratch.join("trace");
    std::fs::create_dir_all(&trace_dir)?;
    // The output folder: the shim installs under it and keeps what it hands its runtime
    // there (the Python probe map, which users and the benchmark run the shim by hand with).
    let request = TraceRequest {
        index: &session.index,
        repo: &session.repo,
        tree: &tree,
        shim_dir: &session.out,
        trace_dir: &trace_dir,
        mode,
    };
    let setup =
        shim.prepare(&request).with_context(|| format!("failed to install the {} tracing shim", shim.name()))?;
    for note in &setup.notes {
        session.progress.note(note);
    }
    let extras = RunExtras { env: setup.env, pythonpath: setup.path_entries.clone(), args: setup.args };
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
        native: setup.native,
        tests_run: tests.len(),
        cached: false,
        shim_failures: failed.into_iter().collect(),
        shim_dir: setup.path_entries.first().cloned(),
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
