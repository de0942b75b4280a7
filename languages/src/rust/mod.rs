//! Rust: the definition index (tree-sitter-rust), masking edits and the `cargo check`
//! build check.

pub mod build;
pub mod edit;
pub mod index;

pub use build::{BuildCheckError, build_check};
pub use index::{index_source, is_test_path};
