//! Stage 0, env: set up the repository's tests from its own metadata, in an environment carve
//! owns, verified by running the suite, repaired from what fails, and recorded.
//!
//! 1. The language's [`EnvSupport`] reads the repository's files into a plan: findings with
//!    their sources, the interpreter or toolchain range asked for.
//! 2. The environment is built in a `.partial` folder beside where it will live (see
//!    [`store`]): the install inputs (or the whole tree, when the project itself is
//!    installed) copied into its `src/`, then the install steps, each with a timeout.
//! 3. The whole suite runs once with it ([`verify`]). While tests fail and a round is left,
//!    the language's repairs (and then the optional helper, [`helper`]) say what to install;
//!    it is installed and the suite runs again.
//! 4. An environment in which tests pass is moved into place with `environment.json`
//!    ([`record`]) and its `Dockerfile` ([`dockerfile`]); one in which none pass is removed and
//!    the error says what still fails. Later commands find it by the repository and its
//!    install inputs ([`store::lookup`]), and runs use it through [`ActiveEnv`].

pub mod dockerfile;
pub mod helper;
pub mod image;
pub mod record;
pub mod store;
pub mod verify;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use carve_languages::env::exec::StepOutcome;
use carve_languages::env::{EnvPlan, EnvSupport, Step, StepDir, Tool, expand};

use crate::error::bail;
use crate::{Context, Result, Session};
use record::{BaselineCounts, CONTEXT_DIR, DOCKERFILE, ENVIRONMENT_FILE, EnvStatus, Environment, RecordedStep};
pub use store::ActiveEnv;

/// How `carve env` works.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// Repair rounds after the first verification run.
    pub rounds: u32,
    /// `[env] helper` / `--env-helper`.
    pub helper: Option<String>,
    /// Make it again even when one is recorded for these inputs.
    pub fresh: bool,
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions { rounds: 3, helper: None, fresh: false }
    }
}

/// What `carve env` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EnvReport {
    /// The environment's folder (`None` when it was not kept).
    pub dir: Option<PathBuf>,
    /// Whether a recorded environment was reused rather than made.
    pub reused: bool,
    pub seconds: f64,
    pub environment: Environment,
}

/// The language's environment support, or an error naming the language.
pub fn support_of(session: &Session) -> Result<&'static dyn EnvSupport> {
    let lang = session.config.language;
    carve_languages::support(lang)
        .environment()
        .with_context(|| format!("carve cannot set up {lang} environments yet; install the dependencies by hand"))
}

/// Why the session needs no environment of carve's, or `None` when it does: `CARVE_ENV=off`,
/// a configuration that names its interpreter by path, a language carve cannot set up, or a
/// repository that brings its own installed dependencies (a `.venv`, a `node_modules`).
pub fn given(session: &Session) -> Option<String> {
    if std::env::var("CARVE_ENV").is_ok_and(|v| v == "off" || v == "0") {
        return Some("CARVE_ENV=off".into());
    }
    if let Some(p) = session.config.test.interpreter().filter(|p| p.components().count() > 1) {
        return Some(format!("the interpreter {} is given", p.display()));
    }
    let Some(support) = carve_languages::support(session.config.language).environment() else {
        return Some(format!("carve cannot set up {} environments", session.config.language));
    };
    support.provided(&session.repo)
}

/// Find, install, verify, repair and record the environment of the session's repository.
pub fn setup(session: &Session, opts: &EnvOptions) -> Result<EnvReport> {
    let started = Instant::now();
    let support = support_of(session)?;
    let lang = session.config.language.name();
    let plan =
        support.detect(&session.repo).map_err(|e| crate::Error::msg(format!("{}: {e}", session.repo.display())))?;
    let key = store::key(lang, &session.repo, &plan.inputs);
    let dest = store::folder(&session.identity, &key)?;
    if !opts.fresh
        && let Ok(record) = Environment::read(&dest.join(ENVIRONMENT_FILE))
    {
        session.progress.note(format!("using the environment made before: {}", dest.display()));
        write_outputs(session, &dest, &record)?;
        let seconds = started.elapsed().as_secs_f64();
        return Ok(EnvReport { dir: Some(dest), reused: true, seconds, environment: record });
    }
    let tools = support.toolchain(&plan).map_err(|e| crate::Error::msg(e.to_string()))?;
    std::fs::create_dir_all(dest.parent().unwrap_or(&dest))?;
    let partial = store::Partial::create(&dest)?;
    copy_inputs(session, &plan, &partial.dir)?;
    let mut done: Vec<(Step, u32)> = Vec::new();
    for step in support.install_steps(&plan, &tools) {
        let ran = run_step(session, support, &plan, &step, &partial.dir, done.len())?;
        done.push((ran, 0));
    }
    let mut activation = support.activation(&plan, &tools);
    let generated = support.generated(&plan, &partial.dir, &session.repo);
    for g in &generated {
        let rel = &g.path;
        if let Some(built_at) = &g.built_at {
            let to = partial.dir.join("src").join(rel);
            std::fs::copy(partial.dir.join("src").join(built_at), &to)
                .map_err(|e| crate::Error::msg(format!("failed to copy {built_at} to {}: {e}", to.display())))?;
            session.progress.note(format!("the build compiled {built_at}: placed at {rel} and linked into every run"));
        } else {
            session
                .progress
                .note(format!("the install wrote {rel}, which the repository has not: linked into every run"));
        }
        activation.linked.push(rel.clone());
    }
    let mut active = ActiveEnv { dir: partial.dir.clone(), record: draft(session, &plan, &key, &tools, activation) };
    let (counts, unresolved) = verify_and_repair(session, support, &plan, &mut active, &mut done, opts)?;
    let status = if counts.all_pass() {
        EnvStatus::Verified
    } else if counts.passed > 0 {
        EnvStatus::Partial
    } else {
        EnvStatus::Failed
    };
    let inventory = support.inventory(&plan, &tools, &partial.dir);
    let steps: Vec<Step> = done.iter().map(|(s, _)| s.clone()).collect();
    let mut recipe = support.image(&plan, &tools, &steps, &inventory, &partial.dir);
    dockerfile::carry_generated(&mut recipe, &partial.dir, &generated)?;
    recipe.build = active.record.activation.build.clone();
    let mut record = active.record;
    record.status = status;
    record.install = done.iter().map(|(s, round)| recorded(s, *round)).collect();
    record.unresolved = unresolved;
    record.packages = inventory;
    record.baseline = counts;
    record.image.base = recipe.base.clone();
    if status == EnvStatus::Failed {
        write_record(session, &session.out, &record, &recipe)?;
        bail!(
            "the environment of {} does not run its tests: {} after {} repair round(s); nothing was kept.\n{}",
            session.repo.display(),
            record.baseline.summary(),
            opts.rounds,
            failure_text(&record)
        );
    }
    write_record(session, &partial.dir, &record, &recipe)?;
    let dir = partial.commit()?;
    write_outputs(session, &dir, &record)?;
    Ok(EnvReport { dir: Some(dir), reused: false, seconds: started.elapsed().as_secs_f64(), environment: record })
}

/// The record before verification: what is known from the plan and the tools.
fn draft(
    session: &Session,
    plan: &EnvPlan,
    key: &str,
    tools: &[Tool],
    activation: carve_languages::env::Activation,
) -> Environment {
    let id = &session.identity;
    let test = verify::command_in(&session.config.test, &activation, Path::new("{env}"));
    Environment {
        version: record::ENVIRONMENT_VERSION,
        repo: id.full_name(),
        commit: id.commit.clone(),
        tree_digest: session.tree_digest.clone(),
        language: plan.language.name().to_string(),
        key: key.to_string(),
        status: EnvStatus::Failed,
        inputs: plan.inputs.clone(),
        requires: plan.requires.clone(),
        tools: tools.iter().map(|t| (t.tool.clone(), t.version.clone())).collect(),
        findings: with_range_notes(plan, tools),
        install: Vec::new(),
        unresolved: Vec::new(),
        test,
        activation,
        packages: Default::default(),
        baseline: BaselineCounts::default(),
        image: record::ImageInfo {
            name: record::image_name(&id.owner, &id.name, &id.commit),
            base: String::new(),
            dockerfile: DOCKERFILE.into(),
            size_bytes: None,
        },
    }
}

/// The plan's findings, and a note for every range asked for that the tool used is outside
/// (engines are often stricter than a suite needs: the verification run decides).
fn with_range_notes(plan: &EnvPlan, tools: &[Tool]) -> Vec<carve_languages::env::Finding> {
    let mut findings = plan.findings.clone();
    for req in &plan.requires {
        let (Some(wanted), Some(tool)) = (&req.wanted, tools.iter().find(|t| t.tool == req.tool)) else { continue };
        if !carve_languages::env::range::satisfies(&tool.version, wanted) {
            findings.push(carve_languages::env::Finding::new(
                "note",
                format!(
                    "{} {wanted} is asked for and {} {} is used: the tests decide",
                    req.tool, req.tool, tool.version
                ),
                req.source.clone(),
            ));
        }
    }
    findings
}

fn recorded(step: &Step, round: u32) -> RecordedStep {
    let dir = match step.dir {
        StepDir::Env => "env",
        StepDir::Src => "src",
    };
    RecordedStep { command: step.display(), dir: dir.into(), why: step.why.clone(), round }
}

/// Verify, then repair while tests fail and rounds are left. Returns the last counts and what
/// the repairs could not fix.
fn verify_and_repair(
    session: &Session,
    support: &dyn EnvSupport,
    plan: &EnvPlan,
    active: &mut ActiveEnv,
    done: &mut Vec<(Step, u32)>,
    opts: &EnvOptions,
) -> Result<(BaselineCounts, Vec<String>)> {
    let scratch = session.scratch("env")?;
    let mut unresolved = Vec::new();
    let mut failed_repairs: Vec<String> = Vec::new();
    // Tests that passed before the project's build was added: a build that makes fewer pass
    // (it fails here) is taken back.
    let mut before_build: Option<usize> = None;
    for round in 0..=opts.rounds {
        session.progress.step(if round == 0 {
            "running the tests with the new environment".to_string()
        } else {
            format!("repair round {round}: running the tests again")
        });
        let (mut counts, mut failures) = verify::run_suite(session, active, &scratch)?;
        if let Some(before) = before_build.take()
            && counts.passed < before
        {
            let why = counts.run_error.clone().unwrap_or_else(|| counts.summary());
            let first = why.lines().next().unwrap_or_default().to_string();
            session.progress.note(format!("the project's build made fewer tests pass; not used: {first}"));
            drop_build(active, &first);
            (counts, failures) = verify::run_suite(session, active, &scratch)?;
        }
        if counts.all_pass() || round == opts.rounds {
            unresolved.extend(failed_repairs);
            return Ok((counts, unresolved));
        }
        let steps: Vec<Step> = done.iter().map(|(s, _)| s.clone()).collect();
        let repairs = support.repairs(plan, &failures, &steps);
        unresolved = repairs.unresolved.clone();
        let mut next = repairs.steps;
        let built = repairs.build.filter(|_| active.record.activation.build.is_empty());
        let builds = built.is_some();
        if let Some(build) = built {
            session.progress.note(format!("repair: {}", build.why));
            use_build(active, build, round + 1);
            before_build = Some(counts.passed);
        }
        if next.is_empty()
            && !builds
            && let Some(helper) = &opts.helper
        {
            next = helper::ask(helper, plan, &steps, &counts, &failures, Duration::from_secs(600))?;
        }
        if next.is_empty() && !builds {
            unresolved.extend(failed_repairs);
            return Ok((counts, unresolved));
        }
        for step in next {
            session.progress.note(step.why.clone());
            // A repair that fails (a guessed distribution the registry does not have) is
            // recorded and the rounds go on: the next one may find another way.
            match run_step(session, support, plan, &step, &active.dir, done.len()) {
                Ok(ran) => done.push((ran, round + 1)),
                Err(e) => {
                    let first = e.to_string().lines().next().unwrap_or_default().to_string();
                    session.progress.note(format!("warning: {first}"));
                    failed_repairs.push(format!("{} (failed: {first})", step.display()));
                    done.push((step, round + 1));
                }
            }
        }
    }
    unreachable!("the loop returns on its last round")
}

/// Run the project's `build` before every test run from now on: in the activation (every run
/// with this environment, and the image's source), the test command recorded, and a finding
/// that says how it was found and in which repair round.
fn use_build(active: &mut ActiveEnv, build: carve_languages::env::ProjectBuild, round: u32) {
    let command = carve_languages::env::shell::join(&build.argv);
    active.record.activation.build = build.argv;
    active.record.findings.push(carve_languages::env::Finding::new(
        "build",
        command,
        format!("repair round {round}: {}", build.why),
    ));
}

/// Take the project's build back (it made fewer tests pass): its finding becomes a note that
/// says why.
fn drop_build(active: &mut ActiveEnv, why: &str) {
    active.record.activation.build.clear();
    for f in active.record.findings.iter_mut().filter(|f| f.what == "build") {
        f.what = "note".into();
        f.value = format!("the build `{}` was tried and not kept", f.value);
        f.source = format!("{}; with it fewer tests passed ({why})", f.source);
    }
}

/// Copy what the install reads into `<dir>/src`: the inputs, or the whole tree.
fn copy_inputs(session: &Session, plan: &EnvPlan, dir: &Path) -> Result<()> {
    let src = dir.join("src");
    if plan.whole_source {
        carve_core::tree::shadow_copy(&session.repo, &src, carve_languages::skip_policy())?;
        return Ok(());
    }
    std::fs::create_dir_all(&src)?;
    for rel in &plan.inputs {
        let (from, to) = (session.repo.join(rel), src.join(rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&from, &to)
            .with_context(|| format!("failed to copy {} into {}", from.display(), src.display()))?;
    }
    Ok(())
}

/// Run one step in the environment at `dir` (and, when it fails, the language's other way of
/// running it, once); returns the step that succeeded. A failure is an error naming the
/// command, why it was run, and the output's tail.
fn run_step(
    session: &Session,
    support: &dyn EnvSupport,
    plan: &EnvPlan,
    step: &Step,
    dir: &Path,
    n: usize,
) -> Result<Step> {
    let out = exec_step(session, support, step, dir, n);
    if out.ok() {
        return Ok(step.clone());
    }
    if !out.timed_out
        && let Some(alt) = support.retry(plan, step, &out.tail)
    {
        session.progress.note(format!("`{}` failed; trying again: {}", step.display(), alt.why));
        let again = exec_step(session, support, &alt, dir, n);
        if again.ok() {
            return Ok(alt);
        }
        return Err(step_error(session, support, plan, &alt, &again));
    }
    Err(step_error(session, support, plan, step, &out))
}

fn exec_step(session: &Session, support: &dyn EnvSupport, step: &Step, dir: &Path, n: usize) -> StepOutcome {
    let argv: Vec<String> = step.argv.iter().map(|w| expand(w, dir)).collect();
    let vars: Vec<(String, String)> = step.env.iter().map(|(k, v)| (k.clone(), expand(v, dir))).collect();
    let cwd = match step.dir {
        StepDir::Env => dir.to_path_buf(),
        StepDir::Src => dir.join("src"),
    };
    session.progress.step(format!("installing: {}", step.display()));
    let log = dir.join("logs").join(format!("step-{n:02}"));
    carve_languages::env::exec::run(&argv, &cwd, &vars, step_timeout(support), &log)
}

/// `CARVE_ENV_STEP_TIMEOUT` (seconds), else the language's limit for one install step.
fn step_timeout(support: &dyn EnvSupport) -> Duration {
    std::env::var("CARVE_ENV_STEP_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or_else(|| support.step_timeout(), Duration::from_secs)
}

fn step_error(
    session: &Session,
    support: &dyn EnvSupport,
    plan: &EnvPlan,
    step: &Step,
    out: &StepOutcome,
) -> crate::Error {
    let timeout = step_timeout(support);
    let what = if out.timed_out {
        format!(
            "did not finish within {}s (a hanging install: check the network or the registry, or raise the timeout)",
            timeout.as_secs()
        )
    } else if let Some(e) = &out.spawn_error {
        e.clone()
    } else {
        format!("failed with exit code {}", out.exit_code.map_or("none".into(), |c| c.to_string()))
    };
    let refused = refused_packages(&out.tail);
    let hint = if refused.is_empty() {
        String::new()
    } else {
        format!(
            "\nthe registry refused {}: check the name and version where it was found (see `why` above), or pin one the registry has",
            refused.join(", ")
        )
    };
    crate::Error::msg(format!(
        "setting up the {} environment of {}: `{}` {what}\nwhy it ran: {}{hint}\n--- output tail ---\n{}",
        plan.language,
        session.repo.display(),
        // `{env}`, not the `.partial-<pid>` folder the step ran in: that folder is gone once
        // the set-up fails, and its name differs from run to run.
        step.display(),
        step.why,
        out.tail.trim_end()
    ))
}

/// Packages a registry said it does not have, from an installer's output (pip's "No
/// matching distribution found for X", npm's "404 … 'X@v' is not in this registry", Go's
/// "… X@v: reading …: 404", cargo's "failed to select a version for the requirement `X`").
fn refused_packages(tail: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in tail.lines() {
        let found = [
            ("No matching distribution found for ", None),
            ("404 Not Found - GET ", None),
            ("failed to select a version for the requirement `", Some(' ')),
            ("is not in this registry", None),
        ]
        .iter()
        .find_map(|(pat, end)| {
            let at = line.find(pat)?;
            let rest =
                if *pat == "is not in this registry" { line[..at].trim() } else { line[at + pat.len()..].trim() };
            let word = match end {
                Some(c) => rest.split(*c).next().unwrap_or(rest),
                None if *pat == "is not in this registry" => rest.rsplit(' ').next().unwrap_or(rest),
                None => rest.split_whitespace().next().unwrap_or(rest),
            };
            Some(word.trim_matches(['\'', '"', '`']).to_string())
        });
        if let Some(p) = found.filter(|p| !p.is_empty())
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

fn failure_text(record: &Environment) -> String {
    let b = &record.baseline;
    let mut s = String::new();
    if let Some(e) = &b.run_error {
        s.push_str(&format!("the test run could not start: {e}\n"));
    }
    for (file, err) in b.collection_errors.iter().take(10) {
        s.push_str(&format!("  not collected: {file}: {err}\n"));
    }
    for (id, msg) in b.failing.iter().take(10) {
        s.push_str(&format!("  {id}: {msg}\n"));
    }
    for u in &record.unresolved {
        s.push_str(&format!("  to do by hand: {u}\n"));
    }
    s
}

/// Write `environment.json`, the Dockerfile and the build context's files into `dir`.
fn write_record(
    session: &Session,
    dir: &Path,
    record: &Environment,
    recipe: &carve_languages::env::ImageRecipe,
) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    carve_core::fs::write_atomic(&dir.join(ENVIRONMENT_FILE), record.to_json().as_bytes())?;
    let text = dockerfile::render(recipe, &record.repo, &record.commit, &record.image.name);
    carve_core::fs::write_atomic(&dir.join(DOCKERFILE), text.as_bytes())?;
    dockerfile::write_context(recipe, dir)?;
    let _ = session;
    Ok(())
}

/// The files a task bundle carries to rebuild its environment: the Dockerfile and carve's
/// build-context files (`.carve-env/<name>`), from the environment's folder.
pub fn image_files(env_dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = vec![(
        DOCKERFILE.to_string(),
        std::fs::read(env_dir.join(DOCKERFILE))
            .with_context(|| format!("failed to read the Dockerfile in {}", env_dir.display()))?,
    )];
    let ctx = env_dir.join(CONTEXT_DIR);
    let mut names: Vec<_> = std::fs::read_dir(&ctx).into_iter().flatten().flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let bytes = std::fs::read(ctx.join(&name))?;
        out.push((format!("{CONTEXT_DIR}/{}", name.to_string_lossy()), bytes));
    }
    Ok(out)
}

/// Record the size of the environment's built image in `environment.json`, in the
/// environment's folder `env_dir` and in the session's output folder.
pub fn record_image_size(session: &Session, env_dir: &Path, record: &mut Environment, size_bytes: u64) -> Result<()> {
    record.image.size_bytes = Some(size_bytes);
    let json = record.to_json();
    carve_core::fs::write_atomic(&env_dir.join(ENVIRONMENT_FILE), json.as_bytes())?;
    carve_core::fs::write_atomic(&session.out.join(ENVIRONMENT_FILE), json.as_bytes())?;
    Ok(())
}

/// Copy the record, Dockerfile and context files into the session's output folder.
fn write_outputs(session: &Session, env_dir: &Path, record: &Environment) -> Result<()> {
    let out = &session.out;
    carve_core::fs::write_atomic(&out.join(ENVIRONMENT_FILE), record.to_json().as_bytes())?;
    let docker = std::fs::read(env_dir.join(DOCKERFILE))
        .with_context(|| format!("failed to read the Dockerfile in {}", env_dir.display()))?;
    carve_core::fs::write_atomic(&out.join(DOCKERFILE), &docker)?;
    let ctx = env_dir.join(CONTEXT_DIR);
    if ctx.is_dir() {
        for entry in std::fs::read_dir(&ctx)?.flatten() {
            let to = out.join(CONTEXT_DIR).join(entry.file_name());
            std::fs::create_dir_all(out.join(CONTEXT_DIR))?;
            std::fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_refusing_packages_are_named() {
        assert_eq!(
            refused_packages("ERROR: No matching distribution found for carve-no-such-dist==9"),
            vec!["carve-no-such-dist==9"]
        );
        assert_eq!(
            refused_packages(
                "npm error 404 Not Found - GET https://registry.npmjs.org/@feedic%2feslint-config - Not found\nnpm error 404  '@feedic/eslint-config@0.4.1' is not in this registry."
            ),
            vec!["https://registry.npmjs.org/@feedic%2feslint-config", "@feedic/eslint-config@0.4.1"]
        );
        assert_eq!(
            refused_packages("error: failed to select a version for the requirement `serde = \"^9\"`"),
            vec!["serde"]
        );
        assert!(refused_packages("all fine").is_empty());
    }
}
