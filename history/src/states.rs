//! Reference states (FeatureArc III-C). The file patches of a chain's commits are labelled by
//! role (feature code, tests, other files such as docs), the chain's patches are removed from
//! the final checkpoint in reverse order (a three-way reverse apply, so unrelated commits in
//! between stay as shared context) to get S0, and re-applied in order to get S1 … Sn. A code
//! or test file whose patch does not come off (a later commit rewrote lines a stage added), or
//! does not re-apply to the final text (a later commit undid part of a stage's change), is
//! made per definition: each state holds the final file without the definitions later stages
//! added.
//!
//! The work happens in a scratch clone that shares the repository's objects (`git clone
//! --shared`); the user's repository is only read. Each state is committed there, so the
//! bundle's patches are plain `git diff`s between states.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use carve_languages::is_test_path;
use carve_languages::{DefinitionIndex, ImportedKey, Language, NodeId};

use crate::HistoryError;

/// The role of one file of a stage's historical patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Source code of the feature or a dependency it needs.
    Code,
    /// Test code (hidden from the agent; the stage gate overlays it).
    Test,
    /// Any other file (docs, configuration, data): part of the stage patch so that docs are at
    /// their pre-feature state in S0.
    Other,
}

pub fn role(language: Language, path: &str) -> Role {
    match Language::from_path(Path::new(path)) {
        Some(l) if is_test_path(l, path) || is_test_path(language, path) => Role::Test,
        Some(_) => Role::Code,
        None if is_test_path(language, path) => Role::Test,
        None => Role::Other,
    }
}

/// A scratch clone holding the reference states as commits `S0` … `Sn`.
pub struct States {
    pub dir: PathBuf,
    /// The repository the states were made from (its installed dependencies are linked into
    /// exported states).
    pub repo: PathBuf,
    /// Commit ids of S0 … Sn in the scratch clone.
    pub states: Vec<String>,
    pub final_commit: String,
    /// Non-code files of the chain's commits left at their final content (their removal
    /// conflicted with a later commit).
    pub shared: Vec<SharedContext>,
    /// Code and test files made per definition (their historical patches did not come off).
    pub by_definition: Vec<DefinitionLevelFile>,
    /// Source files with tests inside (Rust's `#[cfg(test)]` modules and `#[test]` functions)
    /// whose tests differ between states: per state S_0 … S_n, the file's test part
    /// ([`carve_languages::InlineTests::tests_only`]; empty when it has none or there is no
    /// file). Set by [`States::split_inline_tests`].
    pub inline: BTreeMap<String, Vec<String>>,
    /// The code states W_0 … W_n in the scratch clone: S_k with the tests of every
    /// [`States::inline`] file as at S_0, so that W_k → W_(k+1) is the stage's code alone
    /// (W_0 = S_0). Equal to `states` when no file has inline tests that change.
    pub code_states: Vec<String>,
    pub language: Language,
    /// The commits of each stage (for messages that name a state by its commit).
    pub stage_commits: Vec<Vec<String>>,
    /// Repository files pulled into states that imported them before a later state had them
    /// ([`States::pull_imported_files`]).
    pub pulled: Vec<PulledFile>,
    /// Files the chain's commits changed that a later commit moved: path then → path at the
    /// final checkpoint.
    pub moved: BTreeMap<String, String>,
}

/// A repository file pulled into states that import it before the stage that created it
/// (`chain.json` `pulled_files`, typed in `carve_formats::chain`).
pub use carve_formats::chain::PulledFile;

/// The files of a state commit.
fn tree_files(dir: &Path, commit: &str) -> Result<BTreeSet<String>, String> {
    let out = git(dir, &["ls-tree", "-r", "-z", "--name-only", commit], None)?;
    Ok(String::from_utf8_lossy(&out).split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect())
}

/// `commit` with `path` set to `bytes`, as a new state commit.
fn with_file(
    dir: &Path,
    commit: &str,
    path: &str,
    bytes: &[u8],
    label: &str,
    modes: &BTreeMap<String, String>,
) -> Result<String, String> {
    git(dir, &["checkout", "-q", "--detach", commit], None)?;
    let p = dir.join(path);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
    }
    std::fs::write(&p, bytes).map_err(|e| format!("write {}: {e}", p.display()))?;
    commit_state(dir, label, modes)
}

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
struct ByDefinition {
    path: String,
    language: Language,
    /// The file at the final checkpoint (`None`: absent there).
    final_text: Option<String>,
    /// Per stage, the definitions its commits added to the file that the final file still has.
    added: Vec<BTreeSet<NodeId>>,
    /// Per stage, the definitions its commits changed that the final file still has, with
    /// their text before the stage.
    changed: Vec<BTreeMap<NodeId, String>>,
    /// Per stage, the names its commits added to the file's module-level imports that the
    /// final file still imports (and no earlier stage added).
    imports: Vec<BTreeSet<ImportedKey>>,
    /// The stage whose commit created the file (absent before it).
    created_by: Option<usize>,
    /// Definitions a stage added or changed that stay at their final text in every state,
    /// because a state did not build without them (the caller's `keep`).
    kept: BTreeSet<NodeId>,
}

/// What [`States::build`] made per definition, for the bundle (`chain.json` `by_definition`,
/// typed in `carve_formats::chain`).
pub use carve_formats::chain::DefinitionLevelFile;

impl ByDefinition {
    /// `commits`: the chain's commits that changed `path` (the path at the final checkpoint),
    /// oldest first, with their stage and the file's path in each.
    fn read(
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
        for (i, Touch { stage: k, commit: c, path: old }) in commits.iter().enumerate() {
            let before = git(dir, &["show", &format!("{}:{old}", parent(dir, c))], None).ok();
            let after = git(dir, &["show", &format!("{c}:{old}")], None).ok();
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
        Ok(ByDefinition { path: path.to_string(), language, final_text, added, changed, imports, created_by, kept })
    }

    /// Write the file as at state `j` into the work tree of `dir`.
    fn write(&self, dir: &Path, j: usize) -> Result<(), String> {
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
    fn at(&self, text: &str, j: usize) -> Result<String, String> {
        let text = self.definitions_at(text, j)?;
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

    fn summary(self) -> DefinitionLevelFile {
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

/// One file of a chain commit left as shared context instead of being removed for S0
/// (`chain.json` `shared_context`, typed in `carve_formats::chain`).
pub use carve_formats::chain::SharedContext;

/// Why one file's patch did not come off, with the file as it was before the attempt.
struct RemoveFailure {
    message: String,
    saved: Option<Vec<u8>>,
}

pub(crate) fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "carve")
        .env("GIT_AUTHOR_EMAIL", "carve@carve.invalid")
        .env("GIT_COMMITTER_NAME", "carve")
        .env("GIT_COMMITTER_EMAIL", "carve@carve.invalid")
        .env("GIT_AUTHOR_DATE", "1704067200 +0000")
        .env("GIT_COMMITTER_DATE", "1704067200 +0000")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("could not run `git {}`: {e}; install git", args.join(" ")))?;
    if let Some(input) = stdin {
        use std::io::Write;
        let mut sin = child.stdin.take().ok_or("no stdin")?;
        sin.write_all(input).map_err(|e| format!("writing to `git {}`: {e}", args.join(" ")))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("`git {}`: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!("`git {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(out.stdout)
}

pub(crate) fn git_text(dir: &Path, args: &[&str]) -> Result<String, String> {
    git(dir, args, None).map(|o| String::from_utf8_lossy(&o).trim().to_string())
}

/// git's empty tree: the "parent" of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The first parent of `commit`, or the empty tree for a root commit (a chain may start at
/// the repository's first commit).
fn parent(dir: &Path, commit: &str) -> String {
    let first = format!("{commit}^1");
    match git(dir, &["rev-parse", "--verify", "--quiet", &first], None) {
        Ok(_) => first,
        Err(_) => EMPTY_TREE.to_string(),
    }
}

/// The historical patch of `commit` against its first parent, restricted to `paths` (all
/// when empty) and without `exclude`.
fn commit_patch(dir: &Path, commit: &str, paths: &[String], exclude: &[String]) -> Result<Vec<u8>, String> {
    let range = parent(dir, commit);
    let mut args = vec!["diff", "--binary", "--no-renames", "--full-index", range.as_str(), commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    let specs: Vec<String> = exclude.iter().map(|p| format!(":(exclude,literal){p}")).collect();
    if paths.is_empty() && !specs.is_empty() {
        args.push(".");
    }
    args.extend(specs.iter().map(String::as_str));
    git(dir, &args, None)
}

/// The files `commit` changed against its first parent, sorted.
fn commit_files(dir: &Path, commit: &str) -> Result<Vec<String>, String> {
    let range = parent(dir, commit);
    let out = git_text(dir, &["diff", "--name-only", "--no-renames", "-z", range.as_str(), commit])?;
    let mut files: Vec<String> = out.split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect();
    files.sort();
    Ok(files)
}

/// The files `commit` changed that a later commit moved: path in `commit` → path at
/// `final_commit` (git's rename detection between the two trees: psf/requests moved
/// `requests/` to `src/requests/` between a chain's stages and its final checkpoint). Paths
/// the final checkpoint still has are never moved.
fn moved_since(dir: &Path, commit: &str, final_commit: &str) -> Result<BTreeMap<String, String>, String> {
    let out = git(dir, &["diff", "--name-status", "-z", "-M", "--diff-filter=R", commit, final_commit], None)?;
    let out = String::from_utf8_lossy(&out);
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    let mut moved = BTreeMap::new();
    while let (Some(status), Some(old), Some(new)) = (fields.next(), fields.next(), fields.next()) {
        if status.starts_with('R') {
            moved.insert(old.to_string(), new.to_string());
        }
    }
    Ok(moved)
}

/// `commit`'s historical patch of `old`, written as a patch of `new` (where a later commit
/// moved the file), so that it applies to the final checkpoint's tree. git names a path in a
/// patch's header lines only (`diff --git`, `---`, `+++`); a path git quotes is refused.
fn moved_patch(dir: &Path, commit: &str, old: &str, new: &str) -> Result<Vec<u8>, String> {
    let patch = commit_patch(dir, commit, &[format!(":(literal){old}")], &[])?;
    let text = String::from_utf8(patch).map_err(|_| format!("the patch of {old} in {commit} is binary"))?;
    let mut out = String::with_capacity(text.len());
    let mut header = true;
    for line in text.split_inclusive('\n') {
        if line.starts_with("@@") || line.starts_with("GIT binary patch") {
            header = false;
        }
        if header {
            let renamed = if line == format!("diff --git a/{old} b/{old}\n") {
                Some(format!("diff --git a/{new} b/{new}\n"))
            } else if line == format!("--- a/{old}\n") {
                Some(format!("--- a/{new}\n"))
            } else if line == format!("+++ b/{old}\n") {
                Some(format!("+++ b/{new}\n"))
            } else if line.starts_with("diff --git ") || line.starts_with("--- ") || line.starts_with("+++ ") {
                (line.starts_with("--- /dev/null") || line.starts_with("+++ /dev/null")).then(|| line.to_string())
            } else {
                Some(line.to_string())
            };
            let Some(renamed) = renamed else {
                return Err(format!("the patch of {old} in {commit} names it in a form carve cannot rewrite: {line}"));
            };
            out.push_str(&renamed);
        } else {
            out.push_str(line);
        }
    }
    Ok(out.into_bytes())
}

/// Where one chain commit changed one file: the stage, the commit, the path in that commit
/// (the path at the final checkpoint may differ, when a later commit moved the file).
#[derive(Debug, Clone)]
struct Touch {
    stage: usize,
    commit: String,
    path: String,
}

/// Reverse-apply `commit`'s patch to `path` (three-way, so unrelated later edits stay); `old`
/// is the file's path in `commit` when a later commit moved it.
fn remove_file_patch(dir: &Path, commit: &str, path: &str, old: &str) -> Result<(), RemoveFailure> {
    let saved = std::fs::read(dir.join(path)).ok();
    let fail = |message: String| RemoveFailure { message, saved: saved.clone() };
    let patch = if old == path {
        commit_patch(dir, commit, &[format!(":(literal){path}")], &[]).map_err(&fail)?
    } else {
        moved_patch(dir, commit, old, path).map_err(&fail)?
    };
    if patch.is_empty() {
        return Ok(());
    }
    git(dir, &["apply", "--3way", "-R", "--whitespace=nowarn", "-"], Some(&patch)).map_err(&fail)?;
    // A three-way apply can leave the index with conflict stages: refuse those.
    let unmerged = git_text(dir, &["diff", "--name-only", "--diff-filter=U"]).map_err(&fail)?;
    if !unmerged.is_empty() {
        return Err(fail(format!("removing it conflicts in {unmerged}")));
    }
    Ok(())
}

/// Why re-applying the chain commits' patches to `path` (oldest first, without those in `kept`,
/// whose change stays) onto the work tree, where they have all come off, does not give back
/// the final file (`None`: it does). A reverse apply can succeed where the forward one does
/// not undo it: when a later commit reverted part of a stage's change (unjs/ufo: #120 made
/// `port` a number, the next commit made it a string again), removing the stage leaves that
/// part as it is, and re-applying the stage would bring back what the later commit undid.
/// The work tree is left as it was.
fn reapply_differs(
    dir: &Path,
    path: &str,
    commits: &[Touch],
    kept: &BTreeSet<String>,
    final_bytes: Option<&[u8]>,
) -> Result<Option<String>, String> {
    let saved = std::fs::read(dir.join(path)).ok();
    let mut problem = None;
    for Touch { stage: k, commit: c, path: old } in commits.iter().filter(|t| !kept.contains(&t.commit)) {
        let patch = if old == path {
            commit_patch(dir, c, &[format!(":(literal){path}")], &[])?
        } else {
            moved_patch(dir, c, old, path)?
        };
        if patch.is_empty() {
            continue;
        }
        let applied = git(dir, &["apply", "--3way", "--whitespace=nowarn", "-"], Some(&patch));
        let unmerged = git_text(dir, &["diff", "--name-only", "--diff-filter=U"])?;
        if let Err(e) = applied.and_then(|_| if unmerged.is_empty() { Ok(()) } else { Err("conflicts".into()) }) {
            let e = e.lines().next().unwrap_or_default().to_string();
            problem = Some(format!("stage {k}'s change comes off, but re-applying {} does not: {e}", &c[..8]));
            break;
        }
    }
    if problem.is_none() && std::fs::read(dir.join(path)).ok().as_deref() != final_bytes {
        problem = Some(
            "its chain changes come off, but re-applying them does not give back the final file (a later commit \
             undid part of them)"
                .to_string(),
        );
    }
    restore(dir, path, saved)?;
    Ok(problem)
}

/// Put `path` back as it was before a failed removal (`None`: absent) and resolve its index entry.
fn restore(dir: &Path, path: &str, saved: Option<Vec<u8>>) -> Result<(), String> {
    let p = dir.join(path);
    let spec = format!(":(literal){path}");
    match saved {
        Some(bytes) => {
            // Its folder may be gone (a re-applied commit deleted the folder's last file).
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
            }
            std::fs::write(&p, bytes).map_err(|e| format!("restore {}: {e}", p.display()))?;
            git(dir, &["add", "-A", "--", &spec], None).map(|_| ())
        }
        None => {
            let _ = std::fs::remove_file(&p);
            git(dir, &["rm", "-q", "--cached", "--ignore-unmatch", "--", &spec], None).map(|_| ())
        }
    }
}

/// `path -> 100644 | 100755` of the regular files of `commit`.
fn regular_modes(dir: &Path, commit: &str) -> Result<BTreeMap<String, String>, String> {
    let out = git(dir, &["ls-tree", "-r", "-z", commit], None)?;
    Ok(String::from_utf8_lossy(&out)
        .split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            let mode = meta.split(' ').next()?;
            matches!(mode, "100644" | "100755").then(|| (path.to_string(), mode.to_string()))
        })
        .collect())
}

fn commit_state(dir: &Path, label: &str, modes: &BTreeMap<String, String>) -> Result<String, String> {
    git(dir, &["add", "-A"], None)?;
    let staged = git(dir, &["ls-files", "-s", "-z"], None)?;
    for entry in String::from_utf8_lossy(&staged).split('\0') {
        let Some((meta, path)) = entry.split_once('\t') else { continue };
        let mode = meta.split(' ').next().unwrap_or_default();
        match modes.get(path) {
            Some(want) if matches!(mode, "100644" | "100755") && mode != want => {
                let flag = if want == "100755" { "--chmod=+x" } else { "--chmod=-x" };
                git(dir, &["update-index", flag, "--", path], None)?;
                // The work tree too, or the next `git apply --3way` finds it does not match the index.
                use std::os::unix::fs::PermissionsExt;
                let perms = std::fs::Permissions::from_mode(if want == "100755" { 0o755 } else { 0o644 });
                std::fs::set_permissions(dir.join(path), perms).map_err(|e| format!("chmod {path}: {e}"))?;
            }
            _ => {}
        }
    }
    git(dir, &["commit", "-q", "--allow-empty", "--no-verify", "-m", label], None)?;
    git_text(dir, &["rev-parse", "HEAD"])
}

impl States {
    /// Build S0 … Sn for the stages (`stages[k]` = the commits of stage k) in a scratch clone
    /// of `repo` under `scratch`. Errors name the stage and file whose patch does not apply.
    pub fn build(
        repo: &Path,
        scratch: &Path,
        final_commit: &str,
        stages: &[Vec<String>],
        language: Language,
        keep: &BTreeSet<NodeId>,
    ) -> Result<States, HistoryError> {
        let err = |message: String| HistoryError::Build { chain: final_commit.to_string(), message };
        let dir = scratch.join("states");
        // git runs in `scratch`: a relative repository path (`carve arc build .`) must not be
        // read from there.
        let repo =
            repo.canonicalize().map_err(|e| err(format!("the repository {} cannot be read: {e}", repo.display())))?;
        let repo_s = repo.to_string_lossy().to_string();
        let dir_s = dir.to_string_lossy().to_string();
        git(scratch, &["clone", "-q", "--shared", "--no-checkout", &repo_s, &dir_s], None).map_err(err)?;
        git(&dir, &["checkout", "-q", "--detach", final_commit], None).map_err(err)?;
        // Modes come from the final checkpoint: a historical patch's mode (a file that was 100755
        // then) must not flip the states' modes, and S_n must equal the final checkpoint.
        let modes = regular_modes(&dir, final_commit).map_err(err)?;
        // Remove the chain's patches file by file, newest first: a non-code file whose removal
        // conflicts (release notes a later commit rewrote) stays as shared context; a code or
        // test file whose removal conflicts (a later commit rewrote lines a stage added) is
        // made per definition instead (see [`ByDefinition`]). Files are named by their path at
        // the final checkpoint: a file a later commit moved is followed there (`moves`).
        let mut touched: BTreeMap<String, Vec<Touch>> = BTreeMap::new();
        let mut moves: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (k, commits) in stages.iter().enumerate() {
            for c in commits {
                let mut moved = moved_since(&dir, c, final_commit).map_err(err)?;
                let files = commit_files(&dir, c).map_err(err)?;
                moved.retain(|old, _| files.contains(old));
                for path in files {
                    let at_final = moved.get(&path).cloned().unwrap_or_else(|| path.clone());
                    touched.entry(at_final).or_default().push(Touch { stage: k, commit: c.clone(), path });
                }
                moves.insert(c.clone(), moved);
            }
        }
        let mut shared = Vec::new();
        let mut by_definition = Vec::new();
        for (path, commits) in &touched {
            let final_bytes = std::fs::read(dir.join(path)).ok();
            let first = &commits[0];
            let name = path.rsplit('/').next().unwrap_or(path);
            let created =
                git(&dir, &["cat-file", "-e", &format!("{}:{}", parent(&dir, &first.commit), first.path)], None)
                    .is_err();
            if created && carve_languages::is_project_file(name) && final_bytes.is_some() {
                // Every chain commit's change to it stays, so none is re-applied onto it.
                shared.extend(commits.iter().map(|t| {
                    SharedContext::new(
                        t.stage,
                        t.commit.clone(),
                        path.clone(),
                        "the chain created this build manifest; without it no state would build, so it stays \
                             at its final content"
                            .into(),
                    )
                }));
                continue;
            }
            // A code or test file's first conflict (newest first): stage, message.
            let mut conflict: Option<(usize, String)> = None;
            for Touch { stage: k, commit: c, path: old } in commits.iter().rev() {
                match remove_file_patch(&dir, c, path, old) {
                    Ok(()) => {}
                    Err(reason) if role(language, path) == Role::Other => {
                        restore(&dir, path, reason.saved).map_err(err)?;
                        shared.push(SharedContext::new(
                            *k,
                            c.clone(),
                            path.clone(),
                            format!(
                                "removing this commit's change conflicts with a later commit; the file is not \
                                 code or tests, so it stays at its final content: {}",
                                reason.message
                            ),
                        ));
                    }
                    Err(reason) => {
                        conflict = Some((*k, reason.message));
                        break;
                    }
                }
            }
            if conflict.is_none() {
                let kept: BTreeSet<String> =
                    shared.iter().filter(|s| &s.path == path).map(|s| s.commit.clone()).collect();
                if let Some(problem) =
                    reapply_differs(&dir, path, commits, &kept, final_bytes.as_deref()).map_err(err)?
                {
                    if role(language, path) == Role::Other {
                        // Every chain commit's change to it stays (the file at its final content).
                        let spec = format!(":(literal){path}");
                        match &final_bytes {
                            Some(_) => git(&dir, &["checkout", "-q", final_commit, "--", &spec], None).map(|_| ()),
                            None => restore(&dir, path, None),
                        }
                        .map_err(err)?;
                        shared.extend(commits.iter().filter(|t| !kept.contains(&t.commit)).map(|t| {
                            SharedContext::new(
                                t.stage,
                                t.commit.clone(),
                                path.clone(),
                                format!("{problem}; the file is not code or tests, so it stays at its final content"),
                            )
                        }));
                    } else {
                        conflict = Some((commits[0].stage, problem));
                    }
                }
            }
            if let Some((k, message)) = conflict {
                // Back to the final file, mode included (a failed apply may have changed it).
                if final_bytes.is_some() {
                    let spec = format!(":(literal){path}");
                    git(&dir, &["checkout", "-q", final_commit, "--", &spec], None).map_err(err)?;
                } else {
                    restore(&dir, path, None).map_err(err)?;
                }
                match ByDefinition::read(&dir, path, commits, final_bytes.clone(), stages.len(), keep) {
                    Ok(file) => by_definition.push(file),
                    // Nothing the stages did to it is a definition (an export list, a
                    // top-level call): the file stays at its final content, as shared context.
                    // Every chain commit's change to it stays (none came off).
                    Err(e) => shared.extend(commits.iter().map(|t| {
                        SharedContext::new(
                            t.stage,
                            t.commit.clone(),
                            path.clone(),
                            format!(
                                "removing stage {k}'s change conflicts with a later commit ({}), and the file cannot \
                             be made per definition ({e}), so it stays at its final content",
                                message.lines().next().unwrap_or_default()
                            ),
                        )
                    })),
                }
            }
        }
        for file in &by_definition {
            file.write(&dir, 0).map_err(err)?;
        }
        let mut states = vec![commit_state(&dir, "S0", &modes).map_err(err)?];
        for (k, commits) in stages.iter().enumerate() {
            for c in commits {
                // Paths at the final checkpoint that stay out of the re-applied patch.
                let skip: BTreeSet<&String> = shared
                    .iter()
                    .filter(|s| &s.commit == c)
                    .map(|s| &s.path)
                    .chain(by_definition.iter().map(|f| &f.path))
                    .collect();
                let moved = &moves[c];
                // Moved files are left out of the commit's patch and added as patches of
                // their final path.
                let mut exclude: Vec<String> = skip.iter().map(|p| p.to_string()).collect();
                exclude.extend(moved.keys().cloned());
                let mut patch = commit_patch(&dir, c, &[], &exclude).map_err(err)?;
                for (old, new) in moved {
                    if !skip.contains(new) {
                        patch.extend(moved_patch(&dir, c, old, new).map_err(err)?);
                    }
                }
                if !patch.is_empty() {
                    git(&dir, &["apply", "--3way", "--whitespace=nowarn", "-"], Some(&patch)).map_err(|e| {
                        err(format!("stage {k}: the patch of {} does not re-apply onto S{k}: {e}", &c[..8]))
                    })?;
                }
            }
            for file in &by_definition {
                file.write(&dir, k + 1).map_err(err)?;
            }
            states.push(commit_state(&dir, &format!("S{}", k + 1), &modes).map_err(err)?);
        }
        // Sn must be the final checkpoint again.
        let diff =
            git_text(&dir, &["diff", "--name-only", final_commit, states.last().map_or("HEAD", |s| s)]).map_err(err)?;
        if !diff.is_empty() {
            return Err(err(format!("re-applying the stages does not give back the final checkpoint: {diff} differ")));
        }
        shared.sort_by(|a, b| (a.stage, &a.path, &a.commit).cmp(&(b.stage, &b.path, &b.commit)));
        let by_definition = by_definition.into_iter().map(|f| f.summary()).collect();
        let code_states = states.clone();
        Ok(States {
            dir,
            repo,
            states,
            final_commit: final_commit.to_string(),
            shared,
            by_definition,
            inline: BTreeMap::new(),
            code_states,
            language,
            stage_commits: stages.to_vec(),
            pulled: Vec::new(),
            moved: moves.into_values().flatten().collect(),
        })
    }

    /// Repair of a state S_k that does not build: every repository file a file of S_k imports
    /// (carve's index resolves the import) that S_k lacks and a later state S_m has is pulled
    /// into S_k … S_(m-1) at its text at S_m (a kept per-definition file's final imports, or a
    /// file outside the chain that imports what a stage created). Returns the files pulled
    /// (none: the error is not a missing file). S_n, the final checkpoint, never changes.
    pub fn pull_imported_files(&mut self, k: usize, message: &str) -> Result<Vec<PulledFile>, String> {
        let n = self.states.len() - 1;
        if k >= n {
            return Ok(Vec::new());
        }
        let files: Vec<BTreeSet<String>> =
            self.states.iter().map(|s| tree_files(&self.dir, s)).collect::<Result<_, _>>()?;
        let later: BTreeSet<&String> = files[k + 1..].iter().flatten().filter(|p| !files[k].contains(*p)).collect();
        if later.is_empty() {
            return Ok(Vec::new());
        }
        let indexed = |p: &str| Language::from_path(Path::new(p)).is_some();
        let mut sources = Vec::new();
        for p in files[k].iter().filter(|p| indexed(p)) {
            sources.push((p.clone(), git(&self.dir, &["show", &format!("{}:{p}", self.states[k])], None)?));
        }
        // Placeholders, so that imports of what only later states have still resolve.
        sources.extend(later.iter().filter(|p| indexed(p)).map(|p| ((*p).clone(), Vec::new())));
        let index = DefinitionIndex::from_sources(&sources);
        let mut found: BTreeMap<String, String> = BTreeMap::new();
        for (path, file) in &index.files {
            if !files[k].contains(path) {
                continue;
            }
            for r in file.imports.iter().filter_map(|i| i.resolved_path.as_ref()) {
                if later.contains(r) {
                    found.entry(r.clone()).or_insert_with(|| path.clone());
                }
            }
        }
        let modes = regular_modes(&self.dir, &self.final_commit)?;
        let mut pulled = Vec::new();
        let first_line = message.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
        for (path, by) in found {
            let Some(m) = (k + 1..=n).find(|&m| files[m].contains(&path)) else { continue };
            let bytes = git(&self.dir, &["show", &format!("{}:{path}", self.states[m])], None)?;
            for s in k..m {
                let same = self.code_states[s] == self.states[s];
                self.states[s] = with_file(&self.dir, &self.states[s], &path, &bytes, &format!("S{s}"), &modes)?;
                self.code_states[s] = if same {
                    self.states[s].clone()
                } else {
                    with_file(&self.dir, &self.code_states[s], &path, &bytes, &format!("W{s}"), &modes)?
                };
            }
            let reason = format!(
                "S{k} did not pass the build check ({first_line}); {by} imports {path}, which S{k} lacks and S{m} \
                 has, so it comes with S{k} at its text at S{m}"
            );
            pulled.push(PulledFile::new(path, k, m, by, reason));
        }
        self.pulled.extend(pulled.iter().cloned());
        Ok(pulled)
    }

    /// Split the inline tests off the code (FeatureArc on Rust, where tests live in `src/`):
    /// every code file a stage changed whose inline tests differ between two states goes into
    /// [`States::inline`], and the code states W_k hold S_k's code with S_0's tests. A
    /// language without tests in its sources leaves the states as they are. An error names
    /// the file that cannot be split (it does not parse at some state).
    pub fn split_inline_tests(&mut self, language: Language) -> Result<(), String> {
        self.inline.clear();
        self.code_states = self.states.clone();
        if !carve_languages::support(language).facts().tests_in_sources {
            return Ok(());
        }
        let n = self.states.len() - 1;
        let mut paths = BTreeSet::new();
        for k in 0..n {
            paths.extend(self.changed_files(k, k + 1)?);
        }
        for path in paths {
            let Some(inline_tests) = carve_languages::inline_tests_of(&path) else { continue };
            if role(language, &path) != Role::Code {
                continue;
            }
            let mut parts = Vec::new();
            for j in 0..=n {
                let part = match self.file_at(j, &path) {
                    Some(bytes) => {
                        let text = String::from_utf8(bytes).map_err(|_| format!("{path} at S{j} is not UTF-8"))?;
                        inline_tests
                            .tests_only(&text)
                            .map_err(|e| format!("{path} at S{j} cannot be split into code and inline tests: {e}"))?
                    }
                    None => String::new(),
                };
                parts.push(part);
            }
            if parts.windows(2).any(|w| w[0] != w[1]) {
                self.inline.insert(path, parts);
            }
        }
        if self.inline.is_empty() {
            return Ok(());
        }
        let mut code_states = Vec::new();
        for j in 0..=n {
            git(&self.dir, &["checkout", "-q", "-f", "--detach", &self.states[j]], None)?;
            for (path, parts) in &self.inline {
                let Some(bytes) = self.file_at(j, path) else { continue };
                let text = String::from_utf8_lossy(&bytes);
                let split = carve_languages::inline_tests_of(path).ok_or_else(|| format!("{path}: no inline tests"))?;
                let joined = split
                    .with_tests_of(&text, &parts[0])
                    .map_err(|e| format!("{path}: S{j}'s code with S0's inline tests: {e}"))?;
                std::fs::write(self.dir.join(path), joined).map_err(|e| format!("write {path}: {e}"))?;
            }
            code_states.push(commit_state(&self.dir, &format!("W{j}"), &BTreeMap::new())?);
        }
        self.code_states = code_states;
        Ok(())
    }

    /// The test part of inline-test file `path` at state `k` (see [`States::inline`]).
    pub fn inline_tests_at(&self, k: usize, path: &str) -> Option<Option<Vec<u8>>> {
        self.inline.get(path).map(|parts| Some(parts[k].clone().into_bytes()))
    }

    /// A definition or test id of a chain commit (`path::Name`, as the history analysis names
    /// it) with its file's path at the final checkpoint, where the states have it.
    pub fn id_at_final(&self, id: &str) -> String {
        match id.split_once("::") {
            Some((path, rest)) if self.moved.contains_key(path) => format!("{}::{rest}", self.moved[path]),
            _ => id.to_string(),
        }
    }

    /// The first-parent commits up to the final checkpoint, oldest first.
    pub fn first_parent_order(&self) -> Result<Vec<String>, String> {
        let out = git_text(&self.dir, &["rev-list", "--first-parent", "--reverse", &self.final_commit])?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The files `commit` changed against its first parent.
    pub fn commit_files(&self, commit: &str) -> Result<Vec<String>, String> {
        commit_files(&self.dir, commit)
    }

    /// Files changed between two states, `(path, exists afterwards)`.
    pub fn changed_files(&self, from: usize, to: usize) -> Result<Vec<String>, String> {
        let out = git_text(&self.dir, &["diff", "--name-only", "--no-renames", &self.states[from], &self.states[to]])?;
        Ok(out.lines().map(str::to_string).filter(|l| !l.is_empty()).collect())
    }

    /// Unified diff between two states, restricted to `paths` (all when empty) or excluding
    /// `exclude`.
    pub fn diff(&self, from: &str, to: &str, exclude: &[String]) -> Result<Vec<u8>, String> {
        let mut args = vec!["diff", "--binary", "--no-renames", "--full-index", from, to, "--", "."];
        let specs: Vec<String> = exclude.iter().map(|p| format!(":(exclude){p}")).collect();
        args.extend(specs.iter().map(String::as_str));
        git(&self.dir, &args, None)
    }

    /// The bytes of `path` at state `k` (`None`: absent).
    pub fn file_at(&self, k: usize, path: &str) -> Option<Vec<u8>> {
        git(&self.dir, &["show", &format!("{}:{path}", self.states[k])], None).ok()
    }

    /// Write state `k` to the fresh directory `out` (no `.git`).
    pub fn export(&self, k: usize, out: &Path) -> Result<(), String> {
        self.export_commit(&self.states[k], k, out)
    }

    /// Write code state W_k (S_k with S_0's inline tests) to the fresh directory `out`.
    pub fn export_code(&self, k: usize, out: &Path) -> Result<(), String> {
        self.export_commit(&self.code_states[k], k, out)
    }

    fn export_commit(&self, commit: &str, k: usize, out: &Path) -> Result<(), String> {
        std::fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
        let tar = git(&self.dir, &["archive", "--format=tar", commit], None)?;
        let mut child = Command::new("tar")
            .args(["-x", "-f", "-", "-C"])
            .arg(out)
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run tar: {e}"))?;
        {
            use std::io::Write;
            child.stdin.take().ok_or("no stdin")?.write_all(&tar).map_err(|e| format!("tar: {e}"))?;
        }
        let st = child.wait().map_err(|e| format!("tar: {e}"))?;
        if !st.success() {
            return Err(format!("tar could not extract state S{k} into {}", out.display()));
        }
        crate::deps::provide(&self.repo, out, self.language, &self.state_name(k))?;
        lock_offline(out);
        Ok(())
    }

    /// State `k` named by the commit it follows, for messages: `S0 (before stage 0, 1a2b3c4d)`,
    /// `S2 (after stage 1, 5e6f7a8b)`.
    pub fn state_name(&self, k: usize) -> String {
        let short = |c: Option<&String>| c.map(|c| c[..c.len().min(8)].to_string()).unwrap_or_default();
        match k {
            0 => format!("S0 (before stage 0, {})", short(self.stage_commits.first().and_then(|c| c.first()))),
            _ => {
                format!("S{k} (after stage {}, {})", k - 1, short(self.stage_commits.get(k - 1).and_then(|c| c.last())))
            }
        }
    }

    /// Which dependency set each state S0 … Sn gets (see [`crate::deps`]), for `chain.json`:
    /// empty when the language installs none from a manifest or no state has one.
    pub fn dependencies(&self) -> Vec<crate::deps::StateDependencies> {
        (0..self.states.len())
            .filter_map(|k| {
                crate::deps::record(&self.repo, self.language, &format!("S{k}"), &|p: &str| self.file_at(k, p))
            })
            .collect()
    }
}

/// A state gets the lock files its language's runner needs where the project commits none
/// (a crate without `Cargo.lock`: see [`carve_languages::lock_offline`]).
pub(crate) use carve_languages::lock_offline;

#[cfg(test)]
mod tests {
    use super::*;

    /// An exported state whose manifest declares what the checkout's does (here: neither has
    /// one) gets the repository's installed `node_modules` as a link (git holds none, so
    /// vitest or tsc would not run there), and one it has of its own is left alone.
    #[test]
    fn exported_states_link_the_repositorys_installed_dependencies() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("node_modules/vitest")).unwrap();
        let out = tempfile::tempdir().unwrap();
        let provide = |repo: &Path, out: &Path| crate::deps::provide(repo, out, Language::TypeScript, "S0");
        provide(repo.path(), out.path()).unwrap();
        let link = out.path().join("node_modules");
        assert_eq!(std::fs::read_link(&link).unwrap(), repo.path().join("node_modules"));
        assert!(link.join("vitest").is_dir());
        let own = tempfile::tempdir().unwrap();
        std::fs::create_dir(own.path().join("node_modules")).unwrap();
        provide(repo.path(), own.path()).unwrap();
        assert!(!own.path().join("node_modules").is_symlink(), "a state's own folder stays");
        let none = tempfile::tempdir().unwrap();
        let fresh = tempfile::tempdir().unwrap();
        provide(none.path(), fresh.path()).unwrap();
        assert!(!fresh.path().join("node_modules").exists());
    }

    /// Regression (unjs/defu `defu`): a commit outside the chain rewrites `src/defu.ts`, which
    /// stage 0 created, so the file is made per definition; stage 1 changes `defu` to take a
    /// `Merger` from `./types`, which it creates. S1 holds `defu` at its text before stage 1 but
    /// the final file's `import type { Merger } from './types'`, and no `src/types.ts`: the
    /// repair pulls it into S1 at its text at S2, and leaves S0 (no `src/defu.ts`) and S2 alone.
    #[test]
    fn a_state_importing_a_file_a_later_stage_creates_gets_that_file() {
        let commit = |message: &str, files: &[(&str, &str)]| crate::recipe::RecipeCommit {
            message: message.into(),
            files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
            delete: vec![],
        };
        let types = "export type Merger = (a: any, b: any) => any\n";
        let recipe = crate::recipe::Recipe {
            commits: vec![
                commit(
                    "feat: defu",
                    &[("src/defu.ts", "export function defu(a: any, b: any) {\n  return { ...b, ...a }\n}\n")],
                ),
                commit(
                    "refactor: Object.assign",
                    &[("src/defu.ts", "export function defu(a: any, b: any) {\n  return Object.assign({}, b, a)\n}\n")],
                ),
                commit(
                    "feat: custom merger",
                    &[
                        ("src/types.ts", types),
                        (
                            "src/defu.ts",
                            "import type { Merger } from './types'\n\nexport function defu(a: any, b: any, merger?: Merger) {\n  return merger ? merger(a, b) : Object.assign({}, b, a)\n}\n",
                        ),
                    ],
                ),
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let ids = crate::recipe::build(&recipe, &repo).unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let stages = vec![vec![ids[0].clone()], vec![ids[2].clone()]];
        let mut states =
            States::build(&repo, &scratch, &ids[2], &stages, Language::TypeScript, &BTreeSet::new()).unwrap();
        assert_eq!(states.by_definition.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["src/defu.ts"]);
        let s1 = String::from_utf8(states.file_at(1, "src/defu.ts").unwrap()).unwrap();
        assert!(s1.contains("from './types'") && !s1.contains("merger?"), "{s1}");
        assert_eq!(states.file_at(1, "src/types.ts"), None);
        let final_state = states.states[2].clone();
        assert!(states.pull_imported_files(0, "error").unwrap().is_empty(), "S0 has no file that imports it");
        let pulled =
            states.pull_imported_files(1, "src/defu.ts(1,30): error TS2307: Cannot find module './types'").unwrap();
        assert_eq!(pulled.len(), 1, "{pulled:?}");
        assert_eq!((pulled[0].path.as_str(), pulled[0].from, pulled[0].at), ("src/types.ts", 1, 2));
        assert_eq!(pulled[0].imported_by, "src/defu.ts");
        assert!(pulled[0].reason.contains("TS2307"), "{}", pulled[0].reason);
        assert_eq!(states.file_at(1, "src/types.ts").as_deref(), Some(types.as_bytes()));
        assert_eq!(states.file_at(0, "src/types.ts"), None);
        assert_eq!(states.states[2], final_state, "S2, the final checkpoint, is unchanged");
        assert_eq!(states.code_states, states.states);
        assert_eq!(states.pulled, pulled);
        assert!(states.pull_imported_files(1, "error").unwrap().is_empty(), "nothing left to pull");
    }

    /// S0 … Sn of `recipe`'s history built in a temporary folder (kept alive by the caller):
    /// one stage per commit index of `stages`, the last one the final checkpoint.
    fn states_of(recipe: &crate::recipe::Recipe, stages: &[usize], language: Language) -> (tempfile::TempDir, States) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let ids = crate::recipe::build(recipe, &repo).unwrap();
        let scratch = dir.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let last = &ids[*stages.last().unwrap()];
        let stages: Vec<Vec<String>> = stages.iter().map(|&i| vec![ids[i].clone()]).collect();
        let states = States::build(&repo, &scratch, last, &stages, language, &BTreeSet::new()).unwrap();
        (dir, states)
    }

    /// Regression (unjs/ufo #120 → #207): stage 0 makes `port` a number, a commit outside the
    /// chain makes it a string again, stage 1 adds `stringify`. Removing stage 0's patch
    /// succeeds (its `port: number` line is already gone), but re-applying it would bring the
    /// number back, so S2 would not be the final checkpoint: the file is made per definition,
    /// and every state holds `port` as the final file has it.
    #[test]
    fn a_file_whose_stage_change_a_later_commit_undid_is_made_per_definition() {
        let commit = |message: &str, text: &str| crate::recipe::RecipeCommit {
            message: message.into(),
            files: [("src/parse.ts".to_string(), text.to_string())].into(),
            delete: vec![],
        };
        // The later commit puts back exactly the lines it reverts (`port: string`, `port`), and
        // leaves stage 0's new pattern (`/:(\d+)/`).
        let host = |port: &str, pattern: &str, value: &str| {
            format!(
                "export interface Host {{\n  port: {port};\n}}\n\nexport function parseHost(input: string): Host {{\n  const port = (input.match({pattern}) || [])[1];\n  return {{\n    host: input,\n    port: {value},\n  }};\n}}\n"
            )
        };
        let stringify = "\nexport function stringify(h: Host): string {\n  return String(h.port);\n}\n";
        let recipe = crate::recipe::Recipe {
            commits: vec![
                commit("feat: parseHost", &host("string", "/:(.*)/", "port")),
                commit("fix: port as number", &host("number", "/:(\\d+)/", "Number(port)")),
                commit("fix: port should be string", &host("string", "/:(\\d+)/", "port")),
                commit("feat: stringify", &(host("string", "/:(\\d+)/", "port") + stringify)),
            ],
        };
        let (_dir, states) = states_of(&recipe, &[1, 3], Language::TypeScript);
        assert_eq!(states.by_definition.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["src/parse.ts"]);
        let at = |j: usize| String::from_utf8(states.file_at(j, "src/parse.ts").unwrap()).unwrap();
        let s0 = at(0);
        assert!(s0.contains("port: string;") && s0.contains("/:(.*)/") && s0.contains("port: port,"), "{s0}");
        let s1 = at(1);
        assert!(s1.contains("port: string;") && s1.contains("/:(\\d+)/") && !s1.contains("Number"), "{s1}");
        assert!(!s1.contains("stringify"), "{s1}");
        assert!(at(2).contains("stringify"));
    }

    /// unjs/defu `feat-use-named-exports`: stage 1 deletes `lib/defu.d.ts`, the only file of
    /// `lib/`, so checking that its patch re-applies removes the folder; putting S0's file
    /// back must make the folder again.
    #[test]
    fn a_file_whose_folder_a_re_applied_patch_removed_is_restored() {
        let commit = |message: &str, files: &[(&str, &str)], delete: &[&str]| crate::recipe::RecipeCommit {
            message: message.into(),
            files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
            delete: delete.iter().map(|p| p.to_string()).collect(),
        };
        let recipe = crate::recipe::Recipe {
            commits: vec![
                commit("types", &[("lib/defu.d.ts", "export declare function defu(): void\n")], &[]),
                commit("feat: defu", &[("src/defu.ts", "export function defu() {}\n")], &[]),
                commit(
                    "feat: named exports",
                    &[("src/defu.ts", "export function defu() {}\nexport const x = 1\n")],
                    &["lib/defu.d.ts"],
                ),
            ],
        };
        let (_dir, states) = states_of(&recipe, &[1, 2], Language::TypeScript);
        assert!(states.file_at(1, "lib/defu.d.ts").is_some());
        assert_eq!(states.file_at(2, "lib/defu.d.ts"), None);
    }

    /// The recipe commits of the psf/requests pattern: stage 0 adds `JSONDecodeError` to
    /// `pkg/exceptions.py` and imports it in `pkg/models.py`; a commit outside the chain
    /// moves `pkg/` to `src/pkg/` (with `models_at_move` as the moved `models.py`); stage 1
    /// gives the error a `__reduce__` in the moved file.
    fn moved_package_recipe(models_at_move: &str) -> crate::recipe::Recipe {
        let commit = |message: &str, files: &[(&str, &str)], delete: &[&str]| crate::recipe::RecipeCommit {
            message: message.into(),
            files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
            delete: delete.iter().map(|p| p.to_string()).collect(),
        };
        let exceptions0 = "class InvalidJSONError(ValueError):\n    pass\n";
        let exceptions1 =
            "class InvalidJSONError(ValueError):\n    pass\n\n\nclass JSONDecodeError(InvalidJSONError):\n    pass\n";
        let exceptions2 = "class InvalidJSONError(ValueError):\n    pass\n\n\nclass JSONDecodeError(InvalidJSONError):\n    def __reduce__(self):\n        return JSONDecodeError, self.args\n";
        crate::recipe::Recipe {
            commits: vec![
                commit(
                    "base",
                    &[
                        ("pkg/__init__.py", ""),
                        ("pkg/exceptions.py", exceptions0),
                        ("pkg/models.py", MODELS_0),
                        (
                            "tests/test_models.py",
                            "from pkg.models import load\n\n\ndef test_load():\n    assert load('1') == 1\n",
                        ),
                    ],
                    &[],
                ),
                commit(
                    "feat: JSONDecodeError",
                    &[
                        ("pkg/exceptions.py", exceptions1),
                        ("pkg/models.py", MODELS_1),
                        (
                            "tests/test_models.py",
                            "import pytest\nfrom pkg.models import load\n\n\ndef test_load():\n    assert load('1') == 1\n\n\ndef test_error():\n    with pytest.raises(ValueError):\n        load('x')\n",
                        ),
                    ],
                    &[],
                ),
                commit(
                    "chore: move to src/",
                    &[
                        ("src/pkg/__init__.py", ""),
                        ("src/pkg/exceptions.py", exceptions1),
                        ("src/pkg/models.py", models_at_move),
                    ],
                    &["pkg/__init__.py", "pkg/exceptions.py", "pkg/models.py"],
                ),
                commit(
                    "feat: picklable JSONDecodeError",
                    &[
                        ("src/pkg/exceptions.py", exceptions2),
                        (
                            "tests/test_pickle.py",
                            "import pickle\nfrom pkg.exceptions import JSONDecodeError\n\n\ndef test_pickle():\n    assert pickle.loads(pickle.dumps(JSONDecodeError('x'))).args == ('x',)\n",
                        ),
                    ],
                    &[],
                ),
            ],
        }
    }

    const MODELS_0: &str =
        "import json\n\nfrom .exceptions import InvalidJSONError\n\n\ndef load(text):\n    return json.loads(text)\n";
    const MODELS_1: &str = "import json\n\nfrom .exceptions import InvalidJSONError\nfrom .exceptions import JSONDecodeError\n\n\ndef load(text):\n    try:\n        return json.loads(text)\n    except ValueError as e:\n        raise JSONDecodeError(*e.args)\n";

    /// Regression (psf/requests `JSONDecodeError`): a commit between the stages moved the
    /// package (`requests/` → `src/requests/`). Stage 0's patches are followed to the files'
    /// final paths and come off there, so S0 has no `JSONDecodeError`, S1 has it, and no
    /// state has the old paths; before, the moved files were left at their final text (the
    /// stage's code in S0) and the old paths' patches were re-applied as new files.
    #[test]
    fn a_stage_patch_follows_its_files_to_where_a_later_commit_moved_them() {
        let (_dir, states) = states_of(&moved_package_recipe(MODELS_1), &[1, 3], Language::Python);
        assert!(states.shared.is_empty(), "{:?}", states.shared);
        assert!(states.by_definition.is_empty(), "{:?}", states.by_definition);
        let text = |k: usize, p: &str| states.file_at(k, p).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(text(0, "src/pkg/models.py").as_deref(), Some(MODELS_0));
        assert_eq!(text(1, "src/pkg/models.py").as_deref(), Some(MODELS_1));
        assert!(!text(0, "src/pkg/exceptions.py").unwrap().contains("JSONDecodeError"));
        assert!(
            text(1, "src/pkg/exceptions.py").unwrap().contains("class JSONDecodeError(InvalidJSONError):\n    pass")
        );
        assert!(text(0, "tests/test_pickle.py").is_none() && text(1, "tests/test_pickle.py").is_none());
        for k in 0..3 {
            assert!(text(k, "pkg/models.py").is_none() && text(k, "pkg/exceptions.py").is_none(), "S{k}");
        }
        // The mined ids of stage 0 name the files at their old paths: the spec's interface and
        // the traced call dependency look them up at the final ones.
        assert_eq!(states.id_at_final("pkg/exceptions.py::JSONDecodeError"), "src/pkg/exceptions.py::JSONDecodeError");
        assert_eq!(states.id_at_final("tests/test_models.py::test_error"), "tests/test_models.py::test_error");
    }

    /// Regression (psf/requests `JSONDecodeError`): the move also reformats `models.py`, so
    /// stage 0's patch to it does not come off and the file is made per definition. Stage 0
    /// added no definition there, only changed `load` and imported `JSONDecodeError`; S0 must
    /// not import it (exceptions.py has no such class yet: the package would not load), so the
    /// names a later stage added to a module-level import are taken out of the earlier states.
    #[test]
    fn a_per_definition_state_does_not_import_what_a_later_stage_added() {
        let reformatted = "import json\n\nfrom .exceptions import InvalidJSONError, JSONDecodeError\n\n\ndef load(text):\n    try:\n        return json.loads(text)\n    except ValueError as e:\n        raise JSONDecodeError(*e.args)\n";
        let (_dir, states) = states_of(&moved_package_recipe(reformatted), &[1, 3], Language::Python);
        let files: Vec<&str> = states.by_definition.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(files, ["src/pkg/models.py"]);
        assert_eq!(states.by_definition[0].imports, [vec![".exceptions: JSONDecodeError".to_string()], vec![]]);
        let text = |k: usize, p: &str| states.file_at(k, p).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(
            text(0, "src/pkg/models.py").unwrap(),
            "import json\n\nfrom .exceptions import InvalidJSONError\n\n\ndef load(text):\n    return json.loads(text)\n"
        );
        assert_eq!(text(1, "src/pkg/models.py").as_deref(), Some(reformatted));
        assert!(!text(0, "src/pkg/exceptions.py").unwrap().contains("JSONDecodeError"));
    }

    /// Regression (psf/requests `JSONDecodeError`): stage 0 changed one method of a class in a
    /// file made per definition; S0 had the whole class at its text from before the stage, so
    /// every other method lost what later commits did to it (requests' `Response` and
    /// `PreparedRequest` went back two and a half years, and 232 tests failed at S0). Only the
    /// changed method goes back now.
    #[test]
    fn a_state_takes_back_the_changed_method_not_its_whole_class() {
        let commit = |message: &str, text: &str| crate::recipe::RecipeCommit {
            message: message.into(),
            files: [("k.py".to_string(), text.to_string())].into(),
            delete: vec![],
        };
        let v0 = "class K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 'n'\n";
        let v1 = "class K:\n    def m(self):\n        return 2\n\n    def n(self):\n        return 'n'\n";
        // Outside the chain: rewrites stage 0's line (so its patch does not come off) and `n`.
        let v2 = "class K:\n    def m(self):\n        value = 2\n        return value\n\n    def n(self):\n        return 'N'\n";
        let v3 = "class K:\n    def m(self):\n        value = 2\n        return value\n\n    def n(self):\n        return 'N'\n\n    def o(self):\n        return self.m()\n";
        let recipe = crate::recipe::Recipe {
            commits: vec![commit("base", v0), commit("m", v1), commit("style", v2), commit("o", v3)],
        };
        let (_dir, states) = states_of(&recipe, &[1, 3], Language::Python);
        assert_eq!(states.by_definition.len(), 1);
        assert_eq!(states.by_definition[0].changed, [vec!["k.py::K.m".to_string()], vec![]]);
        let text = |k: usize| String::from_utf8(states.file_at(k, "k.py").unwrap()).unwrap();
        assert_eq!(text(0), "class K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 'N'\n");
        assert_eq!(text(1), v2);
        assert_eq!(text(2), v3);
    }

    /// Per-definition states of one Go file: the final text without what later stages added,
    /// nothing before the stage that created it.
    #[test]
    fn a_file_made_per_definition_drops_what_later_stages_added() {
        let text = "package p\n\n// A is stage 0's.\nfunc A() int { return 1 }\n\n// B is stage 1's.\nfunc B() int { return A() + 1 }\n";
        let file = ByDefinition {
            path: "p.go".into(),
            language: Language::Go,
            final_text: Some(text.into()),
            added: vec![["p.go::A".to_string()].into(), ["p.go::B".to_string()].into()],
            changed: vec![BTreeMap::new(), BTreeMap::new()],
            imports: Vec::new(),
            created_by: Some(0),
            kept: BTreeSet::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        let read = |j: usize| {
            file.write(dir.path(), j).unwrap();
            std::fs::read_to_string(dir.path().join("p.go")).ok()
        };
        assert_eq!(read(0), None, "absent before the stage that created it");
        let s1 = read(1).unwrap();
        assert!(s1.contains("func A()") && !s1.contains("func B()"), "{s1}");
        assert_eq!(read(2).as_deref(), Some(text), "the last state is the final file");
        assert_eq!(read(0), None, "and it goes again");
    }

    /// A definition a later stage changed has its text from before that stage in the earlier
    /// states; one it added inside a changed definition goes with the old text.
    #[test]
    fn a_changed_definition_has_its_text_from_before_the_stage() {
        let text = "def a():\n    return 2\n\n\nclass K:\n    def m(self):\n        return 1\n\n    def n(self):\n        return 3\n";
        let file = ByDefinition {
            path: "p.py".into(),
            language: Language::Python,
            final_text: Some(text.into()),
            added: vec![BTreeSet::new(), ["p.py::K.n".to_string()].into()],
            changed: vec![
                BTreeMap::new(),
                [
                    ("p.py::a".to_string(), "def a():\n    return 1".to_string()),
                    ("p.py::K".to_string(), "class K:\n    def m(self):\n        return 1".to_string()),
                ]
                .into(),
            ],
            imports: Vec::new(),
            created_by: None,
            kept: BTreeSet::new(),
        };
        let s1 = file.at(text, 1).unwrap();
        assert_eq!(s1, "def a():\n    return 1\n\n\nclass K:\n    def m(self):\n        return 1\n");
        assert_eq!(file.at(text, 2).unwrap(), text);
    }

    /// A chain that starts at the repository's first commit: that commit has no parent (the
    /// empty tree stands in), and the `go.mod` it created stays in S0 at its final content,
    /// while its code comes off.
    #[carve_testutil::needs("git")]
    fn a_chain_from_the_root_commit_keeps_the_go_mod_it_created() {
        let commit = |message: &str, files: &[(&str, &str)]| crate::recipe::RecipeCommit {
            message: message.into(),
            files: files.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
            delete: vec![],
        };
        let recipe = crate::recipe::Recipe {
            commits: vec![
                commit(
                    "root",
                    &[("go.mod", "module ex.com/p\n\ngo 1.21\n"), ("a.go", "package p\n\nfunc A() int { return 1 }\n")],
                ),
                commit("b", &[("b.go", "package p\n\nfunc B() int { return A() + 1 }\n")]),
            ],
        };
        let (_tmp, states) = states_of(&recipe, &[0, 1], Language::Go);
        assert_eq!(states.file_at(0, "go.mod").as_deref(), Some(&b"module ex.com/p\n\ngo 1.21\n"[..]));
        assert_eq!(states.file_at(0, "a.go"), None);
        assert!(states.file_at(1, "a.go").is_some() && states.file_at(1, "b.go").is_none());
        assert!(
            states.shared.iter().any(|s| s.path == "go.mod" && s.reason.contains("build manifest")),
            "{:?}",
            states.shared
        );
    }
}
