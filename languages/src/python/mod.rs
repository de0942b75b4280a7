//! Python: the definition index (tree-sitter-python), masking edits and the pytest runner.

pub mod edit;
pub mod runner;
