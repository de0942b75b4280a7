//! Stage gates and the chain gate: the trees each gate runs (a state's code with the chain's
//! hidden test files laid over it), their runs through the pipeline's test runs
//! (`carve_pipeline::runs::TestRuns`, twice per tree), and the F2P/P2P tests each gate keeps
//! (`carve_pipeline::selection`), with what only FeatureArc's stages need: a stage's own
//! tests named by id, stages gated in place, and P2P judged on a state's own tests where the
//! stage's tests do not compile against it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use carve_languages::Language;
use carve_languages::runner::{TestId, TestStatus};
use carve_pipeline::runs::{RunFailed, Runs, TestRuns};
use carve_pipeline::selection::{self, RUNS_PER_STATE, Selection};

use crate::mine::Chain;
use crate::states::{Role, States, role};

/// Test files by path: their bytes, or `None` where the file does not exist.
pub(super) type Files = BTreeMap<String, Option<Vec<u8>>>;

/// The trees of a chain's gates: which test files each stage changed, and a state's code
/// with the chain's test files laid over it.
pub(super) struct GateTrees<'a> {
    pub states: &'a States,
    pub language: Language,
    pub scratch: &'a Path,
    /// Source files with tests inside, split into code and tests (`States::inline`).
    pub inline: BTreeSet<String>,
    /// Per stage, its test files (and the source files whose inline tests it changed).
    pub stage_tests: Vec<Vec<String>>,
    /// Every stage's test files.
    pub all_tests: BTreeSet<String>,
    /// The chain's test files (not inline) as at S0.
    tests_at_s0: Files,
}

impl<'a> GateTrees<'a> {
    /// The gate trees of the `stages` stages of `states`, built under `scratch`.
    pub fn new(states: &'a States, chain: &Chain, language: Language, scratch: &'a Path) -> Result<Self, String> {
        let stages = chain.stages.len();
        let stage_names: Vec<BTreeSet<String>> = chain.stages.iter().map(own_tests).collect();
        // Test files of each stage (role "test" among the files the stage changed), and the source
        // files whose inline tests it changed (their test part is the stage's hidden tests).
        let inline: BTreeSet<String> = states.inline.keys().cloned().collect();
        let mut stage_tests: Vec<Vec<String>> = Vec::new();
        for k in 0..stages {
            let files = states.changed_files(k, k + 1)?;
            let mut tests: Vec<String> = files.into_iter().filter(|f| role(language, f) == Role::Test).collect();
            tests.extend(states.inline.iter().filter(|(_, parts)| parts[k] != parts[k + 1]).map(|(p, _)| p.clone()));
            tests.extend(tests_moved_elsewhere(states, language, k, &stage_names[k], &tests)?);
            tests.sort();
            tests.dedup();
            stage_tests.push(tests);
        }
        let all_tests: BTreeSet<String> = stage_tests.iter().flatten().cloned().collect();
        let mut trees =
            GateTrees { states, language, scratch, inline, stage_tests, all_tests, tests_at_s0: Files::new() };
        // The code states already hold the inline tests as at S0.
        trees.tests_at_s0 = trees.at(0, trees.all_tests.iter().filter(|p| !trees.inline.contains(*p)));
        Ok(trees)
    }

    /// `paths` as at state `k` (an inline-test file: its test part).
    pub fn at<'p>(&self, k: usize, paths: impl Iterator<Item = &'p String>) -> Files {
        let states = self.states;
        paths.map(|p| (p.clone(), states.inline_tests_at(k, p).unwrap_or_else(|| states.file_at(k, p)))).collect()
    }

    /// A gate tree: state `code`'s code, the chain's tests at S0, then `overlay_files`.
    pub fn tree(&self, label: &str, code: usize, overlay_files: &Files) -> Result<PathBuf, String> {
        let dir = self.scratch.join(label);
        self.states.export_code(code, &dir)?;
        overlay(&dir, &self.tests_at_s0, &self.inline)?;
        overlay(&dir, overlay_files, &self.inline)?;
        Ok(dir)
    }
}

/// The test files of state S_(k+1) that hold stage `k`'s own tests (`names`) where the files
/// the stage changed (`changed`) do not: a later commit moved or merged the stage's test file
/// into another (python-semver: `tests/semver_test.py`, then `tests.py`, then
/// `test_semver.py`), so the stage is gated on its tests where they are, not on the file it
/// changed. A name counts as held by a file whose text has it as a whole word.
fn tests_moved_elsewhere(
    states: &States,
    language: Language,
    k: usize,
    names: &BTreeSet<String>,
    changed: &[String],
) -> Result<Vec<String>, String> {
    let text = |p: &str| states.file_at(k + 1, p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let held: Vec<String> = changed.iter().filter_map(|p| text(p)).collect();
    let missing: Vec<&String> = names.iter().filter(|n| !held.iter().any(|t| has_word(t, n))).collect();
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for p in states.files_at(k + 1)? {
        if role(language, &p) != Role::Test || changed.contains(&p) {
            continue;
        }
        if text(&p).is_some_and(|t| missing.iter().any(|n| has_word(&t, n))) {
            found.push(p);
        }
    }
    Ok(found)
}

/// Whether `word` occurs in `text` with no identifier character right before or after it.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word)
        .any(|(i, _)| !ident(text[..i].chars().next_back()) && !ident(text[i + word.len()..].chars().next()))
}

/// What the gates selected: each stage's tests, the chain suite's, and the chain's test
/// files as at Sn (the chain suite's hidden tests).
pub(super) struct Selected {
    pub stages: Vec<Selection>,
    pub chain: Selection,
    pub chain_tests: Files,
}

/// Why the gates could not select a chain's tests.
#[derive(Debug)]
pub(super) enum GateFailure {
    /// Stage `stage` cannot be gated: it leaves no test file, or no test of it fails before
    /// and passes after. The chain can still be built without it as a stage of its own
    /// (merged into a neighbour: see `super::build`).
    Ungateable { stage: usize, reason: String },
    /// Anything else (a tree whose tests could not run, the chain gate): the chain stops.
    Failed(String),
}

impl GateFailure {
    pub(super) fn message(&self) -> &str {
        match self {
            GateFailure::Ungateable { reason, .. } | GateFailure::Failed(reason) => reason,
        }
    }
}

/// Run every stage gate and the chain gate, and select their tests; the first stage that
/// cannot be gated, or has no F2P test, is a [`GateFailure::Ungateable`].
pub(super) fn select_tests(trees: &GateTrees<'_>, chain: &Chain, runs: &TestRuns) -> Result<Selected, GateFailure> {
    let runs_dir = trees.scratch.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .map_err(|e| GateFailure::Failed(format!("could not create {}: {e}", runs_dir.display())))?;
    let runner = GateRunner { runs, language: trees.language, scratch: runs_dir };
    let mut stages = Vec::new();
    for k in 0..chain.stages.len() {
        stages.push(stage_selection(trees, &runner, chain, k)?);
    }
    let (chain_sel, chain_tests) = chain_selection(trees, &runner, chain).map_err(GateFailure::Failed)?;
    Ok(Selected { stages, chain: chain_sel, chain_tests })
}

/// Stage `k`'s gate: S_k against S_(k+1), with the stage's test files as at S_(k+1).
fn stage_selection(
    trees: &GateTrees<'_>,
    runner: &GateRunner<'_>,
    chain: &Chain,
    k: usize,
) -> Result<Selection, GateFailure> {
    let ungateable = |reason: String| GateFailure::Ungateable { stage: k, reason };
    let ov = trees.at(k + 1, trees.stage_tests[k].iter());
    let present: Vec<String> = ov.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.clone()).collect();
    let s = &chain.stages[k];
    // Rust tests inside `src/` (`#[cfg(test)]` modules, doctests) cannot be laid over S_k:
    // they are gated in place, the whole suite of S_k against that of S_(k+1), where the
    // stage's new tests are missing before.
    let in_place = gated_in_place(trees.language, &present, s);
    if present.is_empty() && !in_place {
        return Err(ungateable(format!("stage {k} leaves no test file at S{}; it cannot be gated", k + 1)));
    }
    let before = trees.tree(&format!("s{k}-before"), k, &ov).map_err(GateFailure::Failed)?;
    let after = trees.tree(&format!("s{k}-after"), k + 1, &ov).map_err(GateFailure::Failed)?;
    let runs = if in_place { runner.whole(&before, &after) } else { runner.gate(&before, &after, &present) };
    let g = runs.map_err(|e| match e {
        GateError::Before(e) => format!("stage {k}, before (S{k}): {e}"),
        GateError::After(e) => format!("stage {k}, after (S{}): {e}", k + 1),
    });
    let g = g.map_err(GateFailure::Failed)?;
    let mut sel = select(&g.before, &g.after, Some(&own_tests(s)));
    doctests_are_not_hidden(&mut sel);
    if needs_own_tests(trees.language, g.before_collected, &sel) {
        // The stage's tests do not compile against S_k's code: P2P on S_k's own tests.
        let own =
            trees.tree(&format!("s{k}-own"), k, &trees.at(k, trees.all_tests.iter())).map_err(GateFailure::Failed)?;
        let runs = runner
            .own_tests(&own)
            .map_err(|e| GateFailure::Failed(format!("stage {k}, S{k} with its own tests: {e}")))?;
        p2p_on_own_tests(&mut sel, &runs);
        let _ = std::fs::remove_dir_all(&own);
    }
    if sel.f2p.is_empty() {
        return Err(ungateable(no_f2p_reason(k, &s.commits[0], &sel, &g.after)));
    }
    let _ = std::fs::remove_dir_all(&before);
    let _ = std::fs::remove_dir_all(&after);
    Ok(sel)
}

/// Why stage `k` (first commit `commit`) has no F2P test: the selection's counts, and, when
/// none of the stage's tests passes at S_(k+1) either (`after`), that they do not run on that
/// state's code here. Suor/funcy's 2013 states are Python 2 code: every test file fails to
/// collect under Python 3, and the counts alone (all 0) said nothing of it.
fn no_f2p_reason(k: usize, commit: &str, sel: &Selection, after: &Runs) -> String {
    let mut reason = format!(
        "stage {k} ({}) has no test that fails at S{k} and passes at S{} (flaky {}, failing after {}, collateral {})",
        &commit[..8.min(commit.len())],
        k + 1,
        sel.flaky.len(),
        sel.failing_after.len(),
        sel.collateral.len()
    );
    let ids = after.ids();
    let passing = ids.iter().filter(|id| (0..after.len()).all(|i| after.status(i, id) == TestStatus::Passed)).count();
    if passing == 0 {
        reason.push_str(&format!(
            "; none of its tests passes at S{} ({} reported): they do not run on that state's code here (it may \
             need another interpreter or other dependencies than this environment's)",
            k + 1,
            ids.len()
        ));
    }
    reason
}

/// The chain gate: S0 against Sn with every chain test file as at Sn; with those files.
fn chain_selection(
    trees: &GateTrees<'_>,
    runner: &GateRunner<'_>,
    chain: &Chain,
) -> Result<(Selection, Files), String> {
    let n = chain.stages.len();
    let chain_ov = trees.at(n, trees.all_tests.iter());
    let chain_present: Vec<String> = chain_ov.iter().filter(|(_, b)| b.is_some()).map(|(p, _)| p.clone()).collect();
    let before = trees.tree("chain-before", 0, &chain_ov)?;
    let after = trees.tree("chain-after", n, &chain_ov)?;
    let g = runner.gate(&before, &after, &chain_present).map_err(|e| match e {
        GateError::Before(e) => format!("chain gate, S0: {e}"),
        GateError::After(e) => format!("chain gate, S{n}: {e}"),
    })?;
    // As in a stage gate, a test fails at S0 and passes at Sn as F2P only when the chain added
    // or changed it; others failing at S0 (a package that cannot build without the chain's
    // code, spf13/cast's 8,000 table tests) are collateral.
    let chain_own: BTreeSet<String> = chain.stages.iter().flat_map(own_tests).collect();
    let mut chain_sel = select(&g.before, &g.after, Some(&chain_own));
    doctests_are_not_hidden(&mut chain_sel);
    if needs_own_tests(trees.language, g.before_collected, &chain_sel) {
        let own = trees.tree("chain-own", 0, &BTreeMap::new())?;
        let runs = runner.own_tests(&own).map_err(|e| format!("chain gate, S0 with its own tests: {e}"))?;
        p2p_on_own_tests(&mut chain_sel, &runs);
        let _ = std::fs::remove_dir_all(&own);
    }
    Ok((chain_sel, chain_ov))
}

/// Write `files` (path → bytes, `None` deletes) into `root`. A path in `inline` is a source
/// file's test part: it replaces the tests of `root`'s file (which keeps its code); `None`
/// takes them out; with no such file in `root` there is nothing to join it with.
pub(super) fn overlay(
    root: &Path,
    files: &BTreeMap<String, Option<Vec<u8>>>,
    inline: &BTreeSet<String>,
) -> Result<(), String> {
    let (inline_parts, whole): (BTreeMap<_, _>, BTreeMap<_, _>) =
        files.iter().map(|(p, b)| (p.clone(), b.clone())).partition(|(p, _)| inline.contains(p));
    for (path, bytes) in &inline_parts {
        let p = root.join(path);
        let Ok(code) = std::fs::read_to_string(&p) else { continue };
        let tests = bytes.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let split = carve_languages::inline_tests_of(path)
            .ok_or_else(|| format!("{path} is listed with inline tests, but its language has none"))?;
        let joined = split
            .with_tests_of(&code, &tests)
            .map_err(|e| format!("joining the inline tests of {path} with its code: {e}"))?;
        std::fs::write(&p, joined).map_err(|e| format!("write {}: {e}", p.display()))?;
    }
    carve_core::fs::write_files(root, &whole).map_err(|e| e.to_string())
}

/// Runs a gate's trees through the pipeline's test runs, [`RUNS_PER_STATE`] times each.
struct GateRunner<'a> {
    runs: &'a TestRuns,
    language: Language,
    scratch: PathBuf,
}

/// What a gate's *before* tree ran when its tests could not be collected at all. Where tests
/// live in the sources (Rust), a stage's new inline tests naming code S_k lacks keep the
/// crate's test target from compiling: every test is then missing before (and fails there),
/// none passes, and the second value is false (the tree's tests were not collected; P2P is
/// then judged on S_k's own tests, see [`p2p_on_own_tests`]). Elsewhere a collection failure
/// stays an error.
fn before_runs(language: Language, runs: Result<Runs, RunFailed>) -> Result<(Runs, bool), RunFailed> {
    match runs {
        Err(e) if e.is_collection() && carve_languages::support(language).facts().tests_in_sources => {
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

impl GateRunner<'_> {
    /// Run `tests` (ids or files) twice in the gate's `before` and `after` trees. Both trees
    /// run the same selection, so a test is never "missing" on one side only because the
    /// other side ran more: when the runner cannot select by file in either tree (its ids
    /// name packages or targets, or a file that cannot load reports only itself), both run
    /// the whole suite, and selection keeps the stage's own tests as F2P.
    fn gate(&self, before: &Path, after: &Path, tests: &[String]) -> Result<Gated, GateError> {
        let selected = |root: &Path| self.twice(root, Some(tests));
        let (rb, mut collected) =
            before_runs(self.language, selected(before)).map_err(|e| GateError::Before(e.message))?;
        let ra = selected(after).map_err(|e| GateError::After(e.message))?;
        // A requested file gets an entry of its own next to its tests; keep the tests.
        if !rb.only_of(tests) && !ra.only_of(tests) {
            return Ok(Gated { before: rb.without(tests), after: ra.without(tests), before_collected: collected });
        }
        let whole = |root: &Path, selected: Runs, collected: &mut bool| match self.twice(root, None) {
            Ok(r) => Ok(r),
            // A whole-suite run refuses a tree whose test packages do not build (the stage's
            // tests naming code S_k lacks); the selected run has already reported what could
            // run there, and the stage's tests are missing.
            Err(e) if e.is_collection() => {
                *collected = false;
                Ok(selected)
            }
            Err(e) => Err(e.message),
        };
        let rb = whole(before, rb, &mut collected).map_err(GateError::Before)?;
        let ra = whole(after, ra, &mut true).map_err(GateError::After)?;
        Ok(Gated { before: rb.without(tests), after: ra.without(tests), before_collected: collected })
    }

    /// The whole suite of `before` and of `after`, twice each.
    fn whole(&self, before: &Path, after: &Path) -> Result<Gated, GateError> {
        let all = |root: &Path| self.twice(root, None);
        let (rb, collected) = before_runs(self.language, all(before)).map_err(|e| GateError::Before(e.message))?;
        let ra = all(after).map_err(|e| GateError::After(e.message))?;
        Ok(Gated { before: rb, after: ra, before_collected: collected })
    }

    /// The whole suite of `root` (a state with its own tests), twice; a suite that does not
    /// compile there has no test to pass.
    fn own_tests(&self, root: &Path) -> Result<Runs, String> {
        match self.twice(root, None) {
            Ok(r) => Ok(r),
            Err(e) if e.is_collection() => Ok(Runs::default()),
            Err(e) => Err(e.message),
        }
    }

    /// Run `tests` (all when `None`) in `root` twice.
    fn twice(&self, root: &Path, tests: Option<&[String]>) -> Result<Runs, RunFailed> {
        self.runs.repeat(root, tests, RUNS_PER_STATE, &self.scratch)
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

/// Whether runner id `id` names the test definition `name` (its last name component): an
/// identifier of the id (`pkg/TestX/sub`, `target::mod::test`, `file.py::test_x[param]`), or,
/// for a test named by a string (`test("run returns the id", …)` in JavaScript), the id's
/// last segment after the runner's ` > ` separator.
fn id_names(id: &str, names: &BTreeSet<String>) -> bool {
    let mut toks = BTreeSet::new();
    crate::analysis::identifiers(id.split('[').next().unwrap_or(id), &mut toks);
    toks.iter().any(|t| names.contains(t)) || id.rsplit(" > ").next().is_some_and(|last| names.contains(last))
}

/// Select a gate's tests: F2P only among the tests `own` names (all when `None`).
fn select(before: &Runs, after: &Runs, own: Option<&BTreeSet<String>>) -> Selection {
    selection::select(before, after, |id| own.is_none_or(|names| id_names(id, names)))
}

/// Whether a gate judges P2P on S_k's own tests: where tests live in the sources (Rust), the
/// stage's tests laid over S_k's code may not compile (they name code S_k lacks, or a changed
/// signature), which takes out the crate's whole test target (`lib.rs`'s `#[cfg(test)]`
/// module, or every target when nothing compiles): its other tests are then missing before and
/// "collateral", none could be P2P. A doctest is no such case (a new one is missing at S_k in
/// any form).
fn needs_own_tests(language: Language, before_collected: bool, sel: &Selection) -> bool {
    carve_languages::support(language).facts().tests_in_sources
        && (!before_collected || sel.collateral.iter().any(|id| !carve_languages::is_doctest_id(id)))
}

/// P2P judged on S_k as it is, with its *own* tests (`own`: its test files at their S_k text,
/// run twice), where the before tree's tests did not all compile ([`needs_own_tests`]): a
/// test that passes after and in both own runs is P2P, whether it passed in the before tree
/// or was collateral there (missing: its target did not compile); one whose own runs disagree
/// is flaky; one failing or missing there is not P2P (collateral). F2P stays as selected (the
/// stage's tests, failing or missing before and passing after): a test the stage changed is
/// judged in its new form only.
fn p2p_on_own_tests(sel: &mut Selection, own: &Runs) {
    sel.judge_p2p_on(own);
}

/// A Rust doctest lives in the code's doc comments, which the stage patch (not the hidden
/// tests) holds: it is never F2P; one that fails before and passes after is collateral.
fn doctests_are_not_hidden(sel: &mut Selection) {
    let (doc, rest): (Vec<TestId>, Vec<TestId>) = sel.f2p.drain(..).partition(|id| carve_languages::is_doctest_id(id));
    sel.f2p = rest;
    sel.collateral.extend(doc);
    sel.collateral.sort();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::validate::before_problems;

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

    /// The before tree did not compile (every test missing): a test passing after and in both
    /// runs of S_k's own tests is P2P, one whose own runs disagree is flaky, one failing or
    /// missing there stays collateral; the stage's own test stays F2P, never P2P.
    #[test]
    fn p2p_is_judged_on_own_tests_when_the_before_tree_does_not_compile() {
        use TestStatus::{Failed, Passed};
        let runs = |r: &[(&str, TestStatus, TestStatus)]| -> Runs {
            Runs::from(
                [0, 1].map(|i| r.iter().map(|(id, a, b)| (id.to_string(), if i == 0 { *a } else { *b })).collect()),
            )
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

    /// A stage none of whose tests passes after it says so (they did not run on that state's
    /// code), besides the counts; one whose tests pass after but also before does not.
    #[test]
    fn a_stage_whose_tests_do_not_run_after_it_says_so() {
        let none = no_f2p_reason(0, "1412d6171234", &Selection::default(), &Runs::default());
        assert!(none.starts_with("stage 0 (1412d617) has no test that fails at S0 and passes at S1"), "{none}");
        assert!(none.contains("none of its tests passes at S1 (0 reported): they do not run"), "{none}");
        let run = BTreeMap::from([("t.py::test_a".to_string(), TestStatus::Passed)]);
        let passing = Runs::from([run.clone(), run]);
        let some = no_f2p_reason(1, "abc", &Selection::default(), &passing);
        assert_eq!(
            some,
            "stage 1 (abc) has no test that fails at S1 and passes at S2 (flaky 0, failing after 0, collateral 0)"
        );
    }

    /// A stage's test is found in another file by its name as a whole word only.
    #[test]
    fn a_test_name_is_found_as_a_whole_word() {
        let text = "def test_should_get_max():\n    assert max_ver('1.0.0', '2.0.0')\n";
        assert!(has_word(text, "test_should_get_max"));
        assert!(has_word(text, "max_ver"));
        assert!(!has_word(text, "test_should_get"));
        assert!(!has_word(text, "get_max"));
        assert!(has_word("it(\"run returns the job id\", () => {})", "run returns the job id"));
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
