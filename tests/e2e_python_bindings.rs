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

/// The feature `mode` goes whole: the three definitions and the three bindings naming them,
/// while `mean` (its property, its shortcut, the other report formats) and every P2P test
/// stay; the bundle validates and re-checks from its patches alone.
#[needs("pytest")]
fn value_bindings_go_with_what_they_name_when_nothing_that_stays_uses_them() {
    let (_tmp, repo) = fixture_copy("python/tally");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &F2P);
    assert_eq!(inst["FAIL_TO_PASS"], serde_json::json!(F2P), "{inst:#}");
    assert_eq!(
        extracted(&inst),
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
