//! The definition index: every definition (function, method, class, …) of a repository with
//! a stable node id, its span, signature, doc comment and parent, plus per-file facts the
//! classifier and the extractor need (imports, module-level references, `__all__`).
//!
//! Node ids are `relative/path.py::Qual.Name`; when the same qualified name is defined twice
//! in one file every such definition gets `@L<line>` appended, where `<line>` is the 1-based
//! line of its `def`/`class` keyword. Paths use `/` on every platform.
//!
//! The serialized form carries [`INDEX_VERSION`]; see `docs/formats.md`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::Language;

/// Version of the serialized index. Bump it when a field changes meaning or is removed.
pub const INDEX_VERSION: u32 = 1;

/// A definition's stable id: `path::Qual.Name[@L<line>]`.
pub type NodeId = String;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DefinitionKind {
    /// A free function, including one nested in another function.
    Function,
    /// A function defined directly in a class (or impl/trait body in other languages).
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Impl,
    TypeAlias,
    Module,
    Macro,
    /// A class field that is not a function (TypeScript/JavaScript `readonly id: string`,
    /// `count = 0`): part of a class's interface, with no body to stub.
    Field,
}

impl DefinitionKind {
    /// Types whose body runs once when they are defined, not on every call.
    pub fn is_class_like(self) -> bool {
        matches!(
            self,
            DefinitionKind::Class
                | DefinitionKind::Struct
                | DefinitionKind::Enum
                | DefinitionKind::Trait
                | DefinitionKind::Interface
                | DefinitionKind::Impl
        )
    }
}

/// Byte and line span. Lines are 1-based and inclusive; bytes are half-open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Span {
    pub start_byte: usize,
    pub end_byte: usize,
    pub start_line: usize,
    pub end_line: usize,
}

/// How a parameter is passed: the contract format's vocabulary (`carve_formats::contract`),
/// which the index writes too.
pub use carve_formats::contract::ParameterKind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub kind: ParameterKind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub annotation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub default: Option<String>,
}

/// A signature as the language writes it, and its parts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Signature {
    /// The header exactly as written, without the body, e.g. `async def f(a, /, b=1, *, c) -> int`
    /// or `class Foo(Base, metaclass=Meta)`; decorators are not included (see `decorators`).
    pub text: String,
    pub parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub returns: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_async: bool,
    /// Decorators as written, without the `@`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub decorators: Vec<String>,
    /// Base classes / superclass list as written (classes only).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub bases: Vec<String>,
    /// Go methods: the receiver as written, without parentheses (`c *Circle`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub receiver: Option<String>,
    /// Generic type parameters with their constraints as written (`[T Number]`, `<T: Ord>`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub type_parameters: Option<String>,
}

/// Why a definition needs another one in order to load (not merely to run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadRole {
    Decorator,
    BaseClass,
    /// Default value or annotation evaluated when the `def` runs.
    DefaultOrAnnotation,
    /// A statement in a class body (class attributes …), run when the class is created.
    ClassBody,
    /// On an implementation of an interface (a Rust `impl Trait for Type` block): the type
    /// it is for. The mask keeps such a block while that type and the interface stay (its
    /// removed methods are stubbed): code that stays may use it where no path names it
    /// (`dyn` coercions, generic bounds, formatting), so no reference shows it unused. For
    /// a type the index does not define (`impl Trait for [Item]`, `for Vec<T>`, `for B`) the
    /// target is the interface itself: such a block stays while its interface does.
    Implementation,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LoadReference {
    pub target: NodeId,
    pub role: LoadRole,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub id: NodeId,
    pub language: Language,
    /// Repository-relative path, `/`-separated.
    pub path: String,
    /// Dotted qualified name inside the file: `Class.method`, `outer.inner`.
    pub qualname: String,
    pub name: String,
    pub kind: DefinitionKind,
    /// Whole definition, decorators and attributes included.
    pub span: Span,
    /// 1-based line of the `def`/`class` keyword (after decorators).
    pub def_line: usize,
    /// The body (block) alone, for languages that stub bodies.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub body: Option<Span>,
    pub signature: Signature,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub docstring: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent: Option<NodeId>,
    /// Defined in test code (a test file, `conftest.py`, a `#[cfg(test)]` module …).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_test: bool,
    /// Definitions this one names in its body (resolved statically; nested definitions'
    /// bodies belong to those definitions).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub references: Vec<NodeId>,
    /// Definitions needed for this one to load: decorators, bases, defaults, class-body code.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub load_references: Vec<LoadReference>,
}

/// One name of an import statement: `from m import name as alias`, or `import m as alias`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedName {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub alias: Option<String>,
    /// Span of this name (with its `as alias`) inside the statement.
    pub span: Span,
    /// The definition it binds, when it names one in the repository.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<NodeId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The whole import statement.
    pub span: Span,
    /// Module as written (`.core`, `pkg.core`); for `import a.b` the dotted module itself.
    pub module: String,
    /// Repository-relative file the module resolves to, if it is in the repository.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub resolved_path: Option<String>,
    /// `from m import a, b` lists `a`, `b`; `import m` lists nothing.
    pub names: Vec<ImportedName>,
    /// Whether the statement is at module level (not inside a function or class).
    pub module_level: bool,
}

/// One name a module-level import binds, as written: (module, name, alias) — `from .compat
/// import json as complexjson` binds (`.compat`, `json`, `complexjson`).
pub type ImportedKey = (String, String, Option<String>);

impl Import {
    /// The names this statement binds, when it is at module level and not a directive (none
    /// otherwise).
    pub fn keys(&self) -> impl Iterator<Item = ImportedKey> + '_ {
        self.names
            .iter()
            .filter(|_| self.module_level && !self.is_directive())
            .map(|n| (self.module.clone(), n.name.clone(), n.alias.clone()))
    }

    /// Whether the statement tells the compiler how to read the file rather than binding
    /// names the code uses: Python's `from __future__ import annotations`. A state of a chain
    /// keeps it even when a later commit added it, since definitions kept at their final text
    /// may need it (`X | None` in an annotation under Python 3.9).
    pub fn is_directive(&self) -> bool {
        self.module == "__future__"
    }
}

/// A reference from module-level code (outside every definition) to a definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ModuleReference {
    pub target: NodeId,
    pub line: usize,
}

/// A call whose value is discarded, as a statement of its own in a function's body:
/// `self._validate_crit(headers)`, `check(key)`, `await self.flush()`. The mask may delete
/// it together with the definition it calls, when pass-to-pass tests execute that
/// definition only through such statements (validation then decides whether that was
/// sound). Recorded only when every use of the callee in the caller's body is such a
/// statement: `target` when the callee resolves statically, else every use of an attribute
/// `name` there that resolves to nothing (`alg.check_key_length(key)`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DiscardedCall {
    /// The definition whose body holds the statement.
    pub caller: NodeId,
    /// The definition it calls, when resolved statically.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<NodeId>,
    /// The called name (the last part of `self._validate_crit`).
    pub name: String,
    /// The whole expression statement; for a value only tested (`tested`), the assignment
    /// `v = f(x)` and the `if v: …` right after it.
    pub span: Span,
    /// The call's value is assigned to a local that only the next statement, an `if` without
    /// `else`, tests: deleting both changes only what that `if` did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tested: bool,
    /// Other definitions the statements name that nothing else in the caller's body names
    /// (`InsecureKeyLengthWarning` in `if msg: warnings.warn(msg, InsecureKeyLengthWarning)`):
    /// deleting the statements takes those uses out with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<NodeId>,
}

/// A statement or entry, at module level or in a class body, that names definitions only to
/// bind a value: `peekn = curry(peekn)`, `mode = _StatsProperty("mode", _calc_mode)`, or one
/// entry `KEY: handler` / element of a dict, list, tuple or set literal bound that way (Go: an
/// element of a package-level composite literal that only names a definition, `"date": date`
/// of a registry map; see `go/index/entries.rs`). The mask may delete it together with the definitions it names, so its references keep them
/// alive only while code that stays names what it binds (see `named_by`). Its references are
/// here, not in `module_references` or the class's `load_references`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueBinding {
    /// What the mask deletes: the whole statement, or the entry (without its comma).
    pub span: Span,
    /// The name the statement binds; for an entry, the name of the container.
    pub name: String,
    /// An entry of a container literal (looked up by key or position at run time, so no
    /// static use of `name` says whether it is needed; the trace of its value does).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub entry: bool,
    /// The class whose body holds it; `None` at module level.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub class: Option<NodeId>,
    /// The definitions it names, with the line of each use.
    pub targets: Vec<ModuleReference>,
    /// Code outside the statement that names the bound name (statically, as a bare name in
    /// the same scope, an attribute `x.name` in a file that imports this one, or an imported
    /// name): definition ids, or the file path for module-level code. Sorted. Empty for
    /// entries.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub named_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIndex {
    pub path: String,
    pub language: Language,
    /// Dotted module name for languages that have one (`pkg.core` for `pkg/core.py`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub module: Option<String>,
    /// Test code by the language's conventions.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_test: bool,
    /// Ids of the definitions in this file, in source order.
    pub definitions: Vec<NodeId>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub imports: Vec<Import>,
    /// Module-level code's references to definitions.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub module_references: Vec<ModuleReference>,
    /// Definitions listed by name in `__all__`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub exported: Vec<NodeId>,
    /// Statements and entries that name definitions only to bind a value, in source order.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub value_bindings: Vec<ValueBinding>,
    /// Calls whose value is discarded, statements in function bodies, in source order.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub discarded_calls: Vec<DiscardedCall>,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    pub lines: usize,
}

/// A file that could not be indexed, and why; indexing goes on without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub path: String,
    pub reason: String,
}

/// A definition named by its dotted path in a test-configuration file
/// (`filterwarnings = ["ignore::pkg.warnings.InsecureKeyWarning"]` in `pyproject.toml`): the
/// test runner imports it before any test is collected.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConfigReference {
    /// The configuration file, repository-relative.
    pub path: String,
    pub line: usize,
    pub target: NodeId,
    /// The line is one entry of a list and nothing else (a TOML array element on a line of
    /// its own, an ini continuation line): the mask can take it out with the definition it
    /// names, as it does an `__all__` entry, and the gold patch puts it back.
    #[serde(default)]
    pub removable: bool,
}

/// One language's files indexed together, as its indexer returns them.
#[derive(Debug, Default)]
pub struct LanguageIndex {
    /// In path order.
    pub files: Vec<FileIndex>,
    /// In path order, then source order.
    pub definitions: Vec<Definition>,
    /// Files that could not be read or parsed, in path order.
    pub skipped: Vec<SkippedFile>,
    /// Definitions test-configuration files name, in path and line order.
    pub config_references: Vec<ConfigReference>,
}

impl LanguageIndex {
    /// The index of the linked files (in path order, each with its definitions) and the
    /// files skipped.
    pub(crate) fn from_linked(linked: Vec<(FileIndex, Vec<Definition>)>, skipped: Vec<SkippedFile>) -> LanguageIndex {
        let mut out = LanguageIndex { skipped, ..LanguageIndex::default() };
        for (file, defs) in linked {
            out.files.push(file);
            out.definitions.extend(defs);
        }
        out
    }
}

/// Parse results by path split into the parsed files, in path order and one per path
/// (`path` gives a parsed file's), and the files that failed, in path order.
pub(crate) fn split_parsed<P: Into<String>, F>(
    results: impl IntoIterator<Item = (P, Result<F, IndexError>)>,
    path: impl Fn(&F) -> &str,
) -> (Vec<F>, Vec<SkippedFile>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (p, result) in results {
        match result {
            Ok(f) => files.push(f),
            Err(e) => skipped.push(SkippedFile { path: p.into(), reason: e.to_string() }),
        }
    }
    files.sort_by(|a, b| path(a).cmp(path(b)));
    files.dedup_by(|a, b| path(a) == path(b));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    (files, skipped)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionIndex {
    pub version: u32,
    pub files: BTreeMap<String, FileIndex>,
    pub definitions: BTreeMap<NodeId, Definition>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub skipped: Vec<SkippedFile>,
    /// Definitions named in test-configuration files (see [`ConfigReference`]).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub config_references: Vec<ConfigReference>,
}

impl Default for DefinitionIndex {
    fn default() -> Self {
        DefinitionIndex {
            version: INDEX_VERSION,
            files: BTreeMap::new(),
            definitions: BTreeMap::new(),
            skipped: Vec::new(),
            config_references: Vec::new(),
        }
    }
}

impl DefinitionIndex {
    pub fn get(&self, id: &str) -> Option<&Definition> {
        self.definitions.get(id)
    }

    /// `id` and the definitions it is nested in, innermost first (a method, its class …).
    pub fn lineage<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        std::iter::successors(Some(id), |c| self.get(c).and_then(|d| d.parent.as_deref()))
    }

    /// Children of a definition (methods of a class, nested functions), in source order.
    pub fn children<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Definition> + 'a {
        let path = id.split("::").next().unwrap_or("");
        self.files
            .get(path)
            .into_iter()
            .flat_map(|f| f.definitions.iter())
            .filter_map(|d| self.definitions.get(d))
            .filter(move |d| d.parent.as_deref() == Some(id))
    }
}

/// Which files of a repository to index: globs matched against `/`-separated paths relative
/// to the root (`*` also crosses `/`; a pattern matching a directory covers everything
/// below it). An empty `include` means every file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexOptions {
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// Why indexing, or indexing one file, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    #[error("repository root {} is not a directory; pass the path of a checked-out repository", .0.display())]
    RootNotFound(std::path::PathBuf),
    #[error(
        "invalid {kind} glob `{pattern}`: {message}; globs are matched against paths relative to the repository root, e.g. `src/**/*.py`"
    )]
    BadGlob { kind: &'static str, pattern: String, message: String },
    #[error("cannot walk {}: {message}", .root.display())]
    Walk { root: std::path::PathBuf, message: String },
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}:{line}: invalid UTF-8; the file is not indexed (re-encode it as UTF-8 or exclude it)")]
    InvalidUtf8 { path: String, line: usize },
    #[error("{path}:{line}: {message}; the file is not indexed (fix it or exclude it)")]
    Syntax { path: String, line: usize, message: String },
}

impl DefinitionIndex {
    /// Add one language's files, definitions and skipped files (each language indexes its
    /// own files; paths never overlap).
    pub(crate) fn merge(&mut self, part: LanguageIndex) {
        self.files.extend(part.files.into_iter().map(|f| (f.path.clone(), f)));
        self.definitions.extend(part.definitions.into_iter().map(|d| (d.id.clone(), d)));
        self.skipped.extend(part.skipped);
        self.skipped.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.reason.cmp(&b.reason)));
        self.config_references.extend(part.config_references);
        self.config_references.sort();
        self.config_references.dedup();
    }
}

/// Whether [`DefinitionIndex::from_sources`] reads the file at `rel`: a source file of a
/// known language, or a manifest an indexer reads for names (`Cargo.toml` for crate names,
/// `go.mod` for import paths). Callers that index a subset of a tree in memory (history
/// analysis) pass these files along.
pub fn is_index_input(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    Language::from_path(std::path::Path::new(rel)).is_some() || name == "Cargo.toml" || name == "go.mod"
}
