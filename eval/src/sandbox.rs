//! What the agent command of `carve arc run` can see (issue 11; FeatureArc II-B: "the
//! reference patches, the hidden test suites and the future specs stay private").
//!
//! Without a container, carve isolates the agent in three layers:
//! 1. **Paths it is given.** The workspace, the spec and contract of the current stage (copied
//!    out of the bundle), the feedback file, and its own `HOME` and `TMPDIR` under the run
//!    folder's `agent/`. None of them is inside the bundle, the repository or `private/`.
//! 2. **Environment.** Cleared, then only `PATH`, locale and terminal variables, the
//!    `CARVE_*` hand-over variables, `HOME`/`TMPDIR`, and what `--agent-env NAME` passes on
//!    (an API key, say) — carve's own environment does not leak into the agent's.
//! 3. **Namespaces** (Linux, `unshare` from util-linux; mode `namespace`, the default when it
//!    works). The agent runs in a new user, mount and PID namespace: every hidden directory
//!    (the bundle, the repository with the chain's future history, the run's `private/`) is
//!    covered by an empty read-only tmpfs (a hidden file — the run's `run.json` with the gates'
//!    results so far — by `/dev/null`), mounted one user namespace up so the agent cannot
//!    unmount it; it sees only its own processes (a fresh `/proc`), so it cannot reach
//!    carve's view of the disk through `/proc/<pid>/root` either. What is not hidden stays
//!    readable (the rest of the file system, the network): this is not a security boundary
//!    against a hostile program, it keeps an honest agent from reading the answers.
//!
//! Mode `none` (no `unshare`, or user namespaces disabled) keeps layers 1 and 2 only; the run
//! records which mode each turn had.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// `namespace` when it works here, else `none`.
    Auto,
    /// Refuse to run the agent without namespaces.
    Namespace,
    /// Paths and environment only.
    None,
}

impl std::str::FromStr for SandboxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<SandboxMode, String> {
        match s {
            "auto" => Ok(SandboxMode::Auto),
            "namespace" => Ok(SandboxMode::Namespace),
            "none" => Ok(SandboxMode::None),
            o => Err(format!("--sandbox takes auto, namespace or none, not {o}")),
        }
    }
}

/// Environment variables the agent keeps from carve's environment.
const KEPT_ENV: &[&str] = &["PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ", "USER", "LOGNAME"];

/// The outer namespace mounts the masks; the inner (a user namespace below it) locks them and
/// gets a fresh PID namespace and `/proc`.
const OUTER: &[&str] = &["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"];
const INNER: &[&str] =
    &["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"];

/// The script run in the outer namespace: `$1 … --` are the directories to hide, then the
/// agent command and its arguments.
const MASK_SCRIPT: &str = r#"while [ "$1" != "--" ]; do
  if [ -d "$1" ]; then
    mount -t tmpfs -o ro,size=4k,mode=000 carve-hidden "$1" || { echo "carve sandbox: could not hide $1" >&2; exit 97; }
  else
    mount --bind -o ro /dev/null "$1" || { echo "carve sandbox: could not hide $1" >&2; exit 97; }
  fi
  shift
done
shift
exec "$@""#;

/// Whether the namespace sandbox works on this machine (probed once).
pub fn namespaces_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let mut c = Command::new(OUTER[0]);
        c.args(&OUTER[1..]).args(INNER).arg("true");
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        c.status().is_ok_and(|s| s.success())
    })
}

/// How one agent turn is isolated.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// `"namespace"` or `"none"`.
    pub mode: &'static str,
    pub hidden: Vec<PathBuf>,
    pub home: PathBuf,
    pub tmp: PathBuf,
    /// Extra variables passed on by name (`--agent-env`).
    pub pass_env: Vec<String>,
}

impl Sandbox {
    /// A sandbox hiding `hidden` from an agent whose workspace is `workspace`; its `HOME` and
    /// `TMPDIR` are `agent_root/home` and `agent_root/tmp`.
    pub fn new(
        mode: SandboxMode,
        workspace: &Path,
        agent_root: &Path,
        hidden: &[PathBuf],
        pass_env: &[String],
    ) -> Result<Sandbox, Error> {
        let mode = match mode {
            SandboxMode::None => "none",
            _ if namespaces_available() => "namespace",
            SandboxMode::Namespace => {
                return Err(Error::Environment(
                    "--sandbox namespace: `unshare --user --mount --pid` does not work here (util-linux missing, or \
                     user namespaces disabled: sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces); \
                     use --sandbox none to run with paths and environment isolation only"
                        .into(),
                ));
            }
            SandboxMode::Auto => "none",
        };
        let ws = workspace.canonicalize().map_err(|e| Error::io("resolve", workspace, e))?;
        let mut dirs = Vec::new();
        for h in hidden {
            let Ok(h) = h.canonicalize() else { continue };
            if ws.starts_with(&h) || agent_root.starts_with(&h) {
                return Err(Error::Usage(format!(
                    "the agent's workspace {} is inside {}, which the agent must not see (the bundle, the \
                     repository or the run's private folder); pass an --out outside it",
                    ws.display(),
                    h.display()
                )));
            }
            if (h.is_dir() || h.is_file()) && !dirs.contains(&h) {
                dirs.push(h);
            }
        }
        // Outer masks first: a directory inside another hidden one is covered already.
        dirs.sort();
        dirs.dedup_by(|b, a| b.starts_with(a));
        let (home, tmp) = (agent_root.join("home"), agent_root.join("tmp"));
        for d in [&home, &tmp] {
            std::fs::create_dir_all(d).map_err(|e| Error::io("create", d, e))?;
        }
        Ok(Sandbox { mode, hidden: dirs, home, tmp, pass_env: pass_env.to_vec() })
    }

    /// The command running `program args…` inside the sandbox, its environment set up from
    /// `vars` (the hand-over variables) and the kept ones.
    pub fn command(
        &self,
        program: &str,
        args: &[std::ffi::OsString],
        vars: &[(String, std::ffi::OsString)],
    ) -> Command {
        let mut c = if self.mode == "namespace" {
            let mut c = Command::new(OUTER[0]);
            c.args(&OUTER[1..]).args(["sh", "-c", MASK_SCRIPT, "carve-sandbox"]);
            c.args(&self.hidden).arg("--").args(INNER).arg(program);
            c
        } else {
            Command::new(program)
        };
        c.args(args).env_clear();
        for k in KEPT_ENV.iter().copied().map(str::to_string).chain(self.pass_env.iter().cloned()) {
            if let Some(v) = std::env::var_os(&k) {
                c.env(k, v);
            }
        }
        c.env("HOME", &self.home).env("TMPDIR", &self.tmp).env("CARVE_SANDBOX", self.mode);
        for (k, v) in vars {
            c.env(k, v);
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh` prints in a sandbox of `mode` that hides a folder holding `gold.patch`.
    fn snoop(mode: SandboxMode) -> (String, std::path::PathBuf, &'static str) {
        let dir = tempfile::tempdir().unwrap();
        let (ws, agent, secret) = (dir.path().join("ws"), dir.path().join("agent"), dir.path().join("secret"));
        for d in [&ws, &agent, &secret] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(secret.join("gold.patch"), "the answer").unwrap();
        let sb = Sandbox::new(mode, &ws, &agent, std::slice::from_ref(&secret), &[]).unwrap();
        let script = format!(
            "cat {}/gold.patch 2>/dev/null; echo \"home=$HOME tmp=$TMPDIR cargo=${{CARGO_MANIFEST_DIR:-unset}}\"",
            secret.display()
        );
        let out = sb.command("sh", &["-c".into(), script.into()], &[]).output().unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), agent.join("home"), sb.mode)
    }

    #[test]
    fn the_environment_is_cleared_and_home_is_the_agents() {
        let (text, home, mode) = snoop(SandboxMode::None);
        assert_eq!(mode, "none");
        assert!(text.contains("cargo=unset"), "carve's environment leaked: {text}");
        assert!(text.contains(&format!("home={}", home.display())), "{text}");
        assert!(text.contains("the answer"), "without namespaces nothing is hidden (the check can fail): {text}");
    }

    #[carve_testutil::needs("user-namespaces")]
    fn namespaces_hide_directories() {
        let (text, home, mode) = snoop(SandboxMode::Namespace);
        assert_eq!(mode, "namespace");
        assert!(text.contains("cargo=unset"), "carve's environment leaked: {text}");
        assert!(text.contains(&format!("home={}", home.display())), "{text}");
        assert!(!text.contains("the answer"), "the hidden file was readable: {text}");
    }

    #[test]
    fn a_workspace_inside_a_hidden_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("bundle/ws");
        std::fs::create_dir_all(&ws).unwrap();
        let err = Sandbox::new(SandboxMode::None, &ws, &dir.path().join("a"), &[dir.path().join("bundle")], &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("pass an --out outside it"), "{err}");
    }
}
