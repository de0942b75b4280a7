//! Baseline: run the suite (twice) in a shadow copy and record one status per test id;
//! a test whose status differs between the runs is flaky and never used as F2P or P2P.
//! Results are cached under the output folder, keyed by the tree's content and settings.

use anyhow::{Context, Result};
use carve_languages::runner::{RunRequest, RunResult, TestStatus};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

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

/// Extra settings of one run (for the traced run: the shim's environment and plugin).
#[derive(Default, Clone)]
pub struct RunExtras {
    pub env: Vec<(String, String)>,
    pub pythonpath: Vec<PathBuf>,
    pub args: Vec<String>,
}

/// Run tests of `tree` (a shadow copy) through the project's runner.
pub fn run_tests(
    session: &Session,
    tree: &Path,
    tests: Option<Vec<TestId>>,
    extras: &RunExtras,
    scratch: &Path,
) -> Result<RunResult> {
    let cfg = &session.config;
    let request = RunRequest {
        root: tree.to_path_buf(),
        command: cfg.test.clone(),
        tests,
        env: extras.env.clone(),
        pythonpath_prepend: extras.pythonpath.clone(),
        extra_args: extras.args.clone(),
        timeout: Duration::from_secs(cfg.timeouts.run),
        test_timeout: Duration::from_secs(cfg.timeouts.test),
        scratch: scratch.to_path_buf(),
    };
    let result = carve_languages::run_tests(&request).map_err(|e| {
        let hint = cfg.setup.as_deref().map(|s| format!(" (set-up command: `{s}`)")).unwrap_or_default();
        anyhow::anyhow!("{e}{hint}")
    })?;
    // Test files that cannot import a module usually mean dependencies are not installed.
    if let Some((file, err)) =
        result.collection_errors.iter().find(|(_, e)| e.contains("No module named") || e.contains("Cannot find module"))
    {
        let setup =
            cfg.setup.as_deref().map(|s| format!(": run `{s}` in {}", session.repo.display())).unwrap_or_default();
        session.progress.note(format!(
            "warning: {file} could not be loaded ({err}); the project's dependencies may not be installed{setup}"
        ));
    }
    if let Some(t) = &result.timed_out {
        session
            .progress
            .note(format!("warning: test {t} hung and was killed after its timeout (with its process group)"));
    }
    if result.crashed {
        session.progress.note(format!(
            "warning: the test process crashed during `{}`; tests it did not finish are reported as errors",
            result.command_line
        ));
    }
    Ok(result)
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
