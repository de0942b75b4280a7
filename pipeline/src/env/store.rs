//! Where environments live and how later commands find them: one folder per repository and
//! install inputs, `<cache>/carve/envs/<owner>+<name>/<key>` (`CARVE_ENV_DIR` instead of
//! `<cache>/carve/envs`), never inside the repository. The key is a digest of the language and
//! the bytes of every install input the language lists (manifests, lockfiles, requirement
//! files, CI workflows), so every command on the same repository and commit — and on any
//! commit with the same inputs — finds the same environment without being told, and an edit
//! to an input makes a new one. A folder is only ever there complete: it is built under a
//! `.partial-<pid>` name and renamed when verified.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::record::{ENVIRONMENT_FILE, Environment};
use crate::error::bail;
use crate::workspace::RepoIdentity;
use crate::{Context, Result};
use carve_languages::env::{Activation, EnvSupport};

/// Overrides `<cache>/carve/envs` (tests, benchmarks, shared caches).
pub const ENV_DIR_VAR: &str = "CARVE_ENV_DIR";

/// The folder holding every environment carve made.
pub fn root() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(ENV_DIR_VAR).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let cache = dirs::cache_dir().context("no cache directory for this user: set CARVE_ENV_DIR")?;
    Ok(cache.join("carve").join("envs"))
}

/// The key of a repository's environment: the language and its install inputs' bytes.
pub fn key(language: &str, repo: &Path, inputs: &[String]) -> String {
    let mut h = Sha256::new();
    h.update(format!("carve-env {}\n{language}\n", super::record::ENVIRONMENT_VERSION));
    for rel in inputs {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(std::fs::read(repo.join(rel)).unwrap_or_default());
        h.update([0]);
    }
    hex::encode(h.finalize())[..16].to_string()
}

/// `<root>/<owner>+<name>/<key>`.
pub fn folder(identity: &RepoIdentity, key: &str) -> Result<PathBuf> {
    let owner = crate::identity::id_component(&identity.owner);
    Ok(root()?.join(format!("{owner}+{}", identity.name)).join(key))
}

/// An environment in use: its folder and how runs use it.
#[derive(Debug, Clone)]
pub struct ActiveEnv {
    pub dir: PathBuf,
    pub record: Environment,
}

impl ActiveEnv {
    pub fn activation(&self) -> &Activation {
        &self.record.activation
    }

    /// The variables a test run gets (`PATH` prepended to carve's own).
    pub fn vars(&self) -> Vec<(String, String)> {
        let path = std::env::var("PATH").ok();
        self.activation().vars_in(&self.dir, path.as_deref())
    }

    /// The environment as carve-eval's runs take it (interpreter, variables, folders).
    pub fn for_runs(&self) -> crate::runs::RunEnvironment {
        crate::runs::RunEnvironment {
            interpreter: self.activation().interpreter_in(&self.dir),
            vars: self.vars(),
            linked: self.activation().linked.iter().map(|rel| (self.dir.join("src").join(rel), rel.clone())).collect(),
            build: self.activation().build.clone(),
        }
    }

    /// Put the environment's installed folders into `tree` (a copy a run uses) where the
    /// tree has none of its own; the paths it linked.
    pub fn prepare(&self, tree: &Path) -> Result<Vec<PathBuf>> {
        let mut linked = Vec::new();
        for rel in &self.activation().linked {
            let from = self.dir.join("src").join(rel);
            let to = tree.join(rel);
            if from.exists() && std::fs::symlink_metadata(&to).is_err() {
                link_tree(&from, &to)
                    .with_context(|| format!("failed to link {} into {}", from.display(), tree.display()))?;
                linked.push(to);
            }
        }
        Ok(linked)
    }
}

/// The recorded environment of `repo` for `support`'s inputs, when one was made.
pub fn lookup(repo: &Path, identity: &RepoIdentity, language: &str, support: &dyn EnvSupport) -> Option<ActiveEnv> {
    let inputs = support.inputs(repo);
    let key = key(language, repo, &inputs);
    let dir = folder(identity, &key).ok()?;
    if let Ok(record) = Environment::read(&dir.join(ENVIRONMENT_FILE)) {
        return Some(ActiveEnv { dir, record });
    }
    // Made under another name (`--repo-name`, another remote): the same inputs are the same
    // environment.
    let mut others: Vec<PathBuf> =
        std::fs::read_dir(root().ok()?).ok()?.flatten().map(|e| e.path().join(&key)).filter(|d| d.is_dir()).collect();
    others.sort();
    others
        .into_iter()
        .find_map(|dir| Environment::read(&dir.join(ENVIRONMENT_FILE)).ok().map(|record| ActiveEnv { dir, record }))
}

/// The environment of `repo` for commands that have no session (`carve grade`): its identity
/// and inputs are read afresh. `None` with `CARVE_ENV=off` or when none was made.
pub fn find(repo: &Path, language: carve_languages::Language) -> Option<ActiveEnv> {
    if std::env::var("CARVE_ENV").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    let support = carve_languages::support(language).environment()?;
    let digest = carve_core::tree::tree_digest(repo, carve_languages::skip_policy()).ok()?;
    let identity = RepoIdentity::detect(repo, &digest, None);
    lookup(repo, &identity, language.name(), support)
}

/// Hard-link the files of `from` (a folder or a file) at `to` (see
/// [`carve_core::tree::link_tree`]).
pub fn link_tree(from: &Path, to: &Path) -> Result<()> {
    Ok(carve_core::tree::link_tree(from, to, carve_languages::skip_policy())?)
}

/// A folder to build an environment in, beside where it will live: removed on drop unless
/// [`Partial::commit`] moved it into place.
pub struct Partial {
    pub dir: PathBuf,
    dest: PathBuf,
    done: bool,
}

impl Partial {
    pub fn create(dest: &Path) -> Result<Partial> {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = dest.with_file_name(format!("{name}.partial-{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("failed to clear {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("failed to create {}", dir.display()))?;
        if dir.starts_with(dest) {
            bail!("{} would be inside {}", dir.display(), dest.display());
        }
        Ok(Partial { dir, dest: dest.to_path_buf(), done: false })
    }

    /// Move the finished environment into place (replacing an older one as one rename).
    pub fn commit(mut self) -> Result<PathBuf> {
        carve_core::fs::replace_dir(&self.dir, &self.dest)?;
        self.done = true;
        Ok(self.dest.clone())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_follows_the_inputs_bytes() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "x").unwrap();
        let inputs = vec!["a.txt".to_string()];
        let k1 = key("python", d.path(), &inputs);
        assert_eq!(k1.len(), 16);
        assert_eq!(k1, key("python", d.path(), &inputs));
        assert_ne!(k1, key("go", d.path(), &inputs));
        std::fs::write(d.path().join("a.txt"), "y").unwrap();
        assert_ne!(k1, key("python", d.path(), &inputs));
    }

    #[test]
    fn a_partial_folder_is_removed_unless_committed() {
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("envs/k");
        std::fs::create_dir_all(d.path().join("envs")).unwrap();
        let p = Partial::create(&dest).unwrap();
        let partial = p.dir.clone();
        std::fs::write(partial.join("f"), "1").unwrap();
        drop(p);
        assert!(!partial.exists() && !dest.exists());
        let p = Partial::create(&dest).unwrap();
        std::fs::write(p.dir.join("f"), "2").unwrap();
        assert_eq!(p.commit().unwrap(), dest);
        assert_eq!(std::fs::read_to_string(dest.join("f")).unwrap(), "2");
    }

    #[test]
    fn linked_folders_skip_tool_caches_and_keep_links() {
        let d = tempfile::tempdir().unwrap();
        let from = d.path().join("node_modules");
        std::fs::create_dir_all(from.join("a/.bin")).unwrap();
        std::fs::create_dir_all(from.join(".vite")).unwrap();
        std::fs::write(from.join("a/index.js"), "1").unwrap();
        std::os::unix::fs::symlink("../index.js", from.join("a/.bin/a")).unwrap();
        std::fs::write(from.join(".vite/x"), "1").unwrap();
        let to = d.path().join("tree/node_modules");
        link_tree(&from, &to).unwrap();
        assert_eq!(std::fs::read_to_string(to.join("a/index.js")).unwrap(), "1");
        assert_eq!(std::fs::read_link(to.join("a/.bin/a")).unwrap(), Path::new("../index.js"));
        assert!(!to.join(".vite").exists());
    }
}
