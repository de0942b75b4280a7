//! Writes a killed run never leaves half done: a file written through a temporary sibling
//! and a rename ([`write_atomic`]), a folder put in place by renames ([`replace_dir`]), and
//! the error every file operation of `core` returns, naming the path ([`IoError`]); a set
//! of files written into or deleted from a tree ([`write_files`]).

use std::io;
use std::path::{Path, PathBuf};

/// A file operation that failed: what was being done, on which path, and the system's
/// error ("could not copy /repo/a.py: Permission denied (os error 13)").
///
/// The message holds the system's error, so it is not repeated as a [`source`]
/// (`std::error::Error::source`): a chain printed cause by cause says it once.
#[derive(Debug, thiserror::Error)]
#[error("could not {what} {}: {io}", path.display())]
pub struct IoError {
    /// The operation, as a verb phrase ("list", "copy", "move into place").
    pub what: &'static str,
    pub path: PathBuf,
    pub io: io::Error,
}

impl IoError {
    pub fn new(what: &'static str, path: &Path, io: io::Error) -> IoError {
        IoError { what, path: path.to_path_buf(), io }
    }

    /// A `map_err` adapter: `std::fs::read(p).map_err(IoError::on("read", p))`.
    pub fn on<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> IoError + 'a {
        move |io| IoError::new(what, path, io)
    }

    /// The kind of the system's error.
    pub fn kind(&self) -> io::ErrorKind {
        self.io.kind()
    }
}

/// Write `bytes` to `path` atomically (its folder created if needed): a temporary sibling,
/// then a rename, so a reader sees the old file or the new one, never part of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
    let tmp =
        parent.join(format!(".{}.tmp-{}", path.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).map_err(IoError::on("write", &tmp))?;
    std::fs::rename(&tmp, path).map_err(IoError::on("move into place", path))
}

/// Replace the folder `dest` by the complete folder `staged` (same parent) so that a killed
/// run never leaves a half-written `dest`: the old one is moved aside first, then removed.
pub fn replace_dir(staged: &Path, dest: &Path) -> Result<(), IoError> {
    if dest.exists() {
        let trash = dest.with_extension(format!("old-{}", std::process::id()));
        std::fs::rename(dest, &trash).map_err(IoError::on("move aside", dest))?;
        std::fs::rename(staged, dest).map_err(IoError::on("move into place", dest))?;
        let _ = std::fs::remove_dir_all(&trash);
    } else {
        std::fs::rename(staged, dest).map_err(IoError::on("move into place", dest))?;
    }
    Ok(())
}

/// Write `files` (repository-relative path → bytes, `None` deletes) into `root`, creating
/// folders as needed. Deleting a file that is not there is not an error.
pub fn write_files(root: &Path, files: &std::collections::BTreeMap<String, Option<Vec<u8>>>) -> Result<(), IoError> {
    for (rel, bytes) in files {
        let path = root.join(rel);
        match bytes {
            Some(b) => {
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(IoError::on("create", parent))?;
                }
                std::fs::write(&path, b).map_err(IoError::on("write", &path))?;
            }
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(IoError::new("remove", &path, e)),
                _ => {}
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_create_folders_and_leave_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("new/c.txt");
        write_atomic(&p, b"c").unwrap();
        write_atomic(&p, b"cc").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "cc");
        let names: Vec<_> = std::fs::read_dir(d.path().join("new")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec!["c.txt"]);
    }

    #[test]
    fn a_folder_is_replaced_whole_and_errors_name_the_path() {
        let d = tempfile::tempdir().unwrap();
        let (staged, dest) = (d.path().join("out.partial"), d.path().join("out"));
        for (dir, file) in [(&dest, "old.txt"), (&staged, "new.txt")] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(file), "x").unwrap();
        }
        replace_dir(&staged, &dest).unwrap();
        assert!(dest.join("new.txt").is_file() && !dest.join("old.txt").exists() && !staged.exists());
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec!["out"], "the old folder is gone");
        let err = replace_dir(&staged, &dest).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().starts_with(&format!("could not move into place {}: ", dest.display())), "{err}");
    }

    #[test]
    fn files_are_written_and_deleted_in_a_tree() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("gone.txt"), "x").unwrap();
        let files = std::collections::BTreeMap::from([
            ("gone.txt".to_string(), None),
            ("never.txt".to_string(), None),
            ("pkg/new.txt".to_string(), Some(b"new".to_vec())),
        ]);
        write_files(d.path(), &files).unwrap();
        assert!(!d.path().join("gone.txt").exists());
        assert_eq!(std::fs::read_to_string(d.path().join("pkg/new.txt")).unwrap(), "new");
        std::fs::write(d.path().join("file"), "").unwrap();
        let under_a_file = std::collections::BTreeMap::from([("file/x".to_string(), Some(Vec::new()))]);
        let err = write_files(d.path(), &under_a_file).unwrap_err();
        assert!(err.to_string().starts_with("could not create "), "{err}");
    }
}
