//! A chain gate's `validation.json` (`stages/<k>/validation.json` of a chain bundle, and the
//! chain gate's at its top; `docs/formats.md`, "Chain bundle"): the per-test statuses of the
//! gate's paired states and the tests it selected.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::chain::CallCheck;
use crate::{Format, TestStatus, Version};

/// A test's status in each of the two runs of a state.
pub type TwoRuns = BTreeMap<String, [TestStatus; 2]>;

/// `validation.json` of a gate: `gate` is `stage` (with `stage`, `identifier_scan` and, when
/// traced, `call_dependency`) or `chain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct GateValidation {
    /// [`crate::chain::VERSION`].
    pub version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<usize>,
    /// `stage` or `chain`.
    pub gate: String,
    /// `S_k` (`S0` for the chain gate).
    pub before_state: String,
    /// `S_(k+1)` (`S_n`).
    pub after_state: String,
    pub runs_per_state: u32,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
    pub excluded: Excluded,
    pub before: TwoRuns,
    pub after: TwoRuns,
    /// P2P was judged on the before state's own tests.
    pub p2p_on_own_tests: bool,
    /// Those runs (empty otherwise).
    pub before_own_tests: TwoRuns,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier_scan: Option<IdentifierScan>,
    pub passed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_dependency: Option<CallCheck>,
}

impl GateValidation {
    /// The gate `gate` between `before_state` and `after_state`, each run twice; the tests
    /// are set afterwards.
    pub fn new(gate: &str, stage: Option<usize>, before_state: String, after_state: String) -> GateValidation {
        GateValidation {
            version: crate::chain::VERSION,
            stage,
            gate: gate.to_string(),
            before_state,
            after_state,
            runs_per_state: 2,
            f2p: Vec::new(),
            p2p: Vec::new(),
            excluded: Excluded::default(),
            before: TwoRuns::new(),
            after: TwoRuns::new(),
            p2p_on_own_tests: false,
            before_own_tests: TwoRuns::new(),
            identifier_scan: None,
            passed: false,
            call_dependency: None,
        }
    }
}

impl Format for GateValidation {
    const FILE: &'static str = "validation.json";
    const VERSION: Version = Version::Number(crate::chain::VERSION);
}

/// Tests the gate left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Excluded {
    /// Runs of one tree disagree.
    pub flaky: Vec<String>,
    /// Failing before but not the stage's own test.
    pub collateral: Vec<String>,
    pub failing_after: Vec<String>,
}

impl Excluded {
    pub fn new(flaky: Vec<String>, collateral: Vec<String>, failing_after: Vec<String>) -> Excluded {
        Excluded { flaky, collateral, failing_after }
    }
}

/// Names the stage's hidden tests use that its code introduces, missing from its spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct IdentifierScan {
    pub unnamed: Vec<String>,
    /// `unnamed` is not empty.
    pub flagged: bool,
}

impl IdentifierScan {
    pub fn new(unnamed: Vec<String>) -> IdentifierScan {
        let flagged = !unnamed.is_empty();
        IdentifierScan { unnamed, flagged }
    }
}
