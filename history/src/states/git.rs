//! The git plumbing of the scratch clone that holds the states: running git with a fixed
//! identity and date (so state commits are reproducible), a commit's historical patch and
//! files against its first parent, following files a later commit moved, and committing a
//! state with the final checkpoint's file modes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

pub(crate) fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "carve")
        .env("GIT_AUTHOR_EMAIL", "carve@carve.invalid")
        .env("GIT_COMMITTER_NAME", "carve")
        .env("GIT_COMMITTER_EMAIL", "carve@carve.invalid")
        .env("GIT_AUTHOR_DATE", "1704067200 +0000")
        .env("GIT_COMMITTER_DATE", "1704067200 +0000")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("could not run `git {}`: {e}; install git", args.join(" ")))?;
    if let Some(input) = stdin {
        use std::io::Write;
        let mut sin = child.stdin.take().ok_or("no stdin")?;
        sin.write_all(input).map_err(|e| format!("writing to `git {}`: {e}", args.join(" ")))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("`git {}`: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!("`git {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

pub(crate) fn git_text(dir: &Path, args: &[&str]) -> Result<String, String> {
    git(dir, args, None).map(|o| String::from_utf8_lossy(&o).trim().to_string())
}

/// git's empty tree: the "parent" of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The first parent of `commit`, or the empty tree for a root commit (a chain may start at
/// the repository's first commit).
pub(super) fn parent(dir: &Path, commit: &str) -> String {
    let first = format!("{commit}^1");
    match git(dir, &["rev-parse", "--verify", "--quiet", &first], None) {
        Ok(_) => first,
        Err(_) => EMPTY_TREE.to_string(),
    }
}

/// The historical patch of `commit` against its first parent, restricted to `paths` (all
/// when empty) and without `exclude`.
pub(super) fn commit_patch(dir: &Path, commit: &str, paths: &[String], exclude: &[String]) -> Result<Vec<u8>, String> {
    let range = parent(dir, commit);
    let mut args = vec!["diff", "--binary", "--no-renames", "--full-index", range.as_str(), commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    let specs: Vec<String> = exclude.iter().map(|p| format!(":(exclude,literal){p}")).collect();
    if paths.is_empty() && !specs.is_empty() {
        args.push(".");
    }
    args.extend(specs.iter().map(String::as_str));
    git(dir, &args, None)
}

/// The files `commit` changed against its first parent, sorted.
pub(super) fn commit_files(dir: &Path, commit: &str) -> Result<Vec<String>, String> {
    let range = parent(dir, commit);
    let out = git_text(dir, &["diff", "--name-only", "--no-renames", "-z", range.as_str(), commit])?;
    let mut files: Vec<String> = out.split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect();
    files.sort();
    Ok(files)
}

/// The files `commit` changed that a later commit moved: path in `commit` → path at
/// `final_commit` (git's rename detection between the two trees: psf/requests moved
/// `requests/` to `src/requests/` between a chain's stages and its final checkpoint). Paths
/// the final checkpoint still has are never moved.
pub(super) fn moved_since(dir: &Path, commit: &str, final_commit: &str) -> Result<BTreeMap<String, String>, String> {
    let out = git(dir, &["diff", "--name-status", "-z", "-M", "--diff-filter=R", commit, final_commit], None)?;
    let out = String::from_utf8_lossy(&out);
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    let mut moved = BTreeMap::new();
    while let (Some(status), Some(old), Some(new)) = (fields.next(), fields.next(), fields.next()) {
        if status.starts_with('R') {
            moved.insert(old.to_string(), new.to_string());
        }
    }
    Ok(moved)
}

/// `commit`'s historical patch of `old`, written as a patch of `new` (where a later commit
/// moved the file), so that it applies to the final checkpoint's tree. git names a path in a
/// patch's header lines only (`diff --git`, `---`, `+++`); a path git quotes is refused.
pub(super) fn moved_patch(dir: &Path, commit: &str, old: &str, new: &str) -> Result<Vec<u8>, String> {
    let patch = commit_patch(dir, commit, &[format!(":(literal){old}")], &[])?;
    let text = String::from_utf8(patch).map_err(|_| format!("the patch of {old} in {commit} is binary"))?;
    let mut out = String::with_capacity(text.len());
    let mut header = true;
    for line in text.split_inclusive('\n') {
        if line.starts_with("@@") || line.starts_with("GIT binary patch") {
            header = false;
        }
        if header {
            let renamed = if line == format!("diff --git a/{old} b/{old}\n") {
                Some(format!("diff --git a/{new} b/{new}\n"))
            } else if line == format!("--- a/{old}\n") {
                Some(format!("--- a/{new}\n"))
            } else if line == format!("+++ b/{old}\n") {
                Some(format!("+++ b/{new}\n"))
            } else if line.starts_with("diff --git ") || line.starts_with("--- ") || line.starts_with("+++ ") {
                (line.starts_with("--- /dev/null") || line.starts_with("+++ /dev/null")).then(|| line.to_string())
            } else {
                Some(line.to_string())
            };
            let Some(renamed) = renamed else {
                return Err(format!("the patch of {old} in {commit} names it in a form carve cannot rewrite: {line}"));
            };
            out.push_str(&renamed);
        } else {
            out.push_str(line);
        }
    }
    Ok(out.into_bytes())
}

/// The files of a state commit.
pub(super) fn tree_files(dir: &Path, commit: &str) -> Result<BTreeSet<String>, String> {
    let out = git(dir, &["ls-tree", "-r", "-z", "--name-only", commit], None)?;
    Ok(String::from_utf8_lossy(&out).split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect())
}

/// `commit` with `path` set to `bytes`, as a new state commit.
pub(super) fn with_file(
    dir: &Path,
    commit: &str,
    path: &str,
    bytes: &[u8],
    label: &str,
    modes: &BTreeMap<String, String>,
) -> Result<String, String> {
    git(dir, &["checkout", "-q", "--detach", commit], None)?;
    let p = dir.join(path);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
    }
    std::fs::write(&p, bytes).map_err(|e| format!("write {}: {e}", p.display()))?;
    commit_state(dir, label, modes)
}

/// `path -> 100644 | 100755` of the regular files of `commit`.
pub(super) fn regular_modes(dir: &Path, commit: &str) -> Result<BTreeMap<String, String>, String> {
    let out = git(dir, &["ls-tree", "-r", "-z", commit], None)?;
    Ok(String::from_utf8_lossy(&out)
        .split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            let mode = meta.split(' ').next()?;
            matches!(mode, "100644" | "100755").then(|| (path.to_string(), mode.to_string()))
        })
        .collect())
}

pub(super) fn commit_state(dir: &Path, label: &str, modes: &BTreeMap<String, String>) -> Result<String, String> {
    git(dir, &["add", "-A"], None)?;
    let staged = git(dir, &["ls-files", "-s", "-z"], None)?;
    for entry in String::from_utf8_lossy(&staged).split('\0') {
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let mode = meta.split(' ').next().unwrap_or_default();
        match modes.get(path) {
            Some(want) if matches!(mode, "100644" | "100755") && mode != want => {
                let flag = if want == "100755" { "--chmod=+x" } else { "--chmod=-x" };
                git(dir, &["update-index", flag, "--", path], None)?;
                // The work tree too, or the next `git apply --3way` finds it does not match the index.
                use std::os::unix::fs::PermissionsExt;
                let perms = std::fs::Permissions::from_mode(if want == "100755" { 0o755 } else { 0o644 });
                std::fs::set_permissions(dir.join(path), perms).map_err(|e| format!("chmod {path}: {e}"))?;
            }
            _ => {}
        }
    }
    git(dir, &["commit", "-q", "--allow-empty", "--no-verify", "-m", label], None)?;
    git_text(dir, &["rev-parse", "HEAD"])
}
