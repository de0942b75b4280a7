//! The files of `carve dataset` (`docs/formats.md`, "Dataset"): the manifest it reads, the
//! per-repository `result.json` (its done marker) and `stats.json`, a slice's record, and the
//! dataset's `summary.json`.
//!
//! `result.json` holds only what the same inputs give again (no times, no host), so a
//! dataset made in slices is byte-identical to one made in one process; what a run measured
//! goes to `stats.json` beside it and into the summary.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::{Format, Version};

/// Version of every dataset format below (and of the manifest, whose `version` may be left
/// out).
pub const VERSION: u32 = 1;

/// A manifest: the repositories of a dataset. In TOML a `[[repo]]` table per entry (and an
/// optional top-level `version`); in JSONL one entry per line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Manifest {
    #[serde(default = "version")]
    pub version: u32,
    #[serde(default)]
    pub repo: Vec<ManifestEntry>,
}

fn version() -> u32 {
    VERSION
}

impl Manifest {
    pub fn new(repo: Vec<ManifestEntry>) -> Manifest {
        Manifest { version: VERSION, repo }
    }
}

/// One repository of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ManifestEntry {
    /// `owner/name`.
    pub name: String,
    /// A git URL (resolved through the mirrors when given) or a local path.
    pub url: String,
    /// The full commit id to check out.
    pub commit: String,
    /// The language the repository is expected to be; a different detection is an error of
    /// that repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Try at most this many candidate features (the biggest first), instead of every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<usize>,
    /// Seconds a whole test run may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Seconds one test may go without progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_timeout: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvHints>,
}

impl ManifestEntry {
    pub fn new(name: String, url: String, commit: String) -> ManifestEntry {
        ManifestEntry {
            name,
            url,
            commit,
            language: None,
            candidates: None,
            timeout: None,
            test_timeout: None,
            env: None,
        }
    }
}

/// How to find a repository's environment when carve's own set-up is not wanted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EnvHints {
    /// The interpreter the tests run with (a path, or a name on `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// A `carve.toml` to use instead of detection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// `repos/<owner>+<name>/<commit>/result.json`: what became of one repository. Its presence
/// marks the repository done; it is written last, with the folder, by one rename.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct RepoResult {
    pub version: u32,
    /// `owner/name`.
    pub name: String,
    pub commit: String,
    /// Digest of the manifest entry this result answers (an entry changed since is redone).
    pub entry_digest: String,
    /// `done` or `failed`.
    pub status: RepoStatus,
    /// Why a failed repository gave nothing: the stage and the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The language carve worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The environment the repository's tests ran in (absent when the run stopped before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<RepoEnvironment>,
    /// Candidate features found, and how many were tried.
    pub candidates: CandidateCounts,
    /// Every validated task, re-checked, by instance id (its bundle is `tasks/<instance_id>/`).
    pub tasks: Vec<TaskRow>,
    /// Every candidate (or level of one) that gave no task, and tasks whose re-check failed.
    pub rejected: Vec<RejectedRow>,
}

impl RepoResult {
    pub fn new(name: String, commit: String, entry_digest: String, status: RepoStatus) -> RepoResult {
        RepoResult {
            version: VERSION,
            name,
            commit,
            entry_digest,
            status,
            failure: None,
            language: None,
            environment: None,
            candidates: CandidateCounts::default(),
            tasks: Vec::new(),
            rejected: Vec::new(),
        }
    }
}

impl Format for RepoResult {
    const FILE: &'static str = "result.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// The environment of a repository's runs: the one carve set up (`carve env`: its key, image
/// and status), or, without one, why none was (the manifest's `env` hints, `CARVE_ENV=off`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct RepoEnvironment {
    /// The key of carve's environment (the digest of the language and the install inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The image every bundle of the repository names (`image_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_name: Option<String>,
    /// `verified` or `partial` (`environment.json`'s status), or `given` without one.
    pub status: String,
    /// The suite's counts with the environment, or why carve set none up.
    pub note: String,
}

impl RepoEnvironment {
    pub fn new(key: Option<String>, image_name: Option<String>, status: String, note: String) -> RepoEnvironment {
        RepoEnvironment { key, image_name, status, note }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepoStatus {
    Done,
    Failed,
}

/// The stage a repository failed in and the error, as carve printed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Failure {
    pub stage: String,
    pub reason: String,
}

impl Failure {
    pub fn new(stage: String, reason: String) -> Failure {
        Failure { stage, reason }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct CandidateCounts {
    pub found: usize,
    pub tried: usize,
}

impl CandidateCounts {
    pub fn new(found: usize, tried: usize) -> CandidateCounts {
        CandidateCounts { found, tried }
    }
}

/// One task of a repository, with the sizes the summary reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct TaskRow {
    pub instance_id: String,
    pub level: u8,
    pub lines: usize,
    pub files: usize,
    pub functions: usize,
    /// How the bundle was checked again after it was written: `local` (`carve validate` on
    /// the checkout), `image` (there and in the environment's image) or `off`.
    pub recheck: String,
    /// With `recheck = image`: the re-check in the image, beside the one on the checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRecheck>,
}

impl TaskRow {
    pub fn new(instance_id: String, level: u8, recheck: String) -> TaskRow {
        TaskRow { instance_id, level, lines: 0, files: 0, functions: 0, recheck, image: None }
    }
}

/// A bundle validated again inside its environment's image (`carve dataset run --recheck
/// image`): the image, whether it was valid there, and whether every state gave every test
/// the same status as the re-check on the checkout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ImageRecheck {
    pub image_name: String,
    pub valid: bool,
    /// Every state's statuses identical here and in the image.
    pub agrees: bool,
    /// Where they differ: `<state> <test>: <here> here, <in the image> in the image`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
}

impl ImageRecheck {
    pub fn new(image_name: String, valid: bool, differences: Vec<String>) -> ImageRecheck {
        ImageRecheck { image_name, valid, agrees: differences.is_empty(), differences }
    }
}

/// A candidate (or one level of it) that gave no task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct RejectedRow {
    pub feature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    pub reason: String,
}

impl RejectedRow {
    pub fn new(feature: String, level: Option<u8>, reason: String) -> RejectedRow {
        RejectedRow { feature, level, reason }
    }
}

/// `repos/<owner>+<name>/<commit>/stats.json`: what the run that made a result measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct RepoStats {
    pub version: u32,
    /// carve's version.
    pub tool_version: String,
    pub host: String,
    /// Stages in the order they ran; a resumed repository adds the stages of each run.
    pub stages: Vec<StageTime>,
}

impl RepoStats {
    pub fn new(tool_version: String, host: String) -> RepoStats {
        RepoStats { version: VERSION, tool_version, host, stages: Vec::new() }
    }
}

impl Format for RepoStats {
    const FILE: &'static str = "stats.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// Wall and CPU time of one stage (CPU of carve and every test process it waited for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StageTime {
    pub stage: String,
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl StageTime {
    pub fn new(stage: String, seconds: f64, cpu_seconds: f64) -> StageTime {
        StageTime { stage, seconds, cpu_seconds }
    }
}

/// `slices/<slice>.json`: the repositories one `--index`/`--shard` run was given and what
/// became of each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SliceRecord {
    pub version: u32,
    /// `index-3`, `shard-1-of-4` or `all`.
    pub slice: String,
    pub manifest_digest: String,
    pub repos: Vec<SliceRepo>,
}

impl SliceRecord {
    pub fn new(slice: String, manifest_digest: String) -> SliceRecord {
        SliceRecord { version: VERSION, slice, manifest_digest, repos: Vec::new() }
    }
}

impl Format for SliceRecord {
    const FILE: &'static str = "slices/<slice>.json";
    const VERSION: Version = Version::Number(VERSION);
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SliceRepo {
    pub name: String,
    pub commit: String,
    pub status: RepoStatus,
    pub tasks: usize,
}

impl SliceRepo {
    pub fn new(name: String, commit: String, status: RepoStatus, tasks: usize) -> SliceRepo {
        SliceRepo { name, commit, status, tasks }
    }
}

/// `summary.json`: the dataset as a builder judges it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Summary {
    pub version: u32,
    pub manifest_digest: String,
    /// Repositories of the manifest: `total`, `done`, `failed`, `pending` (no result yet).
    pub repositories: BTreeMap<String, usize>,
    /// Validated, re-checked tasks.
    pub tasks: usize,
    pub repos: Vec<SummaryRepo>,
    /// Per language: repositories, those done, tasks.
    pub languages: BTreeMap<String, LanguageYield>,
    /// Rejections counted by the reason's leading words (before the first `:`).
    pub rejections: BTreeMap<String, usize>,
    /// Task sizes: `lines`, `files`, `functions`.
    pub sizes: BTreeMap<String, Distribution>,
    /// FeatureBench's means, for comparison: `lines` 790, `files` 15.7, `functions` 29.2.
    pub featurebench_means: BTreeMap<String, f64>,
    /// Wall and CPU seconds per stage over every repository.
    pub stages: BTreeMap<String, StageTotal>,
    /// CPU seconds of every stage over the validated tasks (`null` without a task).
    pub cpu_seconds_per_task: Option<f64>,
    /// Tasks re-checked in their image (`--recheck image`): `tasks`, and `agree`, those whose
    /// statuses there equal those on the checkout (absent when none was).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub image_recheck: BTreeMap<String, usize>,
}

impl Summary {
    pub fn new(manifest_digest: String) -> Summary {
        Summary {
            version: VERSION,
            manifest_digest,
            repositories: BTreeMap::new(),
            tasks: 0,
            repos: Vec::new(),
            languages: BTreeMap::new(),
            rejections: BTreeMap::new(),
            sizes: BTreeMap::new(),
            featurebench_means: BTreeMap::new(),
            stages: BTreeMap::new(),
            cpu_seconds_per_task: None,
            image_recheck: BTreeMap::new(),
        }
    }
}

impl Format for Summary {
    const FILE: &'static str = "summary.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// One repository's line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SummaryRepo {
    pub name: String,
    pub commit: String,
    /// `done`, `failed` or `pending`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub candidates: usize,
    pub tasks: usize,
    pub rejected: usize,
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl SummaryRepo {
    pub fn new(name: String, commit: String, status: String) -> SummaryRepo {
        SummaryRepo {
            name,
            commit,
            status,
            language: None,
            reason: None,
            candidates: 0,
            tasks: 0,
            rejected: 0,
            seconds: 0.0,
            cpu_seconds: 0.0,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct LanguageYield {
    pub repositories: usize,
    pub done: usize,
    pub tasks: usize,
}

/// `count`, `mean`, `median`, `p90` and `max` of one size over the tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Distribution {
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub max: f64,
    /// Every value, sorted (the page's histogram).
    pub values: Vec<f64>,
}

impl Distribution {
    /// The distribution of `values` (any order).
    pub fn of(mut values: Vec<f64>) -> Distribution {
        values.sort_by(f64::total_cmp);
        let count = values.len();
        if count == 0 {
            return Distribution::default();
        }
        let mean = values.iter().sum::<f64>() / count as f64;
        let median = if count % 2 == 1 { values[count / 2] } else { (values[count / 2 - 1] + values[count / 2]) / 2.0 };
        // Nearest rank.
        let rank = ((0.9 * count as f64).ceil() as usize).clamp(1, count);
        Distribution { count, mean, median, p90: values[rank - 1], max: values[count - 1], values }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StageTotal {
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl StageTotal {
    pub fn add(&mut self, t: &StageTime) {
        self.seconds += t.seconds;
        self.cpu_seconds += t.cpu_seconds;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_of_values() {
        let d = Distribution::of(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!((d.count, d.mean, d.median, d.p90, d.max), (4, 2.5, 2.5, 4.0, 4.0));
        let d = Distribution::of((1..=10).map(f64::from).collect());
        assert_eq!((d.median, d.p90), (5.5, 9.0));
        assert_eq!(Distribution::of(Vec::new()).count, 0);
    }
}
