//! Python: the definition index (tree-sitter-python), masking edits and the pytest runner.

pub mod detect;
pub mod edit;
pub mod index;
pub mod runner;
pub mod shim;

pub use index::{index_source, is_test_path};
