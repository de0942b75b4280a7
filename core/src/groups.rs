//! The process groups carve's children run in, stopped with carve. Test runs and image
//! builds are spawned as leaders of their own process groups (so a timeout kills everything
//! they started), which also takes them out of the reach of a signal meant for carve: a
//! Ctrl-C at the terminal (SIGINT to carve's group), a `kill`, Slurm's `scancel` (SIGTERM)
//! stopped carve and left its test runs going, still writing into trees a restarted run then
//! failed to clear ("Directory not empty"). Every such group is registered while it lives;
//! [`stop_children_on_signals`] (called once by the CLI) sends SIGTERM to each, SIGKILL after
//! a grace period, on SIGINT, SIGTERM or SIGHUP, and then lets the signal end carve as it
//! would have.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::Duration;

/// Groups alive now, by leader pid. Held while spawning, so a signal cannot fall between a
/// spawn and its registration.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// How long the groups get between SIGTERM and SIGKILL when carve is stopped.
const GRACE: Duration = Duration::from_secs(2);

/// A registered group: unregistered when dropped (after the caller has killed it).
#[derive(Debug)]
pub struct Group(i32);

impl Group {
    /// The leader's pid (the group id).
    pub fn id(&self) -> i32 {
        self.0
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        live().remove(&self.0);
    }
}

fn live() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Spawn `cmd` as the leader of a new process group, registered until the [`Group`] drops.
pub fn spawn(cmd: &mut Command) -> std::io::Result<(Child, Group)> {
    cmd.process_group(0);
    let mut groups = live();
    let child = cmd.spawn()?;
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    groups.insert(pgid);
    Ok((child, Group(pgid)))
}

/// Send `signal` to every process of the group `pgid`.
#[allow(unsafe_code)]
pub fn signal(pgid: i32, signal: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg takes two integers and touches no memory of ours. `pgid` is the pid of a
    // child spawned as the leader of a new group (`process_group(0)`), so the signal reaches
    // only that child and what it started. ESRCH (the group is gone) is expected.
    let _ = unsafe { libc::killpg(pgid, signal) };
}

/// On SIGINT, SIGTERM or SIGHUP: stop every registered group, then end carve as the signal
/// would have (its default action). Called once, at start; a thread waits for the signals.
pub fn stop_children_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("carve-signals".into()).spawn(move || {
        if let Some(sig) = signals.forever().next() {
            // The lock stays held: nothing new is spawned while carve stops.
            let groups = live();
            for &g in groups.iter() {
                signal(g, libc::SIGTERM);
            }
            if !groups.is_empty() {
                std::thread::sleep(GRACE);
            }
            for &g in groups.iter() {
                signal(g, libc::SIGKILL);
            }
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_registered_while_it_lives() {
        let (mut child, group) = spawn(Command::new("sleep").arg("30")).unwrap();
        let id = group.id();
        assert!(live().contains(&id));
        signal(id, libc::SIGKILL);
        child.wait().unwrap();
        drop(group);
        assert!(!live().contains(&id));
    }
}
