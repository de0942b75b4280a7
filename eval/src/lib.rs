//! Evaluation on what carve makes: grading solution patches on Level 1/2 task bundles
//! ([`grade`]), running an agent command through a FeatureArc chain under the L4 protocol
//! or with L1–L3 feedback ([`arc_run`]), the run-results formats ([`results`]), the
//! papers' metrics ([`metrics`]) with bootstrap intervals over tasks ([`bootstrap`]),
//! reports ([`report`]) and self-contained HTML pages with SVG charts ([`html`]).
//!
//! It names no language: tests run through `carve-languages`' runners, chosen by the
//! project's `carve.toml` (or detected, as `carve init` would).

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
pub mod project;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod tree;

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
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Environment(String),
}

impl Error {
    pub(crate) fn io(what: &'static str, path: &Path, source: std::io::Error) -> Error {
        Error::Io { what, path: path.to_path_buf(), source }
    }
}
