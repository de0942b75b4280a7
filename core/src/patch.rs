//! Patches between trees and onto trees: git-style diffs of chosen files
//! ([`unified_diff`]: `diff --git a/x b/x`, `new file mode`/`deleted file mode` with
//! `/dev/null`, three lines of context, `\ No newline at end of file` where needed; files in
//! sorted order, so the same trees give the same bytes; accepted by `git apply` and
//! `patch -p1`), applying one with `git apply` without discovering an enclosing repository
//! ([`apply_patch`], [`git_apply`]), and the paths a patch touches ([`patch_paths`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::fs::IoError;

/// What can go wrong making or applying a patch.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error(transparent)]
    Io(#[from] IoError),
    /// A file to diff is not text.
    #[error("{path} is not valid UTF-8; carve only edits and diffs text files")]
    NotText { path: String },
    /// `git` could not be started.
    #[error("could not run `git apply` (is git installed?): {io}")]
    GitNotRun { io: std::io::Error },
    /// `git apply` refused the patch: its message.
    #[error("`git apply` of {} in {} failed: {message}", .patch.display(), .dir.display())]
    DoesNotApply { dir: PathBuf, patch: PathBuf, message: String },
}

impl PatchError {
    /// What git said when it refused the patch, else the whole message: the short form
    /// for messages that already name the patch and the tree.
    pub fn git_message(&self) -> String {
        match self {
            PatchError::DoesNotApply { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

/// Write `patch` to the file `file` (its folder created), `git apply` it inside `dir`
/// (`reverse`: `-R`), and remove the file. An empty patch changes nothing.
pub fn apply_patch(dir: &Path, patch: &str, reverse: bool, file: &Path) -> Result<(), PatchError> {
    if patch.trim().is_empty() {
        return Ok(());
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
    }
    std::fs::write(file, patch).map_err(IoError::on("write", file))?;
    let applied = git_apply(dir, file, reverse);
    let _ = std::fs::remove_file(file);
    applied
}

/// `git apply` of the patch file `file` inside `dir` (with `-R` when `reverse`), never
/// discovering an enclosing repository: what the graders and carve's validation apply
/// patches with.
pub fn git_apply(dir: &Path, file: &Path, reverse: bool) -> Result<(), PatchError> {
    let ceiling = dir.parent().unwrap_or(dir);
    let out = Command::new("git")
        .arg("apply")
        .arg("--whitespace=nowarn")
        .args(reverse.then_some("-R"))
        .arg(file)
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .output()
        .map_err(|io| PatchError::GitNotRun { io })?;
    if out.status.success() {
        return Ok(());
    }
    Err(PatchError::DoesNotApply {
        dir: dir.to_path_buf(),
        patch: file.to_path_buf(),
        message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

fn read_text(root: &Path, rel: &str) -> Result<Option<(String, bool)>, PatchError> {
    let path = root.join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(IoError::new("inspect", &path, e).into()),
    };
    let bytes = std::fs::read(&path).map_err(IoError::on("read", &path))?;
    let text = String::from_utf8(bytes).map_err(|_| PatchError::NotText { path: rel.to_string() })?;
    Ok(Some((text, is_executable(&meta))))
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

fn mode(exec: bool) -> &'static str {
    if exec { "100755" } else { "100644" }
}

/// A git-style patch taking `files` (repository-relative, `/`-separated) from their state
/// under `old_root` to their state under `new_root`. A file missing on one side is added or
/// deleted; identical files are left out.
pub fn unified_diff(old_root: &Path, new_root: &Path, files: &BTreeSet<String>) -> Result<String, PatchError> {
    let mut out = String::new();
    for rel in files {
        let old = read_text(old_root, rel)?;
        let new = read_text(new_root, rel)?;
        let (old_text, new_text) = match (&old, &new) {
            (None, None) => continue,
            (Some((a, _)), Some((b, _))) if a == b => continue,
            _ => (old.as_ref().map_or("", |o| o.0.as_str()), new.as_ref().map_or("", |n| n.0.as_str())),
        };
        let _ = writeln!(out, "diff --git a/{rel} b/{rel}");
        match (&old, &new) {
            (None, Some((_, x))) => {
                let _ = writeln!(out, "new file mode {}", mode(*x));
            }
            (Some((_, x)), None) => {
                let _ = writeln!(out, "deleted file mode {}", mode(*x));
            }
            (Some((_, a)), Some((_, b))) if a != b => {
                let _ = writeln!(out, "old mode {}\nnew mode {}", mode(*a), mode(*b));
            }
            _ => {}
        }
        if old_text == new_text {
            continue; // an empty file added or deleted: the header says it all
        }
        let a = if old.is_some() { format!("a/{rel}") } else { "/dev/null".to_string() };
        let b = if new.is_some() { format!("b/{rel}") } else { "/dev/null".to_string() };
        let _ = writeln!(out, "--- {a}\n+++ {b}");
        write_hunks(&mut out, old_text, new_text, 3);
    }
    Ok(out)
}

/// The git-style patch of one file `rel` that exists on both sides, from the text `old` to
/// the text `new`, with `context` lines of context around each change (at least 1: `git
/// apply` wants context). Empty when the texts are equal. For a file whose edits are split
/// between two patches that must apply in either order: less context keeps their hunks
/// apart.
pub fn file_diff(rel: &str, old: &str, new: &str, context: usize) -> String {
    let mut out = String::new();
    if old == new {
        return out;
    }
    let _ = writeln!(out, "diff --git a/{rel} b/{rel}\n--- a/{rel}\n+++ b/{rel}");
    write_hunks(&mut out, old, new, context.max(1));
    out
}

fn write_hunks(out: &mut String, old: &str, new: &str, context: usize) {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut udiff = diff.unified_diff();
    udiff.context_radius(context);
    for hunk in udiff.iter_hunks() {
        let _ = writeln!(out, "{}", hunk.header());
        for change in hunk.iter_changes() {
            let value = change.value();
            out.push_str(&change.tag().to_string());
            out.push_str(value);
            if !value.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

/// The repository-relative paths a git-style or plain unified diff touches (both sides of
/// renames and copies), sorted.
pub fn patch_paths(patch: &str) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let strip = |p: &str, prefix: &str| -> Option<String> {
        let p = unquote(p.split('\t').next().unwrap_or(p).trim_end());
        if p == "/dev/null" {
            return None;
        }
        Some(p.strip_prefix(prefix).unwrap_or(&p).to_string())
    };
    // Lines left in the current hunk (old side, new side): hunk lines are never headers,
    // even a removed `-- comment` line that reads `--- comment`.
    let (mut old, mut new) = (0usize, 0usize);
    for line in patch.lines() {
        if old > 0 || new > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old = old.saturating_sub(1),
                Some(b'+') => new = new.saturating_sub(1),
                Some(b'\\') => {}
                _ => {
                    old = old.saturating_sub(1);
                    new = new.saturating_sub(1);
                }
            }
            continue;
        }
        if let Some(h) = line.strip_prefix("@@ ") {
            let count = |side: &str| -> usize {
                let range = side.split(' ').next().unwrap_or("");
                match range.split_once(',') {
                    Some((_, n)) => n.parse().unwrap_or(0),
                    None => usize::from(!range.is_empty()),
                }
            };
            old = h.strip_prefix('-').map(count).unwrap_or(0);
            new = h.split_once(" +").map(|(_, r)| count(r)).unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("diff --git ") {
            // `a/x b/x`: split in the middle when both halves are equal, else at " b/".
            if let Some(i) = rest.find(" b/") {
                out.extend(strip(&rest[..i], "a/"));
                out.extend(strip(&rest[i + 1..], "b/"));
            }
        } else if let Some(p) = line.strip_prefix("--- ") {
            out.extend(strip(p, "a/"));
        } else if let Some(p) = line.strip_prefix("+++ ") {
            out.extend(strip(p, "b/"));
        } else if let Some(p) =
            ["rename from ", "rename to ", "copy from ", "copy to "].iter().find_map(|k| line.strip_prefix(k))
        {
            out.extend(strip(p, ""));
        }
    }
    out.into_iter().collect()
}

/// Git's C-style quoting of unusual paths (`"a/x\ty"`).
fn unquote(p: &str) -> String {
    let Some(inner) = p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) else {
        return p.to_string();
    };
    let mut out = Vec::new();
    let mut bytes = inner.bytes().peekable();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(n @ b'0'..=b'7') = bytes.peek().copied() {
                        v = v * 8 + u32::from(n - b'0');
                        bytes.next();
                    }
                }
                out.push(v as u8);
            }
            Some(o) => out.push(o),
            None => {}
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::SkipPolicy;

    #[test]
    fn paths_of_git_and_plain_diffs() {
        let p = "diff --git a/pkg/x.py b/pkg/x.py\n--- a/pkg/x.py\n+++ b/pkg/x.py\n@@ -1 +1 @@\n-a\n+b\n\
                 diff --git a/tests/t.py b/tests/t.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/t.py\n\
                 diff --git a/old.py b/new.py\nrename from old.py\nrename to new.py\n\
                 --- plain.py\t2020-01-01\n+++ plain.py\t2020-01-02\n\
                 diff --git a/sql.py b/sql.py\n--- a/sql.py\n+++ b/sql.py\n@@ -1,2 +1,1 @@\n--- not/a/header\n x\n\
                 diff --git \"a/sp ace.py\" \"b/sp ace.py\"\n--- \"a/sp ace.py\"\n+++ \"b/sp ace.py\"\n";
        assert_eq!(
            patch_paths(p),
            vec!["new.py", "old.py", "pkg/x.py", "plain.py", "sp ace.py", "sql.py", "tests/t.py"]
        );
    }

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = crate::tree::list_files(root, &SkipPolicy::new([]))
            .unwrap()
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(root.join(&f)).unwrap();
                (f, bytes)
            })
            .collect();
        files.sort();
        files
    }

    /// Copy `from` into a fresh dir, apply `patch` with `tool`, return the dir.
    fn applied(from: &Path, patch: &str, tool: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (f, bytes) in tree(from) {
            let p = dir.path().join(&f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let pf = dir.path().join("../").join(format!("{}.patch", dir.path().file_name().unwrap().to_string_lossy()));
        std::fs::write(&pf, patch).unwrap();
        let status = match tool {
            "git" => {
                Command::new("git").args(["apply", "--whitespace=nowarn"]).arg(&pf).current_dir(dir.path()).output()
            }
            _ => Command::new("patch").args(["-p1", "-s", "-i"]).arg(&pf).current_dir(dir.path()).output(),
        }
        .unwrap();
        let _ = std::fs::remove_file(&pf);
        assert!(status.status.success(), "{tool} apply failed: {}\n{patch}", String::from_utf8_lossy(&status.stderr));
        dir
    }

    #[carve_testutil::needs("git", "patch")]
    fn patches_apply_with_git_and_patch_and_restore_trees_exactly() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let lines: String = (1..40).map(|i| format!("line {i}\n")).collect();
        write(a.path(), "pkg/same.py", "x = 1\n");
        write(a.path(), "pkg/changed.py", &lines);
        write(b.path(), "pkg/same.py", "x = 1\n");
        write(b.path(), "pkg/changed.py", &lines.replace("line 3\n", "").replace("line 30\n", "line thirty\n"));
        write(a.path(), "pkg/no_newline.py", "a\nb");
        write(b.path(), "pkg/no_newline.py", "a\nc");
        write(a.path(), "tests/test_gone.py", "def test():\n    pass\n");
        write(b.path(), "pkg/added.py", "new\n");
        write(a.path(), "pkg/was_empty.py", "");
        write(b.path(), "pkg/was_empty.py", "now\n");
        let files: BTreeSet<String> = [
            "pkg/same.py",
            "pkg/changed.py",
            "pkg/no_newline.py",
            "tests/test_gone.py",
            "pkg/added.py",
            "pkg/was_empty.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let forward = unified_diff(a.path(), b.path(), &files).unwrap();
        let backward = unified_diff(b.path(), a.path(), &files).unwrap();
        assert_eq!(forward, unified_diff(a.path(), b.path(), &files).unwrap(), "deterministic");
        assert!(!forward.contains("same.py"));
        assert!(forward.contains("deleted file mode 100644\n--- a/tests/test_gone.py\n+++ /dev/null\n"));
        assert!(forward.contains("new file mode 100644\n--- /dev/null\n+++ b/pkg/added.py\n@@ -0,0 +1 @@\n+new\n"));
        for tool in ["patch", "git"] {
            assert_eq!(tree(applied(a.path(), &forward, tool).path()), tree(b.path()), "{tool} forward");
            assert_eq!(tree(applied(b.path(), &backward, tool).path()), tree(a.path()), "{tool} backward");
        }
    }

    #[carve_testutil::needs("git")]
    fn a_refused_patch_names_the_tree_and_keeps_gits_message() {
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("t");
        write(&tree, "a.txt", "one\n");
        let patch = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+three\n";
        let file = d.path().join("scratch/a.patch");
        let err = apply_patch(&tree, patch, false, &file).unwrap_err();
        assert!(err.to_string().contains(&format!("in {} failed: ", tree.display())), "{err}");
        assert!(err.git_message().contains("patch does not apply"), "{}", err.git_message());
        assert!(!file.exists(), "the patch file is removed");
        let fixed = patch.replace("-two", "-one");
        apply_patch(&tree, &fixed, false, &file).unwrap();
        assert_eq!(std::fs::read_to_string(tree.join("a.txt")).unwrap(), "three\n");
        apply_patch(&tree, &fixed, true, &file).unwrap();
        assert_eq!(std::fs::read_to_string(tree.join("a.txt")).unwrap(), "one\n");
        apply_patch(&tree, "  \n", false, &file).unwrap();
    }
}
