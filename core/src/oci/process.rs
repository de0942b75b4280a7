//! One engine command under a deadline: its own process group, stdin closed, stdout and
//! stderr into anonymous files (no pipe to fill up, bounded memory when read back), and the
//! whole group killed when the deadline passes (SIGTERM, then SIGKILL) or, after a normal
//! exit, whatever it left running (a test's background process in a chroot container is a
//! process of that group on this machine).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wait_timeout::ChildExt;

use super::OciError;

/// How long a group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How much of stdout and of stderr is kept (the end, where errors and summaries are).
pub(crate) const OUTPUT_LIMIT: u64 = 16 * 1024 * 1024;

/// A program and its arguments, shown in errors as a shell would take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    pub program: String,
    pub args: Vec<String>,
}

impl Invocation {
    pub fn new(program: &str, args: Vec<String>) -> Invocation {
        Invocation { program: program.to_string(), args }
    }

    pub fn display(&self) -> String {
        std::iter::once(&self.program).chain(&self.args).map(|a| shell_word(a)).collect::<Vec<_>>().join(" ")
    }
}

/// `word` quoted for a POSIX shell when it needs it.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,{}".contains(c) || !c.is_ascii());
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// How a command ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// The exit code; `None` when a signal ended it (as after a timeout).
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    pub fn status_text(&self) -> String {
        match self.code {
            Some(c) => format!("exit code {c}"),
            None => "killed by a signal".to_string(),
        }
    }

    /// Both streams, for an error message: stderr's end, then stdout's end.
    pub fn output_tail(&self, max_lines: usize) -> String {
        let mut parts = Vec::new();
        for text in [&self.stderr, &self.stdout] {
            let lines: Vec<&str> = text.lines().collect();
            let start = lines.len().saturating_sub(max_lines);
            if start < lines.len() {
                parts.push(lines[start..].join("\n"));
            }
        }
        parts.join("\n")
    }

    /// The error for a command that did not succeed (timed out or failed).
    pub fn error(&self, inv: &Invocation, timeout: Duration) -> OciError {
        if self.timed_out {
            OciError::Timeout { command: inv.display(), after: timeout, output: self.output_tail(40) }
        } else {
            OciError::Command { command: inv.display(), status: self.status_text(), output: self.output_tail(40) }
        }
    }
}

/// Run `inv` to its end or until `timeout`, capturing both streams.
pub(crate) fn run(inv: &Invocation, timeout: Duration) -> Result<Finished, OciError> {
    run_with_stdout(inv, timeout, None)
}

/// What an engine prints when it failed before starting the command, for a reason of the
/// moment: buildah's chroot isolation re-executes buildah from a sealed in-memory copy of
/// itself, and on a busy machine sealing that copy now and then fails with "Close_Fd sealing
/// memfd copy: Device or resource busy" (seen once in carve-core's OCI tests, in a suite that
/// had passed before). Nothing ran in the container, so the command is run once more.
const NOT_STARTED: &[&str] = &["sealing memfd copy"];

/// Whether `finished` failed before the engine started the command ([`NOT_STARTED`]).
fn not_started(finished: &Finished) -> bool {
    !finished.success() && !finished.timed_out && NOT_STARTED.iter().any(|m| finished.stderr.contains(m))
}

/// [`run`], with stdout written to `stdout` when given (then [`Finished::stdout`] is empty):
/// for binary output such as a tar stream. A run that failed before the engine started the
/// command ([`NOT_STARTED`]) is made once more, with `stdout` emptied first.
pub(crate) fn run_with_stdout(inv: &Invocation, timeout: Duration, stdout: Option<File>) -> Result<Finished, OciError> {
    let spawn_err = |source| OciError::Spawn { command: inv.display(), source };
    let again = stdout.as_ref().map(File::try_clone).transpose().map_err(spawn_err)?;
    let first = run_once(inv, timeout, stdout)?;
    if !not_started(&first) {
        return Ok(first);
    }
    if let Some(mut file) = again {
        file.set_len(0).map_err(spawn_err)?;
        file.seek(SeekFrom::Start(0)).map_err(spawn_err)?;
        return run_once(inv, timeout, Some(file));
    }
    run_once(inv, timeout, None)
}

/// One run of [`run_with_stdout`].
fn run_once(inv: &Invocation, timeout: Duration, stdout: Option<File>) -> Result<Finished, OciError> {
    let spawn_err = |source| OciError::Spawn { command: inv.display(), source };
    let (mut out, out_handle) = match stdout {
        Some(file) => (None, file),
        None => {
            let file = tempfile::tempfile().map_err(spawn_err)?;
            let handle = file.try_clone().map_err(spawn_err)?;
            (Some(file), handle)
        }
    };
    let mut err = tempfile::tempfile().map_err(spawn_err)?;
    let mut cmd = Command::new(&inv.program);
    cmd.args(&inv.args).stdin(Stdio::null()).stdout(out_handle).stderr(err.try_clone().map_err(spawn_err)?);
    let start = Instant::now();
    let (mut child, group) = crate::groups::spawn(&mut cmd).map_err(spawn_err)?;
    let pgid = group.id();
    let wait_err = |source| OciError::Spawn { command: inv.display(), source };
    let (status, timed_out) = match child.wait_timeout(timeout).map_err(wait_err)? {
        Some(status) => (status, false),
        None => {
            signal_group(pgid, libc::SIGTERM);
            let early = child.wait_timeout(KILL_GRACE).map_err(wait_err)?;
            signal_group(pgid, libc::SIGKILL);
            (if let Some(s) = early { s } else { child.wait().map_err(wait_err)? }, true)
        }
    };
    // Whatever the command started and left running must not outlive it.
    signal_group(pgid, libc::SIGKILL);
    let duration = start.elapsed();
    let stdout = match out.as_mut() {
        Some(f) => read_tail(f),
        None => String::new(),
    };
    let stderr = read_tail(&mut err);
    let code = if timed_out { None } else { status.code() };
    Ok(Finished { code, timed_out, stdout, stderr, duration })
}

/// The last [`OUTPUT_LIMIT`] bytes of `file`, lossily decoded.
fn read_tail(file: &mut File) -> String {
    let len = file.seek(SeekFrom::End(0)).unwrap_or(0);
    let start = len.saturating_sub(OUTPUT_LIMIT);
    let mut buf = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_ok() {
        let _ = file.read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    if start > 0 { format!("[first {start} bytes left out]\n{text}") } else { text }
}

fn signal_group(pgid: i32, signal: i32) {
    crate::groups::signal(pgid, signal);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command that failed with buildah's re-exec message runs once more; one that failed
    /// otherwise, or succeeded, runs once. The script counts its runs in a file.
    #[test]
    fn a_run_the_engine_did_not_start_is_made_once_more() {
        let d = tempfile::tempdir().unwrap();
        let count = d.path().join("count");
        let script = |message: &str| {
            format!(
                "echo x >> {c}; n=$(wc -l < {c}); echo \"run $n\"; \
                 if [ $n = 1 ]; then echo '{message}' >&2; exit 1; fi",
                c = count.display()
            )
        };
        let runs = |message: &str| {
            let _ = std::fs::remove_file(&count);
            let inv = Invocation::new("sh", vec!["-c".into(), script(message)]);
            let f = run(&inv, Duration::from_secs(30)).unwrap();
            (std::fs::read_to_string(&count).unwrap().lines().count(), f)
        };
        let (n, f) = runs("Error: Close_Fd sealing memfd copy: Device or resource busy");
        assert_eq!(n, 2);
        assert!(f.success() && f.stdout == "run 2\n", "{f:?}");
        let (n, f) = runs("Error: no such image");
        assert_eq!(n, 1);
        assert!(!f.success());
        // Written to a file: the second run's output alone.
        let _ = std::fs::remove_file(&count);
        let out = d.path().join("out");
        let inv = Invocation::new("sh", vec!["-c".into(), script("sealing memfd copy")]);
        let f = run_with_stdout(&inv, Duration::from_secs(30), Some(File::create(&out).unwrap())).unwrap();
        assert!(f.success());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "run 2\n");
    }

    #[test]
    fn words_are_quoted_only_when_a_shell_needs_it() {
        let inv = Invocation::new("buildah", vec!["run".into(), "sh -c 'x'".into(), "a=b".into(), String::new()]);
        assert_eq!(inv.display(), r#"buildah run 'sh -c '\''x'\''' a=b ''"#);
    }

    #[test]
    fn a_command_is_captured_with_its_exit_code() {
        let inv = Invocation::new("sh", vec!["-c".into(), "echo out; echo err >&2; exit 3".into()]);
        let f = run(&inv, Duration::from_secs(20)).unwrap();
        assert_eq!((f.code, f.timed_out, f.stdout.as_str(), f.stderr.as_str()), (Some(3), false, "out\n", "err\n"));
        assert!(!f.success());
        assert_eq!(f.output_tail(5), "err\nout");
    }

    #[test]
    fn a_command_past_its_timeout_is_killed_with_what_it_started() {
        let marker = tempfile::tempdir().unwrap();
        let late = marker.path().join("late");
        let script = format!("(sleep 3; touch {}) & sleep 30", late.display());
        let inv = Invocation::new("sh", vec!["-c".into(), script]);
        let f = run(&inv, Duration::from_millis(300)).unwrap();
        assert!(f.timed_out && f.code.is_none(), "{f:?}");
        assert!(f.duration < Duration::from_secs(10), "{f:?}");
        assert!(matches!(f.error(&inv, Duration::from_millis(300)), OciError::Timeout { .. }));
        std::thread::sleep(Duration::from_secs(4));
        assert!(!late.exists(), "the background process outlived the timeout");
    }

    #[test]
    fn output_beyond_the_limit_keeps_its_end() {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, &vec![b'x'; usize::try_from(OUTPUT_LIMIT).unwrap() + 10]).unwrap();
        let text = read_tail(&mut f);
        assert!(text.starts_with("[first 10 bytes left out]\n"), "{}", &text[..40]);
    }
}
