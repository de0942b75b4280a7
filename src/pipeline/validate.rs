//! Validation: a task is kept only if every state behaves. Baseline: every F2P and P2P
//! test passes and is not flaky. Masked: P2P pass; F2P (added back by the test patch) fail,
//! error or disappear. Restored (gold + test patch applied to the masked state with
//! `git apply`): everything passes again. Level 2: the reference `agent_code` passes the
//! rewritten F2P tests, an empty one fails them. Per-test statuses go to `validation.json`.

use anyhow::{Context, Result, bail};
use carve_languages::runner::TestStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use super::baseline::{Baseline, RunExtras, run_tests};
use super::{Session, TestId};
use crate::workspace;

pub const VALIDATION_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StateResult {
    pub state: String,
    /// What this state must show.
    pub expect: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    pub statuses: BTreeMap<TestId, TestStatus>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Validation {
    pub version: u32,
    pub valid: bool,
    pub f2p_pass_threshold: f64,
    pub states: Vec<StateResult>,
}

impl Validation {
    pub fn new(threshold: f64) -> Validation {
        Validation { version: VALIDATION_VERSION, valid: true, f2p_pass_threshold: threshold, states: Vec::new() }
    }

    pub fn push(&mut self, s: StateResult) {
        self.valid &= s.ok;
        self.states.push(s);
    }

    /// The first problem, for reports of rejected candidates.
    pub fn reason(&self) -> Option<String> {
        self.states
            .iter()
            .find(|s| !s.ok)
            .map(|s| format!("{}: {}", s.state, s.problems.first().cloned().unwrap_or_else(|| s.expect.clone())))
    }
}

/// Apply a git-style patch inside `dir` with `git apply` (not discovering any enclosing
/// repository).
/// A patch named `-NAME` is applied in reverse (`git apply -R`).
pub fn apply_patch(dir: &Path, patch: &str, what: &str) -> Result<()> {
    if patch.trim().is_empty() {
        return Ok(());
    }
    let (reverse, what) = match what.strip_prefix('-') {
        Some(w) => (true, w),
        None => (false, what),
    };
    let file = dir.with_extension(format!("{what}.patch"));
    std::fs::write(&file, patch)?;
    let ceiling = dir.parent().unwrap_or(dir);
    let out = Command::new("git")
        .arg("apply")
        .arg("--whitespace=nowarn")
        .args(reverse.then_some("-R"))
        .arg(&file)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
        .context("failed to run `git apply` (is git installed?)")?;
    let _ = std::fs::remove_file(&file);
    if !out.status.success() {
        let how = if reverse { " in reverse" } else { "" };
        bail!("{what}.patch does not apply{how} in {}: {}", dir.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

pub fn baseline_state(baseline: &Baseline, f2p: &BTreeSet<TestId>, p2p: &BTreeSet<TestId>) -> StateResult {
    let mut problems = Vec::new();
    let mut statuses = BTreeMap::new();
    for t in f2p.iter().chain(p2p) {
        match baseline.tests.get(t) {
            Some(e) => {
                statuses.insert(t.clone(), e.status);
                if e.flaky {
                    problems.push(format!("{t} is flaky"));
                } else if e.status != TestStatus::Passed {
                    problems.push(format!("{t} is {:?} at baseline", e.status));
                }
            }
            None => {
                statuses.insert(t.clone(), TestStatus::Missing);
                problems.push(format!("{t} was not run at baseline"));
            }
        }
    }
    StateResult {
        state: "baseline".into(),
        expect: "every F2P and P2P test passes, none is flaky".into(),
        ok: problems.is_empty(),
        problems,
        statuses,
    }
}

/// Run `tests` in `tree` and judge them: `must_pass` or must fail (at most `threshold` of
/// them may pass).
pub fn run_state(
    session: &Session,
    state: &str,
    tree: &Path,
    tests: &BTreeSet<TestId>,
    must_pass: bool,
    threshold: f64,
    scratch: &Path,
) -> Result<StateResult> {
    session.progress.step(format!("validate: {state}"));
    let result = run_tests(session, tree, Some(tests.iter().cloned().collect()), &RunExtras::default(), scratch)?;
    let mut statuses = BTreeMap::new();
    let mut problems = Vec::new();
    for t in tests {
        let status = result.statuses.get(t).map(|o| o.status).unwrap_or(TestStatus::Missing);
        statuses.insert(t.clone(), status);
        if must_pass && status != TestStatus::Passed {
            let msg = result.statuses.get(t).and_then(|o| o.message.clone()).unwrap_or_default();
            problems.push(format!("{t} is {status:?}, expected passed {msg}").trim_end().to_string());
        }
    }
    let expect;
    if must_pass {
        expect = "every test passes".to_string();
    } else {
        expect = format!("F2P tests fail, error or disappear (at most {:.0}% may pass)", threshold * 100.0);
        let passed: Vec<&TestId> = statuses.iter().filter(|(_, s)| **s == TestStatus::Passed).map(|(t, _)| t).collect();
        let allowed = (threshold * tests.len() as f64).floor() as usize;
        if passed.len() > allowed {
            problems.push(format!(
                "{} of {} F2P tests still pass (first: {}); the masked code does not remove what they test",
                passed.len(),
                tests.len(),
                passed[0]
            ));
        }
    }
    Ok(StateResult { state: state.into(), expect, ok: problems.is_empty(), problems, statuses })
}

/// A fresh copy of `src` at `dest` with patches applied in order.
pub fn prepare_state(src: &Path, dest: &Path, patches: &[(&str, &str)]) -> Result<()> {
    workspace::shadow_copy(src, dest)?;
    for (name, patch) in patches {
        apply_patch(dest, patch, name)?;
    }
    Ok(())
}
