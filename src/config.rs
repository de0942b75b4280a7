//! `carve.toml`: what `carve init` detects and every other command reads. Flags override it.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const CONFIG_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub version: u32,
    pub language: carve_languages::Language,
    /// A shell command that prepares the environment (installs dependencies); informative:
    /// carve prints it when tests cannot start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    pub test: TestConfig,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    pub timeouts: Timeouts,
    /// Why each setting was chosen (printed by `carve init`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detected: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TestConfig {
    /// The interpreter that runs pytest (the repository's virtualenv when it has one).
    pub python: PathBuf,
    /// Extra pytest arguments.
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Timeouts {
    /// A whole test run, seconds.
    pub run: u64,
    /// One test without progress, seconds.
    pub test: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { run: 1800, test: 120 }
    }
}

impl Config {
    pub fn read(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).with_context(|| format!("failed to read {}", path.display()))?;
        let cfg: Config = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid carve.toml (fix it, or delete it and run `carve init`)", path.display()))?;
        if cfg.version != CONFIG_VERSION {
            bail!("{} has version {}, this carve reads version {CONFIG_VERSION}", path.display(), cfg.version);
        }
        Ok(cfg)
    }

    pub fn to_toml(&self) -> String {
        let mut s = String::from("# carve configuration, written by `carve init`; edit freely.\n");
        s.push_str(&toml::to_string_pretty(self).unwrap_or_default());
        s
    }

    /// Detect the configuration from the repository's own files. Never guesses silently:
    /// each decision is recorded in `detected`, and what cannot be detected is an error.
    pub fn detect(repo: &Path) -> Result<Config> {
        let mut detected = Vec::new();
        let markers = ["pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "setup.py", "conftest.py"];
        let found: Vec<&str> = markers.iter().copied().filter(|m| repo.join(m).is_file()).collect();
        let has_py = has_python_files(repo);
        if found.is_empty() && !has_py {
            bail!(
                "could not detect the language of {}: no pyproject.toml, setup.cfg, tox.ini, pytest.ini or .py files \
                 (this carve supports Python; write carve.toml with `language = \"python\"` if this is a Python project)",
                repo.display()
            );
        }
        if found.is_empty() {
            detected.push("language = python: the repository has .py files".to_string());
        } else {
            detected.push(format!("language = python: found {}", found.join(", ")));
        }
        let python = detect_python(repo, &mut detected);
        let setup = if repo.join("pyproject.toml").is_file() || repo.join("setup.py").is_file() {
            Some(format!("{} -m pip install -e .", python.display()))
        } else if repo.join("requirements.txt").is_file() {
            Some(format!("{} -m pip install -r requirements.txt", python.display()))
        } else {
            None
        };
        detected.push("test runner = pytest (the only Python runner carve drives)".to_string());
        Ok(Config {
            version: CONFIG_VERSION,
            language: carve_languages::Language::Python,
            setup,
            test: TestConfig { python, args: Vec::new() },
            include: Vec::new(),
            exclude: Vec::new(),
            timeouts: Timeouts::default(),
            detected,
        })
    }
}

fn has_python_files(repo: &Path) -> bool {
    ignore::WalkBuilder::new(repo)
        .max_depth(Some(3))
        .build()
        .filter_map(|e| e.ok())
        .any(|e| e.path().extension().is_some_and(|x| x == "py"))
}

/// The repository's own virtualenv when it has one, else `python3` from PATH.
fn detect_python(repo: &Path, detected: &mut Vec<String>) -> PathBuf {
    for venv in [".venv", "venv", "env"] {
        let py = repo.join(venv).join("bin").join("python");
        if repo.join(venv).join("pyvenv.cfg").is_file() && py.exists() {
            detected.push(format!("python = {}: the repository's virtualenv", py.display()));
            return py;
        }
    }
    if let Ok(v) = std::env::var("VIRTUAL_ENV") {
        let py = PathBuf::from(v).join("bin").join("python");
        if py.exists() {
            detected.push(format!("python = {}: the active virtualenv ($VIRTUAL_ENV)", py.display()));
            return py;
        }
    }
    detected.push("python = python3: no virtualenv in the repository, using python3 from PATH".to_string());
    PathBuf::from("python3")
}

/// Load the configuration: `--config`, else `<repo>/carve.toml`, else `<out>/carve.toml`,
/// else detect. Returns where it came from.
pub fn load(repo: &Path, out: &Path, explicit: Option<&Path>) -> Result<(Config, String)> {
    if let Some(p) = explicit {
        return Ok((Config::read(p)?, p.display().to_string()));
    }
    for p in [repo.join("carve.toml"), out.join("carve.toml")] {
        if p.is_file() {
            return Ok((Config::read(&p)?, p.display().to_string()));
        }
    }
    Ok((Config::detect(repo)?, "detected".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_toml() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "[project]\nname='x'\n").unwrap();
        let cfg = Config::detect(dir.path()).unwrap();
        let text = cfg.to_toml();
        let back: Config = toml::from_str(&text).unwrap();
        assert_eq!(back, cfg);
        assert!(cfg.detected.iter().any(|d| d.contains("pyproject.toml")));
    }

    #[test]
    fn undetectable_repository_is_an_error_naming_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README"), "hi").unwrap();
        let err = Config::detect(dir.path()).unwrap_err().to_string();
        assert!(err.contains("language = \"python\""), "{err}");
    }
}
