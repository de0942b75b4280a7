//! Detecting a Rust project's test set-up from its own files, for `carve init`.

use std::path::Path;

use crate::Language;
use crate::runner::{Detection, TestCommand};

/// A Cargo project when the repository root holds `Cargo.toml`: `cargo test`, over every
/// workspace member when the manifest has a `[workspace]` with members; nextest is noted
/// when `cargo nextest` works.
pub fn detect(repo: &Path) -> Option<Detection> {
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).ok()?;
    let mut reasons = vec!["language = rust: found Cargo.toml".to_string()];
    let has_table = |name: &str| manifest.lines().any(|l| l.trim() == format!("[{name}]"));
    let workspace = has_table("workspace") && manifest.lines().any(|l| l.trim_start().starts_with("members"));
    if workspace {
        reasons.push(
            "workspace = true: Cargo.toml has a [workspace] with members, so every member is tested (--workspace)"
                .to_string(),
        );
    } else if !has_table("package") && has_table("workspace") {
        reasons.push("a virtual workspace without members listed: cargo tests its default members".to_string());
    }
    let nextest = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    reasons.push(if nextest {
        "runner = cargo nextest (cargo-nextest is installed: nextest = true; doctests with cargo test --doc)"
            .to_string()
    } else {
        "runner = cargo test (cargo-nextest is not installed)".to_string()
    });
    let setup = if repo.join("Cargo.lock").is_file() {
        "cargo fetch --locked".to_string()
    } else {
        reasons.push("no Cargo.lock: carve runs cargo with --locked and writes nothing into the tree, so `cargo generate-lockfile` must run first".to_string());
        "cargo generate-lockfile && cargo fetch --locked".to_string()
    };
    let command = TestCommand::Cargo { args: Vec::new(), test_args: Vec::new(), workspace, nextest };
    Some(Detection { language: Language::Rust, command, setup: Some(setup), reasons, manifest: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_is_a_workspace_with_a_lock_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/runner-cases");
        let det = detect(&root).unwrap();
        assert_eq!(det.language, Language::Rust);
        assert!(matches!(det.command, TestCommand::Cargo { workspace: true, .. }), "{:?}", det.command);
        assert_eq!(det.setup.as_deref(), Some("cargo fetch --locked"));
        assert!(det.reasons.iter().any(|r| r.contains("--workspace")), "{:?}", det.reasons);
    }

    #[test]
    fn a_single_crate_without_lock_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"x\"\nversion = \"0.1.0\"\n").unwrap();
        let det = detect(d.path()).unwrap();
        assert!(matches!(det.command, TestCommand::Cargo { workspace: false, .. }));
        assert!(det.setup.as_deref().unwrap().starts_with("cargo generate-lockfile"));
        let json = serde_json::to_value(&det.command).unwrap();
        assert_eq!(json["runner"], "cargo");
        assert!(detect(&d.path().join("absent")).is_none());
    }

    /// unicode-rs/unicode-width: a crate whose `scripts/unicode.py` generates its tables was
    /// detected as Python (Python comes first in `Language::ALL`). The root manifest decides;
    /// the loose scripts are still reported, second.
    #[test]
    fn the_root_manifest_outranks_loose_python_scripts() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"w\"\nversion = \"0.1.0\"\n").unwrap();
        std::fs::create_dir(d.path().join("scripts")).unwrap();
        std::fs::write(d.path().join("scripts/unicode.py"), "print('tables')\n").unwrap();
        let found = crate::registry::detect(d.path());
        let langs: Vec<Language> = found.iter().map(|f| f.language).collect();
        assert_eq!(langs, [Language::Rust, Language::Python], "{found:?}");
        assert!(found[0].manifest && !found[1].manifest);
        // A Python manifest beside Cargo.toml (a PyO3 project) keeps both as manifests, in
        // `Language::ALL` order: the user picks with `language` in carve.toml.
        std::fs::write(d.path().join("pyproject.toml"), "[project]\nname = \"w\"\n").unwrap();
        let langs: Vec<Language> = crate::registry::detect(d.path()).iter().map(|f| f.language).collect();
        assert_eq!(langs, [Language::Python, Language::Rust]);
    }
}
