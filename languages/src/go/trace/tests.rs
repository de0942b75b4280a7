use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use super::probes::{FilePlan, probe_file};
use super::*;

const SOURCE: &str = r#"package geo

import "math"

// Area of a circle.
func Area(r float64) float64 {
	f := func(x float64) float64 { return x * x }
	return math.Pi * f(r)
}

//go:nosplit
func fast() {}

var hook = func() {}

type C struct{}

func (c C) Name() string { return "c" }

func main() {
}
"#;

const TEST_SOURCE: &str = r#"package geo_test

import (
	"os"
	tt "testing"
)

func TestMain(m *tt.M) {
	os.Exit(m.Run())
}

func TestArea(t *tt.T) {
	t.Parallel()
	t.Run("unit", func(t *tt.T) {
		t.Parallel()
	})
	helper := func(n int) int { return n }
	_ = helper
}

func check(_ *tt.T, b *tt.B) {}
"#;

fn bodies_of(src: &str, names: &[(&str, u32)]) -> HashMap<usize, u32> {
    // The body of `func NAME(` / `) NAME(`: the first `{` after the name on its line.
    names
        .iter()
        .map(|(name, n)| {
            let at = src.find(&format!(" {name}(")).expect(name);
            let brace = at + src[at..].find('{').unwrap();
            (brace, *n)
        })
        .collect()
}

#[test]
fn source_probes_keep_every_line_where_it_was() {
    let bodies = bodies_of(SOURCE, &[("Area", 0), ("fast", 1), ("Name", 2), ("main", 3)]);
    let plan =
        FilePlan { test: false, package_path: "ex/geo", probe_import: "ex/internal/carveprobe", bodies: &bodies };
    let out = probe_file(&mut probes::new_parser(), SOURCE, &plan).unwrap();
    let text = out.text.unwrap();
    assert_eq!(text.lines().count(), SOURCE.lines().count());
    for (old, new) in SOURCE.lines().zip(text.lines()) {
        // Only insertions: the old line's text is still there, in order.
        let mut rest = new;
        for piece in old.split_whitespace() {
            let at = rest.find(piece).unwrap_or_else(|| panic!("`{piece}` of `{old}` lost in `{new}`"));
            rest = &rest[at + piece.len()..];
        }
    }
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], r#"package geo; import carve_probe_ "ex/internal/carveprobe""#);
    assert_eq!(lines[5], "func Area(r float64) float64 { carve_probe_.P(0);");
    // A literal counts as the definition it is written in.
    assert_eq!(lines[6], "\tf := func(x float64) float64 { carve_probe_.P(0); return x * x }");
    assert_eq!(lines[11], "func fast() {}", "nosplit functions are not probed");
    assert_eq!(lines[13], "var hook = func() {}", "package-level literals belong to no definition");
    assert_eq!(lines[17], r#"func (c C) Name() string { carve_probe_.P(2); return "c" }"#);
    assert_eq!(lines[19], "func main() { carve_probe_.P(3);", "only package main's main() begins a process");
    assert_eq!((out.probes, out.markers, out.package.as_str()), (4, 0, "geo"));
    let main = "package main\n\nfunc main() {\n}\n";
    let bodies = bodies_of(main, &[("main", 7)]);
    let plan =
        FilePlan { test: false, package_path: "ex/cmd", probe_import: "ex/internal/carveprobe", bodies: &bodies };
    let text = probe_file(&mut probes::new_parser(), main, &plan).unwrap().text.unwrap();
    assert_eq!(text.lines().nth(2), Some("func main() { carve_probe_.P(7); defer carve_probe_.Begin()();"));
}

#[test]
fn test_files_get_markers_and_test_main_writes_the_end() {
    let plan = FilePlan {
        test: true,
        package_path: "ex/geo",
        probe_import: "ex/internal/carveprobe",
        bodies: &HashMap::new(),
    };
    let out = probe_file(&mut probes::new_parser(), TEST_SOURCE, &plan).unwrap();
    let text = out.text.unwrap();
    assert_eq!(text.lines().count(), TEST_SOURCE.lines().count());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[7], "func TestMain(m *tt.M) { defer carve_probe_.Begin()();");
    assert_eq!(lines[8], "\tcarve_probe_.Exit(os.Exit, m.Run())");
    assert_eq!(lines[11], r#"func TestArea(t *tt.T) { carve_probe_.T(t, "ex/geo");"#);
    assert_eq!(lines[12], r#"	carve_probe_.Pause(t, "ex/geo"); t.Parallel(); carve_probe_.Resume(t, "ex/geo")"#);
    assert_eq!(lines[13], r#"	t.Run("unit", func(t *tt.T) { carve_probe_.T(t, "ex/geo");"#);
    assert_eq!(lines[16], "\thelper := func(n int) int { return n }", "no entry probes in test files");
    // A blank *testing.T (a fuzz target's `func(_ *testing.T, in string)`) is named so it
    // can be marked; *testing.B gets no marker.
    assert_eq!(lines[20], r#"func check(carve_t_ *tt.T, b *tt.B) { carve_probe_.T(carve_t_, "ex/geo");}"#);
    assert!(out.has_test_main);
    assert_eq!((out.probes, out.markers, out.package.as_str()), (0, 5, "geo_test"));
}

#[test]
fn files_with_syntax_errors_are_skipped_with_their_line() {
    let plan =
        FilePlan { test: false, package_path: "p", probe_import: "p/internal/carveprobe", bodies: &HashMap::new() };
    let err = probe_file(&mut probes::new_parser(), "package p\n\nfunc f( {\n", &plan).unwrap_err();
    assert!(matches!(err, probes::Skip::Syntax(3)), "{err:?}");
}

#[test]
fn vendored_and_testdata_files_are_not_probed() {
    assert!(is_probed_path("a/b.go"));
    assert!(is_probed_path("b.go"));
    assert!(!is_probed_path("vendor/x/y.go"));
    assert!(!is_probed_path("a/testdata/y.go"));
    assert!(!is_probed_path("_old/y.go"));
}

/// The probed fixture builds and vets, with every line where it was.
#[carve_testutil::needs("go")]
fn probed_shapes_fixture_builds_and_vets() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/go/shapes");
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    carve_testutil::copy_dir(&fixture, &tree);
    let index = DefinitionIndex::build(&tree, &Default::default()).unwrap();
    let report = instrument(&index, &tree).unwrap();
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    assert!(report.probes > 20 && report.markers > 5, "{report:?}");
    // One probe package per module: the root and the nested `tools/gen`.
    assert_eq!(report.packages, ["internal/carveprobe", "tools/gen/internal/carveprobe"]);
    for path in &report.files {
        let old = std::fs::read_to_string(fixture.join(path)).unwrap();
        let new = std::fs::read_to_string(tree.join(path)).unwrap();
        assert_eq!(old.lines().count(), new.lines().count(), "{path}");
    }
    for args in [&["build", "./..."][..], &["vet", "./..."]] {
        let out = Command::new("go").args(args).current_dir(&tree).output().unwrap();
        assert!(out.status.success(), "go {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn a_fuzz_targets_blank_t_is_named_and_marked_so_its_seeds_are_attributed() {
    // As Masterminds/semver writes its fuzz targets: the seed corpus runs as subtests
    // `FuzzNewVersion/seed#0`, which must be the current test while the target runs.
    let src = "package semver\n\nimport \"testing\"\n\nfunc FuzzNewVersion(f *testing.F) {\n\tf.Add(\"v1\")\n\
               \tf.Fuzz(func(_ *testing.T, a string) {\n\t\t_, _ = NewVersion(a)\n\t})\n}\n";
    let plan =
        FilePlan { test: true, package_path: "ex/sv", probe_import: "ex/internal/carveprobe", bodies: &HashMap::new() };
    let out = probe_file(&mut probes::new_parser(), src, &plan).unwrap();
    let text = out.text.unwrap();
    assert_eq!(text.lines().count(), src.lines().count());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[4], r#"func FuzzNewVersion(f *testing.F) { carve_probe_.T(f, "ex/sv");"#);
    assert_eq!(lines[6], r#"	f.Fuzz(func(carve_t_ *testing.T, a string) { carve_probe_.T(carve_t_, "ex/sv");"#);
    assert_eq!(out.markers, 2);
}

#[test]
fn example_functions_are_current_from_entry_to_return() {
    // spf13/cast's `func Example()`: no *testing.T, so the example marks itself by name.
    let src = "package cast_test\n\nimport \"fmt\"\n\nfunc Example() {\n\tfmt.Println(1)\n\t// Output: 1\n}\n\n\
               func ExampleToInt_base() {\n}\n\nfunc Examples() {\n}\n";
    let plan = FilePlan {
        test: true,
        package_path: "ex/cast",
        probe_import: "ex/internal/carveprobe",
        bodies: &HashMap::new(),
    };
    let out = probe_file(&mut probes::new_parser(), src, &plan).unwrap();
    let text = out.text.unwrap();
    assert_eq!(text.lines().count(), src.lines().count());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[4], r#"func Example() { defer carve_probe_.E("ex/cast", "Example")();"#);
    assert_eq!(lines[9], r#"func ExampleToInt_base() { defer carve_probe_.E("ex/cast", "ExampleToInt_base")();"#);
    assert_eq!(lines[12], "func Examples() {", "not an example: a lower-case letter follows");
    assert_eq!(out.markers, 2);
}
