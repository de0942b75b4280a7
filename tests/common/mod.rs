//! Helpers of the end-to-end tests that run the carve binary (fixture copies, tree
//! snapshots and tool checks come from `carve-testutil`).
#![allow(dead_code, unused_imports)]

pub mod browser;
pub mod expected;
pub mod patches;

pub use browser::browser_check;

pub use carve_testutil::{copy_dir, fixture, fixture_copy, needs, tree_snapshot, write_files};
use std::path::Path;
use std::process::{Command, Output};

/// The text of `p`, panicking with its path.
pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `carve tasks --level 1` on `repo` (with `python3`) with the F2P tests `f2p`: exactly one
/// task; its output folder (kept alive), bundle and `instance.json`.
pub fn one_level1_task(repo: &Path, f2p: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, serde_json::Value) {
    one_level1_task_with(repo, &["--python", "python3"], f2p)
}

/// [`one_level1_task`] with `extra` arguments instead of `--python python3` (a runner that
/// takes no interpreter: go test, cargo).
pub fn one_level1_task_with(
    repo: &Path,
    extra: &[&str],
    f2p: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    args.extend(["--level", "1", "--format", "json"]);
    args.extend(extra);
    args.push("--f2p");
    args.extend(f2p);
    let o = carve_ok(&args, 0);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{report:#}");
    let bundle = out.path().join(tasks[0].as_str().unwrap());
    let inst: serde_json::Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    (out, bundle, inst)
}

/// The ids `instance.json` lists as extracted, sorted.
pub fn extracted(inst: &serde_json::Value) -> Vec<&str> {
    let mut ids: Vec<&str> =
        inst["carve"]["extracted"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    ids.sort();
    ids
}

pub fn carve() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_carve"));
    c.env("CARVE_NO_PROGRESS", "1");
    // The end-to-end tests run on the machine's interpreters and the fixtures' installs as
    // they are; `carve env` has tests of its own (tests/e2e_env.rs).
    c.env("CARVE_ENV", "off");
    c
}

/// Run carve with `args`; returns the output, panicking with stderr when the exit code
/// is not `code`.
pub fn carve_ok(args: &[&str], code: i32) -> Output {
    checked(carve(), args, code)
}

/// [`carve_ok`] with environments switched on, kept in the store `envs` (`CARVE_ENV_DIR`).
#[allow(dead_code)]
pub fn carve_with_envs(envs: &Path, args: &[&str], code: i32) -> Output {
    let mut c = carve();
    c.env_remove("CARVE_ENV").env("CARVE_ENV_DIR", envs);
    checked(c, args, code)
}

/// Run `cmd` with `args`, assert its exit code, and check the bundles it wrote.
fn checked(mut cmd: Command, args: &[&str], code: i32) -> Output {
    let out = cmd.args(args).output().expect("failed to start carve");
    assert_eq!(
        out.status.code(),
        Some(code),
        "carve {:?} exited {:?}\nstdout:\n{}\nstderr:\n{}",
        args,
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    check_bundles_of(args);
    out
}

/// After `carve tasks REPO --out OUT …`: the patch contract of every Level 1 bundle it wrote
/// ([`patches::check_tasks_out`]).
fn check_bundles_of(args: &[&str]) {
    let (Some(&"tasks"), Some(repo)) = (args.first(), args.get(1)) else { return };
    let Some(out) = args.iter().position(|a| *a == "--out").and_then(|i| args.get(i + 1)) else { return };
    patches::check_tasks_out(Path::new(repo), Path::new(out));
}

/// `carve CMD REPO --out OUT ARGS…`, exiting with `code` (see [`carve_ok`]).
pub fn carve_on(cmd: &str, repo: &Path, out: &Path, args: &[&str], code: i32) -> Output {
    let mut all = vec![cmd, repo.to_str().unwrap(), "--out", out.to_str().unwrap()];
    all.extend(args);
    carve_ok(&all, code)
}

/// `carve tasks REPO --out OUT --level 1 --format json --python python3 ARGS…` into a new
/// folder: the folder (kept alive), the JSON report, and each emitted task's bundle folder.
pub fn level1_tasks_json(
    repo: &Path,
    args: &[&str],
) -> (tempfile::TempDir, serde_json::Value, Vec<std::path::PathBuf>) {
    let out = tempfile::tempdir().unwrap();
    let mut all = vec!["--level", "1", "--format", "json", "--python", "python3"];
    all.extend(args);
    let o = carve_on("tasks", repo, out.path(), &all, 0);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dirs = report["tasks"].as_array().unwrap().iter().map(|id| out.path().join(id.as_str().unwrap())).collect();
    (out, report, dirs)
}

/// A bundle file read as JSON.
pub fn bundle_json(dir: &Path, file: &str) -> serde_json::Value {
    serde_json::from_str(&read(&dir.join(file))).unwrap()
}

/// The files every task bundle holds.
pub const BUNDLE_FILES: &[&str] = &[
    "instance.json",
    "problem_statement.md",
    "contract.json",
    "gold.patch",
    "test.patch",
    "mask.patch",
    "validation.json",
    "audit.json",
];

/// The tasks of `<out>/tasks.jsonl`, one JSON value a line.
pub fn tasks_jsonl(out: &Path) -> Vec<serde_json::Value> {
    read(&out.join("tasks.jsonl")).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `carve tasks REPO` into a new output folder, which must leave the repository as it was:
/// the folder (kept alive) and the tasks of its `tasks.jsonl`.
pub fn tasks_of(repo: &Path) -> (tempfile::TempDir, Vec<serde_json::Value>) {
    let before = tree_snapshot(repo);
    let out = tempfile::tempdir().unwrap();
    carve_on("tasks", repo, out.path(), &[], 0);
    assert_eq!(before, tree_snapshot(repo), "carve tasks modified the repository");
    let tasks = tasks_jsonl(out.path());
    (out, tasks)
}

pub fn python() -> String {
    std::env::var("CARVE_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Run pytest on `ids` in `dir`; returns node id -> outcome word from `-rA` lines.
pub fn pytest_outcomes(dir: &Path, ids: &[String]) -> std::collections::BTreeMap<String, String> {
    let out = Command::new(python())
        .args(["-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "--continue-on-collection-errors"])
        .args(ids)
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut map = std::collections::BTreeMap::new();
    for line in text.lines() {
        for word in ["PASSED", "FAILED", "ERROR"] {
            if let Some(rest) = line.strip_prefix(&format!("{word} ")) {
                let id = rest.split(" - ").next().unwrap().trim().to_string();
                map.insert(id, word.to_string());
            }
        }
    }
    map
}

/// `git apply` a patch file inside `dir`.
pub fn git_apply(dir: &Path, patch: &Path) {
    let out = Command::new("git")
        .args(["apply", "--whitespace=nowarn"])
        .arg(patch)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "git apply {} failed: {}", patch.display(), String::from_utf8_lossy(&out.stderr));
}

/// Re-check a Level 1 bundle without carve: original + mask.patch is the masked state
/// (F2P tests removed: P2P pass there); + test.patch puts the F2P tests back (they fail);
/// + gold.patch gives the original tree byte for byte (everything passes).
pub fn recheck_level1(repo: &Path, bundle: &Path, inst: &serde_json::Value) {
    let list = |k: &str| -> Vec<String> {
        inst[k].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
    };
    let f2p = list("FAIL_TO_PASS");
    let p2p = list("PASS_TO_PASS");
    assert!(!f2p.is_empty() && !p2p.is_empty());
    let all: Vec<String> = f2p.iter().chain(&p2p).cloned().collect();
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("repo");
    copy_dir(repo, &copy);
    // pytest on `tests` in the copy: each passes (`pass`) or does not; `state` names the
    // copy's state in the failure.
    let expect = |tests: &[String], pass: bool, state: &str| {
        let outcomes = pytest_outcomes(&copy, tests);
        for t in tests {
            let got = outcomes.get(t).map(String::as_str);
            let what = if pass { "does not pass" } else { "passes" };
            assert_eq!(got == Some("PASSED"), pass, "{}: {t} {what} {state} ({got:?})", bundle.display());
        }
    };
    git_apply(&copy, &bundle.join("mask.patch"));
    expect(&p2p, true, "on the masked state (P2P)");
    // The F2P tests are not in the masked state: none of them runs there.
    expect(&f2p, false, "on the masked state, without the F2P tests");
    // test.patch alone puts the F2P tests back, imports of the feature included. It is empty
    // only when no F2P test left the masked state (tests a class there inherits: they run,
    // and fail, where they are); `patches::check_bundle` holds it to that.
    if !read(&bundle.join("test.patch")).is_empty() {
        git_apply(&copy, &bundle.join("test.patch"));
    }
    // Two runs: pytest runs nothing at all when a named id's file fails to import.
    expect(&f2p, false, "on the masked state with the F2P tests");
    git_apply(&copy, &bundle.join("gold.patch"));
    expect(&all, true, "after gold.patch");
    assert_eq!(
        tree_snapshot(repo),
        tree_snapshot(&copy),
        "original + mask.patch + test.patch + gold.patch is the original tree"
    );
}
