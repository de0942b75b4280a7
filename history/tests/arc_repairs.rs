//! Chains of real histories that used not to build (issue 30), each pattern scripted in a
//! fixture of ours:
//! - `fixtures/arc/python-shorten`: a 3-stage chain whose middle stage adds only a test of
//!   what stage 0 already does, so none of its tests fails at S1. `bundle::build` merges that
//!   stage into stage 0 and builds the chain with two stages (recorded in `merged_stages`)
//!   instead of dropping it.
//! - `fixtures/arc/python-moved-tests`: a later commit merged stage 0's test file into another;
//!   stage 0 is gated on its tests where they are at S1.
//! - `fixtures/arc/go-premodule`: a Go chain older than the repository's go.mod (no state is a
//!   module); every state gets the HEAD's go.mod (recorded as shared context).
//! - `fixtures/arc/go-nomodule`: a Go history that never had a go.mod (neither its states nor
//!   its HEAD): every state gets a stand-in go.mod naming the module as the code does.
//! - `fixtures/arc/go-unbuildable-s0`: a 3-stage Go chain that starts with the repository's
//!   first code, so S0 holds no Go package and no repair makes it build; the first stage leaves
//!   the chain (its code stays in every state) and the chain is built with the other two.

use std::path::{Path, PathBuf};

use carve_history::bundle::{BuildConfig, BuildOutcome};
use carve_history::{Chain, MineOptions, recipe};
use carve_languages::Language;
use carve_languages::runner::TestCommand;
use carve_testutil::needs;

mod common;

/// The fixture's history built in a scratch folder, mined; the commit ids of the messages
/// starting with `chain` and the mined chain made of exactly those commits' stages.
fn mined(fixture: &str, chain: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<String>, Chain) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arc").join(fixture).join("recipe.toml");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let r = recipe::Recipe::read(&path).unwrap();
    let ids = recipe::build(&r, &repo).unwrap();
    let id_of = |msg: &str| ids[r.commits.iter().position(|c| c.message.starts_with(msg)).unwrap()].clone();
    let want: Vec<String> = chain.iter().map(|m| id_of(m)).collect();
    let opts = MineOptions { repo_name: format!("fixture/{fixture}"), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let found = report
        .chains
        .iter()
        .find(|c| c.stages.iter().map(|s| s.commits[0].clone()).collect::<Vec<_>>() == want)
        .unwrap_or_else(|| panic!("the scripted chain {chain:?} was not mined: {:#?}", report.chains))
        .clone();
    (dir, repo, want, found)
}

/// The build configuration of fixtures/arc/`fixture`'s chain.
fn config(language: Language, test: TestCommand, fixture: &str) -> BuildConfig {
    common::build_config(language, test, &format!("fixture/{fixture}"))
}

fn assert_validates(outcome: &BuildOutcome, repo: &Path, cfg: &BuildConfig) {
    let limits = (cfg.run_timeout, cfg.test_timeout);
    let checks = carve_history::bundle::validate(&outcome.dir, repo, &cfg.test, limits).unwrap();
    assert_eq!(checks.len(), outcome.chain.stages.len() + 1);
    for c in &checks {
        assert!(c.passed, "{}: {:?}", c.gate, c.problems);
    }
}

#[needs("pytest")]
fn an_ungateable_stage_is_merged_into_its_neighbour() {
    let chain = ["add App.run:", "App.run: check names", "add App.run_and_wait"];
    let (dir, repo, ids, chain) = mined("python-shorten", &chain);
    let (run, helper) = (ids[0].clone(), ids[1].clone());
    let cfg = config(
        Language::Python,
        TestCommand::pytest("python3", vec!["-p".into(), "no:cacheprovider".into()]),
        "python-shorten",
    );
    let outcome = carve_history::bundle::build(&repo, &chain, &cfg, &dir.path().join("bundles"))
        .unwrap_or_else(|e| panic!("the chain is shortened rather than dropped: {e}"));
    let cj = &outcome.chain;
    assert_eq!(cj.stages.len(), 2, "stage 1 joined stage 0");
    assert_eq!(cj.merged_stages.len(), 1, "{:?}", cj.merged_stages);
    let m = &cj.merged_stages[0];
    assert_eq!((m.commits.clone(), m.into.clone()), (vec![helper.clone()], run.clone()));
    assert!(m.reason.contains("has no test that fails at S1 and passes at S2"), "{}", m.reason);
    assert!(m.reason.contains("merged into the stage before it"), "{}", m.reason);
    // The merged stage's test is the first stage's now; both stages gate.
    let f2p0 = &outcome.selections[0].f2p;
    assert!(f2p0.contains(&"tests/test_app.py::test_run_returns_job_id".to_string()), "{f2p0:?}");
    assert!(f2p0.contains(&"tests/test_app.py::test_run_rejects_none_name".to_string()), "{f2p0:?}");
    let f2p1 = &outcome.selections[1].f2p;
    assert!(f2p1.contains(&"tests/test_wait.py::test_run_and_wait_finishes_the_job".to_string()), "{f2p1:?}");
    assert_validates(&outcome, &repo, &cfg);
    // chain.json records the cut.
    let text = std::fs::read_to_string(outcome.dir.join("chain.json")).unwrap();
    assert!(text.contains("merged_stages") && text.contains(&helper), "{text}");
}

#[needs("go")]
fn states_older_than_go_mod_get_the_heads() {
    let (dir, repo, ids, chain) = mined("go-premodule", &["add App.Run:", "add App.RunAndWait"]);
    let cfg = config(Language::Go, TestCommand::GoTest { args: vec![], packages: None }, "go-premodule");
    let outcome = carve_history::bundle::build(&repo, &chain, &cfg, &dir.path().join("bundles"))
        .unwrap_or_else(|e| panic!("the states get the HEAD's go.mod: {e}"));
    let cj = &outcome.chain;
    assert_eq!(cj.stages.len(), 2);
    let adopted: Vec<&str> = cj.shared_context.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(adopted, ["go.mod"], "{:?}", cj.shared_context);
    assert!(cj.shared_context[0].reason.contains("HEAD"), "{}", cj.shared_context[0].reason);
    // The chain's final commit has no go.mod; S0 (its s0.patch) brings it.
    assert!(!ids.is_empty() && cj.final_commit == ids[1]);
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("+module example.com/jobq"), "{s0}");
    let f2p1 = &outcome.selections[1].f2p;
    assert!(f2p1.iter().any(|t| t.ends_with("TestRunAndWaitFinishesTheJob")), "{f2p1:?}");
    assert_validates(&outcome, &repo, &cfg);
}

#[needs("go")]
fn states_of_a_history_without_go_mod_get_a_stand_in() {
    let (dir, repo, _, chain) = mined("go-nomodule", &["add App.Run:", "add App.RunAndWait"]);
    let cfg = config(Language::Go, TestCommand::GoTest { args: vec![], packages: None }, "go-nomodule");
    let outcome = carve_history::bundle::build(&repo, &chain, &cfg, &dir.path().join("bundles"))
        .unwrap_or_else(|e| panic!("the states get a stand-in go.mod: {e}"));
    let cj = &outcome.chain;
    assert_eq!(cj.stages.len(), 2);
    let adopted: Vec<&str> = cj.shared_context.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(adopted, ["go.mod"], "{:?}", cj.shared_context);
    assert!(cj.shared_context[0].reason.contains("as carve made it"), "{}", cj.shared_context[0].reason);
    // The module path is the import comment's; S0 (its s0.patch) brings the go.mod.
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("+module github.com/example/jobq"), "{s0}");
    let f2p0 = &outcome.selections[0].f2p;
    assert!(f2p0.iter().any(|t| t.ends_with("TestRunReturnsJobID")), "{f2p0:?}");
    let f2p1 = &outcome.selections[1].f2p;
    assert!(f2p1.iter().any(|t| t.ends_with("TestRunAndWaitFinishesTheJob")), "{f2p1:?}");
    assert_validates(&outcome, &repo, &cfg);
}

#[needs("pytest")]
fn a_stage_is_gated_on_its_tests_where_a_later_commit_moved_them() {
    // The miner takes the test-only commit that merged the files as a middle stage; the chain
    // without it (as python-semver's chains are mined) is the case: stage 0's test file is
    // gone at S1.
    let mined_as = ["add App.run:", "tests: one file", "add App.run_and_wait"];
    let (dir, repo, _, mut chain) = mined("python-moved-tests", &mined_as);
    chain.stages.remove(1);
    for (i, s) in chain.stages.iter_mut().enumerate() {
        s.index = i;
    }
    let cfg = config(
        Language::Python,
        TestCommand::pytest("python3", vec!["-p".into(), "no:cacheprovider".into()]),
        "python-moved-tests",
    );
    let outcome = carve_history::bundle::build(&repo, &chain, &cfg, &dir.path().join("bundles"))
        .unwrap_or_else(|e| panic!("stage 0 is gated on its tests in tests/test_jobq.py: {e}"));
    assert_eq!(outcome.chain.stages.len(), 2);
    assert!(outcome.chain.merged_stages.is_empty(), "{:?}", outcome.chain.merged_stages);
    let f2p0 = &outcome.selections[0].f2p;
    assert!(f2p0.contains(&"tests/test_jobq.py::test_run_returns_job_id".to_string()), "{f2p0:?}");
    assert!(!f2p0.iter().any(|t| t.contains("run_and_wait")), "stage 1's tests are not stage 0's: {f2p0:?}");
    assert_validates(&outcome, &repo, &cfg);
}

#[needs("go")]
fn a_state_no_repair_makes_build_is_taken_out_of_the_chain() {
    let mined_as = ["add Slugify", "add App.Run:", "add App.RunAndWait"];
    let (dir, repo, ids, chain) = mined("go-unbuildable-s0", &mined_as);
    assert_eq!(chain.stages.len(), 3);
    let cfg = config(Language::Go, TestCommand::GoTest { args: vec![], packages: None }, "go-unbuildable-s0");
    let outcome = carve_history::bundle::build(&repo, &chain, &cfg, &dir.path().join("bundles"))
        .unwrap_or_else(|e| panic!("the chain is built without its unbuildable S0: {e}"));
    let cj = &outcome.chain;
    assert_eq!(cj.stages.len(), 2, "the first stage left the chain");
    assert_eq!(cj.merged_stages.len(), 1, "{:?}", cj.merged_stages);
    let m = &cj.merged_stages[0];
    assert_eq!((m.commits.clone(), m.into.as_str()), (vec![ids[0].clone()], "S0"));
    assert!(m.reason.contains("S0 does not pass the build check"), "{}", m.reason);
    assert!(m.reason.contains("the chain starts at what was S1"), "{}", m.reason);
    // Slugify is in every state now: S0 (s0.patch, the final checkpoint to S0) takes App.Run
    // out and leaves Slugify.
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("-func (a *App) Run(name string)") && !s0.contains("func Slugify"), "{s0}");
    let f2p0 = &outcome.selections[0].f2p;
    assert!(f2p0.iter().any(|t| t.ends_with("TestRunReturnsTheSlugAsJobID")), "{f2p0:?}");
    assert!(!f2p0.iter().any(|t| t.contains("Slugify")), "Slugify's tests are no stage's: {f2p0:?}");
    let f2p1 = &outcome.selections[1].f2p;
    assert!(f2p1.iter().any(|t| t.ends_with("TestRunAndWaitFinishesTheJob")), "{f2p1:?}");
    assert_validates(&outcome, &repo, &cfg);
}
