//! The shadow-copy rules shared by every part of carve that copies or fingerprints a
//! repository tree (the binary's `src/workspace.rs`, `carve-eval`'s trees): which folders a
//! copy leaves out, how it copies, and the content digest bundles record as
//! `carve.tree_digest`. One definition, so a digest taken by one equals the other's.
//!
//! Errors are `std::io::Error`s whose message names the file; callers wrap them in their
//! own error types.

use sha2::{Digest, Sha256};
use std::io;
use std::path::Path;

/// Directories never copied into a shadow tree: version control, virtualenvs and caches.
/// The extractor's list (`carve_extractor::list_tree_files`) skips these too, so that a
/// masked state restored by the gold patch compares like with like against the original; it
/// also skips `node_modules` (installed dependencies are never masked; a shadow copy links
/// them) and `.venv` by name (a copy skips any folder holding a `pyvenv.cfg`).
pub const SKIP_DIRS: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".eggs",
];

fn named(what: &str, path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("could not {what} {}: {e}", path.display()))
}

/// Tool caches kept inside `node_modules` (vitest's results, vite's pre-bundled deps, the
/// `.cache` of babel, eslint and others). Runs rewrite their files in place, so a copy that
/// hard-linked them would let a run in the copy change the user's files (and the original's
/// digest): they are left out, like `__pycache__`, and each run makes its own.
pub const NODE_MODULES_CACHES: &[&str] = &[".vite", ".vitest", ".cache"];

/// Whether a shadow copy leaves the directory `path` out (a skipped name, a virtualenv, or a
/// tool cache inside `node_modules`).
pub fn skip_dir(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let in_node_modules = path.parent().and_then(|p| p.file_name()).is_some_and(|p| p == "node_modules");
    SKIP_DIRS.contains(&name.as_ref())
        || (in_node_modules && NODE_MODULES_CACHES.contains(&name.as_ref()))
        || path.join("pyvenv.cfg").is_file()
}

/// Every file of the tree that a shadow copy holds, root-relative with `/`, sorted.
pub fn list_files(root: &Path) -> io::Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| named("list", &dir, e))? {
            let entry = entry.map_err(|e| named("list", &dir, e))?;
            let path = entry.path();
            let ft = entry.file_type().map_err(|e| named("inspect", &path, e))?;
            if ft.is_dir() {
                if !skip_dir(&path) {
                    stack.push(path);
                }
            } else if ft.is_file() || ft.is_symlink() {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A file inside an installed-dependency folder (`node_modules`).
pub fn is_dependency_file(rel: &str) -> bool {
    rel.split('/').any(|c| c == "node_modules")
}

/// Copy the tree `root` into `dest` (replacing it): symlinks stay links, installed
/// dependencies are hard-linked (only read; files a run creates land in the copy's own
/// directories), the rest copied. Returns the copied files.
pub fn shadow_copy(root: &Path, dest: &Path) -> io::Result<Vec<String>> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(|e| named("clear", dest, e))?;
    }
    std::fs::create_dir_all(dest).map_err(|e| named("create", dest, e))?;
    let files = list_files(root)?;
    for rel in &files {
        let (from, to) = (root.join(rel), dest.join(rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| named("create", parent, e))?;
        }
        let meta = std::fs::symlink_metadata(&from).map_err(|e| named("inspect", &from, e))?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&from).map_err(|e| named("read the link", &from, e))?;
            std::os::unix::fs::symlink(&target, &to).map_err(|e| named("link", &to, e))?;
        } else if is_dependency_file(rel) && std::fs::hard_link(&from, &to).is_ok() {
            // Installed dependencies are large and only read: a hard link costs nothing.
        } else {
            std::fs::copy(&from, &to).map_err(|e| named("copy", &from, e))?;
        }
    }
    Ok(files)
}

/// Put the files of `from` (a folder or a file) at `to`: hard links where the file system
/// allows (else copies), links as links, the tool caches a run rewrites left out (as a shadow
/// copy leaves them out). Environments' installed folders reach a run's tree this way.
pub fn link_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(from).map_err(|e| named("inspect", from, e))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from).map_err(|e| named("read the link", from, e))?;
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| named("create", parent, e))?;
        }
        return std::os::unix::fs::symlink(&target, to).map_err(|e| named("link", to, e));
    }
    if !meta.is_dir() {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| named("create", parent, e))?;
        }
        if std::fs::hard_link(from, to).is_err() {
            std::fs::copy(from, to).map_err(|e| named("copy", from, e))?;
        }
        return Ok(());
    }
    std::fs::create_dir_all(to).map_err(|e| named("create", to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| named("list", from, e))? {
        let entry = entry.map_err(|e| named("list", from, e))?;
        let path = entry.path();
        let ft = entry.file_type().map_err(|e| named("inspect", &path, e))?;
        if ft.is_dir() && skip_dir(&path) {
            continue;
        }
        link_tree(&path, &to.join(entry.file_name()))?;
    }
    Ok(())
}

/// Each file of the tree (relative path, sorted) with the SHA-256 of its contents.
pub fn tree_manifest(root: &Path) -> io::Result<Vec<(String, [u8; 32])>> {
    list_files(root)?
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(&rel)).unwrap_or_default();
            let digest: [u8; 32] = Sha256::digest(&bytes).into();
            Ok((rel, digest))
        })
        .collect()
}

/// SHA-256 over the tree's relative paths and contents (`carve.tree_digest`, cache keys).
pub fn tree_digest(root: &Path) -> io::Result<String> {
    let mut h = Sha256::new();
    for (rel, digest) in tree_manifest(root)? {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(digest);
    }
    Ok(hex::encode(h.finalize()))
}

/// The files in which trees `a` and `b` differ, in path order: `("only in a" | "only in b" |
/// "differs", path)`. Empty when their [`tree_digest`]s are equal.
pub fn tree_differences(a: &Path, b: &Path) -> io::Result<Vec<(&'static str, String)>> {
    let (a, b) = (tree_manifest(a)?, tree_manifest(b)?);
    let b_map: std::collections::BTreeMap<&str, &[u8; 32]> = b.iter().map(|(r, d)| (r.as_str(), d)).collect();
    let a_map: std::collections::BTreeMap<&str, &[u8; 32]> = a.iter().map(|(r, d)| (r.as_str(), d)).collect();
    let mut out: Vec<(&'static str, String)> = Vec::new();
    for (rel, d) in &a_map {
        match b_map.get(rel) {
            None => out.push(("only in a", rel.to_string())),
            Some(e) if e != d => out.push(("differs", rel.to_string())),
            Some(_) => {}
        }
    }
    out.extend(b_map.keys().filter(|r| !a_map.contains_key(*r)).map(|r| ("only in b", r.to_string())));
    out.sort_by(|x, y| x.1.cmp(&y.1));
    Ok(out)
}

/// Write a file atomically: a temporary sibling, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| named("create", parent, e))?;
    let tmp =
        parent.join(format!(".{}.tmp-{}", path.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| named("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| named("move into place", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_skip_caches_and_virtualenvs_and_digests_follow_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        for (p, b) in [("a.py", "x = 1\n"), ("pkg/b.py", "y = 2\n"), (".git/HEAD", "ref\n"), ("venv/pyvenv.cfg", "")] {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), b).unwrap();
        }
        std::fs::create_dir_all(root.join(".hypothesis")).unwrap();
        std::fs::write(root.join(".hypothesis/db"), "cache").unwrap();
        let copy = dir.path().join("copy");
        assert_eq!(shadow_copy(&root, &copy).unwrap(), vec!["a.py", "pkg/b.py"]);
        assert_eq!(tree_digest(&root).unwrap(), tree_digest(&copy).unwrap());
        std::fs::write(copy.join("a.py"), "x = 2\n").unwrap();
        assert_ne!(tree_digest(&root).unwrap(), tree_digest(&copy).unwrap());
        std::fs::write(copy.join("extra.txt"), "e").unwrap();
        assert_eq!(
            tree_differences(&root, &copy).unwrap(),
            vec![("differs", "a.py".to_string()), ("only in b", "extra.txt".to_string())]
        );
        std::fs::remove_file(copy.join("extra.txt")).unwrap();
        write_atomic(&copy.join("new/c.txt"), b"c").unwrap();
        assert_eq!(std::fs::read_to_string(copy.join("new/c.txt")).unwrap(), "c");
    }

    /// vitest 1.x rewrites `node_modules/.vitest/results.json` in place after every run: a
    /// hard-linked copy of it would be the user's file. The cache is left out of copies and
    /// digests; the packages are hard-linked and a run's cache lands in the copy alone.
    #[test]
    fn tool_caches_inside_node_modules_are_neither_linked_nor_digested() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        for (p, b) in [
            ("src/a.ts", "export const a = 1;\n"),
            ("node_modules/pkg/index.js", "module.exports = 1;\n"),
            ("node_modules/.vitest/results.json", "{\"a\": 1}"),
            ("node_modules/.vite/deps/x.js", "x"),
            ("node_modules/pkg/.cache/keep.txt", "a package's own folder named .cache is a package file"),
        ] {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), b).unwrap();
        }
        let digest = tree_digest(&root).unwrap();
        let copy = dir.path().join("copy");
        let files = shadow_copy(&root, &copy).unwrap();
        assert_eq!(files, vec!["node_modules/pkg/.cache/keep.txt", "node_modules/pkg/index.js", "src/a.ts"]);
        // A run in the copy writes its own cache; the user's stays as it was.
        std::fs::create_dir_all(copy.join("node_modules/.vitest")).unwrap();
        std::fs::write(copy.join("node_modules/.vitest/results.json"), "{\"a\": 2}").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("node_modules/.vitest/results.json")).unwrap(), "{\"a\": 1}");
        std::fs::write(root.join("node_modules/.vitest/results.json"), "{\"a\": 3}").unwrap();
        assert_eq!(tree_digest(&root).unwrap(), digest, "a cache's content is not part of the tree's digest");
        assert_eq!(tree_digest(&copy).unwrap(), digest);
    }
}
