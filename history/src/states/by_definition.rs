//! Files made per definition: a code or test file whose chain patches do not come off the
//! final checkpoint whole gets, at each state, the final text without the definitions and
//! imported names later stages added, and with the definitions they changed as they were
//! before them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use carve_languages::{DefinitionIndex, ImportedKey, Language, NodeId};

use super::DefinitionLevelFile;
use super::build::Touch;
use super::git::{git, parent};

/// A code or test file whose chain patches do not come off the final checkpoint whole,
/// because a later commit rewrote lines a stage touched: its states are made per definition
/// instead. State S_j holds the file's final text where every definition stages j … n-1
/// added is deleted (carve's own masking) and every definition they changed has its text
/// from before the earliest of those stages that changed it, and the names stages j … n-1
/// added to its module-level imports are taken out (an import of what a later stage adds,
/// `from .exceptions import JSONDecodeError`, would fail to load); before the stage that
/// created the file there is no file. Later commits' edits to a definition a stage changed are undone
/// with it, and a definition a stage removed does not come back; when that breaks a state, its
/// build check or gate drops the chain with the reason.
pub(super) struct ByDefinition {
    pub(super) path: String,
    pub(super) language: Language,
    /// The file at the final checkpoint (`None`: absent there).
    pub(super) final_text: Option<String>,
    /// Per stage, the definitions its commits added to the file that the final file still has.
    pub(super) added: Vec<BTreeSet<NodeId>>,
    /// Per stage, the definitions its commits changed that the final file still has, with
    /// their text before the stage.
    pub(super) changed: Vec<BTreeMap<NodeId, String>>,
    /// Per stage, the names its commits added to the file's module-level imports that the
    /// final file still imports (and no earlier stage added).
    pub(super) imports: Vec<BTreeSet<ImportedKey>>,
    /// The stage whose commit created the file (absent before it).
    pub(super) created_by: Option<usize>,
    /// Definitions a stage added or changed that stay at their final text in every state,
    /// because a state did not build without them (the caller's `keep`).
    pub(super) kept: BTreeSet<NodeId>,
    /// The file's texts before and after each of the chain's commits that changed it: what
    /// a state's imports are reconciled with once definitions are back at older texts.
    pub(super) versions: BTreeSet<String>,
}

impl ByDefinition {
    /// `commits`: the chain's commits that changed `path` (the path at the final checkpoint),
    /// oldest first, with their stage and the file's path in each.
    pub(super) fn read(
        dir: &Path,
        path: &str,
        commits: &[Touch],
        final_bytes: Option<Vec<u8>>,
        n: usize,
        keep: &BTreeSet<NodeId>,
    ) -> Result<ByDefinition, String> {
        let language = Language::from_path(Path::new(path)).ok_or("carve does not index this kind of file")?;
        let final_text = final_bytes
            .map(|b| String::from_utf8(b).map_err(|_| "the final file is not UTF-8".to_string()))
            .transpose()?;
        let final_defs = match &final_text {
            Some(text) => definitions_of(path, text.as_bytes()),
            None => BTreeMap::new(),
        };
        let final_imports = final_text.as_ref().map(|t| imported_names(path, t.as_bytes())).unwrap_or_default();
        let mut imports: Vec<BTreeSet<ImportedKey>> = vec![BTreeSet::new(); n];
        let mut added = vec![BTreeSet::new(); n];
        let mut changed = vec![BTreeMap::new(); n];
        let mut created_by = None;
        let mut kept = BTreeSet::new();
        let mut versions = BTreeSet::new();
        for (i, Touch { stage: k, commit: c, path: old }) in commits.iter().enumerate() {
            let before = git(dir, &["show", &format!("{}:{old}", parent(dir, c))], None).ok();
            let after = git(dir, &["show", &format!("{c}:{old}")], None).ok();
            for text in before.iter().chain(&after) {
                versions.insert(String::from_utf8_lossy(text).into_owned());
            }
            if i == 0 && before.is_none() {
                created_by = Some(*k);
            }
            // Ids name the file by its final path, wherever it was then.
            let imported_before = before.as_ref().map(|b| imported_names(path, b)).unwrap_or_default();
            let imported_after = after.as_ref().map(|b| imported_names(path, b)).unwrap_or_default();
            for key in imported_after.difference(&imported_before) {
                if final_imports.contains(key) && !imports.iter().any(|s| s.contains(key)) {
                    imports[*k].insert(key.clone());
                }
            }
            let before = before.map(|b| definitions_of(path, &b)).unwrap_or_default();
            let after = after.map(|b| definitions_of(path, &b)).unwrap_or_default();
            for (id, text) in &after {
                if !final_defs.contains_key(id) {
                    continue;
                }
                if keep.contains(id) {
                    kept.insert(id.clone());
                    continue;
                }
                match before.get(id) {
                    None => {
                        added[*k].insert(id.clone());
                    }
                    // The first commit of the stage that changed it holds its text before the stage.
                    // A class whose members alone changed is not changed itself: its members
                    // are, and the others keep the edits later commits made to them.
                    Some(old)
                        if old != text && !added[*k].contains(id) && own_text(id, &before) != own_text(id, &after) =>
                    {
                        changed[*k].entry(id.clone()).or_insert_with(|| old.clone());
                    }
                    Some(_) => {}
                }
            }
        }
        if created_by.is_none()
            && added.iter().all(BTreeSet::is_empty)
            && changed.iter().all(BTreeMap::is_empty)
            && imports.iter().all(BTreeSet::is_empty)
        {
            return Err("the stages add or change no definition or imported name the final file still has".into());
        }
        Ok(ByDefinition {
            path: path.to_string(),
            language,
            final_text,
            added,
            changed,
            imports,
            created_by,
            kept,
            versions,
        })
    }

    /// Write the file as at state `j` into the work tree of `dir`.
    pub(super) fn write(&self, dir: &Path, j: usize) -> Result<(), String> {
        let p = dir.join(&self.path);
        let text = match (&self.final_text, self.created_by) {
            (Some(text), created) if created.is_none_or(|c| j > c) => Some(self.at(text, j)?),
            _ => None,
        };
        match text {
            Some(text) => {
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
                }
                std::fs::write(&p, text).map_err(|e| format!("write {}: {e}", p.display()))
            }
            None => match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("remove {}: {e}", p.display())),
                _ => Ok(()),
            },
        }
    }

    /// The final text as at state `j`: what stages `j` … added deleted, what they changed as
    /// it was before them, the names they added to its imports taken out.
    pub(super) fn at(&self, text: &str, j: usize) -> Result<String, String> {
        let state = self.definitions_at(text, j)?;
        let state = self.without_later_imports(state, j)?;
        if state == text {
            return Ok(state);
        }
        self.with_matching_imports(state)
    }

    /// `text` with its imports made to match what it uses (a definition back at an older
    /// text may use a package the final file no longer imports, or no longer use one it
    /// does: Go builds with neither), by what the file's other versions import.
    fn with_matching_imports(&self, text: String) -> Result<String, String> {
        let others: Vec<&str> = self.versions.iter().map(String::as_str).collect();
        let edits = carve_languages::reconcile_imports(self.language, &text, &self.path, &others)
            .map_err(|e| format!("matching the imports of {} to its definitions: {e}", self.path))?;
        carve_languages::edit::apply(&text, &edits)
            .map_err(|e| format!("matching the imports of {} to its definitions: {e}", self.path))
    }

    /// `text` without the names stages `j` … added to its module-level imports.
    fn without_later_imports(&self, text: String, j: usize) -> Result<String, String> {
        let later = j.min(self.imports.len());
        let drop: BTreeSet<ImportedKey> = self.imports[later..].iter().flatten().cloned().collect();
        if drop.is_empty() {
            return Ok(text);
        }
        let index = DefinitionIndex::from_sources(&[(self.path.clone(), text.as_bytes().to_vec())]);
        let file = index.files.get(&self.path).ok_or("the file does not parse once its definitions are as before")?;
        let edits = carve_languages::drop_imported_names(self.language, &text, file, &drop)
            .map_err(|e| format!("taking later stages' imports out of {}: {e}", self.path))?;
        carve_languages::edit::apply(&text, &edits)
            .map_err(|e| format!("taking later stages' imports out of {}: {e}", self.path))
    }

    /// [`ByDefinition::at`] for the definitions alone.
    fn definitions_at(&self, text: &str, j: usize) -> Result<String, String> {
        let later = j.min(self.added.len());
        let mut remove: BTreeSet<NodeId> = self.added[later..].iter().flatten().cloned().collect();
        // Earliest stage first, so its text before the stage wins.
        let mut old: BTreeMap<&NodeId, &String> = BTreeMap::new();
        for stage in &self.changed[later..] {
            for (id, t) in stage {
                if !remove.contains(id) {
                    old.entry(id).or_insert(t);
                }
            }
        }
        if remove.is_empty() && old.is_empty() {
            return Ok(text.to_string());
        }
        let index = DefinitionIndex::from_sources(&[(self.path.clone(), text.as_bytes().to_vec())]);
        if !index.files.contains_key(&self.path) {
            return Err("the final file does not parse".into());
        }
        // Outermost replacements only (a changed method inside a changed class goes with the
        // class), and no deletion inside a replaced definition.
        let mut spans: Vec<(usize, usize, &String)> = old
            .iter()
            .filter_map(|(id, t)| index.definitions.get(*id).map(|d| (d.span.start_byte, d.span.end_byte, *t)))
            .collect();
        spans.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        let mut outer: Vec<(usize, usize, &String)> = Vec::new();
        for sp in spans {
            if !outer.iter().any(|o| o.0 <= sp.0 && sp.1 <= o.1) {
                outer.push(sp);
            }
        }
        remove.retain(|id| {
            index
                .definitions
                .get(id)
                .is_none_or(|d| !outer.iter().any(|o| o.0 <= d.span.start_byte && d.span.end_byte <= o.1))
        });
        // Replacements first, then the deletions on the replaced text (re-indexed), so the
        // masking's own edits (blank lines, imports, export lists) never overlap a replacement.
        let mut replaced: Vec<carve_languages::Edit> = outer
            .into_iter()
            .map(|(start, end, t)| carve_languages::Edit {
                position: start,
                deleted_length: end - start,
                inserted_text: t.clone(),
            })
            .collect();
        replaced.sort_by_key(|e| e.position);
        let text = carve_languages::edit::apply(text, &replaced)
            .map_err(|e| format!("rewriting {} per definition: {e}", self.path))?;
        if remove.is_empty() {
            return Ok(text);
        }
        let index = DefinitionIndex::from_sources(&[(self.path.clone(), text.as_bytes().to_vec())]);
        let file =
            index.files.get(&self.path).ok_or("the file does not parse once its changed definitions are back")?;
        let edits = carve_languages::mask_file(self.language, &text, file, &index, &remove, &BTreeSet::new())
            .map_err(|e| format!("masking {}: {e}", self.path))?;
        carve_languages::edit::apply(&text, &edits).map_err(|e| format!("masking {} per definition: {e}", self.path))
    }

    pub(super) fn summary(self) -> DefinitionLevelFile {
        let mut file = DefinitionLevelFile::new(
            self.path,
            self.added.into_iter().map(|s| s.into_iter().collect()).collect(),
            self.changed.into_iter().map(|m| m.into_keys().collect()).collect(),
            self.created_by,
        );
        file.imports = if self.imports.iter().all(BTreeSet::is_empty) {
            Vec::new()
        } else {
            self.imports
                .into_iter()
                .map(|s| {
                    s.into_iter()
                        .map(|(module, name, alias)| match alias {
                            Some(a) => format!("{module}: {name} as {a}"),
                            None => format!("{module}: {name}"),
                        })
                        .collect()
                })
                .collect()
        };
        file.kept = self.kept.into_iter().collect();
        file
    }
}

/// The definitions of one file with their text.
fn definitions_of(path: &str, bytes: &[u8]) -> BTreeMap<NodeId, String> {
    let index = DefinitionIndex::from_sources(&[(path.to_string(), bytes.to_vec())]);
    let Some(file) = index.files.get(path) else { return BTreeMap::new() };
    file.definitions
        .iter()
        .filter_map(|id| index.definitions.get(id).map(|d| (id, d)))
        .map(|(id, d)| {
            let (start, end) = (d.span.start_byte.min(bytes.len()), d.span.end_byte.min(bytes.len()));
            (id.clone(), String::from_utf8_lossy(&bytes[start..end]).into_owned())
        })
        .collect()
}

/// A definition's text without its members' texts (ids `<id>.<name>`) and with its white
/// space collapsed: what differs between two versions when the definition itself changed,
/// not only a method of it (or the blank lines around one).
fn own_text(id: &NodeId, defs: &BTreeMap<NodeId, String>) -> String {
    let Some(text) = defs.get(id) else { return String::new() };
    let mut text = text.clone();
    let prefix = format!("{id}.");
    for (_, member) in defs.range(prefix.clone()..).take_while(|(m, _)| m.starts_with(&prefix)) {
        if let Some(i) = text.find(member.as_str()) {
            text.replace_range(i..i + member.len(), "");
        }
    }
    // The blank lines between members are not the definition's own.
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The names one file's module-level imports bind.
fn imported_names(path: &str, bytes: &[u8]) -> BTreeSet<ImportedKey> {
    let index = DefinitionIndex::from_sources(&[(path.to_string(), bytes.to_vec())]);
    index.files.get(path).map(|f| f.imports.iter().flat_map(|i| i.keys()).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (python-semver's 10-stage `build` chain): a later stage added `from
    /// __future__ import print_function` to `semver.py`, a file made per definition; taking it
    /// out of the earlier states with the stage's other imports failed ("import statement at
    /// semver.py:4 was not found") and dropped the chain. A directive binds no name an
    /// earlier state lacks, and definitions kept at their final text may need it: it stays.
    #[test]
    fn a_future_import_is_not_a_name_a_later_stage_added() {
        let text = b"from __future__ import annotations\n\nfrom .exceptions import JSONDecodeError\n";
        let names = imported_names("pkg/models.py", text);
        let want: BTreeSet<ImportedKey> = [(".exceptions".to_string(), "JSONDecodeError".to_string(), None)].into();
        assert_eq!(names, want);
    }
}
