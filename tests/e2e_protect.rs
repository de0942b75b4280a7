//! End-to-end tests of the protection policies and feature-sized candidates (issue 26) over
//! `fixtures/python/shelf` (see its README): `--protect all` gives a crumb, `sampled:2` and
//! `feature` bigger validated tasks; `sampled:2` protects only with files that run none of
//! the feature's entry points (FeatureBench's choice), so the closest files, which run them,
//! do not keep the feature; `feature` makes the tests that break F2P and keeps a
//! test helper that only a fixture needs; the sampled files are chosen deterministically;
//! the line budget keeps whole definitions; `--module-groups` makes a candidate of the test
//! files that test one module.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const CATALOG: &str = "tests/test_catalog.py";

/// `carve tasks` on the fixture copy `repo` with `args`: its report and the bundles'
/// `instance.json`, `audit.json` and `validation.json`, by instance id.
fn tasks(repo: &Path, args: &[&str]) -> (tempfile::TempDir, Value, Vec<(Value, Value, Value)>) {
    let (out, report, dirs) = level1_tasks_json(repo, args);
    let bundles = dirs
        .iter()
        .map(|d| (bundle_json(d, "instance.json"), bundle_json(d, "audit.json"), bundle_json(d, "validation.json")))
        .collect();
    (out, report, bundles)
}

/// The one task of `--f2p tests/test_catalog.py` under `policy`.
fn catalog_task(repo: &Path, policy: &str) -> (Value, Value, Value) {
    let (_out, report, mut bundles) = tasks(repo, &["--f2p", CATALOG, "--protect", policy]);
    assert_eq!(bundles.len(), 1, "{policy}: {report:#}");
    bundles.remove(0)
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn files_of(tests: &BTreeSet<String>) -> BTreeSet<&str> {
    tests.iter().map(|t| t.split("::").next().unwrap()).collect()
}

#[needs("pytest")]
fn sampled_and_feature_make_bigger_validated_tasks_than_all() {
    let (_tmp, repo) = fixture_copy("python/shelf");
    let (all, _, all_v) = catalog_task(&repo, "all");
    let (sampled, sampled_audit, sampled_v) = catalog_task(&repo, "sampled:2");
    let (feature, _, feature_v) = catalog_task(&repo, "feature");
    for (name, v) in [("all", &all_v), ("sampled:2", &sampled_v), ("feature", &feature_v)] {
        assert_eq!(v["valid"], true, "{name}: {v:#}");
    }
    let lines = |i: &Value| i["lines"].as_u64().unwrap();
    assert!(lines(&all) < 30, "all gives a crumb: {}", lines(&all));
    assert!(lines(&sampled) > lines(&all) + 20, "sampled:2 {} vs all {}", lines(&sampled), lines(&all));
    assert!(lines(&feature) > lines(&all) + 20, "feature {} vs all {}", lines(&feature), lines(&all));
    assert_eq!(all["carve"]["protection"]["policy"], "all");
    assert_eq!(all["carve"]["protection"]["max_lines"], 5000);

    // sampled:2, as FeatureBench chooses: only a file whose tests run none of the feature's
    // entry points may protect. test_report, test_export and test_loans call Catalog
    // methods and make_catalog, test_search calls shelf.search: the closest of them would
    // protect the feature wholesale. test_books (Book alone) is the one that qualifies; the
    // tests outside it that break are reported, not silently kept.
    let p = &sampled["carve"]["protection"];
    assert_eq!(p["policy"], "sampled:2");
    let chosen: Vec<&str> = p["p2p_files"].as_array().unwrap().iter().map(|f| f["file"].as_str().unwrap()).collect();
    assert_eq!(chosen, ["tests/test_books.py"], "{p:#}");
    assert_eq!(p.get("shared_entries"), None, "test_books qualifies with every entry point in place: {p:#}");
    let p2p = strings(&sampled["PASS_TO_PASS"]);
    assert_eq!(files_of(&p2p), ["tests/test_books.py"].into());
    let broken = strings(&p["broken_tests"]);
    let others = ["tests/test_export.py", "tests/test_loans.py", "tests/test_report.py", "tests/test_search.py"];
    assert_eq!(files_of(&broken), others.into(), "{p:#}");
    assert_eq!(p["broken_count"], broken.len());
    assert!(broken.is_disjoint(&p2p));
    assert_eq!(strings(&sampled_v["broken_tests"]), broken, "validation.json lists them too");
    assert_eq!(sampled_audit["protection"], *p, "audit.json records the same");
    // Every member of Catalog goes: the task asks for the class, not its methods one by one.
    assert!(strings(&sampled["top_objects"]).contains("shelf/catalog.py::Catalog"), "{:#}", sampled["top_objects"]);
    assert!(strings(&sampled["carve"]["extracted"]).contains("shelf/search.py::search"));
}

#[needs("pytest")]
fn feature_makes_breaking_tests_f2p_and_keeps_a_helper_only_a_fixture_needs() {
    let (_tmp, repo) = fixture_copy("python/shelf");
    let out = tempfile::tempdir().unwrap();
    let args = ["--level", "1", "--format", "json", "--python", "python3", "--f2p", CATALOG, "--protect", "feature"];
    let o = carve_on("tasks", &repo, out.path(), &args, 0);
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let bundle = out.path().join(report["tasks"][0].as_str().expect("a task"));
    let inst: Value = serde_json::from_str(&read(&bundle.join("instance.json"))).unwrap();
    let audit: Value = serde_json::from_str(&read(&bundle.join("audit.json"))).unwrap();
    let f2p = strings(&inst["FAIL_TO_PASS"]);
    let p2p = strings(&inst["PASS_TO_PASS"]);
    let joined = strings(&inst["carve"]["protection"]["joined_f2p"]);
    // Tests of other files that failed on the masked state joined F2P.
    for t in ["tests/test_search.py::test_every_word_must_match", "tests/test_report.py::test_summary"] {
        assert!(joined.contains(t) && f2p.contains(t), "{t}: {joined:?}");
    }
    assert!(f2p.is_superset(&joined));
    // Every other test still passes on the masked state: the P2P tests are the rest.
    assert_eq!(
        p2p,
        [
            "tests/test_books.py::test_a_book_needs_a_title",
            "tests/test_books.py::test_isbn_keeps_digits_and_the_check_character",
            "tests/test_books.py::test_label_and_key",
            "tests/test_loans.py::test_overdue_days",
        ]
        .map(String::from)
        .into()
    );
    // The `blank` case passed on the masked state, but its function leaves it with the
    // `shelved` case, which joined F2P: it is dropped in that round, neither F2P nor P2P
    // (kept among the P2P tests it went missing and joined F2P a round later).
    let blank = "tests/test_search.py::test_a_shelved_title_is_found[blank]";
    assert!(f2p.contains("tests/test_search.py::test_a_shelved_title_is_found[shelved]"), "{f2p:?} {p2p:?}");
    assert!(!f2p.contains(blank) && !p2p.contains(blank));
    assert!(strings(&audit["dropped_cases"]).contains(blank), "{:#}", audit["dropped_cases"]);
    assert!(strings(&audit["order_dependent"]).is_empty());
    assert_eq!(f2p.len() + p2p.len() + 1, 21, "the whole suite is F2P or P2P, but for the dropped case");
    // test_overdue_days reached the catalog only through its fixture: the helper stayed.
    let repairs = audit["load_repairs"].as_array().unwrap();
    let kept: Vec<&Value> = repairs.iter().flat_map(|r| r["moved"].as_array().unwrap()).collect();
    let helper = kept.iter().find(|k| k["id"] == "shelf/testing.py::make_catalog").expect("make_catalog kept");
    assert_eq!(helper["found_by"], "tests/test_loans.py::test_overdue_days");
    assert_eq!(helper["helper"], "tests/test_loans.py::catalog");
    let remained = audit["remained"].as_array().unwrap();
    let reasons = &remained.iter().find(|r| r["id"] == "shelf/testing.py::make_catalog").unwrap()["reasons"];
    assert!(reasons.to_string().contains("needed by test code that stays (tests/test_loans.py::catalog"), "{reasons}");
    assert!(!strings(&inst["carve"]["extracted"]).contains("shelf/testing.py::make_catalog"));
    // The statement covers the behaviour of every F2P test, by file.
    let statement = read(&bundle.join("problem_statement.md"));
    for b in ["every word must match", "summary", "lend finds the book", "export is sorted by title"] {
        assert!(statement.contains(b), "{b}:\n{statement}");
    }
    assert!(statement.contains("From `tests/test_search.py`:"), "{statement}");
    // The bundle re-checks on its own.
    let (b, r) = (bundle.to_str().unwrap(), repo.to_str().unwrap());
    carve_ok(&["validate", b, "--repo", r, "--python", "python3", "--format", "json"], 0);
}

#[needs("pytest")]
fn the_sampled_files_are_chosen_the_same_way_every_time_and_audit_and_extract_take_the_policy() {
    let (_tmp, repo) = fixture_copy("python/shelf");
    let audit = |policy: &str| -> Value {
        let out = tempfile::tempdir().unwrap();
        let args = ["--f2p", CATALOG, "--protect", policy, "--format", "json", "--python", "python3"];
        serde_json::from_slice(&carve_on("audit", &repo, out.path(), &args, 0).stdout).unwrap()
    };
    let first = audit("sampled:2");
    let again = audit("sampled:2");
    assert_eq!(first["protection"], again["protection"]);
    assert_eq!(first["extracted"], again["extracted"]);
    let files = &first["protection"]["p2p_files"];
    assert_eq!(files.as_array().unwrap().len(), 1, "one file runs none of the entry points: {files:#}");
    assert_eq!(files[0]["file"], "tests/test_books.py");
    // It shares Book's code with the feature (protected), none of its entry points.
    assert_eq!(files[0]["shared"], 3);
    let three = audit("sampled:3");
    assert_eq!(three["protection"]["p2p_files"], *files, "no other file qualifies for a third place");

    // The line budget keeps whole definitions and says which.
    let out = tempfile::tempdir().unwrap();
    let args =
        ["--f2p", CATALOG, "--protect", "feature", "--max-lines", "30", "--format", "json", "--python", "python3"];
    let budget: Value = serde_json::from_slice(&carve_on("audit", &repo, out.path(), &args, 0).stdout).unwrap();
    let over = strings(&budget["protection"]["over_budget"]);
    assert!(!over.is_empty(), "{budget:#}");
    for r in budget["remained"].as_array().unwrap().iter().filter(|r| over.contains(r["id"].as_str().unwrap())) {
        assert!(r["reasons"].to_string().contains("beyond the line budget of 30 lines"), "{r}");
    }
    let extracted: BTreeSet<String> =
        budget["extracted"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()).collect();
    assert!(extracted.is_disjoint(&over));

    // carve extract takes the policy too: the masked state of sampled:2 misses shelf.search.
    let out = tempfile::tempdir().unwrap();
    let args = ["--f2p", CATALOG, "--protect", "sampled:2", "--format", "json", "--python", "python3"];
    let ext: Value = serde_json::from_slice(&carve_on("extract", &repo, out.path(), &args, 0).stdout).unwrap();
    assert!(strings(&ext["extracted"]).contains("shelf/search.py::search"), "{ext:#}");
    let bad = carve().args(["audit", repo.to_str().unwrap(), "--f2p", CATALOG, "--protect", "some"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("all, sampled:N (N test files) or feature"));
}

#[needs("pytest")]
fn module_groups_make_one_candidate_of_the_test_files_of_one_module() {
    let (_tmp, repo) = fixture_copy("python/shelf");
    let (_out, report, bundles) = tasks(&repo, &["--module-groups"]);
    let group = bundles.iter().find(|(i, _, _)| i["carve"]["feature"] == "catalog-module");
    let (inst, _, v) = group.unwrap_or_else(|| panic!("no catalog-module task: {report:#}"));
    assert_eq!(v["valid"], true);
    let f2p = strings(&inst["FAIL_TO_PASS"]);
    assert_eq!(files_of(&f2p), ["tests/test_catalog.py", "tests/test_export.py"].into(), "{inst:#}");
    // The single-file candidates are tried too (under `all`, export's is rejected: what it
    // tests is run by other tests).
    let mut tried: Vec<&str> = bundles.iter().map(|(i, _, _)| i["carve"]["feature"].as_str().unwrap()).collect();
    tried.extend(report["rejected"].as_array().unwrap().iter().map(|r| r["feature"].as_str().unwrap()));
    for f in ["books", "catalog", "export", "loans", "report", "search", "catalog-module"] {
        assert!(tried.contains(&f), "{f}: {report:#}");
    }
}
