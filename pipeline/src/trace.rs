//! The traced run: the language's shim (`LanguageSupport::trace_shim`) prepares a shadow
//! copy and its runtime in a private folder (never the user's environment), the tests run
//! once under it, and what every process wrote is merged into one canonical trace. From
//! cold, the traced run is also the baseline's second run.

use crate::error::bail;
use crate::{Context, Result};
/// How callers are captured while tracing.
pub use carve_languages::trace::TraceMode;
use carve_languages::trace::{TraceRequest, TraceShim};
use carve_tracer::trace::Trace;
use sha2::{Digest, Sha256};

use carve_languages::runner::{RunResult, TestStatus};

use crate::baseline::{self, Baseline};
use crate::runs::{RunExtras, run_tests};
use crate::{Session, TestId, resolve_tests};
use carve_core::tree;

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
    baseline_then_trace(session, mode, &[], false)
}

/// The baseline and the trace of `selection` (test ids or files; empty: every stable
/// passing test). From cold (no cached baseline) and without a selection, the suite runs
/// once untraced and the traced run is the baseline's second run ([`cold`]); otherwise the
/// baseline (cached, or two untraced runs) comes first and the traced run after it.
pub fn baseline_then_trace(
    session: &Session,
    mode: TraceMode,
    selection: &[String],
    fresh: bool,
) -> Result<(Baseline, TraceRun)> {
    ensure_traceable(session)?;
    if selection.is_empty() && baseline::cached(session, None).is_none() {
        return cold(session, mode);
    }
    let b = baseline::baseline(session, None, false)?;
    let passing = b.stable_passing();
    let selected: Vec<TestId> = if selection.is_empty() {
        passing.into_iter().collect()
    } else {
        resolve_tests(session, selection, &b.known())?.into_iter().filter(|t| passing.contains(t)).collect()
    };
    let mut t = trace(session, &selected, mode, fresh)?;
    t.shim_failures.extend(b.shim_failures());
    Ok((b, t))
}

/// From cold: one untraced run of the whole suite, then the whole suite traced as the
/// baseline's second run. A test that passed untraced and not traced is run traced again,
/// and, failing again, untraced again: passing that run, it fails only under the shim
/// (recorded as such, not flaky, left out of features); otherwise it is flaky. The trace keeps the stable passing tests (and
/// import time) and is cached as their trace.
fn cold(session: &Session, mode: TraceMode) -> Result<(Baseline, TraceRun)> {
    let shim = shim(session)?;
    // The two runs are independent (each in its own shadow copy and scratch folder): with
    // two jobs they run at once.
    let overlapped = session.jobs >= 2;
    let what = if overlapped {
        "run 1 of 2 (untraced, while the traced second run runs beside it)"
    } else {
        "run 1 of 2 (the traced run is the second)"
    };
    let (plain, traced) =
        session.both(|| baseline::plain_run(session, None, what), || traced_run(session, shim, None, mode));
    let (mut plain, mut traced) = (plain?, traced?);
    if plain.statuses.is_empty() {
        bail!(
            "no tests to trace in {}: the runner reported none (`carve baseline` shows the run)",
            session.repo.display()
        );
    }
    let mut trace = traced.read_trace(session)?;
    let settled =
        if overlapped { settle_overlap(session, shim, mode, &mut plain, &mut traced.result, &mut trace)? } else { 0 };
    let disagree: Vec<TestId> = plain
        .statuses
        .iter()
        .filter(|(id, o)| o.status == TestStatus::Passed && traced.result.status(id) != TestStatus::Passed)
        .map(|(id, _)| id.clone())
        .collect();
    let mut reruns = baseline::Reruns::default();
    if !disagree.is_empty() {
        session.progress.step(format!("trace: re-running the {} test(s) that failed only traced", disagree.len()));
        // Only the statuses count: a test that crashes the traced process may leave no trace.
        let again = traced_run(session, shim, Some(&disagree), mode)?.result;
        let failed_again: Vec<TestId> =
            disagree.iter().filter(|id| again.status(id) != TestStatus::Passed).cloned().collect();
        if !failed_again.is_empty() {
            reruns.plain = Some(baseline::plain_run(
                session,
                Some(&failed_again),
                &format!("re-running untraced the {} test(s) that failed traced twice", failed_again.len()),
            )?);
        }
        reruns.traced = Some(again);
    }
    let mut b = Baseline::from_plain_and_traced(&session.tree_digest, &plain, &traced.result, &reruns);
    if settled > 0 {
        b.warnings.push(format!(
            "the untraced and the traced run ran at once; {settled} test(s) that did not pass both ran again, untraced and then traced, one run after the other, and those runs are their `status` and `second`"
        ));
    }
    baseline::store(session, None, &b)?;
    let shim_failures = b.shim_failures();
    if let Some(first) = shim_failures.first() {
        session.progress.note(format!(
            "warning: {} test(s) passed both untraced runs and failed both traced runs (first: {first}): the shim breaks them; they are left out of features",
            shim_failures.len()
        ));
    }
    let flaky: Vec<&TestId> = b.tests.iter().filter(|(_, e)| e.flaky).map(|(id, _)| id).collect();
    if let Some(first) = flaky.first() {
        session.progress.note(format!(
            "warning: {} test(s) are flaky: their status differed between the untraced and the traced run (first: {first})",
            flaky.len()
        ));
    }
    let passing = b.stable_passing();
    // Tests with a baseline status other than stable passing are no part of any feature.
    trace.tests.retain(|id, _| !b.tests.contains_key(id) || passing.contains(id));
    let selected: Vec<TestId> = passing.iter().cloned().collect();
    if trace.partial.is_empty() && !selected.is_empty() {
        trace.write_json(&trace_cache_path(session, mode, &selected))?;
    }
    let run = TraceRun {
        trace,
        native: traced.native,
        tests_run: traced.result.statuses.len(),
        cached: false,
        shim_failures,
        shim_dir: traced.shim_dir,
    };
    Ok((b, run))
}

/// Tests that did not pass both runs that ran at once may have got in each other's way (a
/// fixed port or temporary file): they run again, untraced and then traced, one run after
/// the other, and those statuses (and that trace) replace the overlapped runs' before the
/// usual rules for flaky tests and shim failures apply. A suite that passes costs nothing.
fn settle_overlap(
    session: &Session,
    shim: &'static dyn TraceShim,
    mode: TraceMode,
    plain: &mut RunResult,
    traced: &mut RunResult,
    trace: &mut Trace,
) -> Result<usize> {
    let ids: std::collections::BTreeSet<&TestId> = plain.statuses.keys().chain(traced.statuses.keys()).collect();
    let differ: Vec<TestId> = ids
        .into_iter()
        .filter(|id| plain.status(id) != TestStatus::Passed || traced.status(id) != TestStatus::Passed)
        .map(|id| id.to_string())
        .collect();
    if differ.is_empty() {
        return Ok(0);
    }
    let again = baseline::plain_run(
        session,
        Some(&differ),
        &format!(
            "re-running one run after the other the {} test(s) that did not pass both overlapped runs",
            differ.len()
        ),
    )?;
    let rerun = traced_run(session, shim, Some(&differ), mode)?;
    // A re-run of tests that crash the traced process may leave no trace file at all: the
    // statuses still count, and those tests keep no trace.
    let rerun_trace = rerun.read_trace(session).unwrap_or_else(|e| {
        session.progress.note(format!(
            "warning: the re-run of {} test(s) left no readable trace: {}",
            differ.len(),
            e.chain()
        ));
        Trace { version: trace.version, mode: trace.mode, tests: Default::default(), partial: Vec::new(), files: 0 }
    });
    for id in &differ {
        match again.statuses.get(id) {
            Some(o) => plain.statuses.insert(id.clone(), o.clone()),
            None => plain.statuses.remove(id),
        };
        match rerun.result.statuses.get(id) {
            Some(o) => traced.statuses.insert(id.clone(), o.clone()),
            None => traced.statuses.remove(id),
        };
        match rerun_trace.tests.get(id) {
            Some(t) => trace.tests.insert(id.clone(), t.clone()),
            None => trace.tests.remove(id),
        };
    }
    trace.partial.extend(rerun_trace.partial);
    Ok(differ.len())
}

fn trace_cache_path(session: &Session, mode: TraceMode, tests: &[TestId]) -> std::path::PathBuf {
    let mut h = Sha256::new();
    h.update(session.tree_digest.as_bytes());
    h.update(format!("{mode:?}").as_bytes());
    h.update(session.config.to_toml().as_bytes());
    for t in tests {
        h.update(t.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(h.finalize())[..20].to_string();
    session.cache_dir().join(format!("trace-{key}.json"))
}

/// Trace `tests` (ids) in one run, or load the trace from the cache.
pub fn trace(session: &Session, tests: &[TestId], mode: TraceMode, fresh: bool) -> Result<TraceRun> {
    let shim = shim(session)?;
    if tests.is_empty() {
        bail!("no passing tests to trace in {} (run `carve baseline` to see their statuses)", session.repo.display());
    }
    let cached_path = trace_cache_path(session, mode, tests);
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
    let traced = traced_run(session, shim, Some(tests), mode)?;
    let trace = traced.read_trace(session)?;
    let failed: Vec<String> = traced
        .result
        .statuses
        .iter()
        .filter(|(_, o)| o.status != TestStatus::Passed)
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
    Ok(TraceRun {
        trace,
        native: traced.native,
        tests_run: tests.len(),
        cached: false,
        shim_failures: failed.into_iter().collect(),
        shim_dir: traced.shim_dir,
    })
}

/// What one run under the shim gave; what its processes wrote is in `trace_dir`.
struct TracedRun {
    result: RunResult,
    trace_dir: std::path::PathBuf,
    native: bool,
    shim_dir: Option<std::path::PathBuf>,
}

impl TracedRun {
    /// The merged trace of the run.
    fn read_trace(&self, session: &Session) -> Result<Trace> {
        session.progress.step("trace: reading the trace");
        let dir = &self.trace_dir;
        let trace = Trace::read_dir(dir).with_context(|| format!("failed to read the trace in {}", dir.display()))?;
        for p in &trace.partial {
            session
                .progress
                .note(format!("warning: partial trace: {} ({}); the tests it finished are kept", p.file, p.reason));
        }
        Ok(trace)
    }
}

/// Install the shim into a fresh shadow copy and run `tests` (all: `None`) under it.
fn traced_run(
    session: &Session,
    shim: &'static dyn TraceShim,
    tests: Option<&[TestId]>,
    mode: TraceMode,
) -> Result<TracedRun> {
    session.progress.step("trace: installing the shim");
    let scratch = session.scratch("trace")?;
    let tree = scratch.join("tree");
    tree::shadow_copy(&session.repo, &tree, carve_languages::skip_policy())?;
    let trace_dir = scratch.join("trace");
    std::fs::create_dir_all(&trace_dir)?;
    // The environment's installed files go in before the shim installs: the Rust shim
    // resolves its runtime crate into the environment's `Cargo.lock`, with its `CARGO_HOME`
    // (resolved without them, a crate with no lock file of its own got versions the
    // environment never fetched, and the traced run could not build offline).
    let mut env_vars = Vec::new();
    if let (Some(active), None) = (&session.environment, &session.image) {
        active.prepare(&tree)?;
        env_vars = active.vars();
    }
    // The output folder: the shim installs under it and keeps what it hands its runtime
    // there (the Python probe map, which users and the benchmark run the shim by hand with).
    let request = TraceRequest {
        index: &session.index,
        repo: &session.repo,
        tree: &tree,
        shim_dir: &session.out,
        trace_dir: &trace_dir,
        mode,
        env: &env_vars,
    };
    let setup =
        shim.prepare(&request).with_context(|| format!("failed to install the {} tracing shim", shim.name()))?;
    for note in &setup.notes {
        session.progress.note(note);
    }
    let extras = RunExtras { env: setup.env, pythonpath: setup.path_entries.clone(), args: setup.args };
    let what = tests.map_or_else(|| "the whole suite".to_string(), |t| format!("{} tests", t.len()));
    session.progress.step(format!("trace: running {what} under the shim"));
    let result = run_tests(session, &tree, tests.map(<[TestId]>::to_vec), &extras, &scratch.join("runner"))?;
    let _ = std::fs::remove_dir_all(&tree);
    Ok(TracedRun { result, trace_dir, native: setup.native, shim_dir: setup.path_entries.first().cloned() })
}

/// The merged trace as written to `<out>/trace.json`.
pub fn write_trace(session: &Session, trace: &Trace) -> Result<std::path::PathBuf> {
    let path = session.out.join("trace.json");
    let tmp = session.out.join(".trace.json.tmp");
    trace.write_json(&tmp)?;
    std::fs::rename(&tmp, &path).with_context(|| format!("failed to write {}", path.display()))?;
    Ok(path)
}
