//! The run-results files (`docs/formats.md`, "Evaluation results"): one JSON per run.
//!
//! - [`ArcRun`] (`run.json`, `kind = "arc-run"`): one agent through one chain under L4 (or
//!   L1–L3 feedback) — per stage the agent's exit, time and diff, and the hidden stage gate;
//!   then the chain gate. Written by `carve arc run`, read by `carve arc report`.
//! - [`GradeRun`] (`grade.json`, `kind = "grade"`): solutions graded on L1/L2 task bundles —
//!   per instance `resolved`, `passed_rate` and per-test statuses. Written by `carve grade`,
//!   read by `carve report`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::{Format, Version};

/// Version of `run.json`.
pub const ARC_RUN_VERSION: u32 = 1;
/// Version of `grade.json`.
pub const GRADE_VERSION: u32 = 1;

/// A test's status as the runner reported it (`passed`, `failed`, `error`, `skipped`,
/// `missing`, `timeout`), by test id. Kept as text: anything but `passed` counts as not
/// passing, whatever a runner reported.
pub type Statuses = BTreeMap<String, String>;

/// One gate: the listed F2P and P2P tests run on a copy of the workspace plus an overlay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
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
    /// The gate of these statuses: passed where every test passed and nothing went wrong.
    pub fn from_statuses(f2p: Statuses, p2p: Statuses, error: Option<String>) -> Gate {
        let all = |s: &Statuses| error.is_none() && s.values().all(|v| v == "passed");
        let (f, p) = (all(&f2p), all(&p2p));
        Gate { f2p_passed: f, p2p_passed: p, passed: f && p, f2p, p2p, error }
    }
}

/// What the agent command did in one stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct AgentTurn {
    /// Exit code; `None` when it was killed (time budget) or died of a signal.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub seconds: f64,
    /// How many times this stage's agent was started (more than 1 after a resume).
    pub attempts: u32,
    /// How the agent was isolated: `namespace` or `none`.
    #[serde(default)]
    pub sandbox: String,
}

impl AgentTurn {
    pub fn new(exit_code: Option<i32>, timed_out: bool, seconds: f64, attempts: u32, sandbox: String) -> AgentTurn {
        AgentTurn { exit_code, timed_out, seconds, attempts, sandbox }
    }
}

/// Size of a stage's workspace diff.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct DiffStats {
    pub files: usize,
    pub added: usize,
    pub deleted: usize,
}

/// One finished stage of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StageResult {
    pub index: usize,
    pub agent: AgentTurn,
    /// The workspace diff of this stage, in the run folder (relative to it).
    pub diff: String,
    pub diff_stats: DiffStats,
    pub gate: Gate,
}

impl StageResult {
    pub fn new(index: usize, agent: AgentTurn, diff: String, diff_stats: DiffStats, gate: Gate) -> StageResult {
        StageResult { index, agent, diff, diff_stats, gate }
    }
}

/// `run.json`: one agent through one chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
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
    /// A run with no stage finished yet.
    pub fn new(
        chain_id: String,
        agent: String,
        agent_command: String,
        feedback: String,
        stage_count: usize,
        stage_budget_seconds: u64,
    ) -> ArcRun {
        ArcRun {
            version: ARC_RUN_VERSION,
            kind: "arc-run".into(),
            chain_id,
            agent,
            agent_command,
            feedback,
            stage_count,
            stages: Vec::new(),
            chain_gate: None,
            stage_budget_seconds,
        }
    }

    /// Every stage finished and the chain gate ran.
    pub fn complete(&self) -> bool {
        self.stages.len() == self.stage_count && self.chain_gate.is_some()
    }
}

impl Format for ArcRun {
    const FILE: &'static str = "run.json";
    const VERSION: Version = Version::Number(ARC_RUN_VERSION);
    const KIND: Option<&'static str> = Some("arc-run");
}

/// One graded instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
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

impl GradedInstance {
    /// An instance not graded yet: unresolved, not applied, every test `missing`.
    pub fn new(instance_id: String, level: u8, model: String, f2p: &[String], p2p: &[String]) -> GradedInstance {
        let missing = |ids: &[String]| ids.iter().map(|t| (t.clone(), "missing".to_string())).collect();
        GradedInstance {
            instance_id,
            level,
            model,
            resolved: false,
            passed_rate: 0.0,
            applied: false,
            patch_problem: None,
            error: None,
            f2p: missing(f2p),
            p2p: missing(p2p),
        }
    }
}

/// `grade.json`: the graded instances of one `carve grade`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct GradeRun {
    pub version: u32,
    /// Always `"grade"`.
    pub kind: String,
    pub instances: Vec<GradedInstance>,
}

impl GradeRun {
    pub fn new(instances: Vec<GradedInstance>) -> GradeRun {
        GradeRun { version: GRADE_VERSION, kind: "grade".into(), instances }
    }
}

impl Format for GradeRun {
    const FILE: &'static str = "grade.json";
    const VERSION: Version = Version::Number(GRADE_VERSION);
    const KIND: Option<&'static str> = Some("grade");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_gate_passes_only_when_every_test_passed_and_nothing_went_wrong() {
        let s = |v: &str| Statuses::from([("t".to_string(), v.to_string())]);
        assert!(Gate::from_statuses(s("passed"), s("passed"), None).passed);
        let g = Gate::from_statuses(s("passed"), s("failed"), None);
        assert!(g.f2p_passed && !g.p2p_passed && !g.passed);
        assert!(!Gate::from_statuses(s("passed"), s("passed"), Some("no runner".into())).passed);
    }

    #[test]
    fn a_results_file_of_another_kind_or_version_is_refused_by_name() {
        let path = Path::new("out/run.json");
        let e = crate::from_str::<ArcRun>(r#"{"version": 1, "kind": "grade", "instances": []}"#, path).unwrap_err();
        assert_eq!(e.to_string(), "out/run.json is of kind `grade`, not `arc-run`");
        let e = crate::from_str::<GradeRun>(r#"{"version": 2, "kind": "grade", "instances": []}"#, path).unwrap_err();
        assert!(e.to_string().starts_with("out/run.json is grade.json version 2; this carve reads version 1"), "{e}");
    }
}
