//! `carve.toml`: what `carve init` detects and every other command reads. Flags override it.

use crate::error::bail;
use crate::{Context, Result};
use carve_languages::runner::TestCommand;
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
    /// How the tests run: `runner = "pytest"` with its settings (see docs/formats.md).
    pub test: TestCommand,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Defaults when absent (a hand-written carve.toml need not repeat them).
    #[serde(default)]
    pub timeouts: Timeouts,
    /// Why each setting was chosen (printed by `carve init`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detected: Vec<String>,
    /// `[env]`: how `carve env` sets up the environment.
    #[serde(default, skip_serializing_if = "EnvConfig::is_empty")]
    pub env: EnvConfig,
}

/// `[env]` of carve.toml.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EnvConfig {
    /// A command (`sh -c`) that proposes set-up commands when the rules find no more: JSON in,
    /// JSON out (see `pipeline::env::helper`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper: Option<String>,
}

impl EnvConfig {
    fn is_empty(&self) -> bool {
        self.helper.is_none()
    }
}

/// `[timeouts]`: a field left out takes its default; an unknown one is an error.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
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
        let cfg: Config = toml::from_str(&text).with_context(|| {
            format!("{} is not a valid carve.toml (fix it, or delete it and run `carve init`)", path.display())
        })?;
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
        let found = carve_languages::detect(repo);
        let Some(first) = found.first() else {
            bail!(
                "could not detect the language or test runner of {}: no pyproject.toml/setup.cfg/tox.ini/pytest.ini or \
                 .py files, no package.json with a vitest, jest or node:test suite, no go.mod, no Cargo.toml \
                 (write carve.toml with `language` and a `[test]` table naming the runner; see docs/formats.md)",
                repo.display()
            );
        };
        let mut detected = first.reasons.clone();
        for other in &found[1..] {
            detected.push(format!(
                "also found {} ({}); carve works on {} — set `language` and `[test]` in carve.toml to choose",
                other.language,
                other.command.runner_name(),
                first.language
            ));
        }
        Ok(Config {
            version: CONFIG_VERSION,
            language: first.language,
            setup: first.setup.clone(),
            test: first.command.clone(),
            include: Vec::new(),
            exclude: Vec::new(),
            timeouts: Timeouts::default(),
            detected,
            env: EnvConfig::default(),
        })
    }

    /// Override the interpreter (`--python`) of a Python configuration.
    pub fn set_python(&mut self, python: &Path) -> Result<()> {
        if !self.test.set_interpreter(python) {
            bail!("--python applies to runners that take an interpreter; this one runs {}", self.test.runner_name());
        }
        Ok(())
    }
}

/// The carve.toml of a repository: `explicit` (`--config`), else `<repo>/carve.toml` when
/// there is one; `None`: there is none to read, detect the configuration.
pub fn find(repo: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    explicit.map(Path::to_path_buf).or_else(|| Some(repo.join("carve.toml")).filter(|p| p.is_file()))
}

/// Load the configuration: `--config`, else `<repo>/carve.toml`, else `<out>/carve.toml`,
/// else detect. Returns where it came from.
pub fn load(repo: &Path, out: &Path, explicit: Option<&Path>) -> Result<(Config, String)> {
    let in_out = || Some(out.join("carve.toml")).filter(|p| p.is_file());
    match find(repo, explicit).or_else(in_out) {
        Some(p) => Ok((Config::read(&p)?, p.display().to_string())),
        None => Ok((Config::detect(repo)?, "detected".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written carve.toml may leave out `[timeouts]` or one of its fields.
    #[test]
    fn timeouts_default_when_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("carve.toml");
        std::fs::write(&p, "version = 1\nlanguage = \"go\"\n[test]\nrunner = \"go\"\n").unwrap();
        assert_eq!(Config::read(&p).unwrap().timeouts, Timeouts::default());
        std::fs::write(&p, "version = 1\nlanguage = \"go\"\n[test]\nrunner = \"go\"\n[timeouts]\ntest = 5\n").unwrap();
        assert_eq!(Config::read(&p).unwrap().timeouts, Timeouts { run: 1800, test: 5 });
    }

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
        assert!(err.contains("`[test]` table naming the runner"), "{err}");
    }
}
