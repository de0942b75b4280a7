//! Where carve works: the output folder, shadow copies of the repository (carve never runs
//! anything inside the user's working tree), content hashes, atomic writes, and the
//! repository's identity (owner, name, commit) for instance ids.

use crate::error::bail;
use crate::{Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The output folder: `--out`, else `<cache>/carve/<name>-<hash8 of the absolute path>`.
pub fn out_dir(repo: &Path, out: Option<&Path>) -> Result<PathBuf> {
    let dir = match out {
        Some(o) => o.to_path_buf(),
        None => {
            let cache = dirs::cache_dir().context("no cache directory for this user: pass --out DIR")?;
            let name = repo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "repo".into());
            let hash = hex::encode(Sha256::digest(repo.to_string_lossy().as_bytes()));
            cache.join("carve").join(format!("{name}-{}", &hash[..8]))
        }
    };
    let repo_abs = repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf());
    // Check before creating anything: the folder must not be created inside the repository.
    let abs = std::path::absolute(&dir).with_context(|| format!("failed to resolve {}", dir.display()))?;
    let mut probe = abs.clone();
    while !probe.exists() {
        if !probe.pop() {
            break;
        }
    }
    let existing = probe.canonicalize().unwrap_or(probe.clone());
    let rest = abs.strip_prefix(&probe).unwrap_or(Path::new(""));
    if existing.join(rest).starts_with(&repo_abs) {
        bail!(
            "the output folder {} is inside the repository {}; carve never writes into the repository: choose --out elsewhere",
            abs.display(),
            repo_abs.display()
        );
    }
    std::fs::create_dir_all(&abs).with_context(|| format!("failed to create the output folder {}", abs.display()))?;
    let dir = abs.canonicalize().with_context(|| format!("failed to resolve {}", abs.display()))?;
    Ok(dir)
}

/// Resolve and check the repository argument.
pub fn repo_dir(repo: &Path) -> Result<PathBuf> {
    let abs = repo.canonicalize().with_context(|| format!("repository {} does not exist", repo.display()))?;
    if !abs.is_dir() {
        bail!("repository {} is not a directory", abs.display());
    }
    Ok(abs)
}

// The copy and digest rules live in `carve_languages::tree`, shared with `carve-eval`.
pub use carve_languages::tree::is_dependency_file;

/// Every file of the tree that a shadow copy holds, repository-relative, sorted.
pub fn list_files(root: &Path) -> Result<Vec<String>> {
    Ok(carve_languages::tree::list_files(root)?)
}

/// Copy the tree into `dest` (replacing it). Returns the copied files.
pub fn shadow_copy(root: &Path, dest: &Path) -> Result<Vec<String>> {
    Ok(carve_languages::tree::shadow_copy(root, dest)?)
}

/// Hard-link (or copy) the installed-dependency folders of `root` into `dest`, which holds
/// a copy of the rest of the tree (the extractor's masked tree leaves them out).
pub fn link_dependencies(root: &Path, dest: &Path) -> Result<()> {
    for rel in list_files(root)?.iter().filter(|r| is_dependency_file(r)) {
        let (from, to) = (root.join(rel), dest.join(rel));
        if !to.exists() {
            link_file(&from, &to)?;
        }
    }
    Ok(())
}

/// Put the file `from` at `to` (parents created) without copying where it can: a link as
/// the same link, else a hard link, else a copy.
pub fn link_file(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
    } else if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).with_context(|| format!("failed to copy {}", from.display()))?;
    }
    Ok(())
}

/// SHA-256 over the tree's relative paths and contents: the key of cached results.
pub fn tree_digest(root: &Path) -> Result<String> {
    Ok(carve_languages::tree::tree_digest(root)?)
}

/// Write a file atomically: a temporary sibling, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(carve_languages::tree::write_atomic(path, bytes)?)
}

/// Replace directory `dest` by the complete directory `staged` (same parent) so that a
/// killed run never leaves a half-written `dest`: the old one is moved aside first.
pub fn replace_dir(staged: &Path, dest: &Path) -> Result<()> {
    if dest.exists() {
        let trash = dest.with_extension(format!("old-{}", std::process::id()));
        std::fs::rename(dest, &trash).with_context(|| format!("failed to move {} aside", dest.display()))?;
        std::fs::rename(staged, dest).with_context(|| format!("failed to move {} into place", dest.display()))?;
        let _ = std::fs::remove_dir_all(&trash);
    } else {
        std::fs::rename(staged, dest).with_context(|| format!("failed to move {} into place", dest.display()))?;
    }
    Ok(())
}

/// Run `git apply` of the patch file `file` inside `dir` (with `-R` when `reverse`), never
/// discovering an enclosing repository: what the graders and carve's validation apply
/// patches with.
pub fn git_apply(dir: &Path, file: &Path, reverse: bool) -> std::io::Result<std::process::Output> {
    let ceiling = dir.parent().unwrap_or(dir);
    Command::new("git")
        .arg("apply")
        .arg("--whitespace=nowarn")
        .args(reverse.then_some("-R"))
        .arg(file)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
}

/// Who and what the repository is, for instance ids and `instance.json`.
#[derive(Debug, Clone)]
pub struct RepoIdentity {
    pub owner: String,
    pub name: String,
    /// The commit when the repository is the top of a git work tree, else `tree-<digest>`.
    pub commit: String,
    pub created_at: Option<String>,
}

impl RepoIdentity {
    /// Detect the identity of `repo` (see [`crate::identity`]); `name` (`--repo-name`,
    /// already checked) overrides the owner and name.
    pub fn detect(repo: &Path, tree_digest: &str, name: Option<&(String, String)>) -> RepoIdentity {
        let dir_name = repo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "repo".into());
        let git = |args: &[&str]| -> Option<String> {
            let out = Command::new("git").arg("-C").arg(repo).args(args).output().ok()?;
            out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        // Only a repository that is itself the top of a work tree has a commit of its own;
        // a folder inside another project's checkout (a fixture) is identified by content.
        let top = git(&["rev-parse", "--show-toplevel"]).map(PathBuf::from);
        let is_top = top.as_deref().and_then(|t| t.canonicalize().ok()).as_deref() == Some(repo);
        let (commit, created_at) =
            if is_top { (git(&["rev-parse", "HEAD"]), git(&["log", "-1", "--format=%cI"])) } else { (None, None) };
        // `origin`, else the first remote by name.
        let remote_url = || {
            let remotes = git(&["remote"])?;
            let mut names: Vec<&str> = remotes.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            names.sort();
            let pick = if names.contains(&"origin") { "origin" } else { names.first()? };
            git(&["remote", "get-url", pick])
        };
        let (owner, name) = match name {
            Some(n) => n.clone(),
            None => is_top
                .then(remote_url)
                .flatten()
                .and_then(|u| crate::identity::owner_name_from_url(&u))
                .unwrap_or_else(|| ("local".to_string(), dir_name)),
        };
        RepoIdentity {
            owner,
            name,
            commit: commit.unwrap_or_else(|| format!("tree-{}", &tree_digest[..16])),
            created_at,
        }
    }

    /// `owner/name`, as `instance.json`'s `repo` and the statements write it.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    pub fn commit8(&self) -> &str {
        let c = self.commit.strip_prefix("tree-").unwrap_or(&self.commit);
        &c[..8.min(c.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_copy_skips_caches_and_virtualenvs() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("r");
        std::fs::create_dir_all(root.join("pkg/__pycache__")).unwrap();
        std::fs::create_dir_all(root.join(".venv")).unwrap();
        std::fs::write(root.join(".venv/pyvenv.cfg"), "").unwrap();
        std::fs::write(root.join("pkg/a.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("pkg/__pycache__/a.pyc"), "x").unwrap();
        let files = shadow_copy(&root, &d.path().join("s")).unwrap();
        assert_eq!(files, vec!["pkg/a.py".to_string()]);
        assert_eq!(tree_digest(&root).unwrap(), tree_digest(&d.path().join("s")).unwrap());
    }

    #[test]
    fn output_folder_inside_the_repository_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let err = out_dir(d.path(), Some(&d.path().join("out"))).unwrap_err().to_string();
        assert!(err.contains("never writes into the repository"), "{err}");
        assert!(!d.path().join("out").exists(), "nothing may be created inside the repository");
    }
}
