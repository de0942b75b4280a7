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

/// Run `carve extract --remove ids` on a copy of `fixture`; returns mask.patch.
fn extract(fixture: &str, remove: &[&str]) -> String {
    let (_tmp, repo) = fixture_copy(fixture);
    // The TypeScript fixture's node_modules (from `npm ci`) is needed by tsc: the copy gets
    // a hard-linked one, as if installed there.
    let node_modules = root().join("fixtures").join(fixture).join("node_modules");
    if node_modules.is_dir() && !repo.join("node_modules").exists() {
        let ok = std::process::Command::new("cp").arg("-al").arg(&node_modules).arg(repo.join("node_modules")).status().unwrap();
        assert!(ok.success());
    }
    let before = snapshot(&repo);
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["extract", repo.to_str().unwrap(), "--out", out.path().to_str().unwrap(), "--format", "json", "--remove"];
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
        assert!(std::env::var_os("CI").is_none(), "run scripts/setup: fixtures/typescript/ledger/node_modules is missing");
        eprintln!("skipping: fixtures/typescript/ledger/node_modules is missing (run scripts/setup)");
        return;
    }
    let patch = extract("typescript/ledger", &["src/money/currency.ts::convert", "src/accounts/ledger.ts::Ledger.transfer"]);
    assert!(patch.contains("throw new Error(\"not implemented\")"), "{patch}");
}
