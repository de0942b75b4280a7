//! The masked tree: a copy of the repository with the extracted definitions deleted (their
//! imports cleaned up, emptied blocks filled) and the F2P tests removed. The repository
//! itself is only read. Every changed file is checked to re-parse with zero error nodes and,
//! for Python, to `compile()` (one `python3` process for all files; skipped with a warning
//! when there is no interpreter).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use carve_languages::index::{DefinitionIndex, DefinitionKind, FileIndex, NodeId};
use carve_languages::{Language, edit};

use crate::plan::{RemovedTests, split_removals_with};
use crate::{ExtractError, io_err};

/// What to take out of the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MaskPlan {
    /// Definitions to delete (node ids of any file).
    pub extracted: BTreeSet<NodeId>,
    /// F2P test files to delete, repository-relative.
    pub remove_test_files: BTreeSet<String>,
    /// F2P test ids, in the runner's format (`path::Class::test[param]`,
    /// `importpath/TestX/sub`, `target::module::test`, `path > describe > test`), to delete
    /// from files that stay; the whole test function goes, so every parametrization or
    /// subtest of it goes too.
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
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "node_modules",
    ".venv",
    ".hypothesis",
    ".eggs",
];

/// Repository-relative files of `root` (sorted, `/`-separated), skipping [`SKIP_DIRS`] and
/// virtual environments. Git-ignored files are listed too: the masked state holds every
/// file the tests can see, generated ones included (a `_version.py` written at install
/// time), as the shadow copy the tests ran in at baseline does.
pub fn list_tree_files(root: &Path) -> Result<Vec<String>, ExtractError> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .ignore(false)
        .git_ignore(false)
        .git_exclude(false)
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
pub fn mask_tree(
    root: &Path,
    index: &DefinitionIndex,
    plan: &MaskPlan,
    out: &Path,
) -> Result<MaskOutcome, ExtractError> {
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

/// The definitions an F2P test id names, in any runner's id format (see `design.md`, "Test
/// ids"), looked up in the index:
///
/// - pytest `path::Class::test[param]` (and carve's file form `path::Name::sub` for other
///   languages): the definition `path::Class.test`; every parametrization goes with it;
/// - `go test` `importpath/TestX/sub`: the `TestX` function of a `_test.go` file of package
///   `importpath` (a subtest takes its whole top-level test along);
/// - cargo `target::module::test`: the `#[test]` function whose module path inside its
///   crate is `module` — in a `#[cfg(test)]` module of a source file or in `tests/*.rs` —
///   and whose crate is `target` (read from the package's `Cargo.toml`);
/// - vitest / jest / node:test `path > describe > test`: the `describe`/`it`/`test` block of
///   `path` with those titles.
///
/// `Err` says why nothing was found, for the warning.
fn test_definitions(root: &Path, index: &DefinitionIndex, test: &str) -> Result<Vec<NodeId>, String> {
    if let Some((path, rest)) = test.split_once("::")
        && let Some(file) = index.files.get(path)
    {
        return file_form_test(index, file, rest);
    }
    if let Some((path, rest)) = test.split_once(" > ") {
        return js_test(index, path, rest);
    }
    let go = index.files.values().any(|f| f.language == Language::Go && f.is_test);
    if go && !test.contains("::") {
        return match carve_languages::go::test_definition(index, test) {
            Some(id) => Ok(vec![id]),
            None => Err(go_miss(index, test)),
        };
    }
    if index.files.values().any(|f| f.language == Language::Rust) && test.contains("::") {
        return cargo_test(root, index, test);
    }
    match test.split_once("::") {
        Some((path, _)) => Err(format!("{path} is not an indexed file")),
        None => Err("it is not in any test id format carve knows".to_string()),
    }
}

/// Definitions of `file` with qualified name `qual` (several when `@L<line>` tells apart
/// same-named ones: the runner cannot tell them apart either).
fn named_in_file(index: &DefinitionIndex, file: &FileIndex, qual: &str) -> Vec<NodeId> {
    file.definitions.iter().filter(|id| index.get(id).is_some_and(|d| d.qualname == qual)).cloned().collect()
}

/// `path::Class::test[param]`, or a Go `path::TestX/sub`.
fn file_form_test(index: &DefinitionIndex, file: &FileIndex, rest: &str) -> Result<Vec<NodeId>, String> {
    let found = named_in_file(index, file, &rest.replace("::", "."));
    if !found.is_empty() {
        return Ok(found);
    }
    let base = match file.language {
        Language::Go => rest.split('/').next().unwrap_or(rest),
        _ => rest.split('[').next().unwrap_or(rest),
    };
    let qual = base.replace("::", ".");
    let found = named_in_file(index, file, &qual);
    if found.is_empty() {
        return Err(format!("{} defines no `{qual}`", file.path));
    }
    Ok(found)
}

/// vitest/jest/node:test `path > describe > test`: the block with those titles.
fn js_test(index: &DefinitionIndex, path: &str, rest: &str) -> Result<Vec<NodeId>, String> {
    let Some(file) = index.files.get(path) else {
        return Err(format!("{path} is not an indexed file"));
    };
    let qual = rest.split(" > ").collect::<Vec<_>>().join(".");
    let found: Vec<NodeId> =
        named_in_file(index, file, &qual).into_iter().filter(|id| index.get(id).is_some_and(|d| d.is_test)).collect();
    if found.is_empty() {
        return Err(format!(
            "{path} has no `describe`/`it`/`test` block titled `{rest}` with a literal title (tests made by \
             `.each`, loops or computed titles have no block of their own; remove the whole file instead)"
        ));
    }
    Ok(found)
}

/// Why a `go test` id names no test function.
fn go_miss(index: &DefinitionIndex, test: &str) -> String {
    let package = index
        .files
        .values()
        .filter(|f| f.language == Language::Go && f.is_test)
        .filter_map(|f| f.module.as_deref())
        .filter(|m| test.strip_prefix(*m).is_some_and(|r| r.starts_with('/')))
        .max_by_key(|m| m.len());
    match package {
        Some(p) => {
            let name = test[p.len() + 1..].split('/').next().unwrap_or("");
            format!("no `_test.go` file of package {p} defines func {name}")
        }
        None => format!("no indexed `_test.go` file belongs to a package that {test} starts with"),
    }
}

/// Where a Rust file sits: its package directory, the target it belongs to when that is not
/// the package's library (or `src/main.rs` binary) — `tests/x.rs` and `tests/x/main.rs` are
/// target `x`, `src/bin/x.rs` is `x` — and its module path inside that crate.
struct RustPlace {
    package: String,
    target: Option<String>,
    module: Vec<String>,
}

fn rust_place(path: &str) -> RustPlace {
    fn stem(f: &str) -> &str {
        f.strip_suffix(".rs").unwrap_or(f)
    }
    /// `a/b.rs`, `a/b/mod.rs` → `[a, b]`; a root file (`lib.rs`, `main.rs`) → `[]`.
    fn module_of(rest: &[&str]) -> Vec<String> {
        let Some((last, dirs)) = rest.split_last() else { return Vec::new() };
        let mut out: Vec<String> = dirs.iter().map(|s| s.to_string()).collect();
        let last = stem(last);
        if !(last == "mod" || (dirs.is_empty() && (last == "lib" || last == "main"))) {
            out.push(last.to_string());
        }
        out
    }
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len() - 1];
    let Some(i) = dirs.iter().position(|d| ["src", "tests", "examples", "benches"].contains(d)) else {
        return RustPlace { package: dirs.join("/"), target: None, module: module_of(&parts[dirs.len()..]) };
    };
    let package = parts[..i].join("/");
    let rest = &parts[i + 1..];
    match parts[i] {
        "src" if rest.len() >= 2 && rest[0] == "bin" => {
            RustPlace { package, target: Some(stem(rest[1]).to_string()), module: module_of(&rest[2..]) }
        }
        "src" => RustPlace { package, target: None, module: module_of(rest) },
        _ => RustPlace { package, target: Some(stem(rest[0]).to_string()), module: module_of(&rest[1..]) },
    }
}

/// The package's library crate name (`[lib] name`, else the package name, `-` as `_`) and
/// package name, from its `Cargo.toml`.
fn cargo_names(root: &Path, package: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(package).join("Cargo.toml")) else { return Vec::new() };
    let (mut table, mut names) = ("", Vec::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line;
        } else if (table == "[package]" || table == "[lib]")
            && let Some(v) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('='))
        {
            let v = v.trim().trim_matches('"').to_string();
            names.push(v.replace('-', "_"));
            names.push(v);
        }
    }
    names
}

/// cargo `target::module::test`: the Rust test function at `module::test` of a crate named
/// `target` (`target(test)`, `target(pkg)` suffixes tell apart same-named targets). The
/// target is only checked when several crates have a test at that path.
fn cargo_test(root: &Path, index: &DefinitionIndex, test: &str) -> Result<Vec<NodeId>, String> {
    let (label, name) = test.split_once("::").unwrap_or((test, ""));
    if name == "doctest" || name.starts_with("doctest::") {
        return Err("it is a doctest: it lives in a doc comment, not in a test function".to_string());
    }
    let base = label.split('(').next().unwrap_or(label);
    let suffixes: Vec<&str> = label.split('(').skip(1).map(|s| s.trim_end_matches(')')).collect();
    let mut candidates: Vec<(&carve_languages::index::Definition, RustPlace)> = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Rust && d.is_test && d.kind == DefinitionKind::Function)
        .filter_map(|d| {
            let place = rust_place(&d.path);
            let path: Vec<&str> = place.module.iter().map(String::as_str).chain(d.qualname.split('.')).collect();
            (path.join("::") == name).then_some((d, place))
        })
        .collect();
    if candidates.is_empty() {
        return Err(format!("no Rust test function has the path `{name}` inside its crate"));
    }
    if candidates.len() > 1 {
        let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
        candidates.retain(|(_, p)| {
            let names = names.entry(p.package.clone()).or_insert_with(|| cargo_names(root, &p.package));
            let target_matches = match &p.target {
                Some(t) => t == base,
                None => names.iter().any(|n| n == base),
            };
            let package_matches = suffixes
                .iter()
                .all(|s| ["lib", "bin", "test", "bench", "example"].contains(s) || names.iter().any(|n| n == s));
            target_matches && package_matches
        });
    }
    match candidates.as_slice() {
        [] => Err(format!("no Rust test function at `{name}` belongs to the target `{label}`")),
        [(d, _)] => Ok(vec![d.id.clone()]),
        many => Err(format!(
            "it names several test functions ({}); remove them with --remove instead",
            many.iter().map(|(d, _)| d.id.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
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

    // Per-file extra removals: F2P tests inside files that stay.
    let mut test_removals: BTreeMap<String, BTreeSet<NodeId>> = BTreeMap::new();
    for t in &plan.remove_tests {
        match test_definitions(root, index, t) {
            Ok(ids) => {
                for id in ids {
                    let path = index.get(&id).map(|d| d.path.clone()).unwrap_or_default();
                    test_removals.entry(path).or_default().insert(id);
                }
            }
            Err(why) => outcome.warnings.push(format!("F2P test {t} was not removed: {why}")),
        }
    }
    // What only the removed tests use is deleted, not stubbed.
    let removed_tests = RemovedTests {
        definitions: test_removals.values().flatten().cloned().collect(),
        files: plan.remove_test_files.clone(),
    };
    let removals = split_removals_with(index, &plan.extracted, &removed_tests);

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
        let masked =
            edit::apply(&source, &edits).map_err(|source| ExtractError::Apply { path: rel.clone(), source })?;
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

fn compile_check(
    out: &Path,
    files: &[&String],
    options: &MaskOptions,
    warnings: &mut Vec<String>,
) -> Result<(), ExtractError> {
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
        let sources: Vec<(String, Vec<u8>)> =
            files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
        (dir, DefinitionIndex::from_sources(&sources))
    }

    const LIB: &str = "def keep():\n    return 1\n\n\ndef feature():\n    return 2\n";
    const TESTS: &str = "from pkg.lib import keep, feature\n\n\ndef test_keep():\n    assert keep() == 1\n\n\ndef test_feature():\n    assert feature() == 2\n";

    #[test]
    fn removes_tests_inside_files_that_stay_and_routes_them_to_the_test_patch() {
        let (dir, index) = repo(&[
            ("pkg/__init__.py", ""),
            ("pkg/lib.py", LIB),
            ("tests/test_lib.py", TESTS),
            ("data/blob.bin", "\u{0}\u{1}"),
        ]);
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        std::fs::create_dir_all(dir.path().join("venv")).unwrap();
        std::fs::write(dir.path().join("venv/pyvenv.cfg"), "home = x").unwrap();
        let out = tempfile::tempdir().unwrap();
        let masked = out.path().join("m");
        let plan = MaskPlan {
            extracted: ["pkg/lib.py::feature".to_string()].into(),
            remove_tests: [
                "tests/test_lib.py::test_feature".to_string(),
                "tests/test_lib.py::test_missing[1]".to_string(),
            ]
            .into(),
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
        let plan =
            MaskPlan { remove_tests: ["tests/test_lib.py::test_feature".to_string()].into(), ..Default::default() };
        let outcome = mask_tree(dir.path(), &index, &plan, masked.path()).unwrap();
        assert_eq!(outcome.test_edited_files, ["tests/test_lib.py".to_string()].into());
        let patches = build_patches(dir.path(), masked.path(), &outcome).unwrap();
        assert!(patches.mask.is_empty() && patches.gold.is_empty());
        assert!(patches.test.contains("+def test_feature():"), "{}", patches.test);
    }

    fn found(root: &Path, index: &DefinitionIndex, test: &str) -> Vec<NodeId> {
        test_definitions(root, index, test).unwrap_or_else(|why| panic!("{test}: {why}"))
    }

    fn missing(root: &Path, index: &DefinitionIndex, test: &str) -> String {
        match test_definitions(root, index, test) {
            Ok(ids) => panic!("{test} resolved to {ids:?}"),
            Err(why) => why,
        }
    }

    #[test]
    fn go_test_ids_name_the_test_function_of_their_package() {
        let (dir, index) = repo(&[
            ("go.mod", "module example.com/m\n\ngo 1.22\n"),
            ("geo/geo.go", "package geo\n\nfunc Area() int { return 1 }\n"),
            (
                "geo/geo_test.go",
                "package geo\n\nimport \"testing\"\n\nfunc TestArea(t *testing.T) {\n\tt.Run(\"unit square\", func(t *testing.T) { _ = Area() })\n}\n",
            ),
            ("geo/sub/sub_test.go", "package sub\n\nimport \"testing\"\n\nfunc TestArea(t *testing.T) {}\n"),
        ]);
        let root = dir.path();
        assert_eq!(found(root, &index, "example.com/m/geo/TestArea"), vec!["geo/geo_test.go::TestArea".to_string()]);
        // A subtest takes its top-level test; the longest package path wins.
        assert_eq!(
            found(root, &index, "example.com/m/geo/TestArea/unit_square"),
            vec!["geo/geo_test.go::TestArea".to_string()]
        );
        assert_eq!(
            found(root, &index, "example.com/m/geo/sub/TestArea"),
            vec!["geo/sub/sub_test.go::TestArea".to_string()]
        );
        // carve's file form works too.
        assert_eq!(
            found(root, &index, "geo/geo_test.go::TestArea/unit_square"),
            vec!["geo/geo_test.go::TestArea".to_string()]
        );
        assert!(
            missing(root, &index, "example.com/m/geo/TestNope")
                .contains("package example.com/m/geo defines func TestNope")
        );
        assert!(missing(root, &index, "example.com/other/TestArea").contains("no indexed `_test.go` file"));
    }

    const CARGO: &str = "[package]\nname = \"geo-lib\"\nversion = \"0.1.0\"\n";
    const RUST_LIB: &str = "pub fn area() -> u32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn area_is_one() { assert_eq!(area(), 1); }\n\n    #[test]\n    fn other() {}\n}\n";

    #[test]
    fn cargo_test_ids_name_test_functions_in_source_and_integration_files() {
        let (dir, index) = repo(&[
            ("Cargo.toml", CARGO),
            ("src/lib.rs", "pub mod shapes;\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn other() {}\n}\n"),
            ("src/shapes.rs", RUST_LIB),
            ("src/bin/tool.rs", "fn main() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn other() {}\n}\n"),
            ("tests/it.rs", "#[test]\nfn whole() { assert_eq!(geo_lib::shapes::area(), 1); }\n"),
            ("tests/multi/main.rs", "mod tests {\n    #[test]\n    fn other() {}\n}\n"),
        ]);
        let root = dir.path();
        assert_eq!(
            found(root, &index, "geo_lib::shapes::tests::area_is_one"),
            vec!["src/shapes.rs::tests.area_is_one".to_string()]
        );
        assert_eq!(found(root, &index, "it::whole"), vec!["tests/it.rs::whole".to_string()]);
        // `tests::other` is in the library, the binary `tool` and the test target `multi`.
        assert_eq!(found(root, &index, "geo_lib::tests::other"), vec!["src/lib.rs::tests.other".to_string()]);
        assert_eq!(found(root, &index, "tool::tests::other"), vec!["src/bin/tool.rs::tests.other".to_string()]);
        assert_eq!(found(root, &index, "multi::tests::other"), vec!["tests/multi/main.rs::tests.other".to_string()]);
        assert!(missing(root, &index, "geo_lib::doctest::src/lib.rs - area (line 1)").contains("doctest"));
        assert!(missing(root, &index, "geo_lib::shapes::tests::nope").contains("`shapes::tests::nope`"));
        assert!(missing(root, &index, "nobody::tests::other").contains("target `nobody`"));
    }

    #[test]
    fn removing_a_rust_test_inside_a_source_file_removes_just_that_function() {
        let (dir, index) = repo(&[("Cargo.toml", CARGO), ("src/lib.rs", RUST_LIB)]);
        let out = tempfile::tempdir().unwrap();
        let plan = MaskPlan { remove_tests: ["geo_lib::tests::area_is_one".to_string()].into(), ..Default::default() };
        let outcome = mask_tree(dir.path(), &index, &plan, &out.path().join("m")).unwrap();
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        let lib = std::fs::read_to_string(out.path().join("m/src/lib.rs")).unwrap();
        assert!(
            !lib.contains("area_is_one") && lib.contains("fn other() {}") && lib.contains("pub fn area()"),
            "{lib}"
        );
        assert_eq!(outcome.test_edited_files, ["src/lib.rs".to_string()].into());
    }

    #[test]
    fn js_test_ids_name_describe_and_it_blocks() {
        let test = "import { describe, it, test } from \"vitest\";\n\ndescribe(\"Money\", () => {\n  it(\"adds\", () => {});\n  it(\"keeps cents\", () => {});\n});\n\ntest(\"alone\", () => {});\n\ntest.each([1, 2])(\"case %i\", (n) => {});\n";
        let (dir, index) = repo(&[("tests/money.test.ts", test)]);
        let root = dir.path();
        assert_eq!(
            found(root, &index, "tests/money.test.ts > Money > adds"),
            vec!["tests/money.test.ts::Money.adds".to_string()]
        );
        assert_eq!(found(root, &index, "tests/money.test.ts > alone"), vec!["tests/money.test.ts::alone".to_string()]);
        let why = missing(root, &index, "tests/money.test.ts > case 1");
        assert!(why.contains("no `describe`/`it`/`test` block titled `case 1`") && why.contains(".each"), "{why}");
        assert!(missing(root, &index, "tests/gone.test.ts > x").contains("tests/gone.test.ts is not an indexed file"));
        let out = tempfile::tempdir().unwrap();
        let plan = MaskPlan {
            remove_tests: ["tests/money.test.ts > Money > keeps cents".to_string()].into(),
            ..Default::default()
        };
        mask_tree(root, &index, &plan, &out.path().join("m")).unwrap();
        let masked = std::fs::read_to_string(out.path().join("m/tests/money.test.ts")).unwrap();
        assert!(!masked.contains("keeps cents") && masked.contains("it(\"adds\""), "{masked}");
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
