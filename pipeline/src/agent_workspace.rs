//! The agent's workspace: the masked state as a fresh git repository with one commit and no
//! history, without the original's bytecode caches, build outputs or packaging metadata.
//! This is what a harness hands to an agent (not `base_commit` + `mask.patch`: the
//! original commit's `.git` holds the gold code). The commit is deterministic (fixed author,
//! committer and date), so its tree id, recorded in the bundle, identifies the workspace.
//!
//! Left out of the workspace, on top of what a shadow copy already leaves out (version
//! control, caches, environments): what the languages' tree facts call generated — generated
//! files and packaging folders at any depth, build outputs at the top unless the original
//! tracks files in them, caches inside dependency folders ([`SkipPolicy::generated`]).
//! Installed dependencies are linked in but not committed (`.git/info/exclude`).

use crate::error::bail;
use crate::{Context, Result};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use carve_core::tree::{self, SkipPolicy};
use carve_languages::skip_policy;

/// What was written: the commit, its tree and the files it holds (`validation.json`
/// `workspace`, typed in `carve_formats::validation`).
pub use carve_formats::validation::AgentWorkspace;

/// Top-level folders that hold files git tracks in `repo` (empty when it is no git work tree).
fn tracked_top_dirs(repo: &Path) -> BTreeSet<String> {
    let Ok(out) = Command::new("git").arg("-C").arg(repo).args(["ls-files", "-z"]).output() else {
        return BTreeSet::new();
    };
    if !out.status.success() {
        return BTreeSet::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|p| p.split_once('/').map(|(top, _)| top.to_string()))
        .collect()
}

fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(["-c", "core.autocrlf=false", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .env("GIT_AUTHOR_NAME", "carve")
        .env("GIT_AUTHOR_EMAIL", "carve@localhost")
        .env("GIT_COMMITTER_NAME", "carve")
        .env("GIT_COMMITTER_EMAIL", "carve@localhost")
        .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .context("failed to run git (is git installed?)")?;
    if !out.status.success() {
        bail!("`git {}` failed in {}: {}", args.join(" "), dir.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Write the workspace of the masked state `masked` (made from `original`, which is only
/// read) into `dest`, which must not exist or be empty.
pub fn write(masked: &Path, original: &Path, dest: &Path) -> Result<AgentWorkspace> {
    if dest.exists() && std::fs::read_dir(dest).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("the workspace folder {} exists and is not empty; choose a new --out", dest.display());
    }
    let tracked_top = tracked_top_dirs(original);
    let policy = skip_policy();
    let mut left: BTreeSet<String> = BTreeSet::new();
    let mut files = 0usize;
    for rel in tree::list_files(masked, policy)? {
        if policy.is_dependency(&rel) {
            if let Some(why) = policy.generated(&rel, &tracked_top) {
                left.insert(why);
            }
            continue;
        }
        if let Some(why) = policy.generated(&rel, &tracked_top) {
            left.insert(why);
            continue;
        }
        let (from, to) = (masked.join(&rel), dest.join(&rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
        }
        let meta = std::fs::symlink_metadata(&from)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)
                .with_context(|| format!("failed to link {}", to.display()))?;
        } else {
            std::fs::copy(&from, &to).with_context(|| format!("failed to copy {}", from.display()))?;
        }
        files += 1;
    }
    std::fs::create_dir_all(dest)?;
    git(dest, &["init", "--quiet"])?;
    // Dependencies a run needs, present but never part of the commit.
    let exclude: String = policy.dependency_dirs().map(|d| format!("{d}/\n")).collect();
    std::fs::write(dest.join(".git/info/exclude"), exclude)?;
    link_dependencies(masked, dest, policy, &tracked_top)?;
    // Installed dependencies never enter the index. Staging them and taking them out again
    // with `git rm --cached` failed now and then on the TypeScript fixture with two candidates
    // at once ("staged content different from both the file and the HEAD"; likely the other
    // candidate linking the same files between the two commands, which changes their ctime).
    let mut add: Vec<String> = ["add", "--all", "--force", "--", "."].map(String::from).to_vec();
    add.extend(policy.dependency_dirs().map(|d| format!(":(exclude,glob)**/{d}/**")));
    git(dest, &add.iter().map(String::as_str).collect::<Vec<_>>())?;
    git(dest, &["commit", "--quiet", "--allow-empty", "--no-verify", "-m", "Task workspace"])?;
    let commit = git(dest, &["rev-parse", "HEAD"])?;
    let tree = git(dest, &["rev-parse", "HEAD^{tree}"])?;
    Ok(AgentWorkspace::new(commit, tree, files, left.into_iter().collect()))
}

fn link_dependencies(masked: &Path, dest: &Path, policy: &SkipPolicy, tracked_top: &BTreeSet<String>) -> Result<()> {
    for rel in tree::list_files(masked, policy)?.iter().filter(|r| policy.is_dependency(r)) {
        if policy.generated(rel, tracked_top).is_some() {
            continue;
        }
        tree::link_file(&masked.join(rel), &dest.join(rel))?;
    }
    Ok(())
}

/// The workspace's committed files (what the leakage check reads), sorted.
pub fn committed_files(dest: &Path) -> Result<Vec<String>> {
    let out = git(dest, &["ls-files", "-z"])?;
    let mut v: Vec<String> = out.split('\0').filter(|s| !s.is_empty()).map(String::from).collect();
    v.sort();
    Ok(v)
}

/// How many commits the workspace's history holds (one, by construction; checked).
pub fn commit_count(dest: &Path) -> Result<usize> {
    Ok(git(dest, &["rev-list", "--count", "HEAD"])?.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The languages' tree facts as the workspace applies them (the rule itself is
    /// `SkipPolicy::generated`'s, tested in carve-core).
    #[test]
    fn caches_build_outputs_and_egg_info_stay_out() {
        let none = BTreeSet::new();
        let left_out = |rel: &str, tracked: &BTreeSet<String>| skip_policy().generated(rel, tracked);
        assert_eq!(left_out("pkg/mod.pyc", &none).as_deref(), Some("pkg/mod.pyc"));
        assert_eq!(left_out("src/pkg.egg-info/PKG-INFO", &none).as_deref(), Some("src/pkg.egg-info/"));
        assert_eq!(left_out("build/lib/pkg/a.py", &none).as_deref(), Some("build/"));
        assert_eq!(left_out("dist/pkg-1.0.tar.gz", &none).as_deref(), Some("dist/"));
        assert_eq!(left_out("target/debug/x", &none).as_deref(), Some("target/"));
        assert_eq!(left_out("node_modules/.cache/babel/x.json", &none).as_deref(), Some("node_modules/.cache/"));
        // Source folders that happen to share a name, and tracked top-level ones, go in.
        assert_eq!(left_out("pkg/build/__init__.py", &none), None);
        let tracked: BTreeSet<String> = ["build".to_string()].into();
        assert_eq!(left_out("build/recipe.py", &tracked), None);
        assert_eq!(left_out("pkg/mod.py", &none), None);
    }

    #[test]
    fn one_deterministic_commit_without_the_originals_history() {
        let d = tempfile::tempdir().unwrap();
        let masked = d.path().join("masked");
        std::fs::create_dir_all(masked.join("pkg/__pycache__")).unwrap();
        std::fs::create_dir_all(masked.join("pkg.egg-info")).unwrap();
        std::fs::create_dir_all(masked.join("node_modules/dep")).unwrap();
        std::fs::write(masked.join("pkg/a.py"), "x = 1\n").unwrap();
        std::fs::write(masked.join("pkg/__pycache__/a.cpython-311.pyc"), "bytecode").unwrap();
        std::fs::write(masked.join("pkg/b.pyc"), "bytecode").unwrap();
        std::fs::write(masked.join("pkg.egg-info/PKG-INFO"), "Name: pkg").unwrap();
        std::fs::write(masked.join("node_modules/dep/index.js"), "module.exports = 1").unwrap();
        let (a, b) = (d.path().join("w1"), d.path().join("w2"));
        let w1 = write(&masked, &masked, &a).unwrap();
        let w2 = write(&masked, &masked, &b).unwrap();
        assert_eq!(w1, w2, "the same masked state gives the same commit");
        assert_eq!(w1.files, 1);
        assert_eq!(committed_files(&a).unwrap(), vec!["pkg/a.py".to_string()]);
        assert_eq!(commit_count(&a).unwrap(), 1);
        assert!(a.join("node_modules/dep/index.js").is_file(), "dependencies are there for the runs");
        assert!(!a.join("pkg/b.pyc").exists() && !a.join("pkg.egg-info").exists());
        assert_eq!(w1.left_out, vec!["pkg.egg-info/".to_string(), "pkg/b.pyc".to_string()]);
        let err = write(&masked, &masked, &a).unwrap_err().to_string();
        assert!(err.contains("not empty"), "{err}");
    }
}
