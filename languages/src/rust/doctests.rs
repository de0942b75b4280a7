//! Rust tests of a source file that are not inline test items, as FeatureArc's history
//! analysis reads them: doctests (the code blocks of doc comments that rustdoc runs, named as
//! cargo names them), doc-comment lines (no code: a changed doctest is no change to the code)
//! and benchmarks (test code `cargo test` does not run as tests).

use std::borrow::Cow;

use crate::Language;
use crate::index::{Definition, DefinitionIndex, DefinitionKind, NodeId};
use crate::interface::Doctest;

/// A definition's text without its doc-comment lines (`///`, `//!`; `/** … */` lines
/// starting with `*` are kept: rare, and code-like enough): what says whether its code changed.
pub fn without_doc_lines(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|&b| b == b'\n') {
        let t = line.trim_ascii_start();
        if !(t.starts_with(b"///") || t.starts_with(b"//!")) {
            out.extend_from_slice(line);
        }
    }
    Cow::Owned(out)
}

/// A code block of a doc comment that rustdoc lists as a doctest: the words of its info
/// string and its lines as written (hidden `# ` lines included, with their `#`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    pub attributes: Vec<String>,
    pub code: String,
}

impl CodeBlock {
    /// Whether rustdoc runs it (an `ignore`d block is listed, not run).
    pub fn runs(&self) -> bool {
        !self.attributes.iter().any(|a| a.starts_with("ignore"))
    }
}

/// The code blocks of a doc comment that rustdoc lists as doctests, in order: fenced blocks
/// (```` ``` ```` or `~~~`) whose info string is empty or names only Rust and doctest
/// attributes (`rust`, `ignore`, `no_run`, `should_panic`, `compile_fail`, `edition2021` …);
/// blocks of other languages (`text`, `toml` …) are not doctests.
pub fn code_blocks(doc: &str) -> Vec<CodeBlock> {
    let mut out = Vec::new();
    let mut open: Option<(&str, Option<CodeBlock>)> = None; // (fence, the block when Rust)
    for line in doc.lines() {
        let t = line.trim_start();
        match open.as_mut() {
            None => {
                let fence = if t.starts_with("```") {
                    "```"
                } else if t.starts_with("~~~") {
                    "~~~"
                } else {
                    continue;
                };
                let info = t.trim_start_matches(fence.chars().next().unwrap_or('`'));
                let words: Vec<String> =
                    info.split([',', ' ', '\t']).filter(|w| !w.is_empty()).map(str::to_string).collect();
                let rust = words.iter().all(|w| {
                    matches!(
                        w.as_str(),
                        "rust" | "no_run" | "should_panic" | "compile_fail" | "test_harness" | "allow_fail" | "ignore"
                    ) || w.starts_with("edition")
                        || w.starts_with("ignore-")
                        || w.starts_with('{')
                });
                open = Some((fence, rust.then(|| CodeBlock { attributes: words, code: String::new() })));
            }
            Some((fence, block)) => {
                if t.starts_with(*fence) && t.trim_start_matches(fence.chars().next().unwrap_or('`')).trim().is_empty()
                {
                    out.extend(open.take().and_then(|(_, b)| b));
                } else if let Some(b) = block {
                    b.code.push_str(line);
                    b.code.push('\n');
                }
            }
        }
    }
    // A block never closed runs to the end of the comment.
    out.extend(open.and_then(|(_, b)| b));
    out
}

/// The code of the doc comment's blocks that rustdoc runs as doctests ([`code_blocks`] less
/// the `ignore`d ones), one after another; `None` when there is none.
pub fn doctest_code(doc: &str) -> Option<String> {
    let runs: Vec<CodeBlock> = code_blocks(doc).into_iter().filter(CodeBlock::runs).collect();
    (!runs.is_empty()).then(|| runs.into_iter().map(|b| b.code).collect())
}

/// The self type of an impl header as rustdoc prints it in doctest names:
/// `impl<L, R> Iterator for Either<L, R> where …` → `Either<L,R>`.
fn impl_self_type(header: &str) -> String {
    let mut rest = header.trim().strip_prefix("unsafe ").unwrap_or(header.trim());
    rest = rest.strip_prefix("impl").unwrap_or(rest).trim_start();
    if rest.starts_with('<') {
        let mut depth = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                rest = &rest[i + 1..];
                break;
            }
        }
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let words = &words[..words.iter().position(|w| *w == "where").unwrap_or(words.len())];
    let ty = match words.iter().rposition(|w| *w == "for") {
        Some(i) => &words[i + 1..],
        None => words,
    };
    ty.concat().trim_start_matches('!').to_string()
}

/// The doctests of definition `d`, named as carve's cargo runner names them without the
/// crate prefix and line: `<path> - <module path>::<item path>` (`src/lib.rs - Either<L,R>::map`).
pub fn doctests(d: &Definition, index: &DefinitionIndex) -> Option<Doctest> {
    let code = doctest_code(d.docstring.as_deref()?)?;
    let mut parts = vec![d.name.clone()];
    let mut parent = d.parent.as_ref().and_then(|p| index.definitions.get(p));
    // An impl's parent in the index is its self type's definition: after the impl, only the
    // modules around it name the doctest.
    let mut in_impl = false;
    while let Some(p) = parent {
        match p.kind {
            DefinitionKind::Impl => {
                parts.push(impl_self_type(&p.signature.text));
                in_impl = true;
            }
            DefinitionKind::Module => parts.push(p.name.clone()),
            _ if !in_impl => parts.push(p.name.clone()),
            _ => {}
        }
        parent = p.parent.as_ref().and_then(|q| index.definitions.get(q));
    }
    let module = index.files.get(&d.path).and_then(|f| f.module.clone()).unwrap_or_default();
    parts.extend(module.rsplit("::").filter(|m| !m.is_empty() && *m != "crate").map(str::to_string));
    parts.reverse();
    Some(Doctest { id: format!("{} - {}", d.path, parts.join("::")), code })
}

/// The item name of a doctest named as [`doctests`] names it (`src/lib.rs - Either<L,R>::map`
/// → `map`, generics dropped), or `None` when `id` is no such name.
pub fn doctest_name(id: &str) -> Option<&str> {
    let (_, item) = id.rsplit_once(" - ")?;
    let mut depth = 0;
    let mut start = 0;
    let b = item.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && i + 1 < b.len() && b[i + 1] == b':' => start = i + 2,
            _ => {}
        }
    }
    let last = &item[start.min(item.len())..];
    Some(last.split('<').next().unwrap_or(last))
}

/// The definition whose doc comment holds cargo doctest `test`
/// (`<crate>::doctest::<path> - <item>`, carve's id, or rustdoc's with ` (line N)`; a later
/// example of the same item ends in ` (example k)`): the definition of a Rust source file at
/// `<path>` (relative to its package) that [`doctests`] names `<path> - <item>`. A crate's or
/// module's doctest has none. When packages of a workspace share the path (`src/lib.rs`), the
/// one whose directory is named as `<crate>` is taken, and none when that does not decide.
pub fn doctest_owner(index: &DefinitionIndex, test: &str) -> Option<NodeId> {
    let (krate, rest) = test.split_once(super::runner::DOCTEST_MARK)?;
    let (file, item) = rest.split_once(" - ")?;
    let mut item = item;
    for suffix in [" (line ", " (example "] {
        if let Some(at) = item.rfind(suffix).filter(|_| item.ends_with(')')) {
            item = &item[..at];
        }
    }
    let name = doctest_name(rest)?;
    let name = name.split(" (").next().unwrap_or(name);
    let in_package = |path: &str| path == file || path.strip_suffix(file).is_some_and(|p| p.ends_with('/'));
    let found: Vec<&Definition> = index
        .files
        .values()
        .filter(|f| f.language == Language::Rust && !f.is_test && in_package(&f.path))
        .flat_map(|f| f.definitions.iter().filter_map(|id| index.get(id)))
        .filter(|d| d.name == name && d.kind != DefinitionKind::Module)
        .filter(|d| doctests(d, index).is_some_and(|t| t.id.split_once(" - ").is_some_and(|(_, i)| i == item)))
        .collect();
    let chosen: Vec<&&Definition> = match found.len() {
        0 | 1 => found.iter().collect(),
        _ => found
            .iter()
            .filter(|d| {
                let package = d.path.strip_suffix(file).unwrap_or("").trim_end_matches('/');
                package.rsplit('/').next().is_some_and(|dir| dir.replace('-', "_") == krate)
            })
            .collect(),
    };
    match chosen.as_slice() {
        [one] => Some(one.id.clone()),
        _ => None,
    }
}

/// A benchmark: a function with a `#[bench]` attribute, or any definition of a file under a
/// `benches/` directory (Cargo's bench targets; `cargo test` builds no bench target).
pub fn is_bench(path: &str, attributes: &[String]) -> bool {
    let dirs: Vec<&str> = path.split('/').collect();
    dirs[..dirs.len().saturating_sub(1)].contains(&"benches")
        || attributes.iter().any(|a| {
            let a = a.trim().trim_start_matches("#[").trim_end_matches(']');
            a.split('(').next().is_some_and(|h| h.trim() == "bench")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doctest_code_keeps_the_blocks_rustdoc_runs() {
        let doc = "Maps the value.\n\n```\nlet x = Either::Left(1).map(f);\n```\n\n```text\nnot rust\n```\n\n```ignore\nskipped()\n```\n\n```rust,should_panic\npanics();\n```";
        assert_eq!(doctest_code(doc).as_deref(), Some("let x = Either::Left(1).map(f);\npanics();\n"));
        assert_eq!(doctest_code("Only prose.\n\n```text\nx\n```"), None);
        assert_eq!(doctest_code("No blocks at all."), None);
    }

    #[test]
    fn impl_self_types_print_as_rustdoc_names_them() {
        assert_eq!(impl_self_type("impl<L, R> Either<L, R>"), "Either<L,R>");
        assert_eq!(impl_self_type("impl<L: Iterator, R> Iterator for Either<L, R> where R: Iterator"), "Either<L,R>");
        assert_eq!(impl_self_type("unsafe impl Send for Buffer"), "Buffer");
        assert_eq!(impl_self_type("impl<T, F> Drain<'_, T, F>\nwhere\n    F: FnMut(&mut T) -> bool,"), "Drain<'_,T,F>");
    }

    #[test]
    fn doctest_names_are_the_last_item_without_generics() {
        assert_eq!(doctest_name("src/lib.rs - Either<L,R>::map"), Some("map"));
        assert_eq!(doctest_name("src/lib.rs - add"), Some("add"));
        assert_eq!(doctest_name("src/buf.rs - buf::Buffer<T>::push<U>"), Some("push"));
        assert_eq!(doctest_name("src/lib.rs::tests.adds"), None);
    }

    #[test]
    fn a_doctest_belongs_to_the_definition_whose_doc_comment_holds_it() {
        let src = "/// A stack.\npub struct Stack { v: Vec<i32> }\n\nimpl Stack {\n    /// Pushes.\n    ///\n    /// ```\n    /// let mut s = st::Stack::new();\n    /// s.push(1);\n    /// ```\n    pub fn push(&mut self, x: i32) { self.v.push(x) }\n\n    /// Without a doctest.\n    pub fn pop(&mut self) -> Option<i32> { self.v.pop() }\n}\n\n/// Adds.\n///\n/// ```\n/// assert_eq!(st::add(1, 2), 3);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n\n/// A module.\n///\n/// ```\n/// st::inner::f();\n/// ```\npub mod inner {\n    /// Does nothing.\n    ///\n    /// ```\n    /// st::inner::f();\n    /// ```\n    pub fn f() {}\n}\n";
        let index = DefinitionIndex::from_sources(&[("crates/st/src/lib.rs".to_string(), src.as_bytes().to_vec())]);
        let owner = |t: &str| doctest_owner(&index, t);
        assert_eq!(owner("st::doctest::src/lib.rs - Stack::push").as_deref(), Some("crates/st/src/lib.rs::Stack.push"));
        assert_eq!(
            owner("st::doctest::src/lib.rs - Stack::push (line 7)").as_deref(),
            Some("crates/st/src/lib.rs::Stack.push")
        );
        assert_eq!(owner("st::doctest::src/lib.rs - add (example 2)").as_deref(), Some("crates/st/src/lib.rs::add"));
        assert_eq!(owner("st::doctest::src/lib.rs - inner::f").as_deref(), Some("crates/st/src/lib.rs::inner.f"));
        // A module's doctest, a method without one, a crate's, and no doctest at all.
        assert_eq!(owner("st::doctest::src/lib.rs - inner"), None);
        assert_eq!(owner("st::doctest::src/lib.rs - Stack::pop"), None);
        assert_eq!(owner("st::doctest::src/lib.rs - (line 1)"), None);
        assert_eq!(owner("st::tests::adds"), None);
        assert_eq!(owner("st::doctest::src/other.rs - add"), None);
    }

    /// servo/rust-smallvec's `benches/bench.rs` and `#[bench]` functions count as no test a
    /// commit adds: `cargo test` does not run them, so no gate could see them fail or pass.
    #[test]
    fn rust_benchmarks_are_no_tests() {
        assert!(is_bench("benches/bench.rs", &[]));
        assert!(is_bench("crates/a/benches/x.rs", &["inline".into()]));
        assert!(is_bench("src/lib.rs", &["bench".into()]));
        assert!(is_bench("src/lib.rs", &["#[bench]".into()]));
        assert!(!is_bench("src/lib.rs", &["test".into()]));
        assert!(!is_bench("src/benches.rs", &["cfg(feature = \"bench\")".into()]));
        assert!(!is_bench("tests/bench_like.rs", &[]));
    }

    #[test]
    fn rust_doc_lines_do_not_change_a_definitions_hash_input() {
        let a = b"/// Adds.\n/// ```\n/// add(1, 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 { a + b }\n";
        let b = b"/// Adds two numbers.\npub fn add(a: i32, b: i32) -> i32 { a + b }\n";
        assert_eq!(without_doc_lines(a), without_doc_lines(b));
        assert_ne!(without_doc_lines(a), without_doc_lines(b"pub fn add(a: i32, b: i32) -> i32 { b + a }\n"));
    }
}
