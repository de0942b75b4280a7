//! Reading the traces shims write (`<trace dir>/*.jsonl`, see `docs/trace-format.md`),
//! merging them by union into one [`Trace`], and carve's own canonical `trace.json`.
//!
//! A file from a writer that was killed (no `end` record, or a cut-off last line) is kept
//! and reported in [`Trace::partial`]; a file of an unknown format version is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use carve_languages::NodeId;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::json::{check_version, read_versioned_json, write_json_file};

/// Version of the trace format (the shim's `*.jsonl` and carve's merged `trace.json`).
pub const TRACE_VERSION: u32 = 1;

/// The pseudo-test that collects code run while modules load and tests are collected.
pub const IMPORT_TEST: &str = "<import>";

/// A test id as the runner names it (`path::Class::test[param]`), or [`IMPORT_TEST`].
pub type TestId = String;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("cannot read or write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("cannot encode {path}: {source}")]
    Encode { path: PathBuf, source: serde_json::Error },
    #[error("{path}:{line}: malformed trace record: {message}")]
    Malformed { path: PathBuf, line: usize, message: String },
    #[error(
        "{path} has format version {found}, but this carve reads version {supported}; \
         re-run `carve trace` with this carve (shim and carve must come from the same build)"
    )]
    UnsupportedVersion { path: PathBuf, found: u64, supported: u32 },
    #[error(
        "no trace files (*.jsonl) in {dir}: the shim did not run; check that the test command \
         loads carve's shim (TraceSetup's arguments) and that CARVE_TRACE_DIR reaches the test processes"
    )]
    NoTraceFiles { dir: PathBuf },
}

/// How edges were captured; see `docs/trace-format.md` (the one trace-mode type, shared with
/// the shims).
pub use carve_languages::trace::TraceMode;

/// The caller side of an edge. Serialized as a node id, `<module>PATH` or `<external>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Caller {
    /// A definition (probed code, or a definition in test code).
    Node(NodeId),
    /// Module-level code of a repository file (path relative to the root).
    Module(String),
    /// Code outside the repository: a library, the test runner, the standard library.
    External,
}

impl Caller {
    const MODULE: &'static str = "<module>";
    const EXTERNAL: &'static str = "<external>";

    /// Parses the serialized form; anything not `<module>…`/`<external>` is a node id.
    pub fn parse(text: &str) -> Caller {
        if text == Self::EXTERNAL {
            Caller::External
        } else if let Some(path) = text.strip_prefix(Self::MODULE) {
            Caller::Module(path.to_string())
        } else {
            Caller::Node(text.to_string())
        }
    }

    pub fn node(&self) -> Option<&str> {
        match self {
            Caller::Node(id) => Some(id),
            _ => None,
        }
    }
}

impl fmt::Display for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caller::Node(id) => f.write_str(id),
            Caller::Module(path) => write!(f, "{}{path}", Self::MODULE),
            Caller::External => f.write_str(Self::EXTERNAL),
        }
    }
}

impl Serialize for Caller {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Caller {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Caller::parse(&text))
    }
}

/// What one test executed: the union over every record of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestTrace {
    pub hits: BTreeSet<NodeId>,
    pub edges: BTreeSet<(Caller, NodeId)>,
}

/// A trace file whose writer did not finish.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PartialFile {
    /// File name inside the trace directory.
    pub file: String,
    pub reason: String,
}

/// Every test's hits and edges, merged over all trace files by union.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub version: u32,
    /// `exact` only when every file was written in exact mode.
    pub mode: TraceMode,
    pub tests: BTreeMap<TestId, TestTrace>,
    /// Files from writers that were killed or crashed, sorted by file name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partial: Vec<PartialFile>,
    /// Number of trace files read.
    pub files: usize,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Record {
    Header {
        #[serde(default)]
        mode: Option<TraceMode>,
    },
    Test {
        test: TestId,
        #[serde(default)]
        hits: Vec<NodeId>,
        #[serde(default)]
        edges: Vec<(Caller, NodeId)>,
    },
    End {},
    /// Kinds this reader does not know carry nothing it needs.
    #[serde(other)]
    Other,
}

impl Default for Trace {
    fn default() -> Self {
        Trace { version: TRACE_VERSION, mode: TraceMode::Exact, tests: BTreeMap::new(), partial: Vec::new(), files: 0 }
    }
}

impl Trace {
    /// Reads and merges every `*.jsonl` file of a shim's trace directory.
    pub fn read_dir(dir: &Path) -> Result<Trace, TraceError> {
        let io = |source| TraceError::Io { path: dir.to_path_buf(), source };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            if path.extension().is_some_and(|e| e == "jsonl") && path.is_file() {
                paths.push(path);
            }
        }
        if paths.is_empty() {
            return Err(TraceError::NoTraceFiles { dir: dir.to_path_buf() });
        }
        paths.sort();
        let mut trace = Trace::default();
        let mut headers = 0;
        for path in &paths {
            headers += trace.read_file(path)?;
        }
        if headers == 0 {
            // Nothing says every call was captured.
            trace.mode = TraceMode::FirstHits;
        }
        trace.partial.sort();
        Ok(trace)
    }

    /// Merges one `*.jsonl` file into `self`; returns the number of header records read.
    fn read_file(&mut self, path: &Path) -> Result<usize, TraceError> {
        let bytes = std::fs::read(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        self.files += 1;
        let lines: Vec<(usize, &[u8])> = bytes
            .split(|b| *b == b'\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
            .collect();
        let malformed =
            |line: usize, message: String| TraceError::Malformed { path: path.to_path_buf(), line, message };
        let mut partial = |reason: String| self.partial.push(PartialFile { file: name.clone(), reason });
        if lines.is_empty() {
            partial("empty: the process ended before writing its header".into());
            return Ok(0);
        }
        let last = lines.len() - 1;
        let mut records = Vec::new();
        for (i, (line_no, line)) in lines.iter().enumerate() {
            let value: serde_json::Value = match serde_json::from_slice(line) {
                Ok(v) => v,
                Err(_) if i == last => {
                    partial(format!("line {line_no} is cut off: the writer was killed mid-record"));
                    break;
                }
                Err(e) => return Err(malformed(*line_no, e.to_string())),
            };
            let kind = value.get("kind").and_then(serde_json::Value::as_str);
            if i == 0 && kind != Some("header") {
                return Err(malformed(*line_no, "the first record must be the `header`".into()));
            }
            if kind == Some("header") {
                check_version(path, &value, TRACE_VERSION)?;
            }
            let record: Record = serde_json::from_value(value).map_err(|e| malformed(*line_no, e.to_string()))?;
            records.push(record);
        }
        let mut ended = false;
        let mut headers = 0;
        for record in records {
            match record {
                Record::Header { mode } => {
                    headers += 1;
                    if mode.unwrap_or_default() == TraceMode::FirstHits {
                        self.mode = TraceMode::FirstHits;
                    }
                }
                Record::Test { test, hits, edges } => {
                    let entry = self.tests.entry(test).or_default();
                    entry.hits.extend(hits);
                    entry.edges.extend(edges);
                }
                Record::End {} => ended = true,
                Record::Other => {}
            }
        }
        let cut = self.partial.last().is_some_and(|p| p.file == name);
        if !ended && !cut {
            self.partial.push(PartialFile {
                file: name,
                reason: "no `end` record: the process was killed or crashed; finished tests are kept".into(),
            });
        }
        Ok(headers)
    }

    /// Merges another trace into this one (union of hits and edges).
    pub fn merge(&mut self, other: Trace) {
        if other.mode == TraceMode::FirstHits {
            self.mode = TraceMode::FirstHits;
        }
        for (test, t) in other.tests {
            let entry = self.tests.entry(test).or_default();
            entry.hits.extend(t.hits);
            entry.edges.extend(t.edges);
        }
        self.partial.extend(other.partial);
        self.partial.sort();
        self.partial.dedup();
        self.files += other.files;
    }

    /// The trace of one test id.
    pub fn test(&self, id: &str) -> Option<&TestTrace> {
        self.tests.get(id)
    }

    /// Whether any file came from a writer that did not finish.
    pub fn is_partial(&self) -> bool {
        !self.partial.is_empty()
    }

    /// SHA-256 (hex) of the canonical serialization of what was recorded: version, mode and
    /// tests. File names and counts (which carry process ids) are left out, so two runs that
    /// recorded the same data have the same digest.
    pub fn digest(&self) -> String {
        #[derive(Serialize)]
        struct Canonical<'a> {
            version: u32,
            mode: TraceMode,
            tests: &'a BTreeMap<TestId, TestTrace>,
        }
        let canonical = Canonical { version: self.version, mode: self.mode, tests: &self.tests };
        let mut hasher = Sha256::new();
        // Serializing BTreeMaps and BTreeSets cannot fail; an error would leave the digest of
        // the empty prefix, which is still deterministic.
        let _ = serde_json::to_writer(HashWriter(&mut hasher), &canonical);
        hex::encode(hasher.finalize())
    }

    /// Writes carve's merged `trace.json` (canonical: sorted, versioned).
    pub fn write_json(&self, path: &Path) -> Result<(), TraceError> {
        write_json_file(path, self, false)
    }

    /// Reads a `trace.json` written by [`Trace::write_json`], refusing an unknown version.
    pub fn read_json(path: &Path) -> Result<Trace, TraceError> {
        read_versioned_json(path, TRACE_VERSION)
    }
}

struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"kind": "header", "version": 1, "pid": 1, "python": "3.11.7", "native": true, "mode": "first-hits", "argv": []}"#;
    const EXACT_HEADER: &str = r#"{"kind": "header", "version": 1, "pid": 2, "python": "3.11.7", "native": true, "mode": "exact", "argv": []}"#;

    fn write(dir: &Path, name: &str, lines: &[&str], trailing_newline: bool) {
        let mut text = lines.join("\n");
        if trailing_newline {
            text.push('\n');
        }
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn merges_files_by_union() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "10-0.jsonl",
            &[
                HEADER,
                r#"{"kind": "test", "test": "t.py::a", "hits": ["p.py::f"], "edges": [["t.py::a", "p.py::f"]], "outcome": "passed"}"#,
                r#"{"kind": "test", "test": "<import>", "hits": ["p.py::reg"], "edges": [["<module>p.py", "p.py::reg"]]}"#,
                r#"{"kind": "end", "tests": 1}"#,
            ],
            true,
        );
        write(
            dir.path(),
            "11-0.jsonl",
            &[
                EXACT_HEADER,
                r#"{"kind": "test", "test": "t.py::a", "hits": ["p.py::g"], "edges": [["<external>", "p.py::g"]]}"#,
                r#"{"kind": "future_kind", "x": 1}"#,
                r#"{"kind": "end", "tests": 1}"#,
            ],
            true,
        );
        std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let trace = Trace::read_dir(dir.path()).unwrap();
        assert_eq!(trace.files, 2);
        assert_eq!(trace.mode, TraceMode::FirstHits);
        assert!(!trace.is_partial());
        let a = &trace.tests["t.py::a"];
        assert_eq!(a.hits.iter().map(String::as_str).collect::<Vec<_>>(), ["p.py::f", "p.py::g"]);
        assert!(a.edges.contains(&(Caller::External, "p.py::g".to_string())));
        assert!(a.edges.contains(&(Caller::Node("t.py::a".into()), "p.py::f".to_string())));
        let import = &trace.tests[IMPORT_TEST];
        assert!(import.edges.contains(&(Caller::Module("p.py".into()), "p.py::reg".to_string())));
    }

    #[test]
    fn all_exact_files_give_exact_mode() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.jsonl", &[EXACT_HEADER, r#"{"kind": "end", "tests": 0}"#], true);
        assert_eq!(Trace::read_dir(dir.path()).unwrap().mode, TraceMode::Exact);
    }

    #[test]
    fn truncated_last_line_marks_the_file_partial_and_keeps_finished_tests() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "7-0.jsonl",
            &[
                HEADER,
                r#"{"kind": "test", "test": "t.py::a", "hits": ["p.py::f"], "edges": []}"#,
                r#"{"kind": "test", "test": "t.py::b", "hits": ["p.py::"#,
            ],
            false,
        );
        let trace = Trace::read_dir(dir.path()).unwrap();
        assert_eq!(trace.partial.len(), 1, "{:?}", trace.partial);
        assert_eq!(trace.partial[0].file, "7-0.jsonl");
        assert!(trace.partial[0].reason.contains("line 3 is cut off"), "{}", trace.partial[0].reason);
        assert!(trace.tests.contains_key("t.py::a"));
        assert!(!trace.tests.contains_key("t.py::b"));
    }

    #[test]
    fn missing_end_record_marks_the_file_partial() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "8-0.jsonl",
            &[HEADER, r#"{"kind": "test", "test": "t.py::a", "hits": [], "edges": []}"#],
            true,
        );
        write(dir.path(), "9-0.jsonl", &[], false);
        let trace = Trace::read_dir(dir.path()).unwrap();
        let files: Vec<_> = trace.partial.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files, ["8-0.jsonl", "9-0.jsonl"]);
        assert!(trace.partial[0].reason.contains("no `end` record"));
        assert!(trace.partial[1].reason.contains("empty"));
        assert_eq!(trace.mode, TraceMode::FirstHits);
    }

    #[test]
    fn only_empty_files_give_first_hits_mode() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "9-0.jsonl", &[], false);
        let trace = Trace::read_dir(dir.path()).unwrap();
        assert_eq!(trace.mode, TraceMode::FirstHits);
        assert!(trace.is_partial());
    }

    #[test]
    fn unknown_version_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.jsonl", &[HEADER, r#"{"kind": "end", "tests": 0}"#], true);
        write(dir.path(), "2.jsonl", &[r#"{"kind": "header", "version": 2, "mode": "exact"}"#], true);
        let err = Trace::read_dir(dir.path()).unwrap_err();
        assert!(matches!(err, TraceError::UnsupportedVersion { found: 2, .. }));
        let msg = err.to_string();
        assert!(msg.contains("2.jsonl") && msg.contains("version 2"), "{msg}");
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.jsonl", &[HEADER, "{not json", r#"{"kind": "end", "tests": 0}"#], true);
        let msg = Trace::read_dir(dir.path()).unwrap_err().to_string();
        assert!(msg.contains("1.jsonl:2"), "{msg}");
    }

    #[test]
    fn a_file_without_header_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "1.jsonl", &[r#"{"kind": "end", "tests": 0}"#], true);
        assert!(Trace::read_dir(dir.path()).unwrap_err().to_string().contains("header"));
    }

    #[test]
    fn an_empty_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(Trace::read_dir(dir.path()), Err(TraceError::NoTraceFiles { .. })));
    }

    #[test]
    fn callers_serialize_as_in_the_format() {
        let edges = vec![
            (Caller::Node("a.py::f".into()), "a.py::g".to_string()),
            (Caller::Module("a.py".into()), "a.py::g".to_string()),
            (Caller::External, "a.py::g".to_string()),
        ];
        let json = serde_json::to_string(&edges).unwrap();
        assert_eq!(json, r#"[["a.py::f","a.py::g"],["<module>a.py","a.py::g"],["<external>","a.py::g"]]"#);
        let back: Vec<(Caller, String)> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, edges);
    }

    #[test]
    fn json_round_trip_and_digest_ignore_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let body = r#"{"kind": "test", "test": "t.py::a", "hits": ["p.py::f"], "edges": [["t.py::a", "p.py::f"]]}"#;
        write(dir.path(), "100-0.jsonl", &[HEADER, body], true);
        let one = Trace::read_dir(dir.path()).unwrap();
        let other = tempfile::tempdir().unwrap();
        write(other.path(), "200-0.jsonl", &[HEADER, body], true);
        let two = Trace::read_dir(other.path()).unwrap();
        assert_eq!(one.digest(), two.digest());
        assert_eq!(one.digest().len(), 64);

        let path = dir.path().join("trace.json");
        one.write_json(&path).unwrap();
        let back = Trace::read_json(&path).unwrap();
        assert_eq!(back, one);
        assert_eq!(back.digest(), one.digest());

        let mut changed = one.clone();
        changed.tests.get_mut("t.py::a").unwrap().hits.insert("p.py::g".into());
        assert_ne!(changed.digest(), one.digest());

        std::fs::write(&path, r#"{"version": 3, "mode": "exact", "tests": {}, "files": 0}"#).unwrap();
        assert!(matches!(Trace::read_json(&path), Err(TraceError::UnsupportedVersion { found: 3, .. })));
    }
}
