//! cargo test ids (`target::module::test`) to the `#[test]` functions they name.

use std::collections::BTreeMap;
use std::path::Path;

use crate::Language;
use crate::index::{Definition, DefinitionIndex, DefinitionKind, NodeId};

/// Where a Rust file sits: its package directory, the target it belongs to when that is not
/// the package's library (or `src/main.rs` binary) — `tests/x.rs` and `tests/x/main.rs` are
/// target `x`, `src/bin/x.rs` is `x` — and its module path inside that crate.
struct RustPlace {
    package: String,
    target: Option<String>,
    module: Vec<String>,
}

fn rust_place(path: &str) -> RustPlace {
    fn stem(f: &str) -> &str {
        f.strip_suffix(".rs").unwrap_or(f)
    }
    /// `a/b.rs`, `a/b/mod.rs` → `[a, b]`; a root file (`lib.rs`, `main.rs`) → `[]`.
    fn module_of(rest: &[&str]) -> Vec<String> {
        let Some((last, dirs)) = rest.split_last() else { return Vec::new() };
        let mut out: Vec<String> = dirs.iter().map(|s| s.to_string()).collect();
        let last = stem(last);
        if !(last == "mod" || (dirs.is_empty() && (last == "lib" || last == "main"))) {
            out.push(last.to_string());
        }
        out
    }
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len() - 1];
    let Some(i) = dirs.iter().position(|d| ["src", "tests", "examples", "benches"].contains(d)) else {
        return RustPlace { package: dirs.join("/"), target: None, module: module_of(&parts[dirs.len()..]) };
    };
    let package = parts[..i].join("/");
    let rest = &parts[i + 1..];
    match parts[i] {
        "src" if rest.len() >= 2 && rest[0] == "bin" => {
            RustPlace { package, target: Some(stem(rest[1]).to_string()), module: module_of(&rest[2..]) }
        }
        "src" => RustPlace { package, target: None, module: module_of(rest) },
        _ => RustPlace { package, target: Some(stem(rest[0]).to_string()), module: module_of(&rest[1..]) },
    }
}

/// The package's library crate name (`[lib] name`, else the package name, `-` as `_`) and
/// package name, from its `Cargo.toml`.
fn cargo_names(root: &Path, package: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(package).join("Cargo.toml")) else { return Vec::new() };
    let (mut table, mut names) = ("", Vec::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line;
        } else if (table == "[package]" || table == "[lib]")
            && let Some(v) = line.strip_prefix("name").map(str::trim_start).and_then(|r| r.strip_prefix('='))
        {
            let v = v.trim().trim_matches('"').to_string();
            names.push(v.replace('-', "_"));
            names.push(v);
        }
    }
    names
}

/// cargo `target::module::test`: the Rust test function at `module::test` of a crate named
/// `target` (`target(test)`, `target(pkg)` suffixes tell apart same-named targets). The
/// target is only checked when several crates have a test at that path.
pub fn cargo_test(root: &Path, index: &DefinitionIndex, test: &str) -> Result<Vec<NodeId>, String> {
    let (label, name) = test.split_once("::").unwrap_or((test, ""));
    if name == "doctest" || name.starts_with("doctest::") {
        return Err("it is a doctest: it lives in a doc comment, not in a test function".to_string());
    }
    let base = label.split('(').next().unwrap_or(label);
    let suffixes: Vec<&str> = label.split('(').skip(1).map(|s| s.trim_end_matches(')')).collect();
    let mut candidates: Vec<(&Definition, RustPlace)> = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Rust && d.is_test && d.kind == DefinitionKind::Function)
        .filter_map(|d| {
            let place = rust_place(&d.path);
            let path: Vec<&str> = place.module.iter().map(String::as_str).chain(d.qualname.split('.')).collect();
            (path.join("::") == name).then_some((d, place))
        })
        .collect();
    if candidates.is_empty() {
        return Err(format!("no Rust test function has the path `{name}` inside its crate"));
    }
    if candidates.len() > 1 {
        let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
        candidates.retain(|(_, p)| {
            let names = names.entry(p.package.clone()).or_insert_with(|| cargo_names(root, &p.package));
            let target_matches = match &p.target {
                Some(t) => t == base,
                None => names.iter().any(|n| n == base),
            };
            let package_matches = suffixes
                .iter()
                .all(|s| ["lib", "bin", "test", "bench", "example"].contains(s) || names.iter().any(|n| n == s));
            target_matches && package_matches
        });
    }
    match candidates.as_slice() {
        [] => Err(format!("no Rust test function at `{name}` belongs to the target `{label}`")),
        [(d, _)] => Ok(vec![d.id.clone()]),
        many => Err(format!(
            "it names several test functions ({}); remove them with --remove instead",
            many.iter().map(|(d, _)| d.id.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The file of a cargo test id that no indexed `#[test]` function is: a test a
/// `macro_rules!` invocation writes (`test! { test_u64_0(0u64, "0") … }` in itoa's
/// `tests/test.rs`) is in the test file of its target whose module path is the id's
/// module path (`test::test_u64_0` → `tests/test.rs`; `t::m::x` → `tests/t/m.rs`). Only
/// integration-test files (`tests/…`, test files whose tests all belong to them) are
/// named; a macro test inside `src/` is left to the caller, as is an id several files
/// could hold.
pub fn macro_test_file(root: &Path, index: &DefinitionIndex, test: &str) -> Option<String> {
    let (label, name) = test.split_once("::")?;
    if name == "doctest" || name.starts_with("doctest::") || cargo_test(root, index, test).is_ok() {
        return None;
    }
    let base = label.split('(').next().unwrap_or(label);
    let module: Vec<&str> = name.split("::").collect();
    let module = &module[..module.len() - 1];
    let files: Vec<&str> = index
        .files
        .values()
        .filter(|f| f.language == Language::Rust && f.is_test)
        .filter(|f| {
            let place = rust_place(&f.path);
            place.target.as_deref() == Some(base) && place.module == module
        })
        .map(|f| f.path.as_str())
        .collect();
    match files.as_slice() {
        [one] if one.split('/').any(|d| d == "tests") => Some(one.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of dtolnay/itoa: the integration test binary is named `test` and most of
    /// its tests are written by a `macro_rules!` invocation, so the index has no function
    /// `test_u64_0`; carve read the label `test` as the test's file and the candidate
    /// named no file at all.
    fn itoa_like() -> DefinitionIndex {
        let src = |p: &str, t: &str| (p.to_string(), t.as_bytes().to_vec());
        DefinitionIndex::from_sources(&[
            src("Cargo.toml", "[package]\nname = \"itoa\"\nversion = \"1.0.0\"\n"),
            src("src/lib.rs", "pub fn format(n: u64) -> String { n.to_string() }\n"),
            src(
                "tests/test.rs",
                "macro_rules! test {\n    ($($name:ident($v:expr, $e:expr))*) => {\n        $(#[test]\n        \
                 fn $name() { assert_eq!(itoa::format($v), $e); })*\n    }\n}\n\ntest! {\n    test_u64_0(0u64, \"0\")\n}\n\n\
                 #[test]\nfn test_max_str_len() {}\n\nmod inner {\n    #[test]\n    fn plain() {}\n}\n",
            ),
            src("tests/other/main.rs", "mod m;\n"),
            src("tests/other/m.rs", "#[test]\nfn written_by_hand() {}\n"),
        ])
    }

    #[test]
    fn a_macro_written_test_lives_in_its_targets_file() {
        let index = itoa_like();
        let root = Path::new("/nonexistent");
        assert_eq!(macro_test_file(root, &index, "test::test_u64_0").as_deref(), Some("tests/test.rs"));
        // A test the index has is the definition's business, not this fallback's.
        assert!(cargo_test(root, &index, "test::test_max_str_len").is_ok());
        assert_eq!(macro_test_file(root, &index, "test::test_max_str_len"), None);
        assert_eq!(macro_test_file(root, &index, "test::inner::plain"), None);
        // A module path picks the module's file; an unknown target or module names none.
        assert_eq!(macro_test_file(root, &index, "other::m::generated").as_deref(), Some("tests/other/m.rs"));
        assert_eq!(macro_test_file(root, &index, "other::generated").as_deref(), Some("tests/other/main.rs"));
        assert_eq!(macro_test_file(root, &index, "absent::test_u64_0"), None);
        assert_eq!(macro_test_file(root, &index, "test::nowhere::x"), None);
        // The library's own tests and doctests are never mapped to a test file.
        assert_eq!(macro_test_file(root, &index, "itoa::tests::x"), None);
        assert_eq!(macro_test_file(root, &index, "itoa::doctest::src/lib.rs - format (line 1)"), None);
    }
}
