//! carve's tracing data and what it decides from it.
//!
//! - [`probe_map`]: the `probe-map.json` carve hands a shim before a traced run (defined
//!   in `carve_languages::trace::probe_map`, next to the shims that write it; re-exported).
//! - [`trace`]: reading the shims' `*.jsonl` traces (merged by union, partial files
//!   reported, unknown versions refused) and carve's canonical `trace.json`.
//! - [`graph`]: the object dependency graph (petgraph) of the definition index and a trace:
//!   run-time calls, containment, static references and load-time needs.
//! - [`classify`]: the BFS that splits the definitions a group of fail-to-pass tests reaches
//!   into *extracted* (the feature) and *remained* (what the rest still needs), with a
//!   structured reason on every decision. Its rules live one per file in
//!   `src/classify/rules/`; `rules/mod.rs` lists them in order and says how to add one.
//!
//! Formats are specified in `docs/trace-format.md` (probe map, trace) and `docs/formats.md`
//! (classification). Running the tests themselves is the job of `carve-languages`' runners
//! and the CLI; this crate is pure data and deterministic.

pub mod classify;
pub mod graph;
mod json;
pub use carve_languages::trace::probe_map;
pub mod trace;

#[cfg(test)]
mod testutil;

pub use classify::{
    CLASSIFICATION_VERSION, Classification, ClassifyError, ClassifyOptions, Decision, Reason, Status, classify,
    classify_with, classify_with_entries, entry_points,
};
pub use graph::{EdgeKind, GraphCounts, ObjectGraph};
pub use probe_map::{PROBE_MAP_VERSION, ProbeFile, ProbeMap};
pub use trace::{Caller, IMPORT_TEST, PartialFile, TRACE_VERSION, TestId, TestTrace, Trace, TraceError, TraceMode};
