//! `carve grade`, `carve report`, `carve arc run`, `carve arc report`: parse arguments,
//! call `carve-eval`, print.

use anyhow::{Context, Result, bail};
use carve_core::fs::write_atomic;
use carve_eval::report::{self, Bootstrap};
use carve_eval::{arc_run, grade, html, progress::Progress};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Status;
use crate::cli::Format;
use crate::output::emit;

#[derive(Debug, Args, Clone)]
pub struct GradeArgs {
    /// A task bundle, or (with --predictions) a folder of bundles (`carve tasks --out`).
    pub bundle: PathBuf,
    /// The solution patch (a unified diff against the task's workspace).
    #[arg(long, conflicts_with = "predictions", required_unless_present = "predictions")]
    pub patch: Option<PathBuf>,
    /// SWE-bench predictions (JSON lines with `instance_id`, `model_patch`, `model_name_or_path`).
    #[arg(long)]
    pub predictions: Option<PathBuf>,
    /// The repository the bundles were made from (default: the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// carve.toml of the repository (default: <repo>/carve.toml, else detected).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model name for --patch, and for predictions without `model_name_or_path`.
    #[arg(long, default_value = "patch")]
    pub model: String,
    /// Instances graded at once.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Where grade.json goes (default: under the user's cache directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Where the tests run: here, or inside the image the bundles name.
    #[arg(long, value_enum, default_value_t)]
    pub runtime: crate::cli::RuntimeArg,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// Results files or folders holding them.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Also write the report as a self-contained HTML page with charts.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Bootstrap resamples over tasks.
    #[arg(long, default_value_t = carve_eval::bootstrap::DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// Seed of the bootstrap (same seed, same intervals).
    #[arg(long, default_value_t = carve_eval::bootstrap::DEFAULT_SEED)]
    pub seed: u64,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub type ArcReportArgs = ReportArgs;

#[derive(Debug, Args, Clone)]
pub struct ArcRunArgs {
    /// The chain bundle (with chain.json).
    pub bundle: PathBuf,
    /// The agent command, run by `sh -c` in the workspace with the spec and workspace paths
    /// as arguments (also in CARVE_SPEC, CARVE_WORKSPACE; CARVE_STAGE, CARVE_CONTRACT, …).
    #[arg(long)]
    pub agent: String,
    /// The agent's name in results (default: the command's first word).
    #[arg(long)]
    pub name: Option<String>,
    /// A git clone of the repository holding the chain's final commit (default: the current directory).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// L4: nothing between stages (the protocol); L3: passed or not; L2: + failing tests; L1: + their output.
    #[arg(long, default_value = "L4")]
    pub feedback: arc_run::Feedback,
    /// Seconds the agent has per stage.
    #[arg(long, default_value_t = 4 * 3600)]
    pub stage_budget: u64,
    /// carve.toml to use instead of the bundle's.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Runs go to <out>/<chain_id>/<name>/ (default: under the user's cache directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// auto: hide the bundle, the repository and private/ behind empty mounts in a user
    /// namespace when `unshare` works here, else `none`; namespace: require that; none: only
    /// its own HOME/TMPDIR and a cleared environment.
    #[arg(long, default_value = "auto")]
    pub sandbox: carve_eval::sandbox::SandboxMode,
    /// Pass this variable of carve's environment on to the agent (repeatable; the agent's
    /// environment is otherwise cleared but for PATH, locale and the CARVE_* variables).
    #[arg(long = "agent-env", value_name = "NAME")]
    pub agent_env: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

fn cache_out(what: &str) -> Result<PathBuf> {
    let cache = dirs::cache_dir().context("no cache directory for this user: pass --out DIR")?;
    Ok(cache.join("carve").join(what))
}

fn here(p: &Option<PathBuf>) -> Result<PathBuf> {
    let p = p.clone().unwrap_or_else(|| PathBuf::from("."));
    p.canonicalize().with_context(|| format!("repository {} does not exist", p.display()))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1}%", v * 100.0))
}

fn est(e: &carve_eval::bootstrap::Estimate) -> String {
    match e.ci {
        Some(ci) => format!("{} [{:.1}, {:.1}]", pct(e.value), ci.low * 100.0, ci.high * 100.0),
        None => pct(e.value),
    }
}

/// The one image the bundles of `pairs` name (`--runtime oci`), built when missing.
fn image_of(
    pairs: &[(grade::TaskBundle, grade::Submission)],
    repo: &std::path::Path,
) -> Result<carve_pipeline::image_runs::ImageRuntime> {
    let Some((first, _)) = pairs.first() else { bail!("nothing to grade") };
    let progress = carve_pipeline::progress::Progress::spinner();
    let image = carve_pipeline::env::image::bundle_runtime(&first.dir, repo, &progress)?;
    for (b, _) in pairs {
        let path = b.dir.join("instance.json");
        let text = std::fs::read_to_string(&path).with_context(|| format!("failed to read {}", path.display()))?;
        let inst: carve_formats::instance::Instance = carve_formats::from_str(&text, &path)?;
        if inst.image_name.as_deref() != Some(image.image.as_str()) {
            bail!(
                "{} names the image {:?}, {} names {}: grade bundles of one image at a time with --runtime oci",
                b.dir.display(),
                inst.image_name,
                first.dir.display(),
                image.image
            );
        }
    }
    eprintln!("carve: running the tests in the image {} ({})", image.image, image.engine.kind());
    Ok(image)
}

pub fn grade(a: &GradeArgs) -> Result<Status> {
    let repo = here(&a.repo)?;
    let subs = match (&a.patch, &a.predictions) {
        (Some(p), None) => {
            let b = grade::TaskBundle::read(&a.bundle)?;
            let patch =
                std::fs::read_to_string(p).with_context(|| format!("failed to read the patch {}", p.display()))?;
            vec![grade::Submission { instance_id: b.instance_id, model: a.model.clone(), patch }]
        }
        (None, Some(f)) => grade::read_predictions(f, &a.model)?,
        _ => bail!("pass --patch FILE or --predictions FILE.jsonl"),
    };
    let mut pairs = Vec::new();
    for s in subs {
        let dir = grade::locate(&a.bundle, &s.instance_id)?;
        pairs.push((grade::TaskBundle::read(&dir)?, s));
    }
    let out = match &a.out {
        Some(o) => o.clone(),
        None => cache_out("grade")?.join(&a.model),
    };
    std::fs::create_dir_all(&out).with_context(|| format!("failed to create {}", out.display()))?;
    let work = tempfile::Builder::new().prefix("carve-grade-").tempdir()?;
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()).div_ceil(2));
    // The environment `carve env` made for the repository, unless carve.toml names an interpreter.
    let config = carve_eval::test_run::config(&repo, a.config.as_deref())?;
    let environment = match config.test.interpreter() {
        Some(p) if p.components().count() > 1 => None,
        _ => carve_pipeline::env::store::find(&repo, config.language).map(|e| {
            eprintln!("carve: using the environment {}", e.dir.display());
            e.for_runs()
        }),
    };
    let image = match a.runtime {
        crate::cli::RuntimeArg::Local => None,
        crate::cli::RuntimeArg::Oci => Some(std::sync::Arc::new(image_of(&pairs, &repo)?)),
    };
    let opts = grade::GradeOptions {
        repo,
        config: a.config.clone(),
        jobs,
        work: work.path().to_path_buf(),
        environment,
        image,
    };
    let progress = Progress::bar(pairs.len() as u64, "grading");
    let run = grade::grade_all(pairs, &opts, &progress)?;
    progress.finish();
    let path = out.join(grade::GRADE_FILE);
    write_atomic(&path, &carve_pipeline::emit::pretty(&run))?;
    emit(a.format, &run, || {
        let mut s = String::new();
        for i in &run.instances {
            s.push_str(&format!(
                "{:<10} passed {:>6}  {}\n",
                if i.resolved { "resolved" } else { "unresolved" },
                pct(Some(i.passed_rate)),
                i.instance_id
            ));
            for p in i.patch_problem.iter().chain(&i.error) {
                s.push_str(&format!("    {p}\n"));
            }
        }
        s.push_str(&format!("results: {}\n", path.display()));
        s
    })?;
    Ok(if run.instances.iter().any(|i| i.error.is_some()) { Status::ValidationFailed } else { Status::Success })
}

fn write_html(path: &Path, page: &str) -> Result<()> {
    write_atomic(path, page.as_bytes())?;
    Ok(())
}

fn print_page(page: &str) -> Result<()> {
    use std::io::Write;
    std::io::stdout().lock().write_all(page.as_bytes())?;
    Ok(())
}

/// A report's HTML page: written to `--html` when given, and printed instead of the text or
/// JSON report with `--format html`. True when it was printed (then nothing else is).
fn html_page(html: Option<&Path>, format: Format, page: impl Fn() -> Result<String>) -> Result<bool> {
    if let Some(h) = html {
        write_html(h, &page()?)?;
    }
    if format == Format::Html {
        print_page(&page()?)?;
        return Ok(true);
    }
    Ok(false)
}

/// `carve audit --format html`: the classification page, with the masked diff of the
/// feature (extracted into the output folder's scratch space, as `carve extract` does).
pub fn audit_html(
    session: &carve_pipeline::Session,
    baseline: &carve_pipeline::baseline::Baseline,
    feature: &carve_pipeline::classify::Feature,
    report: &serde_json::Value,
) -> Result<Status> {
    use carve_pipeline::extract as bundle;
    let dir = session.scratch(&format!("audit-html-{}", feature.slug))?;
    let (files, tests) = bundle::removal_of_tests(session, &baseline.known(), &feature.f2p);
    let mask =
        match bundle::extract(session, &feature.extracted(), &feature.classification.removed_calls, files, tests, &dir)
        {
            Ok(ext) => Some(ext.mask_patch),
            Err(e) => {
                session.progress.note(format!("warning: no masked diff on the page: {}", e.chain()));
                None
            }
        };
    let _ = std::fs::remove_dir_all(&dir);
    print_page(&carve_eval::audit_html::audit_page(report, mask.as_deref())?)?;
    Ok(Status::Success)
}

pub fn report(a: &ReportArgs) -> Result<Status> {
    let r = report::grade_report(&a.results, Bootstrap { resamples: a.resamples, seed: a.seed })?;
    if html_page(a.html.as_deref(), a.format, || Ok(html::grade_page(&r)?))? {
        return Ok(Status::Success);
    }
    emit(a.format, &r, || {
        let mut s = format!(
            "{:<28} {:>5} {:>5}  {:<26} {:<26}\n",
            "model", "level", "n", "resolved [95% CI]", "passed [95% CI]"
        );
        for m in &r.models {
            let level = m.level.map_or("all".to_string(), |l| format!("L{l}"));
            s.push_str(&format!(
                "{:<28} {:>5} {:>5}  {:<26} {:<26}\n",
                m.model,
                level,
                m.instances,
                est(&m.resolved_rate),
                est(&m.passed_rate)
            ));
        }
        for n in &r.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    })?;
    Ok(Status::Success)
}

pub fn arc_run(a: &ArcRunArgs) -> Result<Status> {
    let out = match &a.out {
        Some(o) => o.clone(),
        None => cache_out("arc-runs")?,
    };
    let opts = arc_run::ArcRunOptions {
        bundle: a.bundle.clone(),
        repo: here(&a.repo)?,
        agent_command: a.agent.clone(),
        name: a.name.clone(),
        feedback: a.feedback,
        stage_budget: Duration::from_secs(a.stage_budget),
        out,
        config: a.config.clone(),
        sandbox: a.sandbox,
        agent_env: a.agent_env.clone(),
    };
    let stages = carve_eval::chain::ChainBundle::read(&a.bundle)?.chain.stages.len();
    let progress = Progress::bar(stages as u64, "stage");
    let (run, path) = arc_run::run(&opts, &progress)?;
    progress.finish();
    emit(a.format, &run, || {
        let mut s = format!("{} on {} ({}):\n", run.agent, run.chain_id, run.feedback);
        for st in &run.stages {
            s.push_str(&format!(
                "  m{}: {}  (F2P {}, P2P {}; agent exit {}, {:.1}s{}; {} files +{} -{})\n",
                st.index,
                if st.gate.passed { "passed" } else { "FAILED" },
                if st.gate.f2p_passed { "ok" } else { "fail" },
                if st.gate.p2p_passed { "ok" } else { "fail" },
                st.agent.exit_code.map_or("-".to_string(), |c| c.to_string()),
                st.agent.seconds,
                if st.agent.timed_out { ", out of time" } else { "" },
                st.diff_stats.files,
                st.diff_stats.added,
                st.diff_stats.deleted
            ));
        }
        if let Some(g) = &run.chain_gate {
            s.push_str(&format!("  chain gate: {}\n", if g.passed { "passed" } else { "FAILED" }));
        }
        s.push_str(&format!("results: {}\n", path.display()));
        s
    })?;
    Ok(Status::Success)
}

pub fn arc_report(a: &ArcReportArgs) -> Result<Status> {
    let r = report::arc_report(&a.results, Bootstrap { resamples: a.resamples, seed: a.seed })?;
    if html_page(a.html.as_deref(), a.format, || Ok(html::arc_page(&r)?))? {
        return Ok(Status::Success);
    }
    emit(a.format, &r, || {
        let mut s = format!(
            "{:<20} {:>4} {:<24} {:<24} {:<24} {:<24} {:<24} {:<24}\n",
            "agent", "runs", "m0", "Gate", "Cont.", "F2P", "Depth", "P2P fail"
        );
        for g in r.agents.iter().chain(std::iter::once(&r.all)) {
            s.push_str(&format!(
                "{:<20} {:>4} {:<24} {:<24} {:<24} {:<24} {:<24} {:<24}\n",
                g.agent,
                g.runs,
                est(&g.m0),
                est(&g.gate),
                est(&g.cont),
                est(&g.stage_f2p),
                est(&g.depth),
                est(&g.chain_p2p_failure)
            ));
        }
        let a = &r.all;
        s.push_str(&format!(
            "in-chain regression {}; pure regression {}; last stage passed but chain gate failed {}\n",
            est(&a.in_chain_regression),
            est(&a.pure_regression),
            est(&a.last_stage_overestimate)
        ));
        let surv: Vec<String> = a.survival.iter().enumerate().map(|(k, e)| format!("m{k} {}", pct(e.value))).collect();
        s.push_str(&format!("survival: {}\n", surv.join(", ")));
        let g = &r.group_comparison;
        s.push_str(&format!(
            "next-stage F2P within {} task-stage groups: after a passed stage {}, after a failed stage {}\n",
            g.groups,
            est(&g.after_pass),
            est(&g.after_fail)
        ));
        for e in &r.excluded {
            s.push_str(&format!("excluded {}: {}\n", e.path.display(), e.reason));
        }
        s
    })?;
    Ok(Status::Success)
}
