//! Reading a format with its version checked, and writing it as carve's writers do.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

/// The `version` a format's files hold: a number, or (`instance.json`, whose `version` is
/// SWE-bench's field) a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Number(u32),
    Text(&'static str),
}

impl Version {
    fn matches(self, found: &serde_json::Value) -> bool {
        match self {
            Version::Number(n) => found.as_u64() == Some(u64::from(n)),
            Version::Text(t) => found.as_str() == Some(t),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Version::Number(n) => write!(f, "{n}"),
            Version::Text(t) => write!(f, "\"{t}\""),
        }
    }
}

/// A file format: its name in messages, the version this carve reads and writes, and (for
/// the results files, which share a reader) the `kind` its files carry.
pub trait Format: Serialize + DeserializeOwned {
    /// What the file is called (`chain.json`).
    const FILE: &'static str;
    const VERSION: Version;
    /// The `kind` field of its files, when the format has one.
    const KIND: Option<&'static str> = None;
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    #[error("could not read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is not valid JSON: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{} is of kind `{found}`, not `{expected}`", path.display())]
    Kind { path: PathBuf, expected: &'static str, found: String },
    #[error(
        "{} is {file} version {found}; this carve reads version {expected} (make it again with this carve, or read it with the carve that wrote it)",
        path.display()
    )]
    Version { path: PathBuf, file: &'static str, found: String, expected: Version },
    #[error("{} is not a valid {file}: {source}", path.display())]
    Shape { path: PathBuf, file: &'static str, source: serde_json::Error },
}

impl FormatError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FormatError::Io { path, .. }
            | FormatError::Json { path, .. }
            | FormatError::Kind { path, .. }
            | FormatError::Version { path, .. }
            | FormatError::Shape { path, .. } => path,
        }
    }
}

/// Read a file of format `T`: its kind and version are checked before its fields, so a file
/// of another version is refused as such rather than for a field it lacks.
pub fn read<T: Format>(path: &Path) -> Result<T, FormatError> {
    let text = std::fs::read_to_string(path).map_err(|source| FormatError::Io { path: path.to_path_buf(), source })?;
    from_str(&text, path)
}

/// [`read`] of text already in hand; `path` names it in errors.
pub fn from_str<T: Format>(text: &str, path: &Path) -> Result<T, FormatError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|source| FormatError::Json { path: path.to_path_buf(), source })?;
    if let Some(kind) = T::KIND {
        let found = value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        if found != kind {
            return Err(FormatError::Kind { path: path.to_path_buf(), expected: kind, found: found.to_string() });
        }
    }
    let found = value.get("version").unwrap_or(&serde_json::Value::Null);
    if !T::VERSION.matches(found) {
        let found = if found.is_null() { "(none)".to_string() } else { found.to_string() };
        return Err(FormatError::Version { path: path.to_path_buf(), file: T::FILE, found, expected: T::VERSION });
    }
    serde_json::from_value(value).map_err(|source| FormatError::Shape {
        path: path.to_path_buf(),
        file: T::FILE,
        source,
    })
}

/// The bytes carve writes for a format's file: pretty JSON (two-space indent) and a newline.
pub fn to_pretty<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
