//! Attempts that take more than one runner process (Go: one `go test` per distinct `-run`
//! pattern; cargo: doctests apart from the other targets, one package at a time), and the
//! private working directory a runner keeps under the request's scratch directory.
//!
//! The processes of one attempt run one after the other under the same limits and the same
//! progress reader; the first one that is killed (a hang, the deadline) ends the attempt,
//! so [`super::attempts`] reruns what it left over like for a single process.

use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{RunRequest, RunnerError};
use carve_core::process::{self, Ended, Limits, Progress, Stop};

/// A reader that follows one process's output file after another.
pub(crate) trait StepReader: Progress {
    /// The next process writes its stdout to `stdout`.
    fn begin(&mut self, stdout: &Path);
    /// The process ended (the reader has seen all of its output).
    fn end(&mut self, ended: &Ended);
}

/// One process of an attempt.
pub(crate) struct Step {
    pub cmd: Command,
    pub command_line: String,
}

/// Run `steps` in order until one is killed; the returned [`Ended`] is the last process's,
/// with the tails of all of them. Errors are spawn failures, with the failing step's
/// command line.
pub(crate) fn run_steps(
    steps: Vec<Step>,
    dir: &Path,
    tag: &str,
    limits: Limits,
    reader: &mut dyn StepReader,
) -> Result<Ended, (String, std::io::Error)> {
    let mut all = Ended::nothing_to_run();
    for (i, step) in steps.into_iter().enumerate() {
        let stdout = dir.join(format!("stdout-{tag}-{i}.log"));
        let stderr = dir.join(format!("stderr-{tag}-{i}.log"));
        reader.begin(&stdout);
        let ended =
            process::supervise(step.cmd, &stdout, &stderr, limits, reader).map_err(|e| (step.command_line, e))?;
        reader.end(&ended);
        all.spawned = true;
        all.stop = ended.stop;
        all.exit_code = ended.exit_code;
        for (acc, part) in [(&mut all.stdout_tail, &ended.stdout_tail), (&mut all.stderr_tail, &ended.stderr_tail)] {
            acc.push_str(part);
            if acc.len() > process::TAIL_BYTES as usize {
                let mut cut = acc.len() - process::TAIL_BYTES as usize;
                while !acc.is_char_boundary(cut) {
                    cut += 1;
                }
                acc.drain(..cut);
            }
        }
        if ended.stop != Stop::Exited {
            break;
        }
    }
    Ok(all)
}

/// A fresh private directory under the request's scratch directory, removed by
/// [`WorkDir::remove`]; and the tree's canonical path.
pub(crate) struct WorkDir {
    pub dir: PathBuf,
    pub root: PathBuf,
    /// The scratch directory itself (canonical), for caches that outlive one run.
    pub scratch: PathBuf,
}

impl WorkDir {
    /// Checks that the tree exists and that the scratch directory is outside it, then
    /// creates `<scratch>/<prefix>-<pid>-<n>`.
    pub fn create(req: &RunRequest, prefix: &str) -> Result<WorkDir, RunnerError> {
        let root = req.root.canonicalize().map_err(|_| RunnerError::RootNotFound { root: req.root.clone() })?;
        if !root.is_dir() {
            return Err(RunnerError::RootNotFound { root: req.root.clone() });
        }
        if resolve_lexically(&req.scratch).starts_with(&root) {
            return Err(RunnerError::ScratchInsideRoot { scratch: req.scratch.clone(), root });
        }
        std::fs::create_dir_all(&req.scratch).map_err(RunnerError::io("create the scratch directory", &req.scratch))?;
        let scratch = req.scratch.canonicalize().map_err(RunnerError::io("resolve", &req.scratch))?;
        if scratch.starts_with(&root) {
            return Err(RunnerError::ScratchInsideRoot { scratch: req.scratch.clone(), root });
        }
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let candidate = scratch.join(format!("{prefix}-{}-{n}", std::process::id()));
            match std::fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(RunnerError::io("create", &candidate)(e)),
            }
        };
        Ok(WorkDir { dir, root, scratch })
    }

    pub fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `path` made absolute with `.`/`..` resolved lexically and its longest existing prefix
/// canonicalized (symlinks followed), without creating anything.
fn resolve_lexically(path: &Path) -> PathBuf {
    let abs =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(path) };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    let mut existing = out.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return out,
        }
    }
    let mut resolved = existing.canonicalize().unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(rest.iter().rev());
    resolved
}

/// The error for a runner process that could not start: a missing tool names how to
/// install it; any other failure is a spawn error for `command`.
pub(crate) fn spawn_error(
    program: &str,
    install_hint: &str,
    command: &str,
    e: std::io::Error,
) -> crate::runner::RunnerError {
    use crate::runner::RunnerError;
    if e.kind() == std::io::ErrorKind::NotFound {
        RunnerError::ToolNotFound { program: program.into(), hint: install_hint.into() }
    } else {
        RunnerError::Spawn { command: command.into(), source: e }
    }
}

/// The last `n` non-empty lines of `text`, for messages.
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[derive(Default)]
    struct Count {
        begun: Vec<PathBuf>,
        ended: usize,
    }
    impl Progress for Count {
        fn poll(&mut self) -> bool {
            false
        }
    }
    impl StepReader for Count {
        fn begin(&mut self, stdout: &Path) {
            self.begun.push(stdout.to_path_buf());
        }
        fn end(&mut self, _: &Ended) {
            self.ended += 1;
        }
    }

    fn sh(script: &str) -> Step {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        Step { cmd, command_line: script.to_string() }
    }

    #[test]
    fn steps_run_in_order_and_a_killed_one_ends_the_attempt() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits::new(Instant::now() + Duration::from_secs(30), Duration::from_millis(400));
        let mut reader = Count::default();
        let steps = vec![sh("echo one"), sh("sleep 30"), sh("echo never")];
        let ended = run_steps(steps, dir.path(), "t", limits, &mut reader).unwrap();
        assert_eq!(ended.stop, Stop::NoProgress);
        assert_eq!(reader.begun.len(), 2);
        assert_eq!(reader.ended, 2);
        assert_eq!(ended.stdout_tail, "one\n");
        let ended = run_steps(vec![], dir.path(), "u", limits, &mut reader).unwrap();
        assert!(!ended.spawned);
    }

    #[test]
    fn scratch_inside_the_tree_is_refused_before_anything_is_created() {
        let root = tempfile::tempdir().unwrap();
        let req = RunRequest::new(
            root.path(),
            crate::runner::TestCommand::pytest("python3", vec![]),
            root.path().join("x/../s"),
        );
        assert!(matches!(WorkDir::create(&req, "go"), Err(RunnerError::ScratchInsideRoot { .. })));
        assert!(!root.path().join("s").exists());
        assert_eq!(last_lines("a\n\nb\nc\n", 2), "b\nc");
    }
}
