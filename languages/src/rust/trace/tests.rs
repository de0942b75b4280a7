use std::collections::{HashMap, HashSet};

use super::probes::{self, FilePlan};
use super::*;

const SOURCE: &str = r#"//! A crate.
use std::sync::LazyLock;

macro_rules! make {
    () => { fn generated() -> u32 { 1 } };
}

static TABLE: LazyLock<Vec<u32>> = LazyLock::new(|| build(3));
static OTHER: LazyLock<u32> = LazyLock::new(|| {
    build(1).len() as u32
});

pub const fn limit() -> u32 { 7 }

pub fn build(n: u32) -> Vec<u32> {
    #![allow(clippy::all)]
    (0..n).map(|i| {
        i * 2
    }).collect()
}

pub async fn fetch() -> u32 { 1 }

#[cfg(test)]
mod tests {
    #[test]
    fn builds() { assert_eq!(super::build(2), vec![0, 2]); }
}
"#;

fn body_of(src: &str, needle: &str) -> usize {
    let at = src.find(needle).unwrap();
    at + src[at..].find('{').unwrap()
}

fn probed() -> String {
    probed_keeping(&HashSet::new())
}

fn probed_keeping(keep_const: &HashSet<String>) -> String {
    let mut bodies = HashMap::new();
    bodies.insert(body_of(SOURCE, "pub fn build"), (0, false));
    bodies.insert(body_of(SOURCE, "pub async fn fetch"), (1, false));
    bodies.insert(body_of(SOURCE, "fn builds"), (2, true));
    bodies.insert(body_of(SOURCE, "pub const fn limit"), (3, false));
    let plan = FilePlan { bodies: &bodies, file: 5, keep_const };
    let out = probes::probe_file(&mut probes::new_parser(), SOURCE, &plan).unwrap();
    assert_eq!((out.const_fns, out.unconsted), if keep_const.is_empty() { (0, 1) } else { (1, 0) });
    out.text.unwrap()
}

#[test]
fn probes_go_on_the_opening_lines_and_no_line_moves() {
    let text = probed();
    assert_eq!(text.lines().count(), SOURCE.lines().count());
    let lines: Vec<&str> = text.lines().collect();
    let line = |needle: &str| *lines.iter().find(|l| l.contains(needle)).unwrap();
    // After the inner attribute, on its line.
    assert_eq!(line("#![allow"), "    #![allow(clippy::all)] let __carve_g = carve_probe::enter(0);");
    // A block closure counts as the function it is written in.
    assert_eq!(line("(0..n)"), "    (0..n).map(|i| { let __carve_g = carve_probe::enter(0);");
    assert!(line("pub async fn fetch").contains("{ carve_probe::hit(1); 1 }"));
    assert!(line("fn builds").contains("{ let __carve_g = carve_probe::frame(2); assert_eq!"));
    // Static initialisers run as `<import>`, expression closures wrapped on their line.
    assert_eq!(
        line("static TABLE"),
        "static TABLE: LazyLock<Vec<u32>> = LazyLock::new(|| { let __carve_g = carve_probe::import(5); build(3) });"
    );
    assert!(line("static OTHER").ends_with("|| { let __carve_g = carve_probe::import(5);"));
    // A `const fn` no const context calls loses `const` (blanked: no byte moves) and is probed.
    assert_eq!(line("fn limit"), "pub       fn limit() -> u32 { let __carve_g = carve_probe::enter(3); 7 }");
    // Left alone: macro bodies.
    assert_eq!(line("fn generated"), "    () => { fn generated() -> u32 { 1 } };");
    // The probed file parses as rustc's grammar (syn) would.
    check_parses(SOURCE, &text).unwrap();
}

#[test]
fn a_const_fn_a_const_context_calls_stays_const_and_unprobed() {
    let text = probed_keeping(&HashSet::from(["limit".to_string()]));
    let line = text.lines().find(|l| l.contains("fn limit")).unwrap();
    assert_eq!(line, "pub const fn limit() -> u32 { 7 }");
}

#[test]
fn a_probe_that_breaks_the_grammar_is_caught() {
    let err = check_parses("fn f() {}\n", "fn f() { let = ; }\n").unwrap_err();
    assert!(err.contains("would not parse"), "{err}");
}

#[test]
fn a_syntax_error_leaves_the_file_alone() {
    let bodies = HashMap::new();
    let plan = FilePlan { bodies: &bodies, file: 0, keep_const: &HashSet::new() };
    assert_eq!(probes::probe_file(&mut probes::new_parser(), "fn f( {\n", &plan), Err(1));
}

#[test]
fn the_dependency_goes_into_the_dependencies_table_without_moving_lines() {
    let rt = Path::new("/rt/carve_probe");
    let with = "[package]\nname = \"a\"\n\n[dependencies]\nserde = \"1\"\n";
    let out = add_dependency(with, rt);
    assert_eq!(
        out,
        "[package]\nname = \"a\"\n\n[dependencies]\ncarve_probe = { path = \"/rt/carve_probe\" }\nserde = \"1\"\n"
    );
    let without = "[package]\nname = \"a\"\n\n[workspace]\n";
    assert!(
        add_dependency(without, rt)
            .ends_with("[workspace]\n\n[dependencies]\ncarve_probe = { path = \"/rt/carve_probe\" }\n")
    );
}

#[test]
fn probed_paths_leave_out_build_scripts_and_target() {
    assert!(is_probed_path("src/lib.rs"));
    assert!(is_probed_path("crates/a/tests/t.rs"));
    assert!(!is_probed_path("build.rs"));
    assert!(!is_probed_path("crates/a/build.rs"));
    assert!(!is_probed_path("target/debug/build/x/out/gen.rs"));
}

#[test]
fn the_table_is_valid_rust_and_lists_libraries() {
    let labels = vec![("geometry".to_string(), "geometry".to_string(), true), ("it".into(), "it".into(), false)];
    let t = render_table(&["a.rs::f".into()], &["a.rs"], &labels, &PathBuf::from("/t"));
    syn::parse_file(&t).unwrap();
    assert!(t.contains("pub static LIBS: &[&str] = &[\n    \"geometry\",\n];"), "{t}");
}
