//! End-to-end tests over `fixtures/typescript/ledger` with the real vitest and tsc: the
//! classification of every feature against the fixture's written-down expectations
//! (`carve-expected.toml`), a feature whose code only a child process runs, and `carve
//! tasks` with an independent re-check of every bundle (`carve validate`), F2P `it` blocks
//! removed one by one from test files they share with P2P tests.

mod common;

use common::expected::*;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const FIXTURE: &str = "typescript/ledger";

/// A copy of the fixture with its installed node_modules hard-linked in.
fn ledger_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    copy_with_modules(FIXTURE)
}

/// `fixtures/<name>` copied, with its installed `node_modules` hard-linked in.
fn copy_with_modules(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy(name);
    if !repo.join("node_modules").exists() {
        let from = fixture(name).join("node_modules");
        let ok =
            std::process::Command::new("cp").arg("-al").arg(&from).arg(repo.join("node_modules")).status().unwrap();
        assert!(ok.success(), "cp -al {}", from.display());
    }
    (tmp, repo)
}

fn audit(repo: &Path, out: &Path, f2p: &[String], code: i32) -> std::process::Output {
    let mut args = vec!["--format", "json"];
    for t in f2p {
        args.extend(["--f2p", t.as_str()]);
    }
    carve_on("audit", repo, out, &args, code)
}

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn audit_matches_the_ledger_expectations_for_every_feature() {
    let (_tmp, repo) = ledger_copy();
    let before = tree_snapshot(&repo);
    // One output folder: the baseline and the trace are computed once and cached.
    let out = tempfile::tempdir().unwrap();
    let exp = expectations(FIXTURE);
    let features = exp["features"].as_table().unwrap();
    assert!(features.len() >= 4, "the fixture has several features");
    for (name, f) in features {
        let f2p: Vec<String> = strings(f.get("f2p")).into_iter().collect();
        let o = audit(&repo, out.path(), &f2p, 0);
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        check_feature(name, f, &report);
    }
    // The test whose code runs only in a child process calls no repository code itself.
    let cli = strings(exp["child_process_only"].get("f2p")).into_iter().collect::<Vec<_>>();
    let o = audit(&repo, out.path(), &cli, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no entry point") && err.contains(&cli[0]), "{err}");
    assert_eq!(before, tree_snapshot(&repo), "carve audit modified the repository");
}

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn tasks_give_several_validated_bundles_that_recheck_independently() {
    let (_tmp, repo) = ledger_copy();
    let (out, tasks) = tasks_of(&repo);
    assert!(tasks.len() >= 3, "expected several validated tasks, got {}", tasks.len());
    let mut per_block = 0;
    // `carve tasks` validated every bundle; one bundle of each level is validated again on
    // its own (each validation runs vitest and tsc over four states: ~12 s a bundle).
    let mut rechecked = BTreeSet::new();
    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        let bundle = out.path().join(id);
        if rechecked.insert(t["level"].as_u64().unwrap()) {
            carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
        }
        // F2P tests that share a file with P2P tests leave as single `it`/`test` blocks:
        // the masked file keeps the P2P tests (and still type-checks: validation ran tsc).
        let f2p: BTreeSet<&str> = t["FAIL_TO_PASS"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        let p2p: Vec<&str> = t["PASS_TO_PASS"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        // A file that only loses tests goes to the test patch, one that also loses imports
        // of the feature to the mask patch.
        let patch = ["mask.patch", "test.patch"].map(|p| std::fs::read_to_string(bundle.join(p)).unwrap()).concat();
        for file in f2p.iter().filter_map(|id| id.split(" > ").next()).collect::<BTreeSet<_>>() {
            if p2p.iter().any(|p| p.starts_with(&format!("{file} > "))) {
                assert!(patch.contains(&format!("+++ b/{file}\n")), "{id}: {file} is edited per block");
                assert!(!patch.contains(&format!("--- a/{file}\n+++ /dev/null")), "{id}: {file} must not be deleted");
                per_block += 1;
            }
        }
    }
    assert!(per_block >= 1, "at least one task removes single test blocks from a shared file");
}

/// A project that pins vitest 0.8 (no reporter files before 0.10) is traced per test and
/// carved like any other: the `format` feature goes, `units` stays (format's code runs it).
#[needs("node", "fixtures/typescript/vitest-old/node_modules")]
fn a_project_on_vitest_0_8_is_traced_per_test_and_carved() {
    let (tmp, repo) = copy_with_modules("typescript/vitest-old");
    let (out, tasks) = tasks_of(&repo);
    let format = tasks
        .iter()
        .find(|t| {
            t["FAIL_TO_PASS"]
                .as_array()
                .unwrap()
                .iter()
                .any(|id| id.as_str().unwrap().starts_with("tests/format.test.ts > "))
        })
        .unwrap_or_else(|| panic!("no task for tests/format.test.ts: {tasks:#?}"));
    let p2p: Vec<&str> = format["PASS_TO_PASS"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(p2p.contains(&"tests/units.test.ts > units > converts between units"), "{p2p:?}");
    let gold =
        std::fs::read_to_string(out.path().join(format["instance_id"].as_str().unwrap()).join("gold.patch")).unwrap();
    for name in ["function bestUnit", "function humanize", "function round"] {
        assert!(gold.contains(name), "the gold patch restores {name}:\n{gold}");
    }
    assert!(!gold.contains("function convert"), "convert stays: the units tests run it");
    let bundle = out.path().join(format["instance_id"].as_str().unwrap());
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
    drop(tmp);
}

/// A CommonJS library tested with mocha is traced per test and carved: the `area` feature
/// goes (its tests are F2P), what other tests run stays, and the bundle re-validates.
#[needs("node", "fixtures/javascript/mocha-geometry/node_modules")]
fn a_library_tested_with_mocha_gives_a_validated_task() {
    const MOCHA: &str = "javascript/mocha-geometry";
    let (tmp, repo) = copy_with_modules(MOCHA);
    let (out, tasks) = tasks_of(&repo);
    let area = tasks
        .iter()
        .find(|t| {
            t["FAIL_TO_PASS"]
                .as_array()
                .unwrap()
                .iter()
                .any(|id| id.as_str().unwrap().starts_with("test/area.test.js > "))
        })
        .unwrap_or_else(|| panic!("no task for test/area.test.js: {tasks:#?}"));
    let p2p: Vec<&str> = area["PASS_TO_PASS"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(p2p.contains(&"test/perimeter.test.js > perimeter > of a circle"), "{p2p:?}");
    assert!(!p2p.iter().any(|id| id.contains("fails on purpose") || id.contains("never runs")), "{p2p:?}");
    let bundle = out.path().join(area["instance_id"].as_str().unwrap());
    let gold = std::fs::read_to_string(bundle.join("gold.patch")).unwrap();
    for name in ["function circleArea", "function triangleArea", "function halve"] {
        assert!(gold.contains(name), "the gold patch restores {name}:\n{gold}");
    }
    assert!(!gold.contains("function round"), "round stays: the perimeter tests run it\n{gold}");
    carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", repo.to_str().unwrap()], 0);
    drop(tmp);
}
