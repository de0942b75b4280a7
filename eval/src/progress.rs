//! Progress on a terminal (which instance or stage, elapsed, remaining), nothing otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar of `len` steps on stderr when it is a terminal (and `CARVE_NO_PROGRESS` is
    /// unset); silent otherwise.
    pub fn new(len: u64, what: &str) -> Progress {
        if !std::io::stderr().is_terminal() || std::env::var_os("CARVE_NO_PROGRESS").is_some() {
            return Progress::hidden();
        }
        let bar = ProgressBar::new(len);
        let template = format!("{{spinner}} {what} {{pos}}/{{len}} [{{elapsed}} elapsed, ~{{eta}} left] {{msg}}");
        bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar: Some(bar) }
    }

    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

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

    /// A line that stays: above the bar, or on stderr.
    pub fn note(&self, msg: impl AsRef<str>) {
        match &self.bar {
            Some(b) => b.println(msg.as_ref()),
            None => eprintln!("{}", msg.as_ref()),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
