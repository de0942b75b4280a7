//! Doctests among a Level 2 task's F2P tests, carried into the test patch as one integration
//! test file. A doctest belongs to the crate it documents and leaves with its item, but its
//! code is already another crate's: rustdoc compiles it against the library as a user would
//! (`fastrand::u8(..)`, `use itoa::Buffer;`). Each carried doctest becomes a `#[test]` function
//! of `tests/carve_doctests.rs` with its code as rustdoc would run it (hidden `# ` lines
//! shown, a `fn main` called, a block ending in `Ok(())` run as a function returning
//! `Result`, `should_panic` and `no_run` kept), and the moved items taken from the package as
//! in any rewritten integration test. Blocks rustdoc would only compile to see them fail
//! (`compile_fail`), run under their own harness (`test_harness`) or that set crate
//! attributes other than lints cannot be a test function: the task is refused with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::index::{DefinitionIndex, NodeId};
use crate::interface::CarriedTests;
use crate::rust::doctests::{CodeBlock, code_blocks, doctest_owner};
use crate::rust::runner::DOCTEST_MARK;

/// The file the carried doctests go to, before a free name is found.
const STEM: &str = "carve_doctests";

/// Carry the doctests of crate `krate` among `tests` (see the module doc); `Ok(None)` when
/// there are none.
pub(super) fn carry(
    root: &Path,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    tests: &[String],
    krate: &str,
    package: &str,
) -> Result<Option<CarriedTests>, String> {
    let ours = format!("{krate}{DOCTEST_MARK}");
    let doctests: BTreeSet<&String> = tests.iter().filter(|t| t.starts_with(&ours)).collect();
    if doctests.is_empty() {
        return Ok(None);
    }
    let stem = (1..)
        .map(|k| if k == 1 { STEM.to_string() } else { format!("{STEM}_{k}") })
        .find(|s| !root.join(format!("tests/{s}.rs")).exists() && !root.join(format!("tests/{s}")).exists())
        .unwrap_or_default();
    if autotests_off(root) {
        return Err(
            "the doctests among the F2P tests cannot become an integration test: Cargo.toml sets `autotests = false`"
                .into(),
        );
    }
    let mut text = format!(
        "//! The crate's doctests of the feature, carried here to run against `{package}`.\n#![allow(unused)]\n"
    );
    let mut ids = BTreeMap::new();
    let mut names = BTreeSet::new();
    for id in doctests {
        let block = block_of(root, index, id)?;
        let base = fn_name(id);
        let name = (1..)
            .map(|k| if k == 1 { base.clone() } else { format!("{base}_{k}") })
            .find(|n| !names.contains(n))
            .unwrap_or_default();
        text.push_str(&test_fn(id, &name, &block)?);
        ids.insert(id.clone(), format!("{stem}::{name}"));
        names.insert(name);
    }
    let moved = super::moved_names(root, index, extracted, krate);
    let edits = super::rewrite_test(&text, krate, super::package_name(package), &moved);
    let text = crate::edit::apply(&text, &edits).map_err(|e| format!("cannot rewrite the carried doctests: {e}"))?;
    Ok(Some(CarriedTests { path: format!("tests/{stem}.rs"), text, ids }))
}

/// Whether the manifest at `root` turns off cargo's discovery of `tests/*.rs`.
fn autotests_off(root: &Path) -> bool {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    text.lines().any(|l| {
        let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        l == "autotests=false"
    })
}

/// The code block of doctest `id` (`<crate>::doctest::<file> - <item>[ (example k)]`): the
/// k-th block rustdoc lists in its item's doc comment, or in the file's `//!` comment when the
/// doctest is the crate's or the module's.
fn block_of(root: &Path, index: &DefinitionIndex, id: &str) -> Result<CodeBlock, String> {
    let (file, item, k) = parse_id(id);
    let doc = match doctest_owner(index, id).and_then(|o| index.get(&o)) {
        Some(d) => d.docstring.clone().unwrap_or_default(),
        None => inner_doc(&std::fs::read_to_string(root.join(file)).unwrap_or_default()),
    };
    let blocks = code_blocks(&doc);
    let found = blocks.into_iter().nth(k - 1);
    found.ok_or_else(|| format!("cannot find the code of doctest `{id}` in {file} (item `{item}`, block {k})"))
}

/// A doctest id's file, item (empty for the crate's or a module file's doctests: carve's id
/// `<crate>::doctest::src/lib.rs -`) and the number of its example (1 for the first).
fn parse_id(id: &str) -> (&str, &str, usize) {
    let (_, rest) = id.split_once(DOCTEST_MARK).unwrap_or(("", id));
    let (rest, k) = match rest.rsplit_once(" (example ") {
        Some((r, n)) if n.ends_with(')') => (r, n.trim_end_matches(')').parse::<usize>().unwrap_or(1)),
        _ => (rest, 1),
    };
    let (file, item) = match rest.split_once(" - ") {
        Some((f, i)) => (f, i),
        None => (rest.strip_suffix(" -").unwrap_or(rest), ""),
    };
    (file.trim(), item.trim(), k)
}

/// The `//!` comment at the top of a file, without its markers.
pub(super) fn inner_doc(source: &str) -> String {
    let mut out = Vec::new();
    for line in source.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("//!") {
            out.push(rest.strip_prefix(' ').unwrap_or(rest));
        } else if !(t.is_empty() || t.starts_with("//") || t.starts_with("#![")) {
            break;
        }
    }
    out.join("\n")
}

/// A test function's name for doctest `id`: its item's path in snake case.
fn fn_name(id: &str) -> String {
    let (_, item, k) = parse_id(id);
    let item = if item.is_empty() { "crate" } else { item };
    let item = if k > 1 { format!("{item} example {k}") } else { item.to_string() };
    let mut name = String::from("doctest_");
    for c in item.chars() {
        let c = c.to_ascii_lowercase();
        match c.is_ascii_alphanumeric() {
            true => name.push(c),
            false if !name.ends_with('_') => name.push('_'),
            false => {}
        }
    }
    name.trim_end_matches('_').to_string()
}

/// rustdoc's lines of a block: a hidden line (`# code`, `#`) is code too, `##` is a `#`.
fn shown_code(code: &str) -> String {
    let mut out = String::new();
    for line in code.lines() {
        let t = line.trim();
        if t.starts_with("##") {
            out.push_str(&line.replacen("##", "#", 1));
        } else if let Some(hidden) = t.strip_prefix("# ") {
            out.push_str(hidden);
        } else if t != "#" {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The test function that runs `block` as rustdoc runs doctest `id`.
fn test_fn(id: &str, name: &str, block: &CodeBlock) -> Result<String, String> {
    let attr = |a: &str| block.attributes.iter().any(|x| x == a);
    for bad in ["compile_fail", "test_harness"] {
        if attr(bad) {
            return Err(format!("the F2P doctest `{id}` is `{bad}`: it cannot become an integration test"));
        }
    }
    if !block.runs() {
        return Err(format!("the F2P doctest `{id}` is ignored by rustdoc"));
    }
    let mut code = String::new();
    for line in shown_code(&block.code).lines() {
        let t = line.trim_start();
        if let Some(attribute) = t.strip_prefix("#![") {
            let lint = ["allow(", "warn(", "deny(", "forbid(", "expect("].iter().any(|l| attribute.starts_with(l));
            if !lint {
                return Err(format!(
                    "the F2P doctest `{id}` sets a crate attribute (`{t}`): it cannot become a test function"
                ));
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    let main = code.lines().map(str::trim_start).find(|l| l.starts_with("fn main(") || l.starts_with("fn main ("));
    let body = match main {
        Some(sig) if sig.contains("->") => format!("{code}main().unwrap();\n"),
        Some(_) => format!("{code}main();\n"),
        None if code.trim_end().ends_with("(())") => {
            format!("fn _inner() -> Result<(), impl core::fmt::Debug> {{\n{code}}}\n_inner().unwrap();\n")
        }
        None => code,
    };
    let body = if attr("no_run") { format!("fn _no_run() {{\n{body}}}\n") } else { body };
    let should_panic = if attr("should_panic") { "#[should_panic]\n" } else { "" };
    Ok(format!("\n/// The doctest `{id}`.\n#[test]\n{should_panic}fn {name}() {{\n{body}}}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_runs_as_rustdoc_runs_it() {
        let block = |attrs: &[&str], code: &str| CodeBlock {
            attributes: attrs.iter().map(|s| s.to_string()).collect(),
            code: code.to_string(),
        };
        let plain = test_fn("k::doctest::src/lib.rs - f", "doctest_f", &block(&[], "# use k::f;\nassert!(f());\n"));
        assert_eq!(
            plain.unwrap(),
            "\n/// The doctest `k::doctest::src/lib.rs - f`.\n#[test]\nfn doctest_f() {\nuse k::f;\nassert!(f());\n}\n"
        );
        let question =
            test_fn("i", "t", &block(&[], "let x: u8 = \"1\".parse()?;\nOk::<(), std::num::ParseIntError>(())\n"));
        assert!(question.unwrap().contains("fn _inner() -> Result<(), impl core::fmt::Debug> {\n"));
        let main = test_fn(
            "i",
            "t",
            &block(&["should_panic"], "#![allow(unused)]\nfn main() -> Result<(), ()> {\n    Err(())\n}\n"),
        );
        let main = main.unwrap();
        assert!(
            main.contains("#[should_panic]\nfn t() {\nfn main() -> Result<(), ()> {")
                && main.ends_with("}\nmain().unwrap();\n}\n"),
            "{main}"
        );
        let no_run = test_fn("i", "t", &block(&["no_run"], "loop {}\n")).unwrap();
        assert!(no_run.contains("fn t() {\nfn _no_run() {\nloop {}\n}\n}"), "{no_run}");
        let err = test_fn("i", "t", &block(&["compile_fail"], "x\n")).unwrap_err();
        assert!(err.contains("`compile_fail`"), "{err}");
        let err = test_fn("i", "t", &block(&[], "#![feature(test)]\n")).unwrap_err();
        assert!(err.contains("crate attribute"), "{err}");
    }

    #[test]
    fn test_names_follow_the_doctest_s_item() {
        assert_eq!(fn_name("fastrand::doctest::src/lib.rs - Rng::fork"), "doctest_rng_fork");
        assert_eq!(
            fn_name("either::doctest::src/lib.rs - Either<L,R>::map (example 2)"),
            "doctest_either_l_r_map_example_2"
        );
        assert_eq!(fn_name("fastrand::doctest::src/lib.rs -"), "doctest_crate");
        assert_eq!(fn_name("fastrand::doctest::src/lib.rs - (example 3)"), "doctest_crate_example_3");
        assert_eq!(parse_id("fastrand::doctest::src/lib.rs - (example 3)"), ("src/lib.rs", "", 3));
        assert_eq!(parse_id("k::doctest::src/a.rs - a::B<T>::c"), ("src/a.rs", "a::B<T>::c", 1));
    }

    #[test]
    fn a_crate_s_doc_comment_is_read_from_its_file() {
        let source =
            "//! Dice.\n//!\n//! ```\n//! dice::roll();\n//! ```\n#![no_std]\n\n/// Not this.\npub fn roll() {}\n";
        assert_eq!(inner_doc(source), "Dice.\n\n```\ndice::roll();\n```");
    }
}
