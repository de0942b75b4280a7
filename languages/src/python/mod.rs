//! Python: the definition index (tree-sitter-python), masking edits, the `compile()` check
//! of masked files, the pytest runner and the tracing shim.

pub mod build;
pub mod detect;
pub mod edit;
pub mod env;
pub mod examples;
pub mod index;
pub mod interpreter;
pub mod load_error;
pub mod runner;
pub mod trace;

pub use index::{index_source, is_test_path};

use std::collections::BTreeSet;
use std::path::Path;

use crate::Language;
use crate::edit::MaskedCheck;
use crate::index::{Definition, DefinitionIndex, FileIndex, LanguageIndex, NodeId};
use crate::interface::{
    LanguageFacts, LanguageSupport, Level2Packaging, MaskRequest, Masking, PlannedMask, TreeFacts, sources_of,
};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::TestFacts;
use crate::syntax::{
    BlockStyle, ContractSyntax, DecoratorStyle, DocStyle, ExistingMembers, ImportStyle, MethodPlacement,
};
use crate::trace::TraceShim;

/// Python behind the language interface.
pub struct Python;

static SYNTAX: ContractSyntax = ContractSyntax {
    fence: "python",
    block: BlockStyle::Indented,
    doc: DocStyle::Docstring,
    decorators: DecoratorStyle::None,
    indent: "    ",
    methods: MethodPlacement::InBody,
    import: ImportStyle::FromImport,
    existing: ExistingMembers::IndentedClass,
    typed_signature_text: false,
};

static FACTS: LanguageFacts = LanguageFacts {
    language: Language::Python,
    family: &[Language::Python],
    name: "python",
    extensions: &["py"],
    build_check: "python -m py_compile",
    grammar: || tree_sitter_python::LANGUAGE.into(),
    syntax: &SYNTAX,
    stubs_referenced: false,
    tests_in_sources: false,
    tests_in_blocks: false,
    tree: TreeFacts {
        caches: &["__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".eggs"],
        // A virtualenv is found by its `pyvenv.cfg` whatever its name.
        environments: &[".venv"],
        environment_markers: &["pyvenv.cfg"],
        build_outputs: &["build", "dist"],
        generated_files: &[".pyc", ".pyo"],
        generated_dirs: &[".egg-info", ".dist-info"],
        ..TreeFacts::NONE
    },
    project_files: &["pyproject.toml", "setup.cfg"],
    doctest_mark: None,
};

impl LanguageSupport for Python {
    fn facts(&self) -> &'static LanguageFacts {
        &FACTS
    }
    fn is_test_path(&self, rel: &str) -> bool {
        is_test_path(rel)
    }
    fn index_files(&self, root: &Path, paths: &[String]) -> LanguageIndex {
        index::index_files(root, paths)
    }
    fn index_sources(&self, sources: &[(String, Vec<u8>)]) -> LanguageIndex {
        index::index_sources(&sources_of(FACTS.family, sources))
    }
    /// Deletes its removals: with `stub` folded into `delete`, the plan is the set and the
    /// request's call statements per file.
    fn plan_mask<'a>(&self, request: MaskRequest<'a>) -> Box<dyn Masking + 'a> {
        let remove: BTreeSet<NodeId> = request.delete.union(request.stub).cloned().collect();
        let mask = |source: &str, file: &FileIndex, index: &DefinitionIndex, plan: &(BTreeSet<NodeId>, MaskRequest)| {
            edit::mask_file_with(source, file, index, &plan.0, plan.1.calls_in(&file.path))
        };
        Box::new(PlannedMask { index: request.index, plan: (remove, request), mask })
    }
    fn drop_imported_names(
        &self,
        source: &str,
        file: &FileIndex,
        drop: &BTreeSet<crate::index::ImportedKey>,
    ) -> Result<Vec<crate::edit::Edit>, crate::edit::MaskError> {
        edit::drop_imported_names(source, file, drop)
    }
    fn check_masked(&self, tree: &Path, files: &[&String], interpreter: Option<&Path>) -> MaskedCheck {
        build::compile_check(tree, files, interpreter)
    }
    fn level2(&self) -> Option<&'static dyn Level2Packaging> {
        Some(&edit::PythonLevel2)
    }
    fn load_error_names(&self, message: &str) -> Vec<crate::interface::NamedInError> {
        load_error::load_error_names(message)
    }
    fn detect(&self, repo: &Path) -> Vec<Detection> {
        detect::detect(repo).into_iter().collect()
    }
    fn environment(&self) -> Option<&'static dyn crate::env::EnvSupport> {
        Some(&env::PYTHON_ENV)
    }
    fn run_tests(&self, req: &RunRequest) -> Result<RunResult, RunnerError> {
        runner::run(req)
    }
    fn collect_tests(&self, req: &RunRequest) -> Result<Collection, RunnerError> {
        runner::collect(req)
    }
    fn harness_id(&self, _command: &TestCommand, id: &str) -> Option<String> {
        runner::harness::harness_id(id)
    }
    /// SWE-bench's parser of this runner's output.
    fn harness_log_parser(&self, _command: &TestCommand) -> Option<&'static str> {
        Some("parse_log_pytest")
    }
    /// `PYTHONPATH=$PWD/src… python -m pytest -rA -p no:cacheprovider <args> <ids>`: pytest's
    /// exit status is 0 only when every selected test passed; `-rA` prints the `PASSED id`
    /// lines SWE-bench's log parser reads. The environment installs the project itself
    /// (often not editable), so the tree's own code must come first, as carve's import
    /// redirect makes it locally: `python -m` puts the tree's root first on `sys.path` (a flat
    /// layout), and `src/` goes before site-packages (a src layout). Without it a src-layout
    /// project's tests import the installed original, and the masked state passes.
    fn eval_command(&self, command: &TestCommand, tests: &[String]) -> Option<String> {
        let TestCommand::Pytest { args, .. } = command else { return None };
        let mut words: Vec<String> =
            ["python", "-m", "pytest", "-rA", "-p", "no:cacheprovider"].map(String::from).into();
        words.extend(args.iter().cloned());
        words.extend(tests.iter().cloned());
        Some(format!("PYTHONPATH=\"$PWD/src${{PYTHONPATH:+:$PYTHONPATH}}\" {}", crate::env::shell::join(&words)))
    }
    /// pytest ids are carve's file form, handled before any language is asked.
    fn test_definitions(
        &self,
        _root: &Path,
        _index: &DefinitionIndex,
        _test: &str,
    ) -> Option<Result<Vec<NodeId>, String>> {
        None
    }
    /// A pytest fixture (`@pytest.fixture`, `@fixture(scope=…)`, `@pytest_asyncio.fixture`), a
    /// unittest or pytest set-up / tear-down method, or anything defined in a `conftest.py`.
    fn is_test_fixture(&self, def: &Definition) -> bool {
        const SET_UP: &[&str] = &[
            "setUp",
            "tearDown",
            "setUpClass",
            "tearDownClass",
            "asyncSetUp",
            "asyncTearDown",
            "setup_method",
            "teardown_method",
            "setup_class",
            "teardown_class",
            "setup_module",
            "teardown_module",
            "setup_function",
            "teardown_function",
        ];
        let fixture = |d: &str| {
            let name = d.split('(').next().unwrap_or(d).trim();
            name == "fixture" || name.ends_with(".fixture")
        };
        def.path.rsplit('/').next() == Some("conftest.py")
            || SET_UP.contains(&def.name.as_str())
            || def.signature.decorators.iter().any(|d| fixture(d))
    }
    /// pytest's `--doctest-modules` ids: `path::dotted.module.Qual.name`, in a file that is
    /// not a test file; the definition of that file whose qualified name ends the dotted name.
    fn doctest_owner(&self, index: &DefinitionIndex, test: &str) -> Option<NodeId> {
        let (path, dotted) = test.split_once("::")?;
        let file = index.files.get(path).filter(|f| !f.is_test && f.language == Language::Python)?;
        if dotted.contains("::") || dotted.contains('[') {
            return None;
        }
        file.definitions
            .iter()
            .filter_map(|id| index.get(id))
            .filter(|d| dotted.strip_suffix(d.qualname.as_str()).is_some_and(|rest| rest.ends_with('.')))
            .max_by_key(|d| d.qualname.len())
            .map(|d| d.id.clone())
    }
    fn test_facts(&self, source: &str, ranges: &[(usize, usize)]) -> TestFacts {
        examples::test_facts(source, ranges)
    }
    fn trace_shim(&self) -> Option<&'static dyn TraceShim> {
        Some(&trace::PythonShim)
    }
}
