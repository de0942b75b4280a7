//! Go: the definition index (tree-sitter-go), masking edits (delete or stub with
//! `panic("not implemented")`, unused imports dropped) and the `go build`/`go vet` check.

pub mod build;
pub mod detect;
pub mod edit;
pub mod index;
pub mod runner;
pub mod trace;

pub use build::{BuildCheckError, build_check};
pub use index::{GoIndex, index_files, index_sources, is_test_path, test_definition};
