//! How [`States::build`] makes S0 … Sn, stage by stage: a scratch clone at the final
//! checkpoint; the files the chain's commits touched, named by their path at the final
//! checkpoint; each file's patches taken off newest first (a file whose patches do not come
//! off stays as shared context when it is not code or tests, and is made per definition when
//! it is); then the stages re-applied in order, each committed as a state, and S_n checked
//! against the final checkpoint.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use carve_languages::{Language, NodeId};

use super::by_definition::ByDefinition;
use super::git::{
    commit_files, commit_patch, commit_state, git, git_text, moved_patch, moved_since, parent, regular_modes,
};
use super::{Role, SharedContext, States, role};
use crate::HistoryError;

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
        let (repo, dir) = clone_scratch(repo, scratch, final_commit).map_err(err)?;
        // Modes come from the final checkpoint: a historical patch's mode (a file that was 100755
        // then) must not flip the states' modes, and S_n must equal the final checkpoint.
        let modes = regular_modes(&dir, final_commit).map_err(err)?;
        // Remove the chain's patches file by file, newest first: a non-code file whose removal
        // conflicts (release notes a later commit rewrote) stays as shared context; a code or
        // test file whose removal conflicts (a later commit rewrote lines a stage added) is
        // made per definition instead (see [`ByDefinition`]). Files are named by their path at
        // the final checkpoint: a file a later commit moved is followed there (`moves`).
        let (touched, moves) = touched_files(&dir, stages, final_commit).map_err(err)?;
        let clone = Scratch { dir: &dir, final_commit, language, stages: stages.len(), keep };
        let mut taken = TakenOff::default();
        for (path, commits) in &touched {
            clone.take_off(path, commits, &mut taken).map_err(err)?;
        }
        let TakenOff { mut shared, by_definition } = taken;
        let states = reapply_stages(&dir, stages, &shared, &by_definition, &moves, &modes).map_err(err)?;
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
}

/// A shared clone of `repo` in `scratch/states`, checked out at the final checkpoint: the
/// repository (canonical) and the clone's folder.
fn clone_scratch(repo: &Path, scratch: &Path, final_commit: &str) -> Result<(PathBuf, PathBuf), String> {
    let dir = scratch.join("states");
    // git runs in `scratch`: a relative repository path (`carve arc build .`) must not be
    // read from there.
    let repo = repo.canonicalize().map_err(|e| format!("the repository {} cannot be read: {e}", repo.display()))?;
    let repo_s = repo.to_string_lossy().to_string();
    let dir_s = dir.to_string_lossy().to_string();
    git(scratch, &["clone", "-q", "--shared", "--no-checkout", &repo_s, &dir_s], None)?;
    git(&dir, &["checkout", "-q", "--detach", final_commit], None)?;
    Ok((repo, dir))
}

/// Per file (its path at the final checkpoint), the chain commits that changed it, oldest
/// first; per commit, the files it changed that a later commit moved (path then → path at the
/// final checkpoint).
type Touched = (BTreeMap<String, Vec<Touch>>, BTreeMap<String, BTreeMap<String, String>>);

fn touched_files(dir: &Path, stages: &[Vec<String>], final_commit: &str) -> Result<Touched, String> {
    let mut touched: BTreeMap<String, Vec<Touch>> = BTreeMap::new();
    let mut moves: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (k, commits) in stages.iter().enumerate() {
        for c in commits {
            let mut moved = moved_since(dir, c, final_commit)?;
            let files = commit_files(dir, c)?;
            moved.retain(|old, _| files.contains(old));
            for path in files {
                let at_final = moved.get(&path).cloned().unwrap_or_else(|| path.clone());
                touched.entry(at_final).or_default().push(Touch { stage: k, commit: c.clone(), path });
            }
            moves.insert(c.clone(), moved);
        }
    }
    Ok((touched, moves))
}

/// What taking the chain's patches off left behind: files (or commits' changes to them) that
/// stay at their final content, and files made per definition.
#[derive(Default)]
struct TakenOff {
    shared: Vec<SharedContext>,
    by_definition: Vec<ByDefinition>,
}

/// The scratch clone while the chain's patches come off, with what judging a file needs.
struct Scratch<'a> {
    dir: &'a Path,
    final_commit: &'a str,
    language: Language,
    /// The number of stages.
    stages: usize,
    /// Definitions that stay at their final text in every state (see [`ByDefinition`]).
    keep: &'a BTreeSet<NodeId>,
}

impl Scratch<'_> {
    /// Take the chain commits' patches of `path` off the work tree, newest first; what does
    /// not come off goes into `taken`.
    fn take_off(&self, path: &String, commits: &[Touch], taken: &mut TakenOff) -> Result<(), String> {
        let final_bytes = std::fs::read(self.dir.join(path)).ok();
        if self.chain_created_manifest(path, &commits[0], final_bytes.is_some()) {
            // Every chain commit's change to it stays, so none is re-applied onto it.
            taken.shared.extend(commits.iter().map(|t| {
                SharedContext::new(
                    t.stage,
                    t.commit.clone(),
                    path.clone(),
                    "the chain created this build manifest; without it no state would build, so it stays \
                         at its final content"
                        .into(),
                )
            }));
            return Ok(());
        }
        // A code or test file's first conflict (newest first): stage, message.
        let mut conflict = self.remove_newest_first(path, commits, &mut taken.shared)?;
        if conflict.is_none() {
            conflict = self.check_reapply(path, commits, final_bytes.as_deref(), &mut taken.shared)?;
        }
        if let Some((k, message)) = conflict {
            self.make_per_definition(path, commits, final_bytes, k, &message, taken)?;
        }
        Ok(())
    }

    /// Whether `path` is a build manifest the chain's first commit to it created and the final
    /// checkpoint has.
    fn chain_created_manifest(&self, path: &str, first: &Touch, at_final: bool) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let created =
            git(self.dir, &["cat-file", "-e", &format!("{}:{}", parent(self.dir, &first.commit), first.path)], None)
                .is_err();
        created && carve_languages::is_project_file(name) && at_final
    }

    /// Reverse-apply the commits' patches of `path`, newest first. A non-code file whose
    /// removal conflicts is restored and its commit's change recorded in `shared`; a code or
    /// test file's first conflict is returned (stage, message).
    fn remove_newest_first(
        &self,
        path: &str,
        commits: &[Touch],
        shared: &mut Vec<SharedContext>,
    ) -> Result<Option<(usize, String)>, String> {
        for Touch { stage: k, commit: c, path: old } in commits.iter().rev() {
            match remove_file_patch(self.dir, c, path, old) {
                Ok(()) => {}
                Err(reason) if role(self.language, path) == Role::Other => {
                    restore(self.dir, path, reason.saved)?;
                    shared.push(SharedContext::new(
                        *k,
                        c.clone(),
                        path.to_string(),
                        format!(
                            "removing this commit's change conflicts with a later commit; the file is not \
                             code or tests, so it stays at its final content: {}",
                            reason.message
                        ),
                    ));
                }
                Err(reason) => return Ok(Some((*k, reason.message))),
            }
        }
        Ok(None)
    }

    /// Once the patches of `path` came off, whether re-applying them gives back the final
    /// file. When it does not, a non-code file goes back to its final content (its commits'
    /// changes recorded in `shared`) and a code or test file's problem is returned (the first
    /// stage, message).
    fn check_reapply(
        &self,
        path: &String,
        commits: &[Touch],
        final_bytes: Option<&[u8]>,
        shared: &mut Vec<SharedContext>,
    ) -> Result<Option<(usize, String)>, String> {
        let kept: BTreeSet<String> = shared.iter().filter(|s| &s.path == path).map(|s| s.commit.clone()).collect();
        let Some(problem) = reapply_differs(self.dir, path, commits, &kept, final_bytes)? else { return Ok(None) };
        if role(self.language, path) != Role::Other {
            return Ok(Some((commits[0].stage, problem)));
        }
        // Every chain commit's change to it stays (the file at its final content).
        let spec = format!(":(literal){path}");
        match final_bytes {
            Some(_) => git(self.dir, &["checkout", "-q", self.final_commit, "--", &spec], None).map(|_| ()),
            None => restore(self.dir, path, None),
        }?;
        shared.extend(commits.iter().filter(|t| !kept.contains(&t.commit)).map(|t| {
            SharedContext::new(
                t.stage,
                t.commit.clone(),
                path.clone(),
                format!("{problem}; the file is not code or tests, so it stays at its final content"),
            )
        }));
        Ok(None)
    }

    /// A code or test file whose patches do not come off (stage `k`'s, for `message`): back to
    /// its final content, then made per definition, or, when nothing the stages did to it is a
    /// definition, kept at its final content as shared context.
    fn make_per_definition(
        &self,
        path: &String,
        commits: &[Touch],
        final_bytes: Option<Vec<u8>>,
        k: usize,
        message: &str,
        taken: &mut TakenOff,
    ) -> Result<(), String> {
        // Back to the final file, mode included (a failed apply may have changed it).
        if final_bytes.is_some() {
            let spec = format!(":(literal){path}");
            git(self.dir, &["checkout", "-q", self.final_commit, "--", &spec], None)?;
        } else {
            restore(self.dir, path, None)?;
        }
        match ByDefinition::read(self.dir, path, commits, final_bytes, self.stages, self.keep) {
            Ok(file) => taken.by_definition.push(file),
            // Nothing the stages did to it is a definition (an export list, a
            // top-level call): the file stays at its final content, as shared context.
            // Every chain commit's change to it stays (none came off).
            Err(e) => taken.shared.extend(commits.iter().map(|t| {
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
        Ok(())
    }
}

/// S0 (the work tree once every patch came off, per-definition files as at S0), then each
/// stage's commits re-applied in order and committed as S1 … Sn; the state commits.
fn reapply_stages(
    dir: &Path,
    stages: &[Vec<String>],
    shared: &[SharedContext],
    by_definition: &[ByDefinition],
    moves: &BTreeMap<String, BTreeMap<String, String>>,
    modes: &BTreeMap<String, String>,
) -> Result<Vec<String>, String> {
    for file in by_definition {
        file.write(dir, 0)?;
    }
    let mut states = vec![commit_state(dir, "S0", modes)?];
    for (k, commits) in stages.iter().enumerate() {
        for c in commits {
            reapply_commit(dir, k, c, shared, by_definition, &moves[c])?;
        }
        for file in by_definition {
            file.write(dir, k + 1)?;
        }
        states.push(commit_state(dir, &format!("S{}", k + 1), modes)?);
    }
    Ok(states)
}

/// Re-apply commit `c` of stage `k` onto the work tree, without the files that stay at their
/// final content or are made per definition; `moved`: its files a later commit moved.
fn reapply_commit(
    dir: &Path,
    k: usize,
    c: &str,
    shared: &[SharedContext],
    by_definition: &[ByDefinition],
    moved: &BTreeMap<String, String>,
) -> Result<(), String> {
    // Paths at the final checkpoint that stay out of the re-applied patch.
    let skip: BTreeSet<&String> =
        shared.iter().filter(|s| s.commit == c).map(|s| &s.path).chain(by_definition.iter().map(|f| &f.path)).collect();
    // Moved files are left out of the commit's patch and added as patches of
    // their final path.
    let mut exclude: Vec<String> = skip.iter().map(|p| p.to_string()).collect();
    exclude.extend(moved.keys().cloned());
    let mut patch = commit_patch(dir, c, &[], &exclude)?;
    for (old, new) in moved {
        if !skip.contains(new) {
            patch.extend(moved_patch(dir, c, old, new)?);
        }
    }
    if !patch.is_empty() {
        git(dir, &["apply", "--3way", "--whitespace=nowarn", "-"], Some(&patch))
            .map_err(|e| format!("stage {k}: the patch of {} does not re-apply onto S{k}: {e}", &c[..8]))?;
    }
    Ok(())
}

/// Where one chain commit changed one file: the stage, the commit, the path in that commit
/// (the path at the final checkpoint may differ, when a later commit moved the file).
#[derive(Debug, Clone)]
pub(super) struct Touch {
    pub(super) stage: usize,
    pub(super) commit: String,
    pub(super) path: String,
}

/// Why one file's patch did not come off, with the file as it was before the attempt.
struct RemoveFailure {
    message: String,
    saved: Option<Vec<u8>>,
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
