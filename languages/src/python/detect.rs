//! Detecting a Python project's test set-up from its own files, for `carve init`.

use std::path::{Path, PathBuf};

use crate::Language;
use crate::runner::{Detection, TestCommand};

const MARKERS: &[&str] = &["pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "setup.py", "conftest.py"];

/// A Python project when it has one of the usual project files, or `.py` files near the
/// top. The interpreter is the repository's own virtualenv when it has one.
pub fn detect(repo: &Path) -> Option<Detection> {
    let found: Vec<&str> = MARKERS.iter().copied().filter(|m| repo.join(m).is_file()).collect();
    let mut reasons = Vec::new();
    if found.is_empty() {
        if !has_python_files(repo) {
            return None;
        }
        reasons.push("language = python: the repository has .py files".to_string());
    } else {
        reasons.push(format!("language = python: found {}", found.join(", ")));
    }
    let python = detect_python(repo, &mut reasons);
    let setup = if repo.join("pyproject.toml").is_file() || repo.join("setup.py").is_file() {
        Some(format!("{} -m pip install -e .", python.display()))
    } else if repo.join("requirements.txt").is_file() {
        Some(format!("{} -m pip install -r requirements.txt", python.display()))
    } else {
        None
    };
    reasons.push("runner = pytest (carve drives pytest for Python; unittest suites run under it too)".to_string());
    let manifest = !found.is_empty();
    let command = TestCommand::pytest(python, Vec::new());
    Some(Detection { language: Language::Python, command, setup, reasons, manifest })
}

fn has_python_files(repo: &Path) -> bool {
    ignore::WalkBuilder::new(repo)
        .max_depth(Some(3))
        .build()
        .filter_map(|e| e.ok())
        .any(|e| e.path().extension().is_some_and(|x| x == "py"))
}

/// The repository's own virtualenv when it has one, else the active one, else `python3`.
fn detect_python(repo: &Path, reasons: &mut Vec<String>) -> PathBuf {
    for venv in [".venv", "venv", "env"] {
        let py = repo.join(venv).join("bin").join("python");
        if repo.join(venv).join("pyvenv.cfg").is_file() && py.exists() {
            reasons.push(format!("python = {}: the repository's virtualenv", py.display()));
            return py;
        }
    }
    if let Ok(v) = std::env::var("VIRTUAL_ENV") {
        let py = PathBuf::from(v).join("bin").join("python");
        if py.exists() {
            reasons.push(format!("python = {}: the active virtualenv ($VIRTUAL_ENV)", py.display()));
            return py;
        }
    }
    reasons.push("python = python3: no virtualenv in the repository, using python3 from PATH".to_string());
    PathBuf::from("python3")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyproject_means_pytest_with_a_reason() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pyproject.toml"), "[project]\nname = 'x'\n").unwrap();
        let det = detect(d.path()).unwrap();
        assert_eq!(det.language, Language::Python);
        assert!(matches!(det.command, TestCommand::Pytest { .. }));
        assert!(det.reasons.iter().any(|r| r.contains("pyproject.toml")));
    }

    #[test]
    fn a_repository_without_python_is_not_detected() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("README"), "hi").unwrap();
        assert!(detect(d.path()).is_none());
    }
}
