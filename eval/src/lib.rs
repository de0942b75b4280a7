//! Evaluation on what carve makes: grading solution patches on Level 1/2 task bundles
//! ([`grade`]), running an agent command through a FeatureArc chain under the L4 protocol
//! or with L1–L3 feedback ([`arc_run`]), the run-results formats ([`results`]), the
//! papers' metrics ([`metrics`]) with bootstrap intervals over tasks ([`bootstrap`]),
//! reports ([`report`]) and self-contained HTML pages with SVG charts ([`html`]).
//!
//! Trees, patches and atomic writes are `carve-core`'s. It names no language: tests run
//! through the pipeline's test runs ([`carve_pipeline::runs`]), configured by the project's
//! `carve.toml` (or detected, as `carve init` would).

pub mod arc_run;
pub mod audit_html;
pub mod bootstrap;
pub mod chain;
mod charts;
pub mod grade;
pub mod guard;
pub mod html;
pub mod metrics;
pub mod plots;
pub mod progress;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod test_run;

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("could not {what} {}: {source}", path.display())]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{} is not a valid results or bundle file: {detail}", path.display())]
    Format { path: PathBuf, detail: String },
    /// A file of one of carve's formats that could not be read (it names the file).
    #[error(transparent)]
    Formats(#[from] carve_formats::FormatError),
    /// A file operation of `carve-core` (it names the path).
    #[error(transparent)]
    Fs(#[from] carve_core::fs::IoError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Environment(String),
    /// The project's `carve.toml` could not be read.
    #[error(transparent)]
    Config(#[from] carve_pipeline::Error),
}

impl Error {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io { what, path: path.to_path_buf(), source }
    }
}
