//! End-to-end: build the scripted history of `fixtures/arc/<lang>/recipe.toml`, analyse and
//! mine it, and check the same-feature chain the recipe scripts is found with its evidence,
//! and the unrelated commits are not in it.

use std::path::{Path, PathBuf};

use carve_history::bundle::BuildConfig;
use carve_history::{MineOptions, recipe};
use carve_languages::Language;
use carve_languages::runner::TestCommand;
use carve_languages::typescript::runner::PackageManager;
use carve_testutil::needs;

mod common;

fn fixture(lang: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/arc").join(lang).join("recipe.toml")
}

/// The `# carve: chain = [...]` and `# carve: unrelated = [...]` lines of a recipe: commit
/// messages (prefixes) of the scripted chain, in order, and of the unrelated commits.
fn expectations(path: &Path) -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let list = |key: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.starts_with(&format!("# carve: {key} = "))).unwrap();
        let value = line.split_once(" = ").unwrap().1;
        toml::from_str::<toml::Table>(&format!("v = {value}")).unwrap()["v"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    (list("chain"), list("unrelated"))
}

/// How the fixtures' bundles are built: pytest (`python3`), `go test`, `cargo test` or
/// `node --test`, 300 s per run, 60 s per test.
fn config(language: Language, repo_name: &str) -> BuildConfig {
    let test = match language {
        Language::Go => TestCommand::GoTest { args: vec![], packages: None },
        Language::Rust => TestCommand::Cargo { args: vec![], test_args: vec![], workspace: false, nextest: false },
        Language::TypeScript | Language::JavaScript => {
            TestCommand::NodeTest { package_manager: PackageManager::Npm, args: vec![] }
        }
        Language::Python => TestCommand::pytest("python3", vec![]),
    };
    common::build_config(language, test, repo_name)
}

/// Re-validate a built bundle from the bundle alone: every gate must pass. Returns how many.
fn assert_validates(bundle: &Path, repo: &Path, cfg: &BuildConfig) -> usize {
    let limits = (cfg.run_timeout, cfg.test_timeout);
    let checks = carve_history::bundle::validate(bundle, repo, &cfg.test, limits).unwrap();
    for c in &checks {
        assert!(c.passed, "{}: {:?}", c.gate, c.problems);
    }
    checks.len()
}

/// A fixture's scripted history, mined, with the bundle of its 3-stage chain built (bind
/// `_dir` when destructuring: the scratch directory lives as long as it).
struct Built {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    cfg: BuildConfig,
    outcome: carve_history::bundle::BuildOutcome,
}

fn build_fixture_chain(lang: &str, language: Language) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&recipe::Recipe::read(&fixture(lang)).unwrap(), &repo).unwrap();
    let name = format!("fixture/{lang}");
    let opts = MineOptions { repo_name: name.clone(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = config(language, &name);
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    Built { _dir: dir, repo, cfg, outcome }
}

fn mine_fixture(lang: &str) {
    assert!(recipe::git_available(), "building a fixture history needs the `git` command; install git");
    let path = fixture(lang);
    let (chain_msgs, unrelated_msgs) = expectations(&path);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = recipe::build(&recipe::Recipe::read(&path).unwrap(), &repo).unwrap();
    let r = recipe::Recipe::read(&path).unwrap();
    let id_of = |msg: &str| -> String {
        let i = r.commits.iter().position(|c| c.message.starts_with(msg)).unwrap_or_else(|| panic!("no commit {msg}"));
        ids[i].clone()
    };
    let opts = MineOptions { repo_name: format!("fixture/{lang}"), ..Default::default() };
    let (history, report) = carve_history::mine(&repo, "", &opts).unwrap();
    assert_eq!(history.commits.len(), ids.len());

    let want: Vec<String> = chain_msgs.iter().map(|m| id_of(m)).collect();
    let found = report
        .chains
        .iter()
        .find(|c| c.stages.iter().map(|s| s.commits[0].clone()).collect::<Vec<_>>() == want)
        .unwrap_or_else(|| panic!("the scripted chain {chain_msgs:?} was not found; report: {report:#?}"));
    for s in &found.stages[1..] {
        assert!(
            s.evidence.iter().any(|e| e.kind.builds_on()),
            "stage {} carries no evidence that it builds on an earlier stage: {:?}",
            s.index,
            s.evidence
        );
    }
    for m in &unrelated_msgs {
        let id = id_of(m);
        assert!(!found.stages.iter().any(|s| s.commits.contains(&id)), "unrelated commit `{m}` is in the chain");
    }
    assert!(report.discarded.iter().all(|d| !d.reason.is_empty()));
    assert!(found.chain_id.starts_with(&format!("fixture__{lang}.{}.", &want.last().unwrap()[..8])));
}

#[test]
fn python_fixture_chain_is_mined() {
    mine_fixture("python");
}

#[test]
fn go_fixture_chain_is_mined() {
    mine_fixture("go");
}

#[test]
fn rust_fixture_chain_is_mined() {
    mine_fixture("rust");
}

#[test]
fn javascript_fixture_chain_is_mined() {
    mine_fixture("javascript");
}

/// Mine the Python fixture, build the bundle of its scripted chain with pytest, check the
/// per-stage tests and re-validate the bundle.
#[needs("pytest")]
fn python_fixture_chain_builds_and_validates() {
    let Built { _dir, repo, cfg, outcome } = build_fixture_chain("python", Language::Python);
    let b = &outcome.dir;
    for f in ["chain.json", "carve.toml", "s0.patch", "validation.json"] {
        assert!(b.join(f).is_file(), "{f} missing");
    }
    let cj: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(b.join("chain.json")).unwrap()).unwrap();
    assert_eq!(cj["version"], 1);
    assert_eq!(cj["stages"].as_array().unwrap().len(), 3);
    let f2p = |k: usize| -> Vec<String> {
        cj["stages"][k]["f2p"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(
        f2p(0),
        vec![
            "tests/test_app.py::test_run_marks_job_running",
            "tests/test_app.py::test_run_rejects_empty_name",
            "tests/test_app.py::test_run_returns_job_id"
        ]
    );
    assert_eq!(
        f2p(1),
        vec![
            "tests/test_wait.py::test_run_and_wait_finishes_the_job",
            "tests/test_wait.py::test_run_and_wait_rejects_non_positive_timeout"
        ]
    );
    assert!(f2p(2).contains(&"tests/test_files.py::test_upload_rejects_large_files".to_string()));
    // The gold patches carry code only; the hidden tests are overlays.
    for k in 0..3 {
        let gold = std::fs::read_to_string(b.join(format!("stages/{k}/gold.patch"))).unwrap();
        assert!(!gold.contains("tests/test_"), "stage {k}'s gold patch holds test files");
        assert!(gold.contains("jobq/"), "stage {k}'s gold patch holds no code");
        let spec = std::fs::read_to_string(b.join(format!("stages/{k}/spec.md"))).unwrap();
        assert!(outcome.unnamed_identifiers[k].is_empty(), "stage {k}: {:?}\n{spec}", outcome.unnamed_identifiers[k]);
    }
    let spec1 = std::fs::read_to_string(b.join("stages/1/spec.md")).unwrap();
    assert!(spec1.contains("run_and_wait") && spec1.contains("timeout must be positive"), "{spec1}");
    let spec2 = std::fs::read_to_string(b.join("stages/2/spec.md")).unwrap();
    assert!(spec2.contains("MAX_UPLOAD_BYTES"), "{spec2}");
    // S0 has none of the feature: app.py and files.py are gone, unrelated work stays.
    let s0 = std::fs::read_to_string(b.join("s0.patch")).unwrap();
    assert!(s0.contains("deleted file mode") && s0.contains("jobq/files.py") && !s0.contains("config.py"));
    assert!(!cj["chain"]["f2p"].as_array().unwrap().is_empty());

    assert_eq!(assert_validates(b, &repo, &cfg), 4);
}

/// The F2P tests of the Go fixture's three stages.
fn assert_go_stage_f2p(outcome: &carve_history::bundle::BuildOutcome) {
    let want = [
        vec!["TestRunMarksJobRunning", "TestRunRejectsEmptyName", "TestRunReturnsJobID"],
        vec!["TestRunAndWaitFinishesTheJob", "TestRunAndWaitRejectsNonPositiveTimeout"],
        vec!["TestRunRecordsInputs", "TestUploadRejectsLargeFiles", "TestUploadStartsJobOnTheFile"],
    ];
    for (k, st) in outcome.chain.stages.iter().enumerate() {
        let names: Vec<&str> = st.f2p.iter().map(|id| id.rsplit('/').next().unwrap()).collect();
        assert_eq!(names, want[k], "stage {k} F2P");
    }
}

/// Mine the Go fixture, build the bundle of its scripted chain with `go test`, re-validate it.
#[needs("go")]
fn go_fixture_chain_builds_and_validates() {
    let Built { _dir, repo, cfg, outcome } = build_fixture_chain("go", Language::Go);
    assert_go_stage_f2p(&outcome);
    for k in 0..outcome.chain.stages.len() {
        assert!(outcome.unnamed_identifiers[k].is_empty(), "stage {k}: {:?}", outcome.unnamed_identifiers[k]);
    }
    // The chain gate's F2P are the chain's own tests: the unrelated tests of the package, which
    // fail at S0 only because the package does not build with the chain's tests, are collateral.
    let mut own: Vec<String> = outcome.chain.stages.iter().flat_map(|s| s.f2p.clone()).collect();
    own.sort();
    assert_eq!(outcome.chain.chain.f2p, own);
    assert!(outcome.chain_selection.collateral.iter().any(|id| id.ends_with("/TestSlugifyJoinsWords")));
    let spec2 = std::fs::read_to_string(outcome.dir.join("stages/2/spec.md")).unwrap();
    assert!(spec2.contains("MaxUploadBytes") && spec2.contains("Upload"), "{spec2}");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// A commit outside the chain that uses stage 0's code (here: `RunAll` calls `App.Run`) stays
/// in S0 as shared context, so S0 does not build (`go build`: undefined: App). The build
/// pulls that commit into stage 0, records the repair, and the bundle validates.
#[needs("go")]
fn go_state_that_does_not_build_is_repaired_by_pulling_the_dependency_into_the_stage() {
    let mut r = recipe::Recipe::read(&fixture("go")).unwrap();
    let at = r.commits.iter().position(|c| c.message.starts_with("add HumanizeBytes")).unwrap() + 1;
    let mut files = std::collections::BTreeMap::new();
    files.insert(
        "batch.go".to_string(),
        "package jobq\n\n// RunAll starts every job of names in order and returns their ids.\nfunc RunAll(a *App, names []string) ([]string, error) {\n\tids := make([]string, 0, len(names))\n\tfor _, n := range names {\n\t\tid, err := a.Run(n)\n\t\tif err != nil {\n\t\t\treturn ids, err\n\t\t}\n\t\tids = append(ids, id)\n\t}\n\treturn ids, nil\n}\n".to_string(),
    );
    r.commits.insert(at, recipe::RecipeCommit { message: "add RunAll".into(), files, delete: vec![] });
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = recipe::build(&r, &repo).unwrap();
    let run_all = ids[at].clone();
    let opts = MineOptions { repo_name: "fixture/go".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    assert!(!chain.stages.iter().any(|s| s.commits.contains(&run_all)), "RunAll has no tests: not a stage");
    let cfg = config(Language::Go, "fixture/go");
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    let repairs = &outcome.chain.repairs;
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert_eq!((repairs[0].stage, repairs[0].commit.as_str()), (0, run_all.as_str()));
    assert!(repairs[0].reason.contains("batch.go"), "{}", repairs[0].reason);
    assert_eq!(outcome.chain.stages[0].commits, vec![chain.stages[0].commits[0].clone(), run_all.clone()]);
    let gold0 = std::fs::read_to_string(outcome.dir.join("stages/0/gold.patch")).unwrap();
    assert!(gold0.contains("+func RunAll"), "the pulled commit's code is part of stage 0's gold patch");
    let cj = std::fs::read_to_string(outcome.dir.join("chain.json")).unwrap();
    assert!(cj.contains("\"repairs\""), "{cj}");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// A commit outside the chain, between stages 1 and 2, rewrites a line of `app.go`, the file
/// stage 0 created and stage 2 extended, so stage 0's patch no longer comes off the final checkpoint (the
/// common case on real histories: google/uuid, hashicorp/go-version). The file is made per
/// definition instead: absent before stage 0, then its final text without the definition
/// stage 2 added (`App.Inputs`) until stage 2. The gates give the same F2P sets as the
/// file-level states and the bundle validates.
#[needs("go")]
fn go_file_a_later_commit_rewrote_is_made_per_definition() {
    let mut r = recipe::Recipe::read(&fixture("go")).unwrap();
    let (old, new) = ("// State is the state of job id.", "// State reports the state of job id.");
    // Between stages 1 and 2: reword a doc comment stage 0 wrote (no tests: not a stage).
    let stage0 = r.commits.iter().position(|c| c.message.starts_with("add App.Run:")).unwrap();
    let at = r.commits.iter().position(|c| c.message.starts_with("configuration parser")).unwrap() + 1;
    let mut files = std::collections::BTreeMap::new();
    files.insert("app.go".to_string(), r.commits[stage0].files["app.go"].replace(old, new));
    r.commits.insert(at, recipe::RecipeCommit { message: "reword State's doc comment".into(), files, delete: vec![] });
    let stage2 = r.commits.iter_mut().find(|c| c.message.starts_with("upload files")).unwrap();
    let app = stage2.files["app.go"].replace(old, new);
    stage2.files.insert("app.go".into(), app);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&r, &repo).unwrap();
    let opts = MineOptions { repo_name: "fixture/go".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = config(Language::Go, "fixture/go");
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    let by_def = &outcome.chain.by_definition;
    assert_eq!(by_def.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["app.go"], "{by_def:?}");
    assert_eq!(by_def[0].created_by, Some(0));
    assert_eq!(by_def[0].added[2], ["app.go::App.Inputs"], "{by_def:?}");
    assert_go_stage_f2p(&outcome);
    let gold2 = std::fs::read_to_string(outcome.dir.join("stages/2/gold.patch")).unwrap();
    assert!(gold2.contains("+func (a *App) Inputs"), "{gold2}");
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("deleted file mode") && s0.contains("a/app.go"), "app.go is absent at S0:\n{s0}");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// The external reviewer gets each kept chain with its stage patches as JSON and its verdict
/// decides: a reviewer that rejects chains whose patches touch `files.py` drops the scripted
/// 3-stage chain (with its reason among the discarded), one that keeps everything keeps it.
#[needs("python3")]
fn external_reviewer_keeps_or_drops_chains_by_its_json_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&recipe::Recipe::read(&fixture("python")).unwrap(), &repo).unwrap();
    let opts = MineOptions { repo_name: "fixture/python".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    assert!(report.chains.iter().any(|c| c.stages.len() == 3));
    let script = dir.path().join("review.py");
    std::fs::write(
        &script,
        "import json, sys\nreq = json.load(sys.stdin)\nassert req['version'] == 1 and req['repo'] == 'fixture/python'\n\
         touches = any('jobq/files.py' in s['patch'] for s in req['stages'])\n\
         print(json.dumps({'keep': not touches, 'reason': 'touches files.py' if touches else 'ok'}))\n",
    )
    .unwrap();
    let cmd = format!("python3 {}", script.display());
    let timeout = std::time::Duration::from_secs(60);
    let mut reviewed = report.clone();
    carve_history::review::review(&repo, &mut reviewed, &cmd, timeout).unwrap();
    assert!(!reviewed.chains.iter().any(|c| c.stages.len() == 3), "the 3-stage chain touches files.py");
    assert!(reviewed.chains.iter().all(|c| c.review.as_ref().is_some_and(|v| v.keep && v.reason == "ok")));
    assert!(reviewed.discarded.iter().any(|d| d.reason == "rejected by the reviewer: touches files.py"));
    assert_eq!(reviewed.discarded_total, report.discarded_total + (report.chains.len() - reviewed.chains.len()));
    let mut kept = report.clone();
    carve_history::review::review(&repo, &mut kept, "cat > /dev/null; echo '{\"keep\": true}'", timeout).unwrap();
    assert_eq!(kept.chains.len(), report.chains.len());
    // An answer that is not a verdict is an error naming the command.
    let mut bad = report.clone();
    let e = carve_history::review::review(&repo, &mut bad, "cat > /dev/null; echo maybe", timeout).unwrap_err();
    assert!(e.to_string().contains("not a verdict") && e.to_string().contains("echo maybe"), "{e}");
}

/// A changelog line stage 0 added and a later unrelated commit rewrote (pallets/click's
/// CHANGES.rst) cannot come off for S0: the file stays as shared context at its final
/// content, recorded in chain.json, and the bundle still builds and validates.
#[needs("pytest")]
fn python_changelog_whose_removal_conflicts_stays_as_shared_context() {
    let mut r = recipe::Recipe::read(&fixture("python")).unwrap();
    let mut set = |prefix: &str, text: &str| {
        let c = r.commits.iter_mut().find(|c| c.message.starts_with(prefix)).unwrap();
        c.files.insert("CHANGES.md".into(), text.into());
    };
    set("initial package", "# Changes\n");
    set("add App.run:", "# Changes\n\n- App.run starts a job.\n");
    set("slugify keeps digits", "# Changes\n\n- App.run starts a job and returns its id.\n- slugify keeps digits.\n");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let ids = recipe::build(&r, &repo).unwrap();
    let run_commit = ids[r.commits.iter().position(|c| c.message.starts_with("add App.run:")).unwrap()].clone();
    let opts = MineOptions { repo_name: "fixture/python".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = config(Language::Python, "fixture/python");
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    let shared = &outcome.chain.shared_context;
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert_eq!(
        (shared[0].stage, shared[0].commit.as_str(), shared[0].path.as_str()),
        (0, run_commit.as_str(), "CHANGES.md")
    );
    assert!(shared[0].reason.contains("conflicts"), "{}", shared[0].reason);
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    let gold0 = std::fs::read_to_string(outcome.dir.join("stages/0/gold.patch")).unwrap();
    assert!(!s0.contains("CHANGES.md") && !gold0.contains("CHANGES.md"), "the changelog stays at its final content");
    assert!(s0.contains("jobq/app.py"), "the feature's code still comes off for S0");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// Mine the Rust fixture, build the bundle of its scripted chain with `cargo test`, check each
/// stage's F2P tests (integration test targets, and stage 1's `#[cfg(test)]` module in the
/// `src/wait.rs` that holds its code) and re-validate the bundle. `src/lib.rs` is changed by
/// chain and unrelated commits: S0 keeps the unrelated `mod` lines.
#[needs("cargo")]
fn rust_fixture_chain_builds_and_validates() {
    let Built { _dir, repo, cfg, outcome } = build_fixture_chain("rust", Language::Rust);
    let want = [
        vec!["app::run_marks_job_running", "app::run_rejects_empty_name", "app::run_returns_job_id"],
        vec![
            "jobq::wait::tests::check_timeout_rejects_zero",
            "jobq::wait::tests::run_and_wait_finishes_the_job",
            "wait::run_and_wait_rejects_a_zero_timeout",
        ],
        vec![
            "files::run_on_records_inputs",
            "files::upload_rejects_large_files",
            "files::upload_starts_a_job_on_the_file",
        ],
    ];
    for (k, st) in outcome.chain.stages.iter().enumerate() {
        assert_eq!(st.f2p, want[k], "stage {k} F2P");
        assert!(st.p2p.contains(&"text::slugify_keeps_digits".to_string()), "stage {k}: {:?}", st.p2p);
        assert!(outcome.unnamed_identifiers[k].is_empty(), "stage {k}: {:?}", outcome.unnamed_identifiers[k]);
    }
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("-pub mod app;") && s0.contains("-pub mod files;"), "{s0}");
    assert!(!s0.contains("-pub mod config") && !s0.contains("-pub mod bytes"), "unrelated modules stay in S0: {s0}");
    let spec2 = std::fs::read_to_string(outcome.dir.join("stages/2/spec.md")).unwrap();
    assert!(spec2.contains("MAX_UPLOAD_BYTES") && spec2.contains("upload"), "{spec2}");
    // Stage 1's src/wait.rs is split: its code is the gold patch, its tests module the hidden
    // test part (no code in it), and S0 has no such file.
    assert_eq!(outcome.chain.inline_tests, ["src/wait.rs"]);
    assert!(outcome.chain.merged_stages.is_empty());
    let gold1 = std::fs::read_to_string(outcome.dir.join("stages/1/gold.patch")).unwrap();
    assert!(gold1.contains("+fn check_timeout") && gold1.contains("+    pub fn run_and_wait"), "{gold1}");
    assert!(!gold1.contains("#[cfg(test)]") && !gold1.contains("fn check_timeout_rejects_zero"), "{gold1}");
    let tests1 = std::fs::read_to_string(outcome.dir.join("stages/1/tests/src/wait.rs")).unwrap();
    assert!(tests1.starts_with("#[cfg(test)]\nmod tests {") && !tests1.contains("pub fn run_and_wait"), "{tests1}");
    assert!(outcome.dir.join("chain/tests/src/wait.rs").is_file());
    assert!(s0.contains("--- a/src/wait.rs\n+++ /dev/null"), "S0 has no src/wait.rs: {s0}");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// Mine the JavaScript fixture, build the bundle of its scripted chain with `node --test`,
/// check each stage's F2P tests and re-validate the bundle. `src/index.js` re-exports every
/// module and is changed by chain and unrelated commits: S0 keeps the unrelated exports.
#[needs("node")]
fn javascript_fixture_chain_builds_and_validates() {
    let Built { _dir, repo, cfg, outcome } = build_fixture_chain("javascript", Language::JavaScript);
    let want = [
        vec![
            "test/app.test.js > run marks the job running",
            "test/app.test.js > run rejects an empty name",
            "test/app.test.js > run returns the job id",
        ],
        vec![
            "test/wait.test.js > runAndWait finishes the job",
            "test/wait.test.js > runAndWait rejects a zero timeout",
        ],
        vec![
            "test/files.test.js > run records inputs",
            "test/files.test.js > upload rejects large files",
            "test/files.test.js > upload starts a job on the file",
        ],
    ];
    for (k, st) in outcome.chain.stages.iter().enumerate() {
        assert_eq!(st.f2p, want[k], "stage {k} F2P");
        // node:test selects by file; the tests of files outside the stage pass on both sides
        // of the gate and are P2P, not "missing after".
        assert!(st.p2p.contains(&"test/text.test.js > slugify keeps digits".to_string()), "stage {k}: {:?}", st.p2p);
        assert!(outcome.unnamed_identifiers[k].is_empty(), "stage {k}: {:?}", outcome.unnamed_identifiers[k]);
    }
    let s0 = std::fs::read_to_string(outcome.dir.join("s0.patch")).unwrap();
    assert!(s0.contains("-export { App, EmptyNameError }") && s0.contains("src/files.js"), "{s0}");
    assert!(!s0.contains("-export { parseConfig }"), "unrelated exports stay in S0: {s0}");
    let spec2 = std::fs::read_to_string(outcome.dir.join("stages/2/spec.md")).unwrap();
    assert!(spec2.contains("MAX_UPLOAD_BYTES") && spec2.contains("upload"), "{spec2}");
    assert_validates(&outcome.dir, &repo, &cfg);
}

/// Regression (servo/rust-smallvec `retain`, whose changed inline test does not compile against
/// the earlier `retain` bound): stage 2 also adds a test to `src/wait.rs`'s `#[cfg(test)]`
/// module that calls `App::run_on`, which stage 2 adds. At S2 with stage 2's tests the crate's
/// test target does not compile, so every test is missing there; P2P is judged on S2 with its
/// own tests instead (recorded as `p2p_on_own_tests`), and is not empty. The bundle validates,
/// and a gold patch that breaks one of those P2P tests fails the stage's gate.
#[needs("cargo")]
fn rust_stage_whose_tests_do_not_compile_at_s_k_judges_p2p_on_its_own_tests() {
    let mut r = recipe::Recipe::read(&fixture("rust")).unwrap();
    let wait =
        r.commits.iter().find(|c| c.message.starts_with("add App::run_and_wait")).unwrap().files["src/wait.rs"].clone();
    let test = "    #[test]\n    fn run_on_then_wait_finishes() {\n        let mut app = App::new();\n        \
                let id = app.run_on(\"convert\", vec![\"file-1\".to_string()]).unwrap();\n        \
                app.finish(&id);\n        assert_eq!(app.state(&id), \"done\");\n    }\n}\n";
    let wait2 = format!("{}\n{test}", wait.trim_end().strip_suffix('}').unwrap().trim_end());
    let upload = r.commits.iter_mut().find(|c| c.message.starts_with("upload files")).unwrap();
    upload.files.insert("src/wait.rs".into(), wait2);
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&r, &repo).unwrap();
    let opts = MineOptions { repo_name: "fixture/rust".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = config(Language::Rust, "fixture/rust");
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    let st = &outcome.chain.stages[2];
    assert!(st.f2p.contains(&"jobq::wait::tests::run_on_then_wait_finishes".to_string()), "{:?}", st.f2p);
    assert!(st.p2p_on_own_tests, "stage 2's tests do not compile against S2");
    for t in [
        "text::slugify_keeps_digits",
        "jobq::wait::tests::run_and_wait_finishes_the_job",
        "jobq::wait::tests::check_timeout_rejects_zero",
    ] {
        assert!(st.p2p.contains(&t.to_string()), "{t} is not P2P of stage 2: {:?}", st.p2p);
    }
    assert!(!st.p2p.iter().any(|t| st.f2p.contains(t)));
    assert!(!outcome.chain.stages[0].p2p_on_own_tests && !outcome.chain.stages[1].p2p_on_own_tests);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.dir.join("stages/2/validation.json")).unwrap()).unwrap();
    assert_eq!(v["p2p_on_own_tests"], true);
    assert_eq!(v["before_own_tests"]["text::slugify_keeps_digits"], serde_json::json!(["passed", "passed"]));
    assert_eq!(assert_validates(&outcome.dir, &repo, &cfg), 4);

    // A stage that breaks a P2P test (here: slugify drops digits again) fails its gate.
    let gold = outcome.dir.join("stages/2/gold.patch");
    let mut patch = std::fs::read_to_string(&gold).unwrap();
    patch.push_str(
        "diff --git a/src/text.rs b/src/text.rs\n--- a/src/text.rs\n+++ b/src/text.rs\n@@ -1,5 +1,5 @@\n \
         /// Lower-cases `name` and joins its words (runs of letters and digits) with dashes.\n \
         pub fn slugify(name: &str) -> String {\n-    name.split(|c: char| !c.is_ascii_alphanumeric())\n\
         +    name.split(|c: char| !c.is_ascii_alphabetic())\n         .filter(|w| !w.is_empty())\n         \
         .map(str::to_ascii_lowercase)\n",
    );
    std::fs::write(&gold, patch).unwrap();
    let checks =
        carve_history::bundle::validate(&outcome.dir, &repo, &cfg.test, (cfg.run_timeout, cfg.test_timeout)).unwrap();
    let stage2 = checks.iter().find(|c| c.gate == "stage 2").unwrap();
    assert!(!stage2.passed, "{checks:?}");
    assert!(stage2.problems.iter().any(|p| p.contains("text::slugify_keeps_digits")), "{:?}", stage2.problems);
    assert!(checks.iter().filter(|c| c.gate.starts_with("stage ")).take(2).all(|c| c.passed), "{checks:?}");
}
