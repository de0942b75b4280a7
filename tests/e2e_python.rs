//! End-to-end tests over `fixtures/python/`: the classification of every feature against
//! the fixture's written-down expectations, `carve tasks` with an independent re-check of
//! every bundle, determinism, an untouched working tree, and bad input.

mod common;

use common::expected::*;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

#[needs("pytest")]
fn audit_matches_the_fixture_expectations_for_every_feature() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let exp = expectations("python/inventory");
    let features = exp["features"].as_table().unwrap();
    assert!(features.len() >= 3, "the fixture has several features");
    for (name, f) in features {
        let mut args =
            vec!["audit", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json", "--f2p"];
        let f2p: Vec<String> = strings(f.get("f2p")).into_iter().collect();
        args.extend(f2p.iter().map(String::as_str));
        let o = carve_ok(&args, 0);
        let report: Value = serde_json::from_slice(&o.stdout).unwrap();
        check_feature(name, f, &report);
    }
    assert_eq!(before, tree_snapshot(&repo), "carve audit modified the repository");
}

#[needs("pytest")]
fn tasks_writes_valid_bundles_that_recheck_independently_and_deterministically() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let out1 = tempfile::tempdir().unwrap();
    let out2 = tempfile::tempdir().unwrap();
    // Two test runs at once, then one at a time: the same bundles either way.
    for (out, jobs) in [(&out1, "2"), (&out2, "1")] {
        carve_ok(&["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--jobs", jobs], 0);
    }
    assert_eq!(before, tree_snapshot(&repo), "carve tasks modified the repository");

    let jsonl = read(&out1.path().join("tasks.jsonl"));
    let tasks: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(tasks.len() >= 4, "expected level 1 and 2 tasks for several features, got {}", tasks.len());
    let levels: BTreeSet<u64> = tasks.iter().map(|t| t["level"].as_u64().unwrap()).collect();
    assert_eq!(levels, BTreeSet::from([1, 2]));

    // Determinism: the same input gives byte-identical bundles and dataset, whatever `--jobs`.
    assert_eq!(jsonl, read(&out2.path().join("tasks.jsonl")));
    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        assert_eq!(
            tree_snapshot(&out1.path().join(id)),
            tree_snapshot(&out2.path().join(id)),
            "bundle {id} differs between two runs"
        );
    }

    for t in &tasks {
        let id = t["instance_id"].as_str().unwrap();
        let bundle = out1.path().join(id);
        for f in BUNDLE_FILES {
            assert!(bundle.join(f).is_file(), "{id} lacks {f}");
        }
        let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
        assert_eq!(&inst, t, "tasks.jsonl holds the bundle's instance.json");
        assert!(id.starts_with("local__inventory."), "{id}");
        assert!(id.ends_with(&format!(".lv{}", t["level"])), "{id}");
        let validation: Value = serde_json::from_str(&read(&bundle.join("validation.json"))).unwrap();
        assert_eq!(validation["valid"], true);
        if t["level"] == 1 {
            // The restored state is the original tree byte for byte (its digest is the
            // proof), so its statuses are the baseline's and it was not run again.
            let states = validation["states"].as_array().unwrap();
            let restored = states.iter().find(|s| s["state"] == "restored").unwrap();
            assert_eq!(restored["tree_digest"], inst["carve"]["tree_digest"], "{restored}");
            assert!(restored["statuses_from"].as_str().unwrap().starts_with("baseline: "), "{restored}");
            let statuses = restored["statuses"].as_object().unwrap();
            assert_eq!(
                statuses.len(),
                t["FAIL_TO_PASS"].as_array().unwrap().len() + t["PASS_TO_PASS"].as_array().unwrap().len()
            );
            assert!(statuses.values().all(|s| s == "passed"), "{restored}");
        }
        // A parametrized id with spaces is printed cut by SWE-bench's pytest log parser: the
        // bundle records what that parser would call it.
        let spaced = "tests/test_pricing.py::test_parse_percent[ 7.5 -7.5]";
        assert_eq!(inst["carve"]["harness_ids"][spaced], "tests/test_pricing.py::test_parse_percent[", "{id}");
        if t["level"] == 1 {
            recheck_level1(&repo, &bundle, &inst);
        }
    }
}

#[needs("pytest")]
fn an_unknown_f2p_test_is_a_usage_error_with_close_matches() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let out = tempfile::tempdir().unwrap();
    let o = carve_on(
        "audit",
        &repo,
        out.path(),
        &["--f2p", "tests/test_pricing.py::test_apply_discount_rounds_and_is_wraped"],
        2,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no test `tests/test_pricing.py::test_apply_discount_rounds_and_is_wraped`"), "{err}");
    assert!(err.contains("close matches") && err.contains("tests/test_pricing.py::"), "{err}");
}

#[test]
fn output_inside_the_repository_is_refused_and_nothing_is_written() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let inside = repo.join("carve-out");
    let o = carve_ok(&["baseline", repo.to_str().unwrap(), "--out", inside.to_str().unwrap()], 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("never writes into the repository"));
    assert_eq!(before, tree_snapshot(&repo));
}

#[needs("pytest")]
fn bad_input_is_skipped_killed_or_reported_never_fatal() {
    let (_tmp, repo) = fixture_copy("python/badinput");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let o = carve_ok(&["index", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json"], 0);
    let index: Value = serde_json::from_slice(&o.stdout).unwrap();
    let skipped: BTreeSet<String> =
        index["skipped"].as_array().unwrap().iter().map(|s| s["path"].as_str().unwrap().to_string()).collect();
    assert_eq!(skipped, BTreeSet::from(["badpkg/broken_syntax.py".to_string(), "badpkg/latin1.py".to_string()]));
    let warn = String::from_utf8_lossy(&o.stderr);
    assert!(warn.contains("badpkg/broken_syntax.py") && warn.contains("badpkg/latin1.py"), "{warn}");
    assert!(index["definitions"].as_object().unwrap().contains_key("badpkg/shapes.py::Rectangle"));

    // The hanging test, selected explicitly, is killed after the per-test timeout.
    let o = carve_ok(
        &[
            "baseline",
            repo.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
            "--format",
            "json",
            "--test-timeout",
            "3",
            "--tests",
            "tests/test_hang.py",
            "tests/test_basic.py",
        ],
        0,
    );
    let b: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hang: Vec<(&String, &Value)> =
        b["tests"].as_object().unwrap().iter().filter(|(k, _)| k.starts_with("tests/test_hang.py::")).collect();
    assert!(!hang.is_empty());
    for (k, v) in hang {
        assert_eq!(v["status"], "timeout", "{k}");
    }
    assert_eq!(
        b["tests"]["tests/test_basic.py::test_area"]["status"],
        "passed",
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // The crashing test process: the crash is an error for that test, the others still run,
    // and tracing keeps what finished.
    let o = carve_ok(&["trace", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json"], 0);
    let t: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(t["tests"].as_u64().unwrap() >= 5, "{t}");
    // tests/test_crash_traced.py kills the traced process: the trace is partial, says so,
    // and keeps the test that finished before the crash.
    let partial = t["partial"].as_array().unwrap();
    assert!(!partial.is_empty(), "the crashed process's trace must be reported partial: {t}");
    let warn = String::from_utf8_lossy(&o.stderr);
    assert!(warn.contains("partial trace"), "{warn}");
    let trace: Value = serde_json::from_str(&read(&out.path().join("trace.json"))).unwrap();
    assert!(
        trace["tests"].as_object().unwrap().contains_key("tests/test_crash_traced.py::test_traced_before"),
        "{trace}"
    );
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

#[needs("pytest")]
fn a_killed_run_leaves_no_half_written_bundle_and_an_untouched_tree() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    // Kill carve at several points of its run; whatever it leaves must be whole.
    for delay_ms in [1500u64, 4000, 7000] {
        let mut child =
            carve().args(["tasks", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap()]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        for entry in std::fs::read_dir(out.path()).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("local__") {
                for f in BUNDLE_FILES {
                    assert!(p.join(f).is_file(), "killed after {delay_ms} ms: bundle {name} lacks {f}");
                }
            }
            if name == "tasks.jsonl" {
                for line in read(&p).lines() {
                    serde_json::from_str::<Value>(line).expect("tasks.jsonl holds whole lines only");
                }
            }
        }
        assert_eq!(before, tree_snapshot(&repo), "a killed carve modified the repository");
    }
}

#[needs("pytest")]
fn every_command_leaves_the_repository_byte_identical() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    carve_ok(&["init", r, "--out", o], 0);
    assert!(out.path().join("carve.toml").is_file());
    carve_ok(&["index", r, "--out", o, "--format", "json"], 0);
    carve_ok(&["baseline", r, "--out", o], 0);
    carve_ok(&["trace", r, "--out", o], 0);
    carve_ok(&["audit", r, "--out", o, "--f2p", "tests/test_search.py"], 0);
    let ex = carve_ok(&["extract", r, "--out", o, "--format", "json", "--f2p", "tests/test_search.py"], 0);
    let ex: Value = serde_json::from_slice(&ex.stdout).unwrap();
    assert!(ex["extracted"].as_array().unwrap().iter().any(|x| x == "inventory/search.py::search"), "{ex}");
    for f in ["contract.json", "problem_statement.md", "mask.patch", "gold.patch", "test.patch"] {
        assert!(out.path().join("extract").join(f).is_file(), "extract wrote no {f}");
    }
    carve_ok(
        &[
            "extract",
            r,
            "--out",
            o,
            "--remove",
            "inventory/search.py::fuzzy_score",
            "--remove-tests",
            "tests/test_search.py",
        ],
        0,
    );
    let t = carve_ok(
        &["tasks", r, "--out", o, "--format", "json", "--level", "1", "2", "--f2p", "tests/test_search.py"],
        0,
    );
    let t: Value = serde_json::from_slice(&t.stdout).unwrap();
    let ids: Vec<&str> = t["tasks"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "search gives a level 1 and a level 2 task: {t}");
    for id in ids {
        let v = carve_ok(&["validate", out.path().join(id).to_str().unwrap(), "--repo", r, "--format", "json"], 0);
        let v: Value = serde_json::from_slice(&v.stdout).unwrap();
        assert_eq!(v["valid"], true, "{v}");
        // The independent re-check runs every state, the restored one too, and checks that
        // it is the repository's tree again.
        let states = v["states"].as_array().unwrap();
        assert!(states.iter().all(|s| s.get("statuses_from").is_none()), "{v}");
        if let Some(restored) = states.iter().find(|s| s["state"] == "restored") {
            assert!(restored["tree_digest"].is_string(), "{restored}");
        }
    }
    assert_eq!(before, tree_snapshot(&repo), "a carve command modified the repository");
}

#[needs("pytest")]
fn validate_reports_a_broken_bundle_with_exit_code_1() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let t = carve_ok(&["tasks", r, "--out", o, "--format", "json", "--level", "1", "--f2p", "tests/test_search.py"], 0);
    let t: Value = serde_json::from_slice(&t.stdout).unwrap();
    let bundle = out.path().join(t["tasks"][0].as_str().unwrap());
    // A bundle whose F2P list names a P2P test (it passes on the masked state) is invalid.
    let mut inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    let p2p0 = inst["PASS_TO_PASS"][0].clone();
    inst["FAIL_TO_PASS"].as_array_mut().unwrap().push(p2p0);
    std::fs::write(bundle.join("instance.json"), serde_json::to_string(&inst).unwrap()).unwrap();
    let v = carve_ok(&["validate", bundle.to_str().unwrap(), "--repo", r, "--format", "json"], 1);
    let v: Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(v["valid"], false);
    let bad: Vec<&Value> = v["states"].as_array().unwrap().iter().filter(|s| s["ok"] == false).collect();
    assert_eq!(bad.len(), 1, "{v}");
    assert_eq!(bad[0]["state"], "masked+tests");
}

#[needs("pytest")]
fn an_entry_filter_command_chooses_among_the_candidates() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    // Keep only the candidates defined in the feature's own module.
    let filter = r#"python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([c["id"] for c in d["candidates"] if "/search.py::" in c["id"]]))'"#;
    let a = carve_ok(
        &["audit", r, "--out", o, "--format", "json", "--f2p", "tests/test_search.py", "--entry-filter", filter],
        0,
    );
    let a: Value = serde_json::from_slice(&a.stdout).unwrap();
    let entries: BTreeSet<&str> = a["entry_points"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    assert_eq!(
        entries,
        BTreeSet::from([
            "inventory/search.py::SkuIndex.__init__",
            "inventory/search.py::SkuIndex.lookup",
            "inventory/search.py::fuzzy_score",
            "inventory/search.py::search"
        ])
    );
    assert!(ids(&a["extracted"]).contains("inventory/search.py::search"));
    // A filter that names something else is refused with the candidates listed.
    let bad = carve_ok(
        &["audit", r, "--out", o, "--f2p", "tests/test_search.py", "--entry-filter", "echo '[\"nope.py::x\"]'"],
        2,
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("nope.py::x") && err.contains("not a candidate"), "{err}");
}

#[needs("pytest")]
fn candidates_k_tries_the_k_candidates_that_extract_the_most() {
    let (_tmp, repo) = fixture_copy("python/inventory");
    // A test file that owns nothing (every test file runs the item model), first in the
    // candidates' order: a blind pick of the first K files would try it, the ranking not.
    std::fs::write(
        repo.join("tests/test_again.py"),
        "from inventory import Item\n\n\ndef test_an_item_normalizes_its_sku():\n    \
         assert Item(\" bolt-m4\", \"Bolt M4\", 3).sku == \"BOLT-M4\"\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let (repo_s, out_s) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let o = carve_ok(&["tasks", repo_s, "--out", out_s, "--format", "json", "--level", "1", "--candidates", "2"], 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ranking = report["ranking"].as_array().expect("--candidates reports the ranking");
    let test_files = std::fs::read_dir(repo.join("tests")).unwrap().count();
    assert_eq!(ranking.len(), test_files, "one ranked candidate per test file: {ranking:?}");
    let sizes: Vec<u64> = ranking.iter().map(|r| r["extracted"].as_u64().unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "most first: {sizes:?}");
    let tried: Vec<&str> =
        ranking.iter().filter(|r| r["tried"] == true).map(|r| r["feature"].as_str().unwrap()).collect();
    assert_eq!(tried, ranking[..2].iter().map(|r| r["feature"].as_str().unwrap()).collect::<Vec<_>>());
    assert!(sizes[1] > 0 && sizes.last() == Some(&0), "test_again.py owns nothing: {sizes:?}");
    assert_eq!(ranking.last().unwrap()["feature"], "again", "the file that owns nothing ranks last: {ranking:?}");
    // Only the tried candidates were masked: every task and every rejection is one of them.
    let mut seen: BTreeSet<&str> =
        report["rejected"].as_array().unwrap().iter().map(|r| r["feature"].as_str().unwrap()).collect();
    for id in report["tasks"].as_array().unwrap() {
        let inst: Value =
            serde_json::from_str(&read(&out.path().join(id.as_str().unwrap()).join("instance.json"))).unwrap();
        seen.insert(
            tried.iter().copied().find(|t| inst["carve"]["feature"] == *t).expect("a task of a tried candidate"),
        );
    }
    assert_eq!(seen, tried.iter().copied().collect::<BTreeSet<_>>());
    // The size is what the audit of that candidate extracts.
    let first = ranking[0]["feature"].as_str().unwrap();
    let audit =
        carve_ok(&["audit", repo_s, "--out", out_s, "--format", "json", "--f2p", &format!("tests/test_{first}.py")], 0);
    let audit: Value = serde_json::from_slice(&audit.stdout).unwrap();
    assert_eq!(audit["extracted"].as_array().unwrap().len() as u64, sizes[0]);
}
