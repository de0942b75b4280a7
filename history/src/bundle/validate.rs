//! `carve arc validate`: a chain bundle re-checked against the repository it was built from.
//! The workspace is the final commit with `s0.patch` applied; each stage's gate runs its F2P
//! and P2P tests before and after its gold patch, the chain gate runs the chain suite before
//! the first gold patch and on the final workspace, all through the pipeline's test runs and
//! judged as the pipeline judges a state's tests against what they must do
//! (`carve_pipeline::validate::unmet`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_languages::runner::{TestCommand, TestId, TestStatus};
use carve_pipeline::runs::{RunExtras, TestRuns};
use carve_pipeline::validate::{Expect, unmet};

use super::gates::Files;
use super::{ChainFile, GateCheck};
use crate::HistoryError;
use crate::states::git;

/// Re-check a bundle against the repository it was built from: the workspace (the final
/// commit with `s0.patch`) fails every stage's F2P before its gold patch and passes its gate
/// after; the final workspace passes the chain gate.
pub fn validate(
    bundle: &Path,
    repo: &Path,
    test: &TestCommand,
    timeouts: (Duration, Duration),
) -> Result<Vec<GateCheck>, HistoryError> {
    let berr = |message: String| HistoryError::Bundle { path: bundle.to_path_buf(), message };
    let chain = read_chain(bundle)?;
    let scratch =
        tempfile::tempdir().map_err(HistoryError::io("create a scratch directory in", &std::env::temp_dir()))?;
    // git runs in the scratch directory: a relative repository path must not be read from there.
    let repo =
        &repo.canonicalize().map_err(|e| berr(format!("the repository {} cannot be read: {e}", repo.display())))?;
    let ws = workspace(bundle, repo, &chain, scratch.path())?;
    let runs = scratch.path().join("runs");
    std::fs::create_dir_all(&runs).map_err(HistoryError::io("create", &runs))?;
    let gates = Recheck {
        repo,
        chain: &chain,
        ws: &ws,
        scratch: scratch.path(),
        runs_dir: runs,
        runs: TestRuns::new(test.clone(), timeouts.0, timeouts.1),
        inline: chain.inline_tests.iter().cloned().collect(),
    };
    gates.checks(bundle).map_err(berr)
}

fn read_chain(bundle: &Path) -> Result<ChainFile, HistoryError> {
    let berr = |message: String| HistoryError::Bundle { path: bundle.to_path_buf(), message };
    let text = std::fs::read_to_string(bundle.join("chain.json"))
        .map_err(HistoryError::io("read", &bundle.join("chain.json")))?;
    carve_formats::from_str(&text, &bundle.join("chain.json")).map_err(|e| berr(e.to_string()))
}

/// The workspace: the final commit of `repo` (canonical) with `s0.patch` applied, under `scratch`.
fn workspace(bundle: &Path, repo: &Path, chain: &ChainFile, scratch: &Path) -> Result<PathBuf, HistoryError> {
    let berr = |message: String| HistoryError::Bundle { path: bundle.to_path_buf(), message };
    let clone = scratch.join("clone");
    git(
        scratch,
        &["clone", "-q", "--shared", "--no-checkout", &repo.to_string_lossy(), &clone.to_string_lossy()],
        None,
    )
    .map_err(&berr)?;
    let ws = scratch.join("workspace");
    std::fs::create_dir_all(&ws).map_err(HistoryError::io("create", &ws))?;
    let tar = git(&clone, &["archive", "--format=tar", &chain.final_commit], None).map_err(&berr)?;
    untar(&ws, &tar).map_err(&berr)?;
    apply(&ws, &bundle.join("s0.patch"))
        .map_err(|e| berr(format!("s0.patch does not apply to {}: {e}", chain.final_commit)))?;
    Ok(ws)
}

fn untar(dir: &Path, tar: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut child = std::process::Command::new("tar")
        .args(["-x", "-f", "-", "-C"])
        .arg(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("tar: {e}"))?;
    child.stdin.take().ok_or("tar")?.write_all(tar).map_err(|e| e.to_string())?;
    child.wait().map_err(|e| e.to_string())?.success().then_some(()).ok_or_else(|| "tar failed".to_string())
}

/// Apply the patch file `patch` to the workspace `ws` (an empty patch changes nothing).
fn apply(ws: &Path, patch: &Path) -> Result<(), String> {
    let bytes = std::fs::read(patch).map_err(|e| format!("read {}: {e}", patch.display()))?;
    if bytes.is_empty() {
        return Ok(());
    }
    git(ws, &["apply", "-p1", "--whitespace=nowarn", "-"], Some(&bytes)).map(|_| ())
}

/// A gate's before state: the names of its trees (with the gate's tests, with the state's own
/// tests), when it is (for problems), and whether P2P is judged on the state's own tests.
struct Before<'a> {
    trees: [&'a str; 2],
    when: &'a str,
    on_own: bool,
}

/// The gates of one bundle, re-run on its workspace.
struct Recheck<'a> {
    repo: &'a Path,
    chain: &'a ChainFile,
    ws: &'a Path,
    scratch: &'a Path,
    runs_dir: PathBuf,
    runs: TestRuns,
    inline: BTreeSet<String>,
}

impl Recheck<'_> {
    /// Every stage gate in order (each applying its gold patch to the workspace), then the
    /// chain gate.
    fn checks(&self, bundle: &Path) -> Result<Vec<GateCheck>, String> {
        let chain = self.chain;
        let mut checks = Vec::new();
        // The chain's test files as at S_k: the workspace holds them at S0, and each stage's tests
        // directory holds its test files as at S_(k+1). P2P judged on S_k's own tests
        // (`p2p_on_own_tests`) is re-checked on the workspace with these.
        let mut own_tests: Files = BTreeMap::new();
        let chain_tests = read_tests(&bundle.join(&chain.chain.tests_dir))?;
        // The chain suite at S0, before any gold patch: F2P must not pass, P2P must.
        let suite = &chain.chain;
        let gate =
            Before { trees: ["chain-b", "chain-own"], when: "before the gold patches", on_own: suite.p2p_on_own_tests };
        let chain_problems = self.before(&gate, &chain_tests, &own_tests, &suite.f2p, &suite.p2p)?;
        for st in &chain.stages {
            let ov = read_tests(&bundle.join(&st.tests_dir))?;
            let ids: Vec<TestId> = st.f2p.iter().chain(&st.p2p).cloned().collect();
            let (b, o, when) =
                (format!("g{}b", st.index), format!("g{}o", st.index), format!("before gold patch {}", st.index));
            let gate = Before { trees: [&b, &o], when: &when, on_own: st.p2p_on_own_tests };
            let mut problems = self.before(&gate, &ov, &own_tests, &st.f2p, &st.p2p)?;
            apply(self.ws, &bundle.join(&st.gold_patch))
                .map_err(|e| format!("{} does not apply: {e}", st.gold_patch))?;
            let after = self.statuses(&format!("g{}a", st.index), &ov, &ids, false)?;
            let when = format!("after gold patch {}", st.index);
            problems.extend(
                unmet(&after, after.keys(), Expect::Pass).into_iter().map(|(t, s)| format!("{t} is {s} {when}")),
            );
            checks.push(GateCheck { gate: format!("stage {}", st.index), passed: problems.is_empty(), problems });
            own_tests.extend(ov);
        }
        let ids: Vec<TestId> = chain.chain.f2p.iter().chain(&chain.chain.p2p).cloned().collect();
        let fin = self.statuses("chain", &chain_tests, &ids, false)?;
        let mut problems = chain_problems;
        problems.extend(
            unmet(&fin, fin.keys(), Expect::Pass)
                .into_iter()
                .map(|(t, s)| format!("{t} is {s} on the final workspace")),
        );
        checks.push(GateCheck { gate: "chain".into(), passed: problems.is_empty(), problems });
        Ok(checks)
    }

    /// The problems of a gate's before runs on the workspace as it is: its F2P tests with the
    /// gate's test files `tests`, its P2P tests with them too, or (`gate.on_own`: they did not
    /// compile there at build time) with the state's own test files `own`.
    fn before(
        &self,
        gate: &Before<'_>,
        tests: &Files,
        own: &Files,
        f2p: &[TestId],
        p2p: &[TestId],
    ) -> Result<Vec<String>, String> {
        let [with_tests, with_own] = gate.trees;
        let before = if gate.on_own {
            // The gate's tests do not compile at S_k: F2P with them, P2P on S_k's own tests.
            let mut before = self.statuses(with_tests, tests, f2p, true)?;
            before.extend(self.statuses(with_own, own, p2p, true)?);
            before
        } else {
            let ids: Vec<TestId> = f2p.iter().chain(p2p).cloned().collect();
            self.statuses(with_tests, tests, &ids, true)?
        };
        let mut problems = Vec::new();
        before_problems(&before, f2p, p2p, gate.when, gate.on_own, &mut problems);
        Ok(problems)
    }

    /// The statuses of `ids` in a copy of the workspace (as it is now) named `label`, with
    /// `tests` laid over it. `before`: the tree before a gold patch, where (as in `build`)
    /// tests that cannot be collected because the crate's test target does not compile yet
    /// are missing.
    fn statuses(
        &self,
        label: &str,
        tests: &Files,
        ids: &[TestId],
        before: bool,
    ) -> Result<BTreeMap<TestId, TestStatus>, String> {
        let dir = self.scratch.join(label);
        // The tree gets the dependencies its manifest declares, as the build's states did.
        carve_core::tree::shadow_copy(self.ws, &dir, carve_languages::skip_policy()).map_err(|e| e.to_string())?;
        crate::deps::provide(self.repo, &dir, self.chain.language, &format!("{label} (the workspace at this gate)"))?;
        super::gates::overlay(&dir, tests, &self.inline)?;
        // As in `carve arc build`'s exported states: a crate that commits no Cargo.lock gets one.
        crate::states::lock_offline(&dir);
        let in_sources = carve_languages::support(self.chain.language).facts().tests_in_sources;
        let res = match self.runs.run(&dir, Some(ids), &RunExtras::default(), &self.runs_dir) {
            Err(e) if e.is_collection() && before && in_sources => {
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(ids.iter().map(|i| (i.clone(), TestStatus::Missing)).collect());
            }
            r => r.map_err(|e| e.message)?,
        };
        let _ = std::fs::remove_dir_all(&dir);
        Ok(ids.iter().map(|i| (i.clone(), res.status(i))).collect())
    }
}

fn read_tests(dir: &Path) -> Result<BTreeMap<String, Option<Vec<u8>>>, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<Vec<u8>>>) -> Result<(), String> {
        let Ok(rd) = std::fs::read_dir(dir) else { return Ok(()) };
        for e in rd {
            let p = e.map_err(|e| e.to_string())?.path();
            if p.is_dir() {
                walk(root, &p, out)?;
            } else {
                let rel = p.strip_prefix(root).map_err(|e| e.to_string())?.to_string_lossy().replace('\\', "/");
                out.insert(rel, Some(std::fs::read(&p).map_err(|e| format!("read {}: {e}", p.display()))?));
            }
        }
        Ok(())
    }
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// What a gate's before runs get wrong: an F2P test that already passes, a P2P test that
/// does not pass (on S_k's own tests when `own`).
pub(super) fn before_problems(
    before: &BTreeMap<TestId, TestStatus>,
    f2p: &[TestId],
    p2p: &[TestId],
    when: &str,
    own: bool,
    problems: &mut Vec<String>,
) {
    for (t, _) in unmet(before, f2p, Expect::NotPass) {
        problems.push(format!("F2P {t} already passes {when}"));
    }
    let on = if own { " (on the state's own tests)" } else { "" };
    for (t, s) in unmet(before, p2p, Expect::Pass) {
        problems.push(format!("P2P {t} is {s} {when}{on}"));
    }
}
