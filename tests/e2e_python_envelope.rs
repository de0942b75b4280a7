//! End-to-end test over `fixtures/python/envelope`: a mixin's overrides of methods of a base
//! class that stays are stubbed, not deleted (itsdangerous `url_safe.py`, see the fixture's
//! README).

mod common;

use common::*;
use serde_json::Value;

/// Deleted, the overrides would hand their calls to `Packer`'s and every round-trip test
/// would still pass on the masked state ("the masked code does not remove what they
/// test"). Stubbed, `TestHexPacker`'s tests fail there; the `TestPacker` tests that
/// `test_hex.py` collects from its import run `Packer` only and move to P2P.
#[needs("pytest")]
fn overrides_of_base_methods_that_stay_are_stubbed() {
    let (_tmp, repo) = fixture_copy("python/envelope");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_hex.py"]);
    assert_eq!(
        extracted(&inst),
        ["envelope/hex.py::HexPackerMixin.dump_payload", "envelope/hex.py::HexPackerMixin.load_payload"],
        "{inst:#}"
    );
    let f2p: Vec<&str> = inst["FAIL_TO_PASS"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(f2p.len(), 4, "{inst:#}");
    assert!(f2p.iter().all(|t| t.starts_with("tests/test_hex.py::TestHexPacker::")), "{f2p:?}");
    let mask = read(&bundle.join("mask.patch"));
    assert_eq!(mask.matches("+        raise NotImplementedError").count(), 2, "both overrides are stubbed:\n{mask}");
    assert!(!mask.contains("-class HexPackerMixin") && !mask.contains("-    def load_payload"), "{mask}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let moved = audit["moved_to_p2p"].as_array().unwrap();
    assert_eq!(moved.len(), 4, "{audit:#}");
    assert!(moved.iter().all(|t| t.as_str().unwrap().starts_with("tests/test_hex.py::TestPacker::")), "{audit:#}");
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}
