//! The language interface: [`LanguageSupport`], implemented once per language folder
//! (`python/`, `typescript/` — which serves JavaScript too —, `go/`, `rust/`), with the
//! [`Masking`] a language plans once per tree and its [`Level2Packaging`]. Language-free like
//! the other shared models: language modules import this, never the registry
//! (`crate::registry`, which imports them).
//!
//! Modelled on ast-grep's `Language` trait: a new implementation of the trait lists every
//! method the new language must provide (see `docs/adding-a-language.md`).

pub use carve_core::tree::TreeFacts;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::Language;
use crate::build::BuildCheckError;
use crate::edit::{Edit, MaskError, MaskedCheck};
use crate::index::{Definition, DefinitionIndex, FileIndex, LanguageIndex, NodeId};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::ContractSyntax;
use crate::trace::TraceShim;

/// A definition an error message names: `name`, and the class or module it was looked up
/// on when the message says (`type object 'C' has no attribute 'm'`: `m` of `C`; for a
/// module, its last dotted component).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NamedInError {
    pub name: String,
    pub owner: Option<String>,
}

/// A masking planned once for the whole tree (`delete`/`stub` over the whole index); it
/// then masks the files of its language one by one.
pub trait Masking: Sync {
    /// Edits that mask one file: the removed definitions that live in it deleted (or, for
    /// `stub`, their bodies replaced by the language's "not implemented"), emptied blocks
    /// filled, imported names of removed definitions dropped. Empty when unaffected.
    fn mask_file(&self, source: &str, file: &FileIndex) -> Result<Vec<Edit>, MaskError>;
}

/// What one masking takes out, for [`LanguageSupport::plan_mask`]: the definitions deleted
/// and those kept as stubs (ids over the whole index), per repository-relative file the call
/// statements whose value is discarded that go with the definitions they call (the index's
/// `DiscardedCall` spans; a language that records none ignores them), and the whole files
/// left out of the masked tree (F2P test files: what declares them goes too where the
/// language declares files, a Rust `mod clear;`).
#[derive(Debug, Clone, Copy)]
pub struct MaskRequest<'a> {
    pub index: &'a DefinitionIndex,
    pub delete: &'a BTreeSet<NodeId>,
    pub stub: &'a BTreeSet<NodeId>,
    pub calls: &'a BTreeMap<String, Vec<crate::index::Span>>,
    pub removed_files: &'a BTreeSet<String>,
}

impl<'a> MaskRequest<'a> {
    /// Delete `delete`, stub `stub`; no call statements, no files left out.
    pub fn new(index: &'a DefinitionIndex, delete: &'a BTreeSet<NodeId>, stub: &'a BTreeSet<NodeId>) -> Self {
        static NO_CALLS: BTreeMap<String, Vec<crate::index::Span>> = BTreeMap::new();
        static NO_FILES: BTreeSet<String> = BTreeSet::new();
        MaskRequest { index, delete, stub, calls: &NO_CALLS, removed_files: &NO_FILES }
    }

    /// The same request that also deletes the call statements `calls`.
    pub fn with_calls(self, calls: &'a BTreeMap<String, Vec<crate::index::Span>>) -> Self {
        MaskRequest { calls, ..self }
    }

    /// The same request with the files `removed_files` left out of the tree.
    pub fn removing_files(self, removed_files: &'a BTreeSet<String>) -> Self {
        MaskRequest { removed_files, ..self }
    }

    /// The call statements of `path` to delete.
    pub fn calls_in(&self, path: &str) -> &'a [crate::index::Span] {
        self.calls.get(path).map_or(&[][..], Vec::as_slice)
    }
}

/// The usual [`Masking`]: the language's `plan`, made once for the tree, and the function
/// that masks one file with it.
pub struct PlannedMask<'a, P> {
    pub index: &'a DefinitionIndex,
    pub plan: P,
    pub mask: fn(&str, &FileIndex, &DefinitionIndex, &P) -> Result<Vec<Edit>, MaskError>,
}

impl<P: Sync> Masking for PlannedMask<'_, P> {
    fn mask_file(&self, source: &str, file: &FileIndex) -> Result<Vec<Edit>, MaskError> {
        (self.mask)(source, file, self.index, &self.plan)
    }
}

/// What a Level 2 reference solution is made from: the original tree (read only), its index,
/// the extracted definitions and the `(module, name)` pairs the package must expose.
pub struct Level2Sources<'a> {
    pub root: &'a Path,
    pub index: &'a DefinitionIndex,
    pub extracted: &'a BTreeSet<NodeId>,
    pub names: &'a [(String, String)],
    /// The package's import path ([`Level2Packaging::package_import`]).
    pub package: &'a str,
}

/// F2P tests a Level 2 test patch carries as new tests of the package's users (Rust:
/// doctests, which belong to the crate they document, become an integration test).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedTests {
    /// The new test file, relative to the tree, and its text.
    pub path: String,
    pub text: String,
    /// Each carried F2P test's id → its id in the new file.
    pub ids: BTreeMap<String, String>,
}

/// Level 2 (from scratch) packaging: the solution package the rewritten tests import from.
/// `package` is the package's import path as [`Level2Packaging::package_import`] gives it
/// (Python: `agent_code`; Go: `<module path>/agent_code`); its last `/`-separated
/// component is the package's name and folder.
pub trait Level2Packaging: Sync {
    /// The import path of the package named `name` in the tree at `root` (read only) of
    /// `index`, or why the tree cannot hold one. Default: `name` itself.
    fn package_import(&self, _root: &Path, _index: &DefinitionIndex, name: &str) -> Result<String, String> {
        Ok(name.to_string())
    }
    /// The package's file carve writes, relative to the tree (`agent_code/__init__.py`).
    fn init_file(&self, package: &str) -> String;
    /// The reference solution's text (the file [`Self::init_file`]): Python runs the
    /// feature's original definitions beside the masked project; Go copies the feature's code
    /// (and the package-level code it needs) into the package; TypeScript re-exports it from
    /// copies of the feature's files. An error says why no reference can be written. A
    /// reference that does not need the original restored proves that a package alone can
    /// pass the tests.
    fn reference(&self, sources: &Level2Sources<'_>) -> Result<String, String>;
    /// Every file of the reference solution, `(path relative to the tree, text)`, the init
    /// file first (Go: a feature that spans several packages has one package per package).
    /// Default: the init file with [`Self::reference`].
    fn reference_files(&self, sources: &Level2Sources<'_>) -> Result<Vec<(String, String)>, String> {
        Ok(vec![(self.init_file(sources.package), self.reference(sources)?)])
    }
    /// What else the package must declare besides the contract's objects, as a Markdown
    /// sentence for the problem statement (Go: the package-level code of the feature's
    /// package that the feature uses and the package cannot import). Default: nothing.
    fn support_note(&self, _sources: &Level2Sources<'_>) -> Option<String> {
        None
    }
    /// Whether the package can take a whole type that stays in the project so that its
    /// methods of the feature can be asked for (Go: a package cannot add methods to another
    /// package's type, but it can declare a copy of the type with all its methods). Default:
    /// no, such a feature has no Level 2 task.
    fn takes_whole_types(&self) -> bool {
        false
    }
    /// Whether the reference needs the original implementation restored (it re-exports it):
    /// the Level 2 gold patch then restores the repository too. Default: yes.
    fn reference_restores_original(&self) -> bool {
        true
    }
    /// A package that exposes nothing: the rewritten tests must fail against it.
    fn empty(&self, package: &str) -> String;
    /// The empty state of `path`, a file of the reference solution besides the init file
    /// (Go: the empty package of a mirrored sub-package, so the rewritten tests fail on the
    /// names it lacks, not on a package that is not there). Default: none, not written.
    fn empty_file(&self, _package: &str, _path: &str) -> Option<String> {
        None
    }
    /// How the problem statement names what to write (`a Python package named …`), Markdown.
    fn describe(&self, package: &str) -> String;
    /// Whether a from-scratch solution can write `decorator` (as written, without `@`)
    /// without the original project: the contract keeps it. Default: none (a language
    /// whose contracts carry no decorators).
    fn keeps_decorator(&self, _decorator: &str) -> bool {
        false
    }
    /// How a contract object is imported from the package (`from agent_code import X`).
    fn import_line(&self, package: &str, name: &str) -> String;
    /// How the contract object `name` of the project's `module` is imported from the package
    /// when the feature's objects come from `modules` (Go: a feature that spans several
    /// packages has one package per package). Default: [`Self::import_line`].
    fn import_line_of(&self, package: &str, name: &str, _module: Option<&str>, _modules: &BTreeSet<String>) -> String {
        self.import_line(package, name)
    }
    /// The files besides [`Self::init_file`] that make the package usable, written into
    /// `tree` (a copy of the masked project holding the package's init file, where the
    /// language's tools may run): the package's own manifest and the project's files that
    /// must name it. Returns their paths relative to `tree`, sorted; both the reference and
    /// the empty package get them. Rust: `agent_code/Cargo.toml`, the dev-dependency in
    /// `Cargo.toml` and `Cargo.lock`. An error says why the project cannot take the package.
    /// `env` is the environment's variables for the tools (Rust: the `CARGO_HOME` whose
    /// registry holds what the lock file pins). Default: none.
    fn project_files(&self, _tree: &Path, _package: &str, _env: &[(String, String)]) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
    /// Why the F2P tests, as `(test id, repository-relative file)`, cannot import from the
    /// package, as the rejection's reason, naming the first few with [`listed`] (Rust: tests
    /// in `#[cfg(test)]` modules and doctests belong to the crate they test; Python: doctests
    /// in the project's modules and text files). Default: they can.
    fn tests_blocker(&self, _index: &DefinitionIndex, _tests: &[(String, String)]) -> Option<String> {
        None
    }
    /// The F2P `tests` (ids) that cannot import from the package where they are but can be
    /// carried into the test patch as new tests that do ([`CarriedTests`]), read from the
    /// tree at `root`; `Ok(None)` when there are none. An error names a test that cannot be
    /// carried and why. Default: none (see [`Self::tests_blocker`]).
    fn carried_tests(
        &self,
        _root: &Path,
        _index: &DefinitionIndex,
        _extracted: &BTreeSet<NodeId>,
        _tests: &[String],
        _package: &str,
    ) -> Result<Option<CarriedTests>, String> {
        Ok(None)
    }
    /// Edits that make a test file of the tree at `root` (read only) import the `extracted`
    /// objects from `package`.
    fn rewrite_test_imports(
        &self,
        root: &Path,
        source: &str,
        file: &FileIndex,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        package: &str,
    ) -> Vec<Edit>;
}

/// A language's facts as data: what a [`LanguageSupport`] implementation is about.
#[derive(Debug, Clone, Copy)]
pub struct LanguageFacts {
    pub language: Language,
    /// The languages one implementation indexes together, itself among them, the first one
    /// owning the group (TypeScript and JavaScript).
    pub family: &'static [Language],
    pub name: &'static str,
    /// File extensions, without the dot.
    pub extensions: &'static [&'static str],
    /// The build check's name, for messages (`none` when there is none).
    pub build_check: &'static str,
    /// The tree-sitter grammar of the main dialect.
    pub grammar: fn() -> tree_sitter::Language,
    /// How the language writes the code blocks, imports and doc comments of a contract.
    pub syntax: &'static ContractSyntax,
    /// See [`LanguageSupport::stubs_referenced`].
    pub stubs_referenced: bool,
    /// Tests may live inside the source files they test (Rust's `#[cfg(test)]` modules and
    /// doctests), not only in test files: a change to them is a change to tests, and a history
    /// stage whose tests are all there has no test file to lay over an earlier state.
    pub tests_in_sources: bool,
    /// Tests are made by calls inside blocks (`describe(…, () => { for (…) it(…) })`): a block
    /// of test code holds tests, and a table in its body feeds the tests its loop makes
    /// (FeatureArc mining reads a new row of such a table as naming what the block names).
    pub tests_in_blocks: bool,
    /// What the language's tools write into a tree (caches, environments, installed
    /// dependencies, build outputs, generated files): the registry's union of these is the
    /// [`carve_core::tree::SkipPolicy`] every copy, digest, mask and workspace follows
    /// ([`crate::skip_policy`]).
    pub tree: TreeFacts,
    /// Files whose presence makes a folder a project of the language (a module root, a
    /// package, a crate: `go.mod`, `package.json`, `Cargo.toml`), by file name. FeatureArc keeps
    /// one that a chain's commit created at its final content in every state: no state builds
    /// without it.
    pub project_files: &'static [&'static str],
    /// The mark every doctest id of the language's runner holds, when its doctest ids have one
    /// (cargo's `<crate>::doctest::<path> - <item> (line N)`: `::doctest::`). FeatureArc never
    /// hides such a test: it lives in the code's doc comments, which the stage patch holds.
    pub doctest_mark: Option<&'static str>,
}

/// The doctests of one definition's doc comments, as one test: FeatureArc's history analysis
/// counts a changed doctest as a changed test, not as changed code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doctest {
    /// The test's name as the language's runner names it, without a line or a position
    /// (`src/lib.rs - Either<L,R>::map`: the part of cargo's doctest ids after
    /// `<crate>::doctest::`).
    pub id: String,
    /// The code of the doctests, one after another.
    pub code: String,
}

/// Why a source file could not be split into its code and its inline tests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InlineTestsError(pub String);

/// Tests that live inside source files as items of their own (Rust's `#[cfg(test)]` modules
/// and `#[test]` functions): how one version of a source file splits into its code and its
/// tests, and how one version's code joins another version's tests. FeatureArc uses it where
/// a stage's patch of one file holds feature code and hidden tests alike.
pub trait InlineTests: Sync {
    /// The test part of `source`: its test items (inside the shells of the modules that hold
    /// them), empty when it has none.
    fn tests_only(&self, source: &str) -> Result<String, InlineTestsError>;
    /// `code` with its test items replaced by those of `tests` (a whole file or a
    /// [`tests_only`](Self::tests_only) part): `with_tests_of(a, a) == a`.
    fn with_tests_of(&self, code: &str, tests: &str) -> Result<String, InlineTestsError>;
}

/// How a tree's installed dependencies — what the language's package manager writes and git
/// does not hold (`node_modules`) — are made from the manifest files the tree declares them in
/// (`package.json` and npm's lockfile). FeatureArc's exported states use it: a state whose
/// manifest declares other dependencies than the repository checkout's gets its own install,
/// as a user building that commit would make, rather than the checkout's.
pub trait Dependencies: Sync {
    /// The folder the install writes under the tree's root (`node_modules`); a state gets it
    /// as a link into a shared install.
    fn folder(&self) -> &'static str;
    /// The files of a tree the install reads (relative to its root), copied into the folder
    /// where the install runs.
    fn inputs(&self) -> &'static [&'static str];
    /// What decides the installed set, from a tree's [`inputs`](Self::inputs) (`read`: a
    /// file's bytes, `None` when the tree has none): canonical bytes that are equal for two
    /// trees exactly when the install would be the same (the dependency fields of a manifest,
    /// not its version or scripts; the lockfile the installer honours). `None`: the tree
    /// declares no dependencies this way (no manifest).
    fn key(&self, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<u8>>;
    /// The command (program and arguments) that installs a tree's dependencies in the folder
    /// holding its inputs; it may depend on which inputs exist (`npm ci` with npm's lockfile).
    fn install_command(&self, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<String>;
}

/// Everything carve knows about one language.
pub trait LanguageSupport: Sync {
    fn facts(&self) -> &'static LanguageFacts;
    fn language(&self) -> Language {
        self.facts().language
    }
    /// See [`LanguageFacts::family`].
    fn family(&self) -> &'static [Language] {
        self.facts().family
    }
    fn name(&self) -> &'static str {
        self.facts().name
    }
    /// File extensions, without the dot.
    fn extensions(&self) -> &'static [&'static str] {
        self.facts().extensions
    }
    /// The grammar of the main dialect.
    fn grammar(&self) -> tree_sitter::Language {
        (self.facts().grammar)()
    }
    /// The grammar for one file (TypeScript: `.tsx` files use the TSX grammar).
    fn grammar_for_path(&self, _path: &Path) -> tree_sitter::Language {
        self.grammar()
    }
    /// Test code by the language's conventions (`test_*.py`, `*_test.go`, `*.test.ts` …).
    fn is_test_path(&self, rel: &str) -> bool;

    // --- Index -------------------------------------------------------------------------

    /// Index the files `paths` (of this family, repository-relative) under `root`.
    fn index_files(&self, root: &Path, paths: &[String]) -> LanguageIndex;
    /// Index files held in memory; `sources` holds every file, the implementation picks its
    /// own (and the manifests it reads: `go.mod`, `Cargo.toml`).
    fn index_sources(&self, sources: &[(String, Vec<u8>)]) -> LanguageIndex;

    // --- Masking -----------------------------------------------------------------------

    /// Whether a removed definition that remaining code still names keeps its signature
    /// with a stub body (the language must keep building) rather than being deleted
    /// (Python: an unresolved name fails only when it runs).
    fn stubs_referenced(&self) -> bool {
        self.facts().stubs_referenced
    }
    /// Plan a masking once for the whole tree: what `request` deletes, stubs, and leaves out.
    fn plan_mask<'a>(&self, request: MaskRequest<'a>) -> Box<dyn Masking + 'a>;
    /// Edits that take the imported names `drop` out of `file`'s module-level import
    /// statements (a statement left with none goes). FeatureArc's per-definition states use
    /// it: a state must not import what a later stage added to an import statement. Default:
    /// none (the imports stay as they are).
    fn drop_imported_names(
        &self,
        _source: &str,
        _file: &FileIndex,
        _drop: &BTreeSet<crate::index::ImportedKey>,
    ) -> Result<Vec<Edit>, MaskError> {
        Ok(Vec::new())
    }
    /// Edits that make the imports of `source` (the file `path`) match what its text uses,
    /// by what `others` (other versions of the same file) show: FeatureArc's per-definition
    /// states put definitions back at older texts, which may use a package the final file no
    /// longer imports or no longer use one it does (Go builds with neither). Default: none.
    fn reconcile_imports(&self, _source: &str, _path: &str, _others: &[&str]) -> Result<Vec<Edit>, MaskError> {
        Ok(Vec::new())
    }
    /// Project files (name at the root, bytes) that let `sources` (a tree's files, paths
    /// relative to its root) build and run their tests when the history never had any
    /// (Go older than modules, to this day): FeatureArc's states of such a history. Default:
    /// none.
    fn stand_in_project_files(&self, _sources: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
        Vec::new()
    }
    /// Syntax errors of `source`: the 1-based line and a message per ERROR or MISSING node.
    fn parse_errors(&self, source: &str) -> Vec<(usize, String)> {
        crate::syntax::parse_errors_with(self.name(), self.grammar(), source)
    }
    /// A check of the masked files beyond re-parsing, in one process for all of them
    /// (Python: `compile()`); `interpreter` overrides the tool. Default: none.
    fn check_masked(&self, _tree: &Path, _files: &[&String], _interpreter: Option<&Path>) -> MaskedCheck {
        MaskedCheck::Passed
    }
    /// Level 2 packaging, when the language has from-scratch tasks. Default: none.
    fn level2(&self) -> Option<&'static dyn Level2Packaging> {
        None
    }

    // --- Build check -------------------------------------------------------------------

    /// Build-check `root` (`tsc --noEmit`, `go build ./... && go vet ./...`, `cargo check
    /// --all-targets`). Default: `Ok`, for languages without one.
    fn build_check(&self, _root: &Path) -> Result<(), BuildCheckError> {
        Ok(())
    }
    /// The build check of `root` as the tests of `command` build it (Rust: with the test
    /// command's feature flags and `--workspace`, so code behind `#[cfg(feature = …)]` that the
    /// tests compile is checked too), with the environment's variables `vars` (Rust: the
    /// environment's `CARGO_HOME`, whose registry holds what the lockfile pins). Default:
    /// [`LanguageSupport::build_check`].
    fn build_check_for(
        &self,
        root: &Path,
        _command: &TestCommand,
        _vars: &[(String, String)],
    ) -> Result<(), BuildCheckError> {
        self.build_check(root)
    }
    /// The check's name, for messages.
    fn build_check_name(&self) -> &'static str {
        self.facts().build_check
    }
    /// Source locations a failed build check names: (path relative to `root`, 1-based line).
    /// Default: none, so the build failure is reported unrepaired.
    fn build_error_locations(&self, _root: &Path, _output: &str) -> Vec<(String, u32)> {
        Vec::new()
    }
    /// The definitions a test's error message names when the masked state fails to load or
    /// run it (Python: `NameError: name 'x' is not defined`, `cannot import name 'x'`,
    /// `has no attribute 'x'`, `Can't instantiate abstract class C with abstract method x`).
    /// Default: none, so such a failure is reported unrepaired.
    fn load_error_names(&self, _message: &str) -> Vec<NamedInError> {
        Vec::new()
    }

    // --- Runner ------------------------------------------------------------------------

    /// The test set-up the repository's files show, for `carve init` (family owners only).
    fn detect(&self, repo: &Path) -> Vec<Detection>;
    fn run_tests(&self, req: &RunRequest) -> Result<RunResult, RunnerError>;
    fn collect_tests(&self, req: &RunRequest) -> Result<Collection, RunnerError>;
    /// The shorter id a common harness log parser (SWE-bench's) reports for `id`.
    fn harness_id(&self, command: &TestCommand, id: &str) -> Option<String>;
    /// The shell command line that runs exactly `tests` (ids of `command`'s runner; for
    /// runners that take them, test files too) from the project's root, for the evaluation
    /// script of an exported task (SWE-bench's `eval.sh`, Harbor's `tests/test.sh`,
    /// FeatureBench's `test_cmd` with no tests). Tools are found on `PATH` (the environment's
    /// image puts its interpreter there). Its exit status is 0 exactly when every test ran
    /// and passed. `None`: this runner cannot name these tests on one command line.
    fn eval_command(&self, _command: &TestCommand, _tests: &[String]) -> Option<String> {
        None
    }
    /// The name of SWE-bench's log parser (its `PARSER_REGISTRY` key) that reads the output
    /// of [`LanguageSupport::eval_command`], or `None` when SWE-bench has none for this runner.
    fn harness_log_parser(&self, _command: &TestCommand) -> Option<&'static str> {
        None
    }
    /// The definitions a test id of this language's runner names, or `None` when `test` is
    /// not in its id format (or the index has none of its tests). `Err` says why nothing
    /// was found. Ids in carve's file form (`path::Name`) are resolved before any language
    /// is asked (see `crate::test_definitions`), with [`LanguageSupport::test_base`].
    fn test_definitions(&self, root: &Path, index: &DefinitionIndex, test: &str)
    -> Option<Result<Vec<NodeId>, String>>;
    /// The file a test id's test lives in when no definition in the index is that test —
    /// a Rust `#[test]` written by a `macro_rules!` invocation lives in its target's root
    /// file (`itoa::test::test_u64_0` → `tests/test.rs`) — or `None`.
    fn test_source_file(&self, _root: &Path, _index: &DefinitionIndex, _test: &str) -> Option<String> {
        None
    }
    /// The definition whose doc comment holds doctest `test` (pytest's
    /// `pkg/tree.py::pkg.tree.Node.dump` → `pkg/tree.py::Node.dump`), or `None` when `test`
    /// is no doctest of this language or is a module's. A doctest goes with its definition:
    /// when the definition is extracted, the doctest is one of the feature's tests, not a
    /// P2P test that keeps it alive.
    fn doctest_owner(&self, _index: &DefinitionIndex, _test: &str) -> Option<NodeId> {
        None
    }
    /// The definition a test function of its own documents by example (Go's
    /// `importpath/ExampleType_Method` → `Type.Method` of package `importpath`), or `None`.
    /// Like a doctest, an example goes with its definition: when the definition is extracted,
    /// the example is one of the feature's tests. Unlike a doctest it lives in a test file,
    /// so it leaves the masked state as tests do, not with the definition.
    fn example_owner(&self, _index: &DefinitionIndex, _test: &str) -> Option<NodeId> {
        None
    }
    /// The ids that would name tests enclosing test `id` in the runner's hierarchy (Go's
    /// `importpath/TestX/sub/case` → `importpath/TestX/sub`, `importpath/TestX`, …),
    /// innermost first; empty where a test's record holds no other test's (a pytest
    /// parametrized function or a vitest `describe` block is no test of its own). Some
    /// need not be tests at all: the caller keeps the ids it knows.
    fn enclosing_tests<'t>(&self, _id: &'t str) -> Vec<&'t str> {
        Vec::new()
    }
    /// Whether test-side definition `def` is a fixture or set-up code the runner calls
    /// around tests (pytest's `@pytest.fixture`, `setUp`, conftest hooks), not part of any
    /// one test's own code. The `feature` protection policy reads it: a test that reaches
    /// the feature only through such code fails for want of a helper, not of the feature.
    fn is_test_fixture(&self, _def: &Definition) -> bool {
        false
    }
    /// The qualified-name part of a file-form id's rest without its parameters or subtests
    /// (`test[1]` → `test`, Go `TestX/sub` → `TestX`).
    fn test_base<'t>(&self, rest: &'t str) -> &'t str {
        rest.split('[').next().unwrap_or(rest)
    }

    // --- Contracts ---------------------------------------------------------------------

    /// How the language writes the code blocks, imports and doc comments of a contract.
    fn contract_syntax(&self) -> &'static ContractSyntax {
        self.facts().syntax
    }
    /// Literal examples and constants of the test code in `ranges` (byte offsets of
    /// `source`), for problem statements. Default: none (only Python extracts them yet).
    fn test_facts(&self, _source: &str, _ranges: &[(usize, usize)]) -> crate::syntax::TestFacts {
        crate::syntax::TestFacts::default()
    }

    // --- Dependencies ------------------------------------------------------------------

    /// How a tree's installed dependencies are made from its manifest ([`Dependencies`]).
    /// Default: none (the language's tools fetch into a shared cache, or there is no manifest).
    fn dependencies(&self) -> Option<&'static dyn Dependencies> {
        None
    }

    // --- Environments --------------------------------------------------------------------

    /// How `carve env` finds, installs, repairs and records the test environment from the
    /// repository's own metadata ([`crate::env::EnvSupport`]). Default: none.
    fn environment(&self) -> Option<&'static dyn crate::env::EnvSupport> {
        None
    }
    /// Give `tree` the lock file the language's runner needs where the project commits none,
    /// resolved offline from the local cache (Rust: `Cargo.lock`, as carve's cargo runner
    /// runs `--locked`). Best effort: when that fails, the tree stays as it is and the runner
    /// says what is missing. Default: nothing to do.
    fn lock_offline(&self, _tree: &Path) {}

    // --- History (FeatureArc) ------------------------------------------------------------

    /// How a source file splits into code and inline tests, for a language whose tests can be
    /// items of its source files ([`InlineTests`]). Default: none.
    fn inline_tests(&self) -> Option<&'static dyn InlineTests> {
        None
    }
    /// What of a definition's text (`text`, its whole span) says whether its code changed:
    /// equal inputs, unchanged code. Default: the whole text. Rust leaves out its doc-comment
    /// lines, so a changed doc comment (or doctest) is no change to the code.
    fn definition_hash_input<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        Cow::Borrowed(text)
    }
    /// The doctests of definition `d`'s doc comments, named as the runner names them (see
    /// [`Doctest::id`]), or `None` when it has none. Default: none.
    fn doctests(&self, _d: &Definition, _index: &DefinitionIndex) -> Option<Doctest> {
        None
    }
    /// The name of the item a doctest documents, from its [`Doctest::id`]
    /// (`src/lib.rs - Either<L,R>::map` → `map`), or `None` when `id` is no doctest id of this
    /// language. Default: none.
    fn doctest_name<'a>(&self, _id: &'a str) -> Option<&'a str> {
        None
    }
    /// Whether definition `d`, test code by the index, is a benchmark that the runner does not
    /// run as a test (Rust's `#[bench]` functions and `benches/` targets), so no test a commit
    /// adds or changes. Default: none is.
    fn is_benchmark(&self, _d: &Definition) -> bool {
        false
    }

    // --- Tracing -----------------------------------------------------------------------

    /// The language's tracing shim; `None` where there is none yet.
    fn trace_shim(&self) -> Option<&'static dyn TraceShim>;
}

/// Definitions of `file` with qualified name `qual` (several when `@L<line>` tells apart
/// same-named ones: the runner cannot tell them apart either).
pub fn named_in_file(index: &DefinitionIndex, file: &FileIndex, qual: &str) -> Vec<NodeId> {
    file.definitions.iter().filter(|id| index.get(id).is_some_and(|d| d.qualname == qual)).cloned().collect()
}

/// The sources of `family` among `sources`, by extension.
pub fn sources_of(family: &[Language], sources: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    sources
        .iter()
        .filter(|(p, _)| Language::from_path(Path::new(p)).is_some_and(|l| family.contains(&l)))
        .cloned()
        .collect()
}

/// The first `shown` of `items` joined by commas, and how many more there are: "`a`, `b` and
/// 4 more" (for rejections that name what refused them).
pub fn listed(items: &[String], shown: usize) -> String {
    let head = items[..items.len().min(shown)].join(", ");
    match items.len().saturating_sub(shown) {
        0 => head,
        more => format!("{head} and {more} more"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_few_and_how_many_more() {
        let items: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(super::listed(&items, 3), "a, b, c and 2 more");
        assert_eq!(super::listed(&items[..2], 3), "a, b");
        assert_eq!(super::listed(&items[..3], 3), "a, b, c");
    }
}
