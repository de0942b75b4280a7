//! A fixture's written-down expected classification (`fixtures/<lang>/<name>/carve-expected.toml`,
//! one table per feature) checked against what `carve audit` reports — the same check for
//! every language.
//!
//! Keys of a feature table (all optional but `f2p`): `f2p`, `extracted` (exactly),
//! `remained` (each must be remained), `never_extracted`, `entry_points` (exactly),
//! `remained_whole_graph` (remained if reached at all), `reasons` (node → reason kinds that
//! must all be among carve's reasons for it), `moved_to_p2p` (exactly).

use std::collections::BTreeSet;

use serde_json::Value;

/// The expectations of fixture `rel` (`python/inventory`, …).
pub fn expectations(rel: &str) -> toml::Table {
    let path = carve_testutil::fixture(rel).join("carve-expected.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A TOML list of strings; a missing key is the empty set.
pub fn strings(v: Option<&toml::Value>) -> BTreeSet<String> {
    v.map_or_else(BTreeSet::new, |v| v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect())
}

/// A JSON list of strings.
pub fn json_strings(v: &Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

/// The `id`s of a JSON list of nodes.
pub fn ids(list: &Value) -> BTreeSet<String> {
    list.as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap().to_string()).collect()
}

/// Whether the classifier's serialized reason `tag` is of the sidecar's reason `kind`.
pub fn reason_matches(kind: &str, tag: &str) -> bool {
    match kind {
        "p2p" => tag == "executed_by_p2p",
        "import" => tag == "import_time",
        "load" => [
            "decorator",
            "base_class",
            "default_or_annotation",
            "class_body",
            "module_level",
            "exported",
            "referenced_by",
        ]
        .contains(&tag),
        "implementation" => tag == "implementation",
        "member" => tag == "has_remained_member",
        "parent" => tag == "parent_remained",
        other => panic!("unknown reason kind {other} in carve-expected.toml"),
    }
}

/// Check feature `name`'s expectations `f` against an audit report (`carve audit --format
/// json`, or a bundle's `audit.json`).
pub fn check_feature(name: &str, f: &toml::Value, report: &Value) {
    let extracted = ids(&report["extracted"]);
    let remained = ids(&report["remained"]);
    assert_eq!(extracted, strings(f.get("extracted")), "feature {name}: extracted set");
    for r in strings(f.get("remained")) {
        assert!(
            remained.contains(&r),
            "feature {name}: {r} must be remained; extracted={} remained={remained:?}",
            extracted.contains(&r)
        );
    }
    for r in strings(f.get("remained_whole_graph")) {
        assert!(!extracted.contains(&r), "feature {name}: {r} must be remained if reached, is extracted");
    }
    for n in strings(f.get("never_extracted")) {
        assert!(!extracted.contains(&n), "feature {name}: {n} must never be extracted");
    }
    if let Some(want) = f.get("entry_points") {
        let entries = json_strings(&report["entry_points"]);
        assert_eq!(entries, strings(Some(want)), "feature {name}: entry points");
    }
    if let Some(want) = f.get("moved_to_p2p") {
        assert_eq!(json_strings(&report["moved_to_p2p"]), strings(Some(want)), "feature {name}: moved to P2P");
    }
    let whole_graph = strings(f.get("remained_whole_graph"));
    let nodes = &report["classification"]["nodes"];
    for (node, kinds) in f.get("reasons").and_then(|r| r.as_table()).into_iter().flatten() {
        if !remained.contains(node) && whole_graph.contains(node) {
            continue; // reached only by a whole-run graph: need not be reported
        }
        let tags: Vec<&str> = nodes[node]["reasons"]
            .as_array()
            .unwrap_or_else(|| panic!("feature {name}: {node} has no reasons"))
            .iter()
            .map(|r| r["reason"].as_str().unwrap())
            .collect();
        for kind in kinds.as_array().unwrap() {
            let kind = kind.as_str().unwrap();
            assert!(
                tags.iter().any(|t| reason_matches(kind, t)),
                "feature {name}: {node} should have a `{kind}` reason, has {tags:?}"
            );
        }
    }
}
