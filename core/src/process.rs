//! One runner process under a watchdog: spawned in its own process group with stdin closed
//! and stdout/stderr going to files (bounded memory; only their tails are kept), polled for
//! progress, and killed together with everything it started (SIGTERM to the group, SIGKILL
//! after a grace period) when the whole run's deadline passes or no progress is seen for
//! the per-test timeout. After a normal exit, processes the tests left behind in the group
//! are killed too, so nothing keeps writing after the run.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

/// How often the watchdog looks at the runner's progress. An exiting child wakes it at once.
const POLL: Duration = Duration::from_millis(25);
/// How long a group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// How much of stdout and of stderr is kept.
pub const TAIL_BYTES: u64 = 8 * 1024;

/// A reader of the runner's machine-readable progress (a report file, a JSON stream).
pub trait Progress {
    /// Reads whatever the runner reported since the last call; true if it reported anything.
    fn poll(&mut self) -> bool;
}

/// A file a runner appends to while it runs (a report, a captured stdout), read as it grows.
#[derive(Debug, Default)]
pub struct Appended {
    pub path: PathBuf,
    offset: u64,
    /// What was read and not taken yet (after the last complete line).
    pub pending: Vec<u8>,
    /// A file not created yet has nothing appended, rather than failing to be read.
    missing_ok: bool,
}

impl Appended {
    pub fn new(path: PathBuf) -> Appended {
        Appended { path, ..Appended::default() }
    }

    /// Like [`Appended::new`], for a file the runner may not have created yet.
    pub fn maybe_missing(path: PathBuf) -> Appended {
        Appended { path, missing_ok: true, ..Appended::default() }
    }

    /// Follows `path` from its start, forgetting the file before.
    pub fn restart(&mut self, path: &Path) {
        self.path = path.to_path_buf();
        self.offset = 0;
        self.pending.clear();
    }

    /// Appends to `pending` what was written after what was read before.
    pub fn read(&mut self) -> std::io::Result<()> {
        match read_appended(&self.path, &mut self.offset, &mut self.pending) {
            Err(e) if self.missing_ok && e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            read => read,
        }
    }

    /// Reads what was appended and takes its complete nonblank lines (each with its `\n`).
    /// A read error is noted in `problem` unless that already holds one.
    pub fn read_lines(&mut self, problem: &mut Option<String>) -> Vec<Vec<u8>> {
        if let Err(e) = self.read() {
            problem.get_or_insert_with(|| format!("could not read {}: {e}", self.path.display()));
            return Vec::new();
        }
        std::iter::from_fn(|| take_nonblank_line(&mut self.pending)).collect()
    }
}

/// Line `number` of the JSON-lines report `path` (a test runner's plugin or reporter) as an `E`, or `None` with what is wrong noted in `problem` (the first problem
/// stays).
pub fn json_line<E: serde::de::DeserializeOwned>(
    path: &Path,
    number: usize,
    line: &[u8],
    problem: &mut Option<String>,
) -> Option<E> {
    serde_json::from_slice(line)
        .map_err(|e| {
            let text = String::from_utf8_lossy(line);
            problem.get_or_insert_with(|| format!("{} line {number}: {e}: {}", path.display(), text.trim_end()));
        })
        .ok()
}

/// Appends to `pending` what was written to `path` after `*offset` (a report file the
/// runner is still appending to), and moves `*offset` past it.
fn read_appended(path: &Path, offset: &mut u64, pending: &mut Vec<u8>) -> std::io::Result<()> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(*offset))?;
    let n = f.read_to_end(pending)?;
    *offset += n as u64;
    Ok(())
}

/// Takes the first complete line (with its `\n`) off the front of `pending`.
pub fn take_line(pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let end = pending.iter().position(|b| *b == b'\n')?;
    Some(pending.drain(..=end).collect())
}

/// Like [`take_line`], passing over lines of only white space.
pub fn take_nonblank_line(pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    std::iter::from_fn(|| take_line(pending)).find(|line| !line.iter().all(u8::is_ascii_whitespace))
}

/// Why supervision ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The process exited by itself (or no process was needed).
    Exited,
    /// Killed: nothing was reported for the per-test timeout.
    NoProgress,
    /// Killed: the whole run's deadline passed.
    Deadline,
}

/// How a supervised process ended.
#[derive(Debug, Clone)]
pub struct Ended {
    /// False when the attempt needed no process at all.
    pub spawned: bool,
    pub stop: Stop,
    /// `None` when a signal ended it.
    pub exit_code: Option<i32>,
    pub stdout_tail: String,
    pub stderr_tail: String,
}

impl Ended {
    /// For an attempt that needed no process at all.
    pub fn nothing_to_run() -> Ended {
        Ended {
            spawned: false,
            stop: Stop::Exited,
            exit_code: None,
            stdout_tail: String::new(),
            stderr_tail: String::new(),
        }
    }

    /// Both tails, for error messages.
    pub fn tail(&self) -> String {
        let mut s = String::new();
        if !self.stdout_tail.trim().is_empty() {
            s.push_str(self.stdout_tail.trim_end());
            s.push('\n');
        }
        if !self.stderr_tail.trim().is_empty() {
            s.push_str(self.stderr_tail.trim_end());
            s.push('\n');
        }
        s
    }
}

/// The limits of one supervised process.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub deadline: Instant,
    /// Killed when nothing progressed for this long...
    pub no_progress: Duration,
    /// ...or, before its first progress (start-up, imports, collection), for this long.
    pub startup: Duration,
}

/// What a test run's start-up gets at least, whatever the per-test timeout: importing and
/// collecting a large suite on a loaded machine takes seconds, and is not a test hanging.
pub const STARTUP_ALLOWANCE: Duration = Duration::from_secs(60);

impl Limits {
    /// One allowance for everything the process does.
    pub fn new(deadline: Instant, no_progress: Duration) -> Self {
        Limits { deadline, no_progress, startup: no_progress }
    }

    /// A test run: `test_timeout` per test, and at least [`STARTUP_ALLOWANCE`] to start.
    pub fn tests(deadline: Instant, test_timeout: Duration) -> Self {
        Limits { deadline, no_progress: test_timeout, startup: test_timeout.max(STARTUP_ALLOWANCE) }
    }
}

/// Spawn `cmd` (its own process group, stdin closed, output into `stdout`/`stderr`) and
/// watch it until it exits or a limit is hit. Errors are spawn failures only.
pub fn supervise(
    mut cmd: Command,
    stdout: &Path,
    stderr: &Path,
    limits: Limits,
    progress: &mut dyn Progress,
) -> std::io::Result<Ended> {
    cmd.stdin(Stdio::null()).stdout(File::create(stdout)?).stderr(File::create(stderr)?);
    let (mut child, group) = crate::groups::spawn(&mut cmd)?;
    let pgid = group.id();
    let mut last_progress = Instant::now();
    let mut allowance = limits.startup;
    let (stop, status) = loop {
        if let Some(status) = child.wait_timeout(POLL)? {
            // Processes the tests started and left behind must not outlive the run.
            signal_group(pgid, libc::SIGKILL);
            break (Stop::Exited, Some(status));
        }
        let now = Instant::now();
        if progress.poll() {
            last_progress = now;
            allowance = limits.no_progress;
        }
        if now >= limits.deadline {
            break (Stop::Deadline, None);
        }
        if now.duration_since(last_progress) >= allowance {
            break (Stop::NoProgress, None);
        }
    };
    let status = match status {
        Some(s) => s,
        None => {
            signal_group(pgid, libc::SIGTERM);
            let early = child.wait_timeout(KILL_GRACE)?;
            signal_group(pgid, libc::SIGKILL);
            match early {
                Some(s) => s,
                None => child.wait()?,
            }
        }
    };
    progress.poll();
    Ok(Ended { spawned: true, stop, exit_code: status.code(), stdout_tail: tail(stdout), stderr_tail: tail(stderr) })
}

fn signal_group(pgid: i32, signal: i32) {
    crate::groups::signal(pgid, signal);
}

/// The last [`TAIL_BYTES`] of a file, from a line start, lossily decoded.
pub fn tail(path: &Path) -> String {
    let Ok(mut f) = File::open(path) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    if f.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    if f.take(TAIL_BYTES).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf);
    if let Some(nl) = text.find('\n').filter(|_| start > 0) {
        return text[nl + 1..].to_string();
    }
    text.into_owned()
}

/// `args` as a shell would need them quoted, for messages.
pub fn display_command(program: &Path, args: &[String]) -> String {
    std::iter::once(program.display().to_string())
        .chain(args.iter().cloned())
        .map(|a| shell_quote(&a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./=:@,+%".contains(c));
    if plain { s.to_string() } else { format!("'{}'", s.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Never;
    impl Progress for Never {
        fn poll(&mut self) -> bool {
            false
        }
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn exit_code_and_tails_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (o, e) = (dir.path().join("o"), dir.path().join("e"));
        let limits = Limits::new(Instant::now() + Duration::from_secs(30), Duration::from_secs(30));
        let end = supervise(sh("echo out; echo err >&2; exit 3"), &o, &e, limits, &mut Never).unwrap();
        assert_eq!(end.stop, Stop::Exited);
        assert_eq!(end.exit_code, Some(3));
        assert_eq!(end.stdout_tail, "out\n");
        assert_eq!(end.stderr_tail, "err\n");
    }

    #[test]
    fn a_silent_process_is_killed_with_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let (o, e) = (dir.path().join("o"), dir.path().join("e"));
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
        let limits = Limits::new(Instant::now() + Duration::from_secs(60), Duration::from_millis(500));
        let started = Instant::now();
        let end = supervise(sh(&script), &o, &e, limits, &mut Never).unwrap();
        assert_eq!(end.stop, Stop::NoProgress);
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
        assert!(process_gone(&pid), "the grandchild {pid} survived");
    }

    #[test]
    fn start_up_has_its_own_allowance_then_the_per_test_limit_applies() {
        /// Progress once, 800 ms after the start, then never again.
        struct Once(Instant, bool);
        impl Progress for Once {
            fn poll(&mut self) -> bool {
                let first = !self.1 && self.0.elapsed() >= Duration::from_millis(800);
                self.1 |= first;
                first
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let limits = Limits {
            deadline: started + Duration::from_secs(60),
            no_progress: Duration::from_millis(300),
            startup: Duration::from_secs(30),
        };
        let mut progress = Once(started, false);
        let end =
            supervise(sh("sleep 300"), &dir.path().join("o"), &dir.path().join("e"), limits, &mut progress).unwrap();
        assert_eq!(end.stop, Stop::NoProgress);
        assert!(progress.1, "killed during start-up, before its first progress");
        // Killed 300 ms after that progress, not 30 s.
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(1100) && took < Duration::from_secs(25), "{took:?}");
        assert_eq!(Limits::tests(started, Duration::from_secs(2)).startup, STARTUP_ALLOWANCE);
        assert_eq!(Limits::tests(started, Duration::from_secs(900)).startup, Duration::from_secs(900));
    }

    #[test]
    fn the_deadline_wins_over_progress() {
        struct Always;
        impl Progress for Always {
            fn poll(&mut self) -> bool {
                true
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::new(Instant::now() + Duration::from_millis(300), Duration::from_secs(60));
        let end =
            supervise(sh("sleep 300"), &dir.path().join("o"), &dir.path().join("e"), limits, &mut Always).unwrap();
        assert_eq!(end.stop, Stop::Deadline);
        assert_eq!(end.exit_code, None);
    }

    #[test]
    fn tails_start_at_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&p, &text).unwrap();
        let t = tail(&p);
        assert!(t.len() <= TAIL_BYTES as usize);
        assert!(t.starts_with("line "), "{}", &t[..20]);
        assert!(t.ends_with("line 4999\n"));
        assert_eq!(tail(&dir.path().join("absent")), "");
    }

    #[test]
    fn commands_are_quoted_for_display() {
        let args = vec!["-m".to_string(), "pytest".into(), "a b".into(), "it's".into()];
        assert_eq!(
            display_command(Path::new("/usr/bin/python3"), &args),
            r"/usr/bin/python3 -m pytest 'a b' 'it'\''s'"
        );
    }

    /// A process that no longer exists, or a zombie waiting for init to reap it.
    fn process_gone(pid: &str) -> bool {
        for _ in 0..50 {
            match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')) => return true,
                Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        false
    }
}
