//! Git-style patches between two trees, accepted by `git apply` and `patch -p1`:
//! `diff --git a/x b/x`, `new file mode`/`deleted file mode` with `/dev/null`, three lines
//! of context, `\ No newline at end of file` where needed. Files in sorted order, so the
//! same trees give the same bytes.
//!
//! A bundle has three: `mask.patch` (original → masked, F2P test removal included),
//! `gold.patch` (masked → original, non-test files) and `test.patch` (adds the F2P tests
//! back): original + mask + test + gold = original.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::mask::MaskOutcome;
use crate::{ExtractError, io_err};

/// The three patches of a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patches {
    pub mask: String,
    pub gold: String,
    pub test: String,
}

/// Patches for a masked tree: `mask` covers every changed and removed file, `gold` the
/// changed files that are not F2P-test-only edits; `test` restores the removed test files
/// and F2P-test-only edits.
pub fn build_patches(original: &Path, masked: &Path, outcome: &MaskOutcome) -> Result<Patches, ExtractError> {
    let task: BTreeSet<String> = outcome.changed_files.difference(&outcome.test_edited_files).cloned().collect();
    let tests: BTreeSet<String> = outcome.removed_files.union(&outcome.test_edited_files).cloned().collect();
    // mask.patch alone takes the original to the masked state, F2P test removal included:
    // original + mask + test + gold = original.
    let all: BTreeSet<String> = task.union(&tests).cloned().collect();
    Ok(Patches {
        mask: unified_diff(original, masked, &all)?,
        gold: unified_diff(masked, original, &task)?,
        test: unified_diff(masked, original, &tests)?,
    })
}

fn read_text(root: &Path, rel: &str) -> Result<Option<(String, bool)>, ExtractError> {
    let path = root.join(rel);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let bytes = std::fs::read(&path).map_err(io_err(&path))?;
    let text = String::from_utf8(bytes).map_err(|_| ExtractError::NotText { path: rel.to_string() })?;
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
pub fn unified_diff(old_root: &Path, new_root: &Path, files: &BTreeSet<String>) -> Result<String, ExtractError> {
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
        write_hunks(&mut out, old_text, new_text);
    }
    Ok(out)
}

fn write_hunks(out: &mut String, old: &str, new: &str) {
    let diff = similar::TextDiff::from_lines(old, new);
    let udiff = diff.unified_diff();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = crate::mask::list_tree_files(root)
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
}
