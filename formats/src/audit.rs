//! The audit of one feature (`audit.json` of a task bundle, `<out>/audit-<feature>.json`,
//! `carve audit --format json`; `docs/formats.md`, "Audit") and the classification it holds
//! ("Classification").
//!
//! The classification types mirror `carve_tracer::classify::decision`, which still defines
//! its own (the tracer is being split); they serialize to the same bytes, which this crate's
//! tests check on real audit files. When the tracer moves onto these types, its
//! `CLASSIFICATION_VERSION` becomes [`CLASSIFICATION_VERSION`] here.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::{Format, Version};

/// Version of the audit.
pub const VERSION: u32 = 1;
/// Version of the classification inside it.
pub const CLASSIFICATION_VERSION: u32 = 1;

/// The audit of one feature: its tests, the decisions as sentences, the repairs, and the
/// classification itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Audit {
    pub version: u32,
    /// The feature's slug.
    pub feature: String,
    /// F2P tests, sorted.
    pub f2p: Vec<String>,
    pub p2p_count: usize,
    /// F2P tests that still passed on a masked state and stay as P2P tests.
    pub moved_to_p2p: Vec<String>,
    /// Tests that still passed on a masked state but share their test function with F2P
    /// tests: neither F2P nor P2P.
    pub dropped_cases: Vec<String>,
    /// P2P doctests of extracted definitions, moved into `f2p`.
    pub owned_doctests: Vec<String>,
    /// Passing P2P tests whose ids change from run to run, set aside.
    pub unstable_ids: Vec<String>,
    /// `--protect feature`: tests that failed on a masked state as P2P tests and then passed
    /// there as F2P tests (their outcome depends on the tests run with them), set aside.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_dependent: Vec<String>,
    pub entry_points: Vec<String>,
    pub extracted: Vec<AuditEntry>,
    pub remained: Vec<AuditEntry>,
    pub build_repairs: Vec<BuildRepair>,
    pub load_repairs: Vec<LoadRepair>,
    /// How the feature was protected; absent in audits made before protection policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<crate::instance::Protection>,
    /// The test files the candidate grouped; absent for one test file or `--f2p` tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<crate::instance::CandidateGroup>,
    pub classification: Classification,
}

impl Audit {
    /// The audit of `feature` with its classification; the lists are set afterwards.
    pub fn new(feature: String, classification: Classification) -> Audit {
        Audit {
            version: VERSION,
            feature,
            f2p: Vec::new(),
            p2p_count: 0,
            moved_to_p2p: Vec::new(),
            dropped_cases: Vec::new(),
            owned_doctests: Vec::new(),
            unstable_ids: Vec::new(),
            order_dependent: Vec::new(),
            entry_points: Vec::new(),
            extracted: Vec::new(),
            remained: Vec::new(),
            build_repairs: Vec::new(),
            load_repairs: Vec::new(),
            protection: None,
            group: None,
            classification,
        }
    }
}

impl Format for Audit {
    const FILE: &'static str = "audit.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// One definition and its reasons, as sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct AuditEntry {
    pub id: String,
    pub reasons: Vec<String>,
}

impl AuditEntry {
    pub fn new(id: String, reasons: Vec<String>) -> AuditEntry {
        AuditEntry { id, reasons }
    }
}

/// One round of build repair: the build check that failed, the source locations its output
/// named, and the extracted definitions kept because of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct BuildRepair {
    pub round: usize,
    pub command: String,
    /// `[path, line]` pairs.
    pub locations: Vec<(String, u32)>,
    pub moved: Vec<String>,
}

impl BuildRepair {
    pub fn new(round: usize, command: String, locations: Vec<(String, u32)>, moved: Vec<String>) -> BuildRepair {
        BuildRepair { round, command, locations, moved }
    }
}

/// One round of load repair (`carve tasks`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct LoadRepair {
    pub round: usize,
    /// Each kept definition, sorted by id.
    pub moved: Vec<KeptToLoad>,
}

impl LoadRepair {
    pub fn new(round: usize, moved: Vec<KeptToLoad>) -> LoadRepair {
        LoadRepair { round, moved }
    }
}

/// A definition a load repair kept: the first test (by id) whose error named it, and that
/// error's message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct KeptToLoad {
    pub id: String,
    pub found_by: String,
    pub message: String,
    /// The `feature` policy's helper repair: the fixture or set-up code of `found_by` that
    /// called it (the test's own code never reached it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper: Option<String>,
}

impl KeptToLoad {
    pub fn new(id: String, found_by: String, message: String) -> KeptToLoad {
        KeptToLoad { id, found_by, message, helper: None }
    }
}

/// The classification of the definitions one feature's F2P tests reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Classification {
    pub version: u32,
    /// The feature's F2P tests, sorted.
    pub f2p: Vec<String>,
    /// Number of P2P tests considered.
    pub p2p_count: usize,
    /// P2P tests absent from the trace, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p_untraced: Vec<String>,
    /// Number of tests that stay in the masked state without protecting what they run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unprotected_count: usize,
    /// Test files the masked state drops (F2P tests and no P2P test), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_test_files: Vec<String>,
    /// Where the BFS started, sorted.
    pub entry_points: Vec<String>,
    /// Node id → decision.
    pub nodes: BTreeMap<String, Decision>,
    /// Call statements of code that stays that the mask deletes with the extracted
    /// definition they call, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_calls: Vec<RemovedCall>,
    /// The line budget the classification ran with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<usize>,
    /// Definitions that stay because the line budget was spent before them, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Classification {
    pub fn new(f2p: Vec<String>, p2p_count: usize, entry_points: Vec<String>) -> Classification {
        Classification {
            version: CLASSIFICATION_VERSION,
            f2p,
            p2p_count,
            p2p_untraced: Vec::new(),
            unprotected_count: 0,
            removed_test_files: Vec::new(),
            entry_points,
            nodes: BTreeMap::new(),
            removed_calls: Vec::new(),
            max_lines: None,
            over_budget: Vec::new(),
        }
    }
}

/// What happens to one definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Part of the feature: deleted from the masked state.
    Extracted,
    /// Still needed by the rest of the project: kept.
    Remained,
}

/// What happens to one definition, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Decision {
    pub status: Status,
    /// Sorted by weight; never empty.
    pub reasons: Vec<Reason>,
}

impl Decision {
    pub fn new(status: Status, reasons: Vec<Reason>) -> Decision {
        Decision { status, reasons }
    }
}

/// Why a definition was extracted or remained, tagged by `reason`. Variants are listed (and
/// sorted) by weight: reasons to remain first, then how the feature's tests reached it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// A P2P test executed it (`test` is the smallest such id; `others` more did).
    ExecutedByP2p { test: String, others: usize },
    /// It ran while modules that stay were loading.
    ImportTime,
    /// The masked project did not build without it: the build check `command` named it.
    NeededToBuild { command: String, message: String },
    /// The masked state failed `found_by` with `message`, which names it.
    NeededToLoad { found_by: String, message: String },
    /// `helper` (a fixture or set-up code) called it in `test`, which failed on the masked
    /// state without it although the test's own code never reached the feature.
    NeededByTestHelper { test: String, helper: String },
    /// The line budget `max_lines` was spent before the walk reached it; it stays whole.
    OverBudget { max_lines: usize },
    /// A member remains, so its container must too.
    HasRemainedMember { member: String, others: usize },
    /// Its enclosing function remains.
    ParentRemained { parent: String },
    /// Decorates a definition that stays.
    Decorator { of: String },
    /// Base class of a class that stays.
    BaseClass { of: String },
    /// Used in a default value or annotation of a definition that stays.
    DefaultOrAnnotation { of: String },
    /// Used in the body of a class that stays.
    ClassBody { of: String },
    /// An implementation of `interface` for `of`, which stays; `by` names code that stays
    /// and names the interface, when known (else null).
    Implementation { interface: String, of: String, by: Option<String> },
    /// Named by module-level code that stays.
    ModuleLevel { path: String, line: usize },
    /// Named by its dotted path in a test-configuration file.
    NamedByConfig { path: String, line: usize },
    /// Listed in `__all__`.
    Exported { path: String },
    /// A class named in the body of a definition that stays and runs.
    ReferencedBy { by: String },
    /// Called directly from the code of this F2P test.
    EntryPoint { test: String },
    /// Called from `from` in an F2P test.
    Reached { from: String },
    /// A class whose member the F2P tests reached.
    HasReachedMember { member: String },
    /// An interface (a Rust trait) implemented by `implementation`, which the F2P tests
    /// reached.
    ImplementedByReached { implementation: String },
    /// A member of an extracted class.
    MemberOfExtracted { class: String },
    /// Nested in an extracted function.
    ParentExtracted { parent: String },
    /// P2P tests execute it only through code the mask deletes.
    P2pOnlyThroughRemoved { test: String, calls: Vec<String>, extracted_callers: Vec<String> },
    /// No test runs it, and only code the mask takes out names it.
    NamedOnlyByFeature { by: String },
    /// Not reached by the F2P tests; code that stays calls it only in statements the mask
    /// deletes with extracted `with`.
    CalledOnlyWithFeature { with: String },
}

/// A call statement whose value is discarded, in `caller` (a definition that stays), deleted
/// by the mask together with `target`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct RemovedCall {
    pub target: String,
    pub caller: String,
    pub path: String,
    /// 1-based line of the statement.
    pub line: usize,
    pub span: Span,
}

impl RemovedCall {
    pub fn new(target: String, caller: String, path: String, line: usize, span: Span) -> RemovedCall {
        RemovedCall { target, caller, path, line, span }
    }
}

/// Byte and line span. Lines are 1-based and inclusive; bytes are half-open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Span {
    pub start_byte: usize,
    pub end_byte: usize,
    pub start_line: usize,
    pub end_line: usize,
}

impl Span {
    pub fn new(start_byte: usize, end_byte: usize, start_line: usize, end_line: usize) -> Span {
        Span { start_byte, end_byte, start_line, end_line }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialize_tagged() {
        let r = Reason::ModuleLevel { path: "pkg/__init__.py".into(), line: 4 };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"reason":"module_level","path":"pkg/__init__.py","line":4}"#
        );
        assert_eq!(serde_json::to_string(&Reason::ImportTime).unwrap(), r#"{"reason":"import_time"}"#);
        let r = Reason::Implementation { interface: "fmt::Display".into(), of: "a.rs::R".into(), by: None };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"reason":"implementation","interface":"fmt::Display","of":"a.rs::R","by":null}"#
        );
    }
}
