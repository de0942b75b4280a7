//! JSON files with a `version` field, as the trace formats are written and read.

use std::path::Path;

use serde::Serialize;

use crate::trace::TraceError;

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
