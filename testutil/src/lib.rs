//! Helpers shared by carve's tests, and only by them (a dev-dependency, never published):
//! where the workspace and its fixtures are, copies of fixtures to work on, the
//! `#[needs(...)]` attribute (a test whose tool is missing is reported as ignored, with the
//! reason), a content snapshot of a tree, one summary format for definition-index
//! snapshots, and the `# carve[feature]: status` expectations written in fixture comments.
//!
//! It depends on no carve crate: the index summary reads the index's serialized form, so
//! the unit tests of `carve-languages` can use it on their own `DefinitionIndex`.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

mod expectations;
mod summary;

pub use carve_testutil_macros::needs;
pub use expectations::{Annotation, annotations};
pub use summary::index_summary;

/// The workspace root (the folder with `fixtures/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("testutil/ is inside the workspace").to_path_buf()
}

/// `fixtures/<rel>` in the checkout (read it, never write it: copy it with [`fixture_copy`]).
pub fn fixture(rel: &str) -> PathBuf {
    workspace_root().join("fixtures").join(rel)
}

/// Folders a fixture copy leaves out, wherever they are: version control, caches, installed
/// environments and dependencies (tests that need those link them in), build outputs. This
/// crate depends on no carve crate, so the list is a copy: a test of `carve-languages` checks
/// that it equals the union its languages declare (`carve_languages::skip_policy`), sorted.
pub const NOT_COPIED: &[&str] = &[
    ".eggs",
    ".git",
    ".hg",
    ".hypothesis",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "target",
];

/// Copy `fixtures/<rel>` into a fresh temporary folder, as `<tmp>/<last component of rel>`,
/// so a test never touches the checkout. Keep the `TempDir` alive while using the copy.
pub fn fixture_copy(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dest = dir.path().join(rel.rsplit('/').next().expect("a fixture name"));
    copy_dir(&fixture(rel), &dest);
    (dir, dest)
}

/// Copy the tree `from` into `to` (created if missing), without the [`NOT_COPIED`] folders;
/// symbolic links are copied as links.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("failed to create {}: {e}", to.display()));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("failed to list {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name();
        let (src, dest) = (entry.path(), to.join(&name));
        let kind = entry.file_type().expect("a file type");
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).expect("a link target");
            std::os::unix::fs::symlink(target, &dest)
                .unwrap_or_else(|e| panic!("failed to link {}: {e}", dest.display()));
        } else if kind.is_dir() {
            if !NOT_COPIED.iter().any(|n| name == *n) {
                copy_dir(&src, &dest);
            }
        } else {
            std::fs::copy(&src, &dest)
                .unwrap_or_else(|e| panic!("failed to copy {} to {}: {e}", src.display(), dest.display()));
        }
    }
}

/// Write `files` (root-relative path, text) under `root`, creating folders as needed: a
/// small tree a test spells out.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("a file below the root"))
            .unwrap_or_else(|e| panic!("failed to create {}: {e}", p.display()));
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("failed to write {}: {e}", p.display()));
    }
}

/// A temporary folder holding `files` (see [`write_files`]).
pub fn temp_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("a temporary folder");
    write_files(d.path(), files);
    d
}

/// Every file under `root` with the hash of its bytes, and every directory (with a `/`),
/// sorted: two equal snapshots mean a byte-identical tree.
pub fn tree_snapshot(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("failed to list {}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            let rel = path.strip_prefix(root).expect("below the root").to_string_lossy().into_owned();
            if path.is_dir() {
                out.push((rel + "/", String::new()));
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
                out.push((rel, hex::encode(Sha256::digest(bytes))));
            }
        }
    }
    out.sort();
    out
}

/// Node ids as a sorted set, for comparisons.
pub fn set(ids: &[&str]) -> std::collections::BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_copy_is_byte_identical_without_caches_and_dependencies() {
        let (_tmp, copy) = fixture_copy("typescript/ledger");
        assert!(!copy.join("node_modules").exists());
        let original: Vec<_> = tree_snapshot(&fixture("typescript/ledger"))
            .into_iter()
            .filter(|(p, _)| !p.starts_with("node_modules"))
            .collect();
        assert_eq!(tree_snapshot(&copy), original);
    }

    #[test]
    fn copies_keep_links_as_links() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(src.join("__pycache__")).unwrap();
        std::fs::write(src.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(src.join("__pycache__/a.pyc"), "").unwrap();
        std::os::unix::fs::symlink("a.py", src.join("b.py")).unwrap();
        copy_dir(&src, &tmp.path().join("dest"));
        assert_eq!(std::fs::read_link(tmp.path().join("dest/b.py")).unwrap(), Path::new("a.py"));
        assert!(!tmp.path().join("dest/__pycache__").exists());
    }
}
