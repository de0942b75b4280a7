//! `carve arc run`: one agent command through one chain bundle (FeatureArc II-B).
//!
//! L4: one persistent workspace made from S0 (the repository at `final_commit` plus
//! `s0.patch`, a fresh git repository with one commit). For each stage the agent command
//! gets the stage's spec and contract (copied out of the bundle into the run folder) and
//! runs in the workspace within a time budget; then the stage gate runs the stage's F2P and
//! P2P tests on a *copy* of the workspace with the stage's hidden test files overlaid — the
//! result is never shown to the agent and nothing is rolled back. After the last stage the
//! chain gate runs the chain-level suite on a copy of the final workspace. `--feedback L3`
//! tells the agent before the next stage whether the previous stage passed, `L2` also
//! which tests failed, `L1` also their output.
//!
//! The run folder `<out>/<chain_id>/<agent>/`: `run.json` (the [`ArcRun`] results, written
//! after every finished stage), `workspace/` (the agent's), `agent/stage-<k>/` (what the
//! agent is handed: `spec.md`, `contract.json`, `feedback.md`; and its `stdout`/`stderr`),
//! `private/` (a git directory outside the workspace that records the tree after each
//! stage, the per-stage diffs, gate copies). A killed run resumes: finished stages are
//! never redone; a stage whose agent had returned goes straight to its gate; a stage whose
//! agent was interrupted is started again on the workspace as it was left.
//!
//! The agent runs in [`crate::sandbox`]: its own `HOME` and `TMPDIR` under `agent/`, a
//! cleared environment, and (where user namespaces work) the bundle, the repository and
//! `private/` covered by empty mounts; a container isolates it further when that matters.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;
use crate::chain::ChainBundle;
use crate::guard::GroupGuard;
use crate::progress::Progress;
use crate::results::{AgentTurn, ArcRun, DiffStats, Gate, StageResult};
use crate::sandbox::{Sandbox, SandboxMode};
use crate::test_run;
use carve_core::{fs, patch, tree};
use carve_languages::skip_policy;
use carve_pipeline::config::Config;
use carve_pipeline::runs::TestRuns;

pub const RUN_FILE: &str = "run.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    L1,
    L2,
    L3,
    L4,
}

impl std::str::FromStr for Feedback {
    type Err = String;
    fn from_str(s: &str) -> Result<Feedback, String> {
        match s.to_ascii_uppercase().as_str() {
            "L1" => Ok(Feedback::L1),
            "L2" => Ok(Feedback::L2),
            "L3" => Ok(Feedback::L3),
            "L4" => Ok(Feedback::L4),
            o => Err(format!("--feedback takes L1, L2, L3 or L4, not {o}")),
        }
    }
}

impl Feedback {
    pub fn name(self) -> &'static str {
        match self {
            Feedback::L1 => "L1",
            Feedback::L2 => "L2",
            Feedback::L3 => "L3",
            Feedback::L4 => "L4",
        }
    }
}

pub struct ArcRunOptions {
    pub bundle: PathBuf,
    /// The repository (a git work tree holding `final_commit`).
    pub repo: PathBuf,
    pub agent_command: String,
    /// The agent's name in results (default: the command's first word).
    pub name: Option<String>,
    pub feedback: Feedback,
    pub stage_budget: Duration,
    /// Runs go to `<out>/<chain_id>/<name>/`.
    pub out: PathBuf,
    /// carve.toml to use instead of the bundle's.
    pub config: Option<PathBuf>,
    /// How the agent is isolated ([`crate::sandbox`]).
    pub sandbox: SandboxMode,
    /// Variables of carve's environment passed on to the agent by name.
    pub agent_env: Vec<String>,
}

fn default_name(cmd: &str) -> String {
    let first = cmd.split_whitespace().next().unwrap_or("agent");
    let base = Path::new(first).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "agent".into());
    base.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect()
}

fn git(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String, Error> {
    let mut c = Command::new("git");
    c.args(args).current_dir(dir).env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir));
    for (k, v) in [
        ("GIT_AUTHOR_NAME", "carve"),
        ("GIT_AUTHOR_EMAIL", "carve@localhost"),
        ("GIT_COMMITTER_NAME", "carve"),
        ("GIT_COMMITTER_EMAIL", "carve@localhost"),
        ("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"),
        ("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
    ] {
        c.env(k, v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().map_err(|e| Error::Environment(format!("could not run git (is it installed?): {e}")))?;
    if !out.status.success() {
        return Err(Error::Environment(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The repository at `commit` into `dest`: its working tree when HEAD is that commit (so
/// installed dependencies come along), else the commit's files from `git archive`.
fn checkout(repo: &Path, commit: &str, dest: &Path, scratch: &Path) -> Result<(), Error> {
    let head = git(repo, &["rev-parse", "HEAD"], &[]).map(|s| s.trim().to_string()).map_err(|_| {
        Error::Usage(format!(
            "{} is not a git repository; pass --repo with a clone holding the chain's final commit",
            repo.display()
        ))
    })?;
    // The working tree only when it is that commit: no tracked file changed.
    let clean = git(repo, &["status", "--porcelain", "--untracked-files=no"], &[]).is_ok_and(|s| s.trim().is_empty());
    if head == commit && clean {
        return Ok(tree::shadow_copy(repo, dest, skip_policy()).map(|_| ())?);
    }
    git(repo, &["cat-file", "-e", &format!("{commit}^{{commit}}")], &[]).map_err(|_| {
        Error::Usage(format!("{} has no commit {commit} (the chain's final_commit); fetch it first", repo.display()))
    })?;
    std::fs::create_dir_all(dest).map_err(|e| Error::io("create", dest, e))?;
    std::fs::create_dir_all(scratch).map_err(|e| Error::io("create", scratch, e))?;
    let tar = scratch.join("final.tar");
    git(repo, &["archive", "--format=tar", "-o", &tar.to_string_lossy(), commit], &[])?;
    let st = Command::new("tar").arg("-xf").arg(&tar).arg("-C").arg(dest).status();
    let _ = std::fs::remove_file(&tar);
    match st {
        Ok(s) if s.success() => Ok(()),
        _ => Err(Error::Environment(format!("could not unpack {commit} of {} with tar", repo.display()))),
    }
}

struct RunDir {
    root: PathBuf,
}

impl RunDir {
    fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }
    fn private(&self) -> PathBuf {
        self.root.join("private")
    }
    fn track(&self) -> PathBuf {
        self.private().join("track.git")
    }
    fn agent_dir(&self, k: usize) -> PathBuf {
        self.root.join("agent").join(format!("stage-{k}"))
    }
    fn stage_private(&self, k: usize) -> PathBuf {
        self.private().join(format!("stage-{k}"))
    }
    /// Record the workspace's files in the private git directory; returns the commit.
    fn snapshot(&self, message: &str) -> Result<String, Error> {
        let (gd, wt) = (self.track(), self.workspace());
        let (gd, wt) = (gd.to_string_lossy().into_owned(), wt.to_string_lossy().into_owned());
        let base = ["--git-dir", gd.as_str(), "--work-tree", wt.as_str()];
        let with = |rest: &[&str]| -> Vec<String> { base.iter().chain(rest).map(|s| s.to_string()).collect() };
        let run = |args: Vec<String>| {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            git(&self.root, &refs, &[])
        };
        run(with(&["add", "-A", "."]))?;
        run(with(&["commit", "-q", "--allow-empty", "--no-verify", "-m", message]))?;
        Ok(run(with(&["rev-parse", "HEAD"]))?.trim().to_string())
    }
    fn diff(&self, from: &str, to: &str) -> Result<(String, DiffStats), Error> {
        let gd = self.track().to_string_lossy().into_owned();
        let patch = git(&self.root, &["--git-dir", &gd, "diff", "--binary", from, to], &[])?;
        let numstat = git(&self.root, &["--git-dir", &gd, "diff", "--numstat", from, to], &[])?;
        let mut stats = DiffStats::default();
        for l in numstat.lines() {
            let mut f = l.split('\t');
            stats.files += 1;
            stats.added += f.next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
            stats.deleted += f.next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        }
        Ok((patch, stats))
    }
}

/// Run (or resume) one agent on one chain; returns the results, also in `run.json`.
pub fn run(opts: &ArcRunOptions, progress: &Progress) -> Result<(ArcRun, PathBuf), Error> {
    let bundle = ChainBundle::read(&opts.bundle)?;
    let chain = &bundle.chain;
    let config = opts.config.clone().unwrap_or_else(|| bundle.file("carve.toml"));
    let runs = TestRuns::of(&Config::read(&config)?);
    let name = opts.name.clone().unwrap_or_else(|| default_name(&opts.agent_command));
    // Absolute: git runs in the repository's directory with paths under the run folder.
    let out = std::path::absolute(&opts.out).map_err(|e| Error::io("resolve", &opts.out, e))?;
    let rd = RunDir { root: out.join(&chain.chain_id).join(&name) };
    let run_file = rd.root.join(RUN_FILE);
    let mut results = open_results(opts, chain, &name, &rd, &run_file)?;
    if results.complete() {
        return Ok((results, run_file));
    }
    // S0, once: a fresh git repository with one commit; the private record of its tree.
    let s0_done = rd.workspace().join(".git").is_dir() && rd.track().is_dir();
    if !s0_done && !results.stages.is_empty() {
        return Err(Error::Usage(format!(
            "{} records finished stages but its workspace or private/track.git is gone; start over with another --out or --name",
            rd.root.display()
        )));
    }
    if !s0_done {
        progress.message(format!("{}: building S0", chain.chain_id));
        build_s0(opts, &bundle, &rd, &results, &run_file)?;
    }
    let n = chain.stages.len();
    for k in results.stages.len()..n {
        progress.set_position(k as u64);
        let stage = &chain.stages[k];
        let sp = rd.stage_private(k);
        std::fs::create_dir_all(&sp).map_err(|e| Error::io("create", &sp, e))?;
        let turn_file = sp.join("agent.json");
        let turn: AgentTurn = match std::fs::read_to_string(&turn_file).ok().and_then(|t| serde_json::from_str(&t).ok())
        {
            Some(t) => t,
            None => {
                progress.message(format!("{} stage {k}/{n}: agent", chain.chain_id));
                let t = run_agent(&bundle, opts, &rd, k, &results, &sp)?;
                fs::write_atomic(&turn_file, &carve_formats::to_pretty(&t))?;
                t
            }
        };
        progress.message(format!("{} stage {k}/{n}: gate", chain.chain_id));
        let track = rd.track().to_string_lossy().into_owned();
        let base = if k == 0 {
            root_commit(&rd)?
        } else {
            git(&rd.root, &["--git-dir", &track, "rev-parse", &format!("refs/tags/stage-{}", k - 1)], &[])?
                .trim()
                .to_string()
        };
        let commit = rd.snapshot(&format!("after stage {k}"))?;
        git(&rd.root, &["--git-dir", &track, "tag", "-f", &format!("stage-{k}"), &commit], &[])?;
        let (patch, stats) = rd.diff(&base, &commit)?;
        let diff_rel = format!("private/stage-{k}/diff.patch");
        fs::write_atomic(&rd.root.join(&diff_rel), patch.as_bytes())?;
        let gate =
            run_gate(&runs, &rd.workspace(), &bundle.file(&stage.tests_dir), &stage.f2p, &stage.p2p, &sp.join("gate"));
        if opts.feedback != Feedback::L4 && k + 1 < n {
            write_feedback(opts.feedback, &rd.agent_dir(k + 1), k, &gate)?;
        }
        results.stages.push(StageResult::new(k, turn, diff_rel, stats, gate.gate));
        fs::write_atomic(&run_file, &carve_formats::to_pretty(&results))?;
    }
    progress.set_position(n as u64);
    progress.message(format!("{}: chain gate", chain.chain_id));
    let g = run_gate(
        &runs,
        &rd.workspace(),
        &bundle.file(&chain.chain.tests_dir),
        &chain.chain.f2p,
        &chain.chain.p2p,
        &rd.private().join("chain-gate"),
    );
    results.chain_gate = Some(g.gate);
    fs::write_atomic(&run_file, &carve_formats::to_pretty(&results))?;
    Ok((results, run_file))
}

/// The results of an earlier run of the same agent in this folder (to resume), or new ones.
fn open_results(
    opts: &ArcRunOptions,
    chain: &crate::chain::ChainFile,
    name: &str,
    rd: &RunDir,
    run_file: &Path,
) -> Result<ArcRun, Error> {
    if run_file.is_file() {
        let r = crate::results::read_arc_run(run_file)?;
        if r.agent_command != opts.agent_command || r.feedback != opts.feedback.name() {
            return Err(Error::Usage(format!(
                "{} holds a run of `{}` ({}); pass another --name or --out for `{}` ({})",
                rd.root.display(),
                r.agent_command,
                r.feedback,
                opts.agent_command,
                opts.feedback.name()
            )));
        }
        Ok(r)
    } else {
        Ok(ArcRun::new(
            chain.chain_id.clone(),
            name.to_string(),
            opts.agent_command.clone(),
            opts.feedback.name().into(),
            chain.stages.len(),
            opts.stage_budget.as_secs(),
        ))
    }
}

/// S0, once: a fresh git repository with one commit as the agent's workspace, and the private
/// record of its tree (`private/track.git`, tagged `s0`).
fn build_s0(
    opts: &ArcRunOptions,
    bundle: &ChainBundle,
    rd: &RunDir,
    results: &ArcRun,
    run_file: &Path,
) -> Result<(), Error> {
    let staged = rd.root.join("workspace.partial");
    let _ = std::fs::remove_dir_all(&staged);
    checkout(&opts.repo, &bundle.chain.final_commit, &staged, &rd.private())?;
    let scratch = rd.private().join(format!("apply-{}.patch", std::process::id()));
    patch::apply_patch(&staged, &bundle.read_text("s0.patch")?, false, &scratch).map_err(|e| {
        Error::Usage(format!("s0.patch of {} does not apply: {}", bundle.dir.display(), e.git_message()))
    })?;
    git(&staged, &["init", "-q"], &[])?;
    git(&staged, &["add", "-A"], &[])?;
    git(&staged, &["commit", "-q", "--no-verify", "-m", "S0"], &[])?;
    let _ = std::fs::remove_dir_all(rd.workspace());
    let _ = std::fs::remove_dir_all(rd.track());
    std::fs::rename(&staged, rd.workspace()).map_err(|e| Error::io("move into place", &rd.workspace(), e))?;
    std::fs::create_dir_all(rd.private()).map_err(|e| Error::io("create", &rd.private(), e))?;
    git(&rd.root, &["init", "-q", "--bare", &rd.track().to_string_lossy()], &[])?;
    // What is not the project's own (caches, environments, installed dependencies, build
    // outputs S0 tracks no file in, generated files) stays out of the recorded diffs.
    let exclude = rd.track().join("info/exclude");
    let tracked = git(&rd.workspace(), &["ls-files", "-z"], &[])?;
    let tracked_top = tracked.split('\0').filter_map(|p| p.split_once('/').map(|(top, _)| top.to_string())).collect();
    fs::write_atomic(&exclude, skip_policy().ignore_patterns(&tracked_top).as_bytes())?;
    let s0 = rd.snapshot("S0")?;
    git(&rd.root, &["--git-dir", &rd.track().to_string_lossy(), "tag", "-f", "s0", &s0], &[])?;
    fs::write_atomic(run_file, &carve_formats::to_pretty(results))?;
    Ok(())
}

fn root_commit(rd: &RunDir) -> Result<String, Error> {
    let out = git(
        &rd.root,
        &["--git-dir", &rd.track().to_string_lossy(), "rev-list", "--max-parents=0", "refs/tags/s0"],
        &[],
    )?;
    Ok(out.lines().last().unwrap_or("").trim().to_string())
}

/// The agent's turn at stage `k`: spec and contract copied out, the command run in the
/// workspace with a time budget; its whole process group is killed when the turn ends, the
/// budget runs out or carve dies ([`crate::guard`]).
fn run_agent(
    bundle: &ChainBundle,
    opts: &ArcRunOptions,
    rd: &RunDir,
    k: usize,
    results: &ArcRun,
    private: &Path,
) -> Result<AgentTurn, Error> {
    let stage = &bundle.chain.stages[k];
    let dir = rd.agent_dir(k);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let spec = dir.join("spec.md");
    let contract = dir.join("contract.json");
    std::fs::copy(bundle.file(&stage.spec), &spec).map_err(|e| Error::io("copy", &bundle.file(&stage.spec), e))?;
    std::fs::copy(bundle.file(&stage.contract), &contract)
        .map_err(|e| Error::io("copy", &bundle.file(&stage.contract), e))?;
    // Attempts survive a kill: counted before the agent starts.
    let attempts_file = private.join("attempts");
    let attempts =
        std::fs::read_to_string(&attempts_file).ok().and_then(|s| s.trim().parse::<u32>().ok()).unwrap_or(0) + 1;
    fs::write_atomic(&attempts_file, attempts.to_string().as_bytes())?;
    let ws = rd.workspace();
    // Appended: a resumed turn keeps the interrupted one's output before its own.
    let log = |name: &str| {
        let p = dir.join(name);
        std::fs::OpenOptions::new().create(true).append(true).open(&p).map_err(|e| Error::io("open", &p, e))
    };
    let (stdout, stderr) = (log("stdout")?, log("stderr")?);
    let feedback = dir.join("feedback.md");
    let sandbox = Sandbox::new(
        opts.sandbox,
        &ws,
        &rd.root.join("agent"),
        &[bundle.dir.clone(), opts.repo.clone(), rd.private(), rd.root.join(RUN_FILE)],
        &opts.agent_env,
    )?;
    let mut vars: Vec<(String, std::ffi::OsString)> = vec![
        ("CARVE_SPEC".into(), spec.clone().into()),
        ("CARVE_CONTRACT".into(), contract.into()),
        ("CARVE_WORKSPACE".into(), ws.clone().into()),
        ("CARVE_STAGE".into(), k.to_string().into()),
        ("CARVE_STAGES".into(), bundle.chain.stages.len().to_string().into()),
        ("CARVE_STAGE_TITLE".into(), stage.title.clone().into()),
        ("CARVE_STAGE_BUDGET".into(), opts.stage_budget.as_secs().to_string().into()),
        ("CARVE_FEEDBACK_LEVEL".into(), results.feedback.clone().into()),
    ];
    if feedback.is_file() {
        vars.push(("CARVE_FEEDBACK".into(), feedback.into()));
    }
    let args: Vec<std::ffi::OsString> = vec![
        "-c".into(),
        format!("{} \"$@\"", opts.agent_command).into(),
        "carve-agent".into(),
        spec.into(),
        ws.clone().into(),
    ];
    let mut cmd = sandbox.command("sh", &args, &vars);
    cmd.current_dir(&ws).stdin(Stdio::null()).stdout(stdout).stderr(stderr);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    // Started first, so the agent never runs unguarded for longer than a pipe write.
    let mut guard = GroupGuard::start()?;
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Environment(format!("could not start the agent `{}`: {e}", opts.agent_command)))?;
    guard.watch(child.id())?;
    let status = wait_timeout::ChildExt::wait_timeout(&mut child, opts.stage_budget)
        .map_err(|e| Error::Environment(format!("waiting for the agent failed: {e}")))?;
    let (exit_code, timed_out) = match status {
        Some(s) => (s.code(), false),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            (None, true)
        }
    };
    // The budget ran out, or the agent returned: what is left of its process group goes
    // before the gate looks at the workspace.
    guard.end();
    Ok(AgentTurn::new(exit_code, timed_out, start.elapsed().as_secs_f64(), attempts, sandbox.mode.to_string()))
}

pub struct GateRun {
    pub gate: Gate,
    pub messages: std::collections::BTreeMap<String, String>,
    pub output_tail: String,
}

/// A gate: copy of the workspace (without its `.git`), the hidden files overlaid, the
/// listed tests run; the copy is removed afterwards.
pub fn run_gate(
    runs: &TestRuns,
    workspace: &Path,
    overlay: &Path,
    f2p: &[String],
    p2p: &[String],
    work: &Path,
) -> GateRun {
    let copy = work.join("tree");
    let prepared =
        tree::shadow_copy(workspace, &copy, skip_policy()).and_then(|_| tree::overlay(overlay, &copy, skip_policy()));
    let prepared = prepared.map_err(|e| e.to_string());
    let tests: Vec<String> = f2p.iter().chain(p2p).cloned().collect();
    let out = match prepared.and_then(|_| test_run::run(runs, &copy, &tests, &work.join("runner"))) {
        Ok(run) => GateRun {
            gate: Gate::from_statuses(run.of(f2p), run.of(p2p), None),
            messages: run.messages,
            output_tail: run.output_tail,
        },
        Err(e) => {
            let missing = |ids: &[String]| ids.iter().map(|t| (t.clone(), "error".to_string())).collect();
            GateRun {
                gate: Gate::from_statuses(missing(f2p), missing(p2p), Some(e)),
                messages: Default::default(),
                output_tail: String::new(),
            }
        }
    };
    let _ = std::fs::remove_dir_all(work);
    out
}

/// What the user tells the agent about stage `k` before the next one (L1–L3).
fn write_feedback(level: Feedback, dir: &Path, k: usize, g: &GateRun) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let mut s = Vec::new();
    let verdict = if g.gate.passed { "passed" } else { "did not pass" };
    let _ = writeln!(s, "# Feedback on stage {k}\n\nStage {k} {verdict} its acceptance check.");
    if level != Feedback::L3 && !g.gate.passed {
        let failing: Vec<(&String, &String)> =
            g.gate.f2p.iter().chain(&g.gate.p2p).filter(|(_, st)| *st != "passed").collect();
        let _ = writeln!(s, "\nThese behaviours fail:\n");
        for (t, st) in &failing {
            let _ = writeln!(s, "- `{t}` ({st})");
            if level == Feedback::L1 {
                if let Some(m) = g.messages.get(*t) {
                    let _ = writeln!(s, "  ```\n  {}\n  ```", m.replace('\n', "\n  "));
                }
            }
        }
        if level == Feedback::L1 {
            if let Some(e) = &g.gate.error {
                let _ = writeln!(s, "\nThe tests could not run: {e}");
            }
            if !g.output_tail.trim().is_empty() {
                let _ = writeln!(s, "\nEnd of the test output:\n\n```\n{}\n```", g.output_tail.trim_end());
            }
        }
    }
    Ok(fs::write_atomic(&dir.join("feedback.md"), &s)?)
}
