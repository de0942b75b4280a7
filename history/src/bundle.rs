//! The chain bundle (`docs/formats.md`, "Chain bundle"): reference states, per-stage tests
//! selected on paired states, specs and contracts, written by [`build`] and re-checked by
//! [`validate`].
//!
//! Stage gate trees: for stage k, *before* is S_k's code with every hidden test file of the
//! chain at its S0 content and stage k's test files overlaid as at S_(k+1); *after* is the
//! same with S_(k+1)'s code. F2P_k are the stage's own new or changed tests that fail before
//! and pass after in both of two runs; P2P_k pass in all four runs; tests whose status differs
//! between two runs of one tree are excluded as flaky, and other tests failing before (a
//! module that cannot load yet) are excluded as collateral.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_formats::gate::{Excluded, GateValidation, IdentifierScan};
use carve_languages::runner::{RunRequest, TestCommand, TestId, TestStatus};
use carve_languages::{DefinitionIndex, Language};
use serde::{Deserialize, Serialize};

use crate::HistoryError;
use crate::calls::{self, StageTracer};
use crate::mine::Chain;
use crate::spec;
use crate::states::{Role, States, git, role};

pub const BUNDLE_VERSION: u32 = carve_formats::chain::VERSION;

/// What `build` needs to know about the project.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    pub language: Language,
    pub test: TestCommand,
    pub run_timeout: Duration,
    pub test_timeout: Duration,
    /// The project configuration as `carve init` writes it (copied to `carve.toml`).
    pub carve_toml: String,
    pub repo_name: String,
}

/// `chain.json`, typed in `carve_formats::chain` (shared with its readers), with the
/// language as [`Language`].
pub type ChainFile = carve_formats::chain::ChainFile<Language>;
pub use carve_formats::chain::{ChainSuite, MergedStage, Repair, StageEntry};

/// How many commits `build` pulls into a chain before it drops it.
pub const MAX_REPAIRS: usize = 3;

fn first_lines(text: &str, n: usize) -> String {
    text.lines().filter(|l| !l.trim().is_empty()).take(n).collect::<Vec<_>>().join(" | ")
}

/// The first state S_k that fails the language's build check, with the check's message.
fn first_build_failure(states: &States, language: Language, scratch: &Path) -> Result<Option<(usize, String)>, String> {
    for k in 0..states.states.len() {
        let dir = scratch.join(format!("build-s{k}"));
        let _ = std::fs::remove_dir_all(&dir);
        states.export(k, &dir)?;
        let res = carve_languages::support(language).build_check(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = res {
            return Ok(Some((k, e.to_string())));
        }
    }
    Ok(None)
}

/// Definitions taken out of per-definition files (added or changed by a stage, not yet kept)
/// whose name the build error `message` names as a whole word.
fn named_taken_out(
    states: &States,
    message: &str,
    keep: &BTreeSet<carve_languages::NodeId>,
) -> BTreeSet<carve_languages::NodeId> {
    let words: BTreeSet<&str> =
        message.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
    states
        .by_definition
        .iter()
        .flat_map(|f| f.added.iter().chain(&f.changed).flatten())
        .filter(|id| !keep.contains(*id))
        .filter(|id| {
            let qual = id.rsplit("::").next().unwrap_or(id);
            words.contains(qual.rsplit('.').next().unwrap_or(qual))
        })
        .cloned()
        .collect()
}

/// The newest commit outside the chain, after its first stage, that changed a file the build
/// error `message` names; with the stage it goes into (the last stage before it) and the files.
fn missing_dependency(
    states: &States,
    stage_commits: &[Vec<String>],
    message: &str,
) -> Result<Option<(usize, String, Vec<String>)>, String> {
    let order = states.first_parent_order()?;
    let pos = |c: &str| order.iter().position(|o| o == c);
    let in_chain: BTreeSet<&str> = stage_commits.iter().flatten().map(String::as_str).collect();
    let first = stage_commits.iter().flatten().filter_map(|c| pos(c)).min().unwrap_or(0);
    for (i, c) in order.iter().enumerate().rev() {
        if i <= first || in_chain.contains(c.as_str()) {
            continue;
        }
        let named: Vec<String> = states.commit_files(c)?.into_iter().filter(|f| error_names(message, f)).collect();
        if named.is_empty() {
            continue;
        }
        // The last stage whose commits all come before `c`.
        let stage = stage_commits.iter().rposition(|cs| cs.iter().filter_map(|x| pos(x)).max().is_some_and(|m| m < i));
        if let Some(stage) = stage {
            return Ok(Some((stage, c.clone(), named)));
        }
    }
    Ok(None)
}

/// Whether a build error names `path`: its repository path, or its file name after a path
/// separator, a space or a quote (compilers print paths relative to their own directory).
fn error_names(message: &str, path: &str) -> bool {
    if message.contains(path) {
        return true;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    message.match_indices(name).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let after = message[i + name.len()..].chars().next();
        before.is_none_or(|b| matches!(b, '/' | ' ' | '"' | '\'' | '\n' | '('))
            && after.is_none_or(|a| matches!(a, ':' | ' ' | '"' | '\'' | '\n' | ')' | ','))
    })
}

/// Per-test statuses of the two runs of one tree.
type Runs = [BTreeMap<TestId, TestStatus>; 2];

/// Write `files` (path → bytes, `None` deletes) into `root`. A path in `inline` is a source
/// file's test part: it replaces the tests of `root`'s file (which keeps its code); `None`
/// takes them out; with no such file in `root` there is nothing to join it with.
fn overlay(root: &Path, files: &BTreeMap<String, Option<Vec<u8>>>, inline: &BTreeSet<String>) -> Result<(), String> {
    for (path, bytes) in files {
        let p = root.join(path);
        if inline.contains(path) {
            let Ok(code) = std::fs::read_to_string(&p) else { continue };
            let tests = bytes.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
            let joined = carve_languages::rust::inline_tests::with_tests_of(&code, &tests)
                .map_err(|e| format!("joining the inline tests of {path} with its code: {e}"))?;
            std::fs::write(&p, joined).map_err(|e| format!("write {}: {e}", p.display()))?;
            continue;
        }
        match bytes {
            Some(b) => {
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
                }
                std::fs::write(&p, b).map_err(|e| format!("write {}: {e}", p.display()))?;
            }
            None => {
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    Ok(())
}

struct Runner<'a> {
    cfg: &'a BuildConfig,
    scratch: PathBuf,
}

/// What a gate's *before* tree ran when its tests could not be collected at all. Where tests
/// live in the sources (Rust), a stage's new inline tests naming code S_k lacks keep the
/// crate's test target from compiling: every test is then missing before (and fails there),
/// none passes, and the second value is false (the tree's tests were not collected; P2P is
/// then judged on S_k's own tests, see [`p2p_on_own_tests`]). Elsewhere a collection failure
/// stays an error.
fn before_runs(language: Language, runs: Result<Runs, RunError>) -> Result<(Runs, bool), RunError> {
    match runs {
        Err(RunError::Collection(_)) if carve_languages::support(language).facts().tests_in_sources => {
            Ok((Runs::default(), false))
        }
        r => r.map(|r| (r, true)),
    }
}

/// The runs of one gate: its before and after trees, and whether the before tree's tests
/// could be collected (compiled) at all.
struct Gated {
    before: Runs,
    after: Runs,
    before_collected: bool,
}

impl Runner<'_> {
    /// Run `tests` (ids or files) twice in the gate's `before` and `after` trees. Both trees
    /// run the same selection, so a test is never "missing" on one side only because the
    /// other side ran more: when the runner cannot select by file in either tree (its ids
    /// name packages or targets, or a file that cannot load reports only itself), both run
    /// the whole suite, and selection keeps the stage's own tests as F2P.
    fn gate(&self, before: &Path, after: &Path, tests: &[String]) -> Result<Gated, GateError> {
        let selected = |root: &Path| self.twice(root, Some(tests));
        let (rb, mut collected) =
            before_runs(self.cfg.language, selected(before)).map_err(|e| GateError::Before(e.into_message()))?;
        let ra = selected(after).map_err(|e| GateError::After(e.into_message()))?;
        let degenerate = |r: &Runs| r.iter().all(|run| run.keys().all(|id| tests.contains(id)));
        if !degenerate(&rb) && !degenerate(&ra) {
            return Ok(Gated { before: strip(rb, tests), after: strip(ra, tests), before_collected: collected });
        }
        let whole = |root: &Path, selected: Runs, collected: &mut bool| match self.twice(root, None) {
            Ok(r) => Ok(r),
            // A whole-suite run refuses a tree whose test packages do not build (the stage's
            // tests naming code S_k lacks); the selected run has already reported what could
            // run there, and the stage's tests are missing.
            Err(RunError::Collection(_)) => {
                *collected = false;
                Ok(selected)
            }
            Err(RunError::Other(e)) => Err(e),
        };
        let rb = whole(before, rb, &mut collected).map_err(GateError::Before)?;
        let ra = whole(after, ra, &mut true).map_err(GateError::After)?;
        Ok(Gated { before: strip(rb, tests), after: strip(ra, tests), before_collected: collected })
    }

    /// The whole suite of `before` and of `after`, twice each.
    fn whole(&self, before: &Path, after: &Path) -> Result<Gated, GateError> {
        let all = |root: &Path| self.twice(root, None);
        let (rb, collected) =
            before_runs(self.cfg.language, all(before)).map_err(|e| GateError::Before(e.into_message()))?;
        let ra = all(after).map_err(|e| GateError::After(e.into_message()))?;
        Ok(Gated { before: rb, after: ra, before_collected: collected })
    }

    /// The whole suite of `root` (a state with its own tests), twice; a suite that does not
    /// compile there has no test to pass.
    fn own_tests(&self, root: &Path) -> Result<Runs, String> {
        match self.twice(root, None) {
            Ok(r) => Ok(r),
            Err(RunError::Collection(_)) => Ok(Runs::default()),
            Err(RunError::Other(e)) => Err(e),
        }
    }

    /// Run `tests` (all when `None`) in `root` twice.
    fn twice(&self, root: &Path, tests: Option<&[String]>) -> Result<Runs, RunError> {
        let mut out: Runs = Default::default();
        for run in &mut out {
            let mut req = RunRequest::new(root, self.cfg.test.clone(), &self.scratch);
            req.tests = tests.map(<[String]>::to_vec);
            req.timeout = self.cfg.run_timeout;
            req.test_timeout = self.cfg.test_timeout;
            let res = carve_languages::run_tests(&req).map_err(|e| match e {
                e @ carve_languages::runner::RunnerError::Collection { .. } => RunError::Collection(e.to_string()),
                e => RunError::Other(e.to_string()),
            })?;
            *run = res.statuses.into_iter().map(|(id, o)| (id, o.status)).collect();
        }
        Ok(out)
    }
}

/// A requested file gets an entry of its own next to its tests; keep the tests.
fn strip(runs: Runs, tests: &[String]) -> Runs {
    runs.map(|r| r.into_iter().filter(|(id, _)| !tests.contains(id)).collect())
}

enum RunError {
    /// The tests could not be collected (nothing compiles, a file does not load), with the
    /// runner's message.
    Collection(String),
    Other(String),
}

impl RunError {
    fn into_message(self) -> String {
        match self {
            RunError::Collection(e) => e,
            RunError::Other(e) => e,
        }
    }
}

/// Which tree of a gate a run failed in.
enum GateError {
    Before(String),
    After(String),
}

/// Whether a stage is gated in place (see the stage gates in `build`): a stage with tests
/// inside its sources (Rust's inline `#[test]`s, doctests: `LanguageFacts::tests_in_sources`)
/// but no test file to lay over S_k.
fn gated_in_place(language: Language, test_files: &[String], s: &crate::mine::StageSummary) -> bool {
    test_files.is_empty()
        && carve_languages::support(language).facts().tests_in_sources
        && !(s.tests_added.is_empty() && s.tests_modified.is_empty())
}

/// The names of the tests a stage added or changed (the last component of each test id).
fn own_tests(s: &crate::mine::StageSummary) -> BTreeSet<String> {
    s.tests_added.iter().chain(&s.tests_modified).map(|t| crate::analysis::test_name(t).to_string()).collect()
}

fn status(runs: &Runs, id: &str) -> [TestStatus; 2] {
    [0, 1].map(|i| runs[i].get(id).copied().unwrap_or(TestStatus::Missing))
}

/// Whether runner id `id` names the test definition `name` (its last name component): an
/// identifier of the id (`pkg/TestX/sub`, `target::mod::test`, `file.py::test_x[param]`), or,
/// for a test named by a string (`test("run returns the id", …)` in JavaScript), the id's
/// last segment after the runner's ` > ` separator.
fn id_names(id: &str, names: &BTreeSet<String>) -> bool {
    let mut toks = BTreeSet::new();
    crate::analysis::identifiers(id.split('[').next().unwrap_or(id), &mut toks);
    toks.iter().any(|t| names.contains(t)) || id.rsplit(" > ").next().is_some_and(|last| names.contains(last))
}

/// The result of selecting one gate's tests.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Selection {
    pub f2p: Vec<TestId>,
    pub p2p: Vec<TestId>,
    pub flaky: Vec<TestId>,
    /// Failing before but not a test this stage added or changed (e.g. its file could not load yet).
    pub collateral: Vec<TestId>,
    /// Failing after: not usable as a check of this stage.
    pub failing_after: Vec<TestId>,
    pub before: BTreeMap<TestId, [TestStatus; 2]>,
    pub after: BTreeMap<TestId, [TestStatus; 2]>,
    /// When the before tree's tests did not compile (Rust: the stage's tests name code S_k
    /// lacks), the statuses of S_k's own tests (its test files at their S_k text), twice, on
    /// which P2P was judged; empty otherwise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub before_own_tests: BTreeMap<TestId, [TestStatus; 2]>,
    /// Whether P2P was judged on S_k's own tests ([`p2p_on_own_tests`]).
    #[serde(default)]
    pub p2p_on_own_tests: bool,
}

fn select(before: &Runs, after: &Runs, own: Option<&BTreeSet<String>>) -> Selection {
    let ids: BTreeSet<&TestId> = before.iter().chain(after.iter()).flat_map(|r| r.keys()).collect();
    let mut s = Selection::default();
    for id in ids {
        let (b, a) = (status(before, id), status(after, id));
        s.before.insert(id.clone(), b);
        s.after.insert(id.clone(), a);
        if b[0] != b[1] || a[0] != a[1] {
            s.flaky.push(id.clone());
        } else if a[0] != TestStatus::Passed {
            if a[0] != TestStatus::Skipped {
                s.failing_after.push(id.clone());
            }
        } else if b[0] == TestStatus::Passed {
            s.p2p.push(id.clone());
        } else if matches!(b[0], TestStatus::Failed | TestStatus::Error | TestStatus::Missing) {
            if own.is_none_or(|names| id_names(id, names)) {
                s.f2p.push(id.clone());
            } else {
                s.collateral.push(id.clone());
            }
        }
    }
    s
}

/// Whether a gate judges P2P on S_k's own tests: where tests live in the sources (Rust), the
/// stage's tests laid over S_k's code may not compile (they name code S_k lacks, or a changed
/// signature), which takes out the crate's whole test target (`lib.rs`'s `#[cfg(test)]`
/// module, or every target when nothing compiles): its other tests are then missing before and
/// "collateral", none could be P2P. A doctest is no such case (a new one is missing at S_k in
/// any form).
fn needs_own_tests(language: Language, before_collected: bool, sel: &Selection) -> bool {
    carve_languages::support(language).facts().tests_in_sources
        && (!before_collected || sel.collateral.iter().any(|id| !id.contains("::doctest::")))
}

/// P2P judged on S_k as it is, with its *own* tests (`own`: its test files at their S_k text,
/// run twice), where the before tree's tests did not all compile ([`needs_own_tests`]): a
/// test that passes after and in both own runs is P2P, whether it passed in the before tree
/// or was collateral there (missing: its target did not compile); one whose own runs disagree
/// is flaky; one failing or missing there is not P2P (collateral). F2P stays as selected (the
/// stage's tests, failing or missing before and passing after): a test the stage changed is
/// judged in its new form only.
fn p2p_on_own_tests(sel: &mut Selection, own: &Runs) {
    let candidates: Vec<TestId> =
        std::mem::take(&mut sel.p2p).into_iter().chain(std::mem::take(&mut sel.collateral)).collect();
    for id in candidates {
        let o = status(own, &id);
        if o[0] != o[1] {
            sel.flaky.push(id);
        } else if o[0] == TestStatus::Passed {
            sel.p2p.push(id);
        } else {
            sel.collateral.push(id);
        }
    }
    let ids: BTreeSet<&TestId> = own.iter().flat_map(|r| r.keys()).collect();
    sel.before_own_tests = ids.into_iter().map(|id| (id.clone(), status(own, id))).collect();
    sel.p2p_on_own_tests = true;
    for v in [&mut sel.p2p, &mut sel.flaky, &mut sel.collateral] {
        v.sort();
    }
}

/// A Rust doctest lives in the code's doc comments, which the stage patch (not the hidden
/// tests) holds: it is never F2P; one that fails before and passes after is collateral.
fn doctests_are_not_hidden(sel: &mut Selection) {
    let (doc, rest): (Vec<TestId>, Vec<TestId>) = sel.f2p.drain(..).partition(|id| id.contains("::doctest::"));
    sel.f2p = rest;
    sel.collateral.extend(doc);
    sel.collateral.sort();
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), HistoryError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(HistoryError::io("create", parent))?;
    }
    std::fs::write(path, bytes).map_err(HistoryError::io("write", path))
}

fn json_bytes<T: Serialize>(v: &T) -> Vec<u8> {
    carve_formats::to_pretty(v)
}

/// A gate's `validation.json` from its selection (each state run twice); what only a stage
/// gate records, and whether it passed, are set by the caller.
fn gate_validation(gate: &str, stage: Option<usize>, before: String, after: String, sel: &Selection) -> GateValidation {
    let mut v = GateValidation::new(gate, stage, before, after);
    v.f2p = sel.f2p.clone();
    v.p2p = sel.p2p.clone();
    v.excluded = Excluded::new(sel.flaky.clone(), sel.collateral.clone(), sel.failing_after.clone());
    v.before = sel.before.clone();
    v.after = sel.after.clone();
    v.p2p_on_own_tests = sel.p2p_on_own_tests;
    v.before_own_tests = sel.before_own_tests.clone();
    v
}

/// Outcome of `build`: where the bundle is and what each gate selected.
#[derive(Debug, Clone, Serialize)]
pub struct BuildOutcome {
    pub dir: PathBuf,
    pub chain: ChainFile,
    pub selections: Vec<Selection>,
    pub chain_selection: Selection,
    /// Identifiers the hidden tests of a stage use, defined by the stage, absent from its spec.
    pub unnamed_identifiers: Vec<Vec<String>>,
}

/// A source text without its comment lines and blank lines, each line trimmed: a change to
/// doc comments (doctests) or layout alone is no change to the code.
fn without_comments(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("//")).collect()
}

/// Whether stage `k` changes code: a code file (not a test file) that differs between the
/// code states W_k and W_(k+1) (its inline tests held at S0) other than in comments.
fn stage_changes_code(states: &States, language: Language, k: usize) -> Result<bool, String> {
    let (a, b) = (&states.code_states[k], &states.code_states[k + 1]);
    let files = crate::states::git_text(&states.dir, &["diff", "--name-only", "--no-renames", a, b])?;
    for f in files.lines().filter(|l| !l.is_empty()) {
        if role(language, f) != Role::Code {
            continue;
        }
        let at = |c: &str| git(&states.dir, &["show", &format!("{c}:{f}")], None).ok();
        let (x, y) = (at(a), at(b));
        match (&x, &y) {
            (Some(x), Some(y)) => {
                let (x, y) = (String::from_utf8_lossy(x), String::from_utf8_lossy(y));
                if without_comments(&x) != without_comments(&y) {
                    return Ok(true);
                }
            }
            _ => return Ok(true),
        }
    }
    Ok(false)
}

/// Merge stage `k` (it changed only tests) into its neighbour: the stage before it, or the
/// next one for stage 0. The stage's commits, tests and definitions join that stage.
fn merge_stage(
    chain: &mut Chain,
    stage_commits: &mut Vec<Vec<String>>,
    repairs: &mut [Repair],
    order: &[String],
    k: usize,
) -> MergedStage {
    let into = k.saturating_sub(1);
    let commits = stage_commits.remove(k);
    let gone = chain.stages.remove(k);
    let pos = |c: &String| order.iter().position(|o| o == c).unwrap_or(usize::MAX);
    // The stage it joins is named by its own first commit in history order, before the merge.
    let into_commit = stage_commits[into].iter().min_by_key(|c| pos(c)).cloned().unwrap_or_default();
    stage_commits[into].extend(commits.iter().cloned());
    for c in stage_commits.iter_mut() {
        c.sort_by_key(pos);
    }
    let st = &mut chain.stages[into];
    st.commits.extend(gone.commits.iter().cloned());
    st.commits.sort_by_key(pos);
    st.commits.dedup();
    for (to, from) in [
        (&mut st.definitions_added, &gone.definitions_added),
        (&mut st.definitions_modified, &gone.definitions_modified),
        (&mut st.tests_added, &gone.tests_added),
        (&mut st.tests_modified, &gone.tests_modified),
        (&mut st.files, &gone.files),
    ] {
        to.extend(from.iter().cloned());
        to.sort();
        to.dedup();
    }
    st.lines += gone.lines;
    if k == 0 {
        // The stage it joined is stage 0 now: no earlier stage to link to.
        st.evidence.clear();
    }
    for (i, s) in chain.stages.iter_mut().enumerate() {
        s.index = i;
    }
    for r in repairs.iter_mut() {
        if r.stage > k || (r.stage == k && k > 0) {
            r.stage -= 1;
        }
    }
    let target = if k == 0 { "the next stage" } else { "the stage before it" };
    MergedStage::new(
        gone.commits,
        into_commit,
        format!(
            "it changes only tests (no code outside inline tests and comments), so a gate on it could not fail; \
             merged into {target}"
        ),
    )
}

/// Build the bundle of `chain` (mined from `repo`) under `out/<chain_id>/`.
pub fn build(repo: &Path, chain: &Chain, cfg: &BuildConfig, out: &Path) -> Result<BuildOutcome, HistoryError> {
    build_traced(repo, chain, cfg, out, None)
}

/// [`build`], and with a `tracer` each later stage's F2P tests are traced at S_(k+1) to record
/// which definitions of earlier stages they execute ([`calls`]).
pub fn build_traced(
    repo: &Path,
    chain: &Chain,
    cfg: &BuildConfig,
    out: &Path,
    tracer: Option<&dyn StageTracer>,
) -> Result<BuildOutcome, HistoryError> {
    let id = chain.chain_id.clone();
    let err = |message: String| HistoryError::Build { chain: id.clone(), message };
    let mut chain = chain.clone();
    let mut merged: Vec<MergedStage> = Vec::new();
    let scratch =
        tempfile::tempdir().map_err(HistoryError::io("create a scratch directory in", &std::env::temp_dir()))?;
    let mut stage_commits: Vec<Vec<String>> = chain.stages.iter().map(|s| s.commits.clone()).collect();
    let final_commit = stage_commits.last().and_then(|c| c.last()).cloned().ok_or_else(|| err("no stages".into()))?;
    // Every state builds; a state that does not is repaired by pulling the commit outside the
    // chain that the build error points at into the stage before it (III-C's "necessary
    // dependencies"), at most MAX_REPAIRS times, else the chain is dropped with the reason.
    let mut repairs: Vec<Repair> = Vec::new();
    // Definitions of per-definition files that every state keeps (a state's build named them).
    let mut keep: BTreeSet<carve_languages::NodeId> = BTreeSet::new();
    let mut keep_rounds = 0;
    let states = loop {
        let attempt = scratch.path().join(format!("attempt-{}-{keep_rounds}-{}", repairs.len(), merged.len()));
        std::fs::create_dir_all(&attempt).map_err(HistoryError::io("create", &attempt))?;
        let mut states = States::build(repo, &attempt, &final_commit, &stage_commits, cfg.language, &keep)?;
        // Tests inside the sources (Rust's `src/`) go to the tests, the rest to the stage's code.
        states.split_inline_tests(cfg.language).map_err(&err)?;
        // A stage that changes only tests is merged into its neighbour (only where tests live
        // in the sources can a mined stage's code change be comments and tests alone).
        if carve_languages::support(cfg.language).facts().tests_in_sources {
            let mut test_only = None;
            for k in 0..stage_commits.len() {
                if !stage_changes_code(&states, cfg.language, k).map_err(&err)? {
                    test_only = Some(k);
                    break;
                }
            }
            if let Some(k) = test_only {
                if stage_commits.len() <= 2 {
                    return Err(err(format!(
                        "stage {k} ({}) changes only tests (no code outside inline tests and comments), and merged \
                         into its neighbour the chain would have a single stage",
                        &stage_commits[k][0][..8]
                    )));
                }
                let order = states.first_parent_order().map_err(&err)?;
                merged.push(merge_stage(&mut chain, &mut stage_commits, &mut repairs, &order, k));
                continue;
            }
        }
        // First, a state that imports a file only a later state has gets that file (bounded).
        let mut failure = first_build_failure(&states, cfg.language, scratch.path()).map_err(&err)?;
        for _ in 0..MAX_REPAIRS {
            let Some((k, message)) = &failure else { break };
            if states.pull_imported_files(*k, message).map_err(&err)?.is_empty() {
                break;
            }
            failure = first_build_failure(&states, cfg.language, scratch.path()).map_err(&err)?;
        }
        let Some((k, message)) = failure else {
            break states;
        };
        // First repair of a per-definition file: keep (at its final text) what the build error
        // names among the definitions taken out of it, as carve's extraction keeps what the
        // compiler names; bounded like the commit repairs.
        let named = named_taken_out(&states, &message, &keep);
        if !named.is_empty() && keep_rounds < MAX_REPAIRS {
            keep.extend(named);
            keep_rounds += 1;
            continue;
        }
        let check = carve_languages::support(cfg.language).build_check_name();
        let tried = if repairs.is_empty() {
            String::new()
        } else {
            format!(
                " (after pulling {} into the chain)",
                repairs
                    .iter()
                    .map(|r| format!("{} into stage {}", &r.commit[..8], r.stage))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if repairs.len() >= MAX_REPAIRS {
            return Err(err(format!(
                "state S{k} does not pass the build check (`{check}`){tried}; gave up after {MAX_REPAIRS} repairs: {message}"
            )));
        }
        match missing_dependency(&states, &stage_commits, &message).map_err(&err)? {
            Some((stage, commit, files)) => {
                repairs.push(Repair::new(
                    stage,
                    commit.clone(),
                    format!(
                        "S{k} did not pass the build check (`{check}`); the error names {}, which this commit changed \
                         after stage {stage}: {}",
                        files.join(", "),
                        first_lines(&message, 3)
                    ),
                ));
                stage_commits[stage].push(commit);
                let order = states.first_parent_order().map_err(&err)?;
                stage_commits[stage].sort_by_key(|c| order.iter().position(|o| o == c).unwrap_or(usize::MAX));
            }
            None => {
                return Err(err(format!(
                    "state S{k} does not pass the build check (`{check}`){tried}, and no commit outside the chain \
                     changed a file the error names: {message}"
                )));
            }
        }
    };
    let n = chain.stages.len();
    // The mined ids name files where the chain's commits had them; the states, their indexes
    // and traces name them at the final checkpoint (a file a later commit moved).
    for s in &mut chain.stages {
        for ids in [&mut s.definitions_added, &mut s.definitions_modified, &mut s.tests_added, &mut s.tests_modified] {
            for id in ids.iter_mut() {
                *id = states.id_at_final(id);
            }
        }
    }

    // Test files of each stage (role "test" among the files the stage changed), and the source
    // files whose inline tests it changed (their test part is the stage's hidden tests).
    let inline: BTreeSet<String> = states.inline.keys().cloned().collect();
    let mut stage_tests: Vec<Vec<String>> = Vec::new();
    for k in 0..n {
        let files = states.changed_files(k, k + 1).map_err(&err)?;
        let mut tests: Vec<String> = files.into_iter().filter(|f| role(cfg.language, f) == Role::Test).collect();
        tests.extend(states.inline.iter().filter(|(_, parts)| parts[k] != parts[k + 1]).map(|(p, _)| p.clone()));
        tests.sort();
        stage_tests.push(tests);
    }
    let all_tests: BTreeSet<String> = stage_tests.iter().flatten().cloned().collect();
    let at = |k: usize, paths: &mut dyn Iterator<Item = &String>| -> BTreeMap<String, Option<Vec<u8>>> {
        paths.map(|p| (p.clone(), states.inline_tests_at(k, p).unwrap_or_else(|| states.file_at(k, p)))).collect()
    };
    // The code states already hold the inline tests as at S0.
    let tests_at_s0 = at(0, &mut all_tests.iter().filter(|p| !inline.contains(*p)));

    let runs_dir = scratch.path().join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(HistoryError::io("create", &runs_dir))?;
    let runner = Runner { cfg, scratch: runs_dir.clone() };
    // A gate tree: state `code`'s code, chain tests at S0, then `overlay_files`.
    let gate_tree =
        |label: &str, code: usize, overlay_files: &BTreeMap<String, Option<Vec<u8>>>| -> Result<PathBuf, String> {
            let dir = scratch.path().join(label);
            states.export_code(code, &dir)?;
            overlay(&dir, &tests_at_s0, &inline)?;
            overlay(&dir, overlay_files, &inline)?;
            Ok(dir)
        };
    let mut selections = Vec::new();
    for k in 0..n {
        let ov = at(k + 1, &mut stage_tests[k].iter());
        let present: Vec<String> = ov.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.clone()).collect();
        let s = &chain.stages[k];
        // Rust tests inside `src/` (`#[cfg(test)]` modules, doctests) cannot be laid over S_k:
        // they are gated in place, the whole suite of S_k against that of S_(k+1), where the
        // stage's new tests are missing before.
        let in_place = gated_in_place(cfg.language, &present, s);
        if present.is_empty() && !in_place {
            return Err(err(format!("stage {k} leaves no test file at S{}; it cannot be gated", k + 1)));
        }
        let before = gate_tree(&format!("s{k}-before"), k, &ov).map_err(&err)?;
        let after = gate_tree(&format!("s{k}-after"), k + 1, &ov).map_err(&err)?;
        let runs = if in_place { runner.whole(&before, &after) } else { runner.gate(&before, &after, &present) };
        let g = runs.map_err(|e| match e {
            GateError::Before(e) => err(format!("stage {k}, before (S{k}): {e}")),
            GateError::After(e) => err(format!("stage {k}, after (S{}): {e}", k + 1)),
        })?;
        let mut sel = select(&g.before, &g.after, Some(&own_tests(s)));
        doctests_are_not_hidden(&mut sel);
        if needs_own_tests(cfg.language, g.before_collected, &sel) {
            // The stage's tests do not compile against S_k's code: P2P on S_k's own tests.
            let own = gate_tree(&format!("s{k}-own"), k, &at(k, &mut all_tests.iter())).map_err(&err)?;
            let runs = runner.own_tests(&own).map_err(|e| err(format!("stage {k}, S{k} with its own tests: {e}")))?;
            p2p_on_own_tests(&mut sel, &runs);
            let _ = std::fs::remove_dir_all(&own);
        }
        if sel.f2p.is_empty() {
            return Err(err(format!(
                "stage {k} ({}) has no test that fails at S{k} and passes at S{} (flaky {}, failing after {}, collateral {})",
                &s.commits[0][..8],
                k + 1,
                sel.flaky.len(),
                sel.failing_after.len(),
                sel.collateral.len()
            )));
        }
        let _ = std::fs::remove_dir_all(&before);
        let _ = std::fs::remove_dir_all(&after);
        selections.push(sel);
    }
    // Chain gate: S0 against Sn with every chain test file as at Sn.
    let chain_ov = at(n, &mut all_tests.iter());
    let chain_present: Vec<String> = chain_ov.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.clone()).collect();
    let before = gate_tree("chain-before", 0, &chain_ov).map_err(&err)?;
    let after = gate_tree("chain-after", n, &chain_ov).map_err(&err)?;
    let g = runner.gate(&before, &after, &chain_present).map_err(|e| match e {
        GateError::Before(e) => err(format!("chain gate, S0: {e}")),
        GateError::After(e) => err(format!("chain gate, S{n}: {e}")),
    })?;
    // As in a stage gate, a test fails at S0 and passes at Sn as F2P only when the chain added
    // or changed it; others failing at S0 (a package that cannot build without the chain's
    // code, spf13/cast's 8,000 table tests) are collateral.
    let chain_own: BTreeSet<String> = chain.stages.iter().flat_map(own_tests).collect();
    let mut chain_sel = select(&g.before, &g.after, Some(&chain_own));
    doctests_are_not_hidden(&mut chain_sel);
    if needs_own_tests(cfg.language, g.before_collected, &chain_sel) {
        let own = gate_tree("chain-own", 0, &BTreeMap::new()).map_err(&err)?;
        let runs = runner.own_tests(&own).map_err(|e| err(format!("chain gate, S0 with its own tests: {e}")))?;
        p2p_on_own_tests(&mut chain_sel, &runs);
        let _ = std::fs::remove_dir_all(&own);
    }

    // Write the bundle.
    let dir = out.join(&chain.chain_id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(HistoryError::io("replace", &dir))?;
    }
    let s0_patch = states.diff(&final_commit, &states.code_states[0], &[]).map_err(&err)?;
    write(&dir.join("s0.patch"), &s0_patch)?;
    write(&dir.join("carve.toml"), cfg.carve_toml.as_bytes())?;
    // Gold patches leave out test files; of an inline-test file they hold the code (the code
    // states hold its tests at S0 throughout).
    let excluded: Vec<String> = all_tests.iter().filter(|p| !inline.contains(*p)).cloned().collect();
    let mut entries = Vec::new();
    let mut unnamed = Vec::new();
    for k in 0..n {
        let sd = format!("stages/{k}");
        let gold = states.diff(&states.code_states[k], &states.code_states[k + 1], &excluded).map_err(&err)?;
        write(&dir.join(&sd).join("gold.patch"), &gold)?;
        for (p, b) in at(k + 1, &mut stage_tests[k].iter()) {
            if let Some(b) = b {
                write(&dir.join(&sd).join("tests").join(&p), &b)?;
            }
        }
        let after = gate_tree(&format!("spec-s{k}"), k + 1, &at(k + 1, &mut stage_tests[k].iter())).map_err(&err)?;
        let before = gate_tree(&format!("spec-b{k}"), k, &BTreeMap::new()).map_err(&err)?;
        let idx_after = DefinitionIndex::build(&after, &Default::default()).map_err(|e| err(e.to_string()))?;
        let idx_before = DefinitionIndex::build(&before, &Default::default()).map_err(|e| err(e.to_string()))?;
        let st = &chain.stages[k];
        let sel = &selections[k];
        let stage_spec = spec::stage_spec(k, st, &idx_before, &idx_after, &sel.f2p, &stage_tests[k], &before, &after);
        write(&dir.join(&sd).join("spec.md"), stage_spec.markdown.as_bytes())?;
        write(&dir.join(&sd).join("contract.json"), &json_bytes(&stage_spec.contract))?;
        unnamed.push(stage_spec.unnamed.clone());
        let mut validation = gate_validation("stage", Some(k), format!("S{k}"), format!("S{}", k + 1), sel);
        validation.identifier_scan = Some(IdentifierScan::new(stage_spec.unnamed.clone()));
        validation.passed = true;
        let call_dependency = match tracer {
            Some(t) if k > 0 => Some(calls::check(t, &chain.stages, k, &idx_after, &after, &sel.f2p)),
            _ => None,
        };
        validation.call_dependency = call_dependency.clone();
        write(&dir.join(&sd).join("validation.json"), &json_bytes(&validation))?;
        let _ = std::fs::remove_dir_all(&after);
        let _ = std::fs::remove_dir_all(&before);
        let mut entry =
            StageEntry::new(k, stage_commits[k].clone(), st.title.clone(), sel.f2p.clone(), sel.p2p.clone());
        entry.p2p_on_own_tests = sel.p2p_on_own_tests;
        entry.evidence = st.evidence.iter().map(crate::mine::Evidence::to_chain).collect();
        entry.call_dependency = call_dependency;
        entries.push(entry);
    }
    for (p, b) in &chain_ov {
        if let Some(b) = b {
            write(&dir.join("chain/tests").join(p), b)?;
        }
    }
    let mut chain_validation = gate_validation("chain", None, "S0".into(), format!("S{n}"), &chain_sel);
    chain_validation.passed = !chain_sel.f2p.is_empty();
    write(&dir.join("validation.json"), &json_bytes(&chain_validation))?;
    let suite =
        ChainSuite::new("chain/tests".into(), chain_sel.f2p.clone(), chain_sel.p2p.clone(), chain_sel.p2p_on_own_tests);
    let mut chain_file =
        ChainFile::new(chain.chain_id.clone(), cfg.repo_name.clone(), cfg.language, final_commit, entries, suite);
    chain_file.shared_context = states.shared.clone();
    chain_file.by_definition = states.by_definition.clone();
    chain_file.pulled_files = states.pulled.clone();
    chain_file.repairs = repairs;
    chain_file.inline_tests = inline.iter().cloned().collect();
    chain_file.merged_stages = merged;
    chain_file.dependencies = states.dependencies();
    write(&dir.join("chain.json"), &json_bytes(&chain_file))?;
    Ok(BuildOutcome { dir, chain: chain_file, selections, chain_selection: chain_sel, unnamed_identifiers: unnamed })
}

/// One gate's re-check.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    pub gate: String,
    pub passed: bool,
    pub problems: Vec<String>,
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

/// Re-check a bundle against the repository it was built from: the workspace (final commit
/// + `s0.patch`) fails every stage's F2P before its gold patch and passes its gate after;
/// the final workspace passes the chain gate.
pub fn validate(
    bundle: &Path,
    repo: &Path,
    test: &TestCommand,
    timeouts: (Duration, Duration),
) -> Result<Vec<GateCheck>, HistoryError> {
    let berr = |message: String| HistoryError::Bundle { path: bundle.to_path_buf(), message };
    let text = std::fs::read_to_string(bundle.join("chain.json"))
        .map_err(HistoryError::io("read", &bundle.join("chain.json")))?;
    let chain: ChainFile =
        carve_formats::from_str(&text, &bundle.join("chain.json")).map_err(|e| berr(e.to_string()))?;
    let inline: BTreeSet<String> = chain.inline_tests.iter().cloned().collect();
    let scratch =
        tempfile::tempdir().map_err(HistoryError::io("create a scratch directory in", &std::env::temp_dir()))?;
    let clone = scratch.path().join("clone");
    // git runs in the scratch directory: a relative repository path must not be read from there.
    let repo =
        &repo.canonicalize().map_err(|e| berr(format!("the repository {} cannot be read: {e}", repo.display())))?;
    git(
        scratch.path(),
        &["clone", "-q", "--shared", "--no-checkout", &repo.to_string_lossy(), &clone.to_string_lossy()],
        None,
    )
    .map_err(&berr)?;
    let ws = scratch.path().join("workspace");
    std::fs::create_dir_all(&ws).map_err(HistoryError::io("create", &ws))?;
    let tar = git(&clone, &["archive", "--format=tar", &chain.final_commit], None).map_err(&berr)?;
    let untar = |dir: &Path, tar: &[u8]| -> Result<(), String> {
        use std::io::Write;
        let mut child = std::process::Command::new("tar")
            .args(["-x", "-f", "-", "-C"])
            .arg(dir)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("tar: {e}"))?;
        child.stdin.take().ok_or("tar")?.write_all(tar).map_err(|e| e.to_string())?;
        child.wait().map_err(|e| e.to_string())?.success().then_some(()).ok_or_else(|| "tar failed".to_string())
    };
    untar(&ws, &tar).map_err(&berr)?;
    let apply = |patch: &Path| -> Result<(), String> {
        let bytes = std::fs::read(patch).map_err(|e| format!("read {}: {e}", patch.display()))?;
        if bytes.is_empty() {
            return Ok(());
        }
        git(&ws, &["apply", "-p1", "--whitespace=nowarn", "-"], Some(&bytes)).map(|_| ())
    };
    apply(&bundle.join("s0.patch"))
        .map_err(|e| berr(format!("s0.patch does not apply to {}: {e}", chain.final_commit)))?;
    let runs = scratch.path().join("runs");
    std::fs::create_dir_all(&runs).map_err(HistoryError::io("create", &runs))?;
    let in_sources = carve_languages::support(chain.language).facts().tests_in_sources;
    // `before`: the tree before a gold patch, where (as in `build`) tests that cannot be
    // collected because the crate's test target does not compile yet are missing.
    let gate = |label: &str,
                tests: &BTreeMap<String, Option<Vec<u8>>>,
                ids: &[TestId],
                before: bool|
     -> Result<BTreeMap<TestId, TestStatus>, String> {
        let dir = scratch.path().join(label);
        // The tree gets the dependencies its manifest declares, as the build's states did.
        carve_languages::tree::shadow_copy(&ws, &dir).map_err(|e| e.to_string())?;
        crate::deps::provide(repo, &dir, chain.language, &format!("{label} (the workspace at this gate)"))?;
        overlay(&dir, tests, &inline)?;
        // As in `carve arc build`'s exported states: a crate that commits no Cargo.lock gets one.
        crate::states::lock_offline(&dir);
        let mut req = RunRequest::new(&dir, test.clone(), &runs);
        req.tests = Some(ids.to_vec());
        req.timeout = timeouts.0;
        req.test_timeout = timeouts.1;
        let res = match carve_languages::run_tests(&req) {
            Err(carve_languages::runner::RunnerError::Collection { .. }) if before && in_sources => {
                let _ = std::fs::remove_dir_all(&dir);
                return Ok(ids.iter().map(|i| (i.clone(), TestStatus::Missing)).collect());
            }
            r => r.map_err(|e| e.to_string())?,
        };
        let _ = std::fs::remove_dir_all(&dir);
        Ok(ids.iter().map(|i| (i.clone(), res.status(i))).collect())
    };
    let mut checks = Vec::new();
    // The chain's test files as at S_k: the workspace holds them at S0, and each stage's tests
    // directory holds its test files as at S_(k+1). P2P judged on S_k's own tests
    // (`p2p_on_own_tests`) is re-checked on the workspace with these.
    let mut own_tests: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let chain_tests = read_tests(&bundle.join(&chain.chain.tests_dir)).map_err(&berr)?;
    let chain_problems = {
        // The chain suite at S0, before any gold patch: F2P must not pass, P2P must.
        let mut problems = Vec::new();
        let (f2p, p2p) = (&chain.chain.f2p, &chain.chain.p2p);
        let before = if chain.chain.p2p_on_own_tests {
            let mut b = gate("chain-b", &chain_tests, f2p, true).map_err(&berr)?;
            b.extend(gate("chain-own", &own_tests, p2p, true).map_err(&berr)?);
            b
        } else {
            let ids: Vec<TestId> = f2p.iter().chain(p2p).cloned().collect();
            gate("chain-b", &chain_tests, &ids, true).map_err(&berr)?
        };
        before_problems(&before, f2p, p2p, "before the gold patches", chain.chain.p2p_on_own_tests, &mut problems);
        problems
    };
    for st in &chain.stages {
        let ov = read_tests(&bundle.join(&st.tests_dir)).map_err(&berr)?;
        let ids: Vec<TestId> = st.f2p.iter().chain(&st.p2p).cloned().collect();
        let before = if st.p2p_on_own_tests {
            // The stage's tests do not compile at S_k: F2P with them, P2P on S_k's own tests.
            let mut b = gate(&format!("g{}b", st.index), &ov, &st.f2p, true).map_err(&berr)?;
            b.extend(gate(&format!("g{}o", st.index), &own_tests, &st.p2p, true).map_err(&berr)?);
            b
        } else {
            gate(&format!("g{}b", st.index), &ov, &ids, true).map_err(&berr)?
        };
        let mut problems = Vec::new();
        let when = format!("before gold patch {}", st.index);
        before_problems(&before, &st.f2p, &st.p2p, &when, st.p2p_on_own_tests, &mut problems);
        apply(&bundle.join(&st.gold_patch)).map_err(|e| berr(format!("{} does not apply: {e}", st.gold_patch)))?;
        let after = gate(&format!("g{}a", st.index), &ov, &ids, false).map_err(&berr)?;
        for (t, s) in &after {
            if *s != TestStatus::Passed {
                problems.push(format!("{t} is {s} after gold patch {}", st.index));
            }
        }
        checks.push(GateCheck { gate: format!("stage {}", st.index), passed: problems.is_empty(), problems });
        own_tests.extend(ov);
    }
    let ids: Vec<TestId> = chain.chain.f2p.iter().chain(&chain.chain.p2p).cloned().collect();
    let fin = gate("chain", &chain_tests, &ids, false).map_err(&berr)?;
    let mut problems = chain_problems;
    problems.extend(
        fin.iter()
            .filter(|(_, s)| **s != TestStatus::Passed)
            .map(|(t, s)| format!("{t} is {s} on the final workspace")),
    );
    checks.push(GateCheck { gate: "chain".into(), passed: problems.is_empty(), problems });
    Ok(checks)
}

/// What a gate's before runs get wrong: an F2P test that already passes, a P2P test that
/// does not pass (on S_k's own tests when `own`).
fn before_problems(
    before: &BTreeMap<TestId, TestStatus>,
    f2p: &[TestId],
    p2p: &[TestId],
    when: &str,
    own: bool,
    problems: &mut Vec<String>,
) {
    for t in f2p {
        if before.get(t) == Some(&TestStatus::Passed) {
            problems.push(format!("F2P {t} already passes {when}"));
        }
    }
    let on = if own { " (on the state's own tests)" } else { "" };
    for t in p2p {
        let s = before.get(t).copied().unwrap_or(TestStatus::Missing);
        if s != TestStatus::Passed {
            problems.push(format!("P2P {t} is {s} {when}{on}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (servo/rust-smallvec `retain`): a Rust stage whose only tests are inline
    /// `#[test]`s or doctests has no test file; it is gated in place rather than refused.
    /// Other languages, and stages without tests, are not.
    #[test]
    fn rust_stages_with_tests_only_in_src_are_gated_in_place() {
        let stage = |tests: Vec<&str>| crate::mine::StageSummary {
            index: 0,
            commits: vec!["6cbfbe28".into()],
            title: "retain".into(),
            definitions_added: vec!["lib.rs::SmallVec.retain".into()],
            definitions_modified: vec![],
            tests_added: tests.into_iter().map(String::from).collect(),
            tests_modified: vec![],
            files: vec!["lib.rs".into()],
            lines: 57,
            evidence: vec![],
        };
        let inline = stage(vec!["lib.rs::tests.test_retain"]);
        assert!(gated_in_place(Language::Rust, &[], &inline));
        assert!(!gated_in_place(Language::Rust, &["tests/t.rs".into()], &inline));
        assert!(!gated_in_place(Language::Go, &[], &inline));
        assert!(!gated_in_place(Language::Rust, &[], &stage(vec![])));
    }

    /// A build error that names a definition taken out of a per-definition file (google/uuid:
    /// `undefined: setNodeID`) makes the states keep it; names that are only part of a word,
    /// and definitions already kept, do not.
    #[test]
    fn a_build_error_names_the_definitions_a_state_must_keep() {
        let states = States {
            dir: PathBuf::new(),
            repo: PathBuf::new(),
            states: vec![],
            final_commit: String::new(),
            shared: vec![],
            by_definition: vec![crate::states::DefinitionLevelFile::new(
                "node.go".into(),
                vec![vec!["node.go::setNodeID".into(), "node.go::ID".into()], vec![]],
                vec![vec![], vec!["node.go::UUID.NodeID".into()]],
                None,
            )],
            inline: BTreeMap::new(),
            code_states: vec![],
            language: Language::Go,
            pulled: vec![],
            moved: BTreeMap::new(),
            stage_commits: vec![],
        };
        let msg = "./node.go:77:5: undefined: setNodeID\n./uuid.go:9: uuid.NodeID undefined (type UUID has no field or method NodeID)\nIDs";
        let none = BTreeSet::new();
        assert_eq!(
            named_taken_out(&states, msg, &none),
            BTreeSet::from(["node.go::UUID.NodeID".to_string(), "node.go::setNodeID".to_string()])
        );
        let kept = BTreeSet::from(["node.go::setNodeID".to_string()]);
        assert_eq!(named_taken_out(&states, msg, &kept), BTreeSet::from(["node.go::UUID.NodeID".to_string()]));
    }

    /// A mined stage that changes only tests joins the stage before it (stage 0 joins stage 1):
    /// commits in history order, tests and files united, stages renumbered, repairs moved.
    #[test]
    fn a_test_only_stage_is_merged_into_its_neighbour() {
        let stage = |i: usize, c: &str, test: &str| crate::mine::StageSummary {
            index: i,
            commits: vec![c.into()],
            title: c.into(),
            definitions_added: vec![],
            definitions_modified: vec![],
            tests_added: vec![test.into()],
            tests_modified: vec![],
            files: vec!["lib.rs".into()],
            lines: 10,
            evidence: vec![],
        };
        let mut chain = Chain {
            chain_id: "x".into(),
            score: 1.0,
            found_by: "beam".into(),
            stages: vec![stage(0, "a", "t0"), stage(1, "b", "t1"), stage(2, "c", "t2")],
            shared_file_share: 1.0,
            review: None,
        };
        let mut commits: Vec<Vec<String>> = vec![vec!["a".into()], vec!["b".into()], vec!["c".into(), "r".into()]];
        let mut repairs = vec![Repair::new(2, "r".into(), String::new())];
        let order: Vec<String> = ["a", "b", "r", "c"].map(String::from).to_vec();
        let m = merge_stage(&mut chain, &mut commits, &mut repairs, &order, 1);
        assert_eq!((m.commits, m.into.as_str()), (vec!["b".to_string()], "a"));
        assert_eq!(commits, [vec!["a", "b"], vec!["r", "c"]]);
        assert_eq!(chain.stages[0].tests_added, ["t0", "t1"]);
        assert_eq!((chain.stages[1].index, repairs[0].stage), (1, 1));
        let m = merge_stage(&mut chain, &mut commits, &mut repairs, &order, 0);
        assert_eq!(m.into, "r");
        assert_eq!(commits, [vec!["a", "b", "r", "c"]]);
        assert!(m.reason.contains("the next stage"), "{}", m.reason);
        // Comments (doctests) and layout are no code change.
        assert_eq!(without_comments("fn f() {}\n/// ```\n/// f();\n/// ```\n"), without_comments("\n  fn f() {}\n"));
    }

    /// The before tree did not compile (every test missing): a test passing after and in both
    /// runs of S_k's own tests is P2P, one whose own runs disagree is flaky, one failing or
    /// missing there stays collateral; the stage's own test stays F2P, never P2P.
    #[test]
    fn p2p_is_judged_on_own_tests_when_the_before_tree_does_not_compile() {
        use TestStatus::{Failed, Passed};
        let runs = |r: &[(&str, TestStatus, TestStatus)]| -> Runs {
            [0, 1].map(|i| r.iter().map(|(id, a, b)| (id.to_string(), if i == 0 { *a } else { *b })).collect())
        };
        let after = runs(&[
            ("c::tests::test_retain", Passed, Passed),
            ("c::tests::test_push", Passed, Passed),
            ("c::tests::test_flaky", Passed, Passed),
            ("c::tests::test_broken_at_sk", Passed, Passed),
            ("c::doctest::src/lib.rs - SmallVec::new", Passed, Passed),
        ]);
        let mut sel = select(&Runs::default(), &after, Some(&names(&["test_retain"])));
        doctests_are_not_hidden(&mut sel);
        assert_eq!(sel.f2p, ["c::tests::test_retain"]);
        assert!(sel.p2p.is_empty() && sel.collateral.len() == 4);
        let own = runs(&[
            ("c::tests::test_retain", Passed, Passed),
            ("c::tests::test_push", Passed, Passed),
            ("c::tests::test_flaky", Passed, Failed),
            ("c::tests::test_broken_at_sk", Failed, Failed),
        ]);
        p2p_on_own_tests(&mut sel, &own);
        assert!(sel.p2p_on_own_tests);
        assert_eq!(sel.f2p, ["c::tests::test_retain"]);
        assert_eq!(sel.p2p, ["c::tests::test_push"]);
        assert_eq!(sel.flaky, ["c::tests::test_flaky"]);
        assert_eq!(sel.collateral, ["c::doctest::src/lib.rs - SmallVec::new", "c::tests::test_broken_at_sk"]);
        assert_eq!(sel.before_own_tests.len(), 4);
        // Validation: a P2P test not passing before, an F2P test passing before, are problems.
        let before = BTreeMap::from([("a".to_string(), Passed), ("b".to_string(), Failed)]);
        let mut problems = Vec::new();
        before_problems(&before, &["a".into()], &["b".into(), "c".into()], "before gold patch 1", true, &mut problems);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(
            problems[2].contains("P2P c is missing before gold patch 1 (on the state's own tests)"),
            "{problems:?}"
        );
    }

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_runner_id_names_its_test_by_identifier_or_by_its_string_name() {
        assert!(id_names("example.com/jobq/TestRunAndWait/zero", &names(&["TestRunAndWait"])));
        assert!(id_names("tests/test_app.py::test_run[a-b]", &names(&["test_run"])));
        assert!(id_names("wait::run_and_wait_finishes_the_job", &names(&["run_and_wait_finishes_the_job"])));
        assert!(id_names("test/app.test.js > run returns the job id", &names(&["run returns the job id"])));
        assert!(id_names("src/a.test.ts > App > run returns the job id", &names(&["run returns the job id"])));
        // Another test of the same file, and a name that is only part of the id's last segment.
        assert!(!id_names("test/app.test.js > run marks the job running", &names(&["run returns the job id"])));
        assert!(!id_names("test/app.test.js > run returns the job id twice", &names(&["run returns the job id"])));
    }
}
