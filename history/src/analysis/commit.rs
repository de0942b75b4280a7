//! One commit against the state of its first parent: read its changed files (line counts,
//! manifests, blobs), re-index the changed sources, compare each file's definitions,
//! imports, added identifiers and doctests before and after, pair removals with additions
//! into renames, and bring the state forward.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use carve_languages::Language;
use carve_languages::index::is_index_input;

use super::identifiers::{added_code_identifiers, table_test_identifiers};
use super::renames::{Sided, pair_renames};
use super::{
    CommitAnalysis, DefFact, DefinitionChanges, FileChange, FileFacts, FileStatus, HistoryState, ImportEdge,
    TestChanges, is_container, is_test_function, keyed,
};
use crate::HistoryError;
use crate::git::{CommitInfo, Repo, TreeChange};

/// Analyse one commit against the state of its first parent and bring the state forward.
pub(super) fn analyze_commit(
    repo: &Repo,
    state: &mut HistoryState,
    info: &CommitInfo,
    changes: &[TreeChange],
    stats: &mut super::AnalysisStats,
) -> Result<CommitAnalysis, HistoryError> {
    let read = read_changes(repo, state, changes)?;
    stats.files_indexed += read.changed_sources.len();
    let (mut new_facts, unparsed) = state.index_changed(&read.changed_sources);
    let mut compared = Compared::default();
    for f in &read.files {
        if f.language.is_none() || unparsed.contains(&f.path) {
            continue;
        }
        let old_src = read.old_texts.get(&f.path).map(|s| s.as_slice());
        compared.file(f, state.files.get(&f.path), new_facts.get(&f.path), old_src);
    }
    compared.pair_renames();
    // Bring the state forward.
    for f in &read.files {
        if f.language.is_none() || unparsed.contains(&f.path) {
            continue;
        }
        match new_facts.remove(&f.path) {
            Some(n) => state.files.insert(f.path.clone(), n),
            None => state.files.remove(&f.path),
        };
    }
    Ok(compared.into_analysis(info, read.files, unparsed))
}

/// The files a commit changed, as read from its blobs.
struct ReadChanges {
    files: Vec<FileChange>,
    /// The new bytes of each changed source file that still exists.
    changed_sources: Vec<(String, Arc<Vec<u8>>)>,
    /// The bytes before the commit of each changed source file that existed.
    old_texts: HashMap<String, Arc<Vec<u8>>>,
}

/// Read the commit's changed files: status, language, line counts, old and new bytes; the
/// manifests the indexers read are brought forward in `state` here.
fn read_changes(repo: &Repo, state: &mut HistoryState, changes: &[TreeChange]) -> Result<ReadChanges, HistoryError> {
    let mut files = Vec::new();
    let mut changed_sources = Vec::new();
    let mut old_texts: HashMap<String, Arc<Vec<u8>>> = HashMap::new();
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
            }
        }
    }
    Ok(ReadChanges { files, changed_sources, old_texts })
}

/// What comparing a commit's files before and after found, gathered file by file.
#[derive(Default)]
struct Compared {
    defs: DefinitionChanges,
    tests: TestChanges,
    names: BTreeMap<String, String>,
    test_defs: BTreeSet<String>,
    containers: BTreeSet<String>,
    /// Definitions removed and added (file, fact, the file's source), paired into renames at
    /// the end.
    removed: Sided,
    added: Sided,
    imports_added: BTreeSet<ImportEdge>,
    imports_removed: BTreeSet<ImportEdge>,
    added_identifiers: BTreeMap<String, BTreeSet<String>>,
    test_identifiers: BTreeSet<String>,
    file_imports: BTreeMap<String, BTreeSet<String>>,
}

type Keyed<'a> = BTreeMap<String, &'a DefFact>;

impl Compared {
    /// Compare one parsed source file before (`old`, `old_src`) and after (`new`) the commit.
    fn file(&mut self, f: &FileChange, old: Option<&FileFacts>, new: Option<&FileFacts>, old_src: Option<&[u8]>) {
        let old_defs = old.map(|o| keyed(&o.defs)).unwrap_or_default();
        let new_defs = new.map(|n| keyed(&n.defs)).unwrap_or_default();
        if let Some(n) = new {
            self.definitions(&f.path, n, &old_defs, &new_defs);
            self.imports(&f.path, old, n);
            self.identifiers(f, n, old_src);
            self.doctests(&old_defs, &new_defs);
        } else if let Some(o) = old {
            for to in &o.imports {
                self.imports_removed.insert(ImportEdge { from: f.path.clone(), to: to.clone() });
            }
        }
        if let Some(o) = old {
            for (key, d) in &old_defs {
                if !new_defs.contains_key(key) {
                    self.removed.push((f.path.clone(), (*d).clone(), o.source.clone()));
                }
            }
        }
        if f.is_test {
            self.tests.files.push(f.path.clone());
        }
    }

    /// The definitions of the file after the commit that are new (kept for pairing into
    /// renames) or whose text changed.
    fn definitions(&mut self, path: &str, n: &FileFacts, old_defs: &Keyed, new_defs: &Keyed) {
        for (key, d) in new_defs {
            let d = *d;
            match old_defs.get(key) {
                None => self.added.push((path.to_string(), d.clone(), n.source.clone())),
                Some(o) if o.hash != d.hash => {
                    self.defs.modified.push(d.id.clone());
                    if is_container(d) {
                        self.containers.insert(d.id.clone());
                    }
                    self.names.insert(d.id.clone(), d.name.clone());
                    if d.is_test {
                        self.test_defs.insert(d.id.clone());
                        if is_test_function(d) {
                            self.tests.modified.push(d.id.clone());
                        }
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// The import edges the commit added to and removed from the file, and its imports after.
    fn imports(&mut self, path: &str, old: Option<&FileFacts>, n: &FileFacts) {
        let before = old.map(|o| o.imports.clone()).unwrap_or_default();
        for to in n.imports.difference(&before) {
            self.imports_added.insert(ImportEdge { from: path.to_string(), to: to.clone() });
        }
        for to in before.difference(&n.imports) {
            self.imports_removed.insert(ImportEdge { from: path.to_string(), to: to.clone() });
        }
        self.file_imports.insert(path.to_string(), n.imports.clone());
    }

    /// The identifiers on the lines the commit added inside the file's definitions, and those
    /// that count as test code (a test file's, its table rows', inline tests').
    fn identifiers(&mut self, f: &FileChange, n: &FileFacts, old_src: Option<&[u8]>) {
        let ranges: Vec<(usize, usize)> = n.defs.iter().map(|d| (d.start_byte, d.end_byte)).collect();
        let added_here = added_code_identifiers(old_src, &n.source, &ranges);
        if f.is_test {
            self.test_identifiers.extend(added_here.iter().cloned());
            let tests: Vec<(usize, usize, bool)> =
                n.defs.iter().filter(|d| d.is_test).map(|d| (d.start_byte, d.end_byte, is_test_function(d))).collect();
            if carve_languages::support(n.language).facts().tests_in_blocks {
                self.test_identifiers.extend(table_test_identifiers(old_src, &n.source, &tests));
            }
        } else if carve_languages::support(n.language).facts().tests_in_sources {
            // Inline tests: Rust's `#[test]` functions and `#[cfg(test)]` modules of `src/`.
            let tests: Vec<(usize, usize)> =
                n.defs.iter().filter(|d| d.is_test).map(|d| (d.start_byte, d.end_byte)).collect();
            if !tests.is_empty() {
                self.test_identifiers.extend(added_code_identifiers(old_src, &n.source, &tests));
            }
        }
        self.added_identifiers.insert(f.path.clone(), added_here);
    }

    /// The doctests the commit added or changed: tests, and their code test identifiers.
    fn doctests(&mut self, old_defs: &Keyed, new_defs: &Keyed) {
        for (key, d) in new_defs {
            let Some(dt) = &d.doctest else { continue };
            let before = old_defs.get(key).and_then(|o| o.doctest.as_ref());
            if before == Some(dt) {
                continue;
            }
            let old_code = before.map(|b| b.code.as_bytes());
            self.test_identifiers.extend(added_code_identifiers(old_code, dt.code.as_bytes(), &[(0, dt.code.len())]));
            if before.is_some() { &mut self.tests.modified } else { &mut self.tests.added }.push(dt.id.clone());
        }
    }

    /// Renames: a removal and an addition of the same kind with similar text. The additions
    /// left are added definitions (and tests), the removals left removed ones; every list
    /// sorted.
    fn pair_renames(&mut self) {
        let (renames, added_left, removed_left) =
            pair_renames(std::mem::take(&mut self.added), std::mem::take(&mut self.removed));
        for r in &renames {
            self.names.insert(r.to.clone(), r.to.rsplit(['.', ':']).next().unwrap_or(&r.to).to_string());
        }
        self.defs.renamed = renames;
        for (_, d, _) in added_left {
            self.names.insert(d.id.clone(), d.name.clone());
            if d.is_test {
                self.test_defs.insert(d.id.clone());
                if is_test_function(&d) {
                    self.tests.added.push(d.id.clone());
                }
            }
            self.defs.added.push(d.id);
        }
        self.defs.removed = removed_left.into_iter().map(|(_, d, _)| d.id).collect();
        let (defs, tests) = (&mut self.defs, &mut self.tests);
        for list in [&mut defs.added, &mut defs.modified, &mut defs.removed, &mut tests.added, &mut tests.modified] {
            list.sort();
            list.dedup();
        }
        self.defs.renamed.sort_by(|a, b| a.from.cmp(&b.from));
    }

    fn into_analysis(self, info: &CommitInfo, files: Vec<FileChange>, unparsed: Vec<String>) -> CommitAnalysis {
        CommitAnalysis {
            commit: info.id.to_string(),
            parent: info.parent.map(|p| p.to_string()),
            is_merge: info.is_merge,
            summary: info.summary.clone(),
            time: info.author_time,
            files,
            definitions: self.defs,
            tests: self.tests,
            imports_added: self.imports_added.into_iter().collect(),
            imports_removed: self.imports_removed.into_iter().collect(),
            unparsed,
            added_identifiers: self.added_identifiers,
            test_identifiers: self.test_identifiers,
            names: self.names,
            test_defs: self.test_defs,
            containers: self.containers,
            file_imports: self.file_imports,
        }
    }
}

pub(super) fn line_counts(old: Option<&Vec<u8>>, new: Option<&Vec<u8>>) -> (usize, usize) {
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
