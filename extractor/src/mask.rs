//! The masked tree: a copy of the repository with the extracted definitions deleted (their
//! imports cleaned up, emptied blocks filled) and the F2P tests removed. The repository
//! itself is only read. Every changed file is checked to re-parse with zero error nodes and,
//! for Python, to `compile()` (one `python3` process for all files; skipped with a warning
//! when there is no interpreter).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use carve_languages::index::{DefinitionIndex, DefinitionKind, NodeId};
use carve_languages::{Language, edit};

use crate::{ExtractError, io_err};

/// What to take out of the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaskPlan {
    /// Definitions to delete (node ids of any file).
    pub extracted: BTreeSet<NodeId>,
    /// F2P test files to delete, repository-relative.
    pub remove_test_files: BTreeSet<String>,
    /// F2P test ids (`path::Class::test[param]`) to delete from files that stay; the whole
    /// test function goes, so every parametrization of it goes too.
    pub remove_tests: BTreeSet<String>,
}

#[derive(Debug, Clone, Default)]
pub struct MaskOptions {
    /// Interpreter for the compile check; `python3` on `PATH` when `None`.
    pub python: Option<PathBuf>,
}

/// Size of the carved feature (FeatureBench's measures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Lines removed from non-test files.
    pub lines: usize,
    /// Non-test files changed.
    pub files: usize,
    /// Extracted functions and methods.
    pub functions: usize,
    /// Extracted definitions whose parent is not extracted.
    pub top_objects: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaskOutcome {
    /// Files edited in the masked tree (repository-relative), F2P test files included.
    pub changed_files: BTreeSet<String>,
    /// Files absent from the masked tree (the F2P test files).
    pub removed_files: BTreeSet<String>,
    /// Files that differ only because F2P tests were taken out of them (part of
    /// `changed_files`); they belong to the test patch, not to the gold patch.
    pub test_edited_files: BTreeSet<String>,
    pub stats: Stats,
    /// Things the user should know (no interpreter for the compile check, a listed test
    /// that was not found …).
    pub warnings: Vec<String>,
}

/// Directories never copied: VCS data, virtual environments (any directory holding a
/// `pyvenv.cfg`), caches and tool state.
const SKIP_DIRS: &[&str] = &[
    ".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox",
    "node_modules", ".venv", ".hypothesis", ".eggs",
];

/// Repository-relative files of `root` (sorted, `/`-separated), honouring `.gitignore`
/// inside git repositories and skipping [`SKIP_DIRS`] and virtual environments.
pub fn list_tree_files(root: &Path) -> Result<Vec<String>, ExtractError> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_global(false)
        .follow_links(false)
        .filter_entry(|e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && e.depth() > 0
                && (SKIP_DIRS.iter().any(|d| e.file_name() == *d) || e.path().join("pyvenv.cfg").exists()))
        })
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| ExtractError::Walk { path: root.to_path_buf(), message: e.to_string() })?;
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        out.push(rel.join("/"));
    }
    out.sort();
    Ok(out)
}

/// [`mask_tree_with`] with default options.
pub fn mask_tree(root: &Path, index: &DefinitionIndex, plan: &MaskPlan, out: &Path) -> Result<MaskOutcome, ExtractError> {
    mask_tree_with(root, index, plan, out, &MaskOptions::default())
}

fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    match (p.parent(), p.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => absolute(parent).join(name),
        _ => std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf()),
    }
}

/// Test id `path::Class::test[param]` → node id `path::Class.test`.
fn test_node_id(test: &str) -> Option<(String, NodeId)> {
    let test = test.split('[').next().unwrap_or(test);
    let (path, rest) = test.split_once("::")?;
    Some((path.to_string(), format!("{path}::{}", rest.replace("::", "."))))
}

/// Copy `root` to `out` (which must not exist, or be empty, and lie outside `root`), then
/// mask it according to `plan`. `root` is never written.
pub fn mask_tree_with(
    root: &Path,
    index: &DefinitionIndex,
    plan: &MaskPlan,
    out: &Path,
    options: &MaskOptions,
) -> Result<MaskOutcome, ExtractError> {
    let (root_abs, out_abs) = (absolute(root), absolute(out));
    if out_abs.starts_with(&root_abs) {
        return Err(ExtractError::OutputInsideRepository { out: out_abs, root: root_abs });
    }
    if out.exists() && std::fs::read_dir(out).map_err(io_err(out))?.next().is_some() {
        return Err(ExtractError::OutputNotEmpty(out.to_path_buf()));
    }
    let mut outcome = MaskOutcome::default();
    let removals = crate::plan::split_removals(index, &plan.extracted);

    // Per-file extra removals: F2P tests inside files that stay.
    let mut test_removals: BTreeMap<String, BTreeSet<NodeId>> = BTreeMap::new();
    for t in &plan.remove_tests {
        match test_node_id(t) {
            Some((path, id)) if index.definitions.contains_key(&id) => {
                test_removals.entry(path).or_default().insert(id);
            }
            _ => outcome.warnings.push(format!("F2P test {t} has no definition in the index; it was not removed")),
        }
    }

    let mut files: BTreeSet<String> = list_tree_files(root)?.into_iter().collect();
    files.extend(index.files.keys().filter(|p| root.join(p).is_file()).cloned());
    for f in &plan.remove_test_files {
        if files.contains(f) {
            outcome.removed_files.insert(f.clone());
        } else {
            outcome.warnings.push(format!("F2P test file {f} is not in the repository; nothing to remove"));
        }
    }
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let mut originals: BTreeMap<String, String> = BTreeMap::new();
    for rel in files.iter().filter(|f| !outcome.removed_files.contains(*f)) {
        let (src, dst) = (root.join(rel), out.join(rel));
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let meta = std::fs::symlink_metadata(&src).map_err(io_err(&src))?;
        if meta.file_type().is_symlink() {
            copy_symlink(&src, &dst)?;
            continue;
        }
        let Some(file) = index.files.get(rel) else {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
            continue;
        };
        let bytes = std::fs::read(&src).map_err(io_err(&src))?;
        let extra = test_removals.get(rel);
        let owned;
        let remove = match extra {
            Some(e) => {
                owned = removals.delete.union(e).cloned().collect::<BTreeSet<_>>();
                &owned
            }
            None => &removals.delete,
        };
        let edits = match std::str::from_utf8(&bytes) {
            Ok(source) => edit::mask_file(file.language, source, file, index, remove, &removals.stub)
                .map_err(|source| ExtractError::Mask { path: rel.clone(), source })?,
            Err(_) => Vec::new(),
        };
        if edits.is_empty() {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
            continue;
        }
        let source = String::from_utf8(bytes).map_err(|_| ExtractError::NotText { path: rel.clone() })?;
        let masked = edit::apply(&source, &edits).map_err(|source| ExtractError::Apply { path: rel.clone(), source })?;
        if let Some((line, message)) = edit::parse_errors(file.language, &masked).into_iter().next() {
            return Err(ExtractError::MaskedParse { path: rel.clone(), line, message });
        }
        std::fs::write(&dst, &masked).map_err(io_err(&dst))?;
        if let Ok(meta) = std::fs::metadata(&src) {
            let _ = std::fs::set_permissions(&dst, meta.permissions());
        }
        let only_tests = extra.is_some() && {
            let plain = edit::mask_file(file.language, &source, file, index, &removals.delete, &removals.stub)
                .map_err(|source| ExtractError::Mask { path: rel.clone(), source })?;
            plain.is_empty()
        };
        if only_tests {
            outcome.test_edited_files.insert(rel.clone());
        }
        outcome.changed_files.insert(rel.clone());
        originals.insert(rel.clone(), source);
    }

    // Compile check, Python files in one process.
    let py: Vec<&String> = outcome
        .changed_files
        .iter()
        .filter(|p| index.files.get(*p).is_some_and(|f| f.language == Language::Python))
        .collect();
    if !py.is_empty() {
        compile_check(out, &py, options, &mut outcome.warnings)?;
    }

    // Stats.
    for (rel, old) in &originals {
        let is_test = index.files.get(rel).is_some_and(|f| f.is_test);
        if is_test || outcome.test_edited_files.contains(rel) {
            continue;
        }
        let new = std::fs::read_to_string(out.join(rel)).map_err(io_err(out.join(rel)))?;
        outcome.stats.files += 1;
        outcome.stats.lines += removed_lines(old, &new);
    }
    for id in &plan.extracted {
        let Some(d) = index.definitions.get(id) else { continue };
        if matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method) {
            outcome.stats.functions += 1;
        }
        if d.parent.as_ref().is_none_or(|p| !plan.extracted.contains(p)) {
            outcome.stats.top_objects += 1;
        }
    }
    Ok(outcome)
}

fn removed_lines(old: &str, new: &str) -> usize {
    let diff = similar::TextDiff::from_lines(old, new);
    diff.iter_all_changes().filter(|c| c.tag() == similar::ChangeTag::Delete).count()
}

#[cfg(unix)]
fn copy_symlink(src: &Path, dst: &Path) -> Result<(), ExtractError> {
    let target = std::fs::read_link(src).map_err(io_err(src))?;
    std::os::unix::fs::symlink(target, dst).map_err(io_err(dst))
}

#[cfg(not(unix))]
fn copy_symlink(src: &Path, dst: &Path) -> Result<(), ExtractError> {
    std::fs::copy(src, dst).map(|_| ()).map_err(io_err(src))
}

/// `compile()` every file in one interpreter (no bytecode written); the first failure is
/// an error naming the file and line.
const COMPILE_SCRIPT: &str = r#"
import sys
bad = 0
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except SyntaxError as e:
        print(f"{path}\t{e.lineno or 0}\t{e.msg}")
        bad = 1
    except (ValueError, OSError) as e:
        print(f"{path}\t0\t{e}")
        bad = 1
sys.exit(bad)
"#;

fn compile_check(out: &Path, files: &[&String], options: &MaskOptions, warnings: &mut Vec<String>) -> Result<(), ExtractError> {
    let python = options.python.clone().unwrap_or_else(|| PathBuf::from("python3"));
    let mut cmd = Command::new(&python);
    cmd.arg("-c").arg(COMPILE_SCRIPT).args(files.iter().map(|f| f.as_str())).current_dir(out);
    cmd.env("PYTHONDONTWRITEBYTECODE", "1");
    let output = match cmd.output() {
        Ok(o) => o,
        Err(e) => {
            warnings.push(format!(
                "could not run {} ({e}); masked files were checked by parsing only, not compiled",
                python.display()
            ));
            return Ok(());
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    if let Some(line) = stdout.lines().next() {
        let mut parts = line.splitn(3, '\t');
        let path = parts.next().unwrap_or("").to_string();
        let lineno = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
        let message = parts.next().unwrap_or("").to_string();
        return Err(ExtractError::MaskedCompile { path, line: lineno, message });
    }
    Err(ExtractError::Command {
        command: format!("{} -c <compile check>", python.display()),
        message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::build_patches;

    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, DefinitionIndex) {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
        (dir, DefinitionIndex::from_sources(&sources))
    }

    const LIB: &str = "def keep():\n    return 1\n\n\ndef feature():\n    return 2\n";
    const TESTS: &str = "from pkg.lib import keep, feature\n\n\ndef test_keep():\n    assert keep() == 1\n\n\ndef test_feature():\n    assert feature() == 2\n";

    #[test]
    fn removes_tests_inside_files_that_stay_and_routes_them_to_the_test_patch() {
        let (dir, index) = repo(&[("pkg/__init__.py", ""), ("pkg/lib.py", LIB), ("tests/test_lib.py", TESTS), ("data/blob.bin", "\u{0}\u{1}")]);
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        std::fs::create_dir_all(dir.path().join("venv")).unwrap();
        std::fs::write(dir.path().join("venv/pyvenv.cfg"), "home = x").unwrap();
        let out = tempfile::tempdir().unwrap();
        let masked = out.path().join("m");
        let plan = MaskPlan {
            extracted: ["pkg/lib.py::feature".to_string()].into(),
            remove_tests: ["tests/test_lib.py::test_feature".to_string(), "tests/test_lib.py::test_missing[1]".to_string()].into(),
            ..Default::default()
        };
        let outcome = mask_tree(dir.path(), &index, &plan, &masked).unwrap();
        assert_eq!(std::fs::read_to_string(masked.join("pkg/lib.py")).unwrap(), "def keep():\n    return 1\n");
        assert_eq!(
            std::fs::read_to_string(masked.join("tests/test_lib.py")).unwrap(),
            "from pkg.lib import keep\n\n\ndef test_keep():\n    assert keep() == 1\n"
        );
        assert!(masked.join("data/blob.bin").exists());
        assert!(!masked.join(".git").exists() && !masked.join("venv").exists());
        assert_eq!(outcome.changed_files, ["pkg/lib.py".to_string(), "tests/test_lib.py".to_string()].into());
        // The test file also lost an import of the feature, so it is not a test-only edit.
        assert!(outcome.test_edited_files.is_empty());
        assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
        assert!(outcome.warnings[0].contains("test_missing"));
        assert_eq!(outcome.stats, Stats { lines: 4, files: 1, functions: 1, top_objects: 1 });
        let patches = build_patches(dir.path(), &masked, &outcome).unwrap();
        assert!(patches.mask.contains("a/tests/test_lib.py") && patches.test.is_empty());
    }

    #[test]
    fn a_test_only_edit_goes_to_the_test_patch() {
        let tests = "def test_keep():\n    assert True\n\n\ndef test_feature():\n    assert False\n";
        let (dir, index) = repo(&[("pkg/lib.py", LIB), ("tests/test_lib.py", tests)]);
        let masked = tempfile::tempdir().unwrap();
        let plan = MaskPlan { remove_tests: ["tests/test_lib.py::test_feature".to_string()].into(), ..Default::default() };
        let outcome = mask_tree(dir.path(), &index, &plan, masked.path()).unwrap();
        assert_eq!(outcome.test_edited_files, ["tests/test_lib.py".to_string()].into());
        let patches = build_patches(dir.path(), masked.path(), &outcome).unwrap();
        assert!(patches.mask.is_empty() && patches.gold.is_empty());
        assert!(patches.test.contains("+def test_feature():"), "{}", patches.test);
    }

    #[test]
    fn refuses_an_output_inside_the_repository_or_not_empty() {
        let (dir, index) = repo(&[("pkg/lib.py", LIB)]);
        let plan = MaskPlan::default();
        let err = mask_tree(dir.path(), &index, &plan, &dir.path().join("out")).unwrap_err();
        assert!(matches!(err, ExtractError::OutputInsideRepository { .. }), "{err}");
        assert!(!dir.path().join("out").exists());
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("x"), "").unwrap();
        let err = mask_tree(dir.path(), &index, &plan, out.path()).unwrap_err();
        assert!(matches!(err, ExtractError::OutputNotEmpty(_)), "{err}");
    }

    #[test]
    fn a_stale_index_is_an_error_naming_the_file() {
        let (dir, index) = repo(&[("pkg/lib.py", LIB)]);
        std::fs::write(dir.path().join("pkg/lib.py"), "x = 1\n").unwrap();
        let out = tempfile::tempdir().unwrap();
        let plan = MaskPlan { extracted: ["pkg/lib.py::feature".to_string()].into(), ..Default::default() };
        let err = mask_tree(dir.path(), &index, &plan, &out.path().join("m")).unwrap_err();
        assert!(err.to_string().contains("pkg/lib.py"), "{err}");
    }

    #[test]
    fn compile_errors_name_the_file_and_line() {
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("bad.py"), "x = 1\nreturn 2\n").unwrap();
        let mut warnings = Vec::new();
        let file = "bad.py".to_string();
        match compile_check(out.path(), &[&file], &MaskOptions::default(), &mut warnings) {
            Err(ExtractError::MaskedCompile { path, line, .. }) => assert_eq!((path.as_str(), line), ("bad.py", 2)),
            Ok(()) => assert!(!warnings.is_empty(), "no python and no warning"),
            Err(e) => panic!("{e}"),
        }
        let missing = MaskOptions { python: Some(PathBuf::from("/nonexistent/python")) };
        compile_check(out.path(), &[&file], &missing, &mut warnings).unwrap();
        assert!(warnings.iter().any(|w| w.contains("/nonexistent/python")));
    }
}
