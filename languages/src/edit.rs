//! Source edits as plain data: a byte position, how many bytes to delete there and the text
//! to insert. Every language's masking produces a list of these; [`apply`] applies them in
//! one pass.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::Language;
use crate::index::{DefinitionIndex, FileIndex, NodeId};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edit {
    /// Byte offset in the original text.
    pub position: usize,
    /// Bytes deleted from `position`.
    pub deleted_length: usize,
    /// Text inserted at `position`.
    pub inserted_text: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    #[error("edits overlap at byte {0}")]
    Overlap(usize),
    #[error("edit at byte {0} is outside the text ({1} bytes) or splits a character")]
    OutOfBounds(usize, usize),
}

impl Edit {
    pub fn delete(start: usize, end: usize) -> Edit {
        Edit { position: start, deleted_length: end - start, inserted_text: String::new() }
    }
    pub fn replace(start: usize, end: usize, text: impl Into<String>) -> Edit {
        Edit { position: start, deleted_length: end - start, inserted_text: text.into() }
    }
    pub fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit { position: at, deleted_length: 0, inserted_text: text.into() }
    }
    pub fn end(&self) -> usize {
        self.position + self.deleted_length
    }
}

/// Apply edits to `text` in one pass. Edits are sorted by position; two edits may not
/// overlap (an insertion at the end of a deletion is fine). Identical edits are applied once.
pub fn apply(text: &str, edits: &[Edit]) -> Result<String, EditError> {
    let mut edits: Vec<&Edit> = edits.iter().collect();
    edits.sort();
    edits.dedup();
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for e in edits {
        if e.end() > text.len() || !text.is_char_boundary(e.position) || !text.is_char_boundary(e.end()) {
            return Err(EditError::OutOfBounds(e.position, text.len()));
        }
        if e.position < cursor {
            return Err(EditError::Overlap(e.position));
        }
        out.push_str(&text[cursor..e.position]);
        out.push_str(&e.inserted_text);
        cursor = e.end();
    }
    out.push_str(&text[cursor..]);
    Ok(out)
}

/// Why a file could not be masked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaskError {
    #[error("could not parse {path} with tree-sitter; re-index the repository and retry")]
    Parse { path: String },
    #[error(
        "definition {id} (line {line}) was not found in {path}; the file changed since it was indexed — re-index and retry"
    )]
    DefinitionNotFound { path: String, id: NodeId, line: usize },
    #[error(
        "import statement at {path}:{line} was not found; the file changed since it was indexed — re-index and retry"
    )]
    ImportNotFound { path: String, line: usize },
    #[error("masking {language} files is not supported yet ({path})")]
    Unsupported { language: Language, path: String },
}

/// Edits that mask one file: delete the definitions of `remove` that live in it, fill
/// emptied blocks, drop imported names whose definitions are removed, and — for languages
/// that must keep building — replace the bodies of the definitions of `stub` with the
/// language's "not implemented" (their signatures stay because remaining code names them).
/// No edits when the file is unaffected. See [`crate::python::edit`] for the Python rules
/// (Python deletes; `stub` is always empty for it).
pub fn mask_file(
    lang: Language,
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    remove: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
) -> Result<Vec<Edit>, MaskError> {
    match lang {
        Language::Python => {
            let all: BTreeSet<NodeId> = remove.union(stub).cloned().collect();
            crate::python::edit::mask_file(source, file, index, &all)
        }
        Language::TypeScript | Language::JavaScript => {
            crate::typescript::edit::mask_file(source, file, index, remove, stub)
        }
        Language::Go => crate::go::edit::mask_file(source, file, index, remove, stub),
        Language::Rust => crate::rust::edit::mask_file(source, file, index, remove, stub),
    }
}

/// Edits that make a test file import the `extracted` objects from the Level 2 solution
/// package `package` instead of from the repository.
pub fn rewrite_imports_for_level2(
    lang: Language,
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
) -> Vec<Edit> {
    match lang {
        Language::Python => crate::python::edit::rewrite_imports_for_level2(source, file, index, extracted, package),
        _ => Vec::new(),
    }
}

/// Syntax errors of `source`: the 1-based line and a message for every ERROR node (not
/// those nested in another) and every MISSING node. Empty when the text parses cleanly.
pub fn parse_errors(lang: Language, source: &str) -> Vec<(usize, String)> {
    let errors = parse_errors_with(lang, lang.grammar(), source);
    // TypeScript files may be TSX: clean under the TSX grammar is clean.
    if lang == Language::TypeScript
        && !errors.is_empty()
        && parse_errors_with(lang, tree_sitter_typescript::LANGUAGE_TSX.into(), source).is_empty()
    {
        return Vec::new();
    }
    errors
}

fn parse_errors_with(lang: Language, grammar: tree_sitter::Language, source: &str) -> Vec<(usize, String)> {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&grammar).is_err() {
        return vec![(1, format!("the {lang} grammar could not be loaded"))];
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_sorted_edits_in_one_pass() {
        let t = "abcdef";
        let out = apply(t, &[Edit::replace(4, 5, "X"), Edit::delete(0, 2), Edit::insert(6, "!")]).unwrap();
        assert_eq!(out, "cdXf!");
    }

    #[test]
    fn rejects_overlap() {
        assert_eq!(apply("abcdef", &[Edit::delete(0, 3), Edit::delete(2, 4)]), Err(EditError::Overlap(2)));
    }
}

#[cfg(test)]
mod parse_error_tests {
    use super::*;

    #[test]
    fn typescript_accepts_tsx() {
        assert!(parse_errors(Language::TypeScript, "const v = <div>{1}</div>;\n").is_empty());
        assert!(parse_errors(Language::TypeScript, "const n = <number>x;\n").is_empty());
        assert!(!parse_errors(Language::TypeScript, "function (\n").is_empty());
    }

    #[test]
    fn reports_error_and_missing_nodes_by_line() {
        assert!(parse_errors(Language::Python, "def f():\n    return 1\n").is_empty());
        let errs = parse_errors(Language::Python, "x = 1\ndef f(:\n    pass\n");
        assert!(!errs.is_empty());
        assert_eq!(errs[0].0, 2, "{errs:?}");
    }
}
