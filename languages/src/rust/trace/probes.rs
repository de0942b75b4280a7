//! Where the Rust probes go in one file, found with tree-sitter-rust; every insertion is on
//! the line of a body's opening brace (or, for an expression closure in a `static`
//! initialiser, around the expression on its own lines), so no line moves.
//!
//! Probed: every `fn` item with a body that the index lists (functions, methods, trait
//! default methods, nested functions) and every closure with a block body written inside
//! one (with the number of that definition). Not probed, on purpose:
//! - `const fn`s that const contexts of the tree may call ([`super::constfns`]: a call is not
//!   allowed in a const context), closures inside them or inside `const` items; every other
//!   `const fn` loses its `const` (the keyword blanked with spaces, so no byte moves) and is
//!   probed like any function;
//! - anything inside a macro: `macro_rules!` bodies and macro invocations' token trees
//!   (`lazy_static! { … }`, `quickcheck! { fn … }`) are token trees, not items, to
//!   tree-sitter and to rustc before expansion; functions a macro generates carry no probe;
//! - closures with an expression body (`|s| s.area()`): the shadow stack already names the
//!   function they run in as the caller when they are called where they are written;
//! - closures in test code, and `async fn`s in test code (no frame can cross an `.await`).
//!
//! `async fn`s get a hit-only probe; closures in a `static` initialiser an `import` frame.

use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Parser};

/// What a probe at one body records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `enter(n)`: hit, caller, frame.
    Enter(u32),
    /// `frame(n)`: test code names callers.
    Frame(u32),
    /// `hit(n)`: an `async fn`.
    Hit(u32),
    /// `import(file)`: a closure in a `static` initialiser.
    Import(u32),
}

impl Probe {
    fn text(self) -> String {
        match self {
            Probe::Enter(n) => format!(" let __carve_g = carve_probe::enter({n});"),
            Probe::Frame(n) => format!(" let __carve_g = carve_probe::frame({n});"),
            Probe::Hit(n) => format!(" carve_probe::hit({n});"),
            Probe::Import(f) => format!(" let __carve_g = carve_probe::import({f});"),
        }
    }
}

/// What the probing of one file needs: node numbers by body start byte, and whether each
/// is test code.
pub struct FilePlan<'a> {
    /// Body start byte -> (node number, test code).
    pub bodies: &'a HashMap<usize, (u32, bool)>,
    /// This file's number in the table (for `<module>PATH`).
    pub file: u32,
    /// Names of the `const fn`s that stay `const` (see [`super::constfns::kept_const`]).
    pub keep_const: &'a HashSet<String>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Probed {
    /// The probed text; `None` when no probe went in.
    pub text: Option<String>,
    pub probes: usize,
    /// `const fn`s left alone.
    pub const_fns: usize,
    /// `const fn`s made plain functions and probed.
    pub unconsted: usize,
}

pub fn new_parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_rust::LANGUAGE.into()).expect("the Rust grammar loads");
    p
}

/// Probes one file; `Err(line)` on a syntax error (the file is left as it is).
pub fn probe_file(parser: &mut Parser, src: &str, plan: &FilePlan) -> Result<Probed, usize> {
    let tree = parser.parse(src, None).ok_or(0usize)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(first_error(root).map(|n| n.start_position().row + 1).unwrap_or(0));
    }
    let mut inserts: Vec<(usize, String)> = Vec::new();
    let mut blanks: Vec<(usize, usize)> = Vec::new();
    let mut out = Probed::default();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            // Token trees: macro bodies and invocations are not probed.
            "macro_definition" | "macro_invocation" | "token_tree" | "attribute_item" | "inner_attribute_item" => {
                continue;
            }
            "function_item" => {
                if let Some((pos, probe)) = function_probe(node, src, plan, &mut out) {
                    if let Some(kw) = const_keyword(node).filter(|_| is_const(node, src)) {
                        // Blanked, not removed: no byte of the file moves.
                        blanks.push(kw);
                        out.unconsted += 1;
                    }
                    inserts.push((pos, probe.text()));
                }
            }
            "closure_expression" => {
                closure_probe(node, src, plan, &mut inserts);
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
    out.probes = inserts.len();
    if inserts.is_empty() {
        return Ok(out);
    }
    // Edits: (position, bytes replaced, text). A blanked `const` replaces its five bytes with
    // five spaces, so no byte moves; a probe replaces none.
    let mut edits: Vec<(usize, usize, String)> = inserts.into_iter().map(|(pos, s)| (pos, 0, s)).collect();
    edits.extend(blanks.into_iter().map(|(start, end)| (start, end - start, " ".repeat(end - start))));
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::with_capacity(src.len() + edits.len() * 48);
    let mut at = 0;
    for (pos, replaced, s) in edits {
        text.push_str(&src[at..pos]);
        text.push_str(&s);
        at = pos + replaced;
    }
    text.push_str(&src[at..]);
    out.text = Some(text);
    Ok(out)
}

fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    children.into_iter().filter(|c| c.has_error()).find_map(first_error)
}

/// The `const` keyword among a function's modifiers (its byte range).
fn const_keyword(node: Node) -> Option<(usize, usize)> {
    let mut cursor = node.walk();
    let m = node.children(&mut cursor).find(|c| c.kind() == "function_modifiers")?;
    let mut cursor = m.walk();
    let kw = m.children(&mut cursor).find(|c| c.kind() == "const");
    kw.map(|k| (k.start_byte(), k.end_byte()))
}

/// A function that is `const` (its modifiers say so).
fn is_const(node: Node, src: &str) -> bool {
    modifiers(node, src).0
}

/// A `const fn` that stays one: const contexts of the tree may call it.
fn kept_const(node: Node, src: &str, plan: &FilePlan) -> bool {
    is_const(node, src)
        && node.child_by_field_name("name").is_none_or(|n| plan.keep_const.contains(&src[n.byte_range()]))
}

/// `const`, `async` among a function's modifiers.
fn modifiers(node: Node, src: &str) -> (bool, bool) {
    let mut cursor = node.walk();
    let m = node.children(&mut cursor).find(|c| c.kind() == "function_modifiers");
    let text = m.map(|m| &src[m.byte_range()]).unwrap_or("");
    let words: Vec<&str> = text.split_whitespace().collect();
    (words.contains(&"const"), words.contains(&"async"))
}

/// The byte after a block's `{` and its leading inner attributes (`#![allow(…)]`).
fn after_open(block: Node) -> usize {
    let mut pos = block.start_byte() + 1;
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        if child.kind() == "inner_attribute_item" {
            pos = child.end_byte();
        } else if child.kind() != "line_comment" && child.kind() != "block_comment" {
            break;
        }
    }
    pos
}

fn function_probe(node: Node, src: &str, plan: &FilePlan, out: &mut Probed) -> Option<(usize, Probe)> {
    let body = node.child_by_field_name("body")?;
    let (_, is_async) = modifiers(node, src);
    if kept_const(node, src, plan) {
        out.const_fns += 1;
        return None;
    }
    if in_const_context(node, src, plan) {
        return None;
    }
    let (n, test) = *plan.bodies.get(&body.start_byte())?;
    let probe = match (test, is_async) {
        (true, true) => return None,
        (true, false) => Probe::Frame(n),
        (false, true) => Probe::Hit(n),
        (false, false) => Probe::Enter(n),
    };
    Some((after_open(body), probe))
}

/// Inside a kept `const fn` or a `const` item (above `node`).
fn in_const_context(node: Node, src: &str, plan: &FilePlan) -> bool {
    let mut p = node.parent();
    while let Some(n) = p {
        match n.kind() {
            "const_item" => return true,
            "function_item" if kept_const(n, src, plan) => return true,
            _ => {}
        }
        p = n.parent();
    }
    false
}

fn closure_probe(node: Node, src: &str, plan: &FilePlan, inserts: &mut Vec<(usize, String)>) {
    let Some(body) = node.child_by_field_name("body") else { return };
    // `async` closures: no frame may cross an `.await`.
    if src[node.byte_range()].starts_with("async") {
        return;
    }
    // The nearest enclosing function or static.
    let mut p = node.parent();
    while let Some(n) = p {
        match n.kind() {
            "const_item" | "macro_invocation" | "token_tree" => return,
            "static_item" => {
                let probe = Probe::Import(plan.file).text();
                if body.kind() == "block" {
                    inserts.push((after_open(body), probe));
                } else {
                    inserts.push((body.start_byte(), format!("{{{probe} ")));
                    inserts.push((body.end_byte(), " }".to_string()));
                }
                return;
            }
            "function_item" => {
                if body.kind() != "block" || kept_const(n, src, plan) {
                    return;
                }
                let Some(fbody) = n.child_by_field_name("body") else { return };
                match plan.bodies.get(&fbody.start_byte()) {
                    Some(&(num, false)) => inserts.push((after_open(body), Probe::Enter(num).text())),
                    _ => {}
                }
                return;
            }
            _ => {}
        }
        p = n.parent();
    }
}
