//! Go index tests: the shapes fixture (snapshot), resolution rules and odd inputs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::*;
use crate::index::{DefinitionIndex, DefinitionKind};

/// Every file of a fixture directory as `(relative path, bytes)`, sorted.
pub(crate) fn fixture_sources(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("fixture dir readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under fixture").to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read(&p).expect("fixture file readable")));
            }
        }
    }
    out.sort();
    out
}

pub(crate) fn shapes_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/shapes")
}

pub(crate) fn to_index(go: GoIndex) -> DefinitionIndex {
    let mut index = DefinitionIndex { skipped: go.skipped, ..DefinitionIndex::default() };
    index.files = go.files.into_iter().map(|f| (f.path.clone(), f)).collect();
    index.definitions = go.definitions.into_iter().map(|d| (d.id.clone(), d)).collect();
    index
}

pub(crate) fn shapes_index() -> DefinitionIndex {
    to_index(index_sources(&fixture_sources(&shapes_dir())))
}

fn src_index(files: &[(&str, &str)]) -> DefinitionIndex {
    let sources: Vec<(String, Vec<u8>)> = files.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    to_index(index_sources(&sources))
}

#[test]
fn shapes_fixture_index() {
    let index = shapes_index();
    assert!(index.skipped.is_empty(), "{:?}", index.skipped);
    insta::assert_snapshot!("shapes_summary", carve_testutil::index_summary(&index));
}

#[test]
fn shapes_fixture_full_json_of_one_file() {
    let index = shapes_index();
    let file = &index.files["stats/stats.go"];
    let defs: Vec<_> = file.definitions.iter().map(|id| &index.definitions[id]).collect();
    insta::assert_json_snapshot!("stats_file", (file, defs));
}

#[test]
fn methods_are_type_dot_method_with_receiver_and_parent() {
    let index = shapes_index();
    let grow = &index.definitions["geometry/shape.go::Circle.Grow"];
    assert_eq!(grow.kind, DefinitionKind::Method);
    assert_eq!(grow.signature.receiver.as_deref(), Some("c *Circle"));
    assert_eq!(grow.parent.as_deref(), Some("geometry/shape.go::Circle"));
    assert!(grow.signature.text.starts_with("func (c *Circle) Grow(factor float64)"));
    let push = &index.definitions["stats/stats.go::Stack.Push"];
    assert_eq!(push.parent.as_deref(), Some("stats/stats.go::Stack"));
    assert_eq!(index.definitions["stats/stats.go::Stack"].signature.type_parameters.as_deref(), Some("[T any]"));
    assert_eq!(index.files["stats/stats.go"].module.as_deref(), Some("example.com/shapes/stats"));
    assert_eq!(index.files["cmd/shapes/main.go"].module.as_deref(), Some("example.com/shapes/cmd/shapes"));
}

#[test]
fn references_cross_files_packages_and_methods() {
    let index = shapes_index();
    let refs = |id: &str| index.definitions[id].references.clone();
    // Same package, other file.
    assert!(refs("geometry/shape.go::Triangle.Perimeter").contains(&"geometry/point.go::Distance".to_string()));
    // Imported in-module package.
    let total = refs("catalog/catalog.go::Catalog.TotalArea");
    for want in [
        "stats/stats.go::Map",
        "stats/stats.go::Sum",
        "internal/format/format.go::Round",
        "catalog/catalog.go::Entry",
        "catalog/catalog.go::Catalog",
    ] {
        assert!(total.contains(&want.to_string()), "{want} not in {total:?}");
    }
    // `e.Shape.Area()`: unknown type, every in-module `Area` method.
    assert!(total.contains(&"geometry/shape.go::Circle.Area".to_string()), "{total:?}");
    // `r.Width()` on the receiver: exactly Rect.Width.
    assert!(refs("geometry/shape.go::Rect.Area").contains(&"geometry/shape.go::Rect.Width".to_string()));
    // A type needs the methods that implement an interface of the module.
    let circle = refs("geometry/shape.go::Circle");
    assert!(circle.contains(&"geometry/shape.go::Circle.Area".to_string()), "{circle:?}");
    assert!(!circle.contains(&"geometry/shape.go::Circle.Grow".to_string()), "{circle:?}");
    // Tests see the package; package code does not see tests.
    assert!(refs("catalog/catalog_test.go::TestSelect").contains(&"catalog/catalog_test.go::sample".to_string()));
    assert!(refs("catalog/catalog_test.go::TestSelect").contains(&"catalog/catalog.go::LargerThan".to_string()));
    // Package-level var initializers.
    let point_refs = &index.files["geometry/point.go"].module_references;
    assert!(point_refs.iter().any(|m| m.target == "geometry/point.go::Point"), "{point_refs:?}");
}

#[test]
fn locals_shadow_and_type_parameters_are_not_references() {
    let index = src_index(&[
        ("go.mod", "module ex.com/m\n"),
        (
            "a.go",
            "package a\n\ntype T struct{}\n\nfunc helper() int { return 1 }\n\nfunc G[T any](helper T) T {\n\treturn helper\n}\n\nfunc H() int {\n\thelper := 2\n\treturn helper\n}\n\nfunc U() int { return helper() }\n",
        ),
    ]);
    assert!(index.definitions["a.go::G"].references.is_empty(), "{:?}", index.definitions["a.go::G"].references);
    assert!(index.definitions["a.go::H"].references.is_empty());
    assert_eq!(index.definitions["a.go::U"].references, vec!["a.go::helper".to_string()]);
}

#[test]
fn duplicate_qualnames_get_line_suffixes_and_aliases_resolve() {
    let index = src_index(&[
        ("go.mod", "module ex.com/m\n\ngo 1.22\n"),
        ("p/p.go", "package p\n\nfunc init() {}\n\nfunc init() {}\n\n// Do does it.\nfunc Do() {}\n"),
        (
            "q/q.go",
            "package q\n\nimport (\n\tpp \"ex.com/m/p\"\n\t. \"fmt\"\n)\n\nvar x = pp.Do\n\nfunc Q() { pp.Do(); Println() }\n",
        ),
    ]);
    let ids: Vec<&String> = index.files["p/p.go"].definitions.iter().collect();
    assert_eq!(ids, ["p/p.go::init@L3", "p/p.go::init@L5", "p/p.go::Do"]);
    assert_eq!(index.definitions["q/q.go::Q"].references, vec!["p/p.go::Do".to_string()]);
    assert_eq!(index.files["q/q.go"].module_references[0].target, "p/p.go::Do");
    assert_eq!(index.files["q/q.go"].imports[0].resolved_path.as_deref(), Some("p"));
    assert_eq!(index.definitions["p/p.go::Do"].docstring.as_deref(), Some("Do does it."));
}

#[test]
fn grouped_types_and_aliases() {
    let index = src_index(&[(
        "t.go",
        "package t\n\ntype (\n\t// A is a.\n\tA int\n\t// B is b.\n\tB = A\n\tC interface{ M() }\n)\n\n// D is alone in a group.\ntype (\n\tD struct{ a A }\n)\n",
    )]);
    let d = |q: &str| &index.definitions[&format!("t.go::{q}")];
    assert_eq!(d("A").kind, DefinitionKind::TypeAlias);
    assert_eq!(d("A").docstring.as_deref(), Some("A is a."));
    assert_eq!(d("B").signature.text, "type B = A");
    assert_eq!(d("C").kind, DefinitionKind::Interface);
    assert_eq!(d("D").kind, DefinitionKind::Struct);
    assert_eq!(d("D").docstring.as_deref(), Some("D is alone in a group."));
    assert_eq!(d("D").references, vec!["t.go::A".to_string()]);
    assert_eq!(index.files["t.go"].module, None);
}

#[test]
fn bad_files_are_skipped_not_fatal() {
    let go = index_sources(&[("x.go".into(), vec![0xff, 0xfe]), ("y.go".into(), b"func f() {}\n".to_vec())]);
    assert!(go.files.is_empty());
    let reasons: BTreeMap<_, _> = go.skipped.iter().map(|s| (s.path.as_str(), s.reason.as_str())).collect();
    assert!(reasons["x.go"].contains("UTF-8"), "{reasons:?}");
    assert!(reasons["y.go"].contains("package"), "{reasons:?}");
}

#[test]
fn index_files_reads_go_mod_from_disk() {
    let root = shapes_dir();
    let paths = vec!["geometry/point.go".to_string(), "catalog/catalog.go".to_string()];
    let go = index_files(&root, &paths);
    assert_eq!(go.files[0].module.as_deref(), Some("example.com/shapes/catalog"));
    assert!(is_test_path("a/b_test.go") && !is_test_path("a/test.go"));
}

#[test]
fn go_test_ids_map_to_test_functions() {
    let index = shapes_index();
    assert_eq!(
        test_definition(&index, "example.com/shapes/geometry/TestAreas/unit_circle").as_deref(),
        Some("geometry/shape_test.go::TestAreas")
    );
    assert_eq!(
        test_definition(&index, "example.com/shapes/stats/TestStack").as_deref(),
        Some("stats/stats_test.go::TestStack")
    );
    assert_eq!(test_definition(&index, "example.com/shapes/stats/TestNope"), None);
    assert_eq!(test_definition(&index, "example.com/other/TestStack"), None);
}

/// The kind and field ids the index compares with are the grammar's ids for those names:
/// on every node of the Go fixtures, `kind_id() == id` exactly when `kind() == name`, and
/// every field id names its field.
#[test]
fn kind_and_field_ids_match_their_names() {
    let ids = super::kinds::ids();
    let language = crate::Language::Go.grammar();
    for (name, id) in ids.fields.all() {
        assert_eq!(language.field_name_for_id(id), Some(name), "field id of `{name}`");
    }
    let kinds = ids.kinds.all();
    let mut parser = super::parse::new_parser();
    let mut seen = std::collections::BTreeSet::new();
    for dir in [shapes_dir(), Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/runner-cases")] {
        for (path, bytes) in fixture_sources(&dir).into_iter().filter(|(p, _)| p.ends_with(".go")) {
            let tree = parser.parse(&bytes, None).expect("fixture parses");
            let mut c = tree.walk();
            'walk: loop {
                let n = c.node();
                for (name, id) in &kinds {
                    assert_eq!(n.kind_id() == *id, n.kind() == *name, "{path}: node `{}` vs kind `{name}`", n.kind());
                    if n.kind_id() == *id {
                        seen.insert(*name);
                    }
                }
                if c.goto_first_child() {
                    continue;
                }
                while !c.goto_next_sibling() {
                    if !c.goto_parent() {
                        break 'walk;
                    }
                }
            }
        }
    }
    // The fixtures exercise the common kinds, so the check above is not vacuous for them.
    for name in [
        "identifier",
        "type_identifier",
        "selector_expression",
        "parameter_declaration",
        "short_var_declaration",
        "type_spec",
    ] {
        assert!(seen.contains(name), "no `{name}` node in the Go fixtures");
    }
}

/// A file's line count is `str::lines().count()`, whatever its last line ends with.
#[test]
fn line_counts_match_str_lines() {
    for text in [
        "package a",
        "package a\n",
        "package a\n\n",
        "package a\r\nfunc f() {}\r\n",
        "package a\n\nfunc f() {}",
        "\npackage a\n",
    ] {
        let index = src_index(&[("a.go", text)]);
        assert_eq!(index.files["a.go"].lines, text.lines().count(), "{text:?}");
    }
}

/// The imports query runs only under top-level nodes that can hold an import spec; on files
/// with syntax errors it still finds every spec the query finds when run over the file's
/// top three levels.
#[test]
fn imports_match_the_whole_file_query_despite_syntax_errors() {
    use streaming_iterator::StreamingIterator;
    let sources = [
        "package a\n\nimport (\n\t\"fmt\"\n\tx \"os\"\n)\n\nfunc f() { fmt.Println(x.Args) }\n",
        "package a\n\nimport \"fmt\"\nimport (\n\t\"strings\"\n\nfunc f() {}\n",
        "package a\n\nfunc f() {\n\timport \"os\"\n}\nimport \"fmt\"\n",
        "package a\nimport \"fmt\" \"os\"\ntype T struct { import \"io\" }\n",
        "package a\n\nvar x = )\nimport \"strings\"\n",
    ];
    let q = super::queries::queries();
    let mut parser = super::parse::new_parser();
    for src in sources {
        let tree = parser.parse(src, None).expect("parses");
        let mut cursor = tree_sitter::QueryCursor::new();
        cursor.set_max_start_depth(Some(3));
        let mut expected = Vec::new();
        let mut matches = cursor.matches(&q.query, tree.root_node(), src.as_bytes());
        while let Some(m) = matches.next() {
            if let Some(c) = m.captures.iter().find(|c| c.index == q.captures.path) {
                expected.push(src[c.node.byte_range()].trim_matches('"').to_string());
            }
        }
        let index = src_index(&[("a.go", src)]);
        let got: Vec<String> = index.files["a.go"].imports.iter().map(|i| i.module.clone()).collect();
        assert_eq!(got, expected, "{src:?}");
    }
}

#[test]
fn examples_belong_to_the_definitions_their_names_give() {
    let index = shapes_index();
    let owner = |name: &str| example_owner(&index, &format!("example.com/shapes/catalog/{name}"));
    assert_eq!(owner("ExampleNew").as_deref(), Some("catalog/catalog.go::New"));
    assert_eq!(owner("ExampleCatalog_Add").as_deref(), Some("catalog/catalog.go::Catalog.Add"));
    assert_eq!(owner("ExampleCatalog_Add_twice").as_deref(), Some("catalog/catalog.go::Catalog.Add"));
    assert_eq!(owner("ExampleCatalog_second").as_deref(), Some("catalog/catalog.go::Catalog"));
    // A package's example, a name the package lacks, a test, another package's name.
    for none in ["Example", "Example_package", "ExampleNope", "TestNew", "ExampleNew/sub"] {
        assert_eq!(owner(none), None, "{none}");
    }
    assert_eq!(example_owner(&index, "example.com/shapes/stats/ExampleNew"), None);
}

/// Elements of package-level literals that only name a definition are entry value bindings
/// (the mask deletes them with it); every other package-level use stays a module reference:
/// a call argument, a conversion, a function literal's body, a positional element of a
/// literal that may be a struct.
#[test]
fn literal_elements_naming_one_definition_are_entries_not_module_references() {
    let src = r#"package r

import "net/http"

type row struct {
	Name string
	Fn   func()
}

var funcs = map[string]any{
	"hello": func() { greet() },
	"greet": greet,
	"http":  http.NotFound,
}

var (
	nested, rows = map[string][]func(){"a": {tick, greet}, "b": {tick}}, []row{{Name: "t", Fn: tick}, {"p", plain}}
	ptrs         = []*row{{Fn: tick}, &row{Fn: tick}}
	arr          = [2]func(){tick, tock}
	keyed        = map[int]func(){1: tock}
	called       = twice(3)
	handler      = http.HandlerFunc(serve)
	struct_      = row{"s", plain}
)

func greet()                                 {}
func tick()                                  {}
func tock()                                  {}
func plain()                                 {}
func twice(n int) int                        { return 2 * n }
func serve(http.ResponseWriter, *http.Request) {}
"#;
    let index = src_index(&[("go.mod", "module ex.com/m\n\ngo 1.22\n"), ("r/r.go", src)]);
    let file = &index.files["r/r.go"];
    let entries: Vec<(String, &str, Vec<&str>)> = file
        .value_bindings
        .iter()
        .map(|b| {
            assert!(b.entry && b.class.is_none() && b.named_by.is_empty(), "{b:?}");
            let targets = b.targets.iter().map(|t| t.target.trim_start_matches("r/r.go::")).collect();
            (src[b.span.start_byte..b.span.end_byte].to_string(), b.name.as_str(), targets)
        })
        .collect();
    let want: Vec<(String, &str, Vec<&str>)> = [
        ("\"greet\": greet", "funcs", "greet"),
        ("tick", "nested", "tick"),
        ("greet", "nested", "greet"),
        ("tick", "nested", "tick"),
        ("Fn: tick", "rows", "tick"),
        ("Fn: tick", "ptrs", "tick"),
        ("Fn: tick", "ptrs", "tick"),
        ("tick", "arr", "tick"),
        ("tock", "arr", "tock"),
        ("1: tock", "keyed", "tock"),
    ]
    .into_iter()
    .map(|(t, n, d)| (t.to_string(), n, vec![d]))
    .collect();
    assert_eq!(entries, want);
    let module: BTreeSet<&str> =
        file.module_references.iter().map(|m| m.target.trim_start_matches("r/r.go::")).collect();
    // `greet` in the function literal's body, `plain` positional in a struct literal, a call's
    // argument and a conversion's stay module references (`row` is the literals' type).
    assert_eq!(module, BTreeSet::from(["greet", "plain", "row", "serve", "twice"]));
}
