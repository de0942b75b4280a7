//! Shared helpers of the end-to-end tests: run the carve binary, copy fixtures, hash trees.
#![allow(dead_code)]

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn carve() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_carve"));
    c.env("CARVE_NO_PROGRESS", "1");
    c
}

/// Run carve with `args`; returns the output, panicking with stderr when the exit code
/// is not `code`.
pub fn carve_ok(args: &[&str], code: i32) -> Output {
    let out = carve().args(args).output().expect("failed to start carve");
    assert_eq!(
        out.status.code(),
        Some(code),
        "carve {:?} exited {:?}\nstdout:\n{}\nstderr:\n{}",
        args,
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Copy a fixture into a fresh temporary folder (so tests never touch the checkout).
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join(name.rsplit('/').next().unwrap());
    copy_dir(&root().join("fixtures").join(name), &dest);
    (dir, dest)
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        // Installed dependencies are not part of a fixture; tests that need them link them.
        if name == "__pycache__" || name == ".pytest_cache" || name == "node_modules" {
            continue;
        }
        let p = entry.path();
        if entry.file_type().unwrap().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).unwrap(), to.join(&name)).unwrap();
        } else if p.is_dir() {
            copy_dir(&p, &to.join(&name));
        } else {
            std::fs::copy(&p, to.join(&name)).unwrap();
        }
    }
}

/// Every file under `root` with its bytes' hash, and every directory, sorted: two equal
/// snapshots mean a byte-identical tree (nothing added, removed or changed).
pub fn snapshot(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.push((rel + "/", String::new()));
                stack.push(p);
            } else {
                out.push((rel, hex::encode(Sha256::digest(std::fs::read(&p).unwrap()))));
            }
        }
    }
    out.sort();
    out
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
