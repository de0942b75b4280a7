//! The result of a classification: one [`Decision`] per definition the feature's tests
//! reached, each with structured [`Reason`]s that read as plain sentences. Serialized as
//! `classification.json` (see `docs/formats.md`).

use std::collections::BTreeMap;
use std::fmt;

use carve_languages::NodeId;
use serde::{Deserialize, Serialize};

use crate::trace::TestId;

/// Version of the serialized [`Classification`].
pub const CLASSIFICATION_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Part of the feature: deleted from the masked state.
    Extracted,
    /// Still needed by the rest of the project: kept.
    Remained,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Extracted => "extracted",
            Status::Remained => "remained",
        })
    }
}

/// Why a definition was extracted or remained. Variants are listed (and sorted) by weight:
/// reasons to remain first, then how the feature's tests reached the definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// A pass-to-pass test executed it (`test` is the smallest such id).
    ExecutedByP2p { test: TestId, others: usize },
    /// It ran while modules that stay were loading.
    ImportTime,
    /// The masked project did not build without it: the build check `command` named it
    /// (`message` is the first line of the compiler's message). Set by the build repair of
    /// the extract stage, after classification.
    NeededToBuild { command: String, message: String },
    /// The masked state did not load or run a test without it: `found_by` (a test, or the
    /// test file that failed to collect) failed with `message`, which names it. Set by the
    /// load repair of `carve tasks`, after classification.
    NeededToLoad { found_by: TestId, message: String },
    /// Test code that stays needs it: `helper` (a fixture, a set-up method, a helper of a test
    /// file, or module-level code of one) called it in `test`, which failed on the masked
    /// state without it although the test's own code never reached the feature. Set by the
    /// repair of the `feature` protection policy, after classification.
    NeededByTestHelper { test: TestId, helper: String },
    /// The line budget (`max_lines`) was spent before the walk from the entry points reached
    /// it; it stays whole, with everything nested in it (see `budget.rs`).
    OverBudget { max_lines: usize },
    /// A member (method, nested definition) remains, so its container must too.
    HasRemainedMember { member: NodeId, others: usize },
    /// Its enclosing function remains; a nested definition is part of that body.
    ParentRemained { parent: NodeId },
    /// Decorates a definition that stays.
    Decorator { of: NodeId },
    /// Base class of a class that stays.
    BaseClass { of: NodeId },
    /// Used in a default value or annotation of a definition that stays.
    DefaultOrAnnotation { of: NodeId },
    /// Used in the body of a class that stays.
    ClassBody { of: NodeId },
    /// An implementation of interface `interface` for `of`, which stays (a Rust `impl Trait
    /// for Type`): code that stays may use it where no path names it (`dyn` coercions,
    /// generic bounds, formatting), so it stays while its type and its interface do (its
    /// extracted methods are stubbed); `by` is a definition that stays and names the
    /// interface, when the index knows one.
    Implementation { interface: String, of: NodeId, by: Option<NodeId> },
    /// Named by module-level code that stays.
    ModuleLevel { path: String, line: usize },
    /// Named by its dotted path in a test-configuration file (`filterwarnings` in
    /// `pyproject.toml`), which the test runner imports before collecting any test.
    NamedByConfig { path: String, line: usize },
    /// Listed in `__all__`.
    Exported { path: String },
    /// A class named in the body of a definition that stays and runs.
    ReferencedBy { by: NodeId },
    /// Called directly from the code of this fail-to-pass test.
    EntryPoint { test: TestId },
    /// Called from `from` in a fail-to-pass test.
    Reached { from: NodeId },
    /// A class whose member the fail-to-pass tests reached.
    HasReachedMember { member: NodeId },
    /// An interface of the index (a Rust trait) that `implementation`, which the
    /// fail-to-pass tests reached, implements.
    ImplementedByReached { implementation: NodeId },
    /// A member of an extracted class.
    MemberOfExtracted { class: NodeId },
    /// Nested in an extracted function.
    ParentExtracted { parent: NodeId },
    /// Pass-to-pass tests execute it (`test` is the smallest such id), but only from code
    /// the mask deletes: extracted definitions (`extracted_callers`), or calls in code that
    /// stays whose value is discarded (`self._validate_crit(headers)`), which the mask deletes
    /// with it and the gold patch restores (`calls`: their callers; the statements are in
    /// the classification's `removed_calls`). Validation decides whether that was sound: a
    /// P2P test that then fails puts it back (load repair).
    P2pOnlyThroughRemoved { test: TestId, calls: Vec<NodeId>, extracted_callers: Vec<NodeId> },
    /// No test runs it, and only code the mask takes out names it: extracted definitions, F2P
    /// tests, or call statements deleted with their callee (`by` is the first such namer;
    /// imports and `__all__` entries of it go with it). A warning or error class only the
    /// feature raises.
    NamedOnlyByFeature { by: NodeId },
    /// The F2P tests do not reach it and P2P tests run it, but code that stays calls it only
    /// in statements the mask deletes with extracted `with` (a base method whose overrides
    /// are the feature: `msg = alg.check_key_length(key)` goes with them): in the masked
    /// state nothing calls it.
    CalledOnlyWithFeature { with: NodeId },
}

fn and_more(f: &mut fmt::Formatter<'_>, others: usize) -> fmt::Result {
    if others > 0 { write!(f, " (and {others} more)") } else { Ok(()) }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ExecutedByP2p { test, others } => {
                write!(f, "executed by P2P test {test}")?;
                and_more(f, *others)
            }
            Reason::ImportTime => f.write_str("runs at import time"),
            Reason::NeededToBuild { command, message } => {
                write!(f, "needed to build (named by {command}: {message})")
            }
            Reason::NeededToLoad { found_by, message } => {
                write!(f, "needed to load (found by {found_by}: {message})")
            }
            Reason::NeededByTestHelper { test, helper } => {
                write!(f, "needed by test code that stays ({helper}, in {test})")
            }
            Reason::OverBudget { max_lines } => {
                write!(f, "beyond the line budget of {max_lines} lines (kept whole)")
            }
            Reason::HasRemainedMember { member, others } => {
                write!(f, "has remained member {member}")?;
                and_more(f, *others)
            }
            Reason::ParentRemained { parent } => write!(f, "nested in remained {parent}"),
            Reason::Decorator { of } => write!(f, "decorator of {of}, which stays"),
            Reason::BaseClass { of } => write!(f, "base class of {of}, which stays"),
            Reason::DefaultOrAnnotation { of } => {
                write!(f, "used in a default or annotation of {of}, which stays")
            }
            Reason::ClassBody { of } => write!(f, "used in the body of class {of}, which stays"),
            Reason::Implementation { interface, of, by } => {
                write!(f, "implementation of `{interface}` for {of}, which stays")?;
                match by {
                    Some(by) => write!(f, "; required by {by}, which names `{interface}` and stays"),
                    None => f.write_str(" (used where no path names it: `dyn` coercions, generic bounds, formatting)"),
                }
            }
            Reason::ModuleLevel { path, line } => {
                write!(f, "used by module-level code at {path}:{line}")
            }
            Reason::NamedByConfig { path, line } => {
                write!(f, "named by the test configuration at {path}:{line}")
            }
            Reason::Exported { path } => write!(f, "listed in __all__ of {path}"),
            Reason::ReferencedBy { by } => write!(f, "named by {by}, which stays and runs"),
            Reason::EntryPoint { test } => write!(f, "entry point: called by F2P test {test}"),
            Reason::Reached { from } => write!(f, "called from {from} in F2P tests"),
            Reason::HasReachedMember { member } => write!(f, "class of reached member {member}"),
            Reason::ImplementedByReached { implementation } => {
                write!(f, "implemented by reached {implementation}")
            }
            Reason::MemberOfExtracted { class } => write!(f, "member of extracted class {class}"),
            Reason::ParentExtracted { parent } => write!(f, "nested in extracted {parent}"),
            Reason::NamedOnlyByFeature { by } => {
                write!(f, "no test runs it and only code the mask takes out names it ({by})")
            }
            Reason::CalledOnlyWithFeature { with } => {
                write!(f, "not reached by F2P tests; code that stays calls it only in statements deleted with {with}")
            }
            Reason::P2pOnlyThroughRemoved { test, calls, extracted_callers } => {
                write!(f, "executed by P2P test {test} only through")?;
                if !calls.is_empty() {
                    write!(f, " discarded-value calls in {}, which the mask deletes with it", calls.join(", "))?;
                }
                if !extracted_callers.is_empty() {
                    let and = if calls.is_empty() { "" } else { " and" };
                    write!(f, "{and} extracted {}", extracted_callers.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

/// What happens to one definition, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub status: Status,
    /// Sorted by weight; never empty. For a remained definition the reasons to remain come
    /// first, followed by how the feature's tests reached it.
    pub reasons: Vec<Reason>,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status)?;
        for (i, r) in self.reasons.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { "; " })?;
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// The classification of the definitions one feature's fail-to-pass tests reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub version: u32,
    /// The feature's fail-to-pass tests, sorted.
    pub f2p: Vec<TestId>,
    /// Number of pass-to-pass tests considered.
    pub p2p_count: usize,
    /// P2P tests absent from the trace (they could not keep anything), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p_untraced: Vec<TestId>,
    /// Number of tests that stay in the masked state without protecting what they run (the
    /// protection policies `sampled:N` and `feature`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unprotected_count: usize,
    /// Test files removed from the masked state (they hold F2P tests and no P2P test):
    /// their code keeps nothing alive. Sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_test_files: Vec<String>,
    /// Where the BFS started, sorted.
    pub entry_points: Vec<NodeId>,
    pub nodes: BTreeMap<NodeId, Decision>,
    /// Call statements of code that stays that the mask deletes with the extracted
    /// definition they call (see [`Reason::P2pOnlyThroughRemoved`]), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_calls: Vec<RemovedCall>,
    /// The line budget the classification ran with, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<usize>,
    /// Definitions that stay because the line budget was spent before them (each has
    /// [`Reason::OverBudget`]), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<NodeId>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A call statement whose value is discarded (`self._validate_crit(headers)`), in `caller`,
/// a definition that stays, deleted by the mask together with `target`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RemovedCall {
    pub target: NodeId,
    pub caller: NodeId,
    pub path: String,
    /// 1-based line of the statement.
    pub line: usize,
    pub span: carve_languages::index::Span,
}

impl RemovedCall {
    /// The removed call `call` of `target`.
    pub fn of(
        index: &carve_languages::DefinitionIndex,
        target: &str,
        call: &carve_languages::index::DiscardedCall,
    ) -> RemovedCall {
        let path = index.get(&call.caller).map(|d| d.path.clone()).unwrap_or_default();
        RemovedCall {
            target: target.to_string(),
            caller: call.caller.clone(),
            path,
            line: call.span.start_line,
            span: call.span,
        }
    }
}

impl Classification {
    /// The removed call statements whose target is still extracted (a repair may have kept
    /// it since), grouped by file: what the mask deletes besides the definitions.
    pub fn call_statements_to_remove(&self) -> BTreeMap<String, Vec<carve_languages::index::Span>> {
        let mut out: BTreeMap<String, Vec<carve_languages::index::Span>> = BTreeMap::new();
        for c in self.removed_calls.iter().filter(|c| self.status(&c.target) == Some(Status::Extracted)) {
            out.entry(c.path.clone()).or_default().push(c.span);
        }
        // A statement calling several extracted callees (one name, several overrides) once.
        for spans in out.values_mut() {
            spans.sort();
            spans.dedup();
        }
        out
    }
}

impl Classification {
    /// Extracted definitions, in node-id order.
    pub fn extracted(&self) -> impl Iterator<Item = (&NodeId, &Decision)> + '_ {
        self.nodes.iter().filter(|(_, d)| d.status == Status::Extracted)
    }

    /// Remained definitions (reached, but kept), in node-id order.
    pub fn remained(&self) -> impl Iterator<Item = (&NodeId, &Decision)> + '_ {
        self.nodes.iter().filter(|(_, d)| d.status == Status::Remained)
    }

    /// The status of one definition, if the feature's tests reached it.
    pub fn status(&self, id: &str) -> Option<Status> {
        self.nodes.get(id).map(|d| d.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_read_as_sentences() {
        let r = Reason::ExecutedByP2p { test: "tests/test_a.py::test_x".into(), others: 3 };
        assert_eq!(r.to_string(), "executed by P2P test tests/test_a.py::test_x (and 3 more)");
        let r = Reason::BaseClass { of: "pkg/m.py::Sub".into() };
        assert_eq!(r.to_string(), "base class of pkg/m.py::Sub, which stays");
        let d = Decision {
            status: Status::Remained,
            reasons: vec![Reason::ImportTime, Reason::Reached { from: "a.py::f".into() }],
        };
        assert_eq!(d.to_string(), "remained: runs at import time; called from a.py::f in F2P tests");
    }

    #[test]
    fn reasons_serialize_tagged() {
        let r = Reason::ModuleLevel { path: "pkg/__init__.py".into(), line: 4 };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"reason":"module_level","path":"pkg/__init__.py","line":4}"#
        );
        assert_eq!(serde_json::to_string(&Reason::ImportTime).unwrap(), r#"{"reason":"import_time"}"#);
        let back: Reason = serde_json::from_str(r#"{"reason":"executed_by_p2p","test":"t","others":0}"#).unwrap();
        assert_eq!(back, Reason::ExecutedByP2p { test: "t".into(), others: 0 });
    }
}
