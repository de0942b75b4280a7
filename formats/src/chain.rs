//! A FeatureArc chain bundle's `chain.json` (`docs/formats.md`, "Chain bundle"): the chain's
//! stages with their files in the bundle and their selected tests, and how its states were
//! made. Written by `carve arc build`; read by `carve arc validate` and `carve arc run`.

use serde::{Deserialize, Serialize};

use crate::{Format, Version};

/// Version of `chain.json` (and of the gates' `validation.json`, [`crate::gate`]).
pub const VERSION: u32 = 1;

/// `chain.json`. `L` is the language's name type (`carve_languages::Language` in `history`,
/// `String` for a reader that names no language).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ChainFile<L = String> {
    pub version: u32,
    /// `owner__name.<final8>.<slug>.<hash8>`.
    pub chain_id: String,
    /// `owner/name`.
    pub repo: String,
    pub language: L,
    /// The last stage's commit: the final checkpoint the states are made from.
    pub final_commit: String,
    pub stages: Vec<StageEntry>,
    pub chain: ChainSuite,
    /// Non-code files of the chain's commits left at their final content because removing
    /// their change for S0 conflicted with a later commit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_context: Vec<SharedContext>,
    /// Code and test files made per definition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_definition: Vec<DefinitionLevelFile>,
    /// Commits outside the mined chain pulled into a stage so that every state builds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<Repair>,
    /// Repository files pulled into states that import them before the stage that created them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pulled_files: Vec<PulledFile>,
    /// Source files with tests inside, split into code and tests: their files under a
    /// `tests_dir` hold the test part alone, which a gate joins with the tree's code.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inline_tests: Vec<String>,
    /// Mined stages that changed only tests, each merged into a neighbouring stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_stages: Vec<MergedStage>,
    /// Per state, the installed dependencies it used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<StateDependencies>,
}

impl<L> ChainFile<L> {
    /// A chain file with its stages and chain suite; the lists are set afterwards.
    pub fn new(
        chain_id: String,
        repo: String,
        language: L,
        final_commit: String,
        stages: Vec<StageEntry>,
        chain: ChainSuite,
    ) -> ChainFile<L> {
        ChainFile {
            version: VERSION,
            chain_id,
            repo,
            language,
            final_commit,
            stages,
            chain,
            shared_context: Vec::new(),
            by_definition: Vec::new(),
            repairs: Vec::new(),
            pulled_files: Vec::new(),
            inline_tests: Vec::new(),
            merged_stages: Vec::new(),
            dependencies: Vec::new(),
        }
    }
}

impl<L: Serialize + serde::de::DeserializeOwned> Format for ChainFile<L> {
    const FILE: &'static str = "chain.json";
    const VERSION: Version = Version::Number(VERSION);
}

/// One stage of the chain: its files in the bundle and its tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StageEntry {
    pub index: usize,
    /// First-parent commits of the stage.
    pub commits: Vec<String>,
    /// The commit's summary.
    #[serde(default)]
    pub title: String,
    /// Bundle-relative paths of the stage's spec, contract, gold patch and hidden tests.
    pub spec: String,
    pub contract: String,
    pub gold_patch: String,
    pub tests_dir: String,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
    /// P2P was judged on S_k with S_k's own tests.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p2p_on_own_tests: bool,
    /// Why the stage belongs after the earlier ones.
    pub evidence: Vec<Evidence>,
    /// Which definitions of earlier stages this stage's F2P tests execute (stages after the
    /// first, when built with a tracer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_dependency: Option<CallCheck>,
}

impl StageEntry {
    /// Stage `index` with its files under `stages/<index>/` and its tests; the rest is set
    /// afterwards.
    pub fn new(index: usize, commits: Vec<String>, title: String, f2p: Vec<String>, p2p: Vec<String>) -> StageEntry {
        let dir = format!("stages/{index}");
        StageEntry {
            index,
            commits,
            title,
            spec: format!("{dir}/spec.md"),
            contract: format!("{dir}/contract.json"),
            gold_patch: format!("{dir}/gold.patch"),
            tests_dir: format!("{dir}/tests"),
            f2p,
            p2p,
            p2p_on_own_tests: false,
            evidence: Vec::new(),
            call_dependency: None,
        }
    }
}

/// The chain-level suite (S0 against S_n).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct ChainSuite {
    pub tests_dir: String,
    pub f2p: Vec<String>,
    pub p2p: Vec<String>,
    /// `p2p` was judged on S0 with its own tests.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub p2p_on_own_tests: bool,
}

impl ChainSuite {
    pub fn new(tests_dir: String, f2p: Vec<String>, p2p: Vec<String>, p2p_on_own_tests: bool) -> ChainSuite {
        ChainSuite { tests_dir, f2p, p2p, p2p_on_own_tests }
    }
}

/// What a piece of evidence says about two stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// It modifies or renames a definition an earlier stage added or modified.
    SharedDefinition,
    /// Code it added names a definition an earlier stage added.
    Calls,
    /// It adds an import of a file an earlier stage added.
    Imports,
    /// Both change a non-test source file.
    SharedFile,
}

impl EvidenceKind {
    /// Evidence that the later commit builds on code the earlier one wrote (shared files
    /// alone do not count).
    pub fn builds_on(self) -> bool {
        !matches!(self, EvidenceKind::SharedFile)
    }
}

/// One piece of evidence for a link: `from` is an element of the later stage (a definition
/// id or a file), `to` one of the earlier stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub from: String,
    pub to: String,
    /// One line.
    pub detail: String,
    pub from_commit: String,
    pub to_commit: String,
}

impl Evidence {
    pub fn new(
        kind: EvidenceKind,
        from: String,
        to: String,
        detail: String,
        from_commit: String,
        to_commit: String,
    ) -> Evidence {
        Evidence { kind, from, to, detail, from_commit, to_commit }
    }
}

/// What tracing stage k's F2P tests at S_(k+1) showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct CallCheck {
    /// Whether the tests ran under the shim; when not, `reason` says why.
    pub traced: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The earlier stages' definitions the tests executed.
    pub earlier: Vec<CallDependency>,
    /// Traced, and `earlier` is not empty.
    pub verified: bool,
}

impl CallCheck {
    /// A traced run that executed `earlier`: verified when that is not empty.
    pub fn traced(earlier: Vec<CallDependency>) -> CallCheck {
        let verified = !earlier.is_empty();
        CallCheck { traced: true, reason: None, earlier, verified }
    }

    /// No traced run, and why: nothing is claimed either way.
    pub fn untraced(reason: String) -> CallCheck {
        CallCheck { traced: false, reason: Some(reason), earlier: Vec::new(), verified: false }
    }
}

/// One definition of an earlier stage that a stage's F2P tests execute.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct CallDependency {
    /// The earlier stage that added or changed it (the last such).
    pub stage: usize,
    pub definition: String,
}

impl CallDependency {
    pub fn new(stage: usize, definition: String) -> CallDependency {
        CallDependency { stage, definition }
    }
}

/// One file of a chain commit left as shared context instead of being removed for S0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct SharedContext {
    pub stage: usize,
    pub commit: String,
    pub path: String,
    pub reason: String,
}

impl SharedContext {
    pub fn new(stage: usize, commit: String, path: String, reason: String) -> SharedContext {
        SharedContext { stage, commit, path, reason }
    }
}

/// A file whose states were made per definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct DefinitionLevelFile {
    pub path: String,
    /// Per stage, the definitions taken out of the file before that stage.
    pub added: Vec<Vec<String>>,
    /// Per stage, the definitions whose text before that stage the earlier states hold.
    #[serde(default)]
    pub changed: Vec<Vec<String>>,
    /// Per stage, the names taken out of the file's module-level imports before that stage
    /// (`module: name` or `module: name as alias`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<Vec<String>>,
    /// The stage that created the file, or null.
    pub created_by: Option<usize>,
    /// Definitions stages added or changed that every state holds at their final text,
    /// because a state's build check named them (build repair).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
}

impl DefinitionLevelFile {
    pub fn new(path: String, added: Vec<Vec<String>>, changed: Vec<Vec<String>>, created_by: Option<usize>) -> Self {
        DefinitionLevelFile { path, added, changed, imports: Vec::new(), created_by, kept: Vec::new() }
    }
}

/// A repository file pulled into states that import it before the stage that created it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct PulledFile {
    pub path: String,
    /// The first state that got it (S_from … S_(at-1) hold it).
    pub from: usize,
    /// The earliest later state that has it; its text there is the one pulled.
    pub at: usize,
    /// The file of S_from whose import resolves to it.
    pub imported_by: String,
    pub reason: String,
}

impl PulledFile {
    pub fn new(path: String, from: usize, at: usize, imported_by: String, reason: String) -> PulledFile {
        PulledFile { path, from, at, imported_by, reason }
    }
}

/// One commit pulled into a stage because a state did not build without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct Repair {
    pub stage: usize,
    pub commit: String,
    pub reason: String,
}

impl Repair {
    pub fn new(stage: usize, commit: String, reason: String) -> Repair {
        Repair { stage, commit, reason }
    }
}

/// A mined stage merged into its neighbour because it changed only tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct MergedStage {
    /// The merged stage's commits.
    pub commits: Vec<String>,
    /// The first commit of the stage they joined.
    pub into: String,
    pub reason: String,
}

impl MergedStage {
    pub fn new(commits: Vec<String>, into: String, reason: String) -> MergedStage {
        MergedStage { commits, into, reason }
    }
}

/// Which dependency set a state used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DependencySource {
    /// The repository checkout's installed folder, linked.
    Checkout,
    /// Installed from the state's own manifest and lockfile.
    Own,
}

/// One state's installed dependencies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[non_exhaustive]
pub struct StateDependencies {
    /// `S0` … `Sn`.
    pub state: String,
    pub source: DependencySource,
    /// For `own`: the hex SHA-256 of the install command and the declarations it installs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// For `own`: the install command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl StateDependencies {
    /// A state linking the checkout's dependencies.
    pub fn checkout(state: String) -> StateDependencies {
        StateDependencies { state, source: DependencySource::Checkout, digest: None, command: None }
    }

    /// A state with its own install.
    pub fn own(state: String, digest: String, command: String) -> StateDependencies {
        StateDependencies { state, source: DependencySource::Own, digest: Some(digest), command: Some(command) }
    }
}
