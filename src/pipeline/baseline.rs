//! Baseline: run the suite (twice) in a shadow copy and record one status per test id;
//! a test whose status differs between the runs is flaky and never used as F2P or P2P.
//! Results are cached under the output folder, keyed by the tree's content and settings.

use anyhow::{Context, Result};
use carve_languages::runner::TestStatus;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

use super::run::{RunExtras, run_tests};
use super::{Session, TestId};
use crate::workspace;

pub const BASELINE_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineEntry {
    pub status: TestStatus,
    /// Status in the second run.
    pub second: TestStatus,
    pub flaky: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    pub tree_digest: String,
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

    pub fn known(&self) -> BTreeSet<TestId> {
        self.tests.keys().cloned().collect()
    }

    pub fn counts(&self) -> BTreeMap<String, usize> {
        let mut c = BTreeMap::new();
        for e in self.tests.values() {
            *c.entry(format!("{:?}", e.status).to_lowercase()).or_insert(0) += 1;
        }
        c.insert("flaky".into(), self.tests.values().filter(|e| e.flaky).count());
        c
    }
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

/// Run the baseline (twice), or load it from the cache.
pub fn baseline(session: &Session, tests: Option<&[TestId]>, fresh: bool) -> Result<Baseline> {
    let cache = session.cache_dir().join(format!("baseline-{}.json", cache_key(session, tests)));
    if !fresh && cache.is_file() {
        let text = std::fs::read_to_string(&cache)?;
        if let Ok(b) = serde_json::from_str::<Baseline>(&text) {
            if b.version == BASELINE_VERSION {
                return Ok(b);
            }
        }
    }
    let mut runs = Vec::new();
    // Both runs use a fresh copy at the same path and the same runner scratch, so build
    // caches keyed by them (cargo's target directory) serve the second run.
    let scratch = session.scratch("baseline")?;
    let tree = scratch.join("tree");
    for round in 1..=2 {
        session.progress.step(format!("baseline: run {round} of 2"));
        workspace::shadow_copy(&session.repo, &tree)?;
        let result =
            run_tests(session, &tree, tests.map(|t| t.to_vec()), &RunExtras::default(), &scratch.join("runner"))
                .with_context(|| format!("baseline run {round} failed"))?;
        runs.push(result);
    }
    let _ = std::fs::remove_dir_all(&tree);
    let mut out = Baseline {
        version: BASELINE_VERSION,
        tree_digest: session.tree_digest.clone(),
        tests: BTreeMap::new(),
        warnings: Vec::new(),
    };
    let ids: BTreeSet<&TestId> = runs.iter().flat_map(|r| r.statuses.keys()).collect();
    for id in ids {
        let first = runs[0].statuses.get(id);
        let second = runs[1].statuses.get(id);
        let s1 = first.map(|o| o.status).unwrap_or(TestStatus::Missing);
        let s2 = second.map(|o| o.status).unwrap_or(TestStatus::Missing);
        let message = first.and_then(|o| o.message.clone()).or_else(|| second.and_then(|o| o.message.clone()));
        out.tests.insert(id.clone(), BaselineEntry { status: s1, second: s2, flaky: s1 != s2, message });
    }
    if out.tests.is_empty() {
        out.warnings.push("the runner reported no tests".into());
    }
    workspace::write_atomic(&cache, serde_json::to_string_pretty(&out)?.as_bytes())?;
    Ok(out)
}
