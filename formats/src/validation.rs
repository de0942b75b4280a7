//! A task's validation (`validation.json` of a task bundle; `docs/formats.md`, "Validation"):
//! every state the task was checked in, with per-test statuses, and the leakage check of the
//! agent's workspace.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::{Format, TestStatus, Version};

/// Version of a task's `validation.json`.
pub const VERSION: u32 = 1;

/// `validation.json` of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Validation {
    pub version: u32,
    /// Every state is `ok` and the leakage check passed.
    pub valid: bool,
    /// Share of the F2P tests that may still pass where they must fail.
    pub f2p_pass_threshold: f64,
    pub states: Vec<StateResult>,
    /// The agent's workspace (the masked state as one fresh commit) and its leakage check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<AgentWorkspace>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leakage: Option<LeakageCheck>,
    /// With `--protect sampled:N`: tests outside the protected files that fail on the masked
    /// state. They are not P2P tests; a harness should not run them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_tests: Vec<String>,
}

impl Validation {
    /// A valid validation with no state yet.
    pub fn new(f2p_pass_threshold: f64) -> Validation {
        Validation {
            version: VERSION,
            valid: true,
            f2p_pass_threshold,
            states: Vec::new(),
            workspace: None,
            leakage: None,
            broken_tests: Vec::new(),
        }
    }

    /// Record the leakage check of the workspace; a failing one invalidates the task.
    pub fn set_leakage(&mut self, ws: AgentWorkspace, check: LeakageCheck) {
        self.valid &= check.ok;
        self.workspace = Some(ws);
        self.leakage = Some(check);
    }

    /// Add a state; one that is not `ok` invalidates the task.
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
            .or_else(|| {
                let l = self.leakage.as_ref().filter(|l| !l.ok)?;
                Some(format!("leakage: {}", l.problems.join("; ")))
            })
    }
}

impl Format for Validation {
    const FILE: &'static str = "validation.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// One state of a task and what its tests did there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StateResult {
    /// `baseline`, `masked`, `masked+tests`, `restored`, `level2-reference`, `level2-empty`.
    pub state: String,
    /// What this state must show.
    pub expect: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    pub statuses: BTreeMap<String, TestStatus>,
    /// A state that must be the original tree again: the digest of its tree as patched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_digest: Option<String>,
    /// Set when the state was not run: why its statuses are the baseline's (its tree is
    /// byte-identical to the original, `tree_digest` is the proof).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statuses_from: Option<String>,
    /// The runner's message of each test that had to pass and did not.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub messages: BTreeMap<String, String>,
}

impl StateResult {
    pub fn new(
        state: String,
        expect: String,
        ok: bool,
        problems: Vec<String>,
        statuses: BTreeMap<String, TestStatus>,
    ) -> StateResult {
        StateResult {
            state,
            expect,
            ok,
            problems,
            statuses,
            tree_digest: None,
            statuses_from: None,
            messages: BTreeMap::new(),
        }
    }
}

/// The agent's workspace as written: the commit, its tree and the files it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct AgentWorkspace {
    pub commit: String,
    /// `git write-tree` of the one commit: equal trees, equal workspaces.
    pub tree: String,
    /// Files committed (installed dependencies excluded).
    pub files: usize,
    /// Paths of the masked state left out, sorted (folders as `dir/`).
    pub left_out: Vec<String>,
}

impl AgentWorkspace {
    pub fn new(commit: String, tree: String, files: usize, left_out: Vec<String>) -> AgentWorkspace {
        AgentWorkspace { commit, tree, files, left_out }
    }
}

/// One workspace file's lines that repeat gold code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct GoldCopy {
    pub file: String,
    /// First and last line, 1-based, inclusive.
    pub lines: (usize, usize),
    /// The gold patch's file whose added code the lines repeat.
    pub gold_file: String,
}

impl GoldCopy {
    pub fn new(file: String, lines: (usize, usize), gold_file: String) -> GoldCopy {
        GoldCopy { file, lines, gold_file }
    }
}

/// How much of one piece of the gold code (an extracted top definition, or the lines of one
/// `gold.patch` hunk outside any) the workspace file that repeats most of it repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct GoldSimilarity {
    /// The gold patch's file the piece is in.
    pub gold_file: String,
    /// The extracted definition (node id) the piece is, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    /// The piece's compared lines (normalized, non-trivial, not shown by the contract).
    pub lines: usize,
    /// The workspace file that repeats most of them.
    pub file: String,
    /// How many of the piece's compared lines that file repeats (in windows of equal lines).
    pub copied: usize,
    /// `copied / lines` in percent, rounded down.
    pub percent: usize,
    /// `file` is source code of the repository (not a test, doc or other file), where
    /// sibling definitions live: a repeat there leaks only a piece of some size.
    #[serde(default)]
    pub source: bool,
    /// Lines of the piece that the repository's source code repeats in two or more places
    /// (an idiom of the project: arrow's `cls(dt.year, dt.month, …)` ending eight
    /// constructors), left out of `lines` and `copied`: they are context, not the answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idiom_lines: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl GoldSimilarity {
    pub fn new(gold_file: String, definition: Option<String>, lines: usize, file: String, copied: usize) -> Self {
        let percent = (copied * 100).checked_div(lines).unwrap_or(0);
        GoldSimilarity { gold_file, definition, lines, file, copied, percent, source: false, idiom_lines: 0 }
    }
}

/// The leakage check of the agent's workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct LeakageCheck {
    pub ok: bool,
    /// How the check compares, in words.
    pub rule: String,
    pub files_checked: usize,
    pub gold_windows: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_copies: Vec<GoldCopy>,
    /// Every piece of the gold code some workspace file repeats part of, with how much
    /// (most first): the figure the leak threshold is judged on, recorded whether or not it
    /// leaks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub similarity: Vec<GoldSimilarity>,
    /// Identifiers the F2P tests use that the workspace lacks.
    pub needed_identifiers: Vec<String>,
    /// Of those, the ones the contract does not name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unnamed_identifiers: Vec<String>,
    /// The workspace's history has exactly one commit.
    pub single_commit: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl LeakageCheck {
    /// A check that found nothing yet.
    pub fn new(rule: String, files_checked: usize, gold_windows: usize, single_commit: bool) -> LeakageCheck {
        LeakageCheck {
            ok: true,
            rule,
            files_checked,
            gold_windows,
            gold_copies: Vec::new(),
            similarity: Vec::new(),
            needed_identifiers: Vec::new(),
            unnamed_identifiers: Vec::new(),
            single_commit,
            problems: Vec::new(),
        }
    }
}
