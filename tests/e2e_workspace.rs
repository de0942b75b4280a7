//! End-to-end tests of what a task hands to an agent, over copies of
//! `fixtures/python/inventory`: the repository's identity from its remote (and
//! `--repo-name`), the agent's workspace (`carve workspace`: one fresh commit, no caches or
//! build outputs, the tree the bundle recorded), the leakage check that rejects a task whose
//! workspace repeats the gold code, and `--p2p-files`.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A copy of the fixture as a git clone with `remote` as origin.
fn clone_with_remote(remote: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy("python/inventory");
    git(&repo, &["init", "-q"]);
    git(&repo, &["remote", "add", "origin", remote]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "fixture"]);
    (tmp, repo)
}

fn tasks(repo: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["tasks", repo.to_str().unwrap(), "--out", out.to_str().unwrap(), "--format", "json"];
    args.extend(["--level", "1", "--f2p", "tests/test_pricing.py"]);
    args.extend(extra);
    let out = carve().args(&args).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "carve {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[needs("pytest", "git")]
fn identity_comes_from_the_remote_and_repo_name_overrides_it() {
    let (_tmp, repo) = clone_with_remote("https://gitlab.com/acme/tools/inventory.git");
    let out = tempfile::tempdir().unwrap();
    let t = tasks(&repo, out.path(), &[]);
    let id = t["tasks"][0].as_str().expect("a task");
    assert!(id.starts_with("acme-tools__inventory."), "{id}");
    let inst = read_json(&out.path().join(id).join("instance.json"));
    assert_eq!(inst["repo"], "acme/tools/inventory");
    let statement = std::fs::read_to_string(out.path().join(id).join("problem_statement.md")).unwrap();
    assert!(statement.contains("`acme/tools/inventory`"), "{statement}");

    let out = tempfile::tempdir().unwrap();
    let t = tasks(&repo, out.path(), &["--repo-name", "shop/stock"]);
    let id = t["tasks"][0].as_str().unwrap();
    assert!(id.starts_with("shop__stock."), "{id}");

    // A clone of a local folder names no public repository: the folder's name does.
    git(&repo, &["remote", "set-url", "origin", "/srv/mirror/acme+inventory/repo.git"]);
    let out = tempfile::tempdir().unwrap();
    let t = tasks(&repo, out.path(), &[]);
    let id = t["tasks"][0].as_str().unwrap();
    let dir = repo.file_name().unwrap().to_string_lossy().into_owned();
    assert!(id.starts_with(&format!("local__{dir}.")), "{id}");

    let bad = carve().args(["tasks", repo.to_str().unwrap(), "--repo-name", "stock"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("owner/name"));
}

#[needs("pytest", "git")]
fn the_workspace_is_one_fresh_commit_without_caches_and_the_leakage_check_rejects_copies() {
    let (_tmp, repo) = clone_with_remote("git@github.com:acme/inventory.git");
    // What a used checkout holds besides its sources.
    std::fs::create_dir_all(repo.join("inventory/__pycache__")).unwrap();
    std::fs::write(repo.join("inventory/__pycache__/pricing.cpython-311.pyc"), "bytecode").unwrap();
    std::fs::create_dir_all(repo.join("inventory.egg-info")).unwrap();
    std::fs::write(repo.join("inventory.egg-info/PKG-INFO"), "Name: inventory\n").unwrap();
    std::fs::create_dir_all(repo.join("build/lib")).unwrap();
    std::fs::write(repo.join("build/lib/pricing.py"), "# built\n").unwrap();
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let t = tasks(&repo, out.path(), &[]);
    let id = t["tasks"][0].as_str().unwrap_or_else(|| panic!("no task: {t}"));
    let bundle = out.path().join(id);
    let v = read_json(&bundle.join("validation.json"));
    assert_eq!(v["leakage"]["ok"], true, "{}", v["leakage"]);
    assert!(v["leakage"]["gold_windows"].as_u64().unwrap() > 0, "the check compared something");
    let needed: Vec<&str> =
        v["leakage"]["needed_identifiers"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert!(needed.contains(&"total_value"), "{needed:?}");
    let inst = read_json(&bundle.join("instance.json"));
    let recorded = inst["carve"]["workspace"]["tree"].as_str().expect("the bundle records its workspace tree");

    let ws = out.path().join("ws");
    let w = carve_ok(
        &[
            "workspace",
            bundle.to_str().unwrap(),
            "--repo",
            repo.to_str().unwrap(),
            "--out",
            ws.to_str().unwrap(),
            "--format",
            "json",
        ],
        0,
    );
    let w: Value = serde_json::from_slice(&w.stdout).unwrap();
    assert_eq!(w["tree"], recorded, "the same workspace as validated");
    assert_eq!(git(&ws, &["rev-list", "--count", "HEAD"]), "1");
    assert_eq!(git(&ws, &["status", "--porcelain"]), "", "nothing uncommitted");
    let files = git(&ws, &["ls-files"]);
    assert!(files.contains("inventory/pricing.py") && files.contains("tests/test_core.py"), "{files}");
    for gone in ["__pycache__", ".pyc", "egg-info", "build/", "tests/test_pricing.py"] {
        assert!(!files.contains(gone), "{gone} in the workspace:\n{files}");
    }
    assert!(!ws.join("build").exists() && !ws.join("inventory.egg-info").exists());
    // The gold code is nowhere in the workspace, history included.
    let gold = std::fs::read_to_string(bundle.join("gold.patch")).unwrap();
    let body = gold.lines().find(|l| l.starts_with("+def ")).expect("a function in the gold patch");
    let grep = Command::new("git").args(["grep", "-F", &body[1..]]).current_dir(&ws).output().unwrap();
    assert!(grep.stdout.is_empty(), "{}", String::from_utf8_lossy(&grep.stdout));
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");

    // A copy of a gold function's body left in the docs leaks the answer: rejected, with
    // the file and lines.
    let lines: Vec<&str> = gold.lines().collect();
    let run: Vec<&str> = (0..lines.len())
        .filter(|i| lines[*i].starts_with("+def "))
        .map(|i| lines[i..].iter().take_while(|l| l.starts_with('+')).map(|l| &l[1..]).collect::<Vec<_>>())
        .max_by_key(|r| r.len())
        .unwrap();
    assert!(run.len() >= 8, "{run:?}");
    std::fs::create_dir_all(repo.join("docs")).unwrap();
    std::fs::write(repo.join("docs/recipe.md"), format!("# Pricing\n\n```python\n{}\n```\n", run.join("\n"))).unwrap();
    let out = tempfile::tempdir().unwrap();
    let t = tasks(&repo, out.path(), &[]);
    assert_eq!(t["tasks"].as_array().unwrap().len(), 0, "{t}");
    let reason = t["rejected"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("leakage: docs/recipe.md lines "), "{reason}");
    // The bundle made before the copy, validated again: invalid, and the text says why.
    let o = carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 1);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("leakage            FAILED") && text.contains("    docs/recipe.md lines "), "{text}");
}

#[needs("pytest", "git")]
fn p2p_files_protects_one_test_file_only() {
    let (_tmp, repo) = clone_with_remote("https://github.com/acme/inventory");
    let out = tempfile::tempdir().unwrap();
    let all = tasks(&repo, out.path(), &[]);
    let all_inst = read_json(&out.path().join(all["tasks"][0].as_str().unwrap()).join("instance.json"));
    let out = tempfile::tempdir().unwrap();
    let one = tasks(&repo, out.path(), &["--p2p-files", "1"]);
    let id = one["tasks"][0].as_str().unwrap_or_else(|| panic!("no task: {one}"));
    let inst = read_json(&out.path().join(id).join("instance.json"));
    let files = |inst: &Value| -> std::collections::BTreeSet<String> {
        inst["PASS_TO_PASS"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().split("::").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(files(&inst).len(), 1, "{:?}", files(&inst));
    assert!(files(&all_inst).len() > 1, "{:?}", files(&all_inst));
    let v = read_json(&out.path().join(id).join("validation.json"));
    let p2p: Vec<&Value> = inst["PASS_TO_PASS"].as_array().unwrap().iter().collect();
    for b in v["broken_tests"].as_array().map(|a| a.as_slice()).unwrap_or(&[]) {
        assert!(!p2p.contains(&b), "{b} is both broken and P2P");
    }
}

#[needs("python3")]
fn describe_writes_the_feature_description_and_a_failing_command_is_an_error() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let remove = "inventory/pricing.py::apply_discount";
    // The command sees the facts on stdin and writes Markdown.
    let cmd = "python3 -c \"import json,sys; d=json.load(sys.stdin); print('Discounts for', d['repo'], len(d['contract']['objects']))\"";
    carve_ok(&["extract", r, "--out", o, "--remove", remove, "--repo-name", "shop/stock", "--describe", cmd], 0);
    let statement = std::fs::read_to_string(out.path().join("extract/problem_statement.md")).unwrap();
    assert!(statement.contains("## Feature\n\nDiscounts for shop/stock 1\n"), "{statement}");
    let failed = carve()
        .args(["extract", r, "--out", o, "--remove", remove, "--describe", "echo no >&2; exit 3"])
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(2));
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(err.contains("the describe command `echo no >&2; exit 3` failed") && err.contains("no"), "{err}");
}
