//! The cuts of issue 12 point 7, end to end: from cold, `carve trace` runs the suite once
//! untraced and the traced run is the baseline's second run (flaky tests and tests the shim
//! breaks are told apart and recorded in the baseline); `carve baseline` alone still runs
//! twice untraced. The restored state's statuses come from the baseline only with its
//! digest as proof (checked in `e2e_python.rs`).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn json(args: &[&str], flaky_dir: &Path) -> Value {
    let out = carve().args(args).env("CARVE_FLAKY_DIR", flaky_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "carve {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[needs("pytest")]
fn from_cold_the_traced_run_is_the_second_baseline_run() {
    let (_tmp, repo) = fixture_copy("python/runner-cases");
    let before = tree_snapshot(&repo);
    // A test that passes untraced and fails under the shim, every time.
    std::fs::write(
        repo.join("tests/test_shim_sensitive.py"),
        "import os\n\n\ndef test_untraced_only():\n    assert 'CARVE_TRACE_DIR' not in os.environ\n",
    )
    .unwrap();
    let flaky_dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let trace = json(&["trace", r, "--out", o, "--format", "json"], flaky_dir.path());
    assert_eq!(trace["cached"], false, "{trace}");
    // The baseline the cold trace wrote (a cache hit: no run).
    let b = json(&["baseline", r, "--out", o, "--format", "json"], flaky_dir.path());
    assert_eq!(b["second_run"], "traced", "{b}");
    let tests = &b["tests"];
    let flaky = &tests["tests/sub/test_flaky.py::test_flaky"];
    // Untraced it passed (count 0), traced it failed (1), traced again it passed (2).
    assert_eq!(
        (&flaky["status"], &flaky["second"], &flaky["traced_rerun"]),
        (&"passed".into(), &"failed".into(), &"passed".into()),
        "{flaky}"
    );
    assert_eq!(flaky["flaky"], true);
    assert!(flaky.get("plain_rerun").is_none(), "{flaky}");
    let shim = &tests["tests/test_shim_sensitive.py::test_untraced_only"];
    assert_eq!(shim["flaky"], false, "{shim}");
    assert_eq!(shim["shim_failure"], true, "{shim}");
    assert_eq!((&shim["traced_rerun"], &shim["plain_rerun"]), (&"failed".into(), &"passed".into()), "{shim}");
    assert_eq!(tests["tests/test_cases.py::test_fails"]["status"], "failed");
    assert_eq!(tests["tests/test_cases.py::test_passes"]["second"], "passed");
    // The trace holds the stable passing tests only.
    let t: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("trace.json")).unwrap()).unwrap();
    let traced = t["tests"].as_object().unwrap();
    assert!(traced.contains_key("tests/test_cases.py::test_passes"), "{t}");
    for left_out in [
        "tests/sub/test_flaky.py::test_flaky",
        "tests/test_shim_sensitive.py::test_untraced_only",
        "tests/test_cases.py::test_fails",
    ] {
        assert!(!traced.contains_key(left_out), "{left_out} is in the trace");
    }
    // The next trace reads the cache the cold run wrote.
    let again = json(&["trace", r, "--out", o, "--format", "json"], flaky_dir.path());
    assert_eq!(again["cached"], true, "{again}");
    assert_eq!(again["digest"], trace["digest"]);
    // `carve baseline` on its own (fresh) runs twice untraced.
    let fresh = json(&["baseline", r, "--out", o, "--format", "json", "--fresh"], flaky_dir.path());
    assert_eq!(fresh["second_run"], "plain", "{fresh}");
    assert_eq!(fresh["tests"]["tests/test_shim_sensitive.py::test_untraced_only"]["flaky"], false);
    assert_eq!(fresh["tests"]["tests/test_shim_sensitive.py::test_untraced_only"]["second"], "passed");
    std::fs::remove_file(repo.join("tests/test_shim_sensitive.py")).unwrap();
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

/// A test that fails while another run of it is running (it holds a lock file, as a test
/// holding a fixed port would) must not come out flaky or failing because carve ran the
/// untraced and the traced run at once: what did not pass both runs runs again one run after
/// the other. With `--jobs 1` nothing overlaps and nothing runs again.
#[needs("pytest")]
fn tests_that_collide_when_the_cold_runs_overlap_are_run_again_one_after_the_other() {
    let (_tmp, repo) = fixture_copy("python/runner-cases");
    let lock_dir = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.join("tests/test_exclusive.py"),
        "import os\nimport time\n\n\ndef test_alone():\n    \
         # Raises FileExistsError while another run holds the lock.\n    \
         path = os.path.join(os.environ['CARVE_E2E_LOCK_DIR'], 'lock')\n    \
         fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n    \
         try:\n        time.sleep(3)\n    finally:\n        os.close(fd)\n        os.unlink(path)\n",
    )
    .unwrap();
    let flaky_dir = tempfile::tempdir().unwrap();
    let id = "tests/test_exclusive.py::test_alone";
    for jobs in ["2", "1"] {
        let out = tempfile::tempdir().unwrap();
        let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
        let run = carve()
            .args(["trace", r, "--out", o, "--format", "json", "--jobs", jobs])
            .env("CARVE_FLAKY_DIR", flaky_dir.path())
            .env("CARVE_E2E_LOCK_DIR", lock_dir.path())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0), "--jobs {jobs}: {}", String::from_utf8_lossy(&run.stderr));
        let b = json(&["baseline", r, "--out", o, "--format", "json"], flaky_dir.path());
        let e = &b["tests"][id];
        assert_eq!(
            (&e["status"], &e["second"], &e["flaky"]),
            (&"passed".into(), &"passed".into(), &false.into()),
            "--jobs {jobs}: {b:#}"
        );
        let t: Value = serde_json::from_str(&std::fs::read_to_string(out.path().join("trace.json")).unwrap()).unwrap();
        assert!(t["tests"].get(id).is_some(), "--jobs {jobs}: the re-run's trace holds {id}");
        let warned = b["warnings"].to_string().contains("ran at once");
        // The fixture's failing and flaky tests never pass both runs: with two jobs they run again.
        assert_eq!(warned, jobs == "2", "--jobs {jobs}: {b:#}");
    }
}
