//! The masked tree: a copy of the repository with the extracted definitions deleted (their
//! imports cleaned up, emptied blocks filled) and the F2P tests removed. The repository
//! itself is only read. Every changed file is checked to re-parse with zero error nodes and
//! to pass its language's own check of masked files, if it has one (Python's `compile()`:
//! one interpreter process for all files; skipped with a warning when there is none).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use carve_languages::edit::{self, MaskedCheck};
use carve_languages::index::{DefinitionIndex, DefinitionKind, NodeId};
use carve_languages::{Language, MaskRequest, Masking, support};

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
    /// Call statements whose value is discarded to delete with the definitions they call,
    /// per repository-relative file (spans of the index's `DiscardedCall`s).
    pub remove_calls: BTreeMap<String, Vec<carve_languages::index::Span>>,
}

#[derive(Debug, Clone, Default)]
pub struct MaskOptions {
    /// Interpreter for the languages' checks of masked files (Python's `compile()`); the
    /// language's default (`python3` on `PATH`) when `None`.
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
    /// Changed files whose every change belongs to the test patch, not to the gold patch
    /// (part of `changed_files`): files that differ only because F2P tests were taken out
    /// of them, and changed test files (whatever a test file loses, the import of a removed
    /// definition included, is test code).
    pub test_edited_files: BTreeSet<String>,
    /// Changed files that are not test files and lost both feature code and F2P tests (a
    /// Rust source file and its inline test module): their changes are split between the
    /// gold and the test patch through the two intermediate states.
    pub split_files: BTreeMap<String, SplitFile>,
    pub stats: Stats,
    /// Things the user should know (no interpreter for the compile check, a listed test
    /// that was not found …).
    pub warnings: Vec<String>,
}

/// The two intermediate states of a file whose changes are split between the gold and the
/// test patch: masked + gold.patch holds `code_restored`, masked + test.patch holds
/// `tests_restored`, and both patches applied (in either order) give the original.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitFile {
    /// The original with only the F2P tests taken out (the feature's code is back).
    pub code_restored: String,
    /// The original with only the feature's code masked (the F2P tests are back).
    pub tests_restored: String,
}

/// Repository-relative files of `root` (sorted, `/`-separated) that a masked tree holds:
/// those of a shadow copy without the installed dependencies
/// (`carve_languages::skip_policy`, which leaves out version control, caches and
/// environments; the dependencies are linked in afterwards, never masked). Git-ignored files
/// are listed too: the masked state holds every file the tests can see, generated ones
/// included (a `_version.py` written at install time), as the shadow copy the tests ran in at
/// baseline does.
pub fn list_tree_files(root: &Path) -> Result<Vec<String>, ExtractError> {
    Ok(carve_core::tree::list_files(root, &carve_languages::skip_policy().without_dependencies())?)
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
    let test_removals = tests_to_remove(root, index, plan, &mut outcome.warnings);
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
    let masker = TreeMasker::new(root, out, index, plan, &removals, &test_removals);
    let mut originals: BTreeMap<String, String> = BTreeMap::new();
    files.retain(|f| !outcome.removed_files.contains(f));
    for rel in &files {
        if let Some(source) = masker.file(rel, &mut outcome)? {
            outcome.changed_files.insert(rel.clone());
            originals.insert(rel.clone(), source);
        }
    }
    check_masked(out, index, options, &mut outcome)?;
    outcome.stats = stats(out, index, plan, &outcome, &originals)?;
    Ok(outcome)
}

/// Per file, the F2P test definitions to take out of files that stay; a listed test that
/// cannot be found is a warning.
fn tests_to_remove(
    root: &Path,
    index: &DefinitionIndex,
    plan: &MaskPlan,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, BTreeSet<NodeId>> {
    let mut test_removals: BTreeMap<String, BTreeSet<NodeId>> = BTreeMap::new();
    for t in &plan.remove_tests {
        match carve_languages::test_definitions(root, index, t) {
            Ok(ids) => {
                for id in ids {
                    let path = index.get(&id).map(|d| d.path.clone()).unwrap_or_default();
                    test_removals.entry(path).or_default().insert(id);
                }
            }
            Err(why) => warnings.push(format!("F2P test {t} was not removed: {why}")),
        }
    }
    test_removals
}

/// Writes the masked tree file by file: one plan per language for the whole tree; a file
/// that loses F2P tests too is masked with its own removal set (its plan covers that set).
struct TreeMasker<'a> {
    root: &'a Path,
    out: &'a Path,
    index: &'a DefinitionIndex,
    plan: &'a MaskPlan,
    removals: &'a crate::plan::Removals,
    test_removals: &'a BTreeMap<String, BTreeSet<NodeId>>,
    plans: BTreeMap<Language, Box<dyn Masking + 'a>>,
    /// Test-configuration lines that only list a deleted definition (`"ignore::pkg.W",`):
    /// they go with it.
    config_drops: BTreeMap<&'a str, BTreeSet<usize>>,
}

impl<'a> TreeMasker<'a> {
    fn new(
        root: &'a Path,
        out: &'a Path,
        index: &'a DefinitionIndex,
        plan: &'a MaskPlan,
        removals: &'a crate::plan::Removals,
        test_removals: &'a BTreeMap<String, BTreeSet<NodeId>>,
    ) -> Self {
        let plans = carve_languages::families()
            .map(|s| (s.language(), s.plan_mask(Self::request(index, plan, removals, &removals.delete))))
            .collect();
        let mut config_drops: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
        for r in index.config_references.iter().filter(|r| r.removable && removals.delete.contains(&r.target)) {
            config_drops.entry(r.path.as_str()).or_default().insert(r.line);
        }
        TreeMasker { root, out, index, plan, removals, test_removals, plans, config_drops }
    }

    fn request<'r>(
        index: &'r DefinitionIndex,
        plan: &'r MaskPlan,
        removals: &'r crate::plan::Removals,
        delete: &'r BTreeSet<NodeId>,
    ) -> MaskRequest<'r> {
        MaskRequest::new(index, delete, &removals.stub)
            .with_calls(&plan.remove_calls)
            .removing_files(&plan.remove_test_files)
    }

    /// Copies or masks `rel` into the masked tree; `Some(original)` when it changed.
    fn file(&self, rel: &String, outcome: &mut MaskOutcome) -> Result<Option<String>, ExtractError> {
        let (src, dst) = (self.root.join(rel), self.out.join(rel));
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        let meta = std::fs::symlink_metadata(&src).map_err(io_err(&src))?;
        if meta.file_type().is_symlink() {
            copy_symlink(&src, &dst)?;
            return Ok(None);
        }
        let Some(file) = self.index.files.get(rel) else {
            return self.unindexed(rel, &src, &dst);
        };
        let bytes = std::fs::read(&src).map_err(io_err(&src))?;
        let extra = self.test_removals.get(rel);
        let remove: BTreeSet<NodeId>;
        let own_plan;
        let masking: &dyn Masking = match extra {
            Some(e) => {
                remove = self.removals.delete.union(e).cloned().collect();
                own_plan =
                    support(file.language).plan_mask(Self::request(self.index, self.plan, self.removals, &remove));
                &*own_plan
            }
            None => &*self.plans[&support(file.language).family()[0]],
        };
        let edits = match std::str::from_utf8(&bytes) {
            Ok(source) => {
                masking.mask_file(source, file).map_err(|source| ExtractError::Mask { path: rel.clone(), source })?
            }
            Err(_) => Vec::new(),
        };
        if edits.is_empty() {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
            return Ok(None);
        }
        let source = String::from_utf8(bytes).map_err(|_| ExtractError::NotText { path: rel.clone() })?;
        let masked = masked_source(rel, file.language, &source, &edits)?;
        std::fs::write(&dst, &masked).map_err(io_err(&dst))?;
        if let Ok(meta) = std::fs::metadata(&src) {
            let _ = std::fs::set_permissions(&dst, meta.permissions());
        }
        match extra {
            // Every change of a test file is test code.
            _ if file.is_test => {
                outcome.test_edited_files.insert(rel.clone());
            }
            None => {}
            Some(tests) => {
                match split_file(self.index, file, rel, &source, self.removals, &self.plan.remove_calls, tests)? {
                    Some(split) => {
                        outcome.split_files.insert(rel.clone(), split);
                    }
                    None => {
                        outcome.test_edited_files.insert(rel.clone());
                    }
                }
            }
        }
        Ok(Some(source))
    }

    /// A file the index does not hold: copied, less the configuration lines that list only
    /// deleted definitions.
    fn unindexed(&self, rel: &str, src: &Path, dst: &Path) -> Result<Option<String>, ExtractError> {
        let Some(lines) = self.config_drops.get(rel) else {
            std::fs::copy(src, dst).map_err(io_err(src))?;
            return Ok(None);
        };
        let source = std::fs::read_to_string(src).map_err(io_err(src))?;
        let kept: String = source
            .split_inclusive('\n')
            .enumerate()
            .filter(|(i, _)| !lines.contains(&(i + 1)))
            .map(|(_, l)| l)
            .collect();
        std::fs::write(dst, kept).map_err(io_err(dst))?;
        Ok(Some(source))
    }
}

/// `source` with `edits` applied, refused when the edits add parse errors.
fn masked_source(rel: &str, language: Language, source: &str, edits: &[edit::Edit]) -> Result<String, ExtractError> {
    let masked = edit::apply(source, edits).map_err(|source| ExtractError::Apply { path: rel.to_string(), source })?;
    let errors = support(language).parse_errors(&masked);
    // tree-sitter's own gaps (pathe's ``String.raw`.\undefined` ``, valid since ES2018)
    // are in the original too: only errors the edits added are carve's.
    if !errors.is_empty() && errors.len() > support(language).parse_errors(source).len() {
        let (line, message) = errors.into_iter().next().unwrap_or_default();
        return Err(ExtractError::MaskedParse { path: rel.to_string(), line, message });
    }
    Ok(masked)
}

/// The languages' own checks of the masked files (Python: `compile()`), one process each.
fn check_masked(
    out: &Path,
    index: &DefinitionIndex,
    options: &MaskOptions,
    outcome: &mut MaskOutcome,
) -> Result<(), ExtractError> {
    for s in carve_languages::families() {
        let mine: Vec<&String> = outcome
            .changed_files
            .iter()
            .filter(|p| index.files.get(*p).is_some_and(|f| s.family().contains(&f.language)))
            .collect();
        if mine.is_empty() {
            continue;
        }
        match s.check_masked(out, &mine, options.python.as_deref()) {
            MaskedCheck::Passed => {}
            MaskedCheck::Skipped { warning } => outcome.warnings.push(warning),
            MaskedCheck::Failed { path, line, message } => {
                return Err(ExtractError::MaskedCompile { path, line, message });
            }
            MaskedCheck::CommandFailed { command, message } => return Err(ExtractError::Command { command, message }),
        }
    }
    Ok(())
}

/// The feature's size: lines and files of non-test code it changed, its functions and top
/// objects.
fn stats(
    out: &Path,
    index: &DefinitionIndex,
    plan: &MaskPlan,
    outcome: &MaskOutcome,
    originals: &BTreeMap<String, String>,
) -> Result<Stats, ExtractError> {
    let mut stats = Stats::default();
    for (rel, old) in originals {
        let is_test = index.files.get(rel).is_some_and(|f| f.is_test);
        if is_test || outcome.test_edited_files.contains(rel) {
            continue;
        }
        let new = std::fs::read_to_string(out.join(rel)).map_err(io_err(out.join(rel)))?;
        // A split file's F2P tests are not lines of the feature.
        let old = outcome.split_files.get(rel).map_or(old.as_str(), |s| s.code_restored.as_str());
        stats.files += 1;
        stats.lines += removed_lines(old, &new);
    }
    for id in &plan.extracted {
        let Some(d) = index.definitions.get(id) else { continue };
        if matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method) {
            stats.functions += 1;
        }
        if d.parent.as_ref().is_none_or(|p| !plan.extracted.contains(p)) {
            stats.top_objects += 1;
        }
    }
    Ok(stats)
}

/// The intermediate states of a non-test file that loses the F2P test definitions `tests`
/// and maybe feature code too. Removed definitions that are test code themselves (a helper
/// of a `#[cfg(test)]` module only the F2P tests used) go with the tests. `None`: the file
/// loses test code only.
fn split_file(
    index: &DefinitionIndex,
    file: &carve_languages::index::FileIndex,
    rel: &str,
    source: &str,
    removals: &crate::plan::Removals,
    calls: &BTreeMap<String, Vec<carve_languages::index::Span>>,
    tests: &BTreeSet<NodeId>,
) -> Result<Option<SplitFile>, ExtractError> {
    let is_test = |id: &NodeId| index.get(id).is_some_and(|d| d.is_test);
    let (test_delete, code_delete): (BTreeSet<NodeId>, BTreeSet<NodeId>) =
        removals.delete.iter().cloned().partition(|id| is_test(id));
    let (test_stub, code_stub): (BTreeSet<NodeId>, BTreeSet<NodeId>) =
        removals.stub.iter().cloned().partition(|id| is_test(id));
    let test_delete: BTreeSet<NodeId> = test_delete.union(tests).cloned().collect();
    let edits = |delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>, calls: &BTreeMap<String, Vec<_>>| {
        support(file.language)
            .plan_mask(MaskRequest::new(index, delete, stub).with_calls(calls))
            .mask_file(source, file)
            .map_err(|source| ExtractError::Mask { path: rel.to_string(), source })
    };
    let code_only = edits(&code_delete, &code_stub, calls)?;
    if code_only.is_empty() {
        return Ok(None);
    }
    let tests_only = edits(&test_delete, &test_stub, &BTreeMap::new())?;
    let apply = |edits: &[carve_languages::edit::Edit]| {
        edit::apply(source, edits).map_err(|source| ExtractError::Apply { path: rel.to_string(), source })
    };
    Ok(Some(SplitFile { code_restored: apply(&tests_only)?, tests_restored: apply(&code_only)? }))
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
        // The test file also lost an import of the feature: that is test code too.
        assert_eq!(outcome.test_edited_files, ["tests/test_lib.py".to_string()].into());
        assert_eq!(outcome.warnings.len(), 1, "{:?}", outcome.warnings);
        assert!(outcome.warnings[0].contains("test_missing"));
        assert_eq!(outcome.stats, Stats { lines: 4, files: 1, functions: 1, top_objects: 1 });
        let patches = build_patches(dir.path(), &masked, &outcome).unwrap();
        assert!(patches.mask.contains("a/tests/test_lib.py"), "{}", patches.mask);
        // test.patch alone gives the test file back, import included; gold.patch has no test code.
        assert!(patches.test.contains("+from pkg.lib import keep, feature"), "{}", patches.test);
        assert!(patches.test.contains("+def test_feature():"), "{}", patches.test);
        assert!(
            !patches.gold.contains("tests/test_lib.py") && patches.gold.contains("+def feature():"),
            "{}",
            patches.gold
        );
    }

    /// A test-configuration line that only lists a deleted definition goes with it, and the
    /// gold patch puts it back; a line that says more stays.
    #[test]
    fn a_configuration_line_listing_only_a_deleted_definition_goes_with_it() {
        let warnings = "class KeyWarning(Warning):\n    pass\n\n\nclass Other(Warning):\n    pass\n";
        let pyproject = "[tool.pytest.ini_options]\nfilterwarnings = [\n    \"error\",\n    \"ignore::pkg.w.KeyWarning\",\n    \"ignore::pkg.w.Other\",\n]\n";
        let (dir, mut index) = repo(&[("pkg/w.py", warnings), ("pyproject.toml", pyproject)]);
        let reference = |line: usize, name: &str| carve_languages::index::ConfigReference {
            path: "pyproject.toml".into(),
            line,
            target: format!("pkg/w.py::{name}"),
            removable: true,
        };
        index.config_references = vec![reference(4, "KeyWarning"), reference(5, "Other")];
        let masked = tempfile::tempdir().unwrap();
        let plan = MaskPlan { extracted: ["pkg/w.py::KeyWarning".to_string()].into(), ..Default::default() };
        let outcome = mask_tree(dir.path(), &index, &plan, masked.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(masked.path().join("pyproject.toml")).unwrap(),
            "[tool.pytest.ini_options]\nfilterwarnings = [\n    \"error\",\n    \"ignore::pkg.w.Other\",\n]\n"
        );
        assert!(outcome.changed_files.contains("pyproject.toml"));
        let patches = build_patches(dir.path(), masked.path(), &outcome).unwrap();
        assert!(patches.gold.contains("+    \"ignore::pkg.w.KeyWarning\","), "{}", patches.gold);
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
        // mask.patch takes the test out, test.patch puts it back; nothing for gold.patch.
        assert!(patches.mask.contains("-def test_feature():") && patches.gold.is_empty(), "{}", patches.mask);
        assert!(patches.test.contains("+def test_feature():"), "{}", patches.test);
    }

    /// From unjs/pathe's test/index.spec.ts: a tagged template with a `\u` that is no
    /// escape, which tree-sitter's grammar rejects though JavaScript accepts it. Masking the
    /// file elsewhere is no reason to reject it; an edit that breaks the syntax still is.
    #[test]
    fn a_parse_error_the_original_has_is_not_the_masks() {
        let spec = "import { test } from \"vitest\";\n\ntest(\"keeps\", () => {\n  void 1;\n});\n\ntest(\"goes\", () => {\n  void String.raw`.\\undefined`;\n});\n";
        let (dir, index) = repo(&[("tests/a.spec.ts", spec)]);
        assert!(!carve_languages::parse_errors(carve_languages::Language::TypeScript, spec).is_empty());
        let ids = found(dir.path(), &index, "tests/a.spec.ts > keeps");
        let masked = tempfile::tempdir().unwrap();
        let plan = MaskPlan { remove_tests: ids.into_iter().collect(), ..Default::default() };
        mask_tree(dir.path(), &index, &plan, masked.path()).unwrap();
        let text = std::fs::read_to_string(masked.path().join("tests/a.spec.ts")).unwrap();
        assert!(!text.contains("keeps") && text.contains("String.raw"), "{text}");
    }

    fn found(root: &Path, index: &DefinitionIndex, test: &str) -> Vec<NodeId> {
        carve_languages::test_definitions(root, index, test).unwrap_or_else(|why| panic!("{test}: {why}"))
    }

    fn missing(root: &Path, index: &DefinitionIndex, test: &str) -> String {
        match carve_languages::test_definitions(root, index, test) {
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

    /// A Rust source file that loses a feature function and its inline F2P test: gold.patch
    /// puts the function back, test.patch the test, each alone on the masked file and both
    /// in either order.
    #[test]
    fn a_rust_file_losing_code_and_its_inline_test_is_split_between_the_patches() {
        let lib = "pub fn keep() -> u32 { 1 }\n\npub fn area() -> u32 { 2 }\n\npub fn other() -> u32 { 3 }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn keeps() { assert_eq!(keep(), 1); }\n\n    #[test]\n    fn other_is_three() { assert_eq!(other(), 3); }\n\n    #[test]\n    fn area_is_two() { assert_eq!(area(), 2); }\n}\n";
        let (dir, index) = repo(&[("Cargo.toml", CARGO), ("src/lib.rs", lib)]);
        let out = tempfile::tempdir().unwrap();
        let masked = out.path().join("m");
        let plan = MaskPlan {
            extracted: ["src/lib.rs::area".to_string()].into(),
            remove_tests: ["geo_lib::tests::area_is_two".to_string()].into(),
            ..Default::default()
        };
        let outcome = mask_tree(dir.path(), &index, &plan, &masked).unwrap();
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        assert!(outcome.test_edited_files.is_empty());
        assert_eq!(outcome.split_files.keys().collect::<Vec<_>>(), ["src/lib.rs"]);
        let patches = build_patches(dir.path(), &masked, &outcome).unwrap();
        assert!(patches.warnings.is_empty(), "{:?}", patches.warnings);
        assert!(patches.gold.contains("+pub fn area()") && !patches.gold.contains("area_is_two"), "{}", patches.gold);
        assert!(
            patches.test.contains("+    fn area_is_two()") && !patches.test.contains("+pub fn area"),
            "{}",
            patches.test
        );
        let apply = |tree: &Path, patch: &str| {
            carve_core::patch::apply_patch(tree, patch, false, &out.path().join("p.patch")).unwrap();
        };
        for (first, second) in [(&patches.gold, &patches.test), (&patches.test, &patches.gold)] {
            let tree = out.path().join("t");
            let _ = std::fs::remove_dir_all(&tree);
            std::fs::create_dir_all(tree.join("src")).unwrap();
            std::fs::copy(masked.join("src/lib.rs"), tree.join("src/lib.rs")).unwrap();
            apply(&tree, first);
            apply(&tree, second);
            assert_eq!(std::fs::read_to_string(tree.join("src/lib.rs")).unwrap(), lib);
        }
        // The feature's lines only: the test is not part of it.
        assert_eq!(outcome.stats.lines, removed_lines(lib, &lib.replace("pub fn area() -> u32 { 2 }\n\n", "")));
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
}
