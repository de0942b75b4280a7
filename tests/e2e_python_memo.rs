//! End-to-end regression tests of issue 29 over `fixtures/python/memo` (see its README):
//! sibling boilerplate is no leak (item 5), and a name the hidden tests use is added to the
//! contract instead of rejecting the task (item 6).

mod common;

use common::expected::json_strings;
use common::*;
use serde_json::Value;

fn json(p: &std::path::Path) -> Value {
    serde_json::from_str(&read(p)).unwrap()
}

/// Before: "leakage: memo/caches.py lines 68-75 repeat gold code of memo/caches.py" — a
/// 4-line window `LIFOCache` shares with `FIFOCache`. The share is recorded, the task is valid.
#[needs("pytest")]
fn sibling_boilerplate_is_context_and_its_share_is_recorded() {
    let (_tmp, repo) = fixture_copy("python/memo");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_lifo.py"]);
    assert!(extracted(&inst).contains(&"memo/caches.py::LIFOCache"), "{:?}", extracted(&inst));
    let v = json(&bundle.join("validation.json"));
    let leakage = &v["leakage"];
    assert_eq!(leakage["ok"], true, "{leakage:#}");
    let sims = leakage["similarity"].as_array().expect("the similarity is recorded");
    let lifo = sims.iter().find(|s| s["definition"] == "memo/caches.py::LIFOCache").expect("LIFOCache's share");
    assert_eq!(lifo["file"], "memo/caches.py");
    assert_eq!(lifo["source"], true);
    let (copied, percent) = (lifo["copied"].as_u64().unwrap(), lifo["percent"].as_u64().unwrap());
    assert!(copied >= 4 && percent < 50, "the sibling repeats a window or more, not most: {lifo}");
    recheck_level1(&repo, &bundle, &inst);
}

/// Before: "leakage: the contract does not name cache_info, decorator, which the F2P tests
/// use and the workspace lacks". Both nested functions are in the contract now, under
/// `fifo_cache`, with their signatures, and in the problem statement.
#[needs("pytest")]
fn names_the_tests_use_are_added_to_the_contract() {
    let (_tmp, repo) = fixture_copy("python/memo");
    let (_out, bundle, inst) = one_level1_task(&repo, &["tests/test_func.py"]);
    let v = json(&bundle.join("validation.json"));
    assert_eq!(v["leakage"]["ok"], true, "{:#}", v["leakage"]);
    let needed = json_strings(&v["leakage"]["needed_identifiers"]);
    assert!(needed.contains("decorator") && needed.contains("cache_info"), "{needed:?}");
    let contract = json(&bundle.join("contract.json"));
    let func = contract["objects"].as_array().unwrap().iter().find(|o| o["name"] == "fifo_cache").expect("fifo_cache");
    let decorator = &func["members"].as_array().unwrap()[0];
    assert_eq!(decorator["name"], "decorator");
    assert_eq!(decorator["enclosing_function"], "fifo_cache");
    assert_eq!(decorator["signature"]["text"], "def decorator(func)");
    assert_eq!(decorator["members"][0]["name"], "cache_info");
    let statement = read(&bundle.join("problem_statement.md"));
    assert!(statement.contains("    def decorator(func):\n        def cache_info():"), "{statement}");
    recheck_level1(&repo, &bundle, &inst);
}
