//! Go Level 2 tests over the shapes fixture: the package's import path, the reference
//! package's text, and the rewritten test files (internal and external tests).

use std::collections::BTreeSet;

use super::*;
use crate::go::index::tests::{shapes_dir, shapes_index};
use crate::index::NodeId;

fn catalog_feature() -> BTreeSet<NodeId> {
    [
        "Catalog",
        "Catalog.Add",
        "Catalog.Largest",
        "Catalog.Len",
        "Catalog.Report",
        "Catalog.Select",
        "Catalog.TotalArea",
        "LargerThan",
        "New",
    ]
    .iter()
    .map(|n| format!("catalog/catalog.go::{n}"))
    .collect()
}

#[test]
fn the_package_lives_at_the_module_root() {
    let index = shapes_index();
    assert_eq!(
        GoLevel2.package_import(std::path::Path::new("."), &index, "agent_code").unwrap(),
        "example.com/shapes/agent_code"
    );
    assert_eq!(GoLevel2.init_file("example.com/shapes/agent_code"), "agent_code/agent_code.go");
    assert_eq!(GoLevel2.empty("example.com/shapes/agent_code").lines().last(), Some("package agent_code"));
}

#[test]
fn reference_copies_the_feature_and_what_it_names() {
    let index = shapes_index();
    let extracted = catalog_feature();
    let names = vec![("example.com/shapes/catalog".to_string(), "New".to_string())];
    let sources = Level2Sources {
        root: &shapes_dir(),
        index: &index,
        extracted: &extracted,
        names: &names,
        package: "example.com/shapes/agent_code",
    };
    let text = GoLevel2.reference(&sources).unwrap();
    assert!(text.contains("\npackage agent_code\n"), "{text}");
    assert!(text.contains("func New() *Catalog {"), "{text}");
    // Entry and Filter stay in package catalog, yet the copied code names them.
    assert!(text.contains("type Entry struct"), "{text}");
    assert!(text.contains("type Filter func(Entry) bool"), "{text}");
    assert!(text.contains("\"example.com/shapes/geometry\""), "{text}");
    assert!(!text.contains("\"example.com/shapes/catalog\""), "the source package is never imported: {text}");
    assert!(crate::parse_errors(Language::Go, &text).is_empty(), "{text}");
}

#[test]
fn a_method_of_a_type_that_stays_brings_its_whole_type() {
    let index = shapes_index();
    let extracted: BTreeSet<NodeId> = ["stats/stats.go::Series.Spread".to_string()].into();
    let sources = Level2Sources {
        root: &shapes_dir(),
        index: &index,
        extracted: &extracted,
        names: &[],
        package: "example.com/shapes/agent_code",
    };
    let text = GoLevel2.reference(&sources).unwrap();
    assert!(text.contains("type Series []float64"), "{text}");
    assert!(text.contains(") Spread() float64"), "{text}");
    let note = GoLevel2.support_note(&sources).unwrap();
    assert!(note.contains("declares its own `Series` with every method"), "{note}");
}

#[test]
fn an_internal_test_names_the_package() {
    let index = shapes_index();
    let path = "catalog/catalog_test.go";
    let source = std::fs::read_to_string(shapes_dir().join(path)).unwrap();
    let edits = GoLevel2.rewrite_test_imports(
        std::path::Path::new("."),
        &source,
        &index.files[path],
        &index,
        &catalog_feature(),
        "example.com/shapes/agent_code",
    );
    let out = crate::edit::apply(&source, &edits).unwrap();
    assert!(out.starts_with("package catalog\n\nimport \"example.com/shapes/agent_code\"\n"), "{out}");
    assert!(out.contains("func sample(t *testing.T) *agent_code.Catalog {"), "{out}");
    assert!(out.contains("c := agent_code.New()"), "{out}");
    assert!(!out.contains("agent_code.agent_code"), "{out}");
    // Other packages' names are left alone.
    assert!(out.contains("geometry.Rect{Max: geometry.Point{X: 1, Y: 1}}"), "{out}");
    assert!(crate::parse_errors(Language::Go, &out).is_empty(), "{out}");
}

#[test]
fn an_external_test_drops_the_import_it_no_longer_uses() {
    let mut index = shapes_index();
    let path = "catalog/external_test.go";
    let source = "package catalog_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/shapes/catalog\"\n)\n\nfunc TestNew(t *testing.T) {\n\tvar c *catalog.Catalog = catalog.New()\n\t_ = c\n}\n";
    let mut file = index.files["catalog/catalog_test.go"].clone();
    file.path = path.to_string();
    index.files.insert(path.to_string(), file);
    let edits = GoLevel2.rewrite_test_imports(
        std::path::Path::new("."),
        source,
        &index.files[path],
        &index,
        &catalog_feature(),
        "example.com/shapes/agent_code",
    );
    let out = crate::edit::apply(source, &edits).unwrap();
    assert!(out.contains("var c *agent_code.Catalog = agent_code.New()"), "{out}");
    assert!(!out.contains("\"example.com/shapes/catalog\""), "{out}");
    assert!(out.contains("\"testing\""), "{out}");
    assert!(crate::parse_errors(Language::Go, &out).is_empty(), "{out}");
}

fn cache_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/cache")
}

/// `fixtures/go/cache`'s resize feature: `Cache.Resize` in the root package and
/// `LRU.Resize` in `simple`, whose types stay.
fn resize_feature() -> BTreeSet<NodeId> {
    ["cache.go::Cache.Resize", "simple/simple.go::LRU.Resize"].iter().map(|n| n.to_string()).collect()
}

#[test]
fn a_feature_of_two_packages_is_mirrored_with_their_layout() {
    let index = crate::go::index::tests::to_index(crate::go::index::index_sources(
        &crate::go::index::tests::fixture_sources(&cache_dir()),
    ));
    let extracted = resize_feature();
    let package = "example.com/cache/agent_code";
    let sources = Level2Sources { root: &cache_dir(), index: &index, extracted: &extracted, names: &[], package };
    let files = GoLevel2.reference_files(&sources).unwrap();
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["agent_code/agent_code.go", "agent_code/simple/simple.go"]);
    let (root, simple) = (&files[0].1, &files[1].1);
    // The root copy imports the mirror of `simple`, under the name the original used, and
    // takes `Cache` whole with its constructor `New`.
    assert!(
        root.contains("\npackage agent_code\n") && root.contains("\tsimple \"example.com/cache/agent_code/simple\"\n"),
        "{root}"
    );
    assert!(
        root.contains("func New(size int) *Cache {") && root.contains("func (c *Cache) Resize(size int) int {"),
        "{root}"
    );
    assert!(!root.contains("\"example.com/cache/simple\""), "{root}");
    // `simple`'s copy: `LRU` whole, `New` (the root's copy calls it), the original list package.
    assert!(simple.contains("\npackage simple\n") && simple.contains("func New(size int) *LRU {"), "{simple}");
    assert!(
        simple.contains("func (c *LRU) removeOldest() {") && simple.contains("\"example.com/cache/internal/list\""),
        "{simple}"
    );
    for (_, text) in &files {
        assert!(crate::parse_errors(Language::Go, text).is_empty(), "{text}");
    }
    // The tests take the constructor from the copy, so `c` is the copy's `Cache`.
    let path = "resize_test.go";
    let source = std::fs::read_to_string(cache_dir().join(path)).unwrap();
    let edits = GoLevel2.rewrite_test_imports(&cache_dir(), &source, &index.files[path], &index, &extracted, package);
    let out = crate::edit::apply(&source, &edits).unwrap();
    assert!(out.contains("c := agent_code.New(3)"), "{out}");
    // The statement's interface imports `LRU` from its mirror.
    let modules: BTreeSet<String> = ["example.com/cache".into(), "example.com/cache/simple".into()].into();
    assert_eq!(
        GoLevel2.import_line_of(package, "LRU", Some("example.com/cache/simple"), &modules),
        "import agent_code_simple \"example.com/cache/agent_code/simple\""
    );
    assert_eq!(
        GoLevel2.import_line_of(package, "Cache", Some("example.com/cache"), &modules),
        format!("import \"{package}\"")
    );
    let note = GoLevel2.support_note(&sources).unwrap();
    assert!(note.contains("`example.com/cache/agent_code/simple` (imported as `agent_code_simple`) holds the part of `example.com/cache/simple`"), "{note}");
}

#[test]
fn an_internal_package_is_mirrored_where_the_tests_may_import_it() {
    // `agent_code/internal/list` could be imported only from inside `agent_code`.
    let index = crate::go::index::tests::to_index(crate::go::index::index_sources(
        &crate::go::index::tests::fixture_sources(&cache_dir()),
    ));
    let extracted: BTreeSet<NodeId> =
        ["simple/simple.go::LRU.Resize", "internal/list/list.go::List.Back"].iter().map(|n| n.to_string()).collect();
    let package = "example.com/cache/agent_code";
    let m = mirrors(&index, &extracted, package);
    let list = &m["internal/list"];
    assert_eq!(list.import, "example.com/cache/agent_code/internal_/list");
    assert_eq!(list.file, "agent_code/internal_/list/list.go");
    assert_eq!(list.alias, "agent_code_internal_list");
    assert!(GoLevel2.empty_file(package, &list.file).is_some_and(|t| t.ends_with("package list\n")));
    let modules: BTreeSet<String> =
        ["example.com/cache/simple".into(), "example.com/cache/internal/list".into()].into();
    assert_eq!(
        GoLevel2.import_line_of(package, "List", Some("example.com/cache/internal/list"), &modules),
        "import agent_code_internal_list \"example.com/cache/agent_code/internal_/list\""
    );
    // A directory named like a test file's stem (`toml-test`) makes no `_test.go` file.
    assert_eq!(mirror_name("toml-test"), "toml_test_");
    assert!(GoLevel2.empty_file(package, "agent_code/internal_/toml-test/toml_test_.go").is_some());
    let sources = Level2Sources { root: &cache_dir(), index: &index, extracted: &extracted, names: &[], package };
    let files = GoLevel2.reference_files(&sources).unwrap();
    let simple = &files.iter().find(|(p, _)| p == "agent_code/simple/simple.go").unwrap().1;
    assert!(simple.contains("\tlist \"example.com/cache/agent_code/internal_/list\""), "{simple}");
}
