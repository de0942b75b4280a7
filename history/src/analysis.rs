//! History analysis (FeatureArc III-A): per first-parent commit, the definitions it added,
//! modified, removed and renamed, the tests it added or modified, the lines and files it
//! changed, and the module import graph as it stands after the commit.
//!
//! Incremental: the state holds one [`FileFacts`] per source file of the current tree
//! (definitions with a hash of their text, resolved imports, the source). A commit re-indexes
//! only the files it changed, from their blobs, in memory; the other source files of the
//! same languages are passed as empty placeholders so that imports still resolve to paths.
//!
//! The steps live in submodules: `commit` compares one commit's files before and after,
//! `renames` pairs removed with added definitions, `identifiers` finds the identifiers a
//! commit wrote.

mod commit;
mod identifiers;
mod renames;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use carve_languages::index::is_index_input;
use carve_languages::{DefinitionIndex, DefinitionKind, Doctest, Language};
use serde::{Deserialize, Serialize};

use crate::HistoryError;
use crate::git::Repo;

use commit::analyze_commit;
pub use identifiers::identifiers;

/// One definition of a file as the analysis keeps it.
#[derive(Debug, Clone)]
pub struct DefFact {
    pub id: String,
    pub name: String,
    pub kind: DefinitionKind,
    pub is_test: bool,
    pub start_byte: usize,
    pub end_byte: usize,
    /// Hash of the definition's text as its language reads it
    /// ([`LanguageSupport::definition_hash_input`](carve_languages::LanguageSupport::definition_hash_input)):
    /// equal hash, unchanged code (in Rust a changed doc comment, or doctest, is no change).
    pub hash: u64,
    /// The doctests of the definition's doc comments, when its language has them and it has any.
    pub doctest: Option<Doctest>,
    /// A benchmark, which the indexer marks as test code but the runner does not run as a test
    /// (Rust's `#[bench]` functions and `benches/` targets): not a test a commit adds or changes.
    pub bench: bool,
}

/// What the analysis knows of one source file of the current tree.
#[derive(Debug, Clone)]
pub struct FileFacts {
    pub language: Language,
    pub is_test: bool,
    pub defs: Vec<DefFact>,
    /// Repository files this file's imports resolve to.
    pub imports: BTreeSet<String>,
    pub source: Arc<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub status: FileStatus,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub language: Option<Language>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_test: bool,
    pub lines_added: usize,
    pub lines_removed: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rename {
    pub from: String,
    pub to: String,
    /// Similarity of the two texts, 0..1 (1: equal apart from the name).
    pub similarity: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DefinitionChanges {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
    pub renamed: Vec<Rename>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TestChanges {
    /// Test functions (definitions in test code) added or modified.
    pub added: Vec<String>,
    pub modified: Vec<String>,
    /// Test files changed (added, modified or deleted).
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ImportEdge {
    pub from: String,
    pub to: String,
}

/// The analysis of one first-parent commit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommitAnalysis {
    pub commit: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub is_merge: bool,
    pub summary: String,
    pub time: i64,
    pub files: Vec<FileChange>,
    pub definitions: DefinitionChanges,
    pub tests: TestChanges,
    pub imports_added: Vec<ImportEdge>,
    pub imports_removed: Vec<ImportEdge>,
    /// Changed files that did not parse (their definitions are taken as unchanged).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub unparsed: Vec<String>,
    /// Identifiers on the lines the commit added, per changed source file (the evidence of
    /// references from this commit's code into earlier commits' definitions).
    #[serde(skip)]
    pub added_identifiers: BTreeMap<String, BTreeSet<String>>,
    /// Identifiers on the lines the commit added to test code: test files, test definitions in
    /// other files (Rust `#[test]` functions and `#[cfg(test)]` modules in `src/`), and the
    /// doctests it added or changed (the evidence that the stage's tests exercise its code).
    #[serde(skip)]
    pub test_identifiers: BTreeSet<String>,
    /// Names of the definitions added or modified, by id (non-test and test alike).
    #[serde(skip)]
    pub names: BTreeMap<String, String>,
    /// Ids of test-code definitions among `names`.
    #[serde(skip)]
    pub test_defs: BTreeSet<String>,
    /// Ids among `names` of definitions that hold others (classes, impls, modules …).
    #[serde(skip)]
    pub containers: BTreeSet<String>,
    /// Resolved imports of the changed files after the commit.
    #[serde(skip)]
    pub file_imports: BTreeMap<String, BTreeSet<String>>,
}

impl CommitAnalysis {
    pub fn short(&self) -> &str {
        &self.commit[..self.commit.len().min(8)]
    }
    pub fn changes_tests(&self) -> bool {
        !self.tests.added.is_empty() || !self.tests.modified.is_empty()
    }
    pub fn lines_changed(&self) -> usize {
        self.files.iter().map(|f| f.lines_added + f.lines_removed).sum()
    }
}

/// Counters of one analysis run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AnalysisStats {
    pub commits: usize,
    /// Source files indexed from blobs (each changed file once per commit, plus the start tree).
    pub files_indexed: usize,
    pub files_in_start_tree: usize,
    pub seconds: f64,
    pub commits_per_second: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct History {
    pub version: u32,
    pub range: String,
    pub commits: Vec<CommitAnalysis>,
    /// Import edges of the tree after the last commit.
    pub import_edges: usize,
    pub stats: AnalysisStats,
}

/// The source files of the current tree and what the analysis knows of them.
#[derive(Default)]
pub struct HistoryState {
    pub files: HashMap<String, FileFacts>,
    /// Manifests the indexers read (`is_index_input` files that are not source files).
    manifests: BTreeMap<String, Vec<u8>>,
}

impl HistoryState {
    /// The module import graph: file → files it imports.
    pub fn import_graph(&self) -> BTreeMap<&str, &BTreeSet<String>> {
        self.files.iter().filter(|(_, f)| !f.imports.is_empty()).map(|(p, f)| (p.as_str(), &f.imports)).collect()
    }

    /// Index `changed` (path → new bytes; the files of the current tree not named keep their
    /// facts) and return the new facts of each changed path that parsed, plus the paths that
    /// did not.
    fn index_changed(&self, changed: &[(String, Arc<Vec<u8>>)]) -> (HashMap<String, FileFacts>, Vec<String>) {
        let langs: BTreeSet<Language> = changed.iter().filter_map(|(p, _)| Language::from_path(Path::new(p))).collect();
        let changed_paths: BTreeSet<&str> = changed.iter().map(|(p, _)| p.as_str()).collect();
        let mut sources: Vec<(String, Vec<u8>)> = changed.iter().map(|(p, b)| (p.clone(), b.to_vec())).collect();
        for (p, f) in &self.files {
            if langs.contains(&f.language) && !changed_paths.contains(p.as_str()) {
                sources.push((p.clone(), Vec::new()));
            }
        }
        for (p, b) in &self.manifests {
            if !changed_paths.contains(p.as_str()) {
                sources.push((p.clone(), b.clone()));
            }
        }
        let index = DefinitionIndex::from_sources(&sources);
        let mut out = HashMap::new();
        for (path, bytes) in changed {
            if let Some(fi) = index.files.get(path) {
                let defs = fi
                    .definitions
                    .iter()
                    .filter_map(|id| index.definitions.get(id))
                    .map(|d| {
                        let (s, e) = (d.span.start_byte.min(bytes.len()), d.span.end_byte.min(bytes.len()));
                        let mut h = std::hash::DefaultHasher::new();
                        let lang = carve_languages::support(fi.language);
                        lang.definition_hash_input(&bytes[s..e]).hash(&mut h);
                        DefFact {
                            id: d.id.clone(),
                            name: d.name.clone(),
                            kind: d.kind,
                            is_test: d.is_test,
                            start_byte: s,
                            end_byte: e,
                            hash: h.finish(),
                            doctest: lang.doctests(d, &index),
                            bench: lang.is_benchmark(d),
                        }
                    })
                    .collect();
                let imports = fi.imports.iter().filter_map(|i| i.resolved_path.clone()).filter(|p| p != path).collect();
                out.insert(
                    path.clone(),
                    FileFacts { language: fi.language, is_test: fi.is_test, defs, imports, source: bytes.clone() },
                );
            }
        }
        let unparsed = changed.iter().filter(|(p, _)| !out.contains_key(p)).map(|(p, _)| p.clone()).collect();
        (out, unparsed)
    }
}

/// Analyse the first-parent commits of `range` (see [`Repo::first_parent_commits`]).
pub fn analyze(repo: &Repo, range: &str, limit: Option<usize>) -> Result<History, HistoryError> {
    let started = std::time::Instant::now();
    let commits = repo.first_parent_commits(range, limit)?;
    let mut state = HistoryState::default();
    let mut stats = AnalysisStats::default();
    if let Some(first) = commits.first() {
        if let Some(parent) = first.parent {
            let tree = repo.commit(parent)?.tree;
            let mut changed = Vec::new();
            for (path, blob) in repo.tree_files(tree)? {
                if is_index_input(&path) {
                    let bytes = repo.blob(blob)?;
                    if Language::from_path(Path::new(&path)).is_some() {
                        changed.push((path, Arc::new(bytes)));
                    } else {
                        state.manifests.insert(path, bytes);
                    }
                }
            }
            let (facts, _) = state.index_changed(&changed);
            stats.files_in_start_tree = facts.len();
            stats.files_indexed += changed.len();
            state.files = facts;
        }
    }
    let mut out = Vec::with_capacity(commits.len());
    for info in &commits {
        let old_tree = match info.parent {
            Some(p) => Some(repo.commit(p)?.tree),
            None => None,
        };
        let changes = repo.diff_trees(old_tree, info.tree)?;
        let analysis = analyze_commit(repo, &mut state, info, &changes, &mut stats)?;
        out.push(analysis);
    }
    stats.commits = out.len();
    stats.seconds = started.elapsed().as_secs_f64();
    stats.commits_per_second = if stats.seconds > 0.0 { stats.commits as f64 / stats.seconds } else { 0.0 };
    let import_edges = state.files.values().map(|f| f.imports.len()).sum();
    Ok(History { version: 1, range: range.to_string(), commits: out, import_edges, stats })
}

/// The name a test id gives its test: the item of a doctest id (see
/// [`carve_languages::doctest_name`]), or else the last component of a definition id
/// (`src/a.py::Tests.test_x` → `test_x`).
pub fn test_name(id: &str) -> &str {
    carve_languages::doctest_name(id).unwrap_or_else(|| {
        let last = id.rsplit(['.', ':']).next().unwrap_or(id);
        last.split('@').next().unwrap_or(last)
    })
}

/// A definition id without its `@L<line>` suffix (the suffix of a name defined twice in one
/// file moves with every line added above it).
pub fn stable_id(id: &str) -> &str {
    match id.rfind("@L") {
        Some(i) if id[i + 2..].bytes().all(|b| b.is_ascii_digit()) && i + 2 < id.len() => &id[..i],
        _ => id,
    }
}

/// A file's definitions by a key that survives line moves: the stable id and its occurrence
/// number among definitions of that stable id, in source order.
fn keyed(defs: &[DefFact]) -> BTreeMap<String, &DefFact> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = BTreeMap::new();
    for d in defs {
        let base = stable_id(&d.id);
        let n = seen.entry(base).or_default();
        out.insert(format!("{base}#{n}"), d);
        *n += 1;
    }
    out
}

fn is_container(d: &DefFact) -> bool {
    use DefinitionKind as K;
    matches!(d.kind, K::Class | K::Struct | K::Enum | K::Trait | K::Interface | K::Impl | K::Module)
}

/// A test function or method by the language's conventions: a definition in test code that
/// is a function or method (helpers in test files count too: they are test code the stage
/// added).
fn is_test_function(d: &DefFact) -> bool {
    d.is_test && !d.bench && matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method)
}
