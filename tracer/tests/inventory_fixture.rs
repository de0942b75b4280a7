//! The classifier on a real trace: index `fixtures/python/inventory`, write the probe map,
//! run its pytest suite under the Python shim (pure-Python recorder, so no build is needed),
//! read the trace and classify every feature of `carve-expected.toml`, which must match.
//!
//! The expectations are written twice, as `# carve[feature]: status` comments on the
//! definitions (stack-graphs style) and in `carve-expected.toml`; both tests first check
//! that the two agree.
//!
//! Needs `python3` with pytest; without them the classification test is ignored (in CI,
//! where `CI` is set, it fails instead).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use carve_languages::DefinitionIndex;
use carve_languages::index::IndexOptions;
use carve_testutil::{copy_dir, fixture, needs, workspace_root};
use carve_tracer::{IMPORT_TEST, ObjectGraph, Trace, classify};

fn strings(value: &toml::Value, key: &str) -> BTreeSet<String> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is a list"))
        .iter()
        .map(|v| v.as_str().expect("strings").to_string())
        .collect()
}

/// `carve-expected.toml` of the fixture at `root`, after checking that the comments on its
/// definitions say the same: every `extracted` of a feature is `carve[feature]: extracted`
/// on that definition, every `remained` one `carve[feature]: remained(<its reasons>)`, and
/// no comment says more.
fn expectations_checked_against_comments(root: &Path, index: &DefinitionIndex) -> toml::Value {
    let expected: toml::Value =
        toml::from_str(&std::fs::read_to_string(root.join("carve-expected.toml")).unwrap()).unwrap();
    let mut from_toml: BTreeMap<(String, String), String> = BTreeMap::new();
    for (name, feature) in expected["features"].as_table().expect("[features]") {
        for id in strings(feature, "extracted") {
            from_toml.insert((name.clone(), id), "extracted".into());
        }
        for id in strings(feature, "remained") {
            let reasons = feature["reasons"][&id].as_array().unwrap_or_else(|| panic!("{name}: no reasons for {id}"));
            let reasons: Vec<&str> = reasons.iter().map(|r| r.as_str().expect("a reason")).collect();
            from_toml.insert((name.clone(), id), format!("remained({})", reasons.join(",")));
        }
    }
    let from_comments: BTreeMap<(String, String), String> = carve_testutil::annotations(root, index)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|(key, a)| (key, a.status))
        .collect();
    let keys: BTreeSet<&(String, String)> = from_toml.keys().chain(from_comments.keys()).collect();
    let disagree: Vec<String> = keys
        .into_iter()
        .filter(|k| from_toml.get(*k) != from_comments.get(*k))
        .map(|(f, id)| {
            format!(
                "{f} {id}: comment says {:?}, toml says {:?}",
                from_comments.get(&(f.clone(), id.clone())),
                from_toml.get(&(f.clone(), id.clone()))
            )
        })
        .collect();
    assert!(disagree.is_empty(), "comments and carve-expected.toml disagree:\n{}", disagree.join("\n"));
    assert!(from_comments.len() > 100, "only {} annotations", from_comments.len());
    expected
}

#[test]
fn inventory_comments_agree_with_carve_expected() {
    let root = fixture("python/inventory");
    let index = DefinitionIndex::build(&root, &IndexOptions::default()).unwrap();
    expectations_checked_against_comments(&root, &index);
}

#[needs("python3", "pytest")]
fn inventory_fixture_classification_matches_expectations() {
    let ws = workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    copy_dir(&fixture("python/inventory"), &repo);
    let shim = tmp.path().join("shim");
    copy_dir(&ws.join("shims/python/python/carve_shim"), &shim.join("carve_shim"));
    std::fs::copy(ws.join("shims/python/sitecustomize/sitecustomize.py"), shim.join("sitecustomize.py")).unwrap();
    let traces = tmp.path().join("trace");
    std::fs::create_dir(&traces).unwrap();

    let index = DefinitionIndex::build(&repo, &IndexOptions::default()).unwrap();
    let map = tmp.path().join("probe-map.json");
    carve_languages::python::trace::probe_map(&index, &repo).write(&map).unwrap();
    let out = Command::new("python3")
        .args(["-m", "pytest", "-p", "carve_shim.plugin", "-q"])
        .current_dir(&repo)
        .env_remove("CARVE_CURRENT_TEST")
        .env("PYTHONPATH", &shim)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CARVE_PROBE_MAP", &map)
        .env("CARVE_TRACE_DIR", &traces)
        .env("CARVE_SHIM_FORCE_FALLBACK", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "traced pytest failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let trace = Trace::read_dir(&traces).unwrap();
    assert!(!trace.is_partial(), "{:?}", trace.partial);
    assert!(trace.files >= 2, "the subprocess test writes its own trace file");
    let graph = ObjectGraph::build(&index, &trace);
    assert!(graph.unknown_nodes().is_empty(), "{:?}", graph.unknown_nodes());

    let expected = expectations_checked_against_comments(&repo, &index);
    let all: BTreeSet<String> = trace.tests.keys().filter(|t| *t != IMPORT_TEST).cloned().collect();
    let features = expected["features"].as_table().expect("[features]");
    assert!(features.len() >= 2);
    for (name, feature) in features {
        let files = strings(feature, "f2p");
        let f2p: BTreeSet<String> =
            all.iter().filter(|t| files.iter().any(|f| t.starts_with(&format!("{f}::")))).cloned().collect();
        assert!(!f2p.is_empty(), "{name}: no traced tests in {files:?}");
        let p2p: BTreeSet<String> = all.difference(&f2p).cloned().collect();
        let c = classify(&index, &graph, &trace, &f2p, &p2p).unwrap_or_else(|e| panic!("{name}: {e}"));

        let entries: BTreeSet<String> = c.entry_points.iter().cloned().collect();
        assert_eq!(entries, strings(feature, "entry_points"), "{name}: entry points");
        let extracted: BTreeSet<String> = c.extracted().map(|(id, _)| id.clone()).collect();
        assert_eq!(extracted, strings(feature, "extracted"), "{name}: extracted");
        let remained: BTreeSet<String> = c.remained().map(|(id, _)| id.clone()).collect();
        let want = strings(feature, "remained");
        assert!(want.is_subset(&remained), "{name}: missing remained {:?}", want.difference(&remained));
        let allowed: BTreeSet<String> = want.union(&strings(feature, "remained_whole_graph")).cloned().collect();
        assert!(remained.is_subset(&allowed), "{name}: unexpected remained {:?}", remained.difference(&allowed));
        let never = strings(feature, "never_extracted");
        assert!(never.is_disjoint(&extracted), "{name}: extracted {:?}", never.intersection(&extracted));
        for (id, d) in &c.nodes {
            assert!(!d.reasons.is_empty(), "{name}: {id} has no reason");
        }
    }
}
