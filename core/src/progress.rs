//! One progress reporter for every command: a spinner ([`Progress::spinner`]) or a bar of
//! known length ([`Progress::bar`]) on stderr when it is a terminal and `CARVE_NO_PROGRESS`
//! is unset, silence otherwise; lines that stay ([`Progress::note`]) go above it or to
//! stderr. `CARVE_TIMINGS=1` prints each step with the time since start, for profiling.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A spinner or a bar on a terminal, nothing otherwise; cleared when dropped.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// `CARVE_TIMINGS=1`: when the reporter started.
    timings: Option<Instant>,
}

fn shown() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CARVE_NO_PROGRESS").is_none()
}

impl Progress {
    /// A spinner with the elapsed time and the current step.
    pub fn spinner() -> Progress {
        if !shown() {
            return Progress::hidden();
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar), ..Progress::hidden() }
    }

    /// A bar of `len` steps named `what` (which instance or stage, elapsed, remaining).
    pub fn bar(len: u64, what: &str) -> Progress {
        if !shown() {
            return Progress::hidden();
        }
        let bar = ProgressBar::new(len);
        let template = format!("{{spinner}} {what} {{pos}}/{{len}} [{{elapsed}} elapsed, ~{{eta}} left] {{msg}}");
        bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar), ..Progress::hidden() }
    }

    /// Nothing on the terminal (timings still print when asked for).
    pub fn hidden() -> Progress {
        Progress { bar: None, timings: std::env::var_os("CARVE_TIMINGS").map(|_| Instant::now()) }
    }

    /// The current step: the spinner's or bar's message, and a timing line when asked for.
    pub fn step(&self, msg: impl Into<String>) {
        let msg = msg.into();
        if let Some(t) = self.timings {
            eprintln!("[{:8.3}s] {msg}", t.elapsed().as_secs_f64());
        }
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// The bar's message, without a timing line.
    pub fn message(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
        }
    }

    pub fn set_position(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    pub fn inc(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    /// A line that stays (warnings and the like): above the bar, or on stderr.
    pub fn note(&self, msg: impl AsRef<str>) {
        match &self.bar {
            Some(b) => b.println(msg.as_ref()),
            None => eprintln!("{}", msg.as_ref()),
        }
    }

    /// Clears the bar before the reporter is dropped (dropping it does too).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
