//! Splitting a Rust source file into its code and its inline tests, and joining one file's
//! code with another version's tests (FeatureArc on Rust: a stage's patch of `src/lib.rs`
//! holds feature code and `#[cfg(test)]` tests alike; the code goes to the stage patch, the
//! tests to its hidden test patch).
//!
//! An **inline test item** is an item of the file's root or of an inline, non-test module
//! (`mod m { … }`) that carries `#[cfg(test)]` (a test module, a test-only `use` or helper)
//! or a test attribute (`#[test]`, `#[tokio::test]`, `#[bench]` …), together with the
//! attributes and comments directly above it. Everything else is code — doc comments and the
//! doctests in them included (rustdoc runs them from the code's own docs).
//!
//! Test items are matched between versions by module path and key (`fn test_x`, `mod tests`,
//! or the first line for an item without a name). [`with_tests_of`]`(a, b)` is `a` with its
//! test items replaced by `b`'s: a test of both stays where `a` has it with `b`'s text, a new
//! one goes after the test `b` has before it (or at the end of its module), one `b` lacks
//! goes (with a blank line before it). So `with_tests_of(a, a) == a`, and
//! `with_tests_of(a, tests_only(b)) == with_tests_of(a, b)`. Deterministic: tree-sitter-rust.

use std::collections::BTreeMap;

use tree_sitter::Node;

use super::index::parse::{is_cfg_test, is_test_attribute, new_parser};

/// One inline test item of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineTest {
    /// Names of the inline modules around it (empty at the file's root).
    pub module: Vec<String>,
    /// `fn test_x`, `mod tests`; the first line for an item without a name; `#2` … for repeats.
    pub key: String,
    /// Byte range, from the start of its first attribute's or comment's line to after the
    /// newline that ends it.
    pub start: usize,
    pub end: usize,
}

/// A file's inline test items in source order, with the inline modules (and the byte offset
/// of the line holding each one's closing brace) they can go into.
#[derive(Debug, Clone, Default)]
struct Layout {
    tests: Vec<InlineTest>,
    /// Module path → where an item appended to it goes (before the closing brace's line;
    /// the end of the file for the root).
    module_end: BTreeMap<Vec<String>, usize>,
    /// A test item holds a parse error.
    broken_test: bool,
}

/// Whether every parse error of these items lies inside a function's body (a `block`): the
/// items' extents, names and attributes are then as written. Items of inline modules, impls
/// and traits (a `body` that lists items) are checked the same way.
fn items_are_sound(children: &[Node]) -> bool {
    children.iter().all(|ch| item_is_sound(*ch))
}

fn item_is_sound(n: Node) -> bool {
    if !n.has_error() {
        return true;
    }
    if n.is_error() || n.is_missing() {
        return false;
    }
    let Some(body) = n.child_by_field_name("body") else { return false };
    let mut c = n.walk();
    let rest_sound = n.children(&mut c).filter(|ch| ch.id() != body.id()).all(|ch| !ch.has_error());
    if !rest_sound {
        return false;
    }
    if body.kind() == "block" {
        return true;
    }
    let mut c = body.walk();
    let inner: Vec<Node> = body.children(&mut c).collect();
    items_are_sound(&inner)
}

/// [`tests_only`] and [`with_tests_of`] behind the language interface.
pub(crate) struct Split;

impl crate::interface::InlineTests for Split {
    fn tests_only(&self, source: &str) -> Result<String, crate::interface::InlineTestsError> {
        tests_only(source).map_err(|e| crate::interface::InlineTestsError(e.0))
    }
    fn with_tests_of(&self, code: &str, tests: &str) -> Result<String, crate::interface::InlineTestsError> {
        with_tests_of(code, tests).map_err(|e| crate::interface::InlineTestsError(e.0))
    }
}

/// Why a file could not be split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitError(pub String);

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn layout(src: &str) -> Result<Layout, SplitError> {
    let mut parser = new_parser();
    let tree = parser.parse(src, None).ok_or_else(|| SplitError("tree-sitter-rust could not parse the file".into()))?;
    let root = tree.root_node();
    let children: Vec<Node> = {
        let mut c = root.walk();
        root.children(&mut c).collect()
    };
    // An error inside a function's body (Rust 2015's `try!(…)`, which tree-sitter-rust reads
    // as the 2018 `try` keyword: bluss/either's serde_untagged.rs) leaves the items' extents
    // as they are; an error between items, in a signature, or inside a test item, does not.
    if root.has_error() && !items_are_sound(&children) {
        return Err(SplitError("the file does not parse cleanly (tree-sitter-rust)".into()));
    }
    let mut out = Layout::default();
    out.module_end.insert(Vec::new(), src.len());
    collect(&children, &[], src, &mut out);
    if out.broken_test {
        return Err(SplitError("an inline test item does not parse cleanly (tree-sitter-rust)".into()));
    }
    let mut seen: BTreeMap<(Vec<String>, String), usize> = BTreeMap::new();
    for t in &mut out.tests {
        let n = seen.entry((t.module.clone(), t.key.clone())).or_insert(0);
        *n += 1;
        if *n > 1 {
            t.key = format!("{} #{n}", t.key);
        }
    }
    Ok(out)
}

fn line_start(src: &str, at: usize) -> usize {
    let before = &src[..at];
    match before.rfind('\n') {
        Some(i) if before[i + 1..].trim().is_empty() => i + 1,
        None if before.trim().is_empty() => 0,
        _ => at,
    }
}

fn line_end(src: &str, at: usize) -> usize {
    let rest = &src[at..];
    match rest.find('\n') {
        Some(i) if rest[..i].trim().is_empty() => at + i + 1,
        None if rest.trim().is_empty() => src.len(),
        _ => at,
    }
}

fn is_leading(kind: &str) -> bool {
    matches!(kind, "attribute_item" | "line_comment" | "block_comment")
}

fn collect(children: &[Node], module: &[String], src: &str, out: &mut Layout) {
    let mut pending: Vec<Node> = Vec::new();
    let mut prev_end_row: Option<usize> = None;
    for ch in children {
        let kind = ch.kind();
        if is_leading(kind) {
            // A comment that ends the previous item's line is not above the next one.
            if kind != "attribute_item" && prev_end_row == Some(ch.start_position().row) {
                continue;
            }
            pending.push(*ch);
            continue;
        }
        if !ch.is_named() || kind == "inner_attribute_item" {
            pending.clear();
            continue;
        }
        // Leading attributes and comments directly above (no blank line; attributes always).
        let mut first = *ch;
        for p in pending.iter().rev() {
            if p.kind() == "attribute_item" || p.end_position().row + 1 >= first.start_position().row {
                first = *p;
            } else {
                break;
            }
        }
        let attrs: Vec<String> = pending
            .iter()
            .filter(|p| p.kind() == "attribute_item" && p.start_byte() >= first.start_byte())
            .map(|p| {
                let raw = &src[p.start_byte()..p.end_byte()];
                raw.trim().strip_prefix("#[").and_then(|r| r.strip_suffix(']')).unwrap_or(raw).trim().to_string()
            })
            .collect();
        pending.clear();
        prev_end_row = Some(ch.end_position().row);
        let name = ch.child_by_field_name("name").map(|n| src[n.start_byte()..n.end_byte()].to_string());
        if attrs.iter().any(|a| is_cfg_test(a) || is_test_attribute(a)) {
            let word = kind.strip_suffix("_item").unwrap_or(kind);
            let key = match &name {
                Some(n) => format!("{word} {n}"),
                None => {
                    let text = &src[ch.start_byte()..ch.end_byte()];
                    let line = text.lines().next().unwrap_or_default();
                    format!("{word} {}", line.split_whitespace().collect::<Vec<_>>().join(" "))
                }
            };
            out.broken_test |= ch.has_error();
            out.tests.push(InlineTest {
                module: module.to_vec(),
                key,
                start: line_start(src, first.start_byte()),
                end: line_end(src, ch.end_byte()),
            });
            continue;
        }
        if kind == "mod_item" {
            if let (Some(name), Some(body)) = (name, ch.child_by_field_name("body")) {
                let mut path = module.to_vec();
                path.push(name);
                let close = body.end_byte().saturating_sub(1);
                out.module_end.insert(path.clone(), line_start(src, close));
                let inner: Vec<Node> = {
                    let mut c = body.walk();
                    body.children(&mut c).collect()
                };
                collect(&inner, &path, src, out);
            }
        }
    }
}

/// The inline test items of `src`, in source order.
pub fn inline_tests(src: &str) -> Result<Vec<InlineTest>, SplitError> {
    Ok(layout(src)?.tests)
}

/// Whether `src` has inline test items (a file that does not parse has none).
pub fn has_inline_tests(src: &str) -> bool {
    layout(src).is_ok_and(|l| !l.tests.is_empty())
}

/// The test part of `src`: its inline test items in source order, those of an inline module
/// inside a `mod name { … }` shell, separated by blank lines. An empty string when it has none.
pub fn tests_only(src: &str) -> Result<String, SplitError> {
    let l = layout(src)?;
    let mut out = String::new();
    let mut open: Vec<String> = Vec::new();
    for t in &l.tests {
        // Close the shells `t` is not in, open the ones it is.
        let common = open.iter().zip(&t.module).take_while(|(a, b)| a == b).count();
        while open.len() > common {
            open.pop();
            out.push_str("}\n");
        }
        for m in &t.module[common..] {
            if !out.is_empty() && !out.ends_with("{\n") {
                out.push('\n');
            }
            out.push_str(&format!("mod {m} {{\n"));
            open.push(m.clone());
        }
        if !out.is_empty() && !out.ends_with("{\n") {
            out.push('\n');
        }
        let text = &src[t.start..t.end];
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    for _ in open {
        out.push_str("}\n");
    }
    Ok(out)
}

/// The code part of `src`: `src` without its inline test items.
pub fn code_only(src: &str) -> Result<String, SplitError> {
    with_tests_of(src, "")
}

/// `code` with its inline test items replaced by those of `tests` (a whole file or a
/// [`tests_only`] part); see the module documentation for where each goes.
pub fn with_tests_of(code: &str, tests: &str) -> Result<String, SplitError> {
    let a = layout(code)?;
    let b = layout(tests)?;
    // (position, end, seq, text): insertions have position == end.
    let mut edits: Vec<(usize, usize, usize, String)> = Vec::new();
    let mut seq = 0;
    let mut push = |edits: &mut Vec<(usize, usize, usize, String)>, s: usize, e: usize, t: String| {
        edits.push((s, e, seq, t));
        seq += 1;
    };
    let find = |m: &[String], key: &str| a.tests.iter().find(|t| t.module == m && t.key == key);
    let mut modules: Vec<&Vec<String>> = b.tests.iter().map(|t| &t.module).collect();
    modules.dedup();
    let mut done_modules: Vec<&Vec<String>> = Vec::new();
    for m in modules {
        if done_modules.contains(&m) {
            continue;
        }
        done_modules.push(m);
        let items: Vec<&InlineTest> = b.tests.iter().filter(|t| &t.module == m).collect();
        let Some(&module_end) = a.module_end.get(m) else {
            return Err(SplitError(format!(
                "the tests are in module `{}`, which the code does not have",
                m.join("::")
            )));
        };
        let mut cursor: Option<usize> = None;
        for (i, t) in items.iter().enumerate() {
            let text = tests[t.start..t.end].to_string();
            let text = if text.ends_with('\n') { text } else { format!("{text}\n") };
            if let Some(old) = find(m, &t.key) {
                push(&mut edits, old.start, old.end, text);
                cursor = Some(old.end);
                continue;
            }
            match cursor {
                Some(at) => push(&mut edits, at, at, format!("\n{text}")),
                None => match items[i + 1..].iter().find_map(|n| find(m, &n.key)) {
                    Some(next) => push(&mut edits, next.start, next.start, format!("{text}\n")),
                    None => {
                        let at = module_end;
                        let sep = if at == code.len() && !code.is_empty() && !code.ends_with('\n') {
                            "\n\n"
                        } else if at == 0 {
                            ""
                        } else {
                            "\n"
                        };
                        push(&mut edits, at, at, format!("{sep}{text}"));
                        cursor = Some(at);
                    }
                },
            }
        }
    }
    for t in &a.tests {
        if b.tests.iter().any(|n| n.module == t.module && n.key == t.key) {
            continue;
        }
        // With the blank line above it, so that removing a test leaves no double blank line.
        let start = if code[..t.start].ends_with("\n\n") { t.start - 1 } else { t.start };
        push(&mut edits, start, t.end, String::new());
    }
    edits.sort_by_key(|&(s, e, q, _)| (s, e, q));
    let mut out = String::with_capacity(code.len() + tests.len());
    let mut pos = 0;
    for (s, e, _, text) in edits {
        if s < pos {
            return Err(SplitError("overlapping test items".into()));
        }
        out.push_str(&code[pos..s]);
        out.push_str(&text);
        pos = e;
    }
    out.push_str(&code[pos..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "//! Crate docs.\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";
    const V2: &str = "//! Crate docs.\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// Subtracts.\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn subtracts() {\n        assert_eq!(sub(3, 2), 1);\n    }\n}\n\n#[test]\nfn top_level() {}\n";

    /// Regression (bluss/either's serde_untagged.rs at 1.5): a Rust 2015 `try!(…)` in a code
    /// function is a parse error inside that function's body; the file still splits. An error
    /// inside a test item, or between items, still refuses.
    #[test]
    fn a_parse_error_inside_a_code_body_does_not_stop_the_split() {
        let src = "pub fn de(d: u8) -> Result<u8, ()> {\n    let v: u8 = try!(parse(d));\n    Ok(v)\n}\n\n\
                   #[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n";
        assert_eq!(tests_only(src).unwrap(), "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {}\n}\n");
        assert_eq!(with_tests_of(src, "").unwrap().trim_end(), src[..src.find("\n\n#[cfg").unwrap()].trim_end());
        let in_test = "pub fn f() {}\n\n#[test]\nfn t() {\n    let v = try!(f());\n}\n";
        assert!(tests_only(in_test).is_err());
        assert!(tests_only("pub fn f() {}\n}}} fn\n").is_err());
    }

    #[test]
    fn test_items_are_cfg_test_modules_and_test_functions() {
        let keys: Vec<String> = inline_tests(V2).unwrap().into_iter().map(|t| t.key).collect();
        assert_eq!(keys, ["mod tests", "function top_level"]);
        let nested =
            "mod inner {\n    pub fn f() {}\n\n    // A comment about it.\n    #[test]\n    fn f_works() { f() }\n}\n";
        let t = inline_tests(nested).unwrap();
        assert_eq!((t[0].module.clone(), t[0].key.as_str()), (vec!["inner".to_string()], "function f_works"));
        assert_eq!(
            &nested[t[0].start..t[0].end],
            "    // A comment about it.\n    #[test]\n    fn f_works() { f() }\n"
        );
        assert!(!has_inline_tests("/// ```\n/// assert!(true);\n/// ```\npub fn f() {}\n"), "doctests are code");
    }

    #[test]
    fn a_file_is_its_own_code_with_its_own_tests() {
        for v in [V1, V2, "", "fn main() {}\n"] {
            assert_eq!(with_tests_of(v, v).unwrap(), v);
            assert_eq!(with_tests_of(v, &tests_only(v).unwrap()).unwrap(), v);
        }
    }

    /// The code of the newer version with the tests of the older one, and back: the stage
    /// patch and the test patch of a stage that added `sub` with its test.
    #[test]
    fn code_and_tests_of_different_versions_join() {
        let code2_tests1 = with_tests_of(V2, V1).unwrap();
        assert!(code2_tests1.contains("pub fn sub") && !code2_tests1.contains("fn subtracts"));
        assert!(!code2_tests1.contains("fn top_level"), "{code2_tests1}");
        assert_eq!(with_tests_of(&code2_tests1, V2).unwrap(), V2);
        let code1_tests2 = with_tests_of(V1, &tests_only(V2).unwrap()).unwrap();
        assert!(!code1_tests2.contains("pub fn sub") && code1_tests2.contains("fn subtracts"));
        assert!(code1_tests2.ends_with("}\n\n#[test]\nfn top_level() {}\n"), "{code1_tests2}");
        let code = code_only(V2).unwrap();
        assert_eq!(
            code,
            "//! Crate docs.\n\n/// Adds.\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n/// Subtracts.\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n"
        );
        assert_eq!(with_tests_of(&code, V2).unwrap(), V2);
    }

    #[test]
    fn tests_of_a_module_the_code_lacks_are_an_error() {
        let tests = "mod gone {\n    #[test]\n    fn t() {}\n}\n";
        assert!(with_tests_of("fn main() {}\n", tests).is_err());
        assert!(with_tests_of("fn main( {}\n", "").is_err(), "does not parse");
    }
}
