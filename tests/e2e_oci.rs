//! `--runtime oci` end to end: a task bundle made with the environment `carve env` set up is
//! validated and graded inside the image it names (built from the bundle's Dockerfile, since
//! the test removes it first) and here, and every state gives the same status to every test.
//! The test makes the base image it needs with `scripts/base-images` (skipped there when
//! present); it needs buildah (`#[needs]`: ignored with the reason without it, a failure in CI).

mod common;

use common::needs;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// carve with `carve env` switched on and its environments under `envs`.
fn carve(envs: &Path, args: &[&str], code: i32) -> Output {
    common::carve_with_envs(envs, args, code)
}

/// `scripts/base-images NAME…`: the local base images under their official names.
fn base_images(names: &[&str]) {
    let script = carve_testutil::workspace_root().join("scripts/base-images");
    let out = Command::new(&script).args(names).output().expect("failed to start scripts/base-images");
    assert!(
        out.status.success(),
        "{} {names:?} failed (it needs root, debootstrap and buildah):\n{}\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each state of a `validation.json` with its per-test statuses, in order.
fn states(v: &Value) -> Vec<(String, Value)> {
    v["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["state"].as_str().unwrap().to_string(), s["statuses"].clone()))
        .collect()
}

/// `carve env`, then `carve tasks --level 1 --f2p F2P` on `repo`: the one bundle's folder.
fn bundle_of(envs: &Path, repo: &Path, out: &Path, f2p: &str) -> PathBuf {
    carve(envs, &["env", repo.to_str().unwrap(), "--out", out.join("env").to_str().unwrap()], 0);
    let tasks = out.join("tasks");
    let o = carve(
        envs,
        &[
            "tasks",
            repo.to_str().unwrap(),
            "--out",
            tasks.to_str().unwrap(),
            "--level",
            "1",
            "--format",
            "json",
            "--f2p",
            f2p,
        ],
        0,
    );
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["tasks"].as_array().unwrap().len(), 1, "{report:#}");
    tasks.join(report["tasks"][0].as_str().unwrap())
}

/// `carve validate BUNDLE --repo REPO --runtime RUNTIME --format json`: the validation and stderr.
fn validate(envs: &Path, bundle: &Path, repo: &Path, runtime: &str) -> (Value, String) {
    let args = [
        "validate",
        bundle.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--format",
        "json",
        "--runtime",
        runtime,
    ];
    let o = carve(envs, &args, 0);
    (serde_json::from_slice(&o.stdout).unwrap(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Validate `bundle` here and in its image (built from the bundle, as it is removed first),
/// grade its gold patch in the image, and compare.
fn same_inside_and_out(envs: &Path, repo: &Path, bundle: &Path) {
    let image = image_of(bundle);
    let engine = carve_core::oci::Engine::detect().expect("an OCI engine");
    let _ = engine.remove_image(&image);
    let before = common::tree_snapshot(repo);

    let (local, _) = validate(envs, bundle, repo, "local");
    let (oci, stderr) = validate(envs, bundle, repo, "oci");
    assert!(stderr.contains(&format!("building the image {image}")), "{stderr}");
    assert!(stderr.contains(&format!("running the tests in the image {image}")), "{stderr}");
    assert!(engine.image_exists(&image).unwrap(), "{image} was not built");
    assert_eq!(local["valid"], true, "{local:#}");
    assert_eq!(oci["valid"], true, "{oci:#}");
    let (here, inside) = (states(&local), states(&oci));
    assert_eq!(
        here.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
        ["baseline", "masked", "masked+tests", "restored"]
    );
    assert_eq!(here, inside, "statuses here and in the image differ");

    let graded = tempfile::tempdir().unwrap();
    let gold = bundle.join("gold.patch");
    let args = [
        "grade",
        bundle.to_str().unwrap(),
        "--patch",
        gold.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--out",
        graded.path().to_str().unwrap(),
        "--runtime",
        "oci",
        "--format",
        "json",
    ];
    let o = carve(envs, &args, 0);
    let grade: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(grade["instances"][0]["resolved"], true, "{grade:#}");
    assert_eq!(before, common::tree_snapshot(repo), "the repository changed");
}

/// The image `bundle` names.
fn image_of(bundle: &Path) -> String {
    let inst: Value = serde_json::from_str(&common::read(&bundle.join("instance.json"))).unwrap();
    inst["image_name"].as_str().unwrap().to_string()
}

#[needs("go", "buildah")]
fn a_go_bundle_validates_the_same_in_its_image_as_here() {
    base_images(&["go"]);
    let envs = tempfile::tempdir().unwrap();
    let (_keep, repo) = common::fixture_copy("env/go-tasks");
    let out = tempfile::tempdir().unwrap();
    let bundle = bundle_of(envs.path(), &repo, out.path(), "initials_test.go");
    same_inside_and_out(envs.path(), &repo, &bundle);

    // `carve tasks --runtime oci` validates its candidates in the image: the same bundle,
    // with the same statuses in validation.json.
    let tasks = out.path().join("tasks-oci");
    let args = ["tasks", repo.to_str().unwrap(), "--out", tasks.to_str().unwrap(), "--level", "1", "--format", "json"];
    let o = carve(envs.path(), &[&args[..], &["--runtime", "oci", "--f2p", "initials_test.go"]].concat(), 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("validating in the image {}", image_of(&bundle))), "{stderr}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let made = tasks.join(report["tasks"][0].as_str().unwrap());
    assert_eq!(made.file_name(), bundle.file_name(), "{report:#}");
    let validation = |b: &Path| -> Value { serde_json::from_str(&common::read(&b.join("validation.json"))).unwrap() };
    assert_eq!(states(&validation(&made)), states(&validation(&bundle)));
    let _ = carve_core::oci::Engine::detect().unwrap().remove_image(&image_of(&bundle));
}

/// A bundle made without an environment names no image: `--runtime oci` says so, and what
/// to do, before anything runs.
#[needs("go")]
fn a_bundle_without_an_image_is_refused_with_the_reason() {
    let (_keep, repo) = common::fixture_copy("env/go-tasks");
    let (_out, bundle, inst) = common::one_level1_task_with(&repo, &[], &["initials_test.go"]);
    assert_eq!(inst["image_name"], Value::Null);
    let args = ["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap(), "--runtime", "oci"];
    let o = common::carve().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("names no environment image"), "{stderr}");
    assert!(stderr.contains("or use --runtime local"), "{stderr}");
}

#[needs("node", "npm", "buildah")]
fn a_typescript_bundle_validates_the_same_in_its_image_as_here() {
    base_images(&["node"]);
    let envs = tempfile::tempdir().unwrap();
    let (_keep, repo) = common::fixture_copy("env/typescript-tasks");
    let out = tempfile::tempdir().unwrap();
    let bundle = bundle_of(envs.path(), &repo, out.path(), "tests/initials.test.ts");
    let dockerfile = common::read(&bundle.join("Dockerfile"));
    assert!(dockerfile.contains("FROM node:20-bookworm-slim"), "{dockerfile}");
    assert!(dockerfile.contains("COPY package-lock.json"), "{dockerfile}");
    assert!(dockerfile.contains(" npm ci"), "{dockerfile}");
    same_inside_and_out(envs.path(), &repo, &bundle);
    let _ = carve_core::oci::Engine::detect().unwrap().remove_image(&image_of(&bundle));
}

#[needs("cargo", "buildah")]
fn a_rust_bundle_validates_the_same_in_its_image_as_here() {
    base_images(&["rust"]);
    let envs = tempfile::tempdir().unwrap();
    let (_keep, repo) = common::fixture_copy("env/rust-tasks");
    let out = tempfile::tempdir().unwrap();
    let bundle = bundle_of(envs.path(), &repo, out.path(), "tests/grouped.rs");
    let dockerfile = common::read(&bundle.join("Dockerfile"));
    assert!(dockerfile.contains("FROM rust:1.95-slim-bookworm"), "{dockerfile}");
    assert!(dockerfile.contains("cargo fetch --locked"), "{dockerfile}");
    assert!(dockerfile.contains("ENV CARGO_NET_OFFLINE=true"), "{dockerfile}");
    // The fixture commits no Cargo.lock (as bitflags): the one `carve env` generated is
    // linked into the image's source, and so into the state trees the runs there use.
    assert!(dockerfile.contains("ln -s /opt/carve-env/src/Cargo.lock /work/repo/Cargo.lock"), "{dockerfile}");
    same_inside_and_out(envs.path(), &repo, &bundle);
    let _ = carve_core::oci::Engine::detect().unwrap().remove_image(&image_of(&bundle));
}

/// The fixture `fixtures/<name>` as a committed git repository under `dir`: its commit.
fn committed_fixture(name: &str, dir: &Path) -> String {
    common::copy_dir(&carve_testutil::workspace_root().join("fixtures").join(name), dir);
    let git = |args: &[&str]| {
        let o = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"]);
    git(&["rev-parse", "HEAD"])
}

/// `carve dataset run --recheck image` validates every bundle in its image, keeps that
/// validation, records per task that the statuses agree with those the bundle records (made
/// on the checkout), and the summary counts it; the bundle is not validated on the checkout a
/// second time.
#[needs("go", "git", "buildah")]
fn a_dataset_run_rechecks_every_bundle_in_its_image() {
    base_images(&["go"]);
    let d = tempfile::tempdir().unwrap();
    let envs = d.path().join("envs");
    let commit = committed_fixture("env/go-tasks", &d.path().join("go-tasks"));
    let m = d.path().join("manifest.toml");
    std::fs::write(&m, format!("[[repo]]\nname = \"local/go-tasks\"\nurl = \"./go-tasks\"\ncommit = \"{commit}\"\n"))
        .unwrap();
    let out = d.path().join("out");
    let args = ["dataset", "run", m.to_str().unwrap(), "--out", out.to_str().unwrap(), "--recheck", "image"];
    let o = carve(&envs, &args, 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let dir = out.join("repos/local+go-tasks").join(&commit);
    let r: Value = serde_json::from_str(&common::read(&dir.join("result.json"))).unwrap();
    let tasks = r["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty(), "no task: {r:#}\n{stderr}");
    let image = r["environment"]["image_name"].as_str().unwrap().to_string();
    for t in tasks {
        let id = t["instance_id"].as_str().unwrap();
        assert_eq!(t["recheck"], "image", "{t}");
        assert_eq!(t["image"]["image_name"], image.as_str(), "{t}");
        assert_eq!(t["image"]["valid"], true, "{t}");
        assert_eq!(t["image"]["agrees"], true, "{t}");
        assert!(!dir.join(format!("rechecked/{id}.json")).exists(), "validated on the checkout again: {id}");
        let recorded = dir.join("tasks").join(id).join("validation.json");
        let here: Value = serde_json::from_str(&common::read(&recorded)).unwrap();
        let there: Value =
            serde_json::from_str(&common::read(&dir.join(format!("rechecked/{id}.image.json")))).unwrap();
        assert_eq!(states(&here), states(&there), "{id}");
        assert!(!states(&there).is_empty(), "{there:#}");
    }
    assert!(stderr.contains(&format!("building the image {image}")), "{stderr}");
    assert!(stderr.contains(&format!("running the tests in the image {image}")), "{stderr}");
    let o = carve(&envs, &["dataset", "summary", out.to_str().unwrap(), "--format", "json"], 0);
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["image_recheck"]["tasks"], tasks.len(), "{summary:#}");
    assert_eq!(summary["image_recheck"]["agree"], tasks.len(), "{summary:#}");
    let o = carve(&envs, &["dataset", "summary", out.to_str().unwrap()], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    let n = tasks.len();
    assert!(
        text.contains(&format!("re-checked in their image: {n} task(s), {n} with every status the same")),
        "{text}"
    );
    let _ = carve_core::oci::Engine::detect().unwrap().remove_image(&image);
}

/// A Python bundle validates the same in its image as here, and a file the build writes into
/// the source (`src/tally/_version.py`, git-ignored, as
/// setuptools-scm writes it) reaches the image: the Dockerfile carries the bytes `carve env`'s
/// build wrote and links them into the image's source, so the state trees of the runs in the
/// image import the package as the local runs do (before, the in-image states failed to
/// collect with `No module named 'tally._version'`).
#[needs("python3", "buildah")]
fn a_python_bundle_validates_the_same_in_its_image_and_a_version_file_the_build_writes_reaches_it() {
    base_images(&["python"]);
    let envs = tempfile::tempdir().unwrap();
    let (_keep, repo) = common::fixture_copy("python/srclayout");
    let out = tempfile::tempdir().unwrap();
    let bundle = bundle_of(envs.path(), &repo, out.path(), "tests/test_counter.py");
    let dockerfile = common::read(&bundle.join("Dockerfile"));
    assert!(dockerfile.contains("COPY .carve-env/generated-1-_version.py"), "{dockerfile}");
    assert_eq!(common::read(&bundle.join(".carve-env/generated-1-_version.py")), "__version__ = \"0.1.0\"\n");
    assert!(!repo.join("src/tally/_version.py").exists(), "carve built the project in the user's tree");
    same_inside_and_out(envs.path(), &repo, &bundle);
    let _ = carve_core::oci::Engine::detect().unwrap().remove_image(&image_of(&bundle));
}
