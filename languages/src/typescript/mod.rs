//! TypeScript and JavaScript (one module: the grammars share almost every node kind):
//! the definition index, masking edits and the `tsc` build check.
//!
//! Node ids follow the shared scheme (`src/money.ts::Money.plus`). Class members are
//! `Class.member`; a getter and a setter of the same property share the qualified name
//! and therefore both get `@L<line>` (`Money.amount@L31`), as do declarations merged
//! under one name (a function and a namespace). Overload signatures belong to their
//! implementation: one definition whose signature text lists every overload, then the
//! implementation's header. Test cases of test files (`describe`/`it`/`test` calls with a
//! title and a callback) are definitions too, named by their title
//! (`tests/money.test.ts::Money.keeps cents exactly`), so that single tests can be removed.

pub mod build;
pub mod deps;
pub mod detect;
pub mod edit;
pub mod env;
pub mod index;
pub mod level2;
pub mod runner;
#[cfg(test)]
mod tests;
pub mod trace;

pub use build::build_check;
pub use index::{index_files, index_sources};

use std::path::Path;

use crate::Language;
use crate::build::BuildCheckError;
use crate::index::{DefinitionIndex, LanguageIndex, NodeId};
use crate::interface::{
    LanguageFacts, LanguageSupport, Level2Packaging, MaskRequest, Masking, PlannedMask, TreeFacts, sources_of,
};
use crate::runner::{Collection, Detection, RunRequest, RunResult, RunnerError, TestCommand};
use crate::syntax::{
    BlockStyle, ContractSyntax, DecoratorStyle, DocStyle, ExistingMembers, ImportStyle, MethodPlacement,
};
use crate::trace::TraceShim;

/// The `left` and `right` of the assignment an expression statement holds (`a = b;`, as in
/// `module.exports = { a }` or `exports.x = a`), or `None` for any other statement.
fn assignment_sides(stmt: tree_sitter::Node) -> Option<(tree_sitter::Node, tree_sitter::Node)> {
    let assign = stmt.named_child(0).filter(|a| a.kind() == "assignment_expression")?;
    Some((assign.child_by_field_name("left")?, assign.child_by_field_name("right")?))
}

/// Test code by the jest/vitest conventions: `*.test.*` and `*.spec.*` files, and every
/// file under a `__tests__/` directory.
pub fn is_test_path(rel: &str) -> bool {
    if rel.split('/').any(|c| c == "__tests__") {
        return true;
    }
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let mut parts = name.split('.');
    parts.next();
    let rest: Vec<&str> = parts.collect();
    // `a.test.ts`, `a.spec.tsx`, `a.test.d.ts` is not code but still test-only.
    rest.len() >= 2 && rest[..rest.len() - 1].iter().any(|p| *p == "test" || *p == "spec")
}

/// TypeScript and JavaScript behind the language interface: one implementation, two
/// dialects (names, extensions, grammars; only TypeScript is type-checked).
pub struct Script {
    facts: &'static LanguageFacts,
    type_checked: bool,
}

const FAMILY: &[Language] = &[Language::TypeScript, Language::JavaScript];

const fn syntax(fence: &'static str) -> ContractSyntax {
    ContractSyntax {
        fence,
        block: BlockStyle::Braced,
        doc: DocStyle::JsDoc,
        decorators: DecoratorStyle::At,
        indent: "  ",
        methods: MethodPlacement::InBody,
        import: ImportStyle::EsModule,
        existing: ExistingMembers::BracedClass,
        typed_signature_text: true,
    }
}

/// npm's installed packages, and the caches tools keep inside them (vite's pre-bundled
/// dependencies, vitest's results, the `.cache` of babel, eslint and others), which runs
/// rewrite in place.
const TREE: TreeFacts =
    TreeFacts { dependencies: &[deps::FOLDER], dependency_caches: &[".vite", ".vitest", ".cache"], ..TreeFacts::NONE };
static TS_FACTS: LanguageFacts = LanguageFacts {
    language: Language::TypeScript,
    family: FAMILY,
    name: "typescript",
    extensions: &["ts", "tsx", "mts", "cts"],
    build_check: "tsc --noEmit",
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    syntax: &TS_SYNTAX,
    stubs_referenced: true,
    tests_in_sources: false,
    tests_in_blocks: true,
    tree: TREE,
    project_files: &["package.json", "tsconfig.json"],
    doctest_mark: None,
};
static JS_FACTS: LanguageFacts = LanguageFacts {
    language: Language::JavaScript,
    family: FAMILY,
    name: "javascript",
    extensions: &["js", "jsx", "mjs", "cjs"],
    build_check: "none",
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    syntax: &JS_SYNTAX,
    stubs_referenced: true,
    tests_in_sources: false,
    tests_in_blocks: true,
    tree: TREE,
    project_files: &["package.json"],
    doctest_mark: None,
};
static TS_SYNTAX: ContractSyntax = syntax("typescript");
static JS_SYNTAX: ContractSyntax = syntax("javascript");

impl Script {
    pub const TYPESCRIPT: Script = Script { facts: &TS_FACTS, type_checked: true };
    pub const JAVASCRIPT: Script = Script { facts: &JS_FACTS, type_checked: false };
}

fn tsx(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "tsx")
}

impl LanguageSupport for Script {
    fn facts(&self) -> &'static LanguageFacts {
        self.facts
    }
    fn grammar_for_path(&self, path: &Path) -> tree_sitter::Language {
        if self.type_checked && tsx(path) { tree_sitter_typescript::LANGUAGE_TSX.into() } else { self.grammar() }
    }
    fn is_test_path(&self, rel: &str) -> bool {
        is_test_path(rel)
    }
    fn index_files(&self, root: &Path, paths: &[String]) -> LanguageIndex {
        index_files(root, paths)
    }
    fn index_sources(&self, sources: &[(String, Vec<u8>)]) -> LanguageIndex {
        index_sources(&sources_of(FAMILY, sources))
    }
    fn plan_mask<'a>(&self, request: MaskRequest<'a>) -> Box<dyn Masking + 'a> {
        let MaskRequest { index, delete, stub, .. } = request;
        // File by file: each removed definition's fate is decided on its own.
        Box::new(PlannedMask { index, plan: (delete, stub), mask: |s, f, i, (d, st)| edit::mask_file(s, f, i, d, st) })
    }
    /// TypeScript files may be TSX: clean under the TSX grammar is clean.
    fn parse_errors(&self, source: &str) -> Vec<(usize, String)> {
        let errors = crate::syntax::parse_errors_with(self.facts.name, self.grammar(), source);
        let tsx_clean = || {
            crate::syntax::parse_errors_with(self.facts.name, tree_sitter_typescript::LANGUAGE_TSX.into(), source)
                .is_empty()
        };
        if self.type_checked && !errors.is_empty() && tsx_clean() {
            return Vec::new();
        }
        errors
    }
    /// TypeScript: the module `agent_code/index.ts` (see [`level2`]); JavaScript has none yet.
    fn level2(&self) -> Option<&'static dyn Level2Packaging> {
        if self.type_checked { Some(&level2::TypeScriptLevel2) } else { None }
    }
    fn build_check(&self, root: &Path) -> Result<(), BuildCheckError> {
        if self.type_checked { build_check(root) } else { Ok(()) }
    }
    fn build_error_locations(&self, root: &Path, output: &str) -> Vec<(String, u32)> {
        build::error_locations(root, output)
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
    fn harness_id(&self, command: &TestCommand, id: &str) -> Option<String> {
        runner::spec(command).and_then(|(kind, _, _)| runner::harness::harness_id(kind, id))
    }
    /// SWE-bench's parser of vitest's or jest's verbose output, or of mocha's TAP output
    /// (node:test: none).
    fn harness_log_parser(&self, command: &TestCommand) -> Option<&'static str> {
        runner::eval::harness_log_parser(command)
    }
    /// `npx --no-install vitest run … --reporter=verbose -t <pattern> <files>` / `npx
    /// --no-install jest --ci --verbose … -t <pattern> --runTestsByPath <files>` / `npx
    /// --no-install mocha … --reporter tap --grep <pattern> <files>` (see `runner::eval`);
    /// node:test has none.
    fn eval_command(&self, command: &TestCommand, tests: &[String]) -> Option<String> {
        runner::eval::eval_command(command, tests)
    }
    /// vitest / jest / node:test `path > describe > test`: the `describe`/`it`/`test` block
    /// of `path` with those titles.
    fn test_definitions(
        &self,
        _root: &Path,
        index: &DefinitionIndex,
        test: &str,
    ) -> Option<Result<Vec<NodeId>, String>> {
        let (path, rest) = test.split_once(" > ")?;
        Some(runner::test_ids::js_test(index, path, rest))
    }
    fn trace_shim(&self) -> Option<&'static dyn TraceShim> {
        Some(&trace::SHIM)
    }
    fn environment(&self) -> Option<&'static dyn crate::env::EnvSupport> {
        Some(&env::SCRIPT_ENV)
    }
    fn dependencies(&self) -> Option<&'static dyn crate::interface::Dependencies> {
        Some(&deps::NPM)
    }
}
