//! End-to-end `carve extract --remove` on the TypeScript, Go and Rust fixtures: the masked
//! project is build-checked by carve itself with the real toolchain, referenced
//! definitions are stubbed, unreferenced ones deleted, and the repository is untouched.

mod common;

use common::*;
use serde_json::Value;

fn toolchain(program: &str, arg: &str) -> bool {
    let ok = std::process::Command::new(program).arg(arg).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(std::env::var_os("CI").is_none(), "{program} is required in CI");
        eprintln!("skipping: {program} is not installed");
    }
    ok
}

/// A copy of `fixture` with its installed node_modules (from `npm ci`) hard-linked in, as
/// if installed there.
fn copy_with_dependencies(fixture: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy(fixture);
    let node_modules = root().join("fixtures").join(fixture).join("node_modules");
    if node_modules.is_dir() && !repo.join("node_modules").exists() {
        let ok = std::process::Command::new("cp")
            .arg("-al")
            .arg(&node_modules)
            .arg(repo.join("node_modules"))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    (tmp, repo)
}

/// Run `carve extract --remove ids` on a copy of `fixture`; returns mask.patch.
fn extract(fixture: &str, remove: &[&str]) -> String {
    let (_tmp, repo) = copy_with_dependencies(fixture);
    let before = snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let mut args =
        vec!["extract", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json", "--remove"];
    args.extend_from_slice(remove);
    let o = carve_ok(&args, 0);
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["extracted"].as_array().unwrap().len(), remove.len(), "{summary}");
    assert_eq!(before, snapshot(&repo), "carve extract modified the repository");
    std::fs::read_to_string(out.path().join("extract/mask.patch")).unwrap()
}

#[test]
fn go_extraction_stubs_referenced_code_and_builds() {
    if !toolchain("go", "version") {
        return;
    }
    let patch = extract("go/shapes", &["catalog/catalog.go::Catalog.TotalArea", "catalog/catalog.go::LargerThan"]);
    assert!(patch.contains("+\tpanic(\"not implemented\")"), "{patch}");
}

#[test]
fn rust_extraction_stubs_referenced_code_and_builds() {
    if !toolchain("cargo", "--version") {
        return;
    }
    let patch = extract("rust/geometry", &["src/report.rs::Report.total_area", "src/shapes.rs::Rect.is_square"]);
    assert!(patch.contains("todo!()"), "{patch}");
}

#[test]
fn typescript_extraction_stubs_referenced_code_and_type_checks() {
    if !toolchain("node", "--version") {
        return;
    }
    if !root().join("fixtures/typescript/ledger/node_modules").is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "run scripts/setup: fixtures/typescript/ledger/node_modules is missing"
        );
        eprintln!("skipping: fixtures/typescript/ledger/node_modules is missing (run scripts/setup)");
        return;
    }
    let patch =
        extract("typescript/ledger", &["src/money/currency.ts::convert", "src/accounts/ledger.ts::Ledger.transfer"]);
    assert!(patch.contains("throw new Error(\"not implemented\")"), "{patch}");
}

/// `carve init` + `carve baseline` through the CLI on a runner-cases fixture: the runner is
/// detected, the flaky test is marked flaky, failing and skipped tests keep their status,
/// and a selection reports exactly the requested ids (an unknown one as missing).
fn baseline_through_the_cli(fixture: &str, flaky: &str, failing: &str, runner: &str) {
    let (_tmp, repo) = copy_with_dependencies(fixture);
    let before = snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let (r, o) = (repo.to_str().unwrap(), out.path().to_str().unwrap());
    let flaky_dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| -> Value {
        let out = carve().args(args).env("CARVE_FLAKY_DIR", flaky_dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "carve {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let init = run(&["init", r, "--out", o, "--format", "json"]);
    assert_eq!(init["settings"]["test"]["runner"], runner, "{init}");
    let b = run(&["baseline", r, "--out", o, "--format", "json"]);
    let tests = b["tests"].as_object().unwrap();
    assert_eq!(tests[flaky]["flaky"], true, "{flaky} must be flaky: {b}");
    assert_eq!(tests[failing]["status"], "failed", "{b}");
    assert!(tests.values().any(|t| t["status"] == "skipped"), "{b}");
    let passing: Vec<&String> =
        tests.iter().filter(|(_, t)| t["status"] == "passed" && t["flaky"] == false).map(|(k, _)| k).collect();
    let wanted = [passing[0].as_str(), failing, "no-such-test-id"];
    let mut args = vec!["baseline", r, "--out", o, "--format", "json", "--tests"];
    args.extend_from_slice(&wanted);
    let sel = run(&args);
    let got: Vec<&String> = sel["tests"].as_object().unwrap().keys().collect();
    let mut want: Vec<&str> = wanted.to_vec();
    want.sort();
    assert_eq!(got, want, "a selected run reports exactly the requested ids");
    assert_eq!(sel["tests"]["no-such-test-id"]["status"], "missing");
    assert_eq!(before, snapshot(&repo), "carve modified the repository");
}

#[test]
fn go_baseline_through_the_cli() {
    if toolchain("go", "version") {
        baseline_through_the_cli(
            "go/runner-cases",
            "example.com/runnercases/TestFlaky",
            "example.com/runnercases/TestFails",
            "go",
        );
    }
}

#[test]
fn rust_baseline_through_the_cli() {
    if toolchain("cargo", "--version") {
        baseline_through_the_cli(
            "rust/runner-cases",
            "runner_cases::tests::flaky",
            "runner_cases::tests::fails",
            "cargo",
        );
    }
}

#[test]
fn typescript_baseline_through_the_cli() {
    if !toolchain("node", "--version") {
        return;
    }
    if !root().join("fixtures/typescript/runner-cases/node_modules").is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "run scripts/setup: fixtures/typescript/runner-cases/node_modules is missing"
        );
        eprintln!("skipping: fixtures/typescript/runner-cases/node_modules is missing (run scripts/setup)");
        return;
    }
    baseline_through_the_cli(
        "typescript/runner-cases",
        "tests/nested/flaky.test.ts > flaky > passes every other run",
        "tests/math.test.ts > fails on purpose",
        "vitest",
    );
}

#[test]
fn python_baseline_through_the_cli() {
    baseline_through_the_cli(
        "python/runner-cases",
        "tests/sub/test_flaky.py::test_flaky",
        "tests/test_cases.py::test_fails",
        "pytest",
    );
}
