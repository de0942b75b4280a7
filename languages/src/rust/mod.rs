//! Rust: the definition index (tree-sitter-rust), masking edits and the `cargo check`
//! build check.

pub mod build;
pub mod detect;
pub mod edit;
pub mod index;
pub mod runner;

pub use build::{BuildCheckError, build_check};
pub use index::{index_source, is_test_path};
