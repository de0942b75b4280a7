//! History analysis (FeatureArc III-A): per first-parent commit, the definitions it added,
//! modified, removed and renamed, the tests it added or modified, the lines and files it
//! changed, and the module import graph as it stands after the commit.
//!
//! Incremental: the state holds one [`FileFacts`] per source file of the current tree
//! (definitions with a hash of their text, resolved imports, the source). A commit re-indexes
//! only the files it changed, from their blobs, in memory; the other source files of the
//! same languages are passed as empty placeholders so that imports still resolve to paths.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use carve_languages::index::is_index_input;
use carve_languages::{DefinitionIndex, DefinitionKind, Doctest, Language};
use serde::{Deserialize, Serialize};

use crate::HistoryError;
use crate::git::{CommitInfo, Repo, TreeChange};

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
            match index.files.get(path) {
                Some(fi) => {
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
                    let imports =
                        fi.imports.iter().filter_map(|i| i.resolved_path.clone()).filter(|p| p != path).collect();
                    out.insert(
                        path.clone(),
                        FileFacts { language: fi.language, is_test: fi.is_test, defs, imports, source: bytes.clone() },
                    );
                }
                None => {}
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

/// Analyse one commit against the state of its first parent and bring the state forward.
fn analyze_commit(
    repo: &Repo,
    state: &mut HistoryState,
    info: &CommitInfo,
    changes: &[TreeChange],
    stats: &mut AnalysisStats,
) -> Result<CommitAnalysis, HistoryError> {
    let mut files = Vec::new();
    let mut changed_sources = Vec::new();
    let mut old_texts: HashMap<String, Arc<Vec<u8>>> = HashMap::new();
    let mut new_texts: HashMap<String, Arc<Vec<u8>>> = HashMap::new();
    for ch in changes {
        let language = Language::from_path(Path::new(&ch.path));
        let status = match (ch.old, ch.new) {
            (None, _) => FileStatus::Added,
            (_, None) => FileStatus::Deleted,
            _ => FileStatus::Modified,
        };
        let old = match (state.files.get(&ch.path), ch.old) {
            (Some(f), _) => Some(f.source.clone()),
            (None, Some(b)) => Some(Arc::new(repo.blob(b)?)),
            (None, None) => None,
        };
        let new = ch.new.map(|b| repo.blob(b)).transpose()?.map(Arc::new);
        let (lines_added, lines_removed) = line_counts(old.as_deref(), new.as_deref());
        let is_test = language.is_some_and(|l| carve_languages::is_test_path(l, &ch.path));
        files.push(FileChange { path: ch.path.clone(), status, language, is_test, lines_added, lines_removed });
        if is_index_input(&ch.path) && language.is_none() {
            match &new {
                Some(b) => state.manifests.insert(ch.path.clone(), b.to_vec()),
                None => state.manifests.remove(&ch.path),
            };
        }
        if language.is_some() {
            if let Some(o) = old {
                old_texts.insert(ch.path.clone(), o);
            }
            if let Some(n) = &new {
                changed_sources.push((ch.path.clone(), n.clone()));
                new_texts.insert(ch.path.clone(), n.clone());
            }
        }
    }
    stats.files_indexed += changed_sources.len();
    let (mut new_facts, unparsed) = state.index_changed(&changed_sources);

    let mut defs = DefinitionChanges::default();
    let mut tests = TestChanges::default();
    let mut names = BTreeMap::new();
    let mut test_defs = BTreeSet::new();
    let mut containers = BTreeSet::new();
    let mut removed: Vec<(String, DefFact, Arc<Vec<u8>>)> = Vec::new();
    let mut added: Vec<(String, DefFact, Arc<Vec<u8>>)> = Vec::new();
    let mut imports_added = BTreeSet::new();
    let mut imports_removed = BTreeSet::new();
    let mut added_identifiers = BTreeMap::new();
    let mut test_identifiers = BTreeSet::new();
    let mut file_imports = BTreeMap::new();
    for f in &files {
        if f.language.is_none() || unparsed.contains(&f.path) {
            continue;
        }
        let old = state.files.get(&f.path);
        let new = new_facts.get(&f.path);
        let old_defs = old.map(|o| keyed(&o.defs)).unwrap_or_default();
        let new_defs = new.map(|n| keyed(&n.defs)).unwrap_or_default();
        if let Some(n) = new {
            for (key, d) in &new_defs {
                let d = *d;
                match old_defs.get(key) {
                    None => added.push((f.path.clone(), d.clone(), n.source.clone())),
                    Some(o) if o.hash != d.hash => {
                        defs.modified.push(d.id.clone());
                        if is_container(d) {
                            containers.insert(d.id.clone());
                        }
                        names.insert(d.id.clone(), d.name.clone());
                        if d.is_test {
                            test_defs.insert(d.id.clone());
                            if is_test_function(d) {
                                tests.modified.push(d.id.clone());
                            }
                        }
                    }
                    Some(_) => {}
                }
            }
            let before = old.map(|o| o.imports.clone()).unwrap_or_default();
            for to in n.imports.difference(&before) {
                imports_added.insert(ImportEdge { from: f.path.clone(), to: to.clone() });
            }
            for to in before.difference(&n.imports) {
                imports_removed.insert(ImportEdge { from: f.path.clone(), to: to.clone() });
            }
            file_imports.insert(f.path.clone(), n.imports.clone());
            let old_src = old_texts.get(&f.path).map(|s| s.as_slice());
            let ranges: Vec<(usize, usize)> = n.defs.iter().map(|d| (d.start_byte, d.end_byte)).collect();
            let added_here = added_code_identifiers(old_src, &n.source, &ranges);
            if f.is_test {
                test_identifiers.extend(added_here.iter().cloned());
                let tests: Vec<(usize, usize, bool)> = n
                    .defs
                    .iter()
                    .filter(|d| d.is_test)
                    .map(|d| (d.start_byte, d.end_byte, is_test_function(d)))
                    .collect();
                if carve_languages::support(n.language).facts().tests_in_blocks {
                    test_identifiers.extend(table_test_identifiers(old_src, &n.source, &tests));
                }
            } else if carve_languages::support(n.language).facts().tests_in_sources {
                // Inline tests: Rust's `#[test]` functions and `#[cfg(test)]` modules of `src/`.
                let tests: Vec<(usize, usize)> =
                    n.defs.iter().filter(|d| d.is_test).map(|d| (d.start_byte, d.end_byte)).collect();
                if !tests.is_empty() {
                    test_identifiers.extend(added_code_identifiers(old_src, &n.source, &tests));
                }
            }
            added_identifiers.insert(f.path.clone(), added_here);
            for (key, d) in &new_defs {
                let Some(dt) = &d.doctest else { continue };
                let before = old_defs.get(key).and_then(|o| o.doctest.as_ref());
                if before == Some(dt) {
                    continue;
                }
                let old_code = before.map(|b| b.code.as_bytes());
                test_identifiers.extend(added_code_identifiers(old_code, dt.code.as_bytes(), &[(0, dt.code.len())]));
                if before.is_some() { &mut tests.modified } else { &mut tests.added }.push(dt.id.clone());
            }
        } else if let Some(o) = old {
            for to in &o.imports {
                imports_removed.insert(ImportEdge { from: f.path.clone(), to: to.clone() });
            }
        }
        if let Some(o) = old {
            for (key, d) in &old_defs {
                if !new_defs.contains_key(key) {
                    removed.push((f.path.clone(), (*d).clone(), o.source.clone()));
                }
            }
        }
        if f.is_test {
            tests.files.push(f.path.clone());
        }
    }
    // Renames: a removal and an addition of the same kind with similar text.
    let (renames, added_left, removed_left) = pair_renames(added, removed);
    for r in &renames {
        names.insert(r.to.clone(), r.to.rsplit(['.', ':']).next().unwrap_or(&r.to).to_string());
    }
    defs.renamed = renames;
    for (_, d, _) in added_left {
        names.insert(d.id.clone(), d.name.clone());
        if d.is_test {
            test_defs.insert(d.id.clone());
            if is_test_function(&d) {
                tests.added.push(d.id.clone());
            }
        }
        defs.added.push(d.id);
    }
    defs.removed = removed_left.into_iter().map(|(_, d, _)| d.id).collect();
    for list in [&mut defs.added, &mut defs.modified, &mut defs.removed, &mut tests.added, &mut tests.modified] {
        list.sort();
        list.dedup();
    }
    defs.renamed.sort_by(|a, b| a.from.cmp(&b.from));

    // Bring the state forward.
    for f in &files {
        if f.language.is_none() || unparsed.contains(&f.path) {
            continue;
        }
        match new_facts.remove(&f.path) {
            Some(n) => state.files.insert(f.path.clone(), n),
            None => state.files.remove(&f.path),
        };
    }
    let _ = new_texts;
    Ok(CommitAnalysis {
        commit: info.id.to_string(),
        parent: info.parent.map(|p| p.to_string()),
        is_merge: info.is_merge,
        summary: info.summary.clone(),
        time: info.author_time,
        files,
        definitions: defs,
        tests,
        imports_added: imports_added.into_iter().collect(),
        imports_removed: imports_removed.into_iter().collect(),
        unparsed,
        added_identifiers,
        test_identifiers,
        names,
        test_defs,
        containers,
        file_imports,
    })
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

type Sided = Vec<(String, DefFact, Arc<Vec<u8>>)>;

/// Pair removed and added definitions into renames: same kind, text equal apart from the
/// name, or similar (normalised Levenshtein ≥ 0.8 on texts of comparable length).
fn pair_renames(added: Sided, removed: Sided) -> (Vec<Rename>, Sided, Sided) {
    const THRESHOLD: f64 = 0.8;
    const MAX_PAIRS: usize = 4000;
    let text = |d: &DefFact, src: &[u8]| -> String {
        let t = std::str::from_utf8(&src[d.start_byte..d.end_byte]).unwrap_or("");
        t.replace(d.name.as_str(), "\u{0}")
    };
    let mut renames = Vec::new();
    let mut used_added = vec![false; added.len()];
    let mut used_removed = vec![false; removed.len()];
    if !added.is_empty() && !removed.is_empty() {
        let at: Vec<String> = added.iter().map(|(_, d, s)| text(d, s)).collect();
        let rt: Vec<String> = removed.iter().map(|(_, d, s)| text(d, s)).collect();
        let exhaustive = added.len() * removed.len() <= MAX_PAIRS;
        for (ri, (_, rd, _)) in removed.iter().enumerate() {
            let mut best: Option<(usize, f64)> = None;
            for (ai, (_, ad, _)) in added.iter().enumerate() {
                if used_added[ai] || ad.kind != rd.kind || ad.is_test != rd.is_test {
                    continue;
                }
                let sim = if at[ai] == rt[ri] {
                    1.0
                } else if exhaustive {
                    let (a, b) = (at[ai].len(), rt[ri].len());
                    if a.min(b) * 2 < a.max(b) || a.max(b) > 20_000 {
                        continue;
                    }
                    strsim::normalized_levenshtein(&at[ai], &rt[ri])
                } else {
                    continue;
                };
                if sim >= THRESHOLD && best.is_none_or(|(_, s)| sim > s) {
                    best = Some((ai, sim));
                }
            }
            if let Some((ai, sim)) = best {
                used_added[ai] = true;
                used_removed[ri] = true;
                renames.push(Rename {
                    from: rd.id.clone(),
                    to: added[ai].1.id.clone(),
                    similarity: (sim * 1000.0).round() / 1000.0,
                });
            }
        }
    }
    let added_left = added.into_iter().zip(used_added).filter(|(_, u)| !u).map(|(a, _)| a).collect();
    let removed_left = removed.into_iter().zip(used_removed).filter(|(_, u)| !u).map(|(r, _)| r).collect();
    (renames, added_left, removed_left)
}

fn line_counts(old: Option<&Vec<u8>>, new: Option<&Vec<u8>>) -> (usize, usize) {
    fn as_text(b: Option<&Vec<u8>>) -> &str {
        b.and_then(|b| std::str::from_utf8(b).ok()).unwrap_or("")
    }
    let (o, n) = (as_text(old), as_text(new));
    if o.len() + n.len() > 4 * 1024 * 1024 {
        return (n.lines().count(), o.lines().count());
    }
    let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(o, n);
    let (mut a, mut r) = (0, 0);
    for op in diff.ops() {
        match op.tag() {
            similar::DiffTag::Insert => a += op.new_range().len(),
            similar::DiffTag::Delete => r += op.old_range().len(),
            similar::DiffTag::Replace => {
                a += op.new_range().len();
                r += op.old_range().len();
            }
            similar::DiffTag::Equal => {}
        }
    }
    (a, r)
}

/// Identifiers on the lines of `new` that are not in `old` (all of `new` when `old` is
/// none) and that lie inside a definition (`ranges`, byte spans in `new`): the code a commit
/// wrote, not its import lines or other module-level statements.
fn added_code_identifiers(old: Option<&[u8]>, new: &[u8], ranges: &[(usize, usize)]) -> BTreeSet<String> {
    let n = std::str::from_utf8(new).unwrap_or("");
    let o = old.and_then(|o| std::str::from_utf8(o).ok()).unwrap_or("");
    let mut starts = vec![0usize];
    starts.extend(n.match_indices('\n').map(|(i, _)| i + 1));
    let inside = |line: usize| {
        let at = starts.get(line).copied().unwrap_or(usize::MAX);
        ranges.iter().any(|&(s, e)| at >= s && at < e)
    };
    let mut out = BTreeSet::new();
    let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(o, n);
    for change in diff.iter_all_changes() {
        if change.tag() == similar::ChangeTag::Insert && change.new_index().is_some_and(inside) {
            identifiers(change.value(), &mut out);
        }
    }
    out
}

/// Identifiers of each test definition (`tests`: byte ranges in `new`) whose lines the commit
/// added are data only: no call on them, as in a new row of a table-driven test
/// (`{ input: ["../a", "../b"], out: "b" },` in the `relativeTests` array of unjs/ufo's
/// `describe("joinRelativeURL")`). Such a row names no code itself; the test that runs the
/// table does, so the whole test definition's identifiers count. The innermost test definition
/// holding a line is the one that counts, and only when it is a test function that holds tests
/// itself (a `describe` block whose loop makes a test per row; `tests`: start, end, whether a
/// test function): a row inside a test that holds none is that test's own data. Used for the
/// languages whose tests are made in blocks (`LanguageFacts::tests_in_blocks`: JavaScript,
/// TypeScript); elsewhere every function of a test file is test code, so a helper nested in a
/// test would make it look like a block.
fn table_test_identifiers(old: Option<&[u8]>, new: &[u8], tests: &[(usize, usize, bool)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if tests.is_empty() {
        return out;
    }
    let n = std::str::from_utf8(new).unwrap_or("");
    let o = old.and_then(|o| std::str::from_utf8(o).ok()).unwrap_or("");
    let mut starts = vec![0usize];
    starts.extend(n.match_indices('\n').map(|(i, _)| i + 1));
    // Per innermost test definition: whether any added line of it calls something.
    let mut rows: BTreeMap<(usize, usize, bool), bool> = BTreeMap::new();
    let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(o, n);
    for change in diff.iter_all_changes() {
        if change.tag() != similar::ChangeTag::Insert {
            continue;
        }
        let Some(at) = change.new_index().and_then(|l| starts.get(l).copied()) else { continue };
        let Some(&innermost) = tests
            .iter()
            .filter(|&&(s, e, _)| at >= s && at < e)
            .min_by_key(|&&(s, e, _)| (e - s, std::cmp::Reverse(s)))
        else {
            continue;
        };
        if change.value().trim().is_empty() {
            continue;
        }
        *rows.entry(innermost).or_insert(false) |= has_call(change.value());
    }
    for ((s, e, function), calls) in rows {
        // Only a test function that holds tests (a `describe`) feeds its table to the tests it
        // makes; a row inside a test that holds none stays that test's own data.
        let holds_tests = tests.iter().any(|&(ts, te, _)| (ts, te) != (s, e) && s <= ts && te <= e);
        if !calls && function && holds_tests {
            identifiers(&n[s.min(n.len())..e.min(n.len())], &mut out);
        }
    }
    out
}

/// Whether `line` calls something: an identifier followed by `(` (outside nothing cleverer:
/// a parenthesis inside a string counts too, which only makes a row count as code).
fn has_call(line: &str) -> bool {
    let b = line.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'(' && {
            let before = line[..i].trim_end();
            before.chars().next_back().is_some_and(|p| p.is_ascii_alphanumeric() || p == '_' || p == '$')
        }
    })
}

/// Identifier-like tokens (`[A-Za-z_][A-Za-z0-9_]*`) of `text`, two characters or longer.
pub fn identifiers(text: &str, out: &mut BTreeSet<String>) {
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) if !c.is_ascii_digit() => start = Some(i),
            (Some(s), false) => {
                if i - s >= 2 {
                    out.insert(text[s..i].to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_ids_drop_line_suffixes_only() {
        assert_eq!(stable_id("a.py::f@L12"), "a.py::f");
        assert_eq!(stable_id("a.py::f@Lx"), "a.py::f@Lx");
        assert_eq!(stable_id("a.py::g"), "a.py::g");
    }

    #[test]
    fn identifiers_skip_numbers_and_single_letters() {
        let mut out = BTreeSet::new();
        identifiers("x = run_and_wait(job_id, 10) + a1b", &mut out);
        assert_eq!(out.into_iter().collect::<Vec<_>>(), vec!["a1b", "job_id", "run_and_wait"]);
    }

    #[test]
    fn added_code_identifiers_skip_module_level_lines() {
        let old = b"import a\n\ndef f():\n    return 1\n";
        let new = b"import a, helper\n\ndef f():\n    return helper(1)\n";
        let start = 18; // `def f` in `new`
        let ids = added_code_identifiers(Some(old), new, &[(start, new.len())]);
        assert_eq!(ids.into_iter().collect::<Vec<_>>(), vec!["helper", "return"]);
    }

    /// unjs/ufo `fix(joinRelativeURL): handle base with protocol`: the commit adds a row to the
    /// table a `describe("joinRelativeURL")` runs; the row names nothing, the block does. A line
    /// that calls something is code, and counts only with its own identifiers.
    #[test]
    fn a_new_row_of_a_table_driven_test_names_what_the_test_names() {
        let old = "describe(\"joinRelativeURL\", () => {\n  const tests = [\n    { input: [\"a\"], out: \"a\" },\n  ];\n  for (const t of tests) {\n    test(t.out, () => {\n      expect(joinRelativeURL(...t.input)).toBe(t.out);\n    });\n  }\n});\n";
        let new = old.replace("  ];", "    { input: [\"https://x.com/\", \"../b\"], out: \"https://x.com/b\" },\n  ];");
        let test_at = new.find("test(t.out").unwrap();
        let whole = [(0, new.len(), true), (test_at, new.len() - 6, true)];
        assert!(
            !added_code_identifiers(Some(old.as_bytes()), new.as_bytes(), &[(0, new.len())])
                .contains("joinRelativeURL")
        );
        let ids = table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &whole);
        assert!(ids.contains("joinRelativeURL") && ids.contains("describe"), "{ids:?}");
        let call = old.replace("  ];", "    { input: [normalize(\"a\")], out: \"a\" },\n  ];");
        let call_at = call.find("test(t.out").unwrap();
        assert!(
            table_test_identifiers(
                Some(old.as_bytes()),
                call.as_bytes(),
                &[(0, call.len(), true), (call_at, call.len() - 6, true)]
            )
            .is_empty()
        );
        assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &[]).is_empty(), "outside any test");
        // The same row in a test function that holds no other test: that test's own data.
        assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &[(0, new.len(), true)]).is_empty());
        // A test class holding the row next to its tests (a `parametrize` row above a method).
        let class = [(0, new.len(), false), (test_at, new.len() - 6, true)];
        assert!(table_test_identifiers(Some(old.as_bytes()), new.as_bytes(), &class).is_empty());
    }

    #[test]
    fn line_counts_count_replacements_both_ways() {
        let (a, r) = line_counts(Some(&b"a\nb\nc\n".to_vec()), Some(&b"a\nB\nc\nd\n".to_vec()));
        assert_eq!((a, r), (2, 1));
    }

    #[test]
    fn test_names_of_definition_and_doctest_ids() {
        assert_eq!(test_name("tests/a.py::Tests.test_x@L12"), "test_x");
        assert_eq!(test_name("src/lib.rs::tests.adds"), "adds");
        assert_eq!(test_name("src/lib.rs - Either<L,R>::map"), "map");
        assert_eq!(test_name("src/lib.rs - add"), "add");
        assert_eq!(test_name("src/buf.rs - buf::Buffer<T>::push<U>"), "push");
    }

    /// servo/rust-smallvec's `benches/bench.rs` and `#[bench]` functions count as no test a
    /// commit adds: `cargo test` does not run them, so no gate could see them fail or pass.
    #[test]
    fn rust_benchmarks_are_no_tests() {
        let f = |bench| DefFact {
            id: "src/lib.rs::benches.push".into(),
            name: "push".into(),
            kind: DefinitionKind::Function,
            is_test: true,
            start_byte: 0,
            end_byte: 0,
            hash: 0,
            doctest: None,
            bench,
        };
        assert!(is_test_function(&f(false)) && !is_test_function(&f(true)));
    }

    /// A Rust commit whose tests are an inline `#[test]` and a doctest: both count as tests
    /// added, with the names they use, and neither as feature code.
    #[test]
    fn inline_tests_and_doctests_are_tests_of_a_rust_commit() {
        if !crate::recipe::git_available() {
            eprintln!("skipped: no git");
            return;
        }
        let recipe = inline_recipe();
        let dir = tempfile::tempdir().unwrap();
        crate::recipe::build(&recipe, dir.path()).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let history = analyze(&repo, "HEAD", None).unwrap();
        let [first, second, third] = &history.commits[..] else { panic!("{} commits", history.commits.len()) };
        assert!(first.tests.added.is_empty(), "{:?}", first.tests);
        assert_eq!(second.tests.added, ["src/lib.rs - Stack<T>::peek", "src/lib.rs::tests.peeks_the_top"]);
        assert!(second.test_identifiers.contains("peek"), "{:?}", second.test_identifiers);
        assert_eq!(
            second.definitions.added,
            ["src/lib.rs::Stack.peek", "src/lib.rs::tests", "src/lib.rs::tests.peeks_the_top"]
        );
        // The feature code of the commit is `peek` alone: the test module is test code.
        let feature: Vec<&String> =
            second.definitions.added.iter().filter(|id| !second.test_defs.contains(*id)).collect();
        assert_eq!(feature, ["src/lib.rs::Stack.peek"]);
        // A doc-comment-only change: its doctest changed, its code did not.
        assert_eq!(third.tests.modified, ["src/lib.rs - Stack<T>::peek"]);
        assert!(third.definitions.modified.iter().all(|id| !id.ends_with("peek")), "{:?}", third.definitions);
        assert!(third.test_identifiers.contains("is_none"), "{:?}", third.test_identifiers);
    }

    /// The recipe: a stack; `peek` with a doctest and an inline test; `peek`'s doc comment
    /// and doctest rewritten.
    fn inline_recipe() -> crate::recipe::Recipe {
        const STACK: &str = "pub struct Stack<T> {\n    items: Vec<T>,\n}\n\nimpl<T> Stack<T> {\n    pub fn new() -> Self {\n        Stack { items: Vec::new() }\n    }\n";
        let peek = |doc: &str, doctest: &str| {
            format!(
                "{STACK}\n    /// {doc}\n    ///\n    /// ```\n    /// {doctest}\n    /// ```\n    pub fn peek(&self) -> Option<&T> {{\n        self.items.last()\n    }}\n}}\n\n\
                 #[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn peeks_the_top() {{\n        assert!(Stack::<u8>::new().peek().is_none());\n    }}\n}}\n"
            )
        };
        let commit = |message: &str, files: Vec<(&str, String)>| crate::recipe::RecipeCommit {
            message: message.into(),
            files: files.into_iter().map(|(p, t)| (p.to_string(), t)).collect(),
            delete: vec![],
        };
        let manifest = "[package]\nname = \"stack\"\nversion = \"0.1.0\"\nedition = \"2021\"\n".to_string();
        crate::recipe::Recipe {
            commits: vec![
                commit("stack", vec![("Cargo.toml", manifest), ("src/lib.rs", format!("{STACK}}}\n"))]),
                commit(
                    "peek",
                    vec![("src/lib.rs", peek("The top item.", "assert_eq!(stack::Stack::<u8>::new().peek(), None);"))],
                ),
                commit(
                    "peek docs",
                    vec![(
                        "src/lib.rs",
                        peek(
                            "The top item, `None` when empty.",
                            "assert!(stack::Stack::<u8>::new().peek().is_none());",
                        ),
                    )],
                ),
            ],
        }
    }
}
