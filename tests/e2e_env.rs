//! `carve env` end to end on the fixtures of `fixtures/env/` (small dependency sets from the
//! real registries): per language, the environment is found from the repository's own files,
//! installed under `CARVE_ENV_DIR`, verified by running the suite and recorded; the Python one
//! needs a repair round (its tests import `yaml`, which nothing declares); later commands use
//! it; bad input is a clear error and leaves no environment behind.

mod common;

use common::needs;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/env").join(name)
}

/// carve with `carve env` switched on and its environments under `envs`.
fn carve(envs: &Path) -> Command {
    let mut c = common::carve();
    c.env_remove("CARVE_ENV").env("CARVE_ENV_DIR", envs);
    c
}

fn run(envs: &Path, args: &[&str], code: i32) -> Output {
    common::carve_with_envs(envs, args, code)
}

/// `carve env REPO --format json`: the report, and the output folder (kept alive).
fn env_of(envs: &Path, repo: &Path, extra: &[&str], code: i32) -> (Value, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["env", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    let o = run(envs, &args, code);
    (serde_json::from_slice(&o.stdout).unwrap(), out)
}

/// environment.json with what depends on the machine, the day's registry or the fixture's
/// digest replaced, for a snapshot.
fn redacted(env: &Value) -> Value {
    let mut v = env.clone();
    for key in ["commit", "tree_digest", "key"] {
        v[key] = Value::String(format!("[{key}]"));
    }
    v["image"]["name"] = "[image name]".into();
    v["packages"] = "[the installed set]".into();
    for t in v["tools"].as_object_mut().unwrap().values_mut() {
        *t = "[version]".into();
    }
    for step in v["install"].as_array_mut().unwrap() {
        let cmd = step["command"].as_str().unwrap().to_string();
        // The interpreter found here (`/root/.pyenv/versions/3.11.7/bin/python3 -m venv …`).
        if let Some(rest) = cmd.strip_prefix('/').and_then(|c| c.split_once(' ')).map(|(_, r)| r.to_string()) {
            step["command"] = format!("[python] {rest}").into();
        }
        let why = step["why"].as_str().unwrap().to_string();
        if let Some((head, _)) = why.split_once("with CPython ") {
            step["why"] = format!("{head}with CPython [version]").into();
        }
    }
    v
}

fn install_commands(env: &Value) -> Vec<(String, u64)> {
    env["install"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["command"].as_str().unwrap().to_string(), s["round"].as_u64().unwrap()))
        .collect()
}

#[needs("python3")]
fn python_is_repaired_recorded_and_used_by_later_commands() {
    let envs = tempfile::tempdir().unwrap();
    let repo = fixture("python");
    let (report, out) = env_of(envs.path(), &repo, &[], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    // Three: the test of the C extension the build compiled (`envdemo._fast`) runs too, its
    // module placed beside the package's sources for every run tree.
    assert_eq!((env["baseline"]["passed"].as_u64(), env["baseline"]["failed"].as_u64()), (Some(3), Some(0)));
    // The repair: the import of `yaml` named the module, the table named the distribution.
    let steps = install_commands(env);
    assert!(steps.iter().any(|(c, r)| c.ends_with(" PyYAML") && *r == 1), "{steps:?}");
    assert!(env["packages"]["packages"]["PyYAML"].is_string(), "{:#}", env["packages"]);
    // The environment lives under CARVE_ENV_DIR, never in the repository.
    let dir = PathBuf::from(report["dir"].as_str().unwrap());
    assert!(dir.starts_with(envs.path()) && dir.join("venv").is_dir());
    let dockerfile = common::read(&out.path().join("Dockerfile"));
    insta::assert_snapshot!("env_python_dockerfile", dockerfile);
    let written: Value = serde_json::from_str(&common::read(&out.path().join("environment.json"))).unwrap();
    insta::assert_json_snapshot!("env_python_environment", redacted(&written));
    assert!(common::read(&out.path().join(".carve-env/requirements.lock")).lines().any(|l| l.starts_with("PyYAML==")));

    // Later commands on the same repository use it without being told.
    let base = tempfile::tempdir().unwrap();
    let o = run(envs.path(), &["baseline", repo.to_str().unwrap(), "--out", base.path().to_str().unwrap()], 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("using the environment {}", dir.display())), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 flaky, 3 passed"), "{}", String::from_utf8_lossy(&o.stdout));
    // A task bundle names the environment and carries what rebuilds it.
    let tasks = tempfile::tempdir().unwrap();
    let o = run(
        envs.path(),
        &["tasks", repo.to_str().unwrap(), "--out", tasks.path().to_str().unwrap(), "--level", "1", "--format", "json"],
        0,
    );
    let made: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bundle = tasks.path().join(made["tasks"][0].as_str().unwrap());
    let inst: Value = serde_json::from_str(&common::read(&bundle.join("instance.json"))).unwrap();
    assert_eq!(inst["image_name"], env["image"]["name"]);
    assert_eq!(inst["carve"]["environment"]["key"], env["key"]);
    assert_eq!(common::read(&bundle.join("Dockerfile")), dockerfile);
    assert!(bundle.join(".carve-env/requirements.lock").is_file());
    // Grading uses it too.
    let graded = tempfile::tempdir().unwrap();
    let gold = bundle.join("gold.patch");
    let o = run(
        envs.path(),
        &[
            "grade",
            bundle.to_str().unwrap(),
            "--patch",
            gold.to_str().unwrap(),
            "--repo",
            repo.to_str().unwrap(),
            "--out",
            graded.path().to_str().unwrap(),
        ],
        0,
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("using the environment {}", dir.display())));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("resolved"), "{}", String::from_utf8_lossy(&o.stdout));
    // Asked again, it is reused, and the Dockerfile has the same bytes.
    let (again, out2) = env_of(envs.path(), &repo, &[], 0);
    assert_eq!(again["reused"], true);
    assert_eq!(common::read(&out2.path().join("Dockerfile")), dockerfile);
}

#[needs("go")]
fn go_downloads_into_its_own_module_cache() {
    let envs = tempfile::tempdir().unwrap();
    let (report, out) = env_of(envs.path(), &fixture("go"), &[], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    assert_eq!(env["packages"]["packages"]["github.com/google/go-cmp"], "v0.6.0");
    assert!(PathBuf::from(report["dir"].as_str().unwrap()).join("gomodcache/github.com/google").is_dir());
    insta::assert_snapshot!("env_go_dockerfile", common::read(&out.path().join("Dockerfile")));
    insta::assert_json_snapshot!("env_go_environment", redacted(env));
}

/// `--build-image` builds the environment's image with the OCI engine present, and the
/// image alone runs the suite: Go with `GOPROXY=off`, so every module must be in it. The base
/// image comes from `scripts/base-images` (skipped there when present); without buildah the
/// test is ignored with the reason (a failure in CI, which installs it: scripts/setup-tests).
#[needs("go", "buildah")]
fn go_image_is_built_and_runs_the_tests_offline() {
    let script = carve_testutil::workspace_root().join("scripts/base-images");
    let made = Command::new(&script).arg("go").output().expect("failed to start scripts/base-images");
    assert!(made.status.success(), "{} go failed: {}", script.display(), String::from_utf8_lossy(&made.stderr));
    let engine = carve_core::oci::Engine::detect().expect("an OCI engine");
    let envs = tempfile::tempdir().unwrap();
    let (report, out) = env_of(envs.path(), &fixture("go"), &["--build-image"], 0);
    let name = report["environment"]["image"]["name"].as_str().unwrap().to_string();
    assert_eq!(report["image"]["tag"].as_str().unwrap().trim_start_matches("localhost/"), name, "{report:#}");
    // environment.json records the image's size.
    let size = report["image"]["size_bytes"].as_u64().unwrap();
    assert!(size > 100_000_000, "{report:#}");
    let written: Value = serde_json::from_str(&common::read(&out.path().join("environment.json"))).unwrap();
    assert_eq!(written["image"]["size_bytes"].as_u64(), Some(size));
    assert_eq!(report["environment"]["image"]["size_bytes"].as_u64(), Some(size));
    assert!(engine.image_exists(&name).unwrap(), "{name} was not built");
    let mut spec = carve_core::oci::RunSpec::new(std::time::Duration::from_secs(600));
    spec.command = ["go", "test", "-count=1", "./..."].iter().map(|s| s.to_string()).collect();
    let ran = engine.run(&name, &spec).unwrap();
    let _ = engine.remove_image(&name);
    assert!(ran.success(), "go test in {name}: {}\n{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("ok"), "{}", ran.stdout);
}

#[needs("node", "npm")]
fn typescript_installs_the_lockfile_in_its_own_folder() {
    let envs = tempfile::tempdir().unwrap();
    let repo = fixture("typescript");
    let (report, out) = env_of(envs.path(), &repo, &[], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    assert_eq!(env["packages"]["packages"]["is-number"], "7.0.0");
    assert!(!repo.join("node_modules").exists(), "nothing is installed into the repository");
    insta::assert_snapshot!("env_typescript_dockerfile", common::read(&out.path().join("Dockerfile")));
    insta::assert_json_snapshot!("env_typescript_environment", redacted(env));
}

/// Tests that load what the project's build makes (`require('../build/shapes.js')`, made
/// from src/ by the `build` script that `pretest` runs before a lint): the first verification
/// run stops on the missing file, the repair round adds the build part of `pretest`, which
/// then runs in every run's tree — so a masked state's tests load its masked sources, built.
#[needs("node", "npm")]
fn javascript_tests_that_load_the_build_get_the_build_before_every_run() {
    let envs = tempfile::tempdir().unwrap();
    let keep = tempfile::tempdir().unwrap();
    let repo = keep.path().join("javascript-build");
    common::copy_dir(&fixture("javascript-build"), &repo);
    let (report, out) = env_of(envs.path(), &repo, &[], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    assert_eq!(env["baseline"]["passed"].as_u64(), Some(4), "{report:#}");
    assert_eq!(env["activation"]["build"], serde_json::json!(["npm", "run", "build"]));
    let build = env["findings"].as_array().unwrap().iter().find(|f| f["what"] == "build").expect("a build finding");
    let source = build["source"].as_str().unwrap();
    assert!(source.starts_with("repair round 1: the tests load `../build/"), "{source}");
    assert!(source.contains("scripts.pretest (`npm run build && npm run lint`), its build part"), "{source}");
    assert!(!repo.join("build").exists(), "the build runs in carve's copies, never in the repository");
    let dockerfile = common::read(&out.path().join("Dockerfile"));
    assert!(dockerfile.contains("\nRUN cd /work/repo && npm run build\n"), "{dockerfile}");

    // A task: the masked source is built into what the tests load, so its tests fail there.
    let tasks = tempfile::tempdir().unwrap();
    let o = run(
        envs.path(),
        &["tasks", repo.to_str().unwrap(), "--out", tasks.path().to_str().unwrap(), "--level", "1", "--format", "json"],
        0,
    );
    let made: Value = serde_json::from_slice(&o.stdout).unwrap();
    let first = made["tasks"][0].as_str().unwrap_or_else(|| panic!("no task: {made:#}"));
    let bundle = tasks.path().join(first);
    let validation: Value = serde_json::from_str(&common::read(&bundle.join("validation.json"))).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    let gold = common::read(&bundle.join("gold.patch"));
    assert!(gold.contains("src/") && !gold.contains("build/"), "the gold patch restores sources only: {gold}");
    assert!(!repo.join("build").exists());
}

#[needs("cargo")]
fn rust_fetches_into_its_own_cargo_home() {
    let envs = tempfile::tempdir().unwrap();
    let (report, out) = env_of(envs.path(), &fixture("rust"), &[], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    assert_eq!(env["packages"]["packages"]["itoa"], "1.0.11");
    insta::assert_snapshot!("env_rust_dockerfile", common::read(&out.path().join("Dockerfile")));
    insta::assert_json_snapshot!("env_rust_environment", redacted(env));
}

#[needs("python3")]
fn the_helper_is_asked_when_the_rules_run_out_and_its_commands_are_verified() {
    let envs = tempfile::tempdir().unwrap();
    // The rules try the distribution the module names (the registry has none), then the
    // helper writes the module into the environment's site-packages.
    let helper = r#"python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["language"]=="python"; print(json.dumps({"commands": ["echo VALUE = 42 > $(ls -d {env}/venv/lib/python3*/site-packages)/carve_env_helper_demo.py"]}))'"#;
    let (report, _out) = env_of(envs.path(), &fixture("python-helper"), &["--env-helper", helper], 0);
    let env = &report["environment"];
    assert_eq!(env["status"], "verified", "{report:#}");
    let whys: Vec<&str> = env["install"].as_array().unwrap().iter().map(|s| s["why"].as_str().unwrap()).collect();
    assert!(whys.iter().any(|w| w.starts_with("helper: echo VALUE = 42")), "{whys:?}");
    assert!(whys.iter().any(|w| w.contains("carve-env-helper-demo")), "the rules' guess is recorded: {whys:?}");
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn stderr_of(envs: &Path, repo: &Path, extra: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["env", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    args.extend(extra);
    let o = run(envs, &args, 2);
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Nothing is left under the environments' folder (no half-made environment).
fn nothing_left(envs: &Path) {
    let left: Vec<String> = walk(envs);
    assert!(left.iter().all(|p| !p.contains(".partial-")), "{left:?}");
    assert!(!left.iter().any(|p| p.ends_with("environment.json")), "{left:?}");
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(e.path().display().to_string());
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

#[needs("python3")]
fn bad_input_is_a_clear_error_and_leaves_nothing() {
    let envs = tempfile::tempdir().unwrap();
    // No install metadata at all.
    let bare = tempfile::tempdir().unwrap();
    write(bare.path(), &[("tests/test_x.py", "def test_x():\n    pass\n")]);
    let e = stderr_of(envs.path(), bare.path(), &[]);
    assert!(e.contains("no Python install metadata") && e.contains("requirements-test.txt"), "{e}");
    // An interpreter no one here has.
    let future = tempfile::tempdir().unwrap();
    write(future.path(), &[("pyproject.toml", "[project]\nname = 'f'\nrequires-python = '>=3.99'\n")]);
    let e = stderr_of(envs.path(), future.path(), &[]);
    assert!(
        e.contains("CPython >=3.99 is needed (pyproject.toml [project] requires-python)")
            && e.contains("this machine has"),
        "{e}"
    );
    // A package the registry refuses.
    let refused = tempfile::tempdir().unwrap();
    write(
        refused.path(),
        &[
            ("requirements-test.txt", "carve-no-such-dist-a7f3==9.9.9\n"),
            ("tests/test_x.py", "def test_x():\n    pass\n"),
        ],
    );
    let e = stderr_of(envs.path(), refused.path(), &[]);
    assert!(e.contains("the registry refused carve-no-such-dist-a7f3==9.9.9"), "{e}");
    assert!(
        e.contains("carve-no-such-dist-a7f3==9.9.9 (requirements-test.txt)"),
        "the error says where it was found: {e}"
    );
    nothing_left(envs.path());
    // An install that hangs: every step gets a time limit.
    let out = tempfile::tempdir().unwrap();
    let o = carve(envs.path())
        .env("CARVE_ENV_STEP_TIMEOUT", "1")
        .args(["env", fixture("python").to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--fresh"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("did not finish within 1s (a hanging install"), "{e}");
    nothing_left(envs.path());
}
