//! The probe map (`probe-map.json`): what carve hands a shim before a traced run, so the shim
//! can turn "the code object that starts at line L of file F" into a node number.
//!
//! The format is specified in `docs/trace-format.md`. Node numbers follow sorted node-id
//! order, every function has a key for its `def` line and (when decorated) its first
//! decorator's line, and classes are listed for naming callers in class bodies but never
//! probed (their numbers are in [`ProbeMap::classes`]). Output is deterministic.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::index::{DefinitionIndex, FileIndex, NodeId};

/// Version of `probe-map.json`; it moves together with the trace format version.
pub const PROBE_MAP_VERSION: u32 = 1;

/// One file of the probe map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeFile {
    /// Instrument this file (repository source); `false` for test code, whose definitions
    /// are listed only so callers in it can be named.
    pub probe: bool,
    /// 1-based line (serialized as a string key) -> node number.
    pub defs: BTreeMap<usize, usize>,
}

/// `probe-map.json`, see `docs/trace-format.md`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeMap {
    pub version: u32,
    /// Absolute path of the tree being run.
    pub root: String,
    /// `nodes[i]` is the node id of node number `i`, in sorted node-id order.
    pub nodes: Vec<NodeId>,
    pub files: BTreeMap<String, ProbeFile>,
    /// Node numbers of class-like definitions: listed in `defs` so that code in a class body
    /// can be named as a caller, but a shim must not put an entry probe on them. Sorted.
    #[serde(default)]
    pub classes: Vec<usize>,
}

impl ProbeMap {
    /// Builds the probe map of `index` for a run in `root` (the tree the tests run in, which
    /// may be a shadow copy of the repository); `probe` says which files the shim instruments
    /// (the others are listed so callers in them can be named).
    pub fn from_index(index: &DefinitionIndex, root: &Path, probe: impl Fn(&FileIndex) -> bool) -> ProbeMap {
        let nodes: Vec<NodeId> = index.definitions.keys().cloned().collect();
        let number: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
        let mut files: BTreeMap<String, ProbeFile> = index
            .files
            .iter()
            .map(|(path, file)| (path.clone(), ProbeFile { probe: probe(file), defs: BTreeMap::new() }))
            .collect();
        let mut classes = Vec::new();
        // Definitions in sorted id order: on a (theoretical) line clash the first id wins.
        for (i, def) in index.definitions.values().enumerate() {
            if def.kind.is_class_like() {
                classes.push(i);
            }
            let Some(file) = files.get_mut(&def.path) else {
                continue;
            };
            debug_assert_eq!(number.get(def.id.as_str()), Some(&i));
            file.defs.entry(def.def_line).or_insert(i);
            if def.span.start_line != def.def_line {
                file.defs.entry(def.span.start_line).or_insert(i);
            }
        }
        ProbeMap { version: PROBE_MAP_VERSION, root: root.to_string_lossy().into_owned(), nodes, files, classes }
    }

    /// Writes the map as pretty JSON with a final newline.
    pub fn write(&self, path: &Path) -> Result<(), ProbeMapError> {
        let mut text = serde_json::to_string_pretty(self).expect("a probe map always encodes");
        text.push('\n');
        std::fs::write(path, text).map_err(|source| ProbeMapError::Io { path: path.to_path_buf(), source })
    }

    /// Reads a map written by [`ProbeMap::write`], refusing an unknown version.
    pub fn read(path: &Path) -> Result<ProbeMap, ProbeMapError> {
        let io = |source| ProbeMapError::Io { path: path.to_path_buf(), source };
        let malformed = |message: String| ProbeMapError::Malformed { path: path.to_path_buf(), message };
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).map_err(io)?).map_err(|e| malformed(e.to_string()))?;
        match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(PROBE_MAP_VERSION) => {}
            Some(found) => return Err(ProbeMapError::UnsupportedVersion { path: path.to_path_buf(), found }),
            None => return Err(malformed("no `version` field".into())),
        }
        serde_json::from_value(value).map_err(|e| malformed(e.to_string()))
    }
}

/// Why a probe map could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeMapError {
    #[error("cannot write or read {}: {source}", path.display())]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("{}: malformed probe map: {message}", path.display())]
    Malformed { path: std::path::PathBuf, message: String },
    #[error(
        "{} has format version {found}, but this carve reads version {PROBE_MAP_VERSION}; write it again with this carve",
        path.display()
    )]
    UnsupportedVersion { path: std::path::PathBuf, found: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file probed except test files (what a shim for an interpreted language does).
    fn sources(files: &[(&str, &str)]) -> DefinitionIndex {
        let v: Vec<(String, Vec<u8>)> = files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
        DefinitionIndex::from_sources(&v)
    }

    fn not_test(f: &FileIndex) -> bool {
        !f.is_test
    }

    #[test]
    fn numbers_follow_sorted_ids_and_lines_cover_decorators() {
        // `parse` on line 12, `Parser` on 25, its `run` decorated on 28-29 and defined on 30.
        let mut core = vec![""; 40];
        core[11] = "def parse(): pass";
        core[24] = "class Parser:";
        core[27] = "    @staticmethod";
        core[28] = "    @other";
        core[29] = "    def run(): pass";
        let core = core.join("\n");
        let index = sources(&[("pkg/core.py", &core), ("tests/test_core.py", "\n\n\n\ndef test_parse():\n    pass\n")]);
        let map = ProbeMap::from_index(&index, Path::new("/abs/tree"), not_test);
        assert_eq!(
            map.nodes,
            ["pkg/core.py::Parser", "pkg/core.py::Parser.run", "pkg/core.py::parse", "tests/test_core.py::test_parse"]
        );
        let core = &map.files["pkg/core.py"];
        assert!(core.probe);
        assert_eq!(core.defs, BTreeMap::from([(12, 2), (25, 0), (28, 1), (30, 1)]));
        assert!(!map.files["tests/test_core.py"].probe);
        assert_eq!(map.classes, [0]);
        let json = serde_json::to_value(&map).unwrap();
        assert_eq!(json["files"]["pkg/core.py"]["defs"]["28"], 1);
        assert_eq!(json["root"], "/abs/tree");
    }

    #[test]
    fn write_then_read_round_trips_and_is_deterministic() {
        let index = sources(&[("a.py", "def f():\n    pass\ndef g():\n    pass\n")]);
        let dir = tempfile::tempdir().unwrap();
        let p1 = dir.path().join("one.json");
        let p2 = dir.path().join("two.json");
        let map = ProbeMap::from_index(&index, Path::new("/r"), not_test);
        map.write(&p1).unwrap();
        ProbeMap::from_index(&index, Path::new("/r"), not_test).write(&p2).unwrap();
        assert_eq!(std::fs::read(&p1).unwrap(), std::fs::read(&p2).unwrap());
        assert_eq!(ProbeMap::read(&p1).unwrap(), map);
    }

    #[test]
    fn read_refuses_unknown_version() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("probe-map.json");
        std::fs::write(&p, r#"{"version": 9, "root": "/", "nodes": [], "files": {}}"#).unwrap();
        let err = ProbeMap::read(&p).unwrap_err().to_string();
        assert!(err.contains("version 9") && err.contains("probe-map.json"), "{err}");
    }
}
