//! A test's status, as every format that records test runs writes it.

use serde::{Deserialize, Serialize};

/// What happened to one test. Exhaustive: readers match on it, and a new status is a change
/// of every format that holds statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    Passed,
    /// The test body failed (an assertion, an exception, a strict xpass).
    Failed,
    /// Set-up or tear-down failed, the test's file could not be collected, or the test
    /// process died while the test ran.
    Error,
    /// Skipped, or an expected failure (xfail).
    Skipped,
    /// Requested, but the runner has no such test.
    Missing,
    /// Killed: no progress for the per-test timeout, or the whole run's time ran out.
    Timeout,
}

impl TestStatus {
    pub fn name(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Error => "error",
            TestStatus::Skipped => "skipped",
            TestStatus::Missing => "missing",
            TestStatus::Timeout => "timeout",
        }
    }
}

impl std::fmt::Display for TestStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_serializes_as_its_name() {
        for s in [
            TestStatus::Passed,
            TestStatus::Failed,
            TestStatus::Error,
            TestStatus::Skipped,
            TestStatus::Missing,
            TestStatus::Timeout,
        ] {
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{}\"", s.name()));
        }
        let back: TestStatus = serde_json::from_str("\"missing\"").unwrap();
        assert_eq!(back, TestStatus::Missing);
    }
}
