//! `--check`: every exported task's own evaluation script, run on the masked repository with the
//! environment carve owns (no image): with the gold patch it must pass, with an empty patch it
//! must fail. The masked repository is the repository at `base_commit` (checked out again from
//! the manifest's `url`) with the export's mask applied, a git repository of one commit, as
//! the exported Dockerfile makes `/testbed`; the scripts take `CARVE_TESTBED` (and Harbor's
//! `CARVE_TESTS`, `CARVE_SOLUTION`, `CARVE_LOGS`) in place of the container's folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{ExportFormat, Task};
use crate::Result;
use crate::error::{Context, bail};
use crate::layout::Layout;

/// What the checks of one task found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CheckResult {
    pub instance_id: String,
    /// The evaluation passed with the gold patch.
    pub gold_passes: bool,
    /// The evaluation failed with an empty patch.
    pub empty_fails: bool,
    /// Why a check could not run (no checkout, no environment), or empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl CheckResult {
    pub fn ok(&self) -> bool {
        self.gold_passes && self.empty_fails
    }
}

/// Where the repositories come from.
pub struct CheckContext<'a> {
    pub layout: &'a Layout,
    pub base: PathBuf,
    pub mirrors: Vec<PathBuf>,
}

/// Check every task of `written` in the export at `to`.
pub fn check(
    ctx: &CheckContext<'_>,
    format: ExportFormat,
    to: &Path,
    tasks: &[Task],
    written: &[String],
) -> Result<Vec<CheckResult>> {
    let scratch = tempfile::Builder::new().prefix("carve-export-check-").tempdir()?;
    let mut checkouts: BTreeMap<(String, String), PathBuf> = BTreeMap::new();
    let mut out = Vec::new();
    for t in tasks.iter().filter(|t| written.iter().any(|w| w == t.id())) {
        let key = (t.entry.name.clone(), t.entry.commit.clone());
        if !checkouts.contains_key(&key) {
            let dest = scratch.path().join(format!("checkout-{}", checkouts.len()));
            let origin = crate::source::resolve(&t.entry.url, &t.entry.name, &ctx.base, &ctx.mirrors)?;
            crate::source::checkout(&origin, &t.entry.url, &t.entry.commit, &dest)
                .with_context(|| format!("failed to check out {} for the checks of {}", t.entry.name, t.id()))?;
            checkouts.insert(key.clone(), dest);
        }
        let checkout = &checkouts[&key];
        let result = match check_task(format, to, t, checkout, scratch.path()) {
            Ok((gold, empty)) => {
                CheckResult { instance_id: t.id().into(), gold_passes: gold, empty_fails: !empty, note: String::new() }
            }
            Err(e) => {
                CheckResult { instance_id: t.id().into(), gold_passes: false, empty_fails: false, note: e.chain() }
            }
        };
        out.push(result);
    }
    Ok(out)
}

/// Whether the evaluation passes with the gold patch, and with an empty one.
fn check_task(format: ExportFormat, to: &Path, t: &Task, checkout: &Path, scratch: &Path) -> Result<(bool, bool)> {
    let (env_dir, record) = super::task::environment(&t.instance).map_err(crate::Error::msg)?;
    let env = carve_pipeline::env::store::ActiveEnv { dir: env_dir, record };
    let mut runs = [false, false];
    for (n, gold) in [true, false].into_iter().enumerate() {
        let testbed = scratch.join(format!("testbed-{n}"));
        let _ = std::fs::remove_dir_all(&testbed);
        runs[n] = match format {
            ExportFormat::Swebench => {
                masked_testbed(checkout, &testbed, &t.instance.carve.mask_patch, &[])?;
                env.prepare(&testbed)?;
                if gold {
                    apply(&testbed, &t.instance.patch, false)?;
                }
                run(&testbed, &env, &to.join("tasks").join(t.id()).join("eval.sh"), &[])?
            }
            ExportFormat::Harbor => harbor(to, t, checkout, &testbed, &env, gold, scratch)?,
            ExportFormat::Featurebench => featurebench(t, checkout, &testbed, &env, gold)?,
        };
        let _ = std::fs::remove_dir_all(&testbed);
    }
    Ok((runs[0], runs[1]))
}

fn harbor(
    to: &Path,
    t: &Task,
    checkout: &Path,
    testbed: &Path,
    env: &carve_pipeline::env::store::ActiveEnv,
    gold: bool,
    scratch: &Path,
) -> Result<bool> {
    let task = to.join(t.id());
    masked_testbed(checkout, testbed, &t.instance.carve.mask_patch, &[])?;
    env.prepare(testbed)?;
    if gold && !run(testbed, env, &task.join("solution/solve.sh"), &[("CARVE_SOLUTION", &task.join("solution"))])? {
        bail!("{}: solution/solve.sh failed", t.id());
    }
    let logs = scratch.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    run(testbed, env, &task.join("tests/test.sh"), &[("CARVE_TESTS", &task.join("tests")), ("CARVE_LOGS", &logs)])?;
    let reward = std::fs::read_to_string(logs.join("reward.txt"))
        .with_context(|| format!("{}: tests/test.sh wrote no reward.txt", t.id()))?;
    Ok(reward.trim() == "1")
}

/// FeatureBench's Level 1 evaluation as its harness runs it: the mask patch and the F2P file
/// removed, the prediction applied, the F2P file restored by `test_patch` in reverse, then
/// `test_cmd FILE` for the F2P file and each P2P file.
fn featurebench(
    t: &Task,
    checkout: &Path,
    testbed: &Path,
    env: &carve_pipeline::env::store::ActiveEnv,
    gold: bool,
) -> Result<bool> {
    let c = super::featurebench::case(t).map_err(crate::Error::msg)?;
    masked_testbed(checkout, testbed, &c.patch, std::slice::from_ref(&c.f2p))?;
    env.prepare(testbed)?;
    if gold {
        apply(testbed, &t.instance.patch, false)?;
    }
    let _ = std::fs::remove_file(testbed.join(&c.f2p));
    apply(testbed, &c.test_patch, true)?;
    let script = testbed.join(".carve-fb-eval.sh");
    let mut s = String::from("#!/bin/bash\nset -u\nrc=0\n");
    for file in std::iter::once(&c.f2p).chain(&c.p2p) {
        s.push_str(&format!("{} {} || rc=1\n", t.eval_base, carve_languages::env::shell::quote(file)));
    }
    s.push_str("exit $rc\n");
    std::fs::write(&script, s)?;
    let ok = run(testbed, env, &script, &[])?;
    Ok(ok)
}

/// `testbed`: a copy of `checkout` with `mask` applied and `remove` deleted, committed as one
/// commit of a fresh git repository.
fn masked_testbed(checkout: &Path, testbed: &Path, mask: &str, remove: &[String]) -> Result<()> {
    sh(Command::new("cp").arg("-a").arg(checkout).arg(testbed), "copy the checkout")?;
    std::fs::remove_dir_all(testbed.join(".git")).ok();
    apply(testbed, mask, false)?;
    for f in remove {
        let _ = std::fs::remove_file(testbed.join(f));
    }
    sh(git(testbed).args(["init", "-q"]), "git init")?;
    sh(git(testbed).args(["add", "-A"]), "git add")?;
    sh(
        git(testbed).args([
            "-c",
            "user.name=carve",
            "-c",
            "user.email=carve@localhost",
            "commit",
            "-q",
            "-m",
            "masked",
        ]),
        "git commit",
    )
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir);
    c
}

fn apply(dir: &Path, patch: &str, reverse: bool) -> Result<()> {
    if patch.is_empty() {
        return Ok(());
    }
    let file = dir.join(".carve-check.patch");
    std::fs::write(&file, patch)?;
    let mut c = git(dir);
    c.args(["apply", "--whitespace=nowarn"]);
    if reverse {
        c.arg("--reverse");
    }
    let r = sh(c.arg(&file), "git apply");
    let _ = std::fs::remove_file(&file);
    r
}

fn sh(c: &mut Command, what: &str) -> Result<()> {
    let o = c.output().with_context(|| format!("failed to run {what}"))?;
    if !o.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(())
}

/// Run `script` with bash in `testbed` with the environment's variables; whether it exited 0.
fn run(
    testbed: &Path,
    env: &carve_pipeline::env::store::ActiveEnv,
    script: &Path,
    extra: &[(&str, &Path)],
) -> Result<bool> {
    let mut c = Command::new("bash");
    c.arg(script).current_dir(testbed).envs(env.vars()).env("CARVE_TESTBED", testbed);
    for (k, v) in extra {
        c.env(k, v);
    }
    let o = c.output().with_context(|| format!("failed to run {}", script.display()))?;
    Ok(o.status.success())
}
