//! Everything carve knows about particular languages, and nothing else does.
//!
//! This crate owns the tree-sitter grammars and their queries (`queries/<lang>/*.scm`),
//! the [`DefinitionIndex`] of a repository (every function, method, class … with a stable
//! node id), the language-specific source edits used to mask a feature (see [`edit`]),
//! and the test-runner adapters that run a project's own tests and report one status per
//! test id (see [`runner`]). The other crates are grammar-free: they work on node ids,
//! spans and edits as plain data.
//!
//! Adding a language: add a variant to [`Language`], its grammar behind a Cargo feature,
//! its queries under `queries/<lang>/`, an indexer module, an edit module and a runner.

pub mod build;
pub mod edit;
pub mod go;
pub mod index;
pub mod python;
mod query;
pub mod runner;
pub mod rust;
pub mod trace;
pub mod typescript;
pub mod walk;

pub use edit::Edit;
pub use index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, NodeId, Span};

use std::path::Path;

/// The languages carve can index. Plain `match` dispatch: with a handful of languages a
/// trait object buys nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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
        match self {
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::Go => "go",
            Language::Rust => "rust",
        }
    }

    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["py"],
            Language::TypeScript => &["ts", "tsx", "mts", "cts"],
            Language::JavaScript => &["js", "jsx", "mjs", "cjs"],
            Language::Go => &["go"],
            Language::Rust => &["rs"],
        }
    }

    /// The language of a file, from its extension (`.d.ts` declaration files included).
    pub fn from_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        Language::ALL.iter().copied().find(|l| l.extensions().contains(&ext))
    }

    /// The tree-sitter grammar of the language's main dialect (TypeScript without JSX).
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }

    /// The grammar for one file: `.tsx` files use the TSX grammar.
    pub fn grammar_for_path(self, path: &Path) -> tree_sitter::Language {
        match self {
            Language::TypeScript if path.extension().is_some_and(|e| e == "tsx") => {
                tree_sitter_typescript::LANGUAGE_TSX.into()
            }
            other => other.grammar(),
        }
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
