//! End-to-end test over `fixtures/python/doctests`: a feature method whose own docstring
//! example is a test (`--doctest-modules`; parso `NodeOrLeaf.dump`, see the fixture's README).

mod common;

use common::*;
use serde_json::Value;

const DUMP_DOCTEST: &str = "shelf/tree.py::shelf.tree.Node.dump";

/// The doctest of `Node.dump` goes with it (F2P, `owned_doctests`), so it keeps nothing
/// alive; `Node.count`'s doctest and the module's stay P2P and keep what they run. The task
/// re-checks: the doctest disappears from the masked state and passes once the gold patch
/// brings the method back.
#[needs("pytest")]
fn a_doctest_goes_with_the_definition_that_holds_it() {
    let (_tmp, repo) = fixture_copy("python/doctests");
    let before = tree_snapshot(&repo);
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_dump.py"]);
    assert_eq!(
        extracted(&inst),
        ["shelf/tree.py::Leaf.dump", "shelf/tree.py::Node.dump", "shelf/tree.py::_indent"],
        "{inst:#}"
    );
    let ids = |key: &str| -> Vec<String> {
        inst[key].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
    };
    assert!(ids("FAIL_TO_PASS").iter().any(|t| t == DUMP_DOCTEST), "{inst:#}");
    let p2p = ids("PASS_TO_PASS");
    assert!(p2p.iter().any(|t| t == "shelf/tree.py::shelf.tree.Node.count"), "{p2p:?}");
    assert!(p2p.iter().any(|t| t == "shelf/__init__.py::shelf"), "{p2p:?}");
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    assert_eq!(audit["owned_doctests"], serde_json::json!([DUMP_DOCTEST]), "{audit:#}");
    // The doctest is no test of its own to take out: the source file stays, without the method.
    let mask = read(&bundle.join("mask.patch"));
    assert!(mask.contains("+++ b/shelf/tree.py"), "{mask}");
    recheck_level1(&repo, &bundle, &inst);
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}
