//! The run-results formats (docs/formats.md, "Evaluation results"): one JSON per run.
//!
//! - [`ArcRun`] (`kind = "arc-run"`): one agent through one chain under L4 (or L1–L3
//!   feedback) — per stage the agent's exit, time and diff, and the hidden stage gate; then
//!   the chain gate. Written by `carve arc run`, read by `carve arc report`.
//! - [`GradeRun`] (`kind = "grade"`): solutions graded on L1/L2 task bundles — per instance
//!   `resolved`, `passed_rate` and per-test statuses. Written by `carve grade`, read by
//!   `carve report`.
//!
//! The types are `carve_formats::results`' (re-exported here); readers refuse a kind or a
//! version they do not know.

use std::path::Path;

use crate::Error;

pub use carve_formats::results::{
    ARC_RUN_VERSION, AgentTurn, ArcRun, DiffStats, GRADE_VERSION, Gate, GradeRun, GradedInstance, StageResult, Statuses,
};

/// Read `run.json`: refused unless its kind is `arc-run` and its version this carve's.
pub fn read_arc_run(path: &Path) -> Result<ArcRun, Error> {
    Ok(carve_formats::read(path)?)
}

/// Read `grade.json`: refused unless its kind is `grade` and its version this carve's.
pub fn read_grade_run(path: &Path) -> Result<GradeRun, Error> {
    Ok(carve_formats::read(path)?)
}

/// Results files named on the command line: files as given, directories searched for
/// `name` (`run.json`, `grade.json`) recursively, sorted.
pub fn collect_files(args: &[std::path::PathBuf], name: &str) -> Result<Vec<std::path::PathBuf>, Error> {
    let mut out = Vec::new();
    for a in args {
        if a.is_dir() {
            let mut stack = vec![a.clone()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).map_err(|e| Error::io("list", &d, e))? {
                    let p = e.map_err(|e| Error::io("list", &d, e))?.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.file_name().is_some_and(|n| n == name) {
                        out.push(p);
                    }
                }
            }
        } else if a.is_file() {
            out.push(a.clone());
        } else {
            return Err(Error::io("read", a, std::io::Error::from(std::io::ErrorKind::NotFound)));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}
