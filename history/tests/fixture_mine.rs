//! End-to-end: build the scripted history of `fixtures/arc/<lang>/recipe.toml`, analyse and
//! mine it, and check the same-feature chain the recipe scripts is found with its evidence,
//! and the unrelated commits are not in it.

use std::path::{Path, PathBuf};

use carve_history::{MineOptions, recipe};

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

/// Mine the Python fixture, build the bundle of its scripted chain with pytest, check the
/// per-stage tests and re-validate the bundle.
#[test]
fn python_fixture_chain_builds_and_validates() {
    let python_ok = std::process::Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(python_ok, "this test runs the fixture's tests with `python3 -m pytest`; install pytest");
    let path = fixture("python");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&recipe::Recipe::read(&path).unwrap(), &repo).unwrap();
    let opts = MineOptions { repo_name: "fixture/python".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = carve_history::bundle::BuildConfig {
        language: carve_languages::Language::Python,
        test: carve_languages::runner::TestCommand::pytest("python3", vec![]),
        run_timeout: std::time::Duration::from_secs(300),
        test_timeout: std::time::Duration::from_secs(60),
        carve_toml: "version = 1\n".into(),
        repo_name: "fixture/python".into(),
    };
    let out = dir.path().join("bundles");
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &out).unwrap();
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

    let checks = carve_history::bundle::validate(
        b,
        &repo,
        &cfg.test,
        (std::time::Duration::from_secs(300), std::time::Duration::from_secs(60)),
    )
    .unwrap();
    assert_eq!(checks.len(), 4);
    for c in &checks {
        assert!(c.passed, "{}: {:?}", c.gate, c.problems);
    }
}

/// Mine the Go fixture, build the bundle of its scripted chain with `go test`, re-validate it.
#[test]
fn go_fixture_chain_builds_and_validates() {
    let go_ok = std::process::Command::new("go").arg("version").output().is_ok_and(|o| o.status.success());
    assert!(go_ok, "this test runs the fixture's tests with `go test`; install Go");
    let path = fixture("go");
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    recipe::build(&recipe::Recipe::read(&path).unwrap(), &repo).unwrap();
    let opts = MineOptions { repo_name: "fixture/go".into(), ..Default::default() };
    let (_, report) = carve_history::mine(&repo, "", &opts).unwrap();
    let chain = report.chains.iter().find(|c| c.stages.len() == 3).expect("a 3-stage chain");
    let cfg = carve_history::bundle::BuildConfig {
        language: carve_languages::Language::Go,
        test: carve_languages::runner::TestCommand::GoTest { args: vec![], packages: None },
        run_timeout: std::time::Duration::from_secs(300),
        test_timeout: std::time::Duration::from_secs(60),
        carve_toml: "version = 1\n".into(),
        repo_name: "fixture/go".into(),
    };
    let outcome = carve_history::bundle::build(&repo, chain, &cfg, &dir.path().join("bundles")).unwrap();
    let want = [
        vec!["TestRunMarksJobRunning", "TestRunRejectsEmptyName", "TestRunReturnsJobID"],
        vec!["TestRunAndWaitFinishesTheJob", "TestRunAndWaitRejectsNonPositiveTimeout"],
        vec!["TestRunRecordsInputs", "TestUploadRejectsLargeFiles", "TestUploadStartsJobOnTheFile"],
    ];
    for (k, st) in outcome.chain.stages.iter().enumerate() {
        let names: Vec<&str> = st.f2p.iter().map(|id| id.rsplit('/').next().unwrap()).collect();
        assert_eq!(names, want[k], "stage {k} F2P");
        assert!(outcome.unnamed_identifiers[k].is_empty(), "stage {k}: {:?}", outcome.unnamed_identifiers[k]);
    }
    let spec2 = std::fs::read_to_string(outcome.dir.join("stages/2/spec.md")).unwrap();
    assert!(spec2.contains("MaxUploadBytes") && spec2.contains("Upload"), "{spec2}");
    let checks = carve_history::bundle::validate(
        &outcome.dir,
        &repo,
        &cfg.test,
        (std::time::Duration::from_secs(300), std::time::Duration::from_secs(60)),
    )
    .unwrap();
    for c in &checks {
        assert!(c.passed, "{}: {:?}", c.gate, c.problems);
    }
}
