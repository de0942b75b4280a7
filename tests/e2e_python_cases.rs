//! End-to-end test over `fixtures/python/cases`: a parametrized F2P test function whose cases
//! split on the masked state (marshmallow `test_date_field_deserialization[None]`, see the
//! fixture's README).

mod common;

use common::*;
use serde_json::Value;

const DATED: &str = "tests/test_fields.py::test_date_field_deserialization[2024-01-02-expected0]";
const NONE: &str = "tests/test_fields.py::test_date_field_deserialization[None-None]";

/// The `None` case still passes on the masked state, but its function leaves that state with
/// the dated case, which stays F2P: the `None` case is dropped from both sets (as a P2P test it
/// would be "missing" there and the candidate rejected), the task is made and re-checks.
#[needs("pytest")]
fn a_case_whose_function_leaves_with_f2p_cases_is_dropped_not_made_p2p() {
    let (_tmp, repo) = fixture_copy("python/cases");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(
        &repo,
        &[
            "tests/test_fields.py::test_date_field_deserialization",
            "tests/test_fields.py::test_date_field_rejects_malformed_dates",
        ],
    );
    assert_eq!(
        extracted(&inst),
        ["cases/fields.py::DateField._deserialize", "cases/fields.py::parse_date"],
        "{inst:#}"
    );
    let ids = |key: &str| -> Vec<String> {
        inst[key].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(ids("FAIL_TO_PASS"), [DATED, "tests/test_fields.py::test_date_field_rejects_malformed_dates"]);
    assert!(!ids("PASS_TO_PASS").iter().any(|t| t == NONE), "{inst:#}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(audit["dropped_cases"], serde_json::json!([NONE]), "{audit:#}");
    assert_eq!(audit["moved_to_p2p"], serde_json::json!([]), "{audit:#}");
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}
