//! End-to-end tests of `carve dataset`: a manifest over git repositories made from the
//! fixtures (local paths), run whole, in slices merged afterwards, killed and resumed; a
//! repository that fails is recorded with its reason; a second run on a held folder and a
//! bad manifest are clear errors.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Git repositories of `fixtures/python/{tokens,tally}` under `dir` and a manifest over them
/// with a third entry at a commit that does not exist (it must fail in checkout).
fn manifest(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for name in ["tokens", "tally"] {
        let repo = dir.join(name);
        copy_dir(&fixture(&format!("python/{name}")), &repo);
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"]);
        let commit = git(&repo, &["rev-parse", "HEAD"]);
        text.push_str(&format!("[[repo]]\nname = \"local/{name}\"\nurl = \"./{name}\"\ncommit = \"{commit}\"\n\n"));
    }
    text.push_str("[[repo]]\nname = \"local/missing\"\nurl = \"./tokens\"\ncommit = \"0123456789012345678901234567890123456789\"\n");
    let path = dir.join("manifest.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(manifest: &Path, out: &Path, extra: &[&str], code: i32) -> std::process::Output {
    let mut args = vec!["dataset", "run", manifest.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend(extra);
    carve_ok(&args, code)
}

/// Every file of the dataset that must not depend on how it was run: the merged tasks, the
/// slices' repository results and bundles (not `stats.json`, which holds times and the host).
fn dataset_files(out: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = tree_snapshot(&out.join("repos"))
        .into_iter()
        .filter(|(p, _)| !p.ends_with("stats.json"))
        .map(|(p, c)| (format!("repos/{p}"), c))
        .collect();
    files.push(("tasks.jsonl".into(), read(&out.join("tasks.jsonl"))));
    files.push(("manifest.json".into(), read(&out.join("manifest.json"))));
    files
}

#[needs("pytest")]
fn sharded_runs_merge_to_the_same_dataset_as_one_run_and_a_finished_run_redoes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let whole = d.path().join("whole");
    let o = run(&m, &whole, &["--format", "json"], 1);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let summary = &report["summary"];
    assert_eq!(summary["repositories"]["done"], 2, "{report:#}");
    assert_eq!(summary["repositories"]["failed"], 1, "{report:#}");
    let tasks = read(&whole.join("tasks.jsonl"));
    assert!(tasks.lines().count() >= 2, "tokens and tally each give a level 1 task:\n{tasks}");
    let failed = read(&whole.join("repos/local+missing/0123456789012345678901234567890123456789/result.json"));
    assert!(failed.contains("\"stage\": \"checkout\"") && failed.contains("does not exist in ./tokens"), "{failed}");
    assert!(read(&whole.join("summary.html")).contains("local/tally"));

    // Again: every repository is finished, nothing is redone, the dataset is unchanged.
    let before = dataset_files(&whole);
    let o = run(&m, &whole, &[], 1);
    assert!(String::from_utf8_lossy(&o.stdout).contains("3 repositor(ies) finished by an earlier run were skipped"));
    assert_eq!(before, dataset_files(&whole));

    // Two shards, and single indexes from a job array's environment, merged: byte-identical.
    let sharded = d.path().join("sharded");
    run(&m, &sharded, &["--shard", "0/2"], 1);
    run(&m, &sharded, &["--shard", "1/2"], 0);
    carve_ok(&["dataset", "merge", sharded.to_str().unwrap()], 0);
    assert_eq!(before, dataset_files(&sharded), "two shards merged differ from one run");
    let indexed = d.path().join("indexed");
    for (i, var) in [(0, "SLURM_ARRAY_TASK_ID"), (1, "JOB_COMPLETION_INDEX"), (2, "SLURM_ARRAY_TASK_ID")] {
        let mut c = carve();
        c.args(["dataset", "run", m.to_str().unwrap(), "--out", indexed.to_str().unwrap(), "--index", "env"]);
        let o = c
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX")
            .env(var, i.to_string())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(if i == 2 { 1 } else { 0 }), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert!(indexed.join("slices/index-2.json").is_file());
    carve_ok(&["dataset", "merge", indexed.to_str().unwrap()], 0);
    assert_eq!(before, dataset_files(&indexed), "three indexes merged differ from one run");
}

#[needs("pytest")]
fn a_killed_run_resumes_to_the_same_dataset() {
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let out = d.path().join("out");
    let mut child = carve()
        .args(["dataset", "run", m.to_str().unwrap(), "--out", out.to_str().unwrap(), "--keep-work"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the first repository has a finished candidate group, before it is done.
    let marker =
        out.join("work").join(format!("local+tokens@{}", git(&d.path().join("tokens"), &["rev-parse", "HEAD"])));
    let start = std::time::Instant::now();
    while !marker.join("chunks/0.json").is_file() && start.elapsed().as_secs() < 300 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // A half-written repository folder as a kill leaves it: never part of the dataset.
    let half = out.join("repos/local+tally/.0000.partial-1");
    std::fs::create_dir_all(half.join("tasks")).unwrap();
    let o = carve().args(["dataset", "merge", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "a merge before the run finished names what is pending");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("pending: local/tokens"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    run(&m, &out, &[], 1);
    assert!(!half.exists(), "the half-written folder of a killed run is removed");
    let whole = d.path().join("whole");
    run(&m, &whole, &[], 1);
    assert_eq!(dataset_files(&whole), dataset_files(&out), "the resumed dataset differs from one run");
}

#[test]
fn a_held_folder_and_bad_manifests_are_errors_that_name_them() {
    let d = tempfile::tempdir().unwrap();
    let c = "0123456789012345678901234567890123456789";
    let m = d.path().join("m.toml");
    let entry = format!("[[repo]]\nname = \"a/b\"\nurl = \"./b\"\ncommit = \"{c}\"\n");
    std::fs::write(&m, format!("{entry}\n{entry}")).unwrap();
    let o = run(&m, &d.path().join("out"), &[], 2);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("entry 2 (a/b)") && e.contains("as entry 1"), "{e}");
    std::fs::write(&m, entry.replace(c, "main")).unwrap();
    let e = String::from_utf8_lossy(&run(&m, &d.path().join("out"), &[], 2).stderr).to_string();
    assert!(e.contains("entry 1 (a/b)") && e.contains("full commit id"), "{e}");

    // Another process holds the folder: this run refuses and touches nothing.
    std::fs::write(&m, &entry).unwrap();
    let out = d.path().join("held");
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::File::create(out.join(".lock")).unwrap();
    let mut holder = Command::new("flock").arg("-x").arg(out.join(".lock")).args(["sleep", "30"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = run(&m, &out, &[], 2);
    holder.kill().unwrap();
    holder.wait().unwrap();
    drop(lock);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("in use by another `carve dataset` run"), "{e}");
    assert!(!out.join("manifest.json").exists());
}

/// The state folder of the one-node cluster the Slurm test starts (`scripts/slurm-single-node`).
fn start_slurm() -> PathBuf {
    let dir = PathBuf::from("/tmp/carve-slurm");
    let script = carve_testutil::workspace_root().join("scripts/slurm-single-node");
    let o = Command::new(&script).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{} failed: {}", script.display(), String::from_utf8_lossy(&o.stderr));
    dir.join("slurm.conf")
}

#[needs("pytest", "slurmd", "munged")]
fn a_slurm_job_array_merges_to_the_same_dataset_as_one_run() {
    let conf = start_slurm();
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let out = d.path().join("slurm-out");
    let o = carve()
        .env("SLURM_CONF", &conf)
        .args(["dataset", "slurm", m.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--cpus-per-task", "1", "--max-parallel", "2", "--submit", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let jobs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let merge_job = jobs["merge_job"].as_str().unwrap().to_string();
    assert!(read(&out.join("slurm/array.sbatch")).contains("#SBATCH --array=0-2%2"));
    // Wait for the merge job (it runs after every array task) to leave the queue.
    let start = std::time::Instant::now();
    loop {
        let q = Command::new("squeue").env("SLURM_CONF", &conf).args(["-h", "-j", &merge_job]).output().unwrap();
        if String::from_utf8_lossy(&q.stdout).trim().is_empty() {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 600,
            "the Slurm jobs did not end in 10 minutes: see {}",
            out.join("slurm/logs").display()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let logs = out.join("slurm/logs");
    assert!(
        out.join("slices/index-0.json").is_file() && out.join("slices/index-2.json").is_file(),
        "logs in {}",
        logs.display()
    );
    assert!(out.join("tasks.jsonl").is_file(), "the merge job did not run: see {}", logs.display());
    let whole = d.path().join("whole");
    run(&m, &whole, &[], 1);
    assert_eq!(dataset_files(&whole), dataset_files(&out), "the Slurm array's dataset differs from one run");
}

#[needs("pytest", "chromium")]
fn the_summary_is_json_and_a_page_that_renders_its_charts() {
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let out = d.path().join("out");
    // One repository done, one pending: the summary of a folder still being made.
    run(&m, &out, &["--index", "1"], 0);
    let o = carve_ok(&["dataset", "summary", out.to_str().unwrap(), "--format", "json"], 0);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["repositories"]["done"], 1, "{s:#}");
    assert_eq!(s["repositories"]["pending"], 2, "{s:#}");
    assert_eq!(s["tasks"].as_u64().unwrap() as usize, s["repos"][1]["tasks"].as_u64().unwrap() as usize);
    assert!(s["sizes"]["lines"]["count"].as_u64().unwrap() >= 1, "{s:#}");
    assert!(s["stages"]["trace"]["seconds"].as_f64().unwrap() > 0.0, "{s:#}");
    let o = carve_ok(&["dataset", "summary", out.to_str().unwrap(), "--format", "html"], 0);
    let page = d.path().join("summary.html");
    std::fs::write(&page, &o.stdout).unwrap();
    let html = String::from_utf8_lossy(&o.stdout);
    assert!(
        !html.contains("http://") && !html.contains("https://") || html.contains("xmlns"),
        "the page loads nothing"
    );
    let selectors =
        ["#totals", "#repos", "#languages svg", "#rejections", "#sizes", "#size-lines svg", "#stage-chart svg"];
    browser_check(&page, &selectors, &d.path().join("summary.png"));
}

#[needs("pytest")]
fn a_candidate_cap_tries_that_many_and_records_how_many_were_found() {
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let out = d.path().join("out");
    run(&m, &out, &["--index", "1", "--candidates", "1", "--recheck", "off"], 0);
    let dir = std::fs::read_dir(out.join("repos/local+tally")).unwrap().next().unwrap().unwrap().path();
    let r: serde_json::Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    assert_eq!(r["candidates"]["tried"], 1, "{r:#}");
    assert!(r["candidates"]["found"].as_u64().unwrap() >= 2, "tally has several features: {r:#}");
    let tasks = r["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "one candidate at level 1 gives at most one task: {r:#}");
    assert_eq!(tasks[0]["recheck"], "off", "{r:#}");
}

/// `--protect` reaches every bundle of the run, the folder records it, and a later run with
/// another policy on that folder is refused rather than mixing policies.
#[needs("pytest")]
fn the_protection_policy_reaches_the_bundles_and_a_folder_keeps_one() {
    let d = tempfile::tempdir().unwrap();
    let m = manifest(d.path());
    let out = d.path().join("out");
    run(&m, &out, &["--index", "1", "--protect", "feature", "--recheck", "off"], 0);
    let dir = std::fs::read_dir(out.join("repos/local+tally")).unwrap().next().unwrap().unwrap().path();
    let r: serde_json::Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    let tasks = r["tasks"].as_array().unwrap();
    assert!(!tasks.is_empty(), "tally gives tasks under feature: {r:#}");
    for t in tasks {
        let id = t["instance_id"].as_str().unwrap();
        let instance: serde_json::Value =
            serde_json::from_str(&read(&dir.join("tasks").join(id).join("instance.json"))).unwrap();
        assert_eq!(instance["carve"]["protection"]["policy"], "feature", "{id}");
    }
    let policy: serde_json::Value = serde_json::from_str(&read(&out.join("policy.json"))).unwrap();
    assert_eq!(policy["protect"], "feature");
    let e = run(&m, &out, &["--index", "0", "--protect", "sampled:5"], 2);
    let e = String::from_utf8_lossy(&e.stderr);
    assert!(e.contains("was carved with") && e.contains("--protect sampled:5"), "{e}");
}

/// Under `sampled:N` a dataset run tries the module groups as `carve tasks` does (issue 26
/// item 2): `fixtures/python/notebook`'s two test files of `notebook/store.py` give the
/// `store-module` task, whose bundle records the grouped files. It made none before: the
/// run asked for one candidate per test file whatever the policy.
#[needs("pytest")]
fn a_sampled_run_tries_the_module_groups_too() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("notebook");
    copy_dir(&fixture("python/notebook"), &repo);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    let m = d.path().join("manifest.toml");
    std::fs::write(&m, format!("[[repo]]\nname = \"local/notebook\"\nurl = \"./notebook\"\ncommit = \"{commit}\"\n"))
        .unwrap();
    let out = d.path().join("out");
    run(&m, &out, &["--protect", "sampled:5", "--recheck", "off"], 0);
    let dir = std::fs::read_dir(out.join("repos/local+notebook")).unwrap().next().unwrap().unwrap().path();
    let r: serde_json::Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    let groups: Vec<serde_json::Value> = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let id = t["instance_id"].as_str().unwrap();
            let instance: serde_json::Value =
                serde_json::from_str(&read(&dir.join("tasks").join(id).join("instance.json"))).unwrap();
            instance["carve"]["group"].clone()
        })
        .filter(|g| !g.is_null())
        .collect();
    let store = serde_json::json!({
        "kind": "module", "module": "notebook/store.py",
        "test_files": ["tests/test_search.py", "tests/test_store.py"],
    });
    assert_eq!(groups, [store], "{r:#}");
}
