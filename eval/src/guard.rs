//! No agent process outlives its turn — not when the turn ends, not when its budget runs out,
//! and not when carve itself is killed (Ctrl-C, `kill`, even `kill -9`).
//!
//! The agent runs in a process group of its own. Before it starts, carve starts a *guard*: a
//! small `sh` in yet another process group (so a Ctrl-C on the terminal does not reach it),
//! reading from a pipe whose only writer is carve. carve writes the agent's group id into the
//! pipe; the guard then waits for the pipe to close and kills that whole group. The pipe
//! closes when carve ends the turn ([`GroupGuard::end`]) *or* when the kernel closes carve's
//! files because carve died, however it died — so the one path covers every case. Background
//! processes an agent left behind when it returned are ended the same way, before the gate
//! runs on the workspace.
//!
//! What escapes: a process that leaves the agent's process group (`setsid`, `setpgid`) in
//! sandbox mode `none`. In mode `namespace` the agent is PID 1's subtree of its own PID
//! namespace, which the kernel ends as a whole when its first process dies (and `unshare
//! --kill-child` kills that process when `unshare` dies), so nothing escapes there.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// Reads the group id, waits for end of input, kills the group.
const GUARD_SCRIPT: &str = r#"read pg || exit 0
cat >/dev/null
kill -s KILL -- "-$pg" 2>/dev/null
exit 0"#;

/// The guard of one agent turn's process group.
pub struct GroupGuard {
    child: Option<Child>,
    pipe: Option<ChildStdin>,
}

impl GroupGuard {
    /// Start the guard; [`GroupGuard::watch`] hands it the group once the agent runs.
    pub fn start() -> Result<GroupGuard, Error> {
        let mut c = Command::new("sh");
        c.args(["-c", GUARD_SCRIPT, "carve-agent-guard"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()));
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        let mut child =
            c.spawn().map_err(|e| Error::Environment(format!("could not start the agent's guard (`sh`): {e}")))?;
        let pipe = child.stdin.take();
        Ok(GroupGuard { child: Some(child), pipe })
    }

    /// Watch process group `pgid` (the agent's, started with `process_group(0)`).
    pub fn watch(&mut self, pgid: u32) -> Result<(), Error> {
        let pipe = self.pipe.as_mut().expect("watch is called once, before end");
        writeln!(pipe, "{pgid}")
            .and_then(|_| pipe.flush())
            .map_err(|e| Error::Environment(format!("the agent's guard did not take the process group: {e}")))
    }

    /// End the turn: every process left in the group is killed, and the guard is waited for.
    pub fn end(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        drop(self.pipe.take());
        if let Some(mut child) = self.child.take() {
            // The guard exits at once after its `kill`; do not hang a run on it regardless.
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => return,
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pid` is a live process (a zombie waiting for its reaper counts as dead).
    fn alive(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
            Err(_) => false,
        }
    }

    fn wait_dead(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// An agent whose shell has returned but left a background process: ending the turn ends it.
    #[test]
    fn ending_a_turn_kills_what_the_agent_left_running() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("bg.pid");
        let mut guard = GroupGuard::start().unwrap();
        let mut c = Command::new("sh");
        c.args(["-c", &format!("sleep 300 >/dev/null 2>&1 & echo $! > {}", pidfile.display())]);
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        let mut agent = c.spawn().unwrap();
        guard.watch(agent.id()).unwrap();
        assert!(agent.wait().unwrap().success());
        let bg: u32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        assert!(alive(bg), "the background sleep runs after the agent returned");
        guard.end();
        assert!(wait_dead(bg), "the agent's background process {bg} outlived its turn");
    }

    /// The guard kills the group when its pipe closes for any reason: here the guard process
    /// of a killed carve is simulated by dropping the guard without `end` (the same close).
    #[test]
    fn a_dropped_guard_kills_the_group_and_other_groups_are_left_alone() {
        let mut guard = GroupGuard::start().unwrap();
        let mut c = Command::new("sleep");
        c.arg("300");
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        let mut agent = c.spawn().unwrap();
        let mut bystander = Command::new("sleep").arg("300").spawn().unwrap();
        guard.watch(agent.id()).unwrap();
        drop(guard);
        let status = wait_timeout::ChildExt::wait_timeout(&mut agent, Duration::from_secs(10)).unwrap();
        let Some(status) = status else {
            agent.kill().unwrap();
            panic!("the agent's group was not killed when its guard went");
        };
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
        assert!(alive(bystander.id()), "a process outside the agent's group was killed");
        bystander.kill().unwrap();
        bystander.wait().unwrap();
    }
}
