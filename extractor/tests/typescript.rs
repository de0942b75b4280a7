//! TypeScript end to end on `fixtures/typescript/ledger`: the contract and Level 1
//! statement of chosen removals (snapshots), and `mask_tree` with those removals and their
//! tests, whose output must type-check with the fixture's own `tsc`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use carve_extractor::{Level, MaskPlan, StatementContext, build_contract, mask_tree, render_problem_statement};
use carve_languages::index::{DefinitionIndex, IndexOptions};

fn fixture() -> PathBuf {
    carve_testutil::fixture("typescript/ledger")
}

fn index() -> DefinitionIndex {
    let opts = IndexOptions { include: Vec::new(), exclude: vec!["node_modules".to_string()] };
    let index = DefinitionIndex::build(&fixture(), &opts).expect("index the fixture");
    assert!(index.files.contains_key("src/money/money.ts"), "{:?}", index.files.keys().collect::<Vec<_>>());
    index
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Money arithmetic (methods of a class that stays), overloaded conversion, the reports
/// namespace with its types, a generic class and an interface.
fn extracted() -> BTreeSet<String> {
    ids(&[
        "src/money/money.ts::Money.plus",
        "src/money/money.ts::Money.times",
        "src/money/currency.ts::convert",
        "src/reports/summary.ts::Report",
        "src/reports/summary.ts::ReportLine",
        "src/reports/summary.ts::renderTable",
        "src/accounts/ledger.ts::Ledger",
        "src/accounts/ledger.ts::Posting",
        "src/accounts/account.ts::CheckingAccount",
    ])
}

const F2P: &[&str] = &[
    "tests/money.test.ts::Money::keeps cents exactly",
    "tests/reports.spec.ts::Report::renders an aligned table",
    "tests/ledger.test.ts::Ledger::transfers between accounts",
];

#[test]
fn contract_and_statement_of_chosen_removals() {
    let index = index();
    let extracted = extracted();
    let contract = build_contract(&index, &extracted);
    assert!(!contract.level2_supported(), "TypeScript has no Level 2 packaging yet");
    insta::assert_json_snapshot!("ledger_contract", contract);
    let ctx = StatementContext::new(Level::One, "ledger", F2P.iter().map(|s| s.to_string()).collect());
    let statement = render_problem_statement(&contract, &ctx);
    assert!(statement.contains("```typescript\n"), "{statement}");
    assert!(!statement.contains("```python"), "{statement}");
    insta::assert_snapshot!("ledger_statement_level1", statement);
}

#[carve_testutil::needs("fixtures/typescript/ledger/node_modules/.bin/tsc")]
fn masked_tree_type_checks() {
    let root = fixture();
    let index = index();
    let plan = MaskPlan {
        extracted: extracted(),
        remove_test_files: ids(&["tests/reports.spec.ts"]),
        remove_tests: F2P.iter().filter(|t| !t.starts_with("tests/reports")).map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let out = tempfile::tempdir().expect("tempdir");
    let masked = out.path().join("masked");
    let outcome = mask_tree(&root, &index, &plan, &masked).expect("mask the fixture");
    assert!(outcome.changed_files.contains("src/money/money.ts"), "{:?}", outcome.changed_files);
    assert!(!masked.join("tests/reports.spec.ts").exists());
    let money = std::fs::read_to_string(masked.join("src/money/money.ts")).expect("masked money.ts");
    assert!(money.contains("plus(other: Money): Money {\n    throw new Error(\"not implemented\");\n  }"), "{money}");
    let test = std::fs::read_to_string(masked.join("tests/money.test.ts")).expect("masked test");
    assert!(!test.contains("keeps cents exactly") && test.contains("converts before adding"), "{test}");
    carve_languages::typescript::build::build_check_with(&masked, Some(&root)).unwrap_or_else(|e| panic!("{e}"));
}
