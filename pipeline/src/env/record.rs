//! `environment.json`: what `carve env` found, installed and verified, so that the
//! environment can be reused by later commands and rebuilt anywhere (the Dockerfile beside
//! it is written from it). Versioned; described field by field in `docs/formats.md`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::bail;
use crate::{Context, Result};
use carve_languages::env::{Activation, Finding, Inventory, ToolRequirement};
use carve_languages::runner::TestCommand;

/// Version 1: the first.
pub const ENVIRONMENT_VERSION: u32 = 1;
pub const ENVIRONMENT_FILE: &str = "environment.json";
pub const DOCKERFILE: &str = "Dockerfile";
/// The folder of a build context that holds the files carve writes for the image.
pub const CONTEXT_DIR: &str = ".carve-env";

/// Whether the verification run passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvStatus {
    /// Every test that ran passed (or was skipped).
    Verified,
    /// Tests pass, and some still fail or error after the repairs: listed in `baseline`.
    Partial,
    /// No test passes: the environment was not kept.
    Failed,
}

/// One install command as run, and how it was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedStep {
    /// The command line, `{env}` and `{src}` standing for the environment's folder and its
    /// copy of the install inputs.
    pub command: String,
    /// `env` or `src`: the folder it runs in.
    pub dir: String,
    pub why: String,
    /// The repair round that added it (0: the install found from the metadata).
    pub round: u32,
}

/// The verification run: how many tests passed, and what still fails with its error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineCounts {
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    /// Tests that hung, or tests asked for that the runner did not run.
    pub other: usize,
    /// Files that could not be collected, with the error's last line.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub collection_errors: BTreeMap<String, String>,
    /// Up to [`FAILING_SHOWN`] tests that did not pass, with their message.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failing: BTreeMap<String, String>,
    /// The run's error when it could not run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_error: Option<String>,
}

/// How many failing tests the record lists by name.
pub const FAILING_SHOWN: usize = 50;

/// The image that rebuilds the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInfo {
    /// The name carve builds it under (`carve-env/<owner>__<name>:<commit12>`).
    pub name: String,
    pub base: String,
    pub dockerfile: String,
    /// The size of the built image's layers, uncompressed (set by `carve env --build-image`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
}

/// `environment.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    pub version: u32,
    /// `owner/name`.
    pub repo: String,
    /// The commit (or `tree-<digest>`) it was made and verified at.
    pub commit: String,
    pub tree_digest: String,
    pub language: String,
    /// The digest of the install inputs that names the environment's folder.
    pub key: String,
    pub status: EnvStatus,
    /// The install inputs (repository-relative).
    pub inputs: Vec<String>,
    /// What the repository asks for (interpreter, toolchain ranges) and where it says so.
    pub requires: Vec<ToolRequirement>,
    /// The tools used: name → version.
    pub tools: BTreeMap<String, String>,
    /// Everything found, each with its source.
    pub findings: Vec<Finding>,
    /// The install commands in the order run, repairs included.
    pub install: Vec<RecordedStep>,
    /// What the repairs could not fix (a missing program), to be done by hand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
    /// The test command, `{env}` standing for the environment's folder.
    pub test: TestCommand,
    /// How test runs use the environment.
    pub activation: Activation,
    /// The exact installed set.
    pub packages: Inventory,
    pub baseline: BaselineCounts,
    pub image: ImageInfo,
}

impl Environment {
    pub fn read(path: &Path) -> Result<Environment> {
        let text = std::fs::read_to_string(path).with_context(|| format!("failed to read {}", path.display()))?;
        let env: Environment = serde_json::from_str(&text).with_context(|| {
            format!("{} is not an environment.json this carve reads (run `carve env` again)", path.display())
        })?;
        if env.version != ENVIRONMENT_VERSION {
            bail!(
                "{} has version {}, this carve reads version {ENVIRONMENT_VERSION}: run `carve env` again",
                path.display(),
                env.version
            );
        }
        Ok(env)
    }

    /// Pretty JSON with a final newline: the same bytes for the same record.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The image name of a repository at a commit: lower case, `carve-env/<owner>__<name>:<tag>`.
pub fn image_name(owner: &str, name: &str, commit: &str) -> String {
    let clean = |s: &str| -> String {
        let s: String = s
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' { c } else { '-' })
            .collect();
        s.trim_matches(['-', '.', '_']).to_string()
    };
    let tag = commit.strip_prefix("tree-").unwrap_or(commit);
    format!("carve-env/{}__{}:{}", clean(owner), clean(name), &clean(tag)[..tag.len().min(12)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_are_valid_references() {
        assert_eq!(image_name("PyYAML", "pyyaml", "0123456789abcdef0123"), "carve-env/pyyaml__pyyaml:0123456789ab");
        assert_eq!(image_name("group/sub", "My Repo", "tree-abcdef"), "carve-env/group-sub__my-repo:abcdef");
    }
}
