//! The probe map (`probe-map.json`): what carve hands a shim before a traced run, so the shim
//! can turn "the code object that starts at line L of file F" into a node number.
//!
//! The format is specified in `docs/trace-format.md`. Node numbers follow sorted node-id
//! order, every function has a key for its `def` line and (when decorated) its first
//! decorator's line, and classes are listed for naming callers in class bodies but never
//! probed (their numbers are in [`ProbeMap::classes`]). Output is deterministic.

use std::collections::BTreeMap;
use std::path::Path;

use carve_languages::{DefinitionIndex, DefinitionKind, Language, NodeId};
use serde::{Deserialize, Serialize};

use crate::trace::TraceError;

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
    /// may be a shadow copy of the repository).
    pub fn from_index(index: &DefinitionIndex, root: &Path) -> ProbeMap {
        let nodes: Vec<NodeId> = index.definitions.keys().cloned().collect();
        let number: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
        let mut files: BTreeMap<String, ProbeFile> = index
            .files
            .iter()
            .map(|(path, file)| {
                let probe = file.language == Language::Python && !file.is_test;
                (path.clone(), ProbeFile { probe, defs: BTreeMap::new() })
            })
            .collect();
        let mut classes = Vec::new();
        // Definitions in sorted id order: on a (theoretical) line clash the first id wins.
        for (i, def) in index.definitions.values().enumerate() {
            if is_class_like(def.kind) {
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

    /// Writes the map as pretty JSON.
    pub fn write(&self, path: &Path) -> Result<(), TraceError> {
        write_json_file(path, self, true)
    }

    /// Reads a map written by [`ProbeMap::write`], refusing an unknown version.
    pub fn read(path: &Path) -> Result<ProbeMap, TraceError> {
        read_versioned_json(path, PROBE_MAP_VERSION)
    }
}

/// Types whose body runs once when they are defined, not on every call.
pub(crate) fn is_class_like(kind: DefinitionKind) -> bool {
    matches!(
        kind,
        DefinitionKind::Class
            | DefinitionKind::Struct
            | DefinitionKind::Enum
            | DefinitionKind::Trait
            | DefinitionKind::Interface
            | DefinitionKind::Impl
    )
}

/// Write `value` as JSON (pretty or compact) with a final newline.
pub(crate) fn write_json_file<T: Serialize>(path: &Path, value: &T, pretty: bool) -> Result<(), TraceError> {
    let encoded = if pretty { serde_json::to_string_pretty(value) } else { serde_json::to_string(value) };
    let mut text = encoded.map_err(|source| TraceError::Encode { path: path.to_path_buf(), source })?;
    text.push('\n');
    std::fs::write(path, text).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })
}

/// Read a JSON file carrying a `version` field, refusing any version but `supported`.
pub(crate) fn read_versioned_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    supported: u32,
) -> Result<T, TraceError> {
    let bytes = std::fs::read(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| TraceError::Malformed {
        path: path.to_path_buf(),
        line: e.line(),
        message: e.to_string(),
    })?;
    check_version(path, &value, supported)?;
    serde_json::from_value(value).map_err(|e| TraceError::Malformed {
        path: path.to_path_buf(),
        line: 1,
        message: e.to_string(),
    })
}

pub(crate) fn check_version(path: &Path, value: &serde_json::Value, supported: u32) -> Result<(), TraceError> {
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(supported) => Ok(()),
        Some(v) => Err(TraceError::UnsupportedVersion { path: path.to_path_buf(), found: v, supported }),
        None => Err(TraceError::Malformed { path: path.to_path_buf(), line: 1, message: "no `version` field".into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::IndexBuilder;

    #[test]
    fn numbers_follow_sorted_ids_and_lines_cover_decorators() {
        let index = IndexBuilder::new()
            .file("pkg/core.py", false)
            .file("tests/test_core.py", true)
            .func("pkg/core.py::parse", 12)
            .decorated_func("pkg/core.py::Parser.run", 30, 28)
            .class("pkg/core.py::Parser", 25)
            .func("tests/test_core.py::test_parse", 5)
            .build();
        let map = ProbeMap::from_index(&index, Path::new("/abs/tree"));
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
        let index = IndexBuilder::new().file("a.py", false).func("a.py::f", 1).func("a.py::g", 3).build();
        let dir = tempfile::tempdir().unwrap();
        let p1 = dir.path().join("one.json");
        let p2 = dir.path().join("two.json");
        let map = ProbeMap::from_index(&index, Path::new("/r"));
        map.write(&p1).unwrap();
        ProbeMap::from_index(&index, Path::new("/r")).write(&p2).unwrap();
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
