//! Validation: a task is kept only if every state behaves. Baseline: every F2P and P2P
//! test passes and is not flaky. Masked: P2P pass; F2P (added back by the test patch) fail,
//! error or disappear. Restored (gold + test patch applied to the masked state with
//! `git apply`): everything passes again; its tree's digest must be the original's, and
//! when it is (and the baseline is at hand, as in `carve tasks`) the state is not run: the
//! baseline ran those bytes twice, so its statuses are the baseline's, recorded as such.
//! Level 2: the reference `agent_code` passes the rewritten F2P tests, an empty one fails
//! them. Per-test statuses go to `validation.json`.
//! The states of each level are one table ([`LEVEL1`], [`LEVEL2`]) that `carve tasks` and
//! `carve validate` both run.

use crate::error::bail;
use crate::{Context, Result};
use carve_formats::instance::Instance;
use carve_languages::runner::TestStatus;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::baseline::Baseline;
use crate::classify::Feature;
use crate::extract::{Extraction, Level2Package, write_empty_agent_code};
use crate::image_runs::Runtime;
use crate::leakage::LeakageInputs;
use crate::runs::{RunExtras, run_tests};
use crate::{Session, SessionOptions, TestId};
use carve_core::tree;

/// Version of a task's `validation.json` (`carve_formats::validation::VERSION`).
pub const VALIDATION_VERSION: u32 = carve_formats::validation::VERSION;

/// `validation.json` and its states: typed in `carve_formats::validation`.
pub use carve_formats::validation::{StateResult, Validation};

/// Apply a git-style patch inside `dir` with `git apply` (not discovering any enclosing
/// repository).
/// A patch named `-NAME` is applied in reverse (`git apply -R`).
pub fn apply_patch(dir: &Path, patch: &str, what: &str) -> Result<()> {
    if patch.trim().is_empty() {
        return Ok(());
    }
    let (reverse, what) = match what.strip_prefix('-') {
        Some(w) => (true, w),
        None => (false, what),
    };
    let file = dir.with_extension(format!("{what}.patch"));
    match carve_core::patch::apply_patch(dir, patch, reverse, &file) {
        Err(e @ carve_core::patch::PatchError::DoesNotApply { .. }) => {
            let how = if reverse { " in reverse" } else { "" };
            bail!("{what}.patch does not apply{how} in {}: {}", dir.display(), e.git_message())
        }
        applied => Ok(applied?),
    }
}

pub fn baseline_state(baseline: &Baseline, f2p: &BTreeSet<TestId>, p2p: &BTreeSet<TestId>) -> StateResult {
    let mut problems = Vec::new();
    let mut statuses = BTreeMap::new();
    for t in f2p.iter().chain(p2p) {
        match baseline.tests.get(t) {
            Some(e) => {
                statuses.insert(t.clone(), e.status);
                if e.flaky {
                    problems.push(format!("{t} is flaky"));
                } else if e.status != TestStatus::Passed {
                    problems.push(format!("{t} is {:?} at baseline", e.status));
                }
            }
            None => {
                statuses.insert(t.clone(), TestStatus::Missing);
                problems.push(format!("{t} was not run at baseline"));
            }
        }
    }
    let ok = problems.is_empty();
    StateResult::new("baseline".into(), "every F2P and P2P test passes, none is flaky".into(), ok, problems, statuses)
}

/// Run `tests` in `tree` and judge them: `must_pass` or must fail (at most `threshold` of
/// them may pass).
pub fn run_state(
    session: &Session,
    state: &str,
    tree: &Path,
    tests: &BTreeSet<TestId>,
    must_pass: bool,
    threshold: f64,
    scratch: &Path,
) -> Result<StateResult> {
    session.progress.step(format!("validate: {state}"));
    let result = match run_tests(session, tree, Some(tests.iter().cloned().collect()), &RunExtras::default(), scratch) {
        Ok(r) => r,
        // A state whose tests cannot even be collected (a test configuration naming what the
        // mask removed: `filterwarnings = ignore::pkg.warnings.W`): every test errors with the
        // runner's last error line, so that a load repair can read what it names.
        Err(e) => match collection_error_line(&e) {
            Some(line) => {
                let message = format!("could not collect the tests: {line}");
                let outcomes = tests.iter().map(|t| (t, TestStatus::Error, Some(message.as_str())));
                return Ok(judge(state, outcomes, must_pass, threshold));
            }
            None => return Err(e),
        },
    };
    let outcomes = tests.iter().map(|t| {
        let outcome = result.statuses.get(t);
        (t, outcome.map_or(TestStatus::Missing, |o| o.status), outcome.and_then(|o| o.message.as_deref()))
    });
    Ok(judge(state, outcomes, must_pass, threshold))
}

/// The last line of a collection failure's output that names an error (`AttributeError: module
/// 'pkg.warnings' has no attribute 'W'`), when `e` is one.
fn collection_error_line(e: &crate::Error) -> Option<String> {
    let tail = e.run_failed()?.collection_tail.as_deref()?;
    tail.lines().rev().map(str::trim).find(|l| l.contains("Error: ") || l.contains("Error(")).map(str::to_string)
}

/// The statuses of a state whose tree is byte-identical to the original: the baseline's
/// (its first run's, with its message), judged as a run of the state would be.
fn baseline_statuses(
    state: &str,
    baseline: &Baseline,
    tests: &BTreeSet<TestId>,
    must_pass: bool,
    threshold: f64,
) -> StateResult {
    let outcomes = tests.iter().map(|t| {
        let entry = baseline.tests.get(t);
        (t, entry.map_or(TestStatus::Missing, |e| e.status), entry.and_then(|e| e.message.as_deref()))
    });
    judge(state, outcomes, must_pass, threshold)
}

/// What a test must do in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Pass,
    /// Fail, error, be skipped or be missing: anything but pass.
    NotPass,
}

impl Expect {
    pub fn holds(self, status: TestStatus) -> bool {
        (status == TestStatus::Passed) == (self == Expect::Pass)
    }
}

/// The tests of `tests`, in order, whose status in `statuses` (`missing` when it has none)
/// breaks `expect`, each with that status.
pub fn unmet<'a>(
    statuses: &BTreeMap<TestId, TestStatus>,
    tests: impl IntoIterator<Item = &'a TestId>,
    expect: Expect,
) -> Vec<(&'a TestId, TestStatus)> {
    tests
        .into_iter()
        .map(|t| (t, statuses.get(t).copied().unwrap_or(TestStatus::Missing)))
        .filter(|(_, s)| !expect.holds(*s))
        .collect()
}

/// Judge the outcomes (test, status, message) of a state: `must_pass`, or must fail (at
/// most `threshold` of them may pass).
fn judge<'a>(
    state: &str,
    outcomes: impl Iterator<Item = (&'a TestId, TestStatus, Option<&'a str>)>,
    must_pass: bool,
    threshold: f64,
) -> StateResult {
    let mut statuses = BTreeMap::new();
    let mut problems = Vec::new();
    let mut messages = BTreeMap::new();
    for (t, status, msg) in outcomes {
        statuses.insert(t.clone(), status);
        if must_pass && !Expect::Pass.holds(status) {
            let msg = msg.unwrap_or_default();
            problems.push(format!("{t} is {status:?}, expected passed {msg}").trim_end().to_string());
            if !msg.is_empty() {
                messages.insert(t.clone(), msg.to_string());
            }
        }
    }
    let expect;
    if must_pass {
        expect = "every test passes".to_string();
    } else {
        expect = format!("F2P tests fail, error or disappear (at most {:.0}% may pass)", threshold * 100.0);
        let passed: Vec<&TestId> = statuses.iter().filter(|(_, s)| **s == TestStatus::Passed).map(|(t, _)| t).collect();
        let allowed = (threshold * statuses.len() as f64).floor() as usize;
        if passed.len() > allowed {
            problems.push(format!(
                "{} of {} F2P tests still pass (first: {}); the masked code does not remove what they test",
                passed.len(),
                statuses.len(),
                passed[0]
            ));
        }
    }
    let ok = problems.is_empty();
    let mut result = StateResult::new(state.into(), expect, ok, problems, statuses);
    result.messages = messages;
    result
}

/// A fresh copy of `src` at `dest` with patches applied in order.
pub fn prepare_state(src: &Path, dest: &Path, patches: &[(&str, &str)]) -> Result<()> {
    tree::shadow_copy(src, dest, carve_languages::skip_policy())?;
    for (name, patch) in patches {
        apply_patch(dest, patch, name)?;
    }
    Ok(())
}

/// A patch of the task, applied to the masked state to make a state.
#[derive(Debug, Clone, Copy)]
pub enum Patch {
    Gold,
    Test,
}

/// Which of the task's tests a state runs.
#[derive(Debug, Clone, Copy)]
pub enum Tests {
    F2p,
    P2p,
    All,
}

/// One state of a level: the masked state with `patches` applied (and, for Level 2, an
/// empty `agent_code` where the solution goes), the tests it runs and what they must do.
pub struct StateSpec {
    pub name: &'static str,
    /// Folder of the state's tree (and, with a `run-` prefix, of its runner scratch).
    pub dir: &'static str,
    pub patches: &'static [Patch],
    pub empty_agent_code: bool,
    pub tests: Tests,
    /// Every test passes; else the F2P tests fail, error or disappear.
    pub must_pass: bool,
    /// The tree is the original again, byte for byte (checked where its digest is known).
    pub is_original: bool,
}

/// Level 1: P2P pass on the masked state; the F2P tests added back fail; gold and test
/// patches applied, everything passes and the tree is the original again.
pub const LEVEL1: &[StateSpec] = &[
    StateSpec {
        name: "masked",
        dir: "masked",
        patches: &[],
        empty_agent_code: false,
        tests: Tests::P2p,
        must_pass: true,
        is_original: false,
    },
    StateSpec {
        name: "masked+tests",
        dir: "masked-tests",
        patches: &[Patch::Test],
        empty_agent_code: false,
        tests: Tests::F2p,
        must_pass: false,
        is_original: false,
    },
    StateSpec {
        name: "restored",
        dir: "restored",
        patches: &[Patch::Gold, Patch::Test],
        empty_agent_code: false,
        tests: Tests::All,
        must_pass: true,
        is_original: true,
    },
];

/// Level 2: the reference `agent_code` passes the rewritten F2P tests; an empty one fails them.
pub const LEVEL2: &[StateSpec] = &[
    StateSpec {
        name: "level2-reference",
        dir: "l2-reference",
        patches: &[Patch::Gold, Patch::Test],
        empty_agent_code: false,
        tests: Tests::F2p,
        must_pass: true,
        is_original: false,
    },
    StateSpec {
        name: "level2-empty",
        dir: "l2-empty",
        patches: &[Patch::Test],
        empty_agent_code: true,
        tests: Tests::F2p,
        must_pass: false,
        is_original: false,
    },
];

/// The table of `level` (1 or 2).
pub fn level_states(level: u8) -> &'static [StateSpec] {
    if level == 2 { LEVEL2 } else { LEVEL1 }
}

/// What the states of a level are made from.
pub struct TaskTrees<'a> {
    pub masked: &'a Path,
    pub gold_patch: &'a str,
    pub test_patch: &'a str,
    pub f2p: &'a BTreeSet<TestId>,
    pub p2p: &'a BTreeSet<TestId>,
    /// The digest of the original tree, for the states that must restore it.
    pub original_digest: Option<&'a str>,
    /// The baseline of the original tree: a state that restores it byte for byte is not
    /// run, its statuses are the baseline's. `None`: every state runs.
    pub baseline: Option<&'a Baseline>,
    /// The language of the Level 2 package.
    pub language: carve_languages::Language,
}

/// Prepare and run every state of `states` in `dir`, pushing each result into `v` in the
/// order of `states`. Every tree is prepared (and a restored tree's digest taken) before any
/// test runs; the states that must run then run two at a time when the session allows two
/// jobs (each has its own tree and scratch folder).
pub fn run_level(
    session: &Session,
    states: &[StateSpec],
    trees: &TaskTrees<'_>,
    threshold: f64,
    dir: &Path,
    v: &mut Validation,
) -> Result<()> {
    let all: BTreeSet<TestId> = trees.f2p.union(trees.p2p).cloned().collect();
    struct Prepared<'s> {
        spec: &'s StateSpec,
        tree: PathBuf,
        run: PathBuf,
        tests: &'s BTreeSet<TestId>,
        restored_digest: Option<String>,
        identical: bool,
    }
    let mut prepared = Vec::new();
    for spec in states {
        let tree = dir.join(format!("state-{}", spec.dir));
        let patches: Vec<(&str, &str)> = spec
            .patches
            .iter()
            .map(|p| match p {
                Patch::Gold => ("gold", trees.gold_patch),
                Patch::Test => ("test", trees.test_patch),
            })
            .collect();
        prepare_state(trees.masked, &tree, &patches)?;
        if spec.empty_agent_code {
            write_empty_agent_code(session, &tree, trees.language, trees.gold_patch)?;
        }
        let tests = match spec.tests {
            Tests::F2p => trees.f2p,
            Tests::P2p => trees.p2p,
            Tests::All => &all,
        };
        let run = dir.join(format!("run-{}", spec.dir));
        // The tree as patched, before its tests run: a suite that writes into its working
        // directory (junit.xml, coverage reports) must not count against the restore.
        let restored_digest = match (spec.is_original, trees.original_digest) {
            (true, Some(_)) => Some(tree::tree_digest(&tree, carve_languages::skip_policy())?),
            _ => None,
        };
        let identical = restored_digest.is_some() && restored_digest.as_deref() == trees.original_digest;
        prepared.push(Prepared { spec, tree, run, tests, restored_digest, identical });
    }
    let runs_state = |p: &Prepared<'_>| !(p.identical && trees.baseline.is_some());
    let run_one =
        |p: &Prepared<'_>| run_state(session, p.spec.name, &p.tree, p.tests, p.spec.must_pass, threshold, &p.run);
    let mut results: Vec<Option<Result<StateResult>>> = prepared.iter().map(|_| None).collect();
    let to_run: Vec<usize> = (0..prepared.len()).filter(|&i| runs_state(&prepared[i])).collect();
    for (i, r) in to_run.iter().zip(session.map_two_at_a_time(&to_run, |&i| run_one(&prepared[i]))) {
        results[*i] = Some(r);
    }
    for (p, result) in prepared.iter().zip(results) {
        let spec = p.spec;
        let mut state = match (result, trees.baseline) {
            (Some(r), _) => r?,
            // The same bytes as the tree the baseline ran twice: running it again proves nothing new.
            (None, Some(b)) => {
                session.progress.step(format!("validate: {} (byte-identical to the original: not re-run)", spec.name));
                let mut state = baseline_statuses(spec.name, b, p.tests, spec.must_pass, threshold);
                state.statuses_from = Some(
                    "baseline: the tree is byte-identical to the original (tree_digest), so it was not run again"
                        .into(),
                );
                state
            }
            (None, None) => unreachable!("a state without a baseline always runs"),
        };
        if let (Some(restored), Some(_)) = (&p.restored_digest, trees.original_digest) {
            if !p.identical {
                state.ok = false;
                let diffs =
                    tree::tree_differences(&session.repo, &p.tree, carve_languages::skip_policy()).unwrap_or_default();
                let named: Vec<String> = diffs
                    .iter()
                    .take(5)
                    .map(|(how, rel)| match *how {
                        "only in a" => format!("{rel} is missing"),
                        "only in b" => format!("{rel} is extra"),
                        _ => format!("{rel} differs"),
                    })
                    .collect();
                let more = if diffs.len() > 5 { format!(" and {} more", diffs.len() - 5) } else { String::new() };
                state.problems.push(format!(
                    "masked + gold.patch + test.patch is not byte-identical to the original tree (digest {restored}): {}{more}",
                    if named.is_empty() { "no file differs by content or name (the trees could not be compared)".to_string() } else { named.join(", ") }
                ));
            }
        }
        state.tree_digest = p.restored_digest.clone();
        v.push(state);
        let _ = std::fs::remove_dir_all(&p.tree);
    }
    Ok(())
}

/// A task bundle as `carve validate` and `carve workspace` read it.
pub struct Bundle {
    pub instance: Instance,
    pub f2p: BTreeSet<TestId>,
    pub p2p: BTreeSet<TestId>,
    pub level: u8,
    pub mask_patch: String,
    pub gold_patch: String,
    pub test_patch: String,
    /// Original F2P tests -> masked state (the Level 1 test patch).
    pub f2p_tests_patch: String,
    pub contract_json: String,
    pub extracted: BTreeSet<String>,
}

impl Bundle {
    pub fn read(bundle_dir: &Path) -> Result<Bundle> {
        let inst_path = bundle_dir.join("instance.json");
        let text = std::fs::read_to_string(&inst_path)
            .with_context(|| format!("{} is not a task bundle (no instance.json)", bundle_dir.display()))?;
        let inst: Instance = carve_formats::from_str(&text, &inst_path)?;
        let read = |name: &str| {
            std::fs::read_to_string(bundle_dir.join(name))
                .with_context(|| format!("bundle {} lacks {name}", bundle_dir.display()))
        };
        let test_patch = read("test.patch")?;
        // mask.patch leaves the F2P tests in place; the Level 1 test patch in reverse takes
        // them out (for Level 2 bundles, test.patch adds the rewritten tests instead).
        let f2p_tests_patch = inst.carve.f2p_tests_patch.clone().unwrap_or_else(|| test_patch.clone());
        Ok(Bundle {
            f2p: inst.fail_to_pass.iter().cloned().collect(),
            p2p: inst.pass_to_pass.iter().cloned().collect(),
            level: inst.level,
            mask_patch: read("mask.patch")?,
            gold_patch: read("gold.patch")?,
            test_patch,
            f2p_tests_patch,
            contract_json: read("contract.json").unwrap_or_default(),
            extracted: inst.carve.extracted.iter().cloned().collect(),
            instance: inst,
        })
    }

    /// The masked state, rebuilt from the repository at `dest`.
    /// The masked state from the repository: `mask.patch` takes the F2P tests out too; in
    /// bundles of earlier versions it left them in place and the Level 1 test patch in
    /// reverse took them out (for Level 2 bundles, test.patch adds the rewritten tests).
    pub fn rebuild_masked(&self, session: &Session, dest: &Path) -> Result<()> {
        if self.instance.carve.mask_removes_f2p_tests {
            prepare_state(&session.repo, dest, &[("mask", &self.mask_patch)])
        } else {
            prepare_state(&session.repo, dest, &[("mask", &self.mask_patch), ("-test", &self.f2p_tests_patch)])
        }
    }

    /// The leakage check's view of the bundle.
    pub fn leakage_inputs<'a>(&'a self, session: &'a Session) -> LeakageInputs<'a> {
        LeakageInputs {
            index: &session.index,
            extracted: &self.extracted,
            gold_patch: &self.gold_patch,
            test_patch: &self.f2p_tests_patch,
            contract_json: &self.contract_json,
        }
    }

    /// The workspace tree id the bundle was emitted with, if recorded.
    pub fn workspace_tree(&self) -> Option<&str> {
        self.instance.carve.workspace.as_ref().map(|w| w.tree.as_str())
    }
}

/// A session over `repo` with its scratch under `out` (a temporary folder when `None`, kept
/// alive by the returned guard).
pub fn bundle_session(repo: &Path, python: Option<&Path>, out: Option<&Path>) -> Result<(Session, tempfile::TempDir)> {
    let scratch_root = tempfile::tempdir()?;
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| scratch_root.path().to_path_buf());
    let session = Session::open(SessionOptions {
        repo,
        out: Some(&out),
        config: None,
        python,
        timeout: None,
        test_timeout: None,
        jobs: None,
        repo_name: None,
    })?;
    Ok((session, scratch_root))
}

/// `carve validate BUNDLE --repo REPO`: rebuild the masked state from the repository and
/// `mask.patch`, check its workspace for leakage, then re-run the baseline and every state
/// of the bundle's level, on this machine or (`Runtime::Oci`) each run inside the image the
/// bundle names (built from its Dockerfile when missing).
pub fn validate_bundle(
    bundle_dir: &Path,
    repo: &Path,
    python: Option<&Path>,
    out: Option<&Path>,
    runtime: Runtime,
) -> Result<Validation> {
    let bundle = Bundle::read(bundle_dir)?;
    let (mut session, _scratch) = bundle_session(repo, python, out)?;
    if runtime == Runtime::Oci {
        let image = crate::env::image::bundle_runtime(bundle_dir, &session.repo, &session.progress)?;
        session.progress.note(format!("running the tests in the image {} ({})", image.image, image.engine.kind()));
        session.image = Some(std::sync::Arc::new(image));
    }
    let dir = session.scratch("validate")?;
    let masked = dir.join("masked");
    bundle.rebuild_masked(&session, &masked)?;
    let threshold = 0.0;
    let mut v = Validation::new(threshold);
    let all: BTreeSet<TestId> = bundle.f2p.union(&bundle.p2p).cloned().collect();
    let orig = dir.join("original");
    prepare_state(&session.repo, &orig, &[])?;
    v.push(run_state(&session, "baseline", &orig, &all, true, threshold, &dir.join("run-base"))?);
    let trees = TaskTrees {
        masked: &masked,
        gold_patch: &bundle.gold_patch,
        test_patch: &bundle.test_patch,
        f2p: &bundle.f2p,
        p2p: &bundle.p2p,
        // The independent re-check compares the restored tree with the repository it is
        // given, and still runs every state (its baseline is one run, not a proof).
        original_digest: Some(&session.tree_digest),
        baseline: None,
        language: session.config.language,
    };
    run_level(&session, level_states(bundle.level), &trees, threshold, &dir, &mut v)?;
    let mut inputs = bundle.leakage_inputs(&session);
    let level1_gold;
    if bundle.level == 2 {
        // What leaks is the feature's own code, Level 1's gold patch, as `carve tasks` checked
        // it: Level 2's gold patch is the package, which may copy the feature's files whole
        // (TypeScript), with the parts the project keeps.
        let files = carve_core::patch::patch_paths(&bundle.mask_patch)
            .into_iter()
            .filter(|f| !session.index.files.get(f).is_some_and(|f| f.is_test))
            .collect();
        level1_gold = carve_core::patch::unified_diff(&masked, &session.repo, &files)?;
        inputs.gold_patch = &level1_gold;
    }
    check_workspace(&session, &masked, &inputs, &dir, &mut v)?;
    if let (Some(expected), Some(ws)) = (bundle.workspace_tree(), v.workspace.as_ref()) {
        if expected != ws.tree {
            v.valid = false;
            if let Some(l) = v.leakage.as_mut() {
                l.ok = false;
                l.problems.push(format!(
                    "the workspace rebuilt from the repository has tree {}, the bundle was made with {expected}: the repository is not the one the bundle was made from",
                    ws.tree
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(v)
}

/// Validate Level 1 of an extraction: the baseline state, then the [`LEVEL1`] states.
pub fn validate_level1(
    session: &Session,
    baseline: &Baseline,
    feature: &Feature,
    ext: &Extraction,
    threshold: f64,
    dir: &Path,
) -> Result<Validation> {
    let mut v = Validation::new(threshold);
    v.push(baseline_state(baseline, &feature.f2p, &feature.p2p));
    if !v.valid {
        return Ok(v);
    }
    let trees = TaskTrees {
        masked: &ext.masked,
        gold_patch: &ext.gold_patch,
        test_patch: &ext.test_patch,
        f2p: &feature.f2p,
        p2p: &feature.p2p,
        original_digest: Some(&session.tree_digest),
        baseline: Some(baseline),
        language: ext.contract.language,
    };
    run_level(session, LEVEL1, &trees, threshold, dir, &mut v)?;
    let contract_json = serde_json::to_string_pretty(&ext.contract)?;
    let inputs = LeakageInputs {
        index: &session.index,
        extracted: &ext.extracted,
        gold_patch: &ext.gold_patch,
        test_patch: &ext.test_patch,
        contract_json: &contract_json,
    };
    check_workspace(session, &ext.masked, &inputs, dir, &mut v)?;
    Ok(v)
}

/// Write the agent's workspace of `masked` into `<dir>/workspace`, check it for leakage,
/// record both in `v`, and remove it again.
pub fn check_workspace(
    session: &Session,
    masked: &Path,
    inputs: &LeakageInputs<'_>,
    dir: &Path,
    v: &mut Validation,
) -> Result<()> {
    session.progress.step("validate: workspace leakage");
    let ws_dir = dir.join("workspace");
    if ws_dir.exists() {
        std::fs::remove_dir_all(&ws_dir)?;
    }
    let ws = crate::agent_workspace::write(masked, &session.repo, &ws_dir)?;
    let check = crate::leakage::check(&ws_dir, inputs)?;
    let _ = std::fs::remove_dir_all(&ws_dir);
    v.set_leakage(ws, check);
    Ok(())
}

/// Validate Level 2 of an extraction: the [`LEVEL2`] states.
pub fn validate_level2(
    session: &Session,
    feature: &Feature,
    ext: &Extraction,
    package: &Level2Package,
    threshold: f64,
    dir: &Path,
) -> Result<Validation> {
    let mut v = Validation::new(threshold);
    let trees = TaskTrees {
        masked: &ext.masked,
        gold_patch: &package.gold_patch,
        test_patch: &package.test_patch,
        f2p: &feature.f2p,
        p2p: &feature.p2p,
        original_digest: None,
        baseline: None,
        language: ext.contract.language,
    };
    run_level(session, LEVEL2, &trees, threshold, dir, &mut v)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::{Failed, Passed};

    #[test]
    fn unmet_expectations_name_each_test_with_its_status() {
        let statuses = BTreeMap::from([("a".to_string(), Passed), ("b".to_string(), Failed)]);
        let tests = ["a", "b", "c"].map(String::from);
        let unmet_pass: Vec<(&TestId, TestStatus)> = unmet(&statuses, &tests, Expect::Pass);
        assert_eq!(unmet_pass, [(&tests[1], Failed), (&tests[2], TestStatus::Missing)], "a test not run is missing");
        assert_eq!(unmet(&statuses, &tests, Expect::NotPass), [(&tests[0], Passed)]);
    }
}
