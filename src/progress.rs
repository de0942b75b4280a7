//! Progress on a terminal, silence otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A spinner on stderr when it is a terminal; nothing otherwise.
    pub fn new() -> Progress {
        if !std::io::stderr().is_terminal() || std::env::var_os("CARVE_NO_PROGRESS").is_some() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed}] {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress { bar: Some(bar) }
    }

    pub fn step(&self, msg: impl Into<String>) {
        if let Some(b) = &self.bar {
            b.set_message(msg.into());
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
