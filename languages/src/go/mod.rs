//! Go: the definition index (tree-sitter-go), masking edits (delete or stub with
//! `panic("not implemented")`, unused imports dropped) and the `go build`/`go vet` check.

pub mod build;
pub mod detect;
pub mod edit;
pub mod env;
pub mod index;
pub mod level2;
pub mod manifest;
pub mod runner;
pub mod trace;

pub use build::build_check;
pub use index::{GoIndex, example_owner, index_files, index_sources, is_test_path, test_definition};

use std::path::Path;

use crate::Language;
use crate::build::BuildCheckError;
use crate::index::{DefinitionIndex, LanguageIndex, NodeId};
use crate::interface::{
    LanguageFacts, LanguageSupport, Level2Packaging, MaskRequest, Masking, NamedInError, PlannedMask, TreeFacts,
};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::{
    BlockStyle, ContractSyntax, DecoratorStyle, DocStyle, ExistingMembers, ImportStyle, MethodPlacement,
};
use crate::trace::TraceShim;

/// Go behind the language interface.
pub struct Go;

static SYNTAX: ContractSyntax = ContractSyntax {
    fence: "go",
    block: BlockStyle::Braced,
    doc: DocStyle::Line("//"),
    decorators: DecoratorStyle::None,
    indent: "    ",
    methods: MethodPlacement::AfterType,
    import: ImportStyle::QuotedPackage,
    existing: ExistingMembers::Comment,
    typed_signature_text: true,
};

static FACTS: LanguageFacts = LanguageFacts {
    language: Language::Go,
    family: &[Language::Go],
    name: "go",
    extensions: &["go"],
    build_check: "go build ./... && go vet ./...",
    grammar: || tree_sitter_go::LANGUAGE.into(),
    syntax: &SYNTAX,
    stubs_referenced: true,
    tests_in_sources: false,
    tests_in_blocks: false,
    tree: TreeFacts::NONE,
    project_files: &["go.mod", "go.sum"],
    doctest_mark: None,
};

impl LanguageSupport for Go {
    fn facts(&self) -> &'static LanguageFacts {
        &FACTS
    }
    fn is_test_path(&self, rel: &str) -> bool {
        is_test_path(rel)
    }
    fn index_files(&self, root: &Path, paths: &[String]) -> LanguageIndex {
        index_files(root, paths)
    }
    /// Reads the `go.mod` entries too, for import paths.
    fn index_sources(&self, sources: &[(String, Vec<u8>)]) -> LanguageIndex {
        index_sources(sources)
    }
    fn plan_mask<'a>(&self, request: MaskRequest<'a>) -> Box<dyn Masking + 'a> {
        let MaskRequest { index, delete, stub, .. } = request;
        Box::new(PlannedMask { index, plan: edit::plan_masking(index, delete, stub), mask: edit::mask_file_with })
    }
    /// A `go.mod` naming the module as its code does (see [`manifest`]).
    fn stand_in_project_files(&self, sources: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
        manifest::stand_in_go_mod(sources).map(|b| ("go.mod".to_string(), b)).into_iter().collect()
    }
    /// Unused imports out, used ones another version of the file imports in (see
    /// [`edit::imports`]).
    fn reconcile_imports(
        &self,
        source: &str,
        path: &str,
        others: &[&str],
    ) -> Result<Vec<crate::edit::Edit>, crate::edit::MaskError> {
        edit::imports::reconcile_imports(source, path, others)
    }
    /// A package of its own, `agent_code/` at the module root (see [`level2`]).
    fn level2(&self) -> Option<&'static dyn Level2Packaging> {
        Some(&level2::GoLevel2)
    }
    fn build_check(&self, root: &Path) -> Result<(), BuildCheckError> {
        build_check(root)
    }
    fn build_error_locations(&self, root: &Path, output: &str) -> Vec<(String, u32)> {
        build::error_locations(root, output)
    }
    /// A test of the masked state that panicked names the function it panicked in (the
    /// runner's message `panic: … in pkg.(*T).M (file.go:N)`): a stub reached through state
    /// the trace could not see (google/uuid's lazily set node id).
    fn load_error_names(&self, message: &str) -> Vec<NamedInError> {
        runner::panics::named_in_panic(message).map(|(name, owner)| NamedInError { name, owner }).into_iter().collect()
    }
    fn environment(&self) -> Option<&'static dyn crate::env::EnvSupport> {
        Some(&env::GO_ENV)
    }
    fn detect(&self, repo: &Path) -> Vec<Detection> {
        detect::detect(repo).into_iter().collect()
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
        Some("parse_log_gotest")
    }
    /// `go test -count=1 -v <args> -run <pattern> <packages>`: one `-run` pattern over every
    /// package (a package without one of the tests runs none).
    fn eval_command(&self, command: &TestCommand, tests: &[String]) -> Option<String> {
        runner::eval_command(command, tests)
    }
    /// `go test` `importpath/TestX/sub`: the `TestX` function of a `_test.go` file of package
    /// `importpath` (a subtest takes its whole top-level test along).
    fn test_definitions(
        &self,
        _root: &Path,
        index: &DefinitionIndex,
        test: &str,
    ) -> Option<Result<Vec<NodeId>, String>> {
        let go = index.files.values().any(|f| f.language == Language::Go && f.is_test);
        if !go || test.contains("::") {
            return None;
        }
        Some(match test_definition(index, test) {
            Some(id) => Ok(vec![id]),
            None => Err(index::go_miss(index, test)),
        })
    }
    /// `importpath/ExampleType_Method` documents `Type.Method` (see [`example_owner`]).
    fn example_owner(&self, index: &DefinitionIndex, test: &str) -> Option<NodeId> {
        example_owner(index, test)
    }
    /// `importpath/TestX/sub`: the record of `importpath/TestX` is its own code only (the
    /// subtest's is its own, see `shims/go/carveprobe`), yet `TestX` fails when `sub` does.
    fn enclosing_tests<'t>(&self, id: &'t str) -> Vec<&'t str> {
        if id.contains("::") || id.contains(" > ") {
            return Vec::new();
        }
        id.rmatch_indices('/').map(|(i, _)| &id[..i]).collect()
    }
    /// `path::TestX/sub` names `TestX`.
    fn test_base<'t>(&self, rest: &'t str) -> &'t str {
        rest.split('/').next().unwrap_or(rest)
    }
    fn trace_shim(&self) -> Option<&'static dyn TraceShim> {
        Some(trace::shim())
    }
}

#[cfg(test)]
mod load_error_tests {
    use super::*;

    #[test]
    fn a_panicking_stub_is_named_for_the_load_repair() {
        let msg = "panic: not implemented [recovered]\n\tpanic: not implemented in github.com/google/uuid.setNodeInterface (node.go:40)";
        let names = Go.load_error_names(msg.lines().last().unwrap().trim_start());
        assert_eq!(names, vec![NamedInError { name: "setNodeInterface".into(), owner: Some("node".into()) }]);
        let method = Go.load_error_names(
            "panic: not implemented in example.com/shapes/catalog.(*Catalog).Largest (catalog.go:12)",
        );
        assert_eq!(method, vec![NamedInError { name: "Largest".into(), owner: Some("Catalog".into()) }]);
        assert!(Go.load_error_names("--- FAIL: TestX: got 3, want 4").is_empty());
    }
}
