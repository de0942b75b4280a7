//! Rust: the definition index (tree-sitter-rust), masking edits, the `cargo check`
//! build check, the tracing shim (`trace`), and the tests inside source files FeatureArc
//! reads (`inline_tests`, `doctests`).

pub mod build;
pub mod detect;
pub mod doctests;
pub mod edit;
pub mod env;
pub mod index;
pub mod inline_tests;
pub mod level2;
pub mod runner;
pub mod trace;

pub use build::build_check;
pub use index::{index_source, is_test_path};

use std::borrow::Cow;
use std::path::Path;

use crate::Language;
use crate::build::BuildCheckError;
use crate::index::{Definition, DefinitionIndex, LanguageIndex, NodeId};
use crate::interface::{
    Doctest, InlineTests, LanguageFacts, LanguageSupport, MaskRequest, Masking, PlannedMask, TreeFacts,
};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::{
    BlockStyle, ContractSyntax, DecoratorStyle, DocStyle, ExistingMembers, ImportStyle, MethodPlacement,
};
use crate::trace::TraceShim;

/// Rust behind the language interface.
pub struct Rust;

static SYNTAX: ContractSyntax = ContractSyntax {
    fence: "rust",
    block: BlockStyle::Braced,
    doc: DocStyle::Line("///"),
    decorators: DecoratorStyle::Attribute,
    indent: "    ",
    methods: MethodPlacement::ImplBlocks,
    import: ImportStyle::UsePath,
    existing: ExistingMembers::ImplBlocks,
    typed_signature_text: true,
};

static FACTS: LanguageFacts = LanguageFacts {
    language: Language::Rust,
    family: &[Language::Rust],
    name: "rust",
    extensions: &["rs"],
    build_check: "cargo check --bins --tests --examples",
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    syntax: &SYNTAX,
    stubs_referenced: true,
    tests_in_sources: true,
    tests_in_blocks: false,
    // cargo's build folder; carve's runs build elsewhere (CARGO_TARGET_DIR).
    tree: TreeFacts { build_outputs: &["target"], ..TreeFacts::NONE },
    project_files: &["Cargo.toml"],
    doctest_mark: Some(runner::DOCTEST_MARK),
};

impl LanguageSupport for Rust {
    fn facts(&self) -> &'static LanguageFacts {
        &FACTS
    }
    fn is_test_path(&self, rel: &str) -> bool {
        is_test_path(rel)
    }
    fn index_files(&self, root: &Path, paths: &[String]) -> LanguageIndex {
        index::index_files(root, paths)
    }
    /// Reads the `Cargo.toml` entries too, for crate names.
    fn index_sources(&self, sources: &[(String, Vec<u8>)]) -> LanguageIndex {
        let rust: Vec<(String, Vec<u8>)> = sources
            .iter()
            .filter(|(p, _)| p.ends_with(".rs") || p == "Cargo.toml" || p.ends_with("/Cargo.toml"))
            .cloned()
            .collect();
        index::index_sources(&rust)
    }
    /// A removed file's `mod` line goes, and what only it declared is stubbed where the rest
    /// names it.
    fn plan_mask<'a>(&self, request: MaskRequest<'a>) -> Box<dyn Masking + 'a> {
        let MaskRequest { index, delete, stub, removed_files, .. } = request;
        if removed_files.is_empty() {
            return Box::new(PlannedMask { index, plan: edit::plan(index, delete, stub), mask: edit::mask_file_with });
        }
        let (delete, stub) = edit::stub_what_removed_modules_name(index, delete, stub, removed_files);
        let mut plan = edit::plan(index, &delete, &stub);
        plan.removed_files = removed_files.clone();
        Box::new(PlannedMask { index, plan, mask: edit::mask_file_with })
    }
    /// A crate of its own, `agent_code/` at the repository root (see [`level2`]).
    fn level2(&self) -> Option<&'static dyn crate::interface::Level2Packaging> {
        Some(&level2::RustLevel2)
    }
    fn build_check(&self, root: &Path) -> Result<(), BuildCheckError> {
        build_check(root)
    }
    fn build_check_for(
        &self,
        root: &Path,
        command: &TestCommand,
        vars: &[(String, String)],
    ) -> Result<(), BuildCheckError> {
        build::build_check_with(root, &build::check_flags(command), vars)
    }
    fn environment(&self) -> Option<&'static dyn crate::env::EnvSupport> {
        Some(&env::RUST_ENV)
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
        Some("parse_log_cargo")
    }
    /// `cargo test --no-fail-fast <args> -- --exact <names>`: every target runs the tests of
    /// these names it has (libtest ORs its filters). Doctests are not named this way: `None`.
    fn eval_command(&self, command: &TestCommand, tests: &[String]) -> Option<String> {
        let TestCommand::Cargo { args, test_args, workspace, .. } = command else { return None };
        let mut words: Vec<String> = ["cargo", "test", "--no-fail-fast"].map(String::from).into();
        if *workspace {
            words.push("--workspace".into());
        }
        words.extend(args.iter().cloned());
        words.push("--".into());
        words.extend(test_args.iter().cloned());
        if !tests.is_empty() {
            words.push("--exact".into());
        }
        for id in tests {
            let (_, doctest, name) = runner::targets::split_id(id);
            if doctest || name.is_empty() {
                return None;
            }
            words.push(name.to_string());
        }
        Some(crate::env::shell::join(&words))
    }
    /// cargo `target::module::test`: the `#[test]` function whose module path inside its
    /// crate is `module` — in a `#[cfg(test)]` module of a source file or in `tests/*.rs` —
    /// and whose crate is `target` (read from the package's `Cargo.toml`).
    fn test_definitions(
        &self,
        root: &Path,
        index: &DefinitionIndex,
        test: &str,
    ) -> Option<Result<Vec<NodeId>, String>> {
        let rust = index.files.values().any(|f| f.language == Language::Rust);
        (rust && test.contains("::")).then(|| runner::test_ids::cargo_test(root, index, test))
    }
    fn test_source_file(&self, root: &Path, index: &DefinitionIndex, test: &str) -> Option<String> {
        runner::test_ids::macro_test_file(root, index, test)
    }
    fn trace_shim(&self) -> Option<&'static dyn TraceShim> {
        Some(&trace::SHIM)
    }
    fn build_error_locations(&self, root: &Path, output: &str) -> Vec<(String, u32)> {
        build::error_locations(root, output)
    }
    fn lock_offline(&self, tree: &Path) {
        runner::lock_offline(tree)
    }
    fn inline_tests(&self) -> Option<&'static dyn InlineTests> {
        Some(&inline_tests::Split)
    }
    fn definition_hash_input<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        doctests::without_doc_lines(text)
    }
    fn doctests(&self, d: &Definition, index: &DefinitionIndex) -> Option<Doctest> {
        doctests::doctests(d, index)
    }
    fn doctest_name<'a>(&self, id: &'a str) -> Option<&'a str> {
        doctests::doctest_name(id)
    }
    /// cargo's `<crate>::doctest::src/lib.rs - Type::method`: `Type.method` of that file.
    fn doctest_owner(&self, index: &DefinitionIndex, test: &str) -> Option<NodeId> {
        doctests::doctest_owner(index, test)
    }
    fn is_benchmark(&self, d: &Definition) -> bool {
        doctests::is_bench(&d.path, &d.signature.decorators)
    }
}
