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
//!
//! The stages live in submodules: `build` takes the chain off and re-applies it,
//! `by_definition` makes the files whose patches do not come off, `pull`, `adopt` and `inline`
//! amend built states, `git` is the scratch clone's plumbing.

mod adopt;
mod build;
mod by_definition;
mod git;
mod inline;
mod pull;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use carve_languages::Language;
use carve_languages::is_test_path;

use git::commit_files;
pub(crate) use git::{git, git_text};

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

/// What [`States::build`] made per definition, for the bundle (`chain.json` `by_definition`,
/// typed in `carve_formats::chain`).
pub use carve_formats::chain::DefinitionLevelFile;

/// One file of a chain commit left as shared context instead of being removed for S0
/// (`chain.json` `shared_context`, typed in `carve_formats::chain`).
pub use carve_formats::chain::SharedContext;

impl States {
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

    /// The files of state `k`.
    pub fn files_at(&self, k: usize) -> Result<Vec<String>, String> {
        Ok(git::tree_files(&self.dir, &self.states[k])?.into_iter().collect())
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
