//! The interpreter a bare name (`python3`, as detected without a virtualenv) starts, resolved
//! once per carve process instead of once per test process.
//!
//! Version managers put a shell script of that name first on `PATH` (pyenv's and asdf's
//! shims, mise's): it picks a version by the directory (`.python-version` and the like in
//! the directory or above it) and by the environment, then `exec`s the real interpreter
//! with a few variables added (pyenv: the version's `bin` first on `PATH` and
//! `PYENV_VERSION`). On the benchmark machine that costs 0.3-0.5 s before every pytest
//! process. [`resolve`] runs the script once per (script, what it can see) with
//! `import sys, os; print(sys.executable, os.environ)` in the directory the process would
//! run in, and hands back that interpreter together with the variables the script changed,
//! so the process started directly gets the interpreter and environment the script would
//! have given it.
//!
//! Only a name found on `PATH` as a script (`#!`) is resolved; a path (a virtualenv's
//! interpreter, `test.python` from carve.toml) or a name that is a binary is used as it
//! is, and so is a name that cannot be resolved (the run then reports the interpreter's own
//! error). The cache key holds the script's path, the environment given to the process and
//! the content of every version file (see [`VERSION_FILES`]) in the directory and its
//! ancestors, so two trees that would make the script pick different versions never share
//! a resolution.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Files by which version managers pick an interpreter per directory (pyenv, asdf, mise,
/// rtx, rye/uv's `.python-version`, `pyproject.toml`'s `requires-python`).
const VERSION_FILES: &[&str] =
    &[".python-version", ".tool-versions", "mise.toml", ".mise.toml", "mise.local.toml", ".rtx.toml", "pyproject.toml"];

/// Prints the interpreter and the environment it was started with.
const SCRIPT: &str = "import json, os, sys; print(json.dumps([sys.executable, dict(os.environ)]))";

/// What to start instead of a bare interpreter name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The program to start: the resolved interpreter, or the name as given.
    pub program: PathBuf,
    /// Variables the version manager's script set or changed (to set on the process).
    pub env: Vec<(String, String)>,
}

impl Interpreter {
    fn unresolved(python: &Path) -> Interpreter {
        Interpreter { program: python.to_path_buf(), env: Vec::new() }
    }

    /// A command that starts `program` with `env` set.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }
}

type Key = (PathBuf, Vec<(String, String)>, Vec<(String, Vec<u8>)>);

/// The interpreter `python` starts when run in `dir` with the extra variables `env` (on top
/// of carve's own environment); see the module doc. Variables named `PYTHON*` or `CARVE_*`
/// in `env` are not given to the resolving script (they are the run's own: the tracing
/// shim's `sitecustomize` on `PYTHONPATH` would start tracing in it).
pub fn resolve(python: &Path, dir: &Path, env: &[(String, String)]) -> Interpreter {
    if python.components().count() != 1 {
        return Interpreter::unresolved(python);
    }
    let env: Vec<(String, String)> =
        env.iter().filter(|(k, _)| !k.starts_with("PYTHON") && !k.starts_with("CARVE_")).cloned().collect();
    let path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    let Some(found) = on_path(python, path_var.as_deref()) else { return Interpreter::unresolved(python) };
    if !is_script(&found) {
        return Interpreter::unresolved(python);
    }
    let mut env_key = env.clone();
    env_key.sort();
    let key: Key = (found.clone(), env_key, version_files(dir));
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<Interpreter>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let hit = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
    let template = match hit {
        Some(hit) => hit,
        None => {
            // Not under the lock: a concurrent resolution of the same key only repeats the work.
            let resolved = run_script(&found, dir, &env);
            cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, resolved.clone());
            resolved
        }
    };
    let Some(template) = template else { return Interpreter::unresolved(python) };
    let here = dir_text(dir);
    let env = template.env.into_iter().map(|(k, v)| (k, v.replace(DIR, &here))).collect();
    Interpreter { program: template.program, env }
}

/// Stands for the directory the script ran in, in the cached variables (pyenv sets
/// `PYENV_DIR` to it): a resolution used for another tree gets that tree's directory.
const DIR: &str = "\u{0}carve-dir\u{0}";

fn dir_text(dir: &Path) -> String {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()).display().to_string()
}

/// Variables a shell script sets for itself, not for the program it starts.
const SHELL_VARIABLES: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

/// The first executable file `name` in the `PATH` directories.
fn on_path(name: &Path, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_var?)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether `path` (links followed) starts with `#!`.
fn is_script(path: &Path) -> bool {
    let mut head = [0u8; 2];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && &head == b"#!"
}

/// `(name, content)` of every version file in `dir` and its ancestors, nearest first.
fn version_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let start = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut out = Vec::new();
    for ancestor in start.ancestors() {
        for name in VERSION_FILES {
            if let Ok(bytes) = std::fs::read(ancestor.join(name)) {
                out.push((name.to_string(), bytes));
            }
        }
    }
    out
}

/// Start the script once in `dir`; the interpreter it ran and the variables it changed.
fn run_script(script: &Path, dir: &Path, env: &[(String, String)]) -> Option<Interpreter> {
    let out = Command::new(script)
        .args(["-c", SCRIPT])
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let (exe, seen): (PathBuf, BTreeMap<String, String>) = serde_json::from_slice(&out.stdout).ok()?;
    if !exe.is_absolute() || !exe.is_file() || is_script(&exe) {
        return None;
    }
    let mut given: BTreeMap<String, String> = std::env::vars().collect();
    given.extend(env.iter().cloned());
    let here = dir_text(dir);
    let changed = seen
        .into_iter()
        .filter(|(k, v)| given.get(k) != Some(v) && !SHELL_VARIABLES.contains(&k.as_str()))
        .map(|(k, v)| (k, v.replace(&here, DIR)))
        .collect();
    Some(Interpreter { program: exe, env: changed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write_script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[carve_testutil::needs("python3")]
    fn a_wrapper_script_resolves_once_per_version_file_content_with_the_variables_it_sets() {
        let real =
            std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
        let real = PathBuf::from(String::from_utf8_lossy(&real.stdout).trim());
        let bin = tempfile::tempdir().unwrap();
        let log = bin.path().join("starts.log");
        // A pyenv-like shim: logs each start, sets a variable, execs the real interpreter.
        write_script(
            bin.path(),
            "carvepy",
            &format!(
                "#!/bin/sh\necho start >> '{}'\nexport CARVE_TEST_WRAPPER=\"v-$(cat .python-version 2>/dev/null)\" CARVE_TEST_DIR=\"$(pwd -P)\"\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        let env = vec![("PATH".to_string(), path)];
        let (a, b, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(a.path().join(".python-version"), "one\n").unwrap();
        std::fs::write(b.path().join(".python-version"), "one\n").unwrap();
        std::fs::write(c.path().join(".python-version"), "two\n").unwrap();
        let name = Path::new("carvepy");
        let vars = |dir: &Path, version: &str| {
            let dir = std::fs::canonicalize(dir).unwrap().display().to_string();
            vec![("CARVE_TEST_DIR".to_string(), dir), ("CARVE_TEST_WRAPPER".to_string(), format!("v-{version}"))]
        };
        // The shell's own PWD, SHLVL and _ are not among the variables.
        let first = resolve(name, a.path(), &env);
        assert_eq!(first.program, real);
        assert_eq!(first.env, vars(a.path(), "one"));
        // Another tree with the same version file: the cached resolution, no new start, and
        // a variable that named the directory names this one.
        let second = resolve(name, b.path(), &env);
        assert_eq!((&second.program, &second.env), (&real, &vars(b.path(), "one")));
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
        // Another version file: resolved again, with what the script says there.
        let other = resolve(name, c.path(), &env);
        assert_eq!(other.env, vars(c.path(), "two"));
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
        // Started directly with those variables, it is the interpreter the script started.
        let out = first
            .command()
            .args(["-c", "import os, sys; print(sys.executable, os.environ['CARVE_TEST_WRAPPER'])"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("{} v-one", real.display()));
    }

    #[test]
    fn paths_binaries_and_failing_scripts_stay_as_given() {
        let bin = tempfile::tempdir().unwrap();
        write_script(bin.path(), "brokenpy", "#!/bin/sh\nexit 3\n");
        let elf = bin.path().join("binarypy");
        std::fs::write(&elf, b"\x7fELF not really").unwrap();
        std::fs::set_permissions(&elf, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = vec![("PATH".to_string(), bin.path().display().to_string())];
        let dir = tempfile::tempdir().unwrap();
        for name in [".venv/bin/python", "/usr/bin/python3", "brokenpy", "binarypy", "no-such-python-carve"] {
            let got = resolve(Path::new(name), dir.path(), &env);
            assert_eq!(got, Interpreter::unresolved(Path::new(name)), "{name}");
        }
    }
}
