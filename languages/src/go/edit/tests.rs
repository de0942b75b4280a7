//! Go masking tests: chosen removals of the shapes fixture (masked source snapshots, and the
//! masked module builds with `go build`/`go vet`) and layout details. Every definition
//! removed alone (re-parses, builds) and mutated sources (never panic) are tested for all
//! languages in `extractor/tests/robustness.rs`.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::go::build::build_check;
use crate::go::index::index_sources;
use crate::go::index::tests::{fixture_sources, shapes_dir, to_index};
use crate::parse_errors;

fn set(ids: &[&str]) -> BTreeSet<NodeId> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// Whether `id` is in `set` or nested in a definition that is (a method of a removed type).
fn within(index: &DefinitionIndex, id: &str, set: &BTreeSet<NodeId>) -> bool {
    index.lineage(id).any(|c| set.contains(c))
}

/// The delete/stub split the extractor makes (`extractor::plan::split_removals`): stub what
/// remaining code references, delete the rest.
fn split(index: &DefinitionIndex, remove: &BTreeSet<NodeId>) -> (BTreeSet<NodeId>, BTreeSet<NodeId>) {
    let mut referenced = BTreeSet::new();
    for d in index.definitions.values().filter(|d| !within(index, &d.id, remove)) {
        referenced.extend(d.references.iter().cloned());
    }
    for f in index.files.values() {
        referenced.extend(f.module_references.iter().map(|m| m.target.clone()));
    }
    remove.iter().cloned().partition(|id| !referenced.contains(id))
}

struct Masked {
    /// Changed files only: path → masked text.
    changed: BTreeMap<String, String>,
    sources: BTreeMap<String, String>,
}

fn mask_all(sources: &[(String, Vec<u8>)], remove: &BTreeSet<NodeId>) -> Masked {
    let index = to_index(index_sources(sources));
    let (delete, stub) = split(&index, remove);
    let mut changed = BTreeMap::new();
    let mut all = BTreeMap::new();
    for (path, bytes) in sources {
        let text = String::from_utf8(bytes.clone()).expect("fixture is UTF-8");
        all.insert(path.clone(), text.clone());
        let Some(file) = index.files.get(path) else { continue };
        let edits = crate::mask_file(Language::Go, &text, file, &index, &delete, &stub)
            .unwrap_or_else(|e| panic!("masking {path}: {e}"));
        if !edits.is_empty() {
            let out = apply(&text, &edits).unwrap_or_else(|e| panic!("applying edits to {path}: {e}"));
            changed.insert(path.clone(), out);
        }
    }
    Masked { changed, sources: all }
}

fn assert_parses(m: &Masked, what: &str) {
    for (path, text) in &m.changed {
        let errs = parse_errors(Language::Go, text);
        assert!(errs.is_empty(), "{what}: {path} has parse errors {errs:?}:\n{text}");
    }
}

/// Write the fixture with the masked files into a temporary directory and run the Go
/// build check there (the tests that call it need `go`).
fn assert_builds(m: &Masked, what: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in &m.sources {
        let out = dir.path().join(path);
        std::fs::create_dir_all(out.parent().expect("file has a parent")).expect("mkdir");
        std::fs::write(&out, m.changed.get(path).unwrap_or(text)).expect("write");
    }
    if let Err(e) = build_check(dir.path()) {
        let shown: Vec<String> = m.changed.iter().map(|(p, t)| format!("--- {p}\n{t}")).collect();
        panic!("{what}: masked module does not build: {e}\n{}", shown.join("\n"));
    }
}

fn snapshot_text(m: &Masked) -> String {
    m.changed.iter().map(|(p, t)| format!("=== {p}\n{t}")).collect::<Vec<_>>().join("\n")
}

fn shapes() -> Vec<(String, Vec<u8>)> {
    fixture_sources(&shapes_dir())
}

#[carve_testutil::needs("go")]
fn circle_feature_is_stubbed_where_remaining_code_uses_it() {
    let remove =
        set(&["geometry/shape.go::Circle", "geometry/shape.go::NewCircle", "geometry/shape_test.go::TestNewCircle"]);
    let m = mask_all(&shapes(), &remove);
    assert_parses(&m, "circle");
    let shape = &m.changed["geometry/shape.go"];
    assert!(shape.contains("type Circle struct {"), "{shape}");
    assert!(shape.contains("func (c *Circle) Grow(factor float64) {\n\tpanic(\"not implemented\")\n}"), "{shape}");
    assert!(!m.changed["geometry/shape_test.go"].contains("TestNewCircle"));
    // `errors` was used only by TestNewCircle.
    assert!(!m.changed["geometry/shape_test.go"].contains("\"errors\""));
    insta::assert_snapshot!("circle_feature", snapshot_text(&m));
    assert_builds(&m, "circle feature");
}

#[carve_testutil::needs("go")]
fn report_feature_deletes_helpers_and_their_imports() {
    let remove = set(&[
        "catalog/catalog.go::Catalog.Report",
        "internal/format/format.go::Label",
        "internal/format/format.go::Table",
        "catalog/catalog_test.go::TestReport",
        "internal/format/format_test.go::TestLabelAndTable",
    ]);
    let m = mask_all(&shapes(), &remove);
    assert_parses(&m, "report");
    let format = &m.changed["internal/format/format.go"];
    assert!(!format.contains("func Label") && !format.contains("func Table"), "{format}");
    assert!(!format.contains("\"fmt\"") && !format.contains("\"strings\""), "{format}");
    let catalog = &m.changed["catalog/catalog.go"];
    assert!(catalog.contains("func (c *Catalog) Report() string {\n\tpanic(\"not implemented\")\n}"), "{catalog}");
    assert!(!catalog.contains("\"sort\""), "{catalog}");
    assert!(!m.changed["catalog/catalog_test.go"].contains("\"strings\""));
    insta::assert_snapshot!("report_feature", snapshot_text(&m));
    assert_builds(&m, "report feature");
}

#[carve_testutil::needs("go")]
fn generic_stats_feature_deletes_unused_type_with_methods_and_stubs_used_generic() {
    let remove = set(&[
        "stats/stats.go::Mean",
        "stats/stats.go::MaxBy",
        "stats/stats.go::Stack",
        "stats/stats_test.go::TestMean",
        "stats/stats_test.go::TestMaxByAndMap",
        "stats/stats_test.go::TestStack",
    ]);
    let m = mask_all(&shapes(), &remove);
    assert_parses(&m, "stats");
    let stats = &m.changed["stats/stats.go"];
    assert!(!stats.contains("Stack") && !stats.contains("func Mean"), "{stats}");
    assert!(
        stats.contains("func MaxBy[T any, K cmp.Ordered](items []T, key func(T) K) (best T, ok bool) {\n\tpanic"),
        "{stats}"
    );
    assert!(stats.contains("import \"cmp\""), "the stub's signature still needs cmp:\n{stats}");
    insta::assert_snapshot!("stats_feature", snapshot_text(&m));
    assert_builds(&m, "stats feature");
}

#[carve_testutil::needs("go")]
fn interface_method_of_a_kept_type_is_stubbed_and_deleted_type_takes_methods_in_other_files() {
    let index = to_index(index_sources(&shapes()));
    // Rect.Area implements Shape: Rect (kept) needs it.
    let (delete, stub) = split(&index, &set(&["geometry/shape.go::Rect.Area"]));
    assert!(delete.is_empty() && stub.contains("geometry/shape.go::Rect.Area"), "{delete:?} {stub:?}");
    // Rect.Width is not an interface method and only Rect's own methods use it... which stay.
    let (_, stub) = split(&index, &set(&["geometry/shape.go::Rect.Width"]));
    assert!(stub.contains("geometry/shape.go::Rect.Width"));

    let src = [
        ("go.mod", "module ex.com/m\n\ngo 1.22\n"),
        ("a/t.go", "package a\n\n// T is gone.\ntype T struct{ n int }\n\nfunc (t T) Keep() int { return t.n }\n"),
        (
            "a/u.go",
            "package a\n\nimport \"strings\"\n\n// Up upper-cases.\nfunc (t *T) Up(s string) string {\n\treturn strings.ToUpper(s)\n}\n\nfunc Other() {}\n",
        ),
    ];
    let sources: Vec<(String, Vec<u8>)> = src.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    let m = mask_all(&sources, &set(&["a/t.go::T"]));
    assert_eq!(m.changed["a/t.go"], "package a\n");
    assert_eq!(m.changed["a/u.go"], "package a\n\nfunc Other() {}\n");
    assert_builds(&m, "type with methods in another file");
}

#[carve_testutil::needs("go")]
fn stubbed_signature_keeps_the_types_it_names() {
    let src = [
        ("go.mod", "module ex.com/m\n\ngo 1.22\n"),
        ("a/a.go", "package a\n\ntype Opt struct{ N int }\n\nfunc Make(o Opt) int { return o.N }\n"),
        ("b/b.go", "package b\n\nimport \"ex.com/m/a\"\n\nvar F = a.Make\n"),
    ];
    let sources: Vec<(String, Vec<u8>)> = src.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect();
    let index = to_index(index_sources(&sources));
    let remove = set(&["a/a.go::Opt", "a/a.go::Make"]);
    let (delete, stub) = split(&index, &remove);
    assert_eq!(stub, set(&["a/a.go::Make"]));
    let p = plan(&index, &delete, &stub);
    assert_eq!(p.stub, remove, "Opt is promoted: Make's signature names it");
    let m = mask_all(&sources, &remove);
    assert!(m.changed["a/a.go"].contains("type Opt struct"));
    assert_builds(&m, "promoted type");
}

#[test]
fn grouped_declarations_and_trailing_comments() {
    let src = "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\ntype (\n\t// A doc.\n\tA int\n\tB string\n)\n\n// F prints.\nfunc F() { fmt.Println(A(1)) } // trailing\n\nfunc G() { os.Exit(0) }\n";
    let sources = vec![("p/p.go".to_string(), src.as_bytes().to_vec())];
    let m = mask_all(&sources, &set(&["p/p.go::A", "p/p.go::F"]));
    assert_eq!(
        m.changed["p/p.go"],
        "package p\n\nimport (\n\t\"os\"\n)\n\ntype (\n\tB string\n)\n\nfunc G() { os.Exit(0) }\n"
    );
    let m = mask_all(&sources, &set(&["p/p.go::A", "p/p.go::B", "p/p.go::F", "p/p.go::G"]));
    assert_eq!(m.changed["p/p.go"], "package p\n");
}

#[test]
fn stale_index_is_an_error_not_a_panic() {
    let sources = vec![("p.go".to_string(), b"package p\n\nfunc F() {}\n".to_vec())];
    let index = to_index(index_sources(&sources));
    let file = &index.files["p.go"];
    let err = crate::mask_file(
        Language::Go,
        "package p\n\n\nvar x = 1\n",
        file,
        &index,
        &set(&["p.go::F"]),
        &BTreeSet::new(),
    )
    .unwrap_err();
    assert!(matches!(err, MaskError::DefinitionNotFound { .. }), "{err}");
}

#[carve_testutil::needs("go")]
fn build_check_reports_the_tool_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("go.mod"), "module ex.com/bad\n\ngo 1.22\n").expect("write");
    std::fs::write(dir.path().join("bad.go"), "package bad\n\nimport \"fmt\"\n").expect("write");
    let err = build_check(dir.path()).unwrap_err().to_string();
    assert!(err.contains("\"fmt\" imported and not used"), "{err}");
    let empty = tempfile::tempdir().expect("temp dir");
    assert!(build_check(empty.path()).unwrap_err().to_string().contains("no go.mod"));
}

fn sources_of(files: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    files.iter().map(|(p, s)| (p.to_string(), s.as_bytes().to_vec())).collect()
}

/// A registry as Masterminds/sprig writes one: functions registered by name in a
/// package-level map, one per line, a nested literal, a struct field and a slice.
const REGISTRY: &str = r#"package r

import (
	"strings"

	"ex.com/m/strs"
)

// funcs maps names to functions.
var funcs = map[string]any{
	"hello": func() string { return "Hello!" },
	"greet": greet, // says hello
	"upper": strings.ToUpper,
	"up":    strs.Upper,
	"shout": shout,
}

var chains = map[string][]func(string) string{
	"loud":  {shout, greet},
	"first": {greet, shout},
	"only":  {greet},
}

type row struct {
	Name string
	Fn   func(string) string
}

var rows = []row{{Name: "g", Fn: greet}, {Fn: greet, Name: "h"}}

var order = []func(string) string{
	shout,
	greet,
}

func greet(s string) string { return "Hello, " + s }

func shout(s string) string { return strings.ToUpper(s) }

// Lookup finds a registered function.
func Lookup(name string) any { return funcs[name] }
"#;

/// Elements of package-level literals that name only a removed function go with it (a map
/// entry with its line and comment, an element of a nested literal, a struct field, a slice
/// element), and an in-module import the last of them used goes too: the package builds.
#[carve_testutil::needs("go")]
fn registry_elements_go_with_the_functions_they_name() {
    let sources = sources_of(&[
        ("go.mod", "module ex.com/m\n\ngo 1.22\n"),
        (
            "strs/strs.go",
            "package strs\n\nimport \"strings\"\n\n// Upper upper-cases.\nfunc Upper(s string) string { return strings.ToUpper(s) }\n",
        ),
        ("r/r.go", REGISTRY),
    ]);
    let index = to_index(index_sources(&sources));
    let file = &index.files["r/r.go"];
    // Registry entries are no module references: nothing keeps greet but what the mask takes out.
    assert!(!file.module_references.iter().any(|m| m.target == "r/r.go::greet"), "{:?}", file.module_references);
    assert!(file.value_bindings.iter().all(|b| b.entry && b.named_by.is_empty()));
    let m = mask_all(&sources, &set(&["r/r.go::greet", "strs/strs.go::Upper"]));
    assert_parses(&m, "registry");
    let r = &m.changed["r/r.go"];
    assert!(!r.contains("greet") && !r.contains("strs"), "{r}");
    assert!(r.contains("\"hello\": func() string") && r.contains("\"shout\": shout,"), "{r}");
    insta::assert_snapshot!("registry_elements", snapshot_text(&m));
    assert_builds(&m, "registry elements");
}

/// The layouts of an element deleted inline: with the separator after it, the last one
/// with the separator before it back to an element that stays, every one with a trailing
/// comma.
#[test]
fn inline_elements_take_their_separator() {
    let cases = [
        ("[]F{a, b, c}", &["b"][..], "[]F{a, c}"),
        ("[]F{a, b, c}", &["c"], "[]F{a, b}"),
        ("[]F{a, b, c}", &["a", "b"], "[]F{c}"),
        ("[]F{a, b, c}", &["b", "c"], "[]F{a}"),
        ("[]F{a, b, c}", &["a", "b", "c"], "[]F{}"),
        ("[]F{a, b,}", &["a", "b"], "[]F{}"),
        ("map[string][]F{\"x\": {c, a}, \"y\": {a}}", &["a"], "map[string][]F{\"x\": {c}, \"y\": {}}"),
        ("[]T{{N: 1, F: a}}", &["a"], "[]T{{N: 1}}"),
    ];
    for (lit, gone, want) in cases {
        let src = format!(
            "package p\n\ntype F func()\n\ntype T struct {{\n\tN int\n\tF F\n}}\n\nvar v = {lit}\n\nfunc a() {{}}\n\nfunc b() {{}}\n\nfunc c() {{}}\n"
        );
        let sources = sources_of(&[("p/p.go", &src)]);
        let ids: Vec<String> = gone.iter().map(|g| format!("p/p.go::{g}")).collect();
        let m = mask_all(&sources, &ids.iter().map(String::clone).collect());
        let out = &m.changed["p/p.go"];
        assert!(out.contains(&format!("var v = {want}\n")), "{lit} without {gone:?}:\n{out}");
        assert!(parse_errors(Language::Go, out).is_empty(), "{out}");
    }
}
