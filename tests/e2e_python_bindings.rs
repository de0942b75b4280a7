//! End-to-end test over `fixtures/python/tally`: definitions named only by value bindings
//! that stay in the masked state — a class attribute `mode = _StatsProperty("mode",
//! _calc_mode)`, a module-level `mode_of = _described(functions.mode_of)`, an entry
//! `"json": _as_json` of a class's lookup table — are extracted, and the mask deletes the
//! binding with them (patterns of boltons, toolz and structlog; see the fixture's README);
//! and over `fixtures/python/aliases`: methods that module-level names bind through an
//! instance made at import (`sign = _signer.sign`, pyjwt's pattern) stay; and over
//! `fixtures/python/protocols`: a `__call__` that code loading a module needs to exist, not to
//! run (attrs' pattern), is kept by the load repair, which reads the class from the message.

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

/// `fixtures/python/aliases` ends as pyjwt's `api_jwt.py` does: `_signer = Signer()` and
/// `sign = _signer.sign`, … at module level, imported by the package's `__init__`. Those
/// bindings name the methods through the instance, so the methods stay (the package cannot
/// load without them) and only the private helpers go; no load repair is spent on them. Before
/// the index resolved `_signer.sign` to `Signer.sign`, the mask took all four aliased methods
/// and the load repair, one attribute per round, ran out of rounds: the candidate was rejected.
#[needs("pytest")]
fn methods_a_module_level_instance_binds_stay_to_load() {
    let (_tmp, repo) = fixture_copy("python/aliases");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_api.py"]);
    assert_eq!(
        extracted(&inst),
        [
            "signer/api.py::Signer._header",
            "signer/api.py::Signer._signature",
            "signer/api.py::Signer._split",
            "signer/api.py::SignerError.hint"
        ],
        "{inst:#}"
    );
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    // `_reverse` is passed by name in `__init__` (run at import), never called there: the
    // trace cannot see that use, but code that runs while modules load names it, so it stays
    // from the start (before, one load repair round kept it).
    let reverse = audit["remained"].as_array().unwrap().iter().find(|r| r["id"] == "signer/api.py::_reverse");
    let reasons = reverse.map(|r| r["reasons"].to_string()).unwrap_or_default();
    assert!(
        reasons.contains("named by signer/api.py::Signer.__init__, which stays and runs"),
        "{:#}",
        audit["remained"]
    );
    assert_eq!(audit["load_repairs"].as_array().map_or(0, Vec::len), 0, "{:#}", audit["load_repairs"]);
    let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    recheck_level1(&repo, &bundle, &inst);
}

/// Level 2 of the same feature: the package takes `Signer` and `SignerError` (classes that
/// stay with methods of the feature) whole, and `BadHeader(SignerError)`, which stays in the
/// project and which the F2P tests name, comes from the package too, deriving from the
/// package's `SignerError` (itsdangerous' `BadHeader(BadSignature)` refused its Level 2 tasks).
/// The reference alone passes the rewritten tests beside the masked project; an empty
/// package fails them.
#[needs("pytest")]
fn a_subclass_the_tests_name_comes_from_the_package_with_its_base() {
    let (_tmp, repo) = fixture_copy("python/aliases");
    let out = tempfile::tempdir().unwrap();
    let args = ["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    let o =
        carve_ok(&[&args[..], &["--level", "1", "2", "--format", "json", "--f2p", "tests/test_api.py"]].concat(), 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lv2 = report["tasks"].as_array().unwrap().iter().filter_map(|t| t.as_str()).find(|t| t.ends_with(".lv2"));
    let bundle = out.path().join(lv2.unwrap_or_else(|| panic!("no Level 2 task: {report:#}")));
    let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
    let states: Vec<(&str, bool)> = validation["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["state"].as_str().unwrap(), s["ok"].as_bool().unwrap()))
        .collect();
    assert!(states.contains(&("level2-reference", true)) && states.contains(&("level2-empty", true)), "{states:?}");
    assert_eq!(validation["valid"], true, "{validation:#}");
    let test_patch = read(&bundle.join("test.patch"));
    assert!(test_patch.contains("+from agent_code import BadHeader, Signer"), "{test_patch}");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(
        statement.contains(
            "The tests also import `BadHeader` (the project's `signer.api.BadHeader`, a subclass of `SignerError`) \
             from `agent_code`"
        ),
        "{statement}"
    );
}

/// `fixtures/python/protocols`: `vet.presets`, imported inside a P2P test, checks that
/// `IsInt()` is callable; only the F2P tests call `IsInt.__call__`. The masked state fails that
/// P2P test with "a validator must be callable (got … that is a <class 'vet.checks.IsInt'>)",
/// which one load repair round reads as `IsInt.__call__`; `explain` stays the feature and the
/// task is valid. Before, the message named no definition and the candidate was rejected.
#[needs("pytest")]
fn a_special_method_a_loading_module_checks_for_is_kept_by_the_load_repair() {
    let (_tmp, repo) = fixture_copy("python/protocols");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_checks.py"]);
    let ids = extracted(&inst);
    assert!(ids.contains(&"vet/checks.py::explain"), "{ids:?}");
    assert!(!ids.contains(&"vet/checks.py::IsInt.__call__"), "{ids:?}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let moved: Vec<(&str, &str)> = audit["load_repairs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["moved"].as_array().unwrap())
        .map(|m| (m["id"].as_str().unwrap(), m["found_by"].as_str().unwrap()))
        .collect();
    assert_eq!(
        moved,
        [("vet/checks.py::IsInt.__call__", "tests/test_presets.py::test_presets_load")],
        "{:#}",
        audit["load_repairs"]
    );
    let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    recheck_level1(&repo, &bundle, &inst);
}
