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
