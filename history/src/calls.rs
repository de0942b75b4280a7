//! The verified call dependency of a chain (issue 10, beyond the paper): for each later stage,
//! which definitions that earlier stages added or changed its F2P tests actually execute at
//! S_(k+1), from a trace of those tests under the language's shim. A chain's "each later stage
//! builds on code an earlier stage added" is then measured, not only asserted by the mining
//! evidence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use carve_languages::runner::TestId;
use carve_languages::{DefinitionIndex, NodeId};

use crate::HistoryError;
use crate::mine::StageSummary;

/// Traces tests in a state's tree for the verified call dependency: the pipeline's trace
/// stage on a session opened on the tree with the chain's configuration, everything it writes
/// in a scratch folder.
pub struct StateTracer {
    scratch: tempfile::TempDir,
    config: PathBuf,
}

impl StateTracer {
    /// A tracer running the tests as `carve_toml` (the chain's `carve.toml`) says.
    pub fn new(carve_toml: &str) -> Result<StateTracer, HistoryError> {
        let scratch = tempfile::tempdir()
            .map_err(HistoryError::io("create a scratch folder for the stage traces in", &std::env::temp_dir()))?;
        let config = scratch.path().join("carve.toml");
        std::fs::write(&config, carve_toml).map_err(HistoryError::io("write", &config))?;
        Ok(StateTracer { scratch, config })
    }

    /// The union of the definitions `tests` execute in `tree`, by node id.
    pub fn executed(&self, tree: &Path, tests: &[TestId]) -> Result<BTreeSet<NodeId>, String> {
        // Messages name the tree and the scratch folder by role, not by their temporary paths,
        // so that a bundle is the same from run to run even when tracing fails.
        let out = tempfile::tempdir_in(self.scratch.path())
            .map_err(|e| plain_message(&e.to_string(), &[(self.scratch.path(), "<scratch>"), (tree, "<state>")]))?;
        // The run's own folder first: its random name is inside the scratch folder.
        let plain = |e: String| {
            plain_message(&e, &[(out.path(), "<scratch>/<run>"), (self.scratch.path(), "<scratch>"), (tree, "<state>")])
        };
        let session = carve_pipeline::Session::open(carve_pipeline::SessionOptions {
            repo: tree,
            out: Some(out.path()),
            config: Some(&self.config),
            python: None,
            timeout: None,
            test_timeout: None,
            jobs: None,
            repo_name: None,
        })
        .map_err(|e| plain(e.chain()))?;
        std::fs::create_dir_all(session.cache_dir()).map_err(|e| plain(e.to_string()))?;
        let run = carve_pipeline::trace::trace(&session, tests, carve_pipeline::trace::TraceMode::FirstHits, true)
            .map_err(|e| plain(e.chain()))?;
        Ok(tests.iter().filter_map(|t| run.trace.tests.get(t)).flat_map(|t| t.hits.iter().cloned()).collect())
    }
}

/// `message` with each of `paths` replaced by its label, in order (a folder inside another
/// comes before it).
fn plain_message(message: &str, paths: &[(&Path, &str)]) -> String {
    paths.iter().fold(message.to_string(), |m, (p, label)| m.replace(&p.display().to_string(), label))
}

/// What tracing a stage's F2P tests showed (`validation.json` and `chain.json`
/// `call_dependency`), typed in `carve_formats::chain`.
pub use carve_formats::chain::{CallCheck, CallDependency};

/// The non-test definitions of S_(k+1) (`after`) that stages before `k` added or changed, each
/// with the last such stage.
pub fn earlier_definitions(stages: &[StageSummary], k: usize, after: &DefinitionIndex) -> Vec<CallDependency> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (j, s) in stages[..k].iter().enumerate().rev() {
        for id in s.definitions_added.iter().chain(&s.definitions_modified) {
            if after.definitions.get(id).is_some_and(|d| !d.is_test) && seen.insert(id.clone()) {
                out.push(CallDependency::new(j, id.clone()));
            }
        }
    }
    out.sort();
    out
}

/// Stage `k`'s check: trace its F2P tests in `tree` (S_(k+1) with the stage's tests) with
/// `executed` (what [`StateTracer::executed`] gives) and keep the earlier stages' definitions
/// they execute.
pub fn check(
    executed: impl FnOnce(&Path, &[TestId]) -> Result<BTreeSet<NodeId>, String>,
    stages: &[StageSummary],
    k: usize,
    after: &DefinitionIndex,
    tree: &Path,
    f2p: &[TestId],
) -> CallCheck {
    let candidates = earlier_definitions(stages, k, after);
    match executed(tree, f2p) {
        Ok(hits) => {
            let earlier: Vec<CallDependency> =
                candidates.into_iter().filter(|c| hits.contains(&c.definition)).collect();
            CallCheck::traced(earlier)
        }
        Err(reason) => CallCheck::untraced(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(index: usize, added: &[&str], modified: &[&str]) -> StageSummary {
        StageSummary {
            index,
            commits: vec![format!("{index:040}")],
            title: format!("stage {index}"),
            definitions_added: added.iter().map(|s| s.to_string()).collect(),
            definitions_modified: modified.iter().map(|s| s.to_string()).collect(),
            tests_added: vec![],
            tests_modified: vec![],
            files: vec![],
            lines: 0,
            evidence: vec![],
        }
    }

    fn index_of(files: &[(&str, &str)]) -> DefinitionIndex {
        let dir = tempfile::tempdir().unwrap();
        carve_testutil::write_files(dir.path(), files);
        DefinitionIndex::build(dir.path(), &Default::default()).unwrap()
    }

    /// A tracer that saw `hits`, recording what it was asked to trace.
    struct Hits(BTreeSet<NodeId>, std::cell::RefCell<Vec<Vec<TestId>>>);
    impl Hits {
        fn executed(&self, _tree: &Path, tests: &[TestId]) -> Result<BTreeSet<NodeId>, String> {
            self.1.borrow_mut().push(tests.to_vec());
            Ok(self.0.clone())
        }
    }

    fn fails(_tree: &Path, _tests: &[TestId]) -> Result<BTreeSet<NodeId>, String> {
        Err("no shim".into())
    }

    #[test]
    fn a_stage_verifies_only_what_earlier_stages_added_or_changed_and_its_tests_executed() {
        let after = index_of(&[
            (
                "pkg/core.py",
                "def base():\n    return 1\n\ndef extended():\n    return base() + 1\n\ndef newest():\n    return extended()\n",
            ),
            (
                "tests/test_core.py",
                "from pkg.core import newest\n\ndef helper():\n    return 2\n\ndef test_newest():\n    assert newest() == 2\n",
            ),
        ]);
        let stages = vec![
            // Stage 0 added `base` and a test helper (test code never counts).
            stage(0, &["pkg/core.py::base", "tests/test_core.py::helper"], &[]),
            // Stage 1 added `extended` and changed `base`: `base` counts once, for stage 1.
            stage(1, &["pkg/core.py::extended"], &["pkg/core.py::base"]),
            stage(2, &["pkg/core.py::newest"], &[]),
        ];
        let cands = earlier_definitions(&stages, 2, &after);
        assert_eq!(
            cands,
            vec![
                CallDependency::new(1, "pkg/core.py::base".into()),
                CallDependency::new(1, "pkg/core.py::extended".into()),
            ]
        );
        // The trace saw `newest` (stage 2's own) and `extended`, not `base`.
        let tracer = Hits(
            ["pkg/core.py::newest", "pkg/core.py::extended", "tests/test_core.py::test_newest"]
                .map(String::from)
                .into(),
            Default::default(),
        );
        let f2p = vec!["tests/test_core.py::test_newest".to_string()];
        let got = check(|t, f| tracer.executed(t, f), &stages, 2, &after, Path::new("/nonexistent"), &f2p);
        assert_eq!(got.earlier, vec![CallDependency::new(1, "pkg/core.py::extended".into())]);
        assert_eq!((got.traced, got.verified, got.reason), (true, true, None));
        assert_eq!(tracer.1.borrow().as_slice(), &[f2p.clone()], "the stage's F2P tests are what is traced");
        // Stage 1's tests executing nothing of stage 0: traced, not verified.
        let none = Hits(BTreeSet::new(), Default::default());
        let nothing = check(|t, f| none.executed(t, f), &stages, 1, &after, Path::new("/nonexistent"), &f2p);
        assert_eq!((nothing.traced, nothing.verified, nothing.reason), (true, false, None));
        assert!(nothing.earlier.is_empty());
        let failed = check(fails, &stages, 1, &after, Path::new("/nonexistent"), &f2p);
        assert_eq!((failed.traced, failed.verified, failed.reason.as_deref()), (false, false, Some("no shim")));
        assert!(failed.earlier.is_empty());
    }

    /// Regression (unjs/pathe `resolve-alias`, built twice): a failed stage trace's message
    /// named the run's random folder inside the scratch folder (`<scratch>/.tmp1RZamW/work/…`),
    /// so `chain.json` differed from run to run; the run's folder is replaced first.
    #[test]
    fn trace_messages_name_no_temporary_folder() {
        let (scratch, run, tree) = (Path::new("/tmp/.tmpA"), Path::new("/tmp/.tmpA/.tmpB"), Path::new("/tmp/s1-after"));
        let m = "no trace files in /tmp/.tmpA/.tmpB/work/trace (config /tmp/.tmpA/carve.toml, tree /tmp/s1-after)";
        assert_eq!(
            plain_message(m, &[(run, "<scratch>/<run>"), (scratch, "<scratch>"), (tree, "<state>")]),
            "no trace files in <scratch>/<run>/work/trace (config <scratch>/carve.toml, tree <state>)"
        );
    }
}
