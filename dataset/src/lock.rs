//! Locks on the output folder (`flock`, released when the process ends, killed or not): a
//! whole run holds `<out>/.lock` exclusively; a slice run holds it shared (slices of one
//! dataset run side by side) and its own slice's lock exclusively; every repository being
//! worked on is locked on its own. A second holder gets an error naming the lock and, for an
//! exclusive one, who holds it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::Context;
use crate::{Error, Result};

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    pub path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Exclusive,
    Shared,
}

impl Lock {
    /// Take the lock at `path` without waiting; `what` says what it guards, for the error.
    pub fn try_take(path: &Path, mode: Mode, what: &str) -> Result<Lock> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("failed to open the lock {}", path.display()))?;
        if !flock(&file, mode)? {
            let holder = std::fs::read_to_string(path).unwrap_or_default();
            let holder = holder.trim();
            let by = if holder.is_empty() { String::new() } else { format!(" (held by {holder})") };
            return Err(Error::msg(format!(
                "{what} is in use by another `carve dataset` run: {} is locked{by}; wait for that run to end, or use another --out",
                path.display()
            )));
        }
        if mode == Mode::Exclusive {
            // Who holds it, for the error another run gets.
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            file.set_len(0)?;
            writeln!(file, "pid {} on {}", std::process::id(), host.trim())?;
        }
        Ok(Lock { _file: file, path: path.to_path_buf() })
    }
}

/// `flock(LOCK_NB)`: `false` when another open file holds it.
#[allow(unsafe_code)]
fn flock(file: &File, mode: Mode) -> Result<bool> {
    let op = match mode {
        Mode::Exclusive => libc::LOCK_EX,
        Mode::Shared => libc::LOCK_SH,
    } | libc::LOCK_NB;
    // SAFETY: flock on a descriptor this `File` owns and keeps open; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), op) };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Ok(false);
    }
    Err(err.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_refuses_a_second_holder_and_names_the_first() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".lock");
        let first = Lock::try_take(&p, Mode::Exclusive, "the output folder").unwrap();
        let e = Lock::try_take(&p, Mode::Exclusive, "the output folder").unwrap_err().to_string();
        assert!(e.contains("in use by another") && e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(Lock::try_take(&p, Mode::Shared, "x").is_err());
        drop(first);
        let a = Lock::try_take(&p, Mode::Shared, "x").unwrap();
        let b = Lock::try_take(&p, Mode::Shared, "x").unwrap();
        assert!(Lock::try_take(&p, Mode::Exclusive, "x").is_err());
        drop((a, b));
        Lock::try_take(&p, Mode::Exclusive, "x").unwrap();
    }
}
