//! Copies and fingerprints of a repository tree, following one [`SkipPolicy`]: which files a
//! shadow copy holds ([`list_files`]), the copy itself ([`shadow_copy`]: carve never runs
//! anything in the user's tree), the content digest bundles record as `carve.tree_digest`
//! ([`tree_digest`]), where two trees differ ([`tree_differences`]), and putting files in
//! place without copying them where a link will do ([`link_file`], [`link_dependencies`],
//! [`overlay`]). One definition, so a digest taken by one part of carve equals another's.

mod policy;

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::fs::IoError;
pub use policy::{SkipPolicy, TreeFacts, VCS_DIRS};

/// Every file of the tree that a shadow copy holds (links included, as files),
/// root-relative with `/`, sorted.
pub fn list_files(root: &Path, policy: &SkipPolicy) -> Result<Vec<String>, IoError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(IoError::on("list", &dir))? {
            let entry = entry.map_err(IoError::on("list", &dir))?;
            let path = entry.path();
            let ft = entry.file_type().map_err(IoError::on("inspect", &path))?;
            if ft.is_dir() {
                if !policy.skips_dir(&path) {
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

/// Copy the tree `root` into `dest` (replacing it): symlinks stay links, installed
/// dependencies are hard-linked (only read; files a run creates land in the copy's own
/// folders), the rest copied. Returns the copied files.
pub fn shadow_copy(root: &Path, dest: &Path, policy: &SkipPolicy) -> Result<Vec<String>, IoError> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(IoError::on("clear", dest))?;
    }
    std::fs::create_dir_all(dest).map_err(IoError::on("create", dest))?;
    let files = list_files(root, policy)?;
    for rel in &files {
        let (from, to) = (root.join(rel), dest.join(rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
        }
        let meta = std::fs::symlink_metadata(&from).map_err(IoError::on("inspect", &from))?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&from).map_err(IoError::on("read the link", &from))?;
            std::os::unix::fs::symlink(&target, &to).map_err(IoError::on("link", &to))?;
        } else if policy.is_dependency(rel) && std::fs::hard_link(&from, &to).is_ok() {
            // Installed dependencies are large and only read: a hard link costs nothing.
        } else {
            std::fs::copy(&from, &to).map_err(IoError::on("copy", &from))?;
        }
    }
    Ok(files)
}

/// Put the file `from` at `to` (parents created) without copying where it can: a link as
/// the same link, else a hard link, else a copy.
pub fn link_file(from: &Path, to: &Path) -> Result<(), IoError> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
    }
    let meta = std::fs::symlink_metadata(from).map_err(IoError::on("inspect", from))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from).map_err(IoError::on("read the link", from))?;
        std::os::unix::fs::symlink(target, to).map_err(IoError::on("link", to))?;
    } else if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).map_err(IoError::on("copy", from))?;
    }
    Ok(())
}

/// Put the files of `from` (a folder or a file) at `to` with [`link_file`], leaving out the
/// folders `policy` skips (the tool caches a run rewrites, as a shadow copy leaves them out).
/// Environments' installed folders reach a run's tree this way.
pub fn link_tree(from: &Path, to: &Path, policy: &SkipPolicy) -> Result<(), IoError> {
    let meta = std::fs::symlink_metadata(from).map_err(IoError::on("inspect", from))?;
    if !meta.is_dir() {
        return link_file(from, to);
    }
    std::fs::create_dir_all(to).map_err(IoError::on("create", to))?;
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(from)
        .map_err(IoError::on("list", from))?
        .collect::<Result<_, _>>()
        .map_err(IoError::on("list", from))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let ft = entry.file_type().map_err(IoError::on("inspect", &path))?;
        if ft.is_dir() && policy.skips_dir(&path) && !policy.is_dependency(&entry.file_name().to_string_lossy()) {
            continue;
        }
        link_tree(&path, &to.join(entry.file_name()), policy)?;
    }
    Ok(())
}

/// Link (or copy) the installed-dependency files of `root` into `dest`, which holds a copy
/// of the rest of the tree (a masked tree leaves them out); files `dest` has stay.
pub fn link_dependencies(root: &Path, dest: &Path, policy: &SkipPolicy) -> Result<(), IoError> {
    for rel in list_files(root, policy)?.iter().filter(|r| policy.is_dependency(r)) {
        let (from, to) = (root.join(rel), dest.join(rel));
        if !to.exists() {
            link_file(&from, &to)?;
        }
    }
    Ok(())
}

/// Copy every file under `overlay` onto `dest` at the same relative path (replacing what is
/// there); returns how many. Nothing when `overlay` is no folder.
pub fn overlay(overlay: &Path, dest: &Path, policy: &SkipPolicy) -> Result<usize, IoError> {
    if !overlay.is_dir() {
        return Ok(0);
    }
    let files = list_files(overlay, policy)?;
    for rel in &files {
        let (from, to) = (overlay.join(rel), dest.join(rel));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
        }
        if to.is_symlink() || to.is_file() {
            std::fs::remove_file(&to).map_err(IoError::on("replace", &to))?;
        }
        std::fs::copy(&from, &to).map_err(IoError::on("copy", &from))?;
    }
    Ok(files.len())
}

/// Each file of the tree (relative path, sorted) with the SHA-256 of its contents (an
/// unreadable file, such as a dangling link, counts as empty).
pub fn tree_manifest(root: &Path, policy: &SkipPolicy) -> Result<Vec<(String, [u8; 32])>, IoError> {
    Ok(list_files(root, policy)?
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(&rel)).unwrap_or_default();
            let digest: [u8; 32] = Sha256::digest(&bytes).into();
            (rel, digest)
        })
        .collect())
}

/// SHA-256 over the tree's relative paths and contents (`carve.tree_digest`, cache keys).
pub fn tree_digest(root: &Path, policy: &SkipPolicy) -> Result<String, IoError> {
    let mut h = Sha256::new();
    for (rel, digest) in tree_manifest(root, policy)? {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(digest);
    }
    Ok(hex::encode(h.finalize()))
}

/// The files in which trees `a` and `b` differ, in path order: `("only in a" | "only in b" |
/// "differs", path)`. Empty when their [`tree_digest`]s are equal.
pub fn tree_differences(a: &Path, b: &Path, policy: &SkipPolicy) -> Result<Vec<(&'static str, String)>, IoError> {
    let (a, b) = (tree_manifest(a, policy)?, tree_manifest(b, policy)?);
    let b_map: BTreeMap<&str, &[u8; 32]> = b.iter().map(|(r, d)| (r.as_str(), d)).collect();
    let a_map: BTreeMap<&str, &[u8; 32]> = a.iter().map(|(r, d)| (r.as_str(), d)).collect();
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

#[cfg(test)]
mod tests {
    use super::policy::tests::policy;
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (p, b) in files {
            std::fs::create_dir_all(root.join(p).parent().unwrap()).unwrap();
            std::fs::write(root.join(p), b).unwrap();
        }
    }

    #[test]
    fn copies_skip_caches_and_environments_and_digests_follow_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        write(
            &root,
            &[
                ("a.txt", "x = 1\n"),
                ("pkg/b.txt", "y = 2\n"),
                (".git/HEAD", "ref\n"),
                ("venv/env.cfg", ""),
                ("pkg/__cache__/b.bin", "cache"),
            ],
        );
        let (p, copy) = (policy(), dir.path().join("copy"));
        assert_eq!(shadow_copy(&root, &copy, &p).unwrap(), vec!["a.txt", "pkg/b.txt"]);
        assert_eq!(tree_digest(&root, &p).unwrap(), tree_digest(&copy, &p).unwrap());
        std::fs::write(copy.join("a.txt"), "x = 2\n").unwrap();
        assert_ne!(tree_digest(&root, &p).unwrap(), tree_digest(&copy, &p).unwrap());
        std::fs::write(copy.join("extra.txt"), "e").unwrap();
        assert_eq!(
            tree_differences(&root, &copy, &p).unwrap(),
            vec![("differs", "a.txt".to_string()), ("only in b", "extra.txt".to_string())]
        );
        let err = list_files(&dir.path().join("absent"), &p).unwrap_err();
        assert!(err.to_string().starts_with(&format!("could not list {}", dir.path().join("absent").display())));
    }

    /// A run may rewrite a tool's cache inside a dependency folder in place (vitest's results
    /// file): a hard-linked copy of it would be the user's file. The cache is left out of
    /// copies and digests; the packages are hard-linked and a run's cache lands in the copy.
    #[test]
    fn caches_inside_dependencies_are_neither_linked_nor_digested() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        write(
            &root,
            &[
                ("src/a.ts", "export const a = 1;\n"),
                ("deps/pkg/index.js", "module.exports = 1;\n"),
                ("deps/.cache/results.json", "{\"a\": 1}"),
                ("deps/pkg/.cache/keep.txt", "a package's own folder named .cache is a package file"),
            ],
        );
        let p = policy();
        let digest = tree_digest(&root, &p).unwrap();
        let copy = dir.path().join("copy");
        let files = shadow_copy(&root, &copy, &p).unwrap();
        assert_eq!(files, vec!["deps/pkg/.cache/keep.txt", "deps/pkg/index.js", "src/a.ts"]);
        use std::os::unix::fs::MetadataExt;
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        assert_eq!(ino(&root.join("deps/pkg/index.js")), ino(&copy.join("deps/pkg/index.js")), "hard-linked");
        assert_ne!(ino(&root.join("src/a.ts")), ino(&copy.join("src/a.ts")), "copied");
        std::fs::write(root.join("deps/.cache/results.json"), "{\"a\": 3}").unwrap();
        assert_eq!(tree_digest(&root, &p).unwrap(), digest, "a cache's content is not part of the tree's digest");
        assert_eq!(tree_digest(&copy, &p).unwrap(), digest);
        // A masked tree leaves the dependencies out; they are linked back in.
        let masked = dir.path().join("masked");
        assert_eq!(shadow_copy(&root, &masked, &p.without_dependencies()).unwrap(), vec!["src/a.ts"]);
        link_dependencies(&root, &masked, &p).unwrap();
        assert_eq!(list_files(&masked, &p).unwrap(), files);
    }

    #[test]
    fn links_stay_links_and_overlays_replace_and_add() {
        let d = tempfile::tempdir().unwrap();
        let (o, t) = (d.path().join("o"), d.path().join("t"));
        write(&o, &[("tests/a.txt", "new")]);
        write(&t, &[("keep.txt", "k"), ("tests/a.txt", "old")]);
        std::os::unix::fs::symlink("keep.txt", t.join("link.txt")).unwrap();
        let p = policy();
        assert_eq!(overlay(&o, &t, &p).unwrap(), 1);
        assert_eq!(overlay(&d.path().join("none"), &t, &p).unwrap(), 0);
        assert_eq!(std::fs::read_to_string(t.join("tests/a.txt")).unwrap(), "new");
        assert_eq!(list_files(&t, &p).unwrap(), vec!["keep.txt", "link.txt", "tests/a.txt"]);
        link_file(&t.join("link.txt"), &d.path().join("x/link.txt")).unwrap();
        assert_eq!(std::fs::read_link(d.path().join("x/link.txt")).unwrap(), Path::new("keep.txt"));
    }
}
