//! A task (`instance.json`, and one line of `tasks.jsonl`): SWE-bench's fields, FeatureBench's
//! size fields, and carve's own under `carve` (`docs/formats.md`, "Task").

use serde::{Deserialize, Serialize};

use crate::{Format, Version};

/// The `version` of `instance.json`: SWE-bench's field, which carve writes as `"1.0"`.
pub const VERSION: &str = "1.0";

/// `instance.json`. `L` is the language's name type (`carve_languages::Language` when
/// written, `String` when read by a crate that names no language).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Instance<L = String> {
    /// `{owner}__{repo}.{commit8}.{feature}.{hash8}.lv{1|2}`.
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit, or `tree-<digest16>` when the repository is no git work tree.
    pub base_commit: String,
    /// The image of the environment `carve env` recorded (`carve-env/<owner>__<name>:<commit12>`,
    /// built from the bundle's `Dockerfile`); null when the task was made without one.
    #[serde(default)]
    pub image_name: Option<String>,
    /// The gold patch: masked state → original (Level 2: also the reference `agent_code`).
    pub patch: String,
    /// Adds the F2P tests back (Level 2: the rewritten ones).
    pub test_patch: String,
    pub problem_statement: String,
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
    /// HEAD's commit date, or null.
    pub created_at: Option<String>,
    /// [`VERSION`].
    pub version: String,
    /// 1 (incremental) or 2 (from scratch).
    pub level: u8,
    /// Lines deleted from non-test files.
    pub lines: usize,
    /// Non-test files changed.
    pub files: usize,
    /// Extracted functions and methods.
    pub functions: usize,
    /// Extracted definitions whose parent is not extracted.
    pub top_objects: Vec<String>,
    pub carve: CarveFields<L>,
}

impl<L> Instance<L> {
    /// A task with carve's fields; the SWE-bench and size fields are set afterwards.
    pub fn new(instance_id: String, level: u8, carve: CarveFields<L>) -> Instance<L> {
        Instance {
            instance_id,
            repo: String::new(),
            base_commit: String::new(),
            image_name: None,
            patch: String::new(),
            test_patch: String::new(),
            problem_statement: String::new(),
            fail_to_pass: Vec::new(),
            pass_to_pass: Vec::new(),
            created_at: None,
            version: VERSION.to_string(),
            level,
            lines: 0,
            files: 0,
            functions: 0,
            top_objects: Vec::new(),
            carve,
        }
    }
}

impl<L: Serialize + serde::de::DeserializeOwned> Format for Instance<L> {
    const FILE: &'static str = "instance.json";
    const VERSION: Version = Version::Text(VERSION);
}

/// carve's own fields of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct CarveFields<L = String> {
    /// The version of carve that made the task.
    pub tool_version: String,
    pub language: L,
    /// The feature's slug.
    pub feature: String,
    /// Original → masked state (`mask.patch`).
    pub mask_patch: String,
    /// `mask.patch` alone gives the masked state (the F2P tests removed too); bundles without
    /// it need `f2p_tests_patch` taken out in reverse after it.
    #[serde(default)]
    pub mask_removes_f2p_tests: bool,
    /// Masked state → original F2P tests: the Level 1 test patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f2p_tests_patch: Option<String>,
    /// The extracted definitions (node ids), sorted.
    pub extracted: Vec<String>,
    /// Where the classification's BFS started.
    pub entry_points: Vec<String>,
    pub contract_summary: ContractSummary,
    pub trace_digest: String,
    /// How the feature was protected (`--protect`, `--max-lines`); absent in bundles made
    /// before protection policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<Protection>,
    /// The test files the candidate grouped (`carve tasks --module-groups`); absent for a
    /// candidate of one test file or of `--f2p` tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<CandidateGroup>,
    /// For each F2P/P2P id that SWE-bench's log parser for the runner prints differently,
    /// that parser's id (null when it cannot name the test at all).
    pub harness_ids: HarnessIds,
    /// Digest of the original tree's content.
    pub tree_digest: String,
    /// The agent's workspace (null when the task has none recorded).
    #[serde(default)]
    pub workspace: Option<WorkspaceRef>,
    /// The environment the task's tests ran in (null when made without one).
    #[serde(default)]
    pub environment: Option<EnvironmentRef>,
}

impl<L> CarveFields<L> {
    pub fn new(tool_version: String, language: L, feature: String) -> CarveFields<L> {
        CarveFields {
            tool_version,
            language,
            feature,
            mask_patch: String::new(),
            mask_removes_f2p_tests: true,
            f2p_tests_patch: None,
            extracted: Vec::new(),
            entry_points: Vec::new(),
            contract_summary: ContractSummary::default(),
            trace_digest: String::new(),
            protection: None,
            group: None,
            harness_ids: HarnessIds::default(),
            tree_digest: String::new(),
            workspace: None,
            environment: None,
        }
    }
}

/// A candidate of several test files grouped by the code they test (`carve tasks
/// --module-groups`): `carve.group` of `instance.json`, `group` of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct CandidateGroup {
    /// What grouped them: `module` (the test files share a home module: the source file
    /// holding the most, or nearly the most, of each file's entry points) or `package` (the
    /// files' home modules lie in one folder, below the whole library).
    pub kind: String,
    /// The shared home module, or (`package`) the folder.
    pub module: String,
    /// The grouped test files, sorted; the candidate's tests are theirs.
    pub test_files: Vec<String>,
}

impl CandidateGroup {
    pub fn module(module: String, test_files: Vec<String>) -> CandidateGroup {
        CandidateGroup { kind: "module".to_string(), module, test_files }
    }

    /// A group of `kind` (`module` or `package`).
    pub fn of_kind(kind: &str, module: String, test_files: Vec<String>) -> CandidateGroup {
        CandidateGroup { kind: kind.to_string(), module, test_files }
    }
}

/// How a feature was protected: the policy and line budget it was classified under, and
/// what the policy chose (`carve.protection` of `instance.json`, `protection` of the audit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Protection {
    /// `all`, `sampled:N` or `feature`.
    pub policy: String,
    /// The line budget (`--max-lines`); null: none.
    pub max_lines: Option<usize>,
    /// `sampled:N`: N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
    /// `sampled:N`: the chosen test files, closest to the feature first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_files: Option<Vec<ProtectedFile>>,
    /// `sampled:N`: the feature's entry points that gave way because every test file ran
    /// one of them (the most used first); the chosen files may run, and so protect, them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_entries: Vec<String>,
    /// `sampled:N`: tests that stay in the masked state without protecting what they run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unprotected_count: Option<usize>,
    /// `sampled:N`, once validated: how many unprotected tests fail on the masked state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_count: Option<usize>,
    /// `sampled:N`, once validated: those tests (never P2P tests), sorted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broken_tests: Option<Vec<String>>,
    /// `feature`: tests that passed at baseline, failed on the masked state and joined F2P.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined_f2p: Option<Vec<String>>,
    /// Definitions that stay because the line budget was spent before them, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<String>,
}

impl Protection {
    /// `policy` with `max_lines`; what the policy chose is set afterwards.
    pub fn new(policy: String, max_lines: Option<usize>) -> Protection {
        Protection {
            policy,
            max_lines,
            files: None,
            p2p_files: None,
            shared_entries: Vec::new(),
            unprotected_count: None,
            broken_count: None,
            broken_tests: None,
            joined_f2p: None,
            over_budget: Vec::new(),
        }
    }
}

/// One test file `sampled:N` chose: its path and how many distinct definitions of the
/// feature's reached code its tests execute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ProtectedFile {
    pub file: String,
    pub shared: usize,
}

impl ProtectedFile {
    pub fn new(file: String, shared: usize) -> ProtectedFile {
        ProtectedFile { file, shared }
    }
}

/// The size and top objects of the task's contract.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ContractSummary {
    /// Entries of `contract.json`'s `objects`.
    pub objects: usize,
    /// The extracted definitions whose parent is not extracted.
    pub ids: Vec<String>,
}

impl ContractSummary {
    pub fn new(objects: usize, ids: Vec<String>) -> ContractSummary {
        ContractSummary { objects, ids }
    }
}

/// The agent's workspace of a task, and how to make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct WorkspaceRef {
    /// `git write-tree` of its one commit.
    pub tree: String,
    pub commit: String,
    /// Files committed.
    pub files: usize,
    /// The command that makes it.
    pub make: String,
    pub note: String,
}

impl WorkspaceRef {
    pub fn new(tree: String, commit: String, files: usize, make: String, note: String) -> WorkspaceRef {
        WorkspaceRef { tree, commit, files, make, note }
    }
}

/// The environment of a task: which one `carve env` recorded (`environment.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct EnvironmentRef {
    /// The digest of the install inputs that names the environment.
    pub key: String,
    /// `verified` (every test that ran passed) or `partial` (some still fail).
    pub status: String,
    /// The bundle's file that builds the image (`Dockerfile`).
    pub dockerfile: String,
    /// Toolchain and interpreter versions, by tool.
    pub tools: std::collections::BTreeMap<String, String>,
}

impl EnvironmentRef {
    pub fn new(
        key: String,
        status: String,
        dockerfile: String,
        tools: std::collections::BTreeMap<String, String>,
    ) -> EnvironmentRef {
        EnvironmentRef { key, status, dockerfile, tools }
    }
}

/// Test id → the id SWE-bench's log parser gives it (`None`: it cannot name the test), in
/// the order written (the F2P ids, then the P2P ids): an object in JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HarnessIds(pub Vec<(String, Option<String>)>);

impl Serialize for HarnessIds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de> Deserialize<'de> for HarnessIds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = serde_json::Map::deserialize(d)?;
        map.into_iter()
            .map(|(k, v)| match v {
                serde_json::Value::Null => Ok((k, None)),
                serde_json::Value::String(s) => Ok((k, Some(s))),
                other => Err(serde::de::Error::custom(format!("harness id of {k} is {other}, not a string or null"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(HarnessIds)
    }
}

impl schemars::JsonSchema for HarnessIds {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "HarnessIds".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": {"type": ["string", "null"]}
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn harness_ids_keep_their_order_and_nulls() {
        let ids = HarnessIds(vec![("b".into(), Some("b[".into())), ("a".into(), None)]);
        let text = serde_json::to_string(&ids).unwrap();
        assert_eq!(text, r#"{"b":"b[","a":null}"#);
        assert_eq!(serde_json::from_str::<HarnessIds>(&text).unwrap(), ids);
    }

    #[test]
    fn an_instance_of_another_version_is_refused_by_name() {
        let e = crate::from_str::<Instance>(r#"{"version": "2.0"}"#, Path::new("b/instance.json")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(r#"b/instance.json is instance.json version "2.0"; this carve reads version "1.0""#),
            "{e}"
        );
    }
}
