//! Which `const fn`s must stay `const` in the traced copy. A `const fn` cannot hold a probe
//! (a const context allows no call of a plain function), so the shim makes the others plain
//! functions: those that no const context of the tree may call. The test is by name and
//! errs on the side of keeping: a `const fn` stays when its name is a word of any const
//! context anywhere in the tree — a `const` or `static` item (associated ones too), a
//! `const { … }` block, an array length, an enum discriminant, a const generic argument or
//! default, the body of a `const fn` that stays (so the set is closed under calls), a macro
//! invocation or definition that mentions `const` or `static` (`thread_local!`,
//! `const_assert!`, a `macro_rules!` that writes a const item), and a comment line that does
//! (a doctest's `const X: … = f();`, compiled against the same copy).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use tree_sitter::{Node, Parser};

/// What one file says about const contexts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ConstUses {
    /// Words of the file's const contexts outside `const fn` bodies.
    pub words: BTreeSet<String>,
    /// Each `const fn`'s name and the words of its body and signature.
    pub const_fns: Vec<(String, BTreeSet<String>)>,
}

/// The const contexts of one file; `None` when it does not parse (it is not probed then).
pub fn const_uses(parser: &mut Parser, src: &str) -> Option<ConstUses> {
    let tree = parser.parse(src, None)?;
    let mut uses = ConstUses::default();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if let Some(context) = const_context(node, src) {
            match context {
                Context::Fn(name) => uses.const_fns.push((name, words(&src[node.byte_range()]))),
                Context::Words(range) => uses.words.extend(words(&src[range])),
                Context::Text(text) => uses.words.extend(words(&text)),
            }
            continue;
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    Some(uses)
}

enum Context {
    /// A `const fn` (its name).
    Fn(String),
    /// A const context outside `const fn`s: these bytes.
    Words(std::ops::Range<usize>),
    /// Const contexts of a comment's code (see [`comment_items`]).
    Text(String),
}

fn const_context(node: Node, src: &str) -> Option<Context> {
    let text = &src[node.byte_range()];
    let mentions_const = || text.split(|c: char| !is_word(c)).any(|w| w == "const" || w == "static");
    let whole = Some(Context::Words(node.byte_range()));
    match node.kind() {
        "const_item" | "static_item" | "const_block" | "const_parameter" => whole,
        "function_item" if is_const_fn(node, src) => {
            let name = node.child_by_field_name("name")?;
            Some(Context::Fn(src[name.byte_range()].to_string()))
        }
        "array_type" | "array_expression" => node.child_by_field_name("length").map(|l| Context::Words(l.byte_range())),
        "enum_variant" => node.child_by_field_name("value").map(|v| Context::Words(v.byte_range())),
        "block" if node.parent().is_some_and(|p| p.kind() == "type_arguments") => whole,
        "macro_invocation" | "macro_definition" if mentions_const() => whole,
        "line_comment" | "block_comment" => {
            let code = comment_items(text);
            (!code.is_empty()).then(|| Context::Text(code))
        }
        _ => None,
    }
}

/// The lines of a comment that hold a `const`/`static` item or a `const { … }` block, as a
/// doctest writes them (`const X: usize = f();`, up to the line with its `;`), and not prose
/// that only names the keyword ("a `const fn`").
fn comment_items(text: &str) -> String {
    let mut out = String::new();
    let mut open = false;
    for line in text.lines() {
        open = open || declares_const(line);
        if open {
            out.push_str(line);
            out.push('\n');
            open = !line.contains(';');
        }
    }
    out
}

/// `const NAME:`, `static [mut] NAME:` or `const {` in `line`.
fn declares_const(line: &str) -> bool {
    let tokens = tokens(line);
    tokens.windows(2).any(|w| w == ["const", "{"])
        || tokens.windows(3).any(|w| match w {
            ["const" | "static" | "mut", name, ":"] => *name != "mut" && name.chars().all(is_word),
            _ => false,
        })
}

/// Words and single punctuation characters of `line`.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut word: Option<usize> = None;
    for (i, c) in line.char_indices() {
        match (is_word(c), word) {
            (true, None) => word = Some(i),
            (true, Some(_)) => {}
            (false, start) => {
                if let Some(start) = start {
                    out.push(&line[start..i]);
                }
                word = None;
                if !c.is_whitespace() {
                    out.push(&line[i..i + c.len_utf8()]);
                }
            }
        }
    }
    if let Some(start) = word {
        out.push(&line[start..]);
    }
    out
}

fn is_const_fn(node: Node, src: &str) -> bool {
    let mut cursor = node.walk();
    let m = node.children(&mut cursor).find(|c| c.kind() == "function_modifiers");
    m.is_some_and(|m| src[m.byte_range()].split_whitespace().any(|w| w == "const"))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !is_word(c)).filter(|w| !w.is_empty()).map(str::to_string).collect()
}

/// The names of the `const fn`s that stay `const`: words of a const context, closed under
/// the bodies of the `const fn`s so kept (a kept one may call only kept ones).
pub fn kept_const<'a>(files: impl IntoIterator<Item = &'a ConstUses>) -> HashSet<String> {
    let mut kept: HashSet<String> = HashSet::new();
    let mut bodies: BTreeMap<&str, Vec<&BTreeSet<String>>> = BTreeMap::new();
    for uses in files {
        kept.extend(uses.words.iter().cloned());
        for (name, body) in &uses.const_fns {
            bodies.entry(name).or_default().push(body);
        }
    }
    let mut todo: Vec<&str> = bodies.keys().copied().filter(|n| kept.contains(*n)).collect();
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name) {
            continue;
        }
        for body in bodies.get(name).into_iter().flatten() {
            for w in body.iter() {
                kept.insert(w.clone());
                if let Some((n, _)) = bodies.get_key_value(w.as_str()) {
                    todo.push(n);
                }
            }
        }
    }
    // Only the names of `const fn`s matter; the other words are dropped.
    kept.retain(|w| bodies.contains_key(w.as_str()));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rust::trace::probes::new_parser;

    const SRC: &str = r#"
pub struct Buf { n: usize }
impl Buf {
    pub const fn new() -> Buf { Buf { n: zero() } }
    const fn cap() -> usize { 4 }
    pub const fn remaining(&self) -> usize { Self::cap() - self.n }
    pub const fn lonely(&self) -> usize { self.n }
    const MAX: usize = Self::cap();
}
const fn zero() -> usize { 0 }
static EMPTY: Buf = Buf::new();
pub const fn in_array() -> usize { 2 }
pub const fn in_doc() -> usize { 3 }
type Arr = [u8; in_array()];
/// ```
/// const X: usize = in_doc();
/// ```
pub fn documented() {}
pub const fn in_macro() -> usize { 5 }
thread_local! { static T: usize = const { in_macro() }; }
pub const fn counted() -> usize { 6 }
fn f() { assert_eq!(counted(), 6); }
"#;

    fn kept() -> BTreeSet<String> {
        let uses = const_uses(&mut new_parser(), SRC).unwrap();
        kept_const([&uses]).into_iter().collect()
    }

    #[test]
    fn const_fns_called_from_const_contexts_stay_and_so_do_their_callees() {
        let kept = kept();
        // `new` from a static, `zero` from `new`'s body, `cap` from an associated const,
        // `in_array` from an array length, `in_doc` from a doctest, `in_macro` from a macro.
        for name in ["new", "zero", "cap", "in_array", "in_doc", "in_macro"] {
            assert!(kept.contains(name), "{name} should stay const: {kept:?}");
        }
    }

    #[test]
    fn const_fns_only_called_at_run_time_lose_const() {
        let kept = kept();
        // `remaining` calls the kept `cap` (a plain fn may call a const fn); `counted` is
        // called in an ordinary macro invocation.
        for name in ["remaining", "lonely", "counted"] {
            assert!(!kept.contains(name), "{name} should be probed: {kept:?}");
        }
    }

    #[test]
    fn comments_count_only_the_items_a_doctest_declares() {
        assert!(declares_const("/// const X: usize = f();"));
        assert!(declares_const("/// static mut Y: u8 = g();"));
        assert!(declares_const("/// let a = const { h() };"));
        assert!(!declares_const("/// A `const fn` that stays `const` (a static initialiser)."));
        assert_eq!(
            comment_items("/// prose\n/// const X: T =\n///     T::new();\n/// x.f();\n"),
            "/// const X: T =\n///     T::new();\n"
        );
    }

    #[test]
    fn the_kept_set_spans_files() {
        let a = const_uses(&mut new_parser(), "pub const fn limit() -> u32 { 7 }\n").unwrap();
        let b = const_uses(&mut new_parser(), "const L: u32 = crate::limit();\n").unwrap();
        assert!(kept_const([&a]).is_empty());
        assert_eq!(kept_const([&a, &b]), HashSet::from(["limit".to_string()]));
    }
}
