//! Helpers for the runners' tests.

use std::time::Duration;

/// A process that no longer exists, or a zombie waiting for init to reap it.
pub(crate) fn process_gone(pid: &str) -> bool {
    for _ in 0..50 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    false
}
