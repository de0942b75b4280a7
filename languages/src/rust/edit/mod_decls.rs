//! The out-of-line `mod` items (`mod clear;`) of one file that declare a file left out of
//! the masked tree: without them the crate does not build ("file not found for module",
//! E0583), as bitflags' `src/tests.rs` showed when `src/tests/clear.rs` went.

use std::collections::BTreeSet;

use tree_sitter::Node;

/// Byte ranges (attributes and `///` docs included) of the `mod NAME;` items of `source`
/// (the file at `path`) whose file, `DIR/NAME.rs` or `DIR/NAME/mod.rs`, is in `removed`.
/// `#[path = …]` modules are left alone.
pub fn declaring(source: &str, path: &str, removed: &BTreeSet<String>) -> Vec<(usize, usize)> {
    if removed.is_empty() || !source.contains("mod ") {
        return Vec::new();
    }
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&crate::Language::Rust.grammar()).is_err() {
        return Vec::new();
    }
    let Some(tree) = parser.parse(source, None) else { return Vec::new() };
    let mut out = Vec::new();
    walk(tree.root_node(), source, &module_dir(path), removed, &mut out);
    out
}

/// Whether the file at `path` is a module another file declares (`src/tests/clear.rs`),
/// compiled into the same binary as its crate's other tests, rather than a crate root
/// (`src/lib.rs`, `tests/basic.rs`, `examples/x.rs`).
pub fn is_module_file(path: &str) -> bool {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    !(matches!(file, "lib.rs" | "main.rs" | "build.rs") || is_root_dir(dir))
}

/// A folder whose `.rs` files are crate roots: a package's `tests/`, `examples/`,
/// `benches/` and `src/bin/` (not `src/tests/`, a module folder under `src/`).
fn is_root_dir(dir: &str) -> bool {
    let parts: Vec<&str> = dir.split('/').collect();
    match parts.iter().rposition(|p| *p == "src") {
        Some(i) => parts[i + 1..] == ["bin"],
        None => matches!(parts.last(), Some(&("tests" | "examples" | "benches"))),
    }
}

/// The folder a file's child modules live in: beside a crate root or `mod.rs`, else in
/// the folder named after the file (`src/tests.rs` -> `src/tests`).
fn module_dir(path: &str) -> String {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let root = matches!(file, "lib.rs" | "main.rs" | "mod.rs" | "build.rs") || is_root_dir(dir);
    match (root, dir) {
        (true, _) => dir.to_string(),
        (false, "") => stem.to_string(),
        (false, d) => format!("{d}/{stem}"),
    }
}

fn walk(list: Node, src: &str, dir: &str, removed: &BTreeSet<String>, out: &mut Vec<(usize, usize)>) {
    let mut cursor = list.walk();
    let children: Vec<Node> = list.named_children(&mut cursor).collect();
    for (i, child) in children.iter().enumerate() {
        if child.kind() != "mod_item" {
            continue;
        }
        let Some(name) = child.child_by_field_name("name").and_then(|n| n.utf8_text(src.as_bytes()).ok()) else {
            continue;
        };
        let name = name.trim_start_matches("r#");
        let sub = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
        if let Some(body) = child.child_by_field_name("body") {
            walk(body, src, &sub, removed, out);
            continue;
        }
        // The attributes and doc comments right before the item go with it.
        let mut start = child.start_byte();
        for prev in children[..i].iter().rev() {
            if !matches!(prev.kind(), "attribute_item" | "line_comment" | "block_comment") {
                break;
            }
            let text = prev.utf8_text(src.as_bytes()).unwrap_or("");
            if text.starts_with("#[path") {
                start = usize::MAX;
                break;
            }
            start = prev.start_byte();
        }
        if start == usize::MAX {
            continue;
        }
        if removed.contains(&format!("{sub}.rs")) || removed.contains(&format!("{sub}/mod.rs")) {
            out.push((start, child.end_byte()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_folders() {
        assert_eq!(module_dir("src/lib.rs"), "src");
        assert_eq!(module_dir("src/tests.rs"), "src/tests");
        assert_eq!(module_dir("src/a/mod.rs"), "src/a");
        assert_eq!(module_dir("tests/basic.rs"), "tests");
        assert_eq!(module_dir("src/a/b.rs"), "src/a/b");
        assert_eq!(module_dir("src/tests/apply.rs"), "src/tests/apply");
        assert_eq!(module_dir("crates/x/tests/t.rs"), "crates/x/tests");
        assert!(is_module_file("src/tests/clear.rs") && is_module_file("src/a/mod.rs"));
        assert!(!is_module_file("src/lib.rs") && !is_module_file("tests/basic.rs") && !is_module_file("src/bin/x.rs"));
    }

    #[test]
    fn the_mod_items_of_removed_files_go_with_their_attributes() {
        let src = "mod all;\n/// Clearing.\n#[cfg(test)]\nmod clear;\nmod inline {\n    mod deep;\n}\n#[path = \"x.rs\"]\nmod gone;\n";
        let removed: BTreeSet<String> =
            ["src/tests/clear.rs", "src/tests/inline/deep/mod.rs", "src/tests/gone.rs"].map(String::from).into();
        let spans = declaring(src, "src/tests.rs", &removed);
        let texts: Vec<&str> = spans.iter().map(|(s, e)| &src[*s..*e]).collect();
        assert_eq!(texts, ["/// Clearing.\n#[cfg(test)]\nmod clear;", "mod deep;"]);
    }
}
