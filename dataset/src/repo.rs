//! One repository of a dataset, stage by stage: checkout → index → environment → trace
//! (baseline and the traced run) → candidates → re-check → bundle. Its work folder
//! (`work/<owner>+<name>@<commit>/`) holds the checkout, the pipeline's output folder
//! (`session/`: caches and bundles), the candidate markers (`chunks/`), the re-checks
//! (`rechecked/`) and the stage times so far (`stats.json`); the finished repository is
//! assembled beside its final place and renamed into it (see [`crate::layout`]).

use carve_formats::dataset::{
    CandidateCounts, Failure, ManifestEntry, RepoEnvironment, RepoResult, RepoStats, RepoStatus, StageTime,
};
use carve_pipeline::candidates::CandidateOptions;
use carve_pipeline::{Session, SessionOptions};
use std::path::{Path, PathBuf};

use crate::cpu::Timer;
use crate::error::{Context, bail};
use crate::layout::{Layout, put_in_place, write_atomic};
use crate::progress::{Position, Reporter};
use crate::{Error, Result, chunks, source};

/// How a finished bundle is checked again before it joins the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recheck {
    /// `carve validate` on the checkout (`carve_pipeline::validate::validate_bundle`).
    Local,
    /// `carve validate --runtime oci` in the bundle's image, compared state by state with the
    /// validation the bundle records (a bundle that names no image: on the checkout).
    Image,
    /// Not checked again (for tests of the runner itself; the dataset says so per task).
    Off,
}

impl Recheck {
    pub fn name(self) -> &'static str {
        match self {
            Recheck::Local => "local",
            Recheck::Image => "image",
            Recheck::Off => "off",
        }
    }
}

/// What every repository of a run shares.
#[derive(Debug, Clone)]
pub struct RepoOptions {
    pub levels: Vec<u8>,
    /// A cap on candidates for every repository (an entry's own `candidates` wins).
    pub candidates: Option<usize>,
    /// `--protect`: which passing tests protect what they run.
    pub protection: carve_pipeline::protect::Protection,
    /// `--max-lines`: the line budget of one feature (`None`: none).
    pub max_lines: Option<usize>,
    pub jobs: Option<usize>,
    pub recheck: Recheck,
    /// Keep the work folder of a finished repository (checkout, caches).
    pub keep_work: bool,
    pub mirrors: Vec<PathBuf>,
    /// The manifest's folder: local `url`s are relative to it.
    pub base_dir: PathBuf,
}

/// A repository's end: finished (done or failed, recorded), or the run must stop (a full
/// disk), with nothing recorded for it.
#[derive(Debug)]
pub enum Outcome {
    Finished(RepoResult),
    Stop(Error),
}

/// Work on one repository; see the module documentation.
pub struct RepoJob<'a> {
    pub entry: &'a ManifestEntry,
    pub layout: &'a Layout,
    pub opts: &'a RepoOptions,
    pub at: Position,
    pub reporter: &'a Reporter,
}

/// A stage that failed: its name and the error.
type StageError = Box<(String, Error)>;

/// The stage being run, its timer, and the stage times so far.
struct Stages<'a> {
    job: &'a RepoJob<'a>,
    stats: RepoStats,
    path: PathBuf,
    /// The environment once its stage is done (a later stage's failure records it too).
    environment: Option<RepoEnvironment>,
}

impl Stages<'_> {
    /// Run `stage`, recording its time (also when it fails) and reporting it.
    fn run<T>(&mut self, stage: &str, f: impl FnOnce() -> Result<T>) -> std::result::Result<T, StageError> {
        self.job.reporter.stage(&self.job.at, stage);
        let timer = Timer::start();
        let r = f();
        let (secs, cpu) = timer.stop();
        self.stats.stages.push(StageTime::new(stage.to_string(), secs, cpu));
        let _ = write_atomic(&self.path, &carve_formats::to_pretty(&self.stats));
        match r {
            Ok(v) => {
                self.job.reporter.stage_done(&self.job.at, stage, secs, "");
                Ok(v)
            }
            Err(e) => Err(Box::new((stage.to_string(), e))),
        }
    }
}

impl RepoJob<'_> {
    pub fn run(&self) -> Outcome {
        let work = self.layout.work(self.entry);
        let stats_path = work.join("stats.json");
        let stats = carve_formats::read::<RepoStats>(&stats_path).unwrap_or_else(|_| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_string();
            RepoStats::new(carve_pipeline::emit::TOOL_VERSION.to_string(), host)
        });
        let mut stages = Stages { job: self, stats, path: stats_path, environment: None };
        let result = match self.stages(&work, &mut stages).map_err(|b| *b) {
            Ok(r) => r,
            Err((stage, e)) if e.is_disk_full() => {
                return Outcome::Stop(Error::msg(format!(
                    "the disk is full (stage {stage} of {}): {}; finished repositories are kept — free space and run again to resume",
                    self.at,
                    e.chain()
                )));
            }
            Err((stage, e)) => {
                let reason = e.chain();
                self.reporter.failed(&self.at, &stage, &reason);
                let mut r = self.result(RepoStatus::Failed);
                r.failure = Some(Failure::new(stage, reason));
                r.environment = stages.environment.clone();
                r
            }
        };
        match self.assemble(&work, &result, &stages.stats) {
            Ok(()) => Outcome::Finished(result),
            Err(e) => Outcome::Stop(Error::msg(format!("{}: could not record the result: {}", self.at, e.chain()))),
        }
    }

    fn result(&self, status: RepoStatus) -> RepoResult {
        let e = self.entry;
        RepoResult::new(e.name.clone(), e.commit.clone(), crate::manifest::entry_digest(e), status)
    }

    fn stages(&self, work: &Path, st: &mut Stages<'_>) -> std::result::Result<RepoResult, StageError> {
        let e = self.entry;
        let checkout = work.join("checkout");
        st.run("checkout", || {
            let origin = source::resolve(&e.url, &e.name, &self.opts.base_dir, &self.opts.mirrors)?;
            source::checkout(&origin, &e.url, &e.commit, &checkout)
        })?;
        let mut session = st.run("index", || self.open_session(&checkout, &work.join("session")))?;
        let env = st.run("environment", || environment(&mut session, e))?;
        let image = env.image_name.as_deref().map(|i| format!(", image {i}")).unwrap_or_default();
        self.reporter.note(&self.at, &format!("environment: {} ({}){image}", env.status, env.note));
        st.environment = Some(env.clone());
        let (b, t) = st.run("trace", || {
            Ok(carve_pipeline::trace::baseline_and_trace(&session, carve_pipeline::trace::TraceMode::FirstHits)?)
        })?;
        let mut r = self.result(RepoStatus::Done);
        r.language = Some(session.config.language.name().to_string());
        r.environment = Some(env);
        let outcome = st.run("candidates", || {
            // The candidates `carve tasks` tries under the run's policy: under `sampled:N` and
            // `feature` the module groups too, the feature-sized ones.
            let kinds = carve_pipeline::classify::CandidateKinds::for_policy(self.opts.protection);
            let all = carve_pipeline::classify::candidates(&session, &b, &t, &[], kinds)?;
            let found = all.len();
            let cands = match e.candidates.or(self.opts.candidates) {
                Some(k) if k < found => chunks::ranked(&session, &b, &t, all).into_iter().take(k).collect(),
                _ => all,
            };
            r.candidates = CandidateCounts::new(found, cands.len());
            let opts = CandidateOptions {
                levels: self.opts.levels.clone(),
                protection: self.opts.protection,
                max_lines: self.opts.max_lines,
                ..CandidateOptions::default()
            };
            let out = chunks::run(&session, &b, &t, &cands, &opts, &work.join("chunks"), |done, total| {
                self.reporter.note(&self.at, &format!("candidates: {done} of {total} tried"))
            })?;
            let _ = std::fs::remove_dir_all(session.out.join("work"));
            Ok(out)
        })?;
        r.rejected = outcome.rejected;
        let (tasks, rejected) =
            st.run("recheck", || self.recheck(&checkout, &session.out, &work.join("rechecked"), outcome.emitted))?;
        r.tasks = tasks;
        r.rejected.extend(rejected);
        Ok(r)
    }

    fn open_session(&self, checkout: &Path, out: &Path) -> Result<Session> {
        let e = self.entry;
        let env = e.env.clone().unwrap_or_default();
        let python = env.python.as_ref().map(PathBuf::from);
        let config = env.config.as_ref().map(|c| self.opts.base_dir.join(c));
        let repo_name = carve_pipeline::identity::parse_repo_name(&e.name)?;
        let session = Session::open(SessionOptions {
            repo: checkout,
            out: Some(out),
            config: config.as_deref(),
            python: python.as_deref(),
            timeout: e.timeout,
            test_timeout: e.test_timeout,
            jobs: self.opts.jobs,
            repo_name: Some(repo_name),
        })?;
        if let Some(want) = &e.language {
            let found = session.config.language.name();
            if found != want
                && !carve_languages::support(session.config.language).family().iter().any(|l| l.name() == want)
            {
                bail!(
                    "the manifest says `language = \"{want}\"`, carve detected {found} ({})",
                    session.config.detected.join("; ")
                );
            }
        }
        Ok(session)
    }

    /// Build the repository's final folder beside it (bundles hard-linked from the work
    /// folder, `result.json`, `stats.json`), rename it into place, then drop the work folder.
    fn assemble(&self, work: &Path, result: &RepoResult, stats: &RepoStats) -> Result<()> {
        let dest = self.layout.repo(self.entry);
        let parent = dest.parent().ok_or_else(|| Error::msg("a repository folder has a parent"))?;
        std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
        let staged = parent.join(format!(".{}.partial-{}", self.entry.commit, std::process::id()));
        if staged.exists() {
            std::fs::remove_dir_all(&staged)?;
        }
        std::fs::create_dir_all(&staged)?;
        for row in &result.tasks {
            let from = work.join("session").join(&row.instance_id);
            link_tree(&from, &staged.join("tasks").join(&row.instance_id))?;
        }
        if self.opts.recheck == Recheck::Image && work.join("rechecked").is_dir() {
            link_tree(&work.join("rechecked"), &staged.join("rechecked"))?;
        }
        write_atomic(&staged.join("stats.json"), &carve_formats::to_pretty(stats))?;
        write_atomic(&staged.join("result.json"), &carve_formats::to_pretty(result))?;
        put_in_place(&staged, &dest)?;
        if !self.opts.keep_work {
            let _ = std::fs::remove_dir_all(work);
        }
        Ok(())
    }
}

/// The environment the repository's tests run in: the manifest's `env` hints when it gives
/// an interpreter, else the one `carve env` made for these install inputs (found in the
/// environment store, so a resumed run never makes it again), else one set up now with
/// [`carve_pipeline::env::setup`]. An environment that cannot be set up is the stage's error.
fn environment(session: &mut Session, entry: &ManifestEntry) -> Result<RepoEnvironment> {
    let given = |why: String| RepoEnvironment::new(None, None, "given".into(), why);
    if let Some(p) = entry.env.as_ref().and_then(|e| e.python.as_ref()) {
        return Ok(given(format!("the manifest gives env.python = {p}")));
    }
    // Found in the store (a resumed run) before asking `given`: the found environment has set
    // the session's interpreter to its own, which `given` would take for one given by path.
    if session.environment.is_none() {
        if let Some(why) = carve_pipeline::env::given(session) {
            return Ok(given(why));
        }
        let opts = carve_pipeline::env::EnvOptions {
            helper: session.config.env.helper.clone(),
            ..carve_pipeline::env::EnvOptions::default()
        };
        carve_pipeline::env::setup(session, &opts)?;
        session.use_recorded_environment();
    }
    let Some(env) = &session.environment else {
        bail!(
            "the environment set up for {} is not found in the environment store ({}): check that it is writable",
            session.repo.display(),
            carve_pipeline::env::store::root().map(|p| p.display().to_string()).unwrap_or_default()
        );
    };
    let r = &env.record;
    let status = serde_json::to_value(r.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    Ok(RepoEnvironment::new(Some(r.key.clone()), Some(r.image.name.clone()), status, r.baseline.summary()))
}

/// Hard-link (or copy) every file of `from` into `to`.
fn link_tree(from: &Path, to: &Path) -> Result<()> {
    for rel in crate::layout::files_under(from) {
        carve_core::tree::link_file(&from.join(&rel), &to.join(&rel))
            .with_context(|| format!("failed to link {} into {}", from.join(&rel).display(), to.display()))?;
    }
    Ok(())
}
