//! End-to-end tests over `fixtures/python/voices`: a feature whose F2P tests share their
//! test file with tests that stay (patterns of the real-repository corpus, see the
//! fixture's README).

mod common;

use common::*;
use serde_json::Value;

/// `TestLoud`'s tests, two of them inherited from `tests/tone_checks.py`.
const TONE_F2P: [&str; 3] = [
    "tests/test_tone.py::TestLoud::test_capitals",
    "tests/test_tone.py::TestLoud::test_keeps_letters",
    "tests/test_tone.py::TestLoud::test_nothing_is_flat",
];

const F2P: [&str; 2] =
    ["tests/test_speech.py::test_whisper", "tests/test_speech.py::test_whisper_is_documented_like_shout"];

/// The F2P tests are taken out of a test file that stays: their helper keeps nothing alive
/// (`Quiet` goes with the feature), `whisper.__doc__ = …` goes with `whisper`, and the
/// bundle re-checks from its patches alone: original + mask.patch (the F2P tests removed
/// too) + test.patch + gold.patch = original.
#[needs("pytest")]
fn f2p_tests_of_a_shared_test_file_and_their_helpers_keep_nothing_alive() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &F2P);
    assert_eq!(inst["FAIL_TO_PASS"], serde_json::json!(F2P), "{inst:#}");
    assert_eq!(
        extracted(&inst),
        [
            "voices/speech.py::Quiet",
            "voices/speech.py::Quiet.__init__",
            "voices/speech.py::Quiet.__str__",
            "voices/speech.py::whisper"
        ],
        "{inst:#}"
    );
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("-whisper.__doc__ = "), "the mask deletes the docstring assignment:\n{mask}");
    assert!(mask.contains("-def test_whisper():"), "mask.patch takes the F2P tests out:\n{mask}");
    assert!(!mask.contains("-def test_shout():"), "{mask}");
    let gold = read(&bundle.join("gold.patch"));
    assert!(gold.contains("+whisper.__doc__ = ") && gold.contains("+class Quiet:"), "{gold}");
    let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
    assert_eq!(validation["valid"], true, "{validation:#}");
    recheck_level1(&repo, &bundle, &inst);
    // `carve validate` rebuilds the masked state from mask.patch alone.
    let v =
        carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap(), "--python", "python3"], 0);
    assert!(String::from_utf8_lossy(&v.stdout).contains("valid"), "{}", String::from_utf8_lossy(&v.stdout));
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

const ECHO_F2P: [&str; 2] =
    ["tests/test_echo.py::test_echo_says_it_twice", "tests/test_echo.py::test_repeat_joins_with_spaces"];

/// Repair, not rejection: the override of an abstract method is stubbed (its class has a
/// module-level instance); the masked states fail a P2P test with an `AttributeError`
/// naming `Echo`, then `repeat`, so both remain "needed to load"; the F2P test of `repeat` then
/// still passes and moves to P2P. Every round is in `audit.json`; the bundle re-checks.
#[needs("pytest")]
fn load_errors_of_the_masked_state_are_repaired_and_abstract_overrides_stubbed() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &ECHO_F2P);
    assert_eq!(inst["FAIL_TO_PASS"], serde_json::json!([ECHO_F2P[0]]), "{inst:#}");
    assert_eq!(inst["carve"]["extracted"], serde_json::json!(["voices/echo.py::Echo.say"]), "{inst:#}");
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("+        raise NotImplementedError"), "Echo.say is stubbed:\n{mask}");
    assert!(!mask.contains("-class Echo") && !mask.contains("-def repeat"), "{mask}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(audit["moved_to_p2p"], serde_json::json!([ECHO_F2P[1]]), "{audit:#}");
    // Round 1: `Echo` went with `VOICES = {… Echo()}` (a value binding only the F2P test
    // reads), and the P2P test's `getattr` finds it gone, so it is kept; round 2: `repeat`.
    let repairs = audit["load_repairs"].as_array().unwrap();
    let moved: Vec<&Value> = repairs.iter().flat_map(|r| r["moved"].as_array().unwrap()).collect();
    let ids: Vec<&str> = moved.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["voices/echo.py::Echo", "voices/echo.py::repeat"], "{audit:#}");
    let kept = moved[1];
    assert_eq!(kept["found_by"], "tests/test_echo.py::test_the_api_names_stay_importable", "{audit:#}");
    assert!(kept["message"].as_str().unwrap().contains("has no attribute 'repeat'"), "{audit:#}");
    let remained = audit["remained"].as_array().unwrap();
    let repeat = remained.iter().find(|r| r["id"] == "voices/echo.py::repeat").expect("repeat remains");
    let reasons: Vec<&str> = repeat["reasons"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let needed = "needed to load (found by tests/test_echo.py::test_the_api_names_stay_importable: AttributeError";
    assert!(reasons.iter().any(|r| r.starts_with(needed)), "{repeat}");
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// `voices/__init__.py` does `from .speech import Quiet, whisper` and then `del speech`:
/// with both names extracted the mask keeps `from . import speech`, so the package loads.
#[needs("pytest")]
fn a_package_import_that_loses_every_name_keeps_binding_its_submodule() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    args.extend(["--level", "1", "--format", "json", "--python", "python3", "--f2p"]);
    args.extend(F2P);
    let o = carve_ok(&args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bundle = out.path().join(report["tasks"][0].as_str().expect("one task"));
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("-from .speech import Quiet, whisper\n+from . import speech\n"), "{mask}");
}

/// The shared default `Lexicon` is made on first use, and the F2P test is its first user:
/// only that test's trace runs `load_defaults` and the methods it calls, so they are
/// extracted and the P2P test after it fails on the masked state naming `load_defaults`.
/// One round of load repair keeps `load_defaults` and what it calls (`clear`, `add_words`,
/// `_normalize`): one method per round ran out of rounds (sqlparse's `Lexer`).
#[needs("pytest")]
fn a_kept_definition_keeps_what_it_calls_in_one_round() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_lexicon.py::test_misspelled_lists_unknown_words"]);
    assert_eq!(inst["carve"]["extracted"], serde_json::json!(["voices/lexicon.py::misspelled"]), "{inst:#}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let repairs = audit["load_repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 1, "{audit:#}");
    let ids: Vec<&str> = repairs[0]["moved"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "voices/lexicon.py::Lexicon._normalize",
            "voices/lexicon.py::Lexicon.add_words",
            "voices/lexicon.py::Lexicon.clear",
            "voices/lexicon.py::Lexicon.load_defaults"
        ],
        "{audit:#}"
    );
    let clear = repairs[0]["moved"].as_array().unwrap().iter().find(|m| m["id"] == "voices/lexicon.py::Lexicon.clear");
    let message = clear.unwrap()["message"].as_str().unwrap();
    assert!(message.starts_with("called by `voices/lexicon.py::Lexicon.load_defaults`"), "{message}");
    assert!(message.contains("has no attribute 'load_defaults'"), "{message}");
    recheck_level1(&repo, &bundle, &inst);
}

/// `Choir` derives from the standard library's `MutableSet` and a module-level
/// `DEFAULT = Choir(...)` builds one at import: the feature's `discard`, `__iter__` and
/// `__len__` are abstract methods of `MutableSet`, so they are stubbed, not deleted (deleted,
/// `Choir` was abstract, the module did not load, and the load repair kept all three:
/// "nothing to extract", as hyperframe's `Flags.discard`).
#[needs("pytest")]
fn overrides_of_a_standard_library_abc_are_stubbed() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_choir.py::test_a_singer_leaves"]);
    assert_eq!(
        inst["carve"]["extracted"],
        serde_json::json!([
            "voices/choir.py::Choir.__iter__",
            "voices/choir.py::Choir.__len__",
            "voices/choir.py::Choir.discard"
        ]),
        "{inst:#}"
    );
    let mask = read(&bundle.join("mask.patch"));
    assert_eq!(mask.matches("+        raise NotImplementedError").count(), 3, "{mask}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(audit["load_repairs"], serde_json::json!([]), "{audit:#}");
    recheck_level1(&repo, &bundle, &inst);
}

/// `TestLoud` in `tests/test_tone.py` inherits its checks from `ToneChecks` of
/// `tests/tone_checks.py`, which imports `Flat`, part of the feature: the mask drops that
/// import and Level 1's test patch restores it. Level 2's test patch restored only the F2P
/// tests' own file, so `tone_checks.py` stayed masked and the reference failed with
/// `NameError: name 'Flat' is not defined` (itsdangerous' `test_timed.py` subclassing
/// `test_serializer.py`'s `TestSerializer`); it now takes `Flat` from `agent_code` there too.
#[needs("pytest")]
fn a_test_module_the_f2p_tests_inherit_from_is_rewritten_for_level_2() {
    let (_tmp, repo) = fixture_copy("python/voices");
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()];
    args.extend(["--level", "1", "2", "--format", "json", "--python", "python3", "--f2p"]);
    args.extend(TONE_F2P);
    let o = carve_ok(&args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks: Vec<&str> = report["tasks"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let level2 = tasks.iter().find(|t| t.ends_with(".lv2")).unwrap_or_else(|| panic!("no Level 2 task: {report:#}"));
    let patch = read(&out.path().join(level2).join("test.patch"));
    assert!(patch.contains("+++ b/tests/tone_checks.py\n"), "{patch}");
    assert!(patch.contains("+from agent_code import Flat\n"), "{patch}");
}
