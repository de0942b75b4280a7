//! End-to-end `carve extract --remove` on the TypeScript, Go and Rust fixtures: the masked
//! project is build-checked by carve itself with the real toolchain, referenced
//! definitions are stubbed, unreferenced ones deleted, and the repository is untouched.

mod common;

use common::*;
use serde_json::Value;

/// A copy of fixture `name` with its installed node_modules (from `npm ci`) hard-linked in, as
/// if installed there.
fn copy_with_dependencies(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy(name);
    let node_modules = fixture(name).join("node_modules");
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
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let mut args =
        vec!["extract", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json", "--remove"];
    args.extend_from_slice(remove);
    let o = carve_ok(&args, 0);
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["extracted"].as_array().unwrap().len(), remove.len(), "{summary}");
    assert_eq!(before, tree_snapshot(&repo), "carve extract modified the repository");
    std::fs::read_to_string(out.path().join("extract/mask.patch")).unwrap()
}

#[needs("go")]
fn go_extraction_stubs_referenced_code_and_builds() {
    let patch = extract("go/shapes", &["catalog/catalog.go::Catalog.TotalArea", "catalog/catalog.go::LargerThan"]);
    assert!(patch.contains("+\tpanic(\"not implemented\")"), "{patch}");
}

/// A copy of the shapes fixture with `cmd/shapes/reporter.go`, which takes the method value
/// `catalog.New().Largest` at line 7: the Go index cannot type it (it names nothing), so
/// deleting `Catalog.Largest` breaks `go build`.
fn shapes_with_a_method_value() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, repo) = fixture_copy("go/shapes");
    std::fs::write(
        repo.join("cmd/shapes/reporter.go"),
        "package main\n\nimport \"example.com/shapes/catalog\"\n\n// largest is a method value.\n\
         func largest() func() (catalog.Entry, bool) {\n\treturn catalog.New().Largest\n}\n\n\
         var _ = largest\n",
    )
    .unwrap();
    (tmp, repo)
}

/// `carve extract --remove ids --remove-tests catalog/catalog_test.go` on `repo`.
fn extract_without_catalog_tests(repo: &std::path::Path, out: &std::path::Path, ids: &[&str]) -> std::process::Output {
    let mut args =
        vec!["extract", repo.to_str().unwrap(), "--out", out.to_str().unwrap(), "--format", "json", "--remove"];
    args.extend_from_slice(ids);
    args.extend(["--remove-tests", "catalog/catalog_test.go"]);
    carve().args(args).output().unwrap()
}

/// A masked tree that does not build is repaired: carve reads the location from the
/// compiler's output, keeps the definition it names, masks again and the tree builds.
#[needs("go")]
fn go_extraction_that_fails_to_build_is_repaired_by_keeping_what_the_compiler_names() {
    let (_tmp, repo) = shapes_with_a_method_value();
    let before = tree_snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let o = extract_without_catalog_tests(
        &repo,
        out.path(),
        &["catalog/catalog.go::Catalog.Largest", "catalog/catalog.go::LargerThan"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["extracted"], serde_json::json!(["catalog/catalog.go::LargerThan"]), "{summary}");
    let repairs = summary["build_repairs"].as_array().unwrap();
    assert_eq!(repairs.len(), 1, "{summary}");
    assert_eq!(repairs[0]["round"], 1);
    assert_eq!(repairs[0]["command"], "go build -o /dev/null ./...");
    assert_eq!(repairs[0]["locations"], serde_json::json!([["cmd/shapes/reporter.go", 7]]), "{summary}");
    assert_eq!(repairs[0]["moved"], serde_json::json!(["catalog/catalog.go::Catalog.Largest"]));
    let patch = std::fs::read_to_string(out.path().join("extract/mask.patch")).unwrap();
    // mask.patch also deletes the removed test file (which calls Largest): look at catalog.go's part.
    let source = patch.split("diff --git ").find(|d| d.starts_with("a/catalog/catalog.go ")).unwrap_or("");
    assert!(source.contains("-func LargerThan") && !source.contains("Largest()"), "{patch}");
    assert_eq!(before, tree_snapshot(&repo), "carve extract modified the repository");
}

/// When build repair has to keep everything that was to be extracted, the extraction is
/// an error with the compiler's message, not an empty mask.
#[needs("go")]
fn go_extraction_whose_repair_keeps_everything_reports_the_compiler() {
    let (_tmp, repo) = shapes_with_a_method_value();
    let out = tempfile::tempdir().unwrap();
    let o = extract_without_catalog_tests(&repo, out.path(), &["catalog/catalog.go::Catalog.Largest"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("does not build (go build -o /dev/null ./...)"), "{err}");
    assert!(err.contains("nothing is left to extract"), "{err}");
    assert!(err.contains("Largest undefined"), "{err}");
}

#[needs("cargo")]
fn rust_extraction_stubs_referenced_code_and_builds() {
    let patch = extract("rust/geometry", &["src/report.rs::Report.total_area", "src/shapes.rs::Rect.is_square"]);
    assert!(patch.contains("todo!()"), "{patch}");
}

#[needs("node", "fixtures/typescript/ledger/node_modules")]
fn typescript_extraction_stubs_referenced_code_and_type_checks() {
    let patch =
        extract("typescript/ledger", &["src/money/currency.ts::convert", "src/accounts/ledger.ts::Ledger.transfer"]);
    assert!(patch.contains("throw new Error(\"not implemented\")"), "{patch}");
}

/// `carve init` + `carve baseline` through the CLI on a runner-cases fixture: the runner is
/// detected, the flaky test is marked flaky, failing and skipped tests keep their status,
/// and a selection reports exactly the requested ids (an unknown one as missing).
fn baseline_through_the_cli(fixture: &str, flaky: &str, failing: &str, runner: &str) {
    let (_tmp, repo) = copy_with_dependencies(fixture);
    let before = tree_snapshot(&repo);
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
    assert_eq!(before, tree_snapshot(&repo), "carve modified the repository");
}

#[needs("go")]
fn go_baseline_through_the_cli() {
    baseline_through_the_cli(
        "go/runner-cases",
        "example.com/runnercases/TestFlaky",
        "example.com/runnercases/TestFails",
        "go",
    );
}

#[needs("cargo")]
fn rust_baseline_through_the_cli() {
    baseline_through_the_cli("rust/runner-cases", "runner_cases::tests::flaky", "runner_cases::tests::fails", "cargo");
}

#[needs("node", "fixtures/typescript/runner-cases/node_modules")]
fn typescript_baseline_through_the_cli() {
    baseline_through_the_cli(
        "typescript/runner-cases",
        "tests/nested/flaky.test.ts > flaky > passes every other run",
        "tests/math.test.ts > fails on purpose",
        "vitest",
    );
}

#[needs("pytest")]
fn python_baseline_through_the_cli() {
    baseline_through_the_cli(
        "python/runner-cases",
        "tests/sub/test_flaky.py::test_flaky",
        "tests/test_cases.py::test_fails",
        "pytest",
    );
}
