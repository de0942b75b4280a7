//! Language facts as data, and tree-sitter helpers every language shares. Language-free:
//! no language module is imported here.
//!
//! - [`ContractSyntax`]: how a language writes the code blocks, imports and doc comments of
//!   a contract (the extractor renders contracts from it without naming a language).
//! - [`parse_errors_with`], [`text`], [`span_of`], [`count_lines`], [`sha256_hex`],
//!   [`utf8`]: the helpers the indexers and edits use.

use sha2::{Digest, Sha256};

use crate::index::{IndexError, Span};

/// How a contract writes an object's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockStyle {
    /// `def f(...):` with an indented `...` body, docstrings inside (Python).
    Indented,
    /// The signature as written, then `{ … }` or the members in braces.
    Braced,
}

/// How a doc comment is written above a braced object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocStyle {
    /// Inside the body (Python docstrings, written by [`BlockStyle::Indented`]).
    Docstring,
    /// `/** … */`.
    JsDoc,
    /// One marker per line (`//`, `///`).
    Line(&'static str),
}

/// How decorators (or attributes) are written above a braced object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecoratorStyle {
    /// The language has none (or the block style writes them).
    None,
    /// `@decorator`.
    At,
    /// `#[attribute]` (kept as written when it already starts with `#`).
    Attribute,
}

/// Where a type's methods are declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodPlacement {
    /// Inside the type's body (classes).
    InBody,
    /// After the type, as declarations of their own, possibly in another file (Go).
    AfterType,
    /// In `impl` blocks, possibly in another file (Rust).
    ImplBlocks,
}

/// How the code that uses an object imports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStyle {
    /// `from module import Name` (Python).
    FromImport,
    /// `import { Name } from "./path";` for an exported top-level definition (ES modules).
    EsModule,
    /// `import "module/path"` (Go).
    QuotedPackage,
    /// `use crate_path::Item;`, objects named by their path (`Type::method`,
    /// `<Type as Trait>::method`) (Rust).
    UsePath,
}

/// How the members of a type that stays are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingMembers {
    /// `class Name:  # exists already` with the members indented (Python).
    IndentedClass,
    /// `class Name { // exists already` with the members in braces (TypeScript).
    BracedClass,
    /// A `// in Name, which exists already` comment above each member (Go).
    Comment,
    /// The members in their `impl` blocks (Rust).
    ImplBlocks,
}

/// How a language writes the parts of a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContractSyntax {
    /// The Markdown code fence language.
    pub fence: &'static str,
    pub block: BlockStyle,
    pub doc: DocStyle,
    pub decorators: DecoratorStyle,
    /// One level of member indentation.
    pub indent: &'static str,
    pub methods: MethodPlacement,
    pub import: ImportStyle,
    pub existing: ExistingMembers,
    /// A signature names the types it uses anywhere in its text (generic constraints,
    /// overloads, an interface's members), not only in its annotations.
    pub typed_signature_text: bool,
}

/// Syntax errors of `source` under `grammar` (`name` is the language's, for messages): the
/// 1-based line and a message for every ERROR node (not those nested in another) and every
/// MISSING node. Empty when the text parses cleanly.
pub fn parse_errors_with(name: &str, grammar: tree_sitter::Language, source: &str) -> Vec<(usize, String)> {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&grammar).is_err() {
        return vec![(1, format!("the {name} grammar could not be loaded"))];
    }
    let Some(tree) = parser.parse(source, None) else {
        return vec![(1, "tree-sitter gave up parsing the file".to_string())];
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if !n.has_error() {
            continue;
        }
        let line = n.start_position().row + 1;
        if n.is_missing() {
            out.push((line, format!("missing `{}`", n.kind())));
            continue;
        }
        if n.is_error() {
            let text = source.get(n.byte_range()).unwrap_or("");
            let snippet: String = text.lines().next().unwrap_or("").chars().take(40).collect();
            out.push((line, format!("syntax error near `{}`", snippet.trim())));
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out.sort();
    out
}

/// The source text of a node (empty if the node's range is not valid in `src`).
pub fn text<'a>(n: tree_sitter::Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

/// A node's span: bytes half-open, lines 1-based and inclusive.
pub fn span_of(n: tree_sitter::Node) -> Span {
    Span {
        start_byte: n.start_byte(),
        end_byte: n.end_byte(),
        start_line: n.start_position().row + 1,
        end_line: n.end_position().row + 1,
    }
}

/// Lines of a file as editors count them: a last line without a newline counts.
pub fn count_lines(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count();
    if bytes.last().is_some_and(|&b| b != b'\n') { newlines + 1 } else { newlines }
}

/// SHA-256 of `bytes`, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `bytes` as UTF-8, or the error naming `path` and the 1-based line of the first bad byte.
pub fn utf8<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, IndexError> {
    std::str::from_utf8(bytes).map_err(|e| IndexError::InvalidUtf8 {
        path: path.to_string(),
        line: bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_hash_and_utf8_errors() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\nb\n"), 2);
        assert_eq!(sha256_hex(b"").len(), 64);
        let err = utf8("x.py", b"ok\n\xff").unwrap_err().to_string();
        assert!(err.starts_with("x.py:2: invalid UTF-8"), "{err}");
    }
}

/// A literal example one test asserts, for problem statements: `call` gives `result`, or
/// raises `raises` (with `message`). Texts are as the test writes them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct TestExample {
    pub call: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raises: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What problem statements may say about a test's code without pasting it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestFacts {
    /// In source order, de-duplicated.
    pub examples: Vec<TestExample>,
    /// Names written as constants (`UPPER_CASE`) the tests use, sorted.
    pub constants: Vec<String>,
}
