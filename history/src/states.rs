//! Reference states (FeatureArc III-C). The file patches of a chain's commits are labelled by
//! role (feature code, tests, other files such as docs), the chain's patches are removed from
//! the final checkpoint in reverse order (a three-way reverse apply, so unrelated commits in
//! between stay as shared context) to get S0, and re-applied in order to get S1 … Sn.
//!
//! The work happens in a scratch clone that shares the repository's objects (`git clone
//! --shared`); the user's repository is only read. Each state is committed there, so the
//! bundle's patches are plain `git diff`s between states.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use carve_languages::Language;
use carve_languages::is_test_path;

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
    /// Commit ids of S0 … Sn in the scratch clone.
    pub states: Vec<String>,
    pub final_commit: String,
    /// Non-code files of the chain's commits left at their final content (their removal
    /// conflicted with a later commit).
    pub shared: Vec<SharedContext>,
}

/// One file of a chain commit left as shared context instead of being removed for S0.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SharedContext {
    pub stage: usize,
    pub commit: String,
    pub path: String,
    pub reason: String,
}

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

/// The historical patch of `commit` against its first parent, restricted to `paths` (all
/// when empty) and without `exclude`.
fn commit_patch(dir: &Path, commit: &str, paths: &[String], exclude: &[String]) -> Result<Vec<u8>, String> {
    let range = format!("{commit}^1");
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
    let range = format!("{commit}^1");
    let out = git_text(dir, &["diff", "--name-only", "--no-renames", "-z", range.as_str(), commit])?;
    let mut files: Vec<String> = out.split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect();
    files.sort();
    Ok(files)
}

/// Reverse-apply `commit`'s patch to `path` (three-way, so unrelated later edits stay).
fn remove_file_patch(dir: &Path, commit: &str, path: &str) -> Result<(), RemoveFailure> {
    let saved = std::fs::read(dir.join(path)).ok();
    let fail = |message: String| RemoveFailure { message, saved: saved.clone() };
    let literal = format!(":(literal){path}");
    let patch = commit_patch(dir, commit, &[literal], &[]).map_err(&fail)?;
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

/// Put `path` back as it was before a failed removal (`None`: absent) and resolve its index entry.
fn restore(dir: &Path, path: &str, saved: Option<Vec<u8>>) -> Result<(), String> {
    let p = dir.join(path);
    let spec = format!(":(literal){path}");
    match saved {
        Some(bytes) => {
            std::fs::write(&p, bytes).map_err(|e| format!("restore {}: {e}", p.display()))?;
            git(dir, &["add", "-A", "--", &spec], None).map(|_| ())
        }
        None => {
            let _ = std::fs::remove_file(&p);
            git(dir, &["rm", "-q", "--cached", "--ignore-unmatch", "--", &spec], None).map(|_| ())
        }
    }
}

fn commit_state(dir: &Path, label: &str) -> Result<String, String> {
    git(dir, &["add", "-A"], None)?;
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
        // Remove the chain's patches, newest first, one file at a time: a non-code file whose
        // removal conflicts (release notes a later commit rewrote) stays as shared context.
        let mut shared = Vec::new();
        for (k, commits) in stages.iter().enumerate().rev() {
            for c in commits.iter().rev() {
                for path in commit_files(&dir, c).map_err(err)? {
                    match remove_file_patch(&dir, c, &path) {
                        Ok(()) => {}
                        Err(reason) if role(language, &path) == Role::Other => {
                            restore(&dir, &path, reason.saved).map_err(err)?;
                            shared.push(SharedContext {
                                stage: k,
                                commit: c.clone(),
                                path,
                                reason: format!(
                                    "removing this commit's change conflicts with a later commit; the file is not \
                                     code or tests, so it stays at its final content: {}",
                                    reason.message
                                ),
                            });
                        }
                        Err(reason) => {
                            return Err(err(format!(
                                "stage {k}: the patch of {} to {path} does not come off the final checkpoint cleanly \
                                 (a later commit rewrote the same lines): {}",
                                &c[..8.min(c.len())],
                                reason.message
                            )));
                        }
                    }
                }
            }
        }
        let mut states = vec![commit_state(&dir, "S0").map_err(err)?];
        for (k, commits) in stages.iter().enumerate() {
            for c in commits {
                let skip: Vec<String> = shared.iter().filter(|s| &s.commit == c).map(|s| s.path.clone()).collect();
                let patch = commit_patch(&dir, c, &[], &skip).map_err(err)?;
                if !patch.is_empty() {
                    git(&dir, &["apply", "--3way", "--whitespace=nowarn", "-"], Some(&patch)).map_err(|e| {
                        err(format!("stage {k}: the patch of {} does not re-apply onto S{k}: {e}", &c[..8]))
                    })?;
                }
            }
            states.push(commit_state(&dir, &format!("S{}", k + 1)).map_err(err)?);
        }
        // Sn must be the final checkpoint again.
        let diff =
            git_text(&dir, &["diff", "--name-only", final_commit, states.last().map_or("HEAD", |s| s)]).map_err(err)?;
        if !diff.is_empty() {
            return Err(err(format!("re-applying the stages does not give back the final checkpoint: {diff} differ")));
        }
        shared.sort_by(|a, b| (a.stage, &a.path, &a.commit).cmp(&(b.stage, &b.path, &b.commit)));
        Ok(States { dir, states, final_commit: final_commit.to_string(), shared })
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
        std::fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
        let tar = git(&self.dir, &["archive", "--format=tar", &self.states[k]], None)?;
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
        Ok(())
    }
}
