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
    let installed = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    let custom = custom_harness(repo, &manifest);
    let nextest = installed && custom.is_none();
    reasons.push(match (installed, custom) {
        (true, None) => {
            "runner = cargo nextest (cargo-nextest is installed: nextest = true; doctests with cargo test --doc)"
                .to_string()
        }
        (true, Some((file, test))) => format!(
            "runner = cargo test: {file} declares the test `{test}` with `harness = false`, whose own main need not \
             answer cargo-nextest's `--list` (servo/rust-url's `url_wpt` does not, and nextest then runs nothing)"
        ),
        (false, _) => "runner = cargo test (cargo-nextest is not installed)".to_string(),
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

/// The first test target with `harness = false` (its manifest's path, its name) in the
/// root manifest or a workspace member's (members by path, or `dir/*`).
fn custom_harness(repo: &Path, root_manifest: &str) -> Option<(String, String)> {
    let parse = |text: &str| text.parse::<toml::Table>().ok();
    let root = parse(root_manifest)?;
    let mut manifests = vec![("Cargo.toml".to_string(), root.clone())];
    let members = root.get("workspace").and_then(|w| w.get("members")).and_then(|m| m.as_array());
    for member in members.into_iter().flatten().filter_map(|m| m.as_str()) {
        let dirs: Vec<String> = match member.strip_suffix("/*") {
            Some(parent) => {
                let mut found: Vec<String> = std::fs::read_dir(repo.join(parent))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.path().join("Cargo.toml").is_file())
                    .map(|e| format!("{parent}/{}", e.file_name().to_string_lossy()))
                    .collect();
                found.sort();
                found
            }
            None => vec![member.to_string()],
        };
        for dir in dirs {
            let path = format!("{dir}/Cargo.toml");
            if let Some(table) = std::fs::read_to_string(repo.join(&path)).ok().as_deref().and_then(parse) {
                manifests.push((path, table));
            }
        }
    }
    manifests.into_iter().find_map(|(path, table)| {
        let tests = table.get("test")?.as_array()?;
        let custom = tests.iter().find(|t| t.get("harness").and_then(|h| h.as_bool()) == Some(false))?;
        let name = custom.get("name").and_then(|n| n.as_str()).unwrap_or("?");
        Some((path, name.to_string()))
    })
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

    /// A workspace member with a `harness = false` test (servo/rust-url's `url_wpt`) is run with
    /// `cargo test`, even where cargo-nextest is installed.
    #[test]
    fn a_custom_test_harness_is_found_in_a_workspace_member() {
        let d = tempfile::tempdir().unwrap();
        let root = "[workspace]\nmembers = [\"url\", \"crates/*\"]\n";
        std::fs::write(d.path().join("Cargo.toml"), root).unwrap();
        for dir in ["url", "crates/idna"] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
        }
        let plain = "[package]\nname = \"idna\"\nversion = \"0.1.0\"\n[[test]]\nname = \"unit\"\n";
        std::fs::write(d.path().join("crates/idna/Cargo.toml"), plain).unwrap();
        assert_eq!(custom_harness(d.path(), root), None);
        let url = "[package]\nname = \"url\"\nversion = \"0.1.0\"\n\n[[test]]\nname = \"url_wpt\"\npath = \
                   \"tests/wpt.rs\"\nharness = false\n";
        std::fs::write(d.path().join("url/Cargo.toml"), url).unwrap();
        assert_eq!(custom_harness(d.path(), root), Some(("url/Cargo.toml".to_string(), "url_wpt".to_string())));
        let det = detect(d.path()).unwrap();
        assert!(matches!(det.command, TestCommand::Cargo { nextest: false, .. }), "{:?}", det.command);
        assert!(det.reasons.iter().any(|r| r.starts_with("runner = cargo test")), "{:?}", det.reasons);
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
