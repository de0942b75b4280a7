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

/// The historical patch of `commit` against its first parent, restricted to `paths`.
fn commit_patch(dir: &Path, commit: &str, paths: &[String]) -> Result<Vec<u8>, String> {
    let range = format!("{commit}^1");
    let mut args = vec!["diff", "--binary", "--no-renames", "--full-index", range.as_str(), commit, "--"];
    args.extend(paths.iter().map(String::as_str));
    git(dir, &args, None)
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
    ) -> Result<States, HistoryError> {
        let err = |message: String| HistoryError::Build { chain: final_commit.to_string(), message };
        let dir = scratch.join("states");
        let repo_s = repo.to_string_lossy().to_string();
        let dir_s = dir.to_string_lossy().to_string();
        git(scratch, &["clone", "-q", "--shared", "--no-checkout", &repo_s, &dir_s], None).map_err(err)?;
        git(&dir, &["checkout", "-q", "--detach", final_commit], None).map_err(err)?;
        // Remove the chain's patches, newest first.
        for (k, commits) in stages.iter().enumerate().rev() {
            for c in commits.iter().rev() {
                let patch = commit_patch(&dir, c, &[]).map_err(err)?;
                if patch.is_empty() {
                    continue;
                }
                git(&dir, &["apply", "--3way", "-R", "--whitespace=nowarn", "-"], Some(&patch)).map_err(|e| {
                    err(format!(
                        "stage {k}: the patch of {} does not come off the final checkpoint cleanly (a later commit \
                         rewrote the same lines): {e}",
                        &c[..8.min(c.len())]
                    ))
                })?;
                // A three-way apply can leave the index with conflict stages: refuse those.
                let unmerged = git_text(&dir, &["diff", "--name-only", "--diff-filter=U"]).map_err(err)?;
                if !unmerged.is_empty() {
                    return Err(err(format!("stage {k}: removing {} conflicts in {unmerged}", &c[..8])));
                }
            }
        }
        let mut states = vec![commit_state(&dir, "S0").map_err(err)?];
        for (k, commits) in stages.iter().enumerate() {
            for c in commits {
                let patch = commit_patch(&dir, c, &[]).map_err(err)?;
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
        Ok(States { dir, states, final_commit: final_commit.to_string() })
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
