//! End-to-end test over `fixtures/python/tokens`: a helper that pass-to-pass tests execute
//! only through a call statement whose value is discarded (`self._validate_crit(headers)`,
//! as in pyjwt's `api_jws.py`) is extracted with that statement (see the fixture's README).

mod common;

use common::*;
use serde_json::Value;

/// `_validate_crit` is extracted although `test_a_known_critical_extension_decodes` (P2P)
/// runs it: the mask deletes its one call (`pass` fills the `if`), the gold patch restores
/// it, and `audit.json` says which call went with which definition, and why.
#[needs("pytest")]
fn a_helper_p2p_tests_run_only_through_a_discarded_call_is_extracted_with_the_call() {
    let (_tmp, repo) = fixture_copy("python/tokens");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_crit.py"]);
    assert_eq!(extracted(&inst), ["tokens/codec.py::Codec._validate_crit"], "{inst:#}");
    let mask = read(&bundle.join("mask.patch"));
    assert!(
        mask.contains("-            self._validate_crit(headers)\n") && mask.contains("+            pass\n"),
        "{mask}"
    );
    let gold = read(&bundle.join("gold.patch"));
    assert!(gold.contains("+            self._validate_crit(headers)\n"), "{gold}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let calls = audit["classification"]["removed_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{audit:#}");
    assert_eq!(calls[0]["target"], "tokens/codec.py::Codec._validate_crit");
    assert_eq!(calls[0]["caller"], "tokens/codec.py::Codec._validate_headers");
    assert_eq!(calls[0]["line"], 63);
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(
        statement.contains("- `tokens/codec.py`, in `Codec._validate_headers`: a call of `Codec._validate_crit`"),
        "the statement must say where the feature is wired in:\n{statement}"
    );
    let reasons = audit["extracted"][0]["reasons"].to_string();
    assert!(
        reasons.contains("only through discarded-value calls in tokens/codec.py::Codec._validate_headers"),
        "{reasons}"
    );
    // `_validate_headers` runs in as many P2P tests as F2P tests: shared code, it stays.
    let remained = audit["remained"].to_string();
    assert!(remained.contains("tokens/codec.py::Codec._validate_headers"), "{remained}");
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// With `test_an_unsupported_extension_is_rejected` left as a P2P test, deleting the call
/// makes it fail ("DID NOT RAISE", an error that names no definition): the call repair
/// keeps `_validate_crit`, records the round, and nothing is left to extract.
#[needs("pytest")]
fn a_p2p_test_that_fails_without_the_call_puts_the_helper_back() {
    let (_tmp, repo) = fixture_copy("python/tokens");
    let out = tempfile::tempdir().unwrap();
    let f2p = [
        "tests/test_crit.py::test_crit_must_be_a_non_empty_list",
        "tests/test_crit.py::test_a_listed_extension_must_be_present",
    ];
    let mut args = vec!["--level", "1", "--format", "json", "--python", "python3", "--f2p"];
    args.extend(f2p);
    let o = carve_on("tasks", &repo, out.path(), &args, 1);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(report["tasks"].as_array().unwrap().is_empty(), "{report:#}");
    let reason = report["rejected"][0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("tokens/codec.py::Codec._validate_crit (found by tests/test_crit.py::test_an_unsupported_extension_is_rejected: failed without the call statements deleted with it"),
        "{reason}"
    );
}
