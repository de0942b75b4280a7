//! F2P and P2P tests selected from a pair of states, each run twice ([`RUNS_PER_STATE`]):
//! *before* (the feature or stage not yet there) and *after* (it is). A test that passes
//! after in both runs is fail-to-pass when it failed, errored or was missing before in both,
//! pass-to-pass when it passed there in both; a test whose status differs between the two
//! runs of either state is flaky (`Runs::is_flaky`) and neither. FeatureArc selects each stage's and each
//! chain's tests this way.

use carve_languages::runner::TestStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use crate::TestId;
use crate::runs::Runs;

/// How many times each state of a pair runs.
pub const RUNS_PER_STATE: usize = 2;

/// The tests selected from one pair of states, with every status they had.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Selection {
    pub f2p: Vec<TestId>,
    pub p2p: Vec<TestId>,
    pub flaky: Vec<TestId>,
    /// Failing before but not one of the own tests of the feature or stage (e.g. its file
    /// could not load yet).
    pub collateral: Vec<TestId>,
    /// Failing after: not usable as a check of this stage.
    pub failing_after: Vec<TestId>,
    pub before: BTreeMap<TestId, [TestStatus; 2]>,
    pub after: BTreeMap<TestId, [TestStatus; 2]>,
    /// When the before tree's tests did not compile (the after state's tests name code the
    /// before state lacks), the statuses of the before state's own tests, twice, on which P2P
    /// was judged; empty otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub before_own_tests: BTreeMap<TestId, [TestStatus; 2]>,
    /// Whether P2P was judged on the before state's own tests ([`Selection::judge_p2p_on`]).
    #[serde(default)]
    pub p2p_on_own_tests: bool,
}

/// The statuses of `id` in the two runs of a state.
fn twice(runs: &Runs, id: &str) -> [TestStatus; RUNS_PER_STATE] {
    [0, 1].map(|i| runs.status(i, id))
}

/// Select from the runs of `before` and `after`. A test that fails before and passes after
/// is F2P only when `is_own` holds for it (the feature's or stage's own tests); others are
/// collateral (a module that cannot load yet fails every test of its file).
pub fn select(before: &Runs, after: &Runs, is_own: impl Fn(&TestId) -> bool) -> Selection {
    let ids: BTreeSet<&TestId> = before.ids().into_iter().chain(after.ids()).collect();
    let mut s = Selection::default();
    for id in ids {
        let (b, a) = (twice(before, id), twice(after, id));
        s.before.insert(id.clone(), b);
        s.after.insert(id.clone(), a);
        if before.is_flaky(id) || after.is_flaky(id) {
            s.flaky.push(id.clone());
        } else if a[0] != TestStatus::Passed {
            if a[0] != TestStatus::Skipped {
                s.failing_after.push(id.clone());
            }
        } else if b[0] == TestStatus::Passed {
            s.p2p.push(id.clone());
        } else if matches!(b[0], TestStatus::Failed | TestStatus::Error | TestStatus::Missing) {
            if is_own(id) {
                s.f2p.push(id.clone());
            } else {
                s.collateral.push(id.clone());
            }
        }
    }
    s
}

impl Selection {
    /// Judge P2P again on `own`: the runs of the before state as it is, with its *own*
    /// tests, for when the before tree's tests did not all run (the after state's tests laid
    /// over the before state's code did not compile, so its other tests were missing before
    /// and collateral). A test that passes after and in both own runs is P2P, whether it
    /// passed before or was collateral; one whose own runs disagree is flaky; one failing or
    /// missing there is collateral. F2P stays as selected.
    pub fn judge_p2p_on(&mut self, own: &Runs) {
        let candidates: Vec<TestId> =
            std::mem::take(&mut self.p2p).into_iter().chain(std::mem::take(&mut self.collateral)).collect();
        for id in candidates {
            if own.is_flaky(&id) {
                self.flaky.push(id);
            } else if own.status(0, &id) == TestStatus::Passed {
                self.p2p.push(id);
            } else {
                self.collateral.push(id);
            }
        }
        self.before_own_tests = own.ids().into_iter().map(|id| (id.clone(), twice(own, id))).collect();
        self.p2p_on_own_tests = true;
        for v in [&mut self.p2p, &mut self.flaky, &mut self.collateral] {
            v.sort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::{Error, Failed, Passed, Skipped};

    fn runs(r: &[(&str, TestStatus, TestStatus)]) -> Runs {
        Runs::from([0, 1].map(|i| r.iter().map(|(id, a, b)| (id.to_string(), if i == 0 { *a } else { *b })).collect()))
    }

    #[test]
    fn tests_are_selected_by_their_statuses_in_both_runs_of_both_states() {
        let before = runs(&[
            ("p2p", Passed, Passed),
            ("f2p", Failed, Failed),
            ("errors", Error, Error),
            ("flaky", Failed, Passed),
            ("broken", Passed, Passed),
            ("skipped", Passed, Passed),
            ("other", Failed, Failed),
        ]);
        let after = runs(&[
            ("p2p", Passed, Passed),
            ("f2p", Passed, Passed),
            ("errors", Passed, Passed),
            ("new", Passed, Passed),
            ("flaky", Passed, Passed),
            ("broken", Failed, Failed),
            ("skipped", Skipped, Skipped),
            ("other", Passed, Passed),
        ]);
        let s = select(&before, &after, |id| id != "other");
        assert_eq!(s.f2p, ["errors", "f2p", "new"], "missing before counts as failing");
        assert_eq!(s.p2p, ["p2p"]);
        assert_eq!(s.flaky, ["flaky"]);
        assert_eq!(s.collateral, ["other"]);
        assert_eq!(s.failing_after, ["broken"], "a test skipped after is neither");
        assert_eq!(s.before["new"], [TestStatus::Missing; 2]);
        assert!(!s.p2p_on_own_tests && s.before_own_tests.is_empty());
    }
}
