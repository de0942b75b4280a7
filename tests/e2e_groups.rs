//! End-to-end tests of feature-sized candidates of several test files (issue 26 item 2) over
//! `fixtures/python/notebook` (see its README): two test files whose home module is
//! `notebook/store.py` form the candidate `store-module`, which gives one valid task bigger
//! than either file's (each file alone is protected by the other); its bundle records the
//! grouped files; every method of `Store` goes while the class statement stays, so the
//! statement presents the class as one object to implement; `--module-groups` defaults to
//! `also` under `sampled:N` and to `off` under `all`.
//!
//! And over `fixtures/python/atlas` (see its README): a test file that tests two modules joins
//! both modules' groups, a package's test files form a group when the package is not the whole
//! library, and a group whose task is one of its files' is dropped as a duplicate with its reason.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// `carve tasks` on `repo` with `args` (Level 1): the report, and per emitted task its
/// feature, `instance.json`, `audit.json`, `validation.json` and problem statement.
fn tasks(repo: &Path, args: &[&str]) -> (Value, Vec<(String, Value, Value, Value, String)>) {
    let before = tree_snapshot(repo);
    let (_out, report, dirs) = level1_tasks_json(repo, args);
    assert_eq!(before, tree_snapshot(repo), "carve tasks modified the repository");
    let bundles = dirs
        .iter()
        .map(|dir| {
            let inst = bundle_json(dir, "instance.json");
            let feature = inst["carve"]["feature"].as_str().unwrap().to_string();
            let (audit, validation) = (bundle_json(dir, "audit.json"), bundle_json(dir, "validation.json"));
            (feature, inst, audit, validation, read(&dir.join("problem_statement.md")))
        })
        .collect();
    (report, bundles)
}

/// Every candidate `report` tried: its tasks' features and its rejections'.
fn tried(report: &Value, bundles: &[(String, Value, Value, Value, String)]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = bundles.iter().map(|b| b.0.clone()).collect();
    out.extend(report["rejected"].as_array().unwrap().iter().map(|r| r["feature"].as_str().unwrap().to_string()));
    out
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

#[needs("pytest")]
fn a_module_group_gives_one_task_bigger_than_each_of_its_files() {
    let (_tmp, repo) = fixture_copy("python/notebook");
    let (report, bundles) = tasks(&repo, &["--module-groups"]);
    let task =
        |f: &str| bundles.iter().find(|b| b.0 == f).unwrap_or_else(|| panic!("no valid task of {f}: {report:#}"));
    let (_, group, audit, validation, statement) = task("store-module");
    let (_, store, _, store_v, _) = task("store");
    let (_, search, _, search_v, _) = task("search");
    for v in [validation, store_v, search_v] {
        assert_eq!(v["valid"], true, "{v:#}");
    }

    // The group's F2P tests are both files' tests; only test_text.py protects.
    let f2p = strings(&group["FAIL_TO_PASS"]);
    let files: BTreeSet<&str> = f2p.iter().map(|t| t.split("::").next().unwrap()).collect();
    assert_eq!(files, ["tests/test_search.py", "tests/test_store.py"].into(), "{group:#}");
    assert!(f2p.is_superset(&(&strings(&store["FAIL_TO_PASS"]) | &strings(&search["FAIL_TO_PASS"]))));
    // `test_the_store_is_bounded` runs only `add`: alone its file's candidate keeps `add`
    // (test_search.py runs it), so the test still passes there and stays P2P; in the group
    // `add` goes and the test is F2P.
    let bounded = "tests/test_store.py::test_the_store_is_bounded".to_string();
    assert!(strings(&store["PASS_TO_PASS"]).contains(&bounded), "{store:#}");
    assert!(f2p.contains(&bounded), "{group:#}");
    let p2p = strings(&group["PASS_TO_PASS"]);
    assert!(p2p.iter().all(|t| t.starts_with("tests/test_text.py::")), "{p2p:?}");

    // One bigger task: everything either file's task extracts, and more (`__init__`, `add`,
    // which each file's tests protect for the other).
    let extracted = |i: &Value| strings(&i["carve"]["extracted"]);
    let union = &extracted(store) | &extracted(search);
    assert!(extracted(group).is_superset(&union), "{:?} vs {union:?}", extracted(group));
    for m in ["__init__", "add", "get", "titles", "remove", "search", "count_words"] {
        assert!(extracted(group).contains(&format!("notebook/store.py::Store.{m}")), "{m}: {group:#}");
    }
    assert!(!extracted(group).contains("notebook/text.py::words"), "test_text.py protects words");
    let lines = |i: &Value| i["lines"].as_u64().unwrap();
    assert!(
        lines(group) > lines(store) && lines(group) > lines(search),
        "{} {} {}",
        lines(group),
        lines(store),
        lines(search)
    );
    assert!(
        lines(group) < lines(store) + lines(search) + 20,
        "no more than the two files' code and the shared methods"
    );

    // The bundle records the grouped files, in instance.json and audit.json.
    let recorded = serde_json::json!({
        "kind": "module", "module": "notebook/store.py",
        "test_files": ["tests/test_search.py", "tests/test_store.py"],
    });
    assert_eq!(group["carve"]["group"], recorded, "{group:#}");
    assert_eq!(audit["group"], recorded);
    assert!(store["carve"].get("group").is_none(), "a candidate of one file records no group");

    // Every method of Store goes, its class statement stays (Archive, which stays, derives from it):
    // the statement asks for the class, not for seven methods one by one.
    assert!(statement.contains("### `Store` (class)"), "{statement}");
    assert!(statement.contains("implement the class `Store` with its 7 method(s) below"), "{statement}");
    assert!(!statement.contains("Methods of the existing class `Store`"), "{statement}");
    assert!(!strings(&store["carve"]["extracted"]).contains("notebook/store.py::Store.add"));
}

#[needs("pytest")]
fn module_groups_are_tried_by_default_under_sampled_and_not_under_all() {
    let (_tmp, repo) = fixture_copy("python/notebook");
    let (report, bundles) = tasks(&repo, &["--protect", "sampled:1"]);
    let sampled = tried(&report, &bundles);
    assert!(sampled.contains("store-module"), "{report:#}");
    let (report, bundles) = tasks(&repo, &["--protect", "sampled:1", "--module-groups=off"]);
    let off = tried(&report, &bundles);
    assert_eq!(off, ["search", "store", "text"].map(String::from).into(), "{report:#}");
    let (report, bundles) = tasks(&repo, &[]);
    assert_eq!(tried(&report, &bundles), off, "under `all` no group by default: {report:#}");
}

#[needs("pytest")]
fn second_homes_and_packages_make_groups_and_a_group_that_adds_nothing_is_dropped() {
    let (_tmp, repo) = fixture_copy("python/atlas");
    let out = tempfile::tempdir().unwrap();
    let before = tree_snapshot(&repo);
    let args = ["--level", "1", "--format", "json", "--python", "python3", "--protect", "sampled:1"];
    let o = carve_on("tasks", &repo, out.path(), &args, 0);
    assert_eq!(before, tree_snapshot(&repo), "carve tasks modified the repository");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<String> =
        report["tasks"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_string()).collect();
    let bundles: Vec<Value> = ids.iter().map(|id| bundle_json(&out.path().join(id), "instance.json")).collect();
    let feature = |i: &Value| i["carve"]["feature"].as_str().unwrap().to_string();
    let task = |f: &str| bundles.iter().find(|i| feature(i) == f).unwrap_or_else(|| panic!("no task {f}: {report:#}"));
    let rejected = |f: &str| -> Option<String> {
        report["rejected"].as_array().unwrap().iter().find(|r| r["feature"] == f).map(|r| r["reason"].to_string())
    };

    // test_routes.py calls three route functions and two point functions: it joins the
    // group of each module; the geo package's three test files are a group of their own.
    let group = |f: &str| task(f)["carve"]["group"].clone();
    assert_eq!(
        group("points-module"),
        serde_json::json!({"kind": "module", "module": "atlas/geo/points.py",
                           "test_files": ["tests/test_points.py", "tests/test_routes.py"]})
    );
    assert_eq!(
        group("routes-module"),
        serde_json::json!({"kind": "module", "module": "atlas/geo/routes.py",
                           "test_files": ["tests/test_maps.py", "tests/test_routes.py"]})
    );
    assert_eq!(
        group("geo-package"),
        serde_json::json!({"kind": "package", "module": "atlas/geo",
                           "test_files": ["tests/test_maps.py", "tests/test_points.py", "tests/test_routes.py"]})
    );
    let extracted = |f: &str| strings(&task(f)["carve"]["extracted"]);
    let lines = |f: &str| task(f)["lines"].as_u64().unwrap();
    // The package's task is the whole of both modules: bigger than either module's group.
    for f in ["route", "length", "shift", "reverse", "closed"] {
        assert!(extracted("geo-package").contains(&format!("atlas/geo/routes.py::{f}")), "{f}: {report:#}");
    }
    for f in ["point", "add", "distance", "scale"] {
        assert!(extracted("geo-package").contains(&format!("atlas/geo/points.py::{f}")), "{f}: {report:#}");
    }
    assert!(lines("geo-package") > lines("points-module").max(lines("routes-module")));
    // The top package holds every test file's home: the whole library is no group.
    assert!(!tried(&report, &[]).contains("atlas-package"), "{report:#}");

    // clip-module (test_clip.py and test_clip_edge.py) extracts what test_clip.py alone does:
    // the edge tests call only `clip`. Its task is dropped, with the reason, and no bundle.
    assert!(extracted("clip").is_superset(&extracted("clip-edge")), "{report:#}");
    assert!(extracted("clip").contains("atlas/clip.py::trim"), "{report:#}");
    let reason = rejected("clip-module").unwrap_or_else(|| panic!("clip-module not rejected: {report:#}"));
    assert!(reason.contains("duplicate of clip"), "{reason}");
    assert!(bundles.iter().all(|i| feature(i) != "clip-module"), "{report:#}");
    let dirs: Vec<String> =
        std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert!(dirs.iter().all(|d| !d.contains(".clip-module.")), "its bundle is removed: {dirs:?}");
    assert_eq!(tasks_jsonl(out.path()).len(), ids.len(), "tasks.jsonl lists the tasks kept");
}
