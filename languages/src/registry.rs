//! The registry: [`support`], the only `match` on [`Language`] that dispatches, and the
//! functions the rest of carve calls through it. Modelled on ast-grep's `SupportLang`: adding
//! a variant to [`Language`] makes the compiler point here.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use carve_core::tree::SkipPolicy;

use crate::edit::{Edit, MaskError};
use crate::index::{DefinitionIndex, FileIndex, IndexError, IndexOptions, NodeId};
use crate::interface::{LanguageSupport, MaskRequest, named_in_file};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::{Language, go, python, rust, typescript};

static PYTHON: python::Python = python::Python;
static TYPESCRIPT: typescript::Script = typescript::Script::TYPESCRIPT;
static JAVASCRIPT: typescript::Script = typescript::Script::JAVASCRIPT;
static GO: go::Go = go::Go;
static RUST: rust::Rust = rust::Rust;

/// The implementation of `lang`: the only `match` on [`Language`] that dispatches.
pub fn support(lang: Language) -> &'static dyn LanguageSupport {
    match lang {
        Language::Python => &PYTHON,
        Language::TypeScript => &TYPESCRIPT,
        Language::JavaScript => &JAVASCRIPT,
        Language::Go => &GO,
        Language::Rust => &RUST,
    }
}

/// One implementation per family (JavaScript goes with TypeScript), in [`Language::ALL`] order.
pub fn families() -> impl Iterator<Item = &'static dyn LanguageSupport> {
    Language::ALL.iter().map(|l| support(*l)).filter(|s| s.family().first() == Some(&s.language()))
}

/// The implementation whose runner `command` is.
pub fn for_command(command: &TestCommand) -> &'static dyn LanguageSupport {
    support(command.language())
}

/// Run the tests of `req.root` with the runner `req.command` names.
/// The project's build ([`RunRequest::build`]) runs first, once, in the same tree.
pub fn run_tests(req: &RunRequest) -> Result<RunResult, RunnerError> {
    crate::runner::build::run(req)?;
    for_command(&req.command).run_tests(req)
}

/// The ids the runner would run for `req`, without running any test.
pub fn collect_tests(req: &RunRequest) -> Result<Collection, RunnerError> {
    for_command(&req.command).collect_tests(req)
}

/// The shorter id a common harness log parser (SWE-bench's) reports for carve id `id`, or
/// `None` when that parser never reports the test (cargo doctests, whose names hold
/// spaces). Not unique: `go test` names drop the package, cargo names the target, pytest
/// names stop at the first whitespace (`t.py::test[two words]` → `t.py::test[two`).
pub fn harness_id(command: &TestCommand, id: &str) -> Option<String> {
    for_command(command).harness_id(command, id)
}

/// The command line of an exported task's evaluation script that runs `tests` with the
/// runner `command` names (see [`LanguageSupport::eval_command`]).
pub fn eval_command(command: &TestCommand, tests: &[String]) -> Option<String> {
    for_command(command).eval_command(command, tests)
}

/// SWE-bench's log parser for the runner `command` names (see
/// [`LanguageSupport::harness_log_parser`]).
pub fn harness_log_parser(command: &TestCommand) -> Option<&'static str> {
    for_command(command).harness_log_parser(command)
}

/// Detect the test set-up of every language the repository's own files show: those found
/// by a project manifest at the root first, then those found by loose source files only
/// (`scripts/*.py` beside a `Cargo.toml`), each part in `Language::ALL` order. Empty when
/// nothing is recognised.
pub fn detect(repo: &Path) -> Vec<Detection> {
    let mut found: Vec<Detection> = families().flat_map(|s| s.detect(repo)).collect();
    found.sort_by_key(|d| !d.manifest);
    found
}

/// The file a test id's test lives in when no indexed definition is that test (see
/// [`LanguageSupport::test_source_file`]): a test a macro writes.
pub fn test_source_file(root: &Path, index: &DefinitionIndex, test: &str) -> Option<String> {
    families().find_map(|s| s.test_source_file(root, index, test))
}

/// The definition whose doc comment holds doctest `test` (see
/// [`LanguageSupport::doctest_owner`]), or `None`.
pub fn doctest_owner(index: &DefinitionIndex, test: &str) -> Option<NodeId> {
    families().find_map(|s| s.doctest_owner(index, test))
}

/// The definition test `test` documents by example (see [`LanguageSupport::example_owner`]),
/// or `None`.
pub fn example_owner(index: &DefinitionIndex, test: &str) -> Option<NodeId> {
    families().find_map(|s| s.example_owner(index, test))
}

/// The ids that would name tests enclosing test `id`, innermost first (see
/// [`LanguageSupport::enclosing_tests`]).
pub fn enclosing_tests(id: &str) -> Vec<&str> {
    families().flat_map(|s| s.enclosing_tests(id)).collect()
}

/// Whether definition `id` is test-side fixture or set-up code (see
/// [`LanguageSupport::is_test_fixture`]).
pub fn is_test_fixture(index: &DefinitionIndex, id: &str) -> bool {
    index.get(id).is_some_and(|d| support(d.language).is_test_fixture(d))
}

/// The definitions an F2P test id names, in any runner's id format (see
/// `docs/architecture.md`, "Test ids"): carve's file form `path::Class::test[param]` first
/// (the definition `path::Class.test`, every parametrization with it), then each language's
/// own format.
/// `Err` says why nothing was found, for the warning.
pub fn test_definitions(root: &Path, index: &DefinitionIndex, test: &str) -> Result<Vec<NodeId>, String> {
    if let Some((path, rest)) = test.split_once("::")
        && let Some(file) = index.files.get(path)
    {
        return file_form_test(index, file, rest);
    }
    if let Some(found) = families().find_map(|s| s.test_definitions(root, index, test)) {
        return found;
    }
    match test.split_once("::") {
        Some((path, _)) => Err(format!("{path} is not an indexed file")),
        None => Err("it is not in any test id format carve knows".to_string()),
    }
}

/// `path::Class::test[param]`, or a Go `path::TestX/sub`.
fn file_form_test(index: &DefinitionIndex, file: &FileIndex, rest: &str) -> Result<Vec<NodeId>, String> {
    let found = named_in_file(index, file, &rest.replace("::", "."));
    if !found.is_empty() {
        return Ok(found);
    }
    let qual = support(file.language).test_base(rest).replace("::", ".");
    let found = named_in_file(index, file, &qual);
    if found.is_empty() {
        return Err(format!("{} defines no `{qual}`", file.path));
    }
    Ok(found)
}

impl DefinitionIndex {
    /// Index every source file of a repository: walk `root` (respecting `.gitignore`,
    /// skipping VCS, virtualenv, cache and build directories; see [`crate::walk`]), parse the
    /// files in parallel, and resolve names across them. Files that cannot be read or
    /// parsed are listed in `skipped`; only a bad root or a bad glob is an error.
    pub fn build(root: &Path, opts: &IndexOptions) -> Result<DefinitionIndex, IndexError> {
        let walked = crate::walk::source_files(root, &opts.include, &opts.exclude)?;
        let mut index = DefinitionIndex::default();
        for s in families() {
            let paths: Vec<String> =
                walked.files.iter().filter(|f| s.family().contains(&f.language)).map(|f| f.path.clone()).collect();
            index.merge(s.index_files(root, &paths));
        }
        index.skipped.extend(walked.skipped);
        index.skipped.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.reason.cmp(&b.reason)));
        Ok(index)
    }

    /// Index files held in memory, `(repository-relative path, bytes)`; files of languages
    /// carve does not know are ignored. Useful for tests and for re-indexing edited sources.
    pub fn from_sources(sources: &[(String, Vec<u8>)]) -> DefinitionIndex {
        let mut index = DefinitionIndex::default();
        for s in families() {
            index.merge(s.index_sources(sources));
        }
        index
    }
}

/// Syntax errors of `source` as a file of `lang` (see [`LanguageSupport::parse_errors`]).
pub fn parse_errors(lang: Language, source: &str) -> Vec<(usize, String)> {
    support(lang).parse_errors(source)
}

/// Edits that mask one file of `lang` (see [`Masking::mask_file`]), planning the masking for
/// this file alone: masking a whole tree plans once with [`LanguageSupport::plan_mask`].
pub fn mask_file(
    lang: Language,
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    remove: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
) -> Result<Vec<Edit>, MaskError> {
    support(lang).plan_mask(MaskRequest::new(index, remove, stub)).mask_file(source, file)
}

/// See [`LanguageSupport::drop_imported_names`].
pub fn drop_imported_names(
    lang: Language,
    source: &str,
    file: &FileIndex,
    drop: &BTreeSet<crate::index::ImportedKey>,
) -> Result<Vec<Edit>, MaskError> {
    support(lang).drop_imported_names(source, file, drop)
}

/// See [`LanguageSupport::reconcile_imports`].
pub fn reconcile_imports(lang: Language, source: &str, path: &str, others: &[&str]) -> Result<Vec<Edit>, MaskError> {
    support(lang).reconcile_imports(source, path, others)
}

/// What no copy, digest, masked tree or agent's workspace of carve holds: the union of every
/// language's [`crate::LanguageFacts::tree`] (with version control), computed once.
pub fn skip_policy() -> &'static SkipPolicy {
    static POLICY: LazyLock<SkipPolicy> =
        LazyLock::new(|| SkipPolicy::new(Language::ALL.iter().map(|l| &support(*l).facts().tree)));
    &POLICY
}

/// Test code by the conventions of the file's language.
pub fn is_test_path(language: Language, rel: &str) -> bool {
    support(language).is_test_path(rel)
}

/// Whether a file named `name` (a path's last component) makes a folder a project of some
/// language (see [`LanguageFacts::project_files`](crate::LanguageFacts::project_files)).
pub fn is_project_file(name: &str) -> bool {
    Language::ALL.iter().any(|l| support(*l).facts().project_files.contains(&name))
}

/// Whether runner test id `id` is a doctest's, by the mark some language's doctest ids hold
/// (see [`LanguageFacts::doctest_mark`](crate::LanguageFacts::doctest_mark)).
pub fn is_doctest_id(id: &str) -> bool {
    Language::ALL.iter().any(|l| support(*l).facts().doctest_mark.is_some_and(|m| id.contains(m)))
}

/// The item name of a doctest named in some language's form (see
/// [`LanguageSupport::doctest_name`]), or `None`.
pub fn doctest_name(id: &str) -> Option<&str> {
    families().find_map(|s| s.doctest_name(id))
}

/// How a file splits into code and inline tests, when its language has tests inside its
/// sources as items of their own (see [`LanguageSupport::inline_tests`]); `None` otherwise
/// (and for a file carve does not index).
pub fn inline_tests_of(path: &str) -> Option<&'static dyn crate::interface::InlineTests> {
    Language::from_path(Path::new(path)).and_then(|l| support(l).inline_tests())
}

/// Give `tree` the lock files the languages' runners need where the project commits none
/// (see [`LanguageSupport::lock_offline`]).
pub fn lock_offline(tree: &Path) {
    for s in families() {
        s.lock_offline(tree);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines exported tasks' evaluation scripts run, per runner.
    #[test]
    fn eval_commands_name_exactly_the_given_tests() {
        let py = TestCommand::pytest("{env}/venv/bin/python", vec!["-q".into()]);
        assert_eq!(
            eval_command(&py, &["t/test_a.py::test_x[a b]".into(), "t/test_a.py::test_y".into()]).unwrap(),
            "PYTHONPATH=\"$PWD/src${PYTHONPATH:+:$PYTHONPATH}\" python -m pytest -rA -p no:cacheprovider -q 't/test_a.py::test_x[a b]' t/test_a.py::test_y"
        );
        assert_eq!(harness_log_parser(&py), Some("parse_log_pytest"));
        let go = TestCommand::GoTest { args: vec![], packages: None };
        assert_eq!(
            eval_command(&go, &["example.com/m/geo/TestArea/square".into(), "example.com/m/TestMain".into()]).unwrap(),
            "go test -count=1 -v -run '^(TestArea|TestMain)$' example.com/m example.com/m/geo"
        );
        assert_eq!(eval_command(&go, &["not-a-go-id".into()]), None);
        let cargo: TestCommand =
            serde_json::from_value(serde_json::json!({"runner": "cargo", "args": ["--features", "x"]})).unwrap();
        assert_eq!(
            eval_command(&cargo, &["mycrate::shapes::tests::area".into()]).unwrap(),
            "cargo test --no-fail-fast --features x -- --exact shapes::tests::area"
        );
        assert_eq!(eval_command(&cargo, &["mycrate::doctest::src/lib.rs - f".into()]), None);
        let vitest: TestCommand =
            serde_json::from_value(serde_json::json!({"runner": "vitest", "package_manager": "npm"})).unwrap();
        assert_eq!(
            eval_command(&vitest, &["a.test.ts > b".into()]).unwrap(),
            "npx --no-install vitest run --reporter=verbose -t '^ ?(?:b)$' a.test.ts"
        );
        assert_eq!(harness_log_parser(&vitest), Some("parse_log_vitest"));
    }

    #[test]
    fn every_language_has_an_implementation_of_its_own_family() {
        for l in Language::ALL {
            let s = support(*l);
            assert_eq!(s.language(), *l);
            assert!(s.family().contains(l), "{l}");
            assert_eq!(support(s.family()[0]).family(), s.family(), "{l}");
        }
        let owners: Vec<Language> = families().map(|s| s.language()).collect();
        assert_eq!(owners, [Language::Python, Language::TypeScript, Language::Go, Language::Rust]);
    }

    /// The data FeatureArc reads through the registry: project files of every language, and
    /// cargo's doctest ids (`::doctest::`) as the only marked ones.
    #[test]
    fn project_files_and_doctest_ids_are_each_languages_own() {
        for name in ["go.mod", "go.sum", "Cargo.toml", "package.json", "tsconfig.json", "pyproject.toml", "setup.cfg"] {
            assert!(is_project_file(name), "{name}");
        }
        assert!(!is_project_file("Cargo.lock") && !is_project_file("README.md"));
        assert!(is_doctest_id("c::doctest::src/lib.rs - SmallVec::new"));
        assert!(!is_doctest_id("pkg/tree.py::pkg.tree.Node.dump"));
        assert_eq!(doctest_name("src/lib.rs - Either<L,R>::map"), Some("map"));
        assert_eq!(doctest_name("tests/a.py::Tests.test_x"), None);
        assert!(inline_tests_of("src/lib.rs").is_some());
        assert!(inline_tests_of("src/a.py").is_none() && inline_tests_of("Cargo.toml").is_none());
    }

    #[test]
    fn the_skip_policy_is_every_languages_tree_facts() {
        let p = skip_policy();
        let names: Vec<&str> = p.folder_names().into_iter().collect();
        for name in [".git", "__pycache__", ".venv", "node_modules", "target", "build"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        assert!(p.is_dependency("web/node_modules/x/index.js"));
        // carve's tests copy fixtures without carve's crates: their list is this union.
        assert_eq!(names, carve_testutil::NOT_COPIED, "testutil's NOT_COPIED is the registry's union, sorted");
    }

    #[test]
    fn typescript_accepts_tsx() {
        let ts = support(Language::TypeScript);
        assert!(ts.parse_errors("const v = <div>{1}</div>;\n").is_empty());
        assert!(ts.parse_errors("const n = <number>x;\n").is_empty());
        assert!(!ts.parse_errors("function (\n").is_empty());
    }

    #[test]
    fn reports_error_and_missing_nodes_by_line() {
        let py = support(Language::Python);
        assert!(py.parse_errors("def f():\n    return 1\n").is_empty());
        let errs = py.parse_errors("x = 1\ndef f(:\n    pass\n");
        assert!(!errs.is_empty());
        assert_eq!(errs[0].0, 2, "{errs:?}");
    }
}
