//! Installed dependencies of exported states (FeatureArc III-C: every state builds as a user
//! building that commit would build it). git holds no `node_modules`; a state whose manifest
//! declares the same dependencies as the repository checkout's gets the checkout's installed
//! folder as a link (no cost), and one whose manifest or lockfile declares others gets its own
//! install, made once per set of declarations with the language's installer
//! ([`carve_languages::Dependencies`]: npm for TypeScript and JavaScript) in a cache folder
//! keyed by a digest of them, and linked in. The cache is shared by states, chains and runs:
//! [`cache_root`]. Which set each state used goes to `chain.json` ([`StateDependencies`]);
//! the cache's path never enters a bundle.
//!
//! A failed install is an error naming the state, the command and the installer's last lines:
//! falling back to the checkout's folder would give the state dependencies its manifest does
//! not declare, which is the failure this module exists to avoid (a newer compiler rejecting
//! the state's configuration), reported later and less clearly.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use carve_languages::{Dependencies, Language};
use sha2::Digest;

/// Where an install may take at most this long.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Written into a finished install's folder; a folder without it is not used.
const MARKER: &str = ".carve-installed";

/// One state's entry in `chain.json`'s `dependencies`, and which set it used: typed in
/// `carve_formats::chain`.
pub use carve_formats::chain::{DependencySource, StateDependencies};

/// What a tree gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The tree has the folder itself: left alone.
    Keep,
    /// The checkout's folder, linked.
    Checkout,
    /// Its own install, cached under `digest`.
    Install { digest: String },
}

/// The decision for a tree whose declarations are `tree_key` (`None`: no manifest), against
/// the checkout's `checkout_key`, installed with `command`. No manifest, or the same
/// declarations, take the checkout's folder as before; other declarations their own.
pub(crate) fn decide(
    tree_has_folder: bool,
    tree_key: Option<&[u8]>,
    checkout_key: Option<&[u8]>,
    command: &[String],
) -> Decision {
    match tree_key {
        _ if tree_has_folder => Decision::Keep,
        None => Decision::Checkout,
        Some(k) if Some(k) == checkout_key => Decision::Checkout,
        Some(k) => Decision::Install { digest: digest(command, k) },
    }
}

fn digest(command: &[String], key: &[u8]) -> String {
    let mut h = sha2::Sha256::new();
    h.update(command.join(" ").as_bytes());
    h.update([0]);
    h.update(key);
    hex::encode(h.finalize())
}

/// The folder of cached installs: `$CARVE_DEPENDENCY_CACHE`, else `carve/dependencies` under
/// the user's cache directory (`~/.cache` on Linux), else under the temporary directory.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARVE_DEPENDENCY_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir().unwrap_or_else(std::env::temp_dir).join("carve").join("dependencies")
}

/// A reader of the checkout's installer inputs: the files git tracks there (an install
/// writes a lockfile into a checkout that commits none; no state has it).
fn checkout_reader<'a>(repo: &'a Path, deps: &dyn Dependencies) -> impl Fn(&str) -> Option<Vec<u8>> + 'a {
    let mut args = vec!["ls-files", "-z", "--"];
    args.extend(deps.inputs().iter().copied());
    let tracked: Option<Vec<String>> = Command::new("git")
        .args(&args)
        .current_dir(repo)
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).split('\0').filter(|s| !s.is_empty()).map(String::from).collect());
    move |p: &str| {
        if tracked.as_ref().is_some_and(|t| !t.iter().any(|x| x == p)) {
            return None;
        }
        std::fs::read(repo.join(p)).ok()
    }
}

fn tree_reader(root: &Path) -> impl Fn(&str) -> Option<Vec<u8>> + '_ {
    move |p: &str| std::fs::read(root.join(p)).ok()
}

/// The record of a state whose installer inputs `read` gives (no install).
pub(crate) fn record(
    repo: &Path,
    language: Language,
    state: &str,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Option<StateDependencies> {
    let deps = carve_languages::support(language).dependencies()?;
    let key = deps.key(read)?;
    let command = deps.install_command(read);
    let checkout = deps.key(&checkout_reader(repo, deps));
    Some(match decide(false, Some(&key), checkout.as_deref(), &command) {
        Decision::Install { digest } => StateDependencies::own(state.to_string(), digest, command.join(" ")),
        _ => StateDependencies::checkout(state.to_string()),
    })
}

/// Give the exported tree `tree` (state `state`, for messages) the installed dependencies
/// its manifest declares: the checkout `repo`'s folder, or its own cached install.
pub(crate) fn provide(repo: &Path, tree: &Path, language: Language, state: &str) -> Result<(), String> {
    let Some(deps) = carve_languages::support(language).dependencies() else { return Ok(()) };
    let folder = deps.folder();
    let read = tree_reader(tree);
    let key = deps.key(&read);
    let command = deps.install_command(&read);
    let checkout = key.as_ref().and_then(|_| deps.key(&checkout_reader(repo, deps)));
    let from = match decide(tree.join(folder).exists(), key.as_deref(), checkout.as_deref(), &command) {
        Decision::Keep => return Ok(()),
        Decision::Checkout => repo.join(folder),
        Decision::Install { digest } => install(deps, tree, &cache_root(), &digest, &command, state)?.join(folder),
    };
    if from.is_dir() {
        std::os::unix::fs::symlink(&from, tree.join(folder))
            .map_err(|e| format!("link {} into {}: {e}", from.display(), tree.display()))?;
    }
    Ok(())
}

/// The cached install `cache/digest` of `tree`'s inputs, made now when missing: the inputs
/// are copied into a fresh folder there, `command` runs in it, and the folder is renamed into
/// place when it succeeded (concurrent carve processes each install; the first rename wins).
fn install(
    deps: &dyn Dependencies,
    tree: &Path,
    cache: &Path,
    digest: &str,
    command: &[String],
    state: &str,
) -> Result<PathBuf, String> {
    let dest = cache.join(digest);
    if dest.join(MARKER).is_file() {
        return Ok(dest);
    }
    let fail = |what: String| format!("installing the dependencies of state {state}: {what}");
    std::fs::create_dir_all(cache).map_err(|e| fail(format!("create {}: {e}", cache.display())))?;
    let work = tempfile::Builder::new()
        .prefix(".installing-")
        .tempdir_in(cache)
        .map_err(|e| fail(format!("create a folder in {}: {e}", cache.display())))?;
    for input in deps.inputs() {
        let from = tree.join(input);
        if from.is_file() {
            std::fs::copy(&from, work.path().join(input)).map_err(|e| fail(format!("copy {input}: {e}")))?;
        }
    }
    let log_path = work.path().join(".carve-install.log");
    let log = std::fs::File::create(&log_path).map_err(|e| fail(format!("create the install log: {e}")))?;
    let shown = command.join(" ");
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .current_dir(work.path())
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| fail(e.to_string()))?)
        .stderr(log)
        .spawn()
        .map_err(|e| fail(format!("could not run `{shown}`: {e}")))?;
    use wait_timeout::ChildExt;
    let status = match child.wait_timeout(INSTALL_TIMEOUT).map_err(|e| fail(format!("`{shown}`: {e}")))? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!("`{shown}` did not finish in {} s", INSTALL_TIMEOUT.as_secs())));
        }
    };
    if !status.success() {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(12)..].join("\n");
        return Err(fail(format!("`{shown}` failed ({status}):\n{tail}")));
    }
    std::fs::write(work.path().join(MARKER), format!("{shown}\n")).map_err(|e| fail(e.to_string()))?;
    let done = work.keep();
    if let Err(e) = std::fs::rename(&done, &dest) {
        let _ = std::fs::remove_dir_all(&done);
        if !dest.join(MARKER).is_file() {
            return Err(fail(format!("move the install into {}: {e}", dest.display())));
        }
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd() -> Vec<String> {
        vec!["npm".into(), "install".into()]
    }

    /// Same declarations as the checkout, or none: the checkout's folder; others: an install
    /// of their own, keyed by them (same declarations, same key); a folder of the tree's own
    /// stays.
    #[test]
    fn a_state_installs_only_when_it_declares_other_dependencies() {
        let (head, old) = (b"typescript ^6".as_slice(), b"typescript ^4".as_slice());
        assert_eq!(decide(false, Some(head), Some(head), &cmd()), Decision::Checkout);
        assert_eq!(decide(false, None, Some(head), &cmd()), Decision::Checkout);
        let Decision::Install { digest } = decide(false, Some(old), Some(head), &cmd()) else { panic!("no install") };
        assert_eq!(decide(false, Some(old), None, &cmd()), Decision::Install { digest: digest.clone() });
        let ci = vec!["npm".to_string(), "ci".to_string()];
        assert_ne!(
            decide(false, Some(old), Some(head), &ci),
            Decision::Install { digest },
            "the command is in the key"
        );
        assert_eq!(decide(true, Some(old), Some(head), &cmd()), Decision::Keep);
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    /// The checkout's declarations are what git tracks there: the lockfile `npm install`
    /// wrote into a checkout that commits none is no part of them, so a state with the same
    /// manifest uses the checkout's folder; a state with other devDependencies is recorded as
    /// its own install.
    #[test]
    fn the_checkouts_untracked_lockfile_is_not_a_declaration() {
        let repo = tempfile::tempdir().unwrap();
        let manifest = r#"{"name":"x","devDependencies":{"ms":"2.1.3"}}"#;
        std::fs::write(repo.path().join("package.json"), manifest).unwrap();
        git(repo.path(), &["init", "-q"]);
        git(repo.path(), &["add", "package.json"]);
        std::fs::write(repo.path().join("package-lock.json"), "{}").unwrap();
        std::fs::create_dir(repo.path().join("node_modules")).unwrap();
        let lang = Language::TypeScript;
        let same = |p: &str| (p == "package.json").then(|| manifest.as_bytes().to_vec());
        let rec = record(repo.path(), lang, "S1", &same).unwrap();
        assert_eq!(rec.source, DependencySource::Checkout);
        let other = |p: &str| (p == "package.json").then(|| br#"{"name":"x","version":"0.1.0"}"#.to_vec());
        let rec = record(repo.path(), lang, "S0", &other).unwrap();
        assert_eq!(rec.source, DependencySource::Own);
        assert_eq!(
            rec.command.as_deref(),
            Some("npm install --ignore-scripts --legacy-peer-deps --no-audit --no-fund")
        );
        assert!(record(repo.path(), lang, "S0", &|_| None).is_none(), "no manifest, no entry");
        assert!(record(repo.path(), Language::Go, "S0", &other).is_none(), "Go has no such installer");
        // provide: the same manifest links the checkout's folder.
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(tree.path().join("package.json"), manifest).unwrap();
        provide(repo.path(), tree.path(), lang, "S1").unwrap();
        assert_eq!(std::fs::read_link(tree.path().join("node_modules")).unwrap(), repo.path().join("node_modules"));
    }

    /// A failed install names the state, the command and the installer's output, and leaves
    /// no entry in the cache.
    #[test]
    fn a_failed_install_is_an_error_naming_the_state_and_the_command() {
        struct Failing;
        impl Dependencies for Failing {
            fn folder(&self) -> &'static str {
                "deps"
            }
            fn inputs(&self) -> &'static [&'static str] {
                &["manifest"]
            }
            fn key(&self, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
                read("manifest")
            }
            fn install_command(&self, _: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<String> {
                ["sh", "-c", "cat manifest; echo 'E404 no such package' >&2; exit 1"].map(String::from).to_vec()
            }
        }
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(tree.path().join("manifest"), "wants: nothing-real\n").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let e =
            install(&Failing, tree.path(), cache.path(), "d1", &Failing.install_command(&|_| None), "S0").unwrap_err();
        assert!(e.contains("state S0") && e.contains("sh -c") && e.contains("E404 no such package"), "{e}");
        assert!(e.contains("wants: nothing-real"), "the inputs are copied where the command runs: {e}");
        assert!(!cache.path().join("d1").exists());
        assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0, "the failed attempt is removed");
    }
}
