//! Where a file sits in a Cargo package: which crate (target) it belongs to and its module
//! path inside that crate, from the path alone (`src/a/b.rs` and `src/a/b/mod.rs` are
//! `crate::a::b`; `tests/x.rs` is the root of an integration-test crate).

/// Directory names that start a target inside a package directory.
const TARGET_DIRS: &[&str] = &["src", "tests", "examples", "benches"];

/// A file's crate and module path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    /// The package directory (`""` for the repository root, `crates/foo` …).
    pub package: String,
    /// The crate inside the package: `package|src` for the library and `src/main.rs` (one
    /// namespace, on purpose), `package|bin/<name>`, `package|tests`, `package|examples`,
    /// `package|benches`, `package|build`.
    pub krate: String,
    /// Module path inside the crate (empty for a crate root).
    pub module: Vec<String>,
}

/// Module segments of a path relative to a target directory: `a/b.rs` and `a/b/mod.rs`
/// give `[a, b]`; a crate root (`lib.rs`, `main.rs`, or any file directly in `tests/`)
/// gives `[]`.
fn module_of(rest: &[&str], roots_are_files: bool) -> Vec<String> {
    let mut parts: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    let Some(last) = parts.pop() else {
        return Vec::new();
    };
    let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
    if parts.is_empty() && (roots_are_files || stem == "lib" || stem == "main") {
        return Vec::new();
    }
    if stem != "mod" {
        parts.push(stem);
    }
    parts
}

pub(crate) fn locate(rel: &str) -> Location {
    let parts: Vec<&str> = rel.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    let found = dirs.iter().position(|d| TARGET_DIRS.contains(d));
    let Some(i) = found else {
        let package = dirs.join("/");
        if parts.last() == Some(&"build.rs") {
            return Location { krate: format!("{package}|build"), package, module: Vec::new() };
        }
        let module = module_of(&parts[dirs.len()..], false);
        return Location { krate: format!("{package}|src"), package, module };
    };
    let package = parts[..i].join("/");
    let rest = &parts[i + 1..];
    match parts[i] {
        "src" if rest.len() >= 2 && rest[0] == "bin" => {
            let name = rest[1].strip_suffix(".rs").unwrap_or(rest[1]);
            let module = if rest.len() == 2 { Vec::new() } else { module_of(&rest[2..], false) };
            let module = if module == ["main"] { Vec::new() } else { module };
            Location { krate: format!("{package}|bin/{name}"), package, module }
        }
        "src" => Location { krate: format!("{package}|src"), module: module_of(rest, false), package },
        other => Location { krate: format!("{package}|{other}"), module: module_of(rest, true), package },
    }
}

/// Test code by Cargo's conventions: files of a package's `tests/` directory (integration
/// tests). `#[cfg(test)]` modules and `#[test]` functions inside other files are marked
/// per definition by the indexer.
pub fn is_test_path(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    dirs.iter().position(|d| TARGET_DIRS.contains(d)).is_some_and(|i| dirs[i] == "tests")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_targets_and_modules() {
        let l = locate("src/shapes/polygon.rs");
        assert_eq!((l.package.as_str(), l.krate.as_str()), ("", "|src"));
        assert_eq!(l.module, ["shapes", "polygon"]);
        assert_eq!(locate("crates/a/src/lib.rs").module, Vec::<String>::new());
        assert_eq!(locate("crates/a/src/x/mod.rs").module, ["x"]);
        assert_eq!(locate("crates/a/src/x/mod.rs").package, "crates/a");
        assert_eq!(locate("tests/it.rs").krate, "|tests");
        assert_eq!(locate("tests/it.rs").module, Vec::<String>::new());
        assert_eq!(locate("tests/common/mod.rs").module, ["common"]);
        assert_eq!(locate("src/bin/tool.rs").krate, "|bin/tool");
        assert_eq!(locate("build.rs").krate, "|build");
        assert_eq!(locate("lib.rs").module, Vec::<String>::new());
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("tests/it.rs"));
        assert!(is_test_path("crates/a/tests/common/mod.rs"));
        assert!(!is_test_path("src/tests.rs"));
        assert!(!is_test_path("src/tests/helpers.rs"));
        assert!(!is_test_path("src/lib.rs"));
    }
}
