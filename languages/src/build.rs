//! The masked project must still build: each language's check (see
//! [`crate::LanguageSupport::build_check`]) reports failures with this one error type.

use std::path::PathBuf;

/// Why the masked project does not build, or could not be checked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildCheckError {
    /// The tree is not a project the check can run on (no `tsconfig.json`, `go.mod`,
    /// `Cargo.toml`), or its toolchain is not installed; the message says what to do.
    #[error("{message}")]
    NotCheckable { root: PathBuf, message: String },
    #[error("could not run `{command}` in {}: {source}", .root.display())]
    Spawn { command: String, root: PathBuf, source: std::io::Error },
    #[error("cannot list {}: {message}", .path.display())]
    Io { path: PathBuf, message: String },
    /// The check ran and failed: `detail` follows the directory (`" (exit status 1)"`).
    #[error("`{command}` failed in {}{detail}:\n{output}", .root.display())]
    Failed { command: String, root: PathBuf, detail: String, output: String },
}
