//! Where carve works: the output folder (never inside the repository), the repository
//! folder, and the repository's identity (owner, name, commit) for instance ids. Shadow
//! copies, digests and atomic writes are `carve_core`'s (`tree`, `fs`).

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
    fn output_folder_inside_the_repository_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let err = out_dir(d.path(), Some(&d.path().join("out"))).unwrap_err().to_string();
        assert!(err.contains("never writes into the repository"), "{err}");
        assert!(!d.path().join("out").exists(), "nothing may be created inside the repository");
    }
}
