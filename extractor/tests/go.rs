//! Go end to end on `fixtures/go/shapes`: the contract and Level 1 statement of chosen
//! removals (a type with value and pointer receiver methods, a constructor, a generic
//! function with constraints, a method of a type that stays), and `mask_tree` with those
//! removals and their tests, whose output must pass `go build ./... && go vet ./...`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use carve_extractor::{Level, MaskPlan, StatementContext, build_contract, mask_tree, render_problem_statement};
use carve_languages::index::{DefinitionIndex, IndexOptions};

fn fixture() -> PathBuf {
    carve_testutil::fixture("go/shapes")
}

fn index() -> DefinitionIndex {
    let index = DefinitionIndex::build(&fixture(), &IndexOptions::default()).expect("index the fixture");
    assert!(index.files.contains_key("geometry/shape.go"), "{:?}", index.files.keys().collect::<Vec<_>>());
    index
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn extracted() -> BTreeSet<String> {
    ids(&[
        "geometry/shape.go::Circle",
        "geometry/shape.go::NewCircle",
        "stats/stats.go::MaxBy",
        "stats/stats.go::Stack",
        "catalog/catalog.go::Catalog.Report",
    ])
}

const F2P: &[&str] = &[
    "geometry/shape_test.go::TestNewCircle",
    "stats/stats_test.go::TestStack",
    "stats/stats_test.go::TestMaxByAndMap",
    "catalog/catalog_test.go::TestReport",
];

#[test]
fn contract_and_statement_of_chosen_removals() {
    let index = index();
    let contract = build_contract(&index, &extracted());
    // Catalog.Report is a method of a type that stays: Go's package takes the type whole.
    assert!(contract.level2_supported(), "Go Level 2 takes the type of Catalog.Report whole");
    let circle = contract.objects.iter().find(|o| o.id == "geometry/shape.go::Circle").expect("Circle in the contract");
    assert_eq!(circle.import_path.as_deref(), Some("import \"example.com/shapes/geometry\""));
    let grow = circle.members.iter().find(|m| m.name == "Grow").expect("Circle.Grow is a member");
    assert_eq!(grow.signature.receiver.as_deref(), Some("c *Circle"));
    let max_by = contract.objects.iter().find(|o| o.name == "MaxBy").expect("MaxBy");
    assert_eq!(max_by.signature.type_parameters.as_deref(), Some("[T any, K cmp.Ordered]"));
    insta::assert_json_snapshot!("shapes_contract", contract);
    let ctx = StatementContext::new(Level::One, "shapes", F2P.iter().map(|s| s.to_string()).collect());
    let statement = render_problem_statement(&contract, &ctx);
    assert!(statement.contains("```go\n"), "{statement}");
    assert!(statement.contains("func (c *Circle) Grow(factor float64) { … }"), "{statement}");
    assert!(!statement.contains("```python"), "{statement}");
    insta::assert_snapshot!("shapes_statement_level1", statement);
}

#[carve_testutil::needs("go")]
fn masked_tree_builds() {
    let root = fixture();
    let index = index();
    // The ids as the `go test` runner reports them.
    let runner_ids = ids(&[
        "example.com/shapes/geometry/TestNewCircle",
        "example.com/shapes/stats/TestStack",
        "example.com/shapes/stats/TestMaxByAndMap",
        "example.com/shapes/catalog/TestReport",
    ]);
    let plan = MaskPlan {
        extracted: extracted(),
        remove_test_files: BTreeSet::new(),
        remove_tests: runner_ids,
        ..Default::default()
    };
    let out = tempfile::tempdir().expect("tempdir");
    let masked = out.path().join("masked");
    let outcome = mask_tree(&root, &index, &plan, &masked).expect("mask the fixture");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let stats = std::fs::read_to_string(masked.join("stats/stats.go")).expect("masked stats.go");
    // Only TestStack, removed with it, used Stack: deleted with its methods. catalog.go,
    // which stays, calls MaxBy: stubbed.
    assert!(!stats.contains("Stack"), "{stats}");
    assert!(stats.contains("func MaxBy[T any, K cmp.Ordered](items []T, key func(T) K) (best T, ok bool) {\n\tpanic(\"not implemented\")\n}"), "{stats}");
    let tests = std::fs::read_to_string(masked.join("catalog/catalog_test.go")).expect("masked catalog_test.go");
    assert!(!tests.contains("TestReport") && !tests.contains("\"strings\""), "{tests}");
    carve_languages::go::build_check(&masked).unwrap_or_else(|e| panic!("{e}"));
}
