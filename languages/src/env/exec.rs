//! Running one install step: its own process group, stdin closed, output to files, killed
//! with everything it started when it runs past its timeout (a hanging install never blocks
//! carve), and the output's tail kept for the error that names it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use carve_core::process::{self, Limits, Progress, Stop};

/// How one step ended.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// The command line as run (templates expanded).
    pub command: String,
    /// `None` when it was killed or could not start.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Why it could not start, when it did not.
    pub spawn_error: Option<String>,
    /// The last lines of its output (stdout, then stderr).
    pub tail: String,
    pub seconds: f64,
}

impl StepOutcome {
    pub fn ok(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && self.spawn_error.is_none()
    }
}

struct Quiet;

impl Progress for Quiet {
    fn poll(&mut self) -> bool {
        false
    }
}

/// Run `argv` in `dir` with `vars` added, at most `timeout`; its output goes to `log`
/// (`<log>.out`, `<log>.err`).
pub fn run(argv: &[String], dir: &Path, vars: &[(String, String)], timeout: Duration, log: &Path) -> StepOutcome {
    let command = super::shell::join(argv);
    let started = Instant::now();
    let failed = |e: String| StepOutcome {
        command: command.clone(),
        exit_code: None,
        timed_out: false,
        spawn_error: Some(e),
        tail: String::new(),
        seconds: started.elapsed().as_secs_f64(),
    };
    let Some((program, args)) = argv.split_first() else { return failed("an empty command".into()) };
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let (out, err): (PathBuf, PathBuf) = (log.with_extension("out"), log.with_extension("err"));
    if let Some(parent) = log.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let limits = Limits::new(Instant::now() + timeout, timeout);
    match process::supervise(cmd, &out, &err, limits, &mut Quiet) {
        Ok(ended) => StepOutcome {
            command,
            exit_code: if ended.stop == Stop::Exited { ended.exit_code } else { None },
            timed_out: ended.stop != Stop::Exited,
            spawn_error: None,
            tail: ended.tail(),
            seconds: started.elapsed().as_secs_f64(),
        },
        Err(e) => failed(format!("could not start `{program}`: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<String> {
        ws.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exit_codes_output_and_timeouts() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("logs/step");
        let ok = run(
            &words(&["sh", "-c", "echo hi $X"]),
            d.path(),
            &[("X".into(), "there".into())],
            Duration::from_secs(30),
            &log,
        );
        assert!(ok.ok(), "{ok:?}");
        assert_eq!(ok.tail.trim(), "hi there");
        let bad = run(&words(&["sh", "-c", "echo oops >&2; exit 3"]), d.path(), &[], Duration::from_secs(30), &log);
        assert_eq!((bad.exit_code, bad.tail.trim()), (Some(3), "oops"));
        let hung = run(&words(&["sh", "-c", "sleep 30"]), d.path(), &[], Duration::from_millis(300), &log);
        assert!(hung.timed_out && hung.exit_code.is_none() && hung.seconds < 10.0, "{hung:?}");
        let missing = run(&words(&["carve-no-such-program"]), d.path(), &[], Duration::from_secs(5), &log);
        assert!(missing.spawn_error.as_deref().is_some_and(|e| e.contains("carve-no-such-program")), "{missing:?}");
    }
}
