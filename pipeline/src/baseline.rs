//! Baseline: run the suite twice in a shadow copy and record one status per test id; a
//! test whose status differs between the runs is flaky and never used as F2P or P2P.
//! `carve baseline` runs it twice untraced; from cold, `carve trace` and `carve tasks` run
//! it once untraced and let the traced run be the second run (`trace::baseline_and_trace`).
//! Results are cached under the output folder, keyed by the tree's content and settings.

use crate::{Context, Result};
use carve_languages::runner::{RunResult, TestStatus};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::runs::{RunExtras, run_tests};
use crate::{Session, TestId};
use carve_core::{fs, tree};

/// Version 2: `second_run`, `traced_rerun`, `plain_rerun` and `shim_failure`.
pub const BASELINE_VERSION: u32 = 2;

/// What the second of the two baseline runs was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SecondRun {
    /// A second untraced run (`carve baseline`).
    #[default]
    Plain,
    /// The traced run (`carve trace` / `carve tasks` from cold).
    Traced,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineEntry {
    /// Status in the first (untraced) run.
    pub status: TestStatus,
    /// Status in the second run (untraced, or traced: see [`Baseline::second_run`]).
    pub second: TestStatus,
    pub flaky: bool,
    /// With a traced second run, for a test that passed the first run and not the traced
    /// one: its status in a second traced run (only such tests are re-run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced_rerun: Option<TestStatus>,
    /// For a test that failed both traced runs: its status in a second untraced run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_rerun: Option<TestStatus>,
    /// Passed both untraced runs and failed both traced runs: not flaky, but left out of
    /// features (the shim breaks it, so its trace says nothing about the untraced test).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shim_failure: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    pub tree_digest: String,
    /// Whether the second run was untraced or the traced run.
    #[serde(default)]
    pub second_run: SecondRun,
    pub tests: BTreeMap<TestId, BaselineEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Baseline {
    /// Tests that passed in both runs.
    pub fn stable_passing(&self) -> BTreeSet<TestId> {
        self.tests
            .iter()
            .filter(|(_, e)| !e.flaky && e.status == TestStatus::Passed && e.second == TestStatus::Passed)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Tests that passed untraced (twice) and failed under the shim (twice).
    pub fn shim_failures(&self) -> BTreeSet<TestId> {
        self.tests.iter().filter(|(_, e)| e.shim_failure).map(|(id, _)| id.clone()).collect()
    }

    pub fn known(&self) -> BTreeSet<TestId> {
        self.tests.keys().cloned().collect()
    }

    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut c = BTreeMap::new();
        for e in self.tests.values() {
            *c.entry(format!("{:?}", e.status).to_lowercase()).or_insert(0) += 1;
        }
        c.insert("flaky".into(), self.tests.values().filter(|e| e.flaky).count());
        let shim = self.tests.values().filter(|e| e.shim_failure).count();
        if shim > 0 {
            c.insert("failed only under the shim".into(), shim);
        }
        c
    }

    /// Two untraced runs.
    pub fn from_plain_runs(tree_digest: &str, first: &RunResult, second: &RunResult) -> Baseline {
        Baseline::combine(tree_digest, first, second, SecondRun::Plain, &Reruns::default())
    }

    /// One untraced run, the traced run, and the re-runs of the tests that passed the
    /// first and not the traced run: traced again first (a test that passes now is
    /// flaky; a test flaky from run to run cannot line up with untraced/traced this way),
    /// then, for those that failed again, untraced again. Passing that run, the test fails
    /// only under the shim; otherwise it is flaky. A test that did not pass the first run
    /// and passed the traced one is flaky.
    pub fn from_plain_and_traced(
        tree_digest: &str,
        plain: &RunResult,
        traced: &RunResult,
        reruns: &Reruns,
    ) -> Baseline {
        Baseline::combine(tree_digest, plain, traced, SecondRun::Traced, reruns)
    }

    fn combine(
        tree_digest: &str,
        first: &RunResult,
        second: &RunResult,
        second_run: SecondRun,
        reruns: &Reruns,
    ) -> Baseline {
        let mut out = Baseline {
            version: BASELINE_VERSION,
            tree_digest: tree_digest.to_string(),
            second_run,
            tests: BTreeMap::new(),
            warnings: Vec::new(),
        };
        let ids: BTreeSet<&TestId> = first.statuses.keys().chain(second.statuses.keys()).collect();
        for id in ids {
            let (s1, s2) = (first.status(id), second.status(id));
            let message = [Some(first), Some(second), reruns.traced.as_ref(), reruns.plain.as_ref()]
                .into_iter()
                .flatten()
                .find_map(|r| r.statuses.get(id).and_then(|o| o.message.clone()));
            let status_in =
                |r: &Option<RunResult>| r.as_ref().filter(|r| r.statuses.contains_key(id)).map(|r| r.status(id));
            let (traced_rerun, plain_rerun) = (status_in(&reruns.traced), status_in(&reruns.plain));
            let shim_failure = s1 == TestStatus::Passed
                && s2 != TestStatus::Passed
                && traced_rerun.is_some_and(|s| s != TestStatus::Passed)
                && plain_rerun == Some(TestStatus::Passed);
            let flaky = !shim_failure && [Some(s2), traced_rerun, plain_rerun].into_iter().flatten().any(|s| s != s1);
            let entry =
                BaselineEntry { status: s1, second: s2, flaky, traced_rerun, plain_rerun, shim_failure, message };
            out.tests.insert(id.clone(), entry);
        }
        if out.tests.is_empty() {
            out.warnings.push("the runner reported no tests".into());
        }
        out
    }
}

/// The re-runs of the tests whose traced status differed from their untraced one.
#[derive(Default)]
pub struct Reruns {
    pub traced: Option<RunResult>,
    pub plain: Option<RunResult>,
}

fn cache_key(session: &Session, tests: Option<&[TestId]>) -> String {
    let mut h = Sha256::new();
    h.update(session.tree_digest.as_bytes());
    h.update(session.config.to_toml().as_bytes());
    if let Some(t) = tests {
        for id in t {
            h.update(id.as_bytes());
            h.update([0]);
        }
    }
    hex::encode(h.finalize())[..20].to_string()
}

fn cache_path(session: &Session, tests: Option<&[TestId]>) -> PathBuf {
    session.cache_dir().join(format!("baseline-{}.json", cache_key(session, tests)))
}

/// The cached baseline of `tests` (all tests: `None`), if any.
pub fn cached(session: &Session, tests: Option<&[TestId]>) -> Option<Baseline> {
    let text = std::fs::read_to_string(cache_path(session, tests)).ok()?;
    serde_json::from_str::<Baseline>(&text).ok().filter(|b| b.version == BASELINE_VERSION)
}

/// Cache `b` as the baseline of `tests`.
pub fn store(session: &Session, tests: Option<&[TestId]>, b: &Baseline) -> Result<()> {
    fs::write_atomic(&cache_path(session, tests), serde_json::to_string_pretty(b)?.as_bytes())?;
    Ok(())
}

/// One untraced run of `tests` (all: `None`) in a fresh shadow copy. Every untraced
/// baseline run uses a copy at the same path and the same runner scratch, so build caches
/// keyed by them (cargo's target directory) serve the runs after the first.
pub fn plain_run(session: &Session, tests: Option<&[TestId]>, what: &str) -> Result<RunResult> {
    session.progress.step(format!("baseline: {what}"));
    let scratch = session.out.join("work").join("baseline");
    let tree = scratch.join("tree");
    std::fs::create_dir_all(&scratch).with_context(|| format!("failed to create {}", scratch.display()))?;
    tree::shadow_copy(&session.repo, &tree, carve_languages::skip_policy())?;
    let result = run_tests(session, &tree, tests.map(|t| t.to_vec()), &RunExtras::default(), &scratch.join("runner"))
        .with_context(|| format!("baseline {what} failed"));
    let _ = std::fs::remove_dir_all(&tree);
    result
}

/// Run the baseline (twice, untraced), or load it from the cache.
pub fn baseline(session: &Session, tests: Option<&[TestId]>, fresh: bool) -> Result<Baseline> {
    if !fresh {
        if let Some(b) = cached(session, tests) {
            return Ok(b);
        }
    }
    let first = plain_run(session, tests, "run 1 of 2")?;
    let second = plain_run(session, tests, "run 2 of 2")?;
    let out = Baseline::from_plain_runs(&session.tree_digest, &first, &second);
    store(session, tests, &out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::{Failed, Passed};
    use carve_languages::runner::TestOutcome;

    fn run(statuses: &[(&str, TestStatus)]) -> RunResult {
        let statuses = statuses
            .iter()
            .map(|(id, s)| (id.to_string(), TestOutcome { status: *s, duration_ms: None, message: None }))
            .collect();
        RunResult { statuses, ..RunResult::default() }
    }

    #[test]
    fn the_traced_run_is_the_second_run_and_reruns_tell_the_shim_from_flakiness() {
        let plain = run(&[("ok", Passed), ("shim", Passed), ("flip", Passed), ("late", Failed), ("bad", Failed)]);
        let traced = run(&[("ok", Passed), ("shim", Failed), ("flip", Failed), ("late", Passed), ("bad", Failed)]);
        // Only the tests that passed untraced and not traced are re-run traced; only those
        // that failed again are re-run untraced.
        let reruns =
            Reruns { traced: Some(run(&[("shim", Failed), ("flip", Passed)])), plain: Some(run(&[("shim", Passed)])) };
        let b = Baseline::from_plain_and_traced("d", &plain, &traced, &reruns);
        assert_eq!(b.second_run, SecondRun::Traced);
        assert_eq!(b.stable_passing(), BTreeSet::from(["ok".to_string()]));
        let e = &b.tests["shim"];
        assert!(e.shim_failure && !e.flaky, "{e:?}");
        assert_eq!((e.traced_rerun, e.plain_rerun), (Some(Failed), Some(Passed)));
        assert_eq!(b.shim_failures(), BTreeSet::from(["shim".to_string()]));
        let e = &b.tests["flip"];
        assert!(e.flaky && !e.shim_failure, "passed the traced re-run: flaky, not the shim: {e:?}");
        assert!(b.tests["late"].flaky, "failed untraced, passed traced");
        assert!(!b.tests["bad"].flaky && !b.tests["bad"].shim_failure);
        assert_eq!(b.counts()["failed only under the shim"], 1);
    }

    #[test]
    fn a_test_failing_traced_twice_and_untraced_once_more_is_flaky() {
        let plain = run(&[("t", Passed)]);
        let traced = run(&[("t", Failed)]);
        let reruns = Reruns { traced: Some(run(&[("t", Failed)])), plain: Some(run(&[("t", Failed)])) };
        let e = &Baseline::from_plain_and_traced("d", &plain, &traced, &reruns).tests["t"];
        assert!(e.flaky && !e.shim_failure, "{e:?}");
    }

    #[test]
    fn two_plain_runs_record_a_plain_second_run() {
        let b = Baseline::from_plain_runs(
            "d",
            &run(&[("a", Passed), ("b", Passed)]),
            &run(&[("a", Passed), ("b", Failed)]),
        );
        assert_eq!(b.second_run, SecondRun::Plain);
        assert!(b.tests["b"].flaky && !b.tests["b"].shim_failure);
        assert_eq!(b.stable_passing(), BTreeSet::from(["a".to_string()]));
        let json = serde_json::to_value(&b).unwrap();
        assert_eq!(json["second_run"], "plain");
        assert!(json["tests"]["a"].get("traced_rerun").is_none(), "{json}");
    }
}
