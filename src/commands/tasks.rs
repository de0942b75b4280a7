//! `carve tasks`: one traced run for the whole repository, then for every candidate
//! feature classify -> extract (with the build check) -> validate -> emit (the pipeline's
//! candidate loop), and the `tasks.jsonl` dataset of what passed.

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::Status;
use crate::cli::{Common, EdgeMode, StatementArgs};
use crate::output::emit;
use carve_pipeline::candidates::{CandidateOptions, Tasks, run_candidates};
use carve_pipeline::classify;
use carve_pipeline::emit::write_dataset;
use carve_pipeline::trace;

/// The env step at the start of `carve tasks`: when no environment is recorded and none is
/// given (see `carve_pipeline::env::given`), set one up as `carve env` would and use it.
fn set_up_environment(session: &mut carve_pipeline::Session, args: &crate::cli::EnvArgs) -> Result<()> {
    if session.environment.is_some() {
        return Ok(());
    }
    if let Some(why) = carve_pipeline::env::given(session) {
        session.progress.note(format!("no environment set up: {why}"));
        return Ok(());
    }
    let report = carve_pipeline::env::setup(session, &super::env::options(session, args, false))?;
    session.progress.note(format!(
        "environment set up in {:.0}s: {}",
        report.seconds,
        report.environment.baseline.summary()
    ));
    session.use_recorded_environment();
    Ok(())
}

/// The flags of `carve tasks` beyond the common ones.
pub struct TaskOptions<'a> {
    pub levels: &'a [u8],
    pub threshold: f64,
    pub entry_filter: Option<&'a str>,
    /// `--protect`.
    pub protection: carve_pipeline::protect::Protection,
    /// `--max-lines` (`None`: no budget).
    pub max_lines: Option<usize>,
    /// `--module-groups`: which candidates carve makes.
    pub kinds: carve_pipeline::classify::CandidateKinds,
    /// `--candidates K`: try only the K candidates that extract the most.
    pub candidates: Option<usize>,
    pub statement: &'a StatementArgs,
    /// How to set up an environment first when none is recorded (`None`: `--no-env`).
    pub env: Option<&'a crate::cli::EnvArgs>,
    /// `--runtime`: where the candidates' validation runs.
    pub runtime: carve_pipeline::image_runs::Runtime,
}

pub fn run(common: &Common, groups: &[Vec<String>], edges: EdgeMode, opts: &TaskOptions<'_>) -> Result<Status> {
    let (levels, threshold) = (opts.levels, opts.threshold);
    for l in levels {
        if *l != 1 && *l != 2 {
            bail!("--level takes 1 or 2, not {l}");
        }
    }
    if !(0.0..=1.0).contains(&threshold) {
        bail!("--f2p-pass-threshold is a share between 0 and 1, not {threshold}");
    }
    let mut session = super::open_named(common, opts.statement.repo_name.as_deref())?;
    let _out_lock = session.lock_out()?;
    if let Some(args) = opts.env {
        set_up_environment(&mut session, args)?;
    }
    let (b, t) = trace::baseline_and_trace(&session, super::trace_mode(edges))?;
    if opts.protection == carve_pipeline::protect::Protection::Sampled(0) {
        bail!("--p2p-files takes a number of test files of at least 1");
    }
    let candidates = classify::candidates(&session, &b, &t, groups, opts.kinds)?;
    if opts.runtime == carve_pipeline::image_runs::Runtime::Oci {
        // From here on every test run (validation, the repairs' re-runs) is in the image.
        let image = carve_pipeline::env::image::session_runtime(&session)?;
        session.progress.note(format!("validating in the image {} ({})", image.image, image.engine.kind()));
        session.image = Some(std::sync::Arc::new(image));
    }
    let loop_opts = CandidateOptions {
        levels: levels.to_vec(),
        threshold,
        entry_filter: opts.entry_filter.map(str::to_string),
        protection: opts.protection,
        max_lines: opts.max_lines,
        candidates: opts.candidates,
        describe: opts.statement.describe.clone(),
    };
    let Tasks { mut emitted, rejected, ranking } = run_candidates(&session, &b, &t, candidates, &loop_opts);
    write_dataset(&session.out, &mut emitted)?;
    let _ = std::fs::remove_dir_all(session.out.join("work"));
    let ids: Vec<&String> = emitted.iter().map(|(id, _)| id).collect();
    let mut report = json!({"out": session.out, "tasks": ids, "rejected": rejected});
    if let Some(ranking) = ranking {
        report["ranking"] = Value::Array(ranking);
    }
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
