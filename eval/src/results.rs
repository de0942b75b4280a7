//! The run-results formats (docs/formats.md, "Evaluation results"): one JSON per run.
//!
//! - [`ArcRun`] (`kind = "arc-run"`): one agent through one chain under L4 (or L1–L3
//!   feedback) — per stage the agent's exit, time and diff, and the hidden stage gate; then
//!   the chain gate. Written by `carve arc run`, read by `carve arc report`.
//! - [`GradeRun`] (`kind = "grade"`): solutions graded on L1/L2 task bundles — per instance
//!   `resolved`, `passed_rate` and per-test statuses. Written by `carve grade`, read by
//!   `carve report`.
//!
//! Readers refuse a version they do not know.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use crate::Error;

pub const ARC_RUN_VERSION: u32 = 1;
pub const GRADE_VERSION: u32 = 1;

/// A test's status as the runner reported it (`passed`, `failed`, `error`, `skipped`,
/// `missing`, `timeout`).
pub type Statuses = BTreeMap<String, String>;

/// One gate: the listed F2P and P2P tests run on a copy of the workspace plus an overlay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub f2p: Statuses,
    pub p2p: Statuses,
    /// Every F2P test passed.
    pub f2p_passed: bool,
    /// Every P2P test passed.
    pub p2p_passed: bool,
    /// Both.
    pub passed: bool,
    /// Why the tests could not run at all (then every test counts as not passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Gate {
    pub fn from_statuses(f2p: Statuses, p2p: Statuses, error: Option<String>) -> Gate {
        let all = |s: &Statuses| error.is_none() && s.values().all(|v| v == "passed");
        let (f, p) = (all(&f2p), all(&p2p));
        Gate { f2p_passed: f, p2p_passed: p, passed: f && p, f2p, p2p, error }
    }
}

/// What the agent command did in one stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTurn {
    /// Exit code; `None` when it was killed (time budget) or died of a signal.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub seconds: f64,
    /// How many times this stage's agent was started (more than 1 after a resume).
    pub attempts: u32,
    /// How the agent was isolated: `namespace` or `none` (see `carve_eval::sandbox`).
    #[serde(default)]
    pub sandbox: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffStats {
    pub files: usize,
    pub added: usize,
    pub deleted: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageResult {
    pub index: usize,
    pub agent: AgentTurn,
    /// The workspace diff of this stage, in the run folder (relative to it).
    pub diff: String,
    pub diff_stats: DiffStats,
    pub gate: Gate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArcRun {
    pub version: u32,
    /// Always `"arc-run"`.
    pub kind: String,
    pub chain_id: String,
    /// The agent's name (`--name`, else from the command): the unit metrics are grouped by.
    pub agent: String,
    pub agent_command: String,
    /// `L4` (no feedback), `L3` (passed or not), `L2` (+ failing tests), `L1` (+ their output).
    pub feedback: String,
    /// Number of stages of the chain.
    pub stage_count: usize,
    /// Stages finished (agent returned and gate ran), in order.
    pub stages: Vec<StageResult>,
    /// The chain gate on the final workspace; `None` until every stage is finished.
    pub chain_gate: Option<Gate>,
    /// Seconds per stage given to the agent.
    pub stage_budget_seconds: u64,
}

impl ArcRun {
    pub fn complete(&self) -> bool {
        self.stages.len() == self.stage_count && self.chain_gate.is_some()
    }
}

/// One graded instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradedInstance {
    pub instance_id: String,
    pub level: u8,
    /// Whose solution (SWE-bench predictions' `model_name_or_path`, or `--model`).
    pub model: String,
    /// Every F2P and every P2P test passed.
    pub resolved: bool,
    /// Share of F2P tests passing (0 when the patch was refused or did not apply).
    pub passed_rate: f64,
    /// The patch applied with `git apply`.
    pub applied: bool,
    /// Why it was refused (touches hidden test files) or did not apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_problem: Option<String>,
    /// Why the tests could not run (the environment, not the solution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub f2p: Statuses,
    pub p2p: Statuses,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeRun {
    pub version: u32,
    /// Always `"grade"`.
    pub kind: String,
    pub instances: Vec<GradedInstance>,
}

fn read_json(path: &Path) -> Result<serde_json::Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Format { path: path.to_path_buf(), detail: e.to_string() })
}

fn check_kind(path: &Path, v: &serde_json::Value, kind: &str, version: u32) -> Result<(), Error> {
    let found = v.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    if found != kind {
        return Err(Error::Format {
            path: path.to_path_buf(),
            detail: format!("expected a `{kind}` results file, found kind `{found}`"),
        });
    }
    let ver = v.get("version").and_then(|k| k.as_u64()).unwrap_or(0);
    if ver != u64::from(version) {
        return Err(Error::Format {
            path: path.to_path_buf(),
            detail: format!("results version {ver}; this carve reads version {version}"),
        });
    }
    Ok(())
}

pub fn read_arc_run(path: &Path) -> Result<ArcRun, Error> {
    let v = read_json(path)?;
    check_kind(path, &v, "arc-run", ARC_RUN_VERSION)?;
    serde_json::from_value(v).map_err(|e| Error::Format { path: path.to_path_buf(), detail: e.to_string() })
}

pub fn read_grade_run(path: &Path) -> Result<GradeRun, Error> {
    let v = read_json(path)?;
    check_kind(path, &v, "grade", GRADE_VERSION)?;
    serde_json::from_value(v).map_err(|e| Error::Format { path: path.to_path_buf(), detail: e.to_string() })
}

/// Results files named on the command line: files as given, directories searched for
/// `name` (`run.json`, `grade.json`) recursively, sorted.
pub fn collect_files(args: &[std::path::PathBuf], name: &str) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut out = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut stack = vec![a.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).map_err(|e| Error::io("list", &d, e))? {
                    let p = e.map_err(|e| Error::io("list", &d, e))?.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.file_name().is_some_and(|n| n == name) {
                        out.push(p);
                    }
                }
            }
        } else if a.is_file() {
            out.push(a.clone());
        } else {
            return Err(Error::io("read", a, std::io::Error::from(std::io::ErrorKind::NotFound)));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}
