//! Source edits as plain data: a byte position, how many bytes to delete there and the text
//! to insert. Every language's masking produces a list of these; [`apply`] applies them in
//! one pass.

use serde::{Deserialize, Serialize};

use crate::Language;
use crate::index::NodeId;

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
    #[error(
        "masking {path} gave overlapping edits at byte {position}; the file changed since it was indexed — re-index and retry"
    )]
    EditsOverlap { path: String, position: usize },
    #[error("masking {language} files is not supported yet ({path})")]
    Unsupported { language: Language, path: String },
}

/// The result of a language's check of masked files beyond re-parsing (Python's
/// `compile()`; see [`crate::LanguageSupport::check_masked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskedCheck {
    Passed,
    /// The check could not run (no interpreter): the files were only re-parsed.
    Skipped {
        warning: String,
    },
    /// A masked file does not compile.
    Failed {
        path: String,
        line: usize,
        message: String,
    },
    /// The checking command failed without naming a file.
    CommandFailed {
        command: String,
        message: String,
    },
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
