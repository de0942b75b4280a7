//! Everything carve knows about particular languages, and nothing else does.
//!
//! This crate owns the tree-sitter grammars and their queries (`queries/<lang>/*.scm`), the
//! [`DefinitionIndex`] of a repository (every function, method, class … with a stable node
//! id), the source edits that mask a feature, the test-runner adapters that run a project's
//! own tests and report one status per test id, the build checks, and the tracing shims.
//! The other crates are grammar-free: they work on node ids, spans and edits as plain data,
//! and reach a language only through [`support`].
//!
//! - **The interface**: [`LanguageSupport`], implemented once per language folder
//!   ([`python`], [`typescript`] — which serves JavaScript too —, [`go`], [`rust`]), and the
//!   registry [`support`], the only `match` on [`Language`] that dispatches (ast-grep's
//!   `Language` + `SupportLang`). Convenience functions over it: [`detect`], [`run_tests`],
//!   [`collect_tests`], [`harness_id`], [`test_definitions`], [`mask_file`],
//!   [`parse_errors`], FeatureArc's [`inline_tests_of`], [`is_project_file`],
//!   [`is_doctest_id`], [`doctest_name`] and [`lock_offline`], and
//!   [`DefinitionIndex::build`] / [`DefinitionIndex::from_sources`].
//! - **Shared models** (they import no language module): [`index`] (the index model),
//!   [`edit`] (edits as data, applied in one pass), [`runner`] (requests, outcomes, test
//!   commands, the process supervision and reruns every runner uses), [`build`] (the one
//!   build-check error), [`trace`] ([`trace::TraceShim`], the trace-mode type, the probe
//!   map), [`syntax`] (contract syntax as data, shared tree-sitter helpers), [`walk`].
//!
//! Adding a language: `docs/adding-a-language.md` (a variant of [`Language`], one folder
//! with `index/`, `edit/`, `runner/`, `build.rs`, `detect.rs`, `trace/`, one registry line,
//! fixtures).

// Shared models: they import no language module.
pub mod build;
pub mod edit;
pub mod env;
pub mod index;
pub mod runner;
pub mod syntax;
pub mod trace;
pub mod walk;

// The interface (language-free) and its registry (the only dispatch over the languages).
pub mod interface;
mod registry;

// The languages.
pub mod go;
pub mod python;
mod query;
pub mod rust;
pub mod typescript;

pub use edit::Edit;
pub use index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, ImportedKey, NodeId, Span};
pub use interface::{
    CarriedTests, Dependencies, Doctest, InlineTests, InlineTestsError, LanguageFacts, LanguageSupport,
    Level2Packaging, Level2Sources, MaskRequest, Masking, NamedInError, named_in_file,
};
pub use registry::{
    collect_tests, detect, doctest_name, doctest_owner, drop_imported_names, enclosing_tests, eval_command,
    example_owner, families, for_command, harness_id, harness_log_parser, inline_tests_of, is_doctest_id,
    is_project_file, is_test_fixture, is_test_path, lock_offline, mask_file, parse_errors, reconcile_imports,
    run_tests, skip_policy, support, test_definitions, test_source_file,
};

use std::path::Path;

/// The languages carve can index. Exhaustive: adding one makes the compiler list what it
/// lacks ([`support`] first). Everything about a language is reached through [`support`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    /// TypeScript, including TSX (the grammar is chosen per file, see [`Language::grammar_for_path`]).
    TypeScript,
    /// Plain JavaScript (`.js`, `.jsx`, `.mjs`, `.cjs`).
    JavaScript,
    Go,
    Rust,
}

impl Language {
    pub const ALL: &'static [Language] =
        &[Language::Python, Language::TypeScript, Language::JavaScript, Language::Go, Language::Rust];

    pub fn name(self) -> &'static str {
        support(self).name()
    }

    pub fn extensions(self) -> &'static [&'static str] {
        support(self).extensions()
    }

    /// The language of a file, from its extension (`.d.ts` declaration files included).
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        Language::ALL.iter().copied().find(|l| l.extensions().contains(&ext))
    }

    /// The tree-sitter grammar of the language's main dialect (TypeScript without JSX).
    pub fn grammar(self) -> tree_sitter::Language {
        support(self).grammar()
    }

    /// The grammar for one file: `.tsx` files use the TSX grammar.
    pub fn grammar_for_path(self, path: &Path) -> tree_sitter::Language {
        support(self).grammar_for_path(path)
    }
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Language::Python),
            "typescript" | "ts" | "tsx" => Ok(Language::TypeScript),
            "javascript" | "js" | "jsx" => Ok(Language::JavaScript),
            "go" | "golang" => Ok(Language::Go),
            "rust" | "rs" => Ok(Language::Rust),
            other => Err(format!("unknown language `{other}` (known: python, typescript, javascript, go, rust)")),
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
