//! `carve dataset run` sets each repository's environment up itself: a manifest over the
//! fixtures of `fixtures/env/` (one per language, small dependency sets from the real
//! registries) with no install hints gives bundles that name their environment's image and
//! validate in it; a run that is resumed uses the environments made before; a repository
//! whose environment cannot be set up is recorded as failed in the `environment` stage with
//! the reason, and the run goes on.

mod common;

use common::{carve_with_envs, needs, read};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const LANGUAGES: [&str; 4] = ["python", "go", "rust", "typescript"];

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The folder `dir` committed as a git repository; its commit.
fn commit_tree(dir: &Path) -> String {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A `[[repo]]` entry for the repository at `./<name>`, with no `env` hints.
fn entry(name: &str, commit: &str) -> String {
    format!("[[repo]]\nname = \"local/{name}\"\nurl = \"./{name}\"\ncommit = \"{commit}\"\n\n")
}

/// Git repositories of `fixtures/env/<language>` under `dir`, and a manifest over them.
fn manifest(dir: &Path, languages: &[&str]) -> PathBuf {
    let mut text = String::new();
    for lang in languages {
        let repo = dir.join(lang);
        common::copy_dir(&carve_testutil::workspace_root().join("fixtures/env").join(lang), &repo);
        text.push_str(&entry(lang, &commit_tree(&repo)));
    }
    let path = dir.join("manifest.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `carve dataset run` with environments switched on and kept under `envs`.
fn run(manifest: &Path, out: &Path, envs: &Path, code: i32) -> std::process::Output {
    carve_with_envs(envs, &["dataset", "run", manifest.to_str().unwrap(), "--out", out.to_str().unwrap()], code)
}

/// `repos/local+<name>/<commit>/`: the one result folder of a repository.
fn result_dir(out: &Path, name: &str) -> PathBuf {
    let parent = out.join("repos").join(format!("local+{name}"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&parent).unwrap().flatten().map(|e| e.path()).collect();
    dirs.retain(|d| d.join("result.json").is_file());
    assert_eq!(dirs.len(), 1, "one result in {}", parent.display());
    dirs.pop().unwrap()
}

/// Every `environment.json` under `envs`, with its modification time.
fn environments(envs: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut out = Vec::new();
    for repo in std::fs::read_dir(envs).unwrap().flatten() {
        for env in std::fs::read_dir(repo.path()).unwrap().flatten() {
            let p = env.path().join("environment.json");
            if p.is_file() {
                let t = std::fs::metadata(&p).unwrap().modified().unwrap();
                out.push((p, t));
            }
        }
    }
    out.sort();
    out
}

#[needs("pytest", "go", "cargo", "npm")]
fn every_language_gets_its_environment_set_up_and_named_in_its_validated_bundles() {
    let d = tempfile::tempdir().unwrap();
    let envs = d.path().join("envs");
    let m = manifest(d.path(), &LANGUAGES);
    let out = d.path().join("out");
    run(&m, &out, &envs, 0);
    for lang in LANGUAGES {
        let dir = result_dir(&out, lang);
        let r: Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
        assert_eq!(r["status"], "done", "{lang}: {r:#}");
        let env = &r["environment"];
        assert!(env["status"] == "verified" || env["status"] == "partial", "{lang}: {r:#}");
        let key = env["key"].as_str().unwrap_or_else(|| panic!("{lang}: no environment key: {r:#}"));
        let image = env["image_name"].as_str().unwrap();
        assert!(image.contains(lang), "{lang}: image {image}");
        let tasks = r["tasks"].as_array().unwrap();
        assert!(!tasks.is_empty(), "{lang}: no validated task: {r:#}");
        for t in tasks {
            assert_eq!(t["recheck"], "local", "{lang}: {t}");
            let bundle = dir.join("tasks").join(t["instance_id"].as_str().unwrap());
            let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
            assert_eq!(inst["image_name"], image, "{lang}: the bundle names another image: {inst:#}");
            assert_eq!(inst["carve"]["environment"]["key"], key, "{lang}: {inst:#}");
            assert!(read(&bundle.join("Dockerfile")).contains("FROM "), "{lang}: the bundle carries its Dockerfile");
        }
        // The environment lives in the store, not in the checkout or the dataset.
        assert!(envs.join("local+".to_string() + lang).join(key).join("environment.json").is_file(), "{lang}");
    }

    // Resumed after a repository's result is lost: it is done again with the environment
    // made before (its record untouched), and the dataset is the same.
    let before = environments(&envs);
    assert_eq!(before.len(), LANGUAGES.len(), "{before:?}");
    // Python: the found environment sets the interpreter, which must not read as one given.
    let python = result_dir(&out, "python");
    let result_before = read(&python.join("result.json"));
    std::fs::remove_dir_all(&python).unwrap();
    let o = run(&m, &out, &envs, 0);
    assert_eq!(environments(&envs), before, "a resumed run made an environment again");
    assert_eq!(read(&result_dir(&out, "python").join("result.json")), result_before);
    assert!(String::from_utf8_lossy(&o.stdout).contains("3 repositor(ies) finished by an earlier run were skipped"));
}

#[needs("pytest")]
fn a_repository_whose_environment_cannot_be_set_up_is_recorded_and_the_run_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let envs = d.path().join("envs");
    let m = manifest(d.path(), &["python"]);
    let bad = d.path().join("refused");
    common::copy_dir(&carve_testutil::workspace_root().join("fixtures/env/python-helper"), &bad);
    std::fs::write(bad.join("requirements-test.txt"), "carve-no-such-dist-a7f3==9.9.9\n").unwrap();
    let text = read(&m) + &entry("refused", &commit_tree(&bad));
    std::fs::write(&m, text).unwrap();
    let out = d.path().join("out");
    run(&m, &out, &envs, 1);
    let r: Value = serde_json::from_str(&read(&result_dir(&out, "refused").join("result.json"))).unwrap();
    assert_eq!(r["status"], "failed", "{r:#}");
    assert_eq!(r["failure"]["stage"], "environment", "{r:#}");
    let reason = r["failure"]["reason"].as_str().unwrap();
    assert!(reason.contains("the registry refused carve-no-such-dist-a7f3==9.9.9"), "{reason}");
    let ok: Value = serde_json::from_str(&read(&result_dir(&out, "python").join("result.json"))).unwrap();
    assert_eq!(ok["status"], "done", "the run went on after the failed repository: {ok:#}");
    assert!(!ok["tasks"].as_array().unwrap().is_empty(), "{ok:#}");
}
