//! The tracing entry point every language's shim implements ([`TraceShim`]), and the types
//! it exchanges with the pipeline. Language-free: no language module is imported here.
//!
//! A traced run: the pipeline makes a shadow copy of the repository (`tree`), calls
//! [`TraceShim::prepare`], runs the language's runner on `tree` with the returned
//! [`TraceSetup`] (environment, arguments, module search path), then reads `trace_dir` with
//! `carve_tracer::trace::Trace::read_dir` (the format in `docs/trace-format.md`, the same for
//! every language: node ids from the index, the `<import>` pseudo-test for load-time code).
//! Test ids in the trace must be exactly the runner's ids.

pub mod probe_map;

use std::path::{Path, PathBuf};

use crate::index::DefinitionIndex;

/// How callers are captured (`CARVE_TRACE_MODE`, the `mode` of a trace file). The one
/// trace-mode type: the tracer and the binary re-use it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
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

impl std::fmt::Display for TraceMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for TraceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "first-hits" => Ok(TraceMode::FirstHits),
            "exact" => Ok(TraceMode::Exact),
            other => Err(format!("unknown trace mode `{other}` (known: first-hits, exact)")),
        }
    }
}

/// What a shim is given to prepare one traced run.
#[derive(Debug, Clone, Copy)]
pub struct TraceRequest<'a> {
    /// Index of the repository (node ids as in the trace).
    pub index: &'a DefinitionIndex,
    /// The user's repository (read-only, never written).
    pub repo: &'a Path,
    /// The shadow copy the tests will run in; writable: a shim may rewrite the project's own
    /// source files here (probes).
    pub tree: &'a Path,
    /// A folder carve keeps for the shim (its output folder; may be reused across runs):
    /// the shim installs its runtime and writes what it hands the runtime under it.
    pub shim_dir: &'a Path,
    /// Where the runtime writes its trace files (`docs/trace-format.md`).
    pub trace_dir: &'a Path,
    pub mode: TraceMode,
    /// The variables of the environment `carve env` made (`CARGO_HOME` …), whose installed
    /// files are already in `tree`: a shim that runs the project's tool while installing
    /// (Rust: `cargo metadata`) runs it with them. Empty without an environment.
    pub env: &'a [(String, String)],
}

/// How to run the tests traced, as [`TraceShim::prepare`] returns it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSetup {
    /// Added to the traced test run's environment.
    pub env: Vec<(String, String)>,
    /// Extra runner arguments (pytest `-p plugin`, `go test -p 1 -parallel 1`, vitest
    /// `--setupFiles` …).
    pub args: Vec<String>,
    /// Prepended to the language's module search path (`PYTHONPATH`, `NODE_PATH`); often empty.
    pub path_entries: Vec<PathBuf>,
    /// The fast recorder is in use (`false`: a slower fallback).
    pub native: bool,
    /// Warnings to show the user.
    pub notes: Vec<String>,
}

/// Why a shim could not prepare a traced run. The message says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceShimError {
    #[error("cannot write {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// Anything else, with the shim's own message (naming the file or tool and the fix).
    #[error("{message}")]
    Setup { message: String },
}

/// One language's tracing shim: installs its runtime for a traced run and says how to run
/// the tests under it.
pub trait TraceShim: Sync {
    /// For messages: `Python`.
    fn name(&self) -> &'static str;
    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError>;
    /// Whether the fast recorder would be used, without installing anything (reported for
    /// a trace taken from the cache). Shims without a fast recorder keep the default.
    fn native_available(&self) -> bool {
        false
    }
}
