//! The classifier on a real trace: index `fixtures/python/inventory`, write the probe map,
//! run its pytest suite under the Python shim (pure-Python recorder, so no build is needed),
//! read the trace and classify every feature of `carve-expected.toml`, which must match.
//!
//! Needs `python3` with pytest; without them the test says so and skips (in CI, where
//! `CI` is set, it fails instead).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use carve_languages::DefinitionIndex;
use carve_languages::index::IndexOptions;
use carve_tracer::{IMPORT_TEST, ObjectGraph, Trace, classify};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tracer/ has a parent").to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn pytest_available() -> bool {
    Command::new("python3").args(["-c", "import pytest"]).output().is_ok_and(|o| o.status.success())
}

fn strings(value: &toml::Value, key: &str) -> BTreeSet<String> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is a list"))
        .iter()
        .map(|v| v.as_str().expect("strings").to_string())
        .collect()
}

#[test]
fn inventory_fixture_classification_matches_expectations() {
    if !pytest_available() {
        assert!(std::env::var_os("CI").is_none(), "python3 with pytest is required in CI");
        eprintln!("skipped: python3 with pytest is not available");
        return;
    }
    let ws = workspace();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    copy_dir(&ws.join("fixtures/python/inventory"), &repo);
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

    let expected: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo.join("carve-expected.toml")).unwrap()).unwrap();
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
