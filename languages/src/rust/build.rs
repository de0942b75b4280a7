//! The build check after masking: `cargo check --all-targets` in the masked tree, with
//! `CARGO_TARGET_DIR` outside it so the tree stays exactly what carve wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::BuildCheckError;

/// The target directory used for `root`: under the system temp dir, one per tree path,
/// so repeated checks of the same output reuse their build artefacts.
pub fn target_dir_for(root: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let abs = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let digest = hex::encode(Sha256::digest(abs.to_string_lossy().as_bytes()));
    std::env::temp_dir().join(format!("carve-cargo-check-{}", &digest[..16]))
}

/// Run `cargo check --all-targets --offline --quiet` in `root` (the masked tree; its own
/// `Cargo.toml` decides the workspace). `Ok` when it builds; otherwise the compiler output.
pub fn build_check(root: &Path) -> Result<(), BuildCheckError> {
    if !root.join("Cargo.toml").is_file() {
        return Err(BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!(
                "no Cargo.toml in {}; the masked tree is not a Cargo project, so it cannot be checked",
                root.display()
            ),
        });
    }
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["check", "--all-targets", "--offline", "--quiet", "--message-format", "short"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir_for(root))
        .env_remove("RUSTFLAGS")
        .output()
        .map_err(|e| BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!(
                "cargo was not found or could not start in {}: {e}; install Rust (https://rustup.rs) or put cargo on PATH",
                root.display()
            ),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stderr).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stdout));
    Err(BuildCheckError::Failed {
        command: "cargo check --all-targets".to_string(),
        root: root.to_path_buf(),
        detail: format!(" (exit status {}); the masking left code that does not compile", out.status),
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_manifest_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(build_check(dir.path()), Err(BuildCheckError::NotCheckable { .. })));
    }

    #[test]
    fn target_dir_is_outside_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!target_dir_for(dir.path()).starts_with(dir.path()));
    }
}
