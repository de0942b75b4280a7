//! Progress per repository and stage: one line each on a terminal (`[3/40] owner/name: trace`,
//! and the stage's time when it ends), nothing otherwise unless `CARVE_PROGRESS=lines` asks
//! for the lines anyway (batch logs). Failures are always reported.

use std::io::IsTerminal;

#[derive(Debug, Clone)]
pub struct Reporter {
    lines: bool,
}

impl Default for Reporter {
    fn default() -> Self {
        Reporter::new()
    }
}

impl Reporter {
    pub fn new() -> Reporter {
        let forced = std::env::var("CARVE_PROGRESS").is_ok_and(|v| v == "lines");
        let quiet = std::env::var_os("CARVE_NO_PROGRESS").is_some();
        Reporter { lines: forced || (!quiet && std::io::stderr().is_terminal()) }
    }

    /// A reporter that prints nothing but failures.
    pub fn quiet() -> Reporter {
        Reporter { lines: false }
    }

    pub fn stage(&self, at: &Position, stage: &str) {
        if self.lines {
            eprintln!("{at} {stage}");
        }
    }

    pub fn stage_done(&self, at: &Position, stage: &str, seconds: f64, note: &str) {
        if self.lines {
            let note = if note.is_empty() { String::new() } else { format!(": {note}") };
            eprintln!("{at} {stage} done in {seconds:.1}s{note}");
        }
    }

    pub fn note(&self, at: &Position, msg: &str) {
        if self.lines {
            eprintln!("{at} {msg}");
        }
    }

    pub fn failed(&self, at: &Position, stage: &str, reason: &str) {
        eprintln!("{at} FAILED in {stage}: {reason}");
    }
}

/// `[n/total] owner/name`.
#[derive(Debug, Clone)]
pub struct Position {
    pub n: usize,
    pub total: usize,
    pub name: String,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}/{}] {}", self.n, self.total, self.name)
    }
}
