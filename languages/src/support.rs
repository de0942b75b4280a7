//! The language interface: one [`LanguageSupport`] per language (implemented in `python/`,
//! `typescript/` — which serves JavaScript too —, `go/` and `rust/`), and the registry
//! [`support`], the only `match` on [`Language`] that dispatches. Everything outside this
//! crate reaches a language through it; the shared models (`index`, `edit`, `runner`,
//! `build`, `trace`, `syntax`) import no language module.
//!
//! Modelled on ast-grep's `Language` trait and `SupportLang` enum: adding a variant to
//! [`Language`] makes the compiler point here, and a new implementation of the trait lists
//! every method the new language must provide (see `docs/adding-a-language.md`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::build::BuildCheckError;
use crate::edit::{Edit, MaskError, MaskedCheck};
use crate::index::{DefinitionIndex, FileIndex, IndexError, IndexOptions, LanguageIndex, NodeId};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::ContractSyntax;
use crate::trace::TraceShim;
use crate::{Language, go, python, rust, typescript};

/// A masking planned once for the whole tree (`delete`/`stub` over the whole index); it
/// then masks the files of its language one by one.
pub trait Masking: Sync {
    /// Edits that mask one file: the removed definitions that live in it deleted (or, for
    /// `stub`, their bodies replaced by the language's "not implemented"), emptied blocks
    /// filled, imported names of removed definitions dropped. Empty when unaffected.
    fn mask_file(&self, source: &str, file: &FileIndex) -> Result<Vec<Edit>, MaskError>;
}

/// Level 2 (from scratch) packaging: the solution package the rewritten tests import from.
pub trait Level2Packaging: Sync {
    /// The package's file carve writes, relative to the tree (`agent_code/__init__.py`).
    fn init_file(&self, package: &str) -> String;
    /// The reference solution: re-exports `(module, name)` of the original implementation.
    fn reference(&self, names: &[(String, String)]) -> String;
    /// A package that exposes nothing: the rewritten tests must fail against it.
    fn empty(&self) -> String;
    /// How a contract object is imported from the package (`from agent_code import X`).
    fn import_line(&self, package: &str, name: &str) -> String;
    /// Edits that make a test file import the `extracted` objects from `package`.
    fn rewrite_test_imports(
        &self,
        source: &str,
        file: &FileIndex,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        package: &str,
    ) -> Vec<Edit>;
}

/// Everything carve knows about one language.
pub trait LanguageSupport: Sync {
    fn language(&self) -> Language;
    /// The languages this implementation indexes together, itself among them, the first
    /// one owning the group (TypeScript and JavaScript).
    fn family(&self) -> &'static [Language];
    fn name(&self) -> &'static str;
    /// File extensions, without the dot.
    fn extensions(&self) -> &'static [&'static str];
    /// The grammar of the main dialect.
    fn grammar(&self) -> tree_sitter::Language;
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
    fn stubs_referenced(&self) -> bool;
    /// Plan a masking once for the whole tree.
    fn plan_mask<'a>(
        &self,
        index: &'a DefinitionIndex,
        delete: &'a BTreeSet<NodeId>,
        stub: &'a BTreeSet<NodeId>,
    ) -> Box<dyn Masking + 'a>;
    /// Syntax errors of `source`: the 1-based line and a message per ERROR or MISSING node.
    fn parse_errors(&self, source: &str) -> Vec<(usize, String)> {
        crate::syntax::parse_errors_with(self.name(), self.grammar(), source)
    }
    /// A check of the masked files beyond re-parsing, in one process for all of them
    /// (Python: `compile()`); `interpreter` overrides the tool. Default: none.
    fn check_masked(&self, _tree: &Path, _files: &[&String], _interpreter: Option<&Path>) -> MaskedCheck {
        MaskedCheck::Passed
    }
    /// Level 2 packaging, when the language has from-scratch tasks.
    fn level2(&self) -> Option<&'static dyn Level2Packaging>;

    // --- Build check -------------------------------------------------------------------

    /// Build-check `root` (`tsc --noEmit`, `go build ./... && go vet ./...`, `cargo check
    /// --all-targets`); `Ok` for languages without one.
    fn build_check(&self, root: &Path) -> Result<(), BuildCheckError>;
    /// The check's name, for messages.
    fn build_check_name(&self) -> &'static str;

    // --- Runner ------------------------------------------------------------------------

    /// The test set-up the repository's files show, for `carve init` (family owners only).
    fn detect(&self, repo: &Path) -> Vec<Detection>;
    fn run_tests(&self, req: &RunRequest) -> Result<RunResult, RunnerError>;
    fn collect_tests(&self, req: &RunRequest) -> Result<Collection, RunnerError>;
    /// The shorter id a common harness log parser (SWE-bench's) reports for `id`.
    fn harness_id(&self, command: &TestCommand, id: &str) -> Option<String>;
    /// The definitions a test id of this language's runner names, or `None` when `test` is
    /// not in its id format (or the index has none of its tests). `Err` says why nothing
    /// was found. Ids in carve's file form (`path::Name`) are handled by [`test_in_file`].
    fn test_definitions(&self, root: &Path, index: &DefinitionIndex, test: &str)
    -> Option<Result<Vec<NodeId>, String>>;
    /// The qualified-name part of a file-form id's rest without its parameters or subtests
    /// (`test[1]` → `test`, Go `TestX/sub` → `TestX`).
    fn test_base<'t>(&self, rest: &'t str) -> &'t str {
        rest.split('[').next().unwrap_or(rest)
    }

    // --- Contracts ---------------------------------------------------------------------

    /// How the language writes the code blocks, imports and doc comments of a contract.
    fn contract_syntax(&self) -> &'static ContractSyntax;

    // --- Tracing -----------------------------------------------------------------------

    /// The language's tracing shim; `None` where there is none yet.
    fn trace_shim(&self) -> Option<&'static dyn TraceShim>;
}

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
pub fn run_tests(req: &RunRequest) -> Result<RunResult, RunnerError> {
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

/// Detect the test set-up of every language the repository's own files show, in
/// `Language::ALL` order. Empty when nothing is recognised.
pub fn detect(repo: &Path) -> Vec<Detection> {
    families().flat_map(|s| s.detect(repo)).collect()
}

/// The definitions an F2P test id names, in any runner's id format (see `design.md`, "Test
/// ids"): carve's file form `path::Class::test[param]` first (the definition
/// `path::Class.test`, every parametrization with it), then each language's own format.
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

/// Definitions of `file` with qualified name `qual` (several when `@L<line>` tells apart
/// same-named ones: the runner cannot tell them apart either).
pub fn named_in_file(index: &DefinitionIndex, file: &FileIndex, qual: &str) -> Vec<NodeId> {
    file.definitions.iter().filter(|id| index.get(id).is_some_and(|d| d.qualname == qual)).cloned().collect()
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

/// The sources of `family` among `sources`, by extension.
pub(crate) fn sources_of(family: &[Language], sources: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    sources
        .iter()
        .filter(|(p, _)| Language::from_path(Path::new(p)).is_some_and(|l| family.contains(&l)))
        .cloned()
        .collect()
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
    support(lang).plan_mask(index, remove, stub).mask_file(source, file)
}

/// Test code by the conventions of the file's language.
pub fn is_test_path(language: Language, rel: &str) -> bool {
    support(language).is_test_path(rel)
}

#[cfg(test)]
mod tests {
    use super::*;

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
