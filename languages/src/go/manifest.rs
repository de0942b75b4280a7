//! A stand-in `go.mod` for a history that never had one (Masterminds/goutils: GOPATH-era
//! code to this day), so its states build and test with today's module-only toolchain. The
//! module path is the one the code itself names: a root file's import comment (`package
//! goutils // import "github.com/Masterminds/goutils"`), else the prefix of an import path that
//! ends in one of the tree's own package directories; else `example.com/<root package>`,
//! which serves a module whose code never imports itself. No `go` directive: the toolchain
//! then takes the code as Go 1.16, the language of the time before modules.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::edit::parse;

/// `go.mod` for `sources` (repository-relative paths with their bytes), `None` when they
/// hold no Go file.
pub fn stand_in_go_mod(sources: &[(String, Vec<u8>)]) -> Option<Vec<u8>> {
    let go: Vec<(&str, String)> = sources
        .iter()
        .filter(|(p, _)| p.ends_with(".go"))
        .map(|(p, b)| (p.as_str(), String::from_utf8_lossy(b).into_owned()))
        .collect();
    let dirs: BTreeSet<&str> = go.iter().filter_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d)).collect();
    let mut comment = None;
    let mut root_package = None;
    let mut prefixes: BTreeMap<String, usize> = BTreeMap::new();
    for (path, text) in &go {
        let Ok(tree) = parse(text, path) else { continue };
        let root = tree.root_node();
        let at_root = !path.contains('/');
        if at_root && !path.ends_with("_test.go") {
            let (name, import) = package_clause(root, text);
            root_package = root_package.or(name);
            comment = comment.or(import);
        }
        for import in import_paths(root, text) {
            if let Some(dir) = dirs.iter().find(|d| import.ends_with(&format!("/{d}"))) {
                *prefixes.entry(import[..import.len() - dir.len() - 1].to_string()).or_default() += 1;
            }
        }
    }
    let by_prefix = prefixes.into_iter().max_by_key(|(p, n)| (*n, std::cmp::Reverse(p.clone()))).map(|(p, _)| p);
    let fallback = || root_package.map(|n| format!("example.com/{n}"));
    let module =
        comment.or(by_prefix).or_else(fallback).or_else(|| (!go.is_empty()).then(|| "example.com/module".into()))?;
    Some(format!("module {module}\n").into_bytes())
}

/// The package name of a file and its import comment's path, if any.
fn package_clause(root: Node, text: &str) -> (Option<String>, Option<String>) {
    let mut c = root.walk();
    let Some(clause) = root.named_children(&mut c).find(|n| n.kind() == "package_clause") else { return (None, None) };
    let mut cc = clause.walk();
    let name = clause
        .named_children(&mut cc)
        .find(|n| n.kind() == "package_identifier")
        .map(|n| text[n.byte_range()].to_string());
    let rest = text[clause.end_byte()..].lines().next().unwrap_or("");
    let import = rest
        .trim()
        .strip_prefix("//")
        .and_then(|r| r.trim().strip_prefix("import"))
        .map(|r| r.trim().trim_matches('"').to_string())
        .filter(|p| !p.is_empty());
    (name, import)
}

/// The paths a file imports.
fn import_paths(root: Node, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "import_spec" {
            if let Some(p) = n.child_by_field_name("path") {
                out.push(text[p.byte_range()].trim_matches(|c| c == '"' || c == '`').to_string());
            }
            continue;
        }
        if matches!(n.kind(), "source_file" | "import_declaration" | "import_spec_list") {
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_mod(files: &[(&str, &str)]) -> Option<String> {
        let sources: Vec<(String, Vec<u8>)> =
            files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
        stand_in_go_mod(&sources).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn the_module_path_is_the_one_the_code_names() {
        let comment = [("a.go", "package goutils // import \"github.com/M/goutils\"\n")];
        assert_eq!(go_mod(&comment).as_deref(), Some("module github.com/M/goutils\n"));
        let sub = [
            ("a.go", "package x\n\nimport \"github.com/o/x/internal/y\"\n"),
            ("internal/y/y.go", "package y\n"),
            ("b.go", "package x\n\nimport (\n\t\"fmt\"\n\t\"github.com/o/x/internal/y\"\n)\n"),
        ];
        assert_eq!(go_mod(&sub).as_deref(), Some("module github.com/o/x\n"));
        let plain = [("a.go", "package goutils\n\nimport \"bytes\"\n"), ("a_test.go", "package goutils\n")];
        assert_eq!(go_mod(&plain).as_deref(), Some("module example.com/goutils\n"));
        assert_eq!(go_mod(&[("README.md", "# x\n")]), None);
    }
}
