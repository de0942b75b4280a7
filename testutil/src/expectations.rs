//! Expectations written in a fixture's source, stack-graphs style: on the `def`/`class`
//! line of a definition, `# carve[pricing,core]: extracted` or
//! `# carve[reports]: remained(load,member)` says how classifying each named feature must
//! decide it. Whole comment lines (`# carve note …`) are prose, not expectations.

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One `carve[feature]: status` expectation on a definition.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Annotation {
    pub feature: String,
    /// The node id of the definition on that line.
    pub id: String,
    /// `extracted`, or `remained(<reasons>)` with the reasons as written.
    pub status: String,
}

/// Every expectation in the files of `index` (a serialized `DefinitionIndex` of `root`),
/// keyed by (feature, node id). An expectation on a line where no definition starts is an
/// error naming the line.
pub fn annotations(root: &Path, index: &impl Serialize) -> Result<BTreeMap<(String, String), Annotation>, String> {
    let index = serde_json::to_value(index).map_err(|e| format!("the index does not serialize: {e}"))?;
    let mut by_line: HashMap<(String, u64), String> = HashMap::new();
    for def in index["definitions"].as_object().into_iter().flat_map(|m| m.values()) {
        let (Some(path), Some(line), Some(id)) = (def["path"].as_str(), def["def_line"].as_u64(), def["id"].as_str())
        else {
            return Err(format!("a definition without path, def_line or id: {def}"));
        };
        by_line.insert((path.to_string(), line), id.to_string());
    }
    let mut found = BTreeMap::new();
    for path in index["files"].as_object().into_iter().flat_map(|m| m.keys()) {
        let text = std::fs::read_to_string(root.join(path)).map_err(|e| format!("failed to read {path}: {e}"))?;
        for (n, line) in text.lines().enumerate() {
            let number = n as u64 + 1;
            let Some((code, comment)) = line.split_once('#') else { continue };
            if code.trim().is_empty() {
                continue;
            }
            for (features, status) in parse_comment(comment) {
                let id = by_line.get(&(path.clone(), number)).ok_or_else(|| {
                    format!("{path}:{number}: a carve annotation on a line where no definition starts")
                })?;
                for feature in features.split(',') {
                    let a = Annotation { feature: feature.to_string(), id: id.clone(), status: status.clone() };
                    found.insert((a.feature.clone(), a.id.clone()), a);
                }
            }
        }
    }
    Ok(found)
}

/// The `carve[features]: status` items of one comment.
fn parse_comment(comment: &str) -> Vec<(String, String)> {
    let word =
        |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_,".contains(c));
    let mut out = Vec::new();
    let mut rest = comment;
    while let Some(start) = rest.find("carve[") {
        rest = &rest[start + "carve[".len()..];
        let Some((features, after)) = rest.split_once("]: ") else { break };
        if !word(features) {
            continue;
        }
        if after.starts_with("extracted") {
            out.push((features.to_string(), "extracted".to_string()));
        } else if let Some(reasons) = after.strip_prefix("remained(").and_then(|r| r.split_once(')')).map(|(r, _)| r) {
            if word(reasons) {
                out.push((features.to_string(), format!("remained({reasons})")));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_name_features_and_statuses() {
        assert_eq!(parse_comment(" carve[pricing]: extracted"), vec![("pricing".into(), "extracted".into())]);
        assert_eq!(
            parse_comment(" carve[a,b_2]: remained(load,member)"),
            vec![("a,b_2".into(), "remained(load,member)".into())]
        );
        assert!(parse_comment(" carve note: prose").is_empty());
        assert!(parse_comment(" carve[Bad]: extracted").is_empty());
    }

    #[test]
    fn an_annotation_must_sit_on_a_definition_line() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("m.py"), "def f():  # carve[x]: extracted\n    y = 1  # carve[x]: extracted\n")
            .unwrap();
        let index = serde_json::json!({
            "files": {"m.py": {}},
            "definitions": {"m.py::f": {"id": "m.py::f", "path": "m.py", "def_line": 1}},
        });
        let err = annotations(tmp.path(), &index).unwrap_err();
        assert!(err.contains("m.py:2"), "{err}");
        std::fs::write(tmp.path().join("m.py"), "def f():  # carve[x,y]: remained(p2p)\n").unwrap();
        let found = annotations(tmp.path(), &index).unwrap();
        let statuses: Vec<(&str, &str)> = found.values().map(|a| (a.feature.as_str(), a.status.as_str())).collect();
        assert_eq!(statuses, vec![("x", "remained(p2p)"), ("y", "remained(p2p)")]);
    }
}
