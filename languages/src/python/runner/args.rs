//! The paths a selected run hands pytest as arguments.
//!
//! pytest re-collects the directory of a file argument once per file argument (files given
//! twice are not deduplicated, so the directory's collection is not cached for them): N
//! file arguments in one directory of N test files build N² collector nodes. With 120 test
//! files that was 14,000 `Module` nodes and about 1.5 s of CPU before the first test ran,
//! in every run of a P2P selection (the masked state of every candidate). So a directory
//! whose Python files are all selected is passed as the directory instead of its files:
//! pytest then collects exactly the same files, once each, as the baseline's run did.
//!
//! "All selected" is judged conservatively, from the tree alone: every `.py` file under the
//! directory is a selected file (or inside a selected directory), or the `__init__.py` or
//! `conftest.py` of a directory that holds selected files (pytest loads those for the
//! files' sake anyway). Any other Python file there — a helper module, a test file with no
//! selected test, a file in a hidden folder — or a symlinked directory keeps the files as
//! they are, so a directory argument never makes pytest import a module that the file
//! arguments would not have imported. A directory replaces at least two paths (one file
//! gains nothing).

use std::collections::BTreeSet;
use std::path::Path;

use crate::runner::TestId;

/// The distinct existing files and directories the selection lives in, relative to root,
/// minus those inside another one of them; a directory whose Python files are all
/// selected stands for them (see the module doc).
pub(super) fn selection_paths(root: &Path, ids: &[TestId]) -> Vec<String> {
    let paths: BTreeSet<&str> = ids
        .iter()
        .map(|id| id.split("::").next().unwrap_or(id).trim_end_matches('/'))
        .filter(|p| !p.is_empty() && !p.starts_with('-') && !p.split('/').any(|c| c == ".."))
        .filter(|p| root.join(p).exists())
        .collect();
    let outermost: BTreeSet<String> =
        paths.iter().filter(|p| !paths.iter().any(|q| q != *p && inside(p, q))).map(|p| p.to_string()).collect();
    collapse_directories(root, outermost).into_iter().collect()
}

/// `path` lies inside directory `dir` (both root-relative).
fn inside(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Replace the paths under each outermost directory whose Python files are all selected by
/// that directory (at least two paths per directory).
fn collapse_directories(root: &Path, paths: BTreeSet<String>) -> BTreeSet<String> {
    // Every proper ancestor directory of a selected path, shallowest first.
    let mut dirs: Vec<String> = paths
        .iter()
        .flat_map(|p| {
            let parts: Vec<&str> = p.split('/').collect();
            (1..parts.len()).map(move |n| parts[..n].join("/"))
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    dirs.sort_by_key(|d| d.matches('/').count());
    let mut out = paths.clone();
    for dir in dirs {
        if out.iter().any(|p| *p == dir || inside(&dir, p)) {
            continue; // already stands for itself or lies inside a chosen directory
        }
        let under: Vec<String> = out.iter().filter(|p| inside(p, &dir)).cloned().collect();
        if under.len() >= 2 && all_python_files_selected(root, &dir, &paths) {
            for p in &under {
                out.remove(p);
            }
            out.insert(dir);
        }
    }
    out
}

/// Whether every `.py` file under `dir` is selected, or the `__init__.py` or `conftest.py`
/// of a directory that holds selected paths; `false` on a symlinked directory or an
/// unreadable one.
fn all_python_files_selected(root: &Path, dir: &str, selected: &BTreeSet<String>) -> bool {
    let mut stack = vec![dir.to_string()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else { return false };
        for entry in entries {
            let Ok(entry) = entry else { return false };
            let Ok(ft) = entry.file_type() else { return false };
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = format!("{rel}/{name}");
            if selected.contains(&child) {
                continue; // a selected file, or a selected directory and all under it
            }
            if ft.is_symlink() {
                if root.join(&child).is_dir() {
                    return false;
                }
            } else if ft.is_dir() {
                if name != "__pycache__" {
                    stack.push(child);
                }
                continue;
            }
            if !name.ends_with(".py") {
                continue;
            }
            let holds_selected = selected.iter().any(|s| inside(s, &rel));
            if !(matches!(name.as_str(), "__init__.py" | "conftest.py") && holds_selected) {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for f in files {
            let p = root.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        root
    }

    fn ids(list: &[&str]) -> Vec<TestId> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn selection_paths_are_existing_and_outermost() {
        let root = tree(&["tests/a/test_x.py", "tests/b/test_y.py", "tests/b/helper.py"]);
        let ids = ids(&[
            "tests/a/test_x.py::t",
            "tests/a/test_x.py::u[1]",
            "tests/b",
            "tests/b/test_y.py::v",
            "gone.py::w",
            "../up.py::t",
        ]);
        // `tests` holds two selected paths and every Python file under it is selected.
        assert_eq!(selection_paths(root.path(), &ids), vec!["tests".to_string()]);
        // One file of a directory stays a file.
        assert_eq!(selection_paths(root.path(), &ids[..2]), vec!["tests/a/test_x.py".to_string()]);
    }

    #[test]
    fn a_directory_stands_for_its_files_only_when_pytest_would_import_nothing_else() {
        let root = tree(&[
            "pkg/__init__.py",
            "pkg/core.py",
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/test_a.py",
            "tests/test_b.py",
            "tests/data/sample.txt",
            "tests/unit/conftest.py",
            "tests/unit/test_c.py",
            "tests/unit/test_d.py",
            "tests/other/test_e.py",
            "tests/other/test_f.py",
            "tests/other/test_unselected.py",
        ]);
        let selected = ids(&[
            "tests/test_a.py::t",
            "tests/test_b.py::t",
            "tests/unit/test_c.py::t",
            "tests/unit/test_d.py::t[1]",
            "tests/other/test_e.py::t",
            "tests/other/test_f.py::t",
        ]);
        // `tests/other` has an unselected test file: neither it nor `tests` collapses;
        // `tests/unit` does (its conftest.py is loaded for its selected files anyway).
        assert_eq!(
            selection_paths(root.path(), &selected),
            ["tests/other/test_e.py", "tests/other/test_f.py", "tests/test_a.py", "tests/test_b.py", "tests/unit"]
                .map(String::from)
                .to_vec()
        );
        // Without the unselected file everything under `tests` is selected.
        std::fs::remove_file(root.path().join("tests/other/test_unselected.py")).unwrap();
        assert_eq!(selection_paths(root.path(), &selected), vec!["tests".to_string()]);
        // A conftest.py (or __init__.py) of a folder without selected files would be loaded
        // only by the directory argument: it keeps that directory's files apart.
        for extra in ["tests/slow/conftest.py", "tests/helpers/__init__.py"] {
            std::fs::create_dir_all(root.path().join(extra).parent().unwrap()).unwrap();
            std::fs::write(root.path().join(extra), "").unwrap();
            let paths = selection_paths(root.path(), &selected);
            assert!(!paths.contains(&"tests".to_string()) && paths.contains(&"tests/unit".to_string()), "{paths:?}");
            std::fs::remove_file(root.path().join(extra)).unwrap();
        }
    }

    #[test]
    fn a_symlinked_directory_keeps_the_files() {
        let root = tree(&["tests/test_a.py", "tests/test_b.py", "elsewhere/test_z.py"]);
        std::os::unix::fs::symlink(root.path().join("elsewhere"), root.path().join("tests/linked")).unwrap();
        let paths = selection_paths(root.path(), &ids(&["tests/test_a.py::t", "tests/test_b.py::t"]));
        assert_eq!(paths, vec!["tests/test_a.py".to_string(), "tests/test_b.py".to_string()]);
    }
}
