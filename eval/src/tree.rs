//! Trees evaluation works on: shadow copies (never running anything in the user's tree),
//! the content digest bundles record, patches applied with `git apply`, overlays of hidden
//! test files, and atomic writes.
//!
//! The copy and digest rules are `carve_languages::tree`'s, which the binary uses too, so a
//! digest here equals `instance.json`'s `carve.tree_digest`.

use std::path::Path;

use crate::Error;

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |e| Error::io(what, path, e)
}

/// Every file a shadow copy holds, root-relative, sorted.
pub fn list_files(root: &Path) -> Result<Vec<String>, Error> {
    carve_languages::tree::list_files(root).map_err(io("list", root))
}

/// Copy `root` to `dest` (replacing it): no version control, caches or virtualenvs.
pub fn shadow_copy(root: &Path, dest: &Path) -> Result<(), Error> {
    carve_languages::tree::shadow_copy(root, dest).map(|_| ()).map_err(io("copy", root))
}

/// SHA-256 over relative paths and contents (the bundle's `tree_digest`).
pub fn tree_digest(root: &Path) -> Result<String, Error> {
    carve_languages::tree::tree_digest(root).map_err(io("digest", root))
}

/// Copy every file under `overlay` onto `dest` at the same relative path (overwriting).
pub fn overlay(overlay: &Path, dest: &Path) -> Result<usize, Error> {
    if !overlay.is_dir() {
        return Ok(0);
    }
    let files = list_files(overlay)?;
    for rel in &files {
        let to = dest.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        if to.is_symlink() || to.is_file() {
            std::fs::remove_file(&to).map_err(|e| Error::io("replace", &to, e))?;
        }
        std::fs::copy(overlay.join(rel), &to).map_err(|e| Error::io("copy", &overlay.join(rel), e))?;
    }
    Ok(files.len())
}

/// `git apply` of `patch` inside `dir` (no enclosing repository is discovered); `reverse`
/// applies it with `-R`. The error is git's message.
pub fn apply_patch(dir: &Path, patch: &str, reverse: bool, scratch: &Path) -> Result<(), String> {
    if patch.trim().is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("could not create {}: {e}", scratch.display()))?;
    let file = scratch.join(format!("apply-{}.patch", std::process::id()));
    std::fs::write(&file, patch).map_err(|e| format!("could not write {}: {e}", file.display()))?;
    let out = carve_pipeline::workspace::git_apply(dir, &file, reverse);
    let _ = std::fs::remove_file(&file);
    match out {
        Err(e) => Err(format!("could not run `git apply` (is git installed?): {e}")),
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
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

/// Write `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    carve_languages::tree::write_atomic(path, bytes).map_err(io("write", path))
}

pub fn pretty(v: &impl serde::Serialize) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn overlay_replaces_and_adds() {
        let d = tempfile::tempdir().unwrap();
        let (o, t) = (d.path().join("o"), d.path().join("t"));
        std::fs::create_dir_all(o.join("tests")).unwrap();
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(o.join("tests/a.py"), "new").unwrap();
        std::fs::write(t.join("keep.py"), "k").unwrap();
        assert_eq!(overlay(&o, &t).unwrap(), 1);
        assert_eq!(std::fs::read_to_string(t.join("tests/a.py")).unwrap(), "new");
        assert_eq!(list_files(&t).unwrap(), vec!["keep.py", "tests/a.py"]);
    }
}
