//! Detecting a Go module's test set-up from its own files, for `carve init`.

use std::path::Path;

use crate::Language;
use crate::runner::{Detection, TestCommand};

/// A Go module when the repository root holds `go.mod`: its tests run with `go test ./...`.
pub fn detect(repo: &Path) -> Option<Detection> {
    let go_mod = std::fs::read_to_string(repo.join("go.mod")).ok()?;
    let mut reasons = Vec::new();
    let module =
        go_mod.lines().find_map(|l| l.trim().strip_prefix("module ").map(|m| m.trim().trim_matches('"').to_string()));
    match &module {
        Some(m) => reasons.push(format!("language = go: found go.mod (module {m})")),
        None => reasons.push("language = go: found go.mod (it names no module; `go test` will say why)".to_string()),
    }
    if repo.join("go.work").is_file() {
        reasons.push("go.work found: only the packages under the repository root (./...) are tested".to_string());
    }
    reasons.push("runner = go test: `go test -json -count=1 ./...`, ids importpath/TestX/sub".to_string());
    if std::process::Command::new("go").arg("version").output().map(|o| !o.status.success()).unwrap_or(true) {
        reasons.push("warning: `go` is not on PATH; install Go before `carve baseline`".to_string());
    }
    let command = TestCommand::GoTest { args: Vec::new(), packages: None };
    Some(Detection {
        language: Language::Go,
        command,
        setup: Some(super::runner::SETUP.to_string()),
        reasons,
        manifest: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_mod_means_go_test_with_a_reason() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("go.mod"), "module example.com/x\n\ngo 1.22\n").unwrap();
        let det = detect(d.path()).unwrap();
        assert_eq!(det.language, Language::Go);
        assert_eq!(det.command, TestCommand::GoTest { args: vec![], packages: None });
        assert!(det.reasons[0].contains("module example.com/x"), "{:?}", det.reasons);
        assert_eq!(det.setup.as_deref(), Some("go mod download"));
        let json = serde_json::to_string(&det.command).unwrap();
        assert_eq!(json, r#"{"runner":"go","args":[]}"#);
        assert!(detect(&d.path().join("absent")).is_none());
    }
}
