//! End-to-end tests of `carve dataset export`: a dataset run over the Python fixture `tokens`
//! exported as SWE-bench, FeatureBench and Harbor; each export's own evaluation script passes
//! with the gold patch and fails with an empty one (`--check`); exporting twice gives the same
//! bytes; the formats are snapshots (commit ids redacted); bad input is a clear error.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A dataset run over a git repository of `fixtures/<fixture>` (`extra`: more manifest keys):
/// the output folder and the commit (volatile: its date is in it).
fn dataset(dir: &Path, fixture_name: &str, extra: &str) -> (PathBuf, String) {
    let name = fixture_name.rsplit('/').next().unwrap();
    let repo = dir.join(name);
    copy_dir(&fixture(fixture_name), &repo);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixture"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    let m = dir.join("manifest.toml");
    let entry = format!("[[repo]]\nname = \"local/{name}\"\nurl = \"./{name}\"\ncommit = \"{commit}\"\n{extra}");
    std::fs::write(&m, entry).unwrap();
    let out = dir.join("out");
    with_env(&dir.join("envs"), &["dataset", "run", m.to_str().unwrap(), "--out", out.to_str().unwrap()], 0);
    (out, commit)
}

/// carve with environments switched on (the exports take the test command `carve env`
/// recorded), kept in `envs`, beside the dataset in the test's temporary folder.
fn with_env(envs: &Path, args: &[&str], code: i32) -> std::process::Output {
    carve_with_envs(envs, args, code)
}

fn export(out: &Path, format: &str, to: &Path, extra: &[&str], code: i32) -> std::process::Output {
    let mut args = vec!["dataset", "export", out.to_str().unwrap(), "--format", format, "--to", to.to_str().unwrap()];
    args.extend(extra);
    with_env(&out.parent().unwrap().join("envs"), &args, code)
}

/// `text` with the commit, its 8-character prefix and the date it was made redacted.
fn redact(text: &str, commit: &str) -> String {
    let text = text.replace(commit, "<commit>").replace(&commit[..12], "<commit12>").replace(&commit[..8], "<commit8>");
    let date = regex_free_date(&text);
    match date {
        Some(d) => text.replace(&d, "<date>"),
        None => text,
    }
}

/// The first `YYYY-MM-DDTHH:MM:SS+00:00` date in `text`.
fn regex_free_date(text: &str) -> Option<String> {
    text.char_indices().find_map(|(i, _)| {
        let s = text.get(i..i + 25)?;
        let b = s.as_bytes();
        (b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
            && b[13] == b':'
            && b[19] == b'+'
            && s[..4].chars().all(|c| c.is_ascii_digit()))
        .then(|| s.to_string())
    })
}

#[needs("pytest")]
fn every_export_passes_its_own_evaluation_with_gold_and_fails_without_it() {
    let d = tempfile::tempdir().unwrap();
    let (out, commit) = dataset(d.path(), "python/tokens", "");
    for format in ["swebench", "featurebench", "harbor"] {
        let to = d.path().join(format!("export-{format}"));
        let o = export(&out, format, &to, &["--check", "--report", "json"], 0);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let checks = report["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 1, "{format}: one task, one check: {report:#}");
        assert_eq!(report["tasks"].as_array().unwrap().len(), 1, "{report:#}");
        for c in checks {
            assert_eq!(c["gold_passes"], true, "{format}: {report:#}");
            assert_eq!(c["empty_fails"], true, "{format}: {report:#}");
        }
        // Twice: the same bytes.
        let again = d.path().join(format!("again-{format}"));
        export(&out, format, &again, &[], 0);
        assert_eq!(tree_snapshot(&to), tree_snapshot(&again), "{format}: a second export differs");
        let card = read(&to.join("README.md"));
        assert!(card.starts_with("---\nconfigs:\n- config_name: default\n  data_files:"), "{card}");
    }
    let sw = d.path().join("export-swebench");
    let task = std::fs::read_dir(sw.join("tasks")).unwrap().next().unwrap().unwrap().path();
    let files: Vec<String> = tree_snapshot(&task).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        files,
        [
            "Dockerfile",
            "eval.sh",
            "gold.patch",
            "mask.patch",
            "problem_statement.md",
            "task.yaml",
            "test.patch",
            "tests.json"
        ]
    );
    let row: serde_json::Value =
        serde_json::from_str(read(&sw.join("data/test.jsonl")).lines().next().unwrap()).unwrap();
    assert!(row["FAIL_TO_PASS"].is_string(), "JSON-encoded lists: {row:#}");
    let mut keys: Vec<&String> = row.as_object().unwrap().keys().collect();
    keys.sort();
    insta::assert_snapshot!("swebench_row_keys", format!("{keys:?}"));
    insta::assert_snapshot!("swebench_task_yaml", redact(&read(&task.join("task.yaml")), &commit));
    insta::assert_snapshot!("swebench_eval_sh", redact(&read(&task.join("eval.sh")), &commit));

    let fb = d.path().join("export-featurebench");
    let case = fb.join(format!("cases/local__tokens.{}", &commit[..8]));
    let lv1 = std::fs::read_dir(&case).unwrap().next().unwrap().unwrap().path();
    assert!(
        lv1.file_name().unwrap().to_str().unwrap().starts_with("test_crit.") && lv1.to_str().unwrap().ends_with(".lv1")
    );
    let mut inst: serde_json::Value = serde_json::from_str(&read(&lv1.join("instance.json"))).unwrap();
    for volatile in ["instance_dockerfile", "base_dockerfile"] {
        inst[volatile] = serde_json::Value::String("<dockerfile>".into());
    }
    insta::assert_snapshot!("featurebench_instance", redact(&serde_json::to_string_pretty(&inst).unwrap(), &commit));
    assert!(read(&lv1.join("test_patch.diff")).contains("deleted file mode"));

    let hb = d.path().join("export-harbor");
    let t =
        std::fs::read_dir(&hb).unwrap().flatten().map(|e| e.path()).find(|p| p.join("task.toml").is_file()).unwrap();
    insta::assert_snapshot!("harbor_task_toml", redact(&read(&t.join("task.toml")), &commit));
    assert!(read(&t.join("tests/test.sh")).contains("/logs/verifier"));
}

/// Go: SWE-bench and Harbor exports pass their own evaluation with gold and fail without it;
/// FeatureBench (whose P2P are test files) leaves the tasks out and says why.
/// A src layout installed into its environment (`pip install .`): the eval script must test the
/// tree's code, not the installed original, or the empty patch passes (seen on cachetools).
#[needs("pytest")]
fn a_src_layout_export_fails_with_the_empty_patch() {
    let d = tempfile::tempdir().unwrap();
    let (out, _) = dataset(d.path(), "python/srcpkg", "");
    let o = export(&out, "swebench", &d.path().join("swebench"), &["--check", "--report", "json"], 0);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    assert!(!checks.is_empty(), "{report:#}");
    assert!(checks.iter().all(|c| c["gold_passes"] == true && c["empty_fails"] == true), "{report:#}");
}

#[needs("go")]
fn go_tasks_export_to_swebench_and_harbor_and_featurebench_says_why_not() {
    let d = tempfile::tempdir().unwrap();
    let (out, _) = dataset(d.path(), "go/shapes", "candidates = 1\n");
    for format in ["swebench", "harbor"] {
        let o = export(&out, format, &d.path().join(format), &["--check", "--report", "json"], 0);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let checks = report["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "{format}: {report:#}");
        assert!(checks.iter().all(|c| c["gold_passes"] == true && c["empty_fails"] == true), "{format}: {report:#}");
    }
    let tasks = d.path().join("swebench/tasks");
    let first = std::fs::read_dir(&tasks).unwrap().next().unwrap().unwrap().path();
    let eval = read(&first.join("eval.sh"));
    assert!(eval.contains("go test -count=1 -v -run"), "{eval}");
    let o = export(&out, "featurebench", &d.path().join("fb"), &["--report", "json"], 0);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(report["tasks"].as_array().unwrap().is_empty(), "{report:#}");
    let skipped = report["skipped"].as_array().unwrap();
    assert!(
        !skipped.is_empty() && skipped.iter().all(|s| s["reason"].as_str().unwrap().contains("names no test file")),
        "{report:#}"
    );
}

/// TypeScript (vitest): SWE-bench and Harbor exports run exactly the task's tests through the
/// project's vitest with the verbose reporter SWE-bench's `parse_log_vitest` reads, and pass
/// their own evaluation with gold and fail without it.
#[needs("node", "npm", "fixtures/typescript/ledger/node_modules")]
fn typescript_tasks_export_to_swebench_and_harbor_and_pass_their_checks() {
    let d = tempfile::tempdir().unwrap();
    let (out, _) = dataset(d.path(), "typescript/ledger", "candidates = 1\n");
    for format in ["swebench", "harbor"] {
        let o = export(&out, format, &d.path().join(format), &["--check", "--report", "json"], 0);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(report["skipped"].as_array().is_none_or(|s| s.is_empty()), "{format}: {report:#}");
        let checks = report["checks"].as_array().unwrap();
        assert!(!checks.is_empty(), "{format}: {report:#}");
        assert!(checks.iter().all(|c| c["gold_passes"] == true && c["empty_fails"] == true), "{format}: {report:#}");
    }
    let tasks = d.path().join("swebench/tasks");
    for task in std::fs::read_dir(&tasks).unwrap().flatten().map(|e| e.path()) {
        let eval = read(&task.join("eval.sh"));
        assert!(eval.contains("npx --no-install vitest run --reporter=verbose -t '^ ?(?:"), "{eval}");
        assert!(read(&task.join("task.yaml")).contains("log_parser: \"parse_log_vitest\""), "{}", task.display());
        // SWE-bench's FAIL_TO_PASS names are the lines vitest 2 prints: carve's own ids.
        let tests: serde_json::Value = serde_json::from_str(&read(&task.join("tests.json"))).unwrap();
        let f2p = tests["FAIL_TO_PASS"].as_array().unwrap();
        assert!(!f2p.is_empty() && f2p.iter().all(|t| t.as_str().unwrap().contains(".ts > ")), "{tests:#}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let e = String::from_utf8_lossy(&export(d.path(), "harbor", &d.path().join("x"), &[], 2).stderr).to_string();
    assert!(e.contains("is not a `carve dataset run` output folder"), "{e}");
    std::fs::write(d.path().join("manifest.json"), "{}").unwrap();
    let e = String::from_utf8_lossy(&export(d.path(), "swe", &d.path().join("x"), &[], 2).stderr).to_string();
    assert!(e.contains("unknown export format `swe`"), "{e}");
    let full = d.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("f"), "x").unwrap();
    let e = String::from_utf8_lossy(&export(d.path(), "harbor", &full, &[], 2).stderr).to_string();
    assert!(e.contains("is not empty"), "{e}");
}
