//! Tracing shims, language-free: what the pipeline hands a language's shim before a traced
//! run ([`TraceRequest`]) and what the shim hands back ([`TraceSetup`]): environment and
//! runner arguments for the run. After [`TraceShim::prepare`] the pipeline runs the
//! language's runner on [`TraceRequest::tree`] with them and reads
//! [`TraceRequest::trace_dir`] (the format of `docs/trace-format.md`, the same for every
//! language: node ids from the index, the `<import>` pseudo-test for load-time code).

use std::path::{Path, PathBuf};

use crate::index::DefinitionIndex;

/// How callers are captured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceMode {
    /// The caller of each callee is captured on its first hits in each test (cheap).
    #[default]
    FirstHits,
    /// The caller is captured on every call (for audits; slower).
    Exact,
}

impl TraceMode {
    pub fn as_str(self) -> &'static str {
        match self {
            TraceMode::FirstHits => "first-hits",
            TraceMode::Exact => "exact",
        }
    }
}

/// What a shim needs to prepare one traced run.
pub struct TraceRequest<'a> {
    /// Index of the repository (node ids as in the trace).
    pub index: &'a DefinitionIndex,
    /// The user's repository (read-only, never written).
    pub repo: &'a Path,
    /// The shadow copy the tests will run in; writable: a shim may rewrite the project's own
    /// source files here (probes).
    pub tree: &'a Path,
    /// A private folder for the shim's runtime (may be reused).
    pub shim_dir: &'a Path,
    /// Where the runtime writes its trace files (docs/trace-format.md).
    pub trace_dir: &'a Path,
    pub mode: TraceMode,
}

/// How to run the tests traced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSetup {
    /// Added to the traced test run's environment.
    pub env: Vec<(String, String)>,
    /// Extra runner arguments.
    pub args: Vec<String>,
    /// Prepended to the language's module search path (PYTHONPATH, NODE_PATH); often empty.
    pub path_entries: Vec<PathBuf>,
    /// The fast recorder is in use (false: a slower fallback).
    pub native: bool,
    /// Warnings to show the user.
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceShimError {
    #[error("cannot {action} {path}: {source}")]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("cannot trace: {0}")]
    Unsupported(String),
}

impl TraceShimError {
    pub fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> TraceShimError + 'a {
        move |source| TraceShimError::Io { action, path: path.to_path_buf(), source }
    }
}

/// A language's tracer.
pub trait TraceShim: Sync {
    fn name(&self) -> &'static str;
    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError>;
}

/// The tracing shim of `language` behind [`TraceShim`], if it has one. Python's shim is
/// driven by the pipeline directly for now (`python::shim`); this is the stand-in for
/// `support(language).trace_shim()` of the language registry.
pub fn shim_for(language: crate::Language) -> Option<&'static dyn TraceShim> {
    match language {
        crate::Language::TypeScript | crate::Language::JavaScript => Some(&crate::typescript::trace::SHIM),
        _ => None,
    }
}
