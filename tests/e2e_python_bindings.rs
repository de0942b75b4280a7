//! End-to-end test over `fixtures/python/tally`: definitions named only by value bindings
//! that stay in the masked state — a class attribute `mode = _StatsProperty("mode",
//! _calc_mode)`, a module-level `mode_of = _described(functions.mode_of)`, an entry
//! `"json": _as_json` of a class's lookup table — are extracted, and the mask deletes the
//! binding with them (patterns of boltons, toolz and structlog; see the fixture's README).

mod common;

use common::*;
use serde_json::Value;

const F2P: [&str; 3] = [
    "tests/test_formats.py::test_json_report",
    "tests/test_functions.py::test_mode_of",
    "tests/test_stats.py::test_mode",
];

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The feature `mode` goes whole: the three definitions and the three bindings naming them,
/// while `mean` (its property, its shortcut, the other report formats) and every P2P test
/// stay; the bundle validates and re-checks from its patches alone.
#[needs("pytest")]
fn value_bindings_go_with_what_they_name_when_nothing_that_stays_uses_them() {
    let (_tmp, repo) = fixture_copy("python/tally");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    args.extend(["--level", "1", "--format", "json", "--python", "python3", "--f2p"]);
    args.extend(F2P);
    let o = carve_ok(&args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = report["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{report:#}");
    let bundle = out.path().join(tasks[0].as_str().unwrap());
    let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    assert_eq!(inst["FAIL_TO_PASS"], serde_json::json!(F2P), "{inst:#}");
    let mut extracted: Vec<&str> =
        inst["carve"]["extracted"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    extracted.sort();
    assert_eq!(
        extracted,
        ["tally/formats.py::_as_json", "tally/functions.py::mode_of", "tally/stats.py::Stats._calc_mode"],
        "{inst:#}"
    );
    let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    // The source part of the mask (the F2P tests' removal follows it in the same patch).
    let mask = read(&bundle.join("mask.patch"));
    let source: String =
        mask.split("diff --git").filter(|d| d.contains("a/tally/")).map(|d| format!("diff --git{d}")).collect();
    insta::assert_snapshot!("tally_mask_source", source);
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}
