//! Progress on a terminal, silence otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    bar: Option<ProgressBar>,
    /// `CARVE_TIMINGS=1`: print each step with the time since start, for profiling.
    timings: Option<std::time::Instant>,
}

impl Progress {
    /// A spinner on stderr when it is a terminal; nothing otherwise.
    pub fn new() -> Progress {
        let timings = std::env::var_os("CARVE_TIMINGS").map(|_| std::time::Instant::now());
        if !std::io::stderr().is_terminal() || std::env::var_os("CARVE_NO_PROGRESS").is_some() {
            return Progress { bar: None, timings };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar), timings }
    }

    pub fn step(&self, msg: impl Into<String>) {
        let msg = msg.into();
        if let Some(t) = self.timings {
            eprintln!("[{:8.3}s] {msg}", t.elapsed().as_secs_f64());
        }
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// A line that stays (warnings and the like) — printed above the spinner, or to stderr.
    pub fn note(&self, msg: impl AsRef<str>) {
        match &self.bar {
            Some(b) => b.println(msg.as_ref()),
            None => eprintln!("{}", msg.as_ref()),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
