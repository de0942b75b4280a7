//! Where a manifest entry's repository comes from, and its checkout at the pinned commit.
//!
//! `url` is a local path (relative to the manifest's folder; a work tree or a bare
//! repository) or a git URL. A URL is looked up first in the mirrors (`--mirror DIR`, then
//! `CARVE_GIT_MIRRORS`, `:`-separated): `DIR/<owner>+<name>` as a repository, or holding one
//! in `repo/` (the layout of `/work/.mirror`), or `DIR/<owner>+<name>.git`; only then is it
//! cloned from the network. The checkout is a clone of its own under the output folder, so
//! the source is never touched; cloning the same commit again reuses a finished checkout.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::bail;
use crate::{Error, Result};

/// The mirrors to look URLs up in: the given folders, then `CARVE_GIT_MIRRORS`.
pub fn mirrors(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = given.to_vec();
    if let Ok(v) = std::env::var("CARVE_GIT_MIRRORS") {
        out.extend(v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    out
}

/// What to clone from: a local folder, or a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Local(PathBuf),
    Remote(String),
}

impl Origin {
    fn as_arg(&self) -> &std::ffi::OsStr {
        match self {
            Origin::Local(p) => p.as_os_str(),
            Origin::Remote(u) => std::ffi::OsStr::new(u),
        }
    }
}

/// Whether `url` names a place on this machine rather than a host.
fn is_local(url: &str) -> bool {
    url.starts_with('/')
        || url.starts_with("./")
        || url.starts_with("../")
        || url.starts_with("file://")
        || url == "."
        || carve_pipeline::identity::owner_name_from_url(url).is_none()
}

/// A git repository (work tree or bare) at `dir`.
fn is_repository(dir: &Path) -> bool {
    dir.join(".git").exists() || (dir.join("HEAD").is_file() && dir.join("objects").is_dir())
}

/// Resolve `url` of the entry named `name` (manifest-relative paths against `base`).
pub fn resolve(url: &str, name: &str, base: &Path, mirrors: &[PathBuf]) -> Result<Origin> {
    if is_local(url) {
        let p = url.strip_prefix("file://").unwrap_or(url);
        let p = if Path::new(p).is_absolute() { PathBuf::from(p) } else { base.join(p) };
        if !p.is_dir() {
            bail!("`url` {url} is no folder on this machine (looked at {})", p.display());
        }
        if !is_repository(&p) {
            bail!("`url` {url} ({}) is a folder but not a git repository", p.display());
        }
        return Ok(Origin::Local(p));
    }
    let (owner, repo) = carve_pipeline::identity::owner_name_from_url(url).unwrap_or_default();
    for key in [format!("{owner}+{repo}"), crate::layout::repo_dir_name(name)] {
        for m in mirrors {
            for dir in [m.join(&key).join("repo"), m.join(&key), m.join(format!("{key}.git"))] {
                if dir.is_dir() && is_repository(&dir) {
                    return Ok(Origin::Local(dir));
                }
            }
        }
    }
    Ok(Origin::Remote(url.to_string()))
}

fn git(dir: Option<&Path>, args: &[&std::ffi::OsStr]) -> std::io::Result<std::process::Output> {
    let mut c = Command::new("git");
    if let Some(d) = dir {
        c.arg("-C").arg(d);
    }
    // Never ask for credentials: an unreachable or private repository is an error at once.
    c.env("GIT_TERMINAL_PROMPT", "0").env("GIT_ASKPASS", "true").args(args).stdin(std::process::Stdio::null());
    c.output()
}

fn stderr_tail(o: &std::process::Output) -> String {
    let s = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// The commit checked out at `dir`, if it is a work tree.
fn head(dir: &Path) -> Option<String> {
    let o = git(Some(dir), &["rev-parse".as_ref(), "HEAD".as_ref()]).ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A clean checkout of `commit` of `origin` at `dest`: reused when `dest` already is one
/// (a resumed run), else made afresh (clone into `dest`'s temporary sibling, check out the
/// commit, rename). `url` names the repository in errors and becomes the checkout's `origin`.
pub fn checkout(origin: &Origin, url: &str, commit: &str, dest: &Path) -> Result<()> {
    if dest.is_dir() && head(dest).as_deref() == Some(commit) {
        return Ok(());
    }
    let parent = dest.parent().ok_or_else(|| Error::msg(format!("{} has no parent folder", dest.display())))?;
    std::fs::create_dir_all(parent)?;
    let staged = parent.join(format!(".checkout.partial-{}", std::process::id()));
    if staged.exists() {
        std::fs::remove_dir_all(&staged)?;
    }
    let o = git(
        None,
        &["clone".as_ref(), "--quiet".as_ref(), "--no-checkout".as_ref(), origin.as_arg(), staged.as_os_str()],
    )?;
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&staged);
        let from = match origin {
            Origin::Local(p) => format!("{url} (from {})", p.display()),
            Origin::Remote(_) => format!(
                "{url} (no mirror holds it: pass --mirror DIR with DIR/<owner>+<name>, or a local path as `url`)"
            ),
        };
        bail!("could not clone {from}: {}", stderr_tail(&o));
    }
    let spec = format!("{commit}^{{commit}}");
    let o = git(Some(&staged), &["cat-file".as_ref(), "-e".as_ref(), spec.as_ref()])?;
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&staged);
        bail!(
            "commit {commit} does not exist in {url}: check the manifest's `commit` (a full id of a commit of that repository)"
        );
    }
    let o = git(Some(&staged), &["checkout".as_ref(), "--quiet".as_ref(), "--detach".as_ref(), commit.as_ref()])?;
    if !o.status.success() {
        let _ = std::fs::remove_dir_all(&staged);
        bail!("could not check out {commit} of {url}: {}", stderr_tail(&o));
    }
    // The checkout's `origin` is the manifest's URL (a clone of a mirror would name the mirror).
    let _ = git(Some(&staged), &["remote".as_ref(), "set-url".as_ref(), "origin".as_ref(), url.as_ref()]);
    if dest.exists() {
        std::fs::remove_dir_all(dest)?;
    }
    std::fs::rename(&staged, dest)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_commit(dir: &Path) -> String {
        std::fs::create_dir_all(dir).unwrap();
        let run = |args: &[&str]| {
            let o = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
            assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        run(&["init", "-q"]);
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        run(&["add", "."]);
        run(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"]);
        run(&["rev-parse", "HEAD"])
    }

    #[test]
    fn urls_resolve_through_mirrors_and_local_paths_against_the_manifest() {
        let d = tempfile::tempdir().unwrap();
        let mirror = d.path().join("mirror");
        repo_with_commit(&mirror.join("psf+requests").join("repo"));
        let found = resolve("https://github.com/psf/requests", "psf/requests", d.path(), std::slice::from_ref(&mirror))
            .unwrap();
        assert_eq!(found, Origin::Local(mirror.join("psf+requests/repo")));
        let missing = resolve("https://github.com/a/b", "a/b", d.path(), &[mirror]).unwrap();
        assert_eq!(missing, Origin::Remote("https://github.com/a/b".into()));
        repo_with_commit(&d.path().join("local"));
        assert_eq!(resolve("./local", "x/y", d.path(), &[]).unwrap(), Origin::Local(d.path().join("./local")));
        let e = resolve("./nowhere", "x/y", d.path(), &[]).unwrap_err().to_string();
        assert!(e.contains("no folder on this machine"), "{e}");
    }

    #[test]
    fn checkout_at_a_commit_and_a_commit_that_does_not_exist() {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("src");
        let commit = repo_with_commit(&src);
        let dest = d.path().join("out/checkout");
        checkout(&Origin::Local(src.clone()), "https://example.com/o/n", &commit, &dest).unwrap();
        assert_eq!(head(&dest).as_deref(), Some(commit.as_str()));
        assert_eq!(std::fs::read_to_string(dest.join("a.txt")).unwrap(), "a\n");
        // Again: reused, not cloned afresh.
        std::fs::write(dest.join("marker"), "").unwrap();
        checkout(&Origin::Local(src.clone()), "https://example.com/o/n", &commit, &dest).unwrap();
        assert!(dest.join("marker").exists());
        let bad = "0123456789012345678901234567890123456789";
        let e =
            checkout(&Origin::Local(src), "https://example.com/o/n", bad, &d.path().join("x")).unwrap_err().to_string();
        assert!(e.contains(&format!("commit {bad} does not exist in https://example.com/o/n")), "{e}");
        let e =
            checkout(&Origin::Remote(d.path().join("nothing").display().to_string()), "u", bad, &d.path().join("y"))
                .unwrap_err()
                .to_string();
        assert!(e.contains("could not clone u"), "{e}");
    }
}
