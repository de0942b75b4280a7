//! The masked project must still build: one check per language, run on the masked tree
//! after extraction (Python's `compile()` check runs inside the extractor already).

use std::path::Path;

use crate::Language;

/// Build-check `root` as a project of `lang`: `tsc --noEmit`, `go build ./... && go vet
/// ./...`, `cargo check --all-targets`. `Err` holds the tool's report.
pub fn build_check(lang: Language, root: &Path) -> Result<(), String> {
    match lang {
        Language::Python | Language::JavaScript => Ok(()),
        Language::TypeScript => crate::typescript::build_check(root).map_err(|e| e.to_string()),
        Language::Go => crate::go::build_check(root).map_err(|e| e.to_string()),
        Language::Rust => crate::rust::build_check(root).map_err(|e| e.to_string()),
    }
}

/// The name of the check, for messages.
pub fn build_check_name(lang: Language) -> &'static str {
    match lang {
        Language::Python => "python -m py_compile",
        Language::JavaScript => "none",
        Language::TypeScript => "tsc --noEmit",
        Language::Go => "go build ./... && go vet ./...",
        Language::Rust => "cargo check --all-targets",
    }
}
