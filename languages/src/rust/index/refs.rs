//! The paths, method calls and macro calls an item names: one iterative walk over its
//! subtree, classifying nodes by kind id (a table built once from the grammar), with
//! names borrowed from the source until they are deduplicated.

use std::sync::LazyLock;

use tree_sitter::Node;

use super::parse::{RawRef, path_segments, text, use_leaves};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Other,
    /// Names nothing (literals, comments, lifetimes, field names, primitive types).
    Skip,
    Ident,
    /// `self`, `crate`, `super` on their own.
    Keyword,
    Use,
    Scoped,
    ScopedUseList,
    Call,
    TokenTree,
    Macro,
}

static CLASSES: LazyLock<Vec<Class>> = LazyLock::new(|| {
    let language = crate::Language::Rust.grammar();
    (0..language.node_kind_count() as u16)
        .map(|id| match language.node_kind_for_id(id).unwrap_or("") {
            "field_identifier"
            | "lifetime"
            | "string_literal"
            | "raw_string_literal"
            | "char_literal"
            | "line_comment"
            | "block_comment"
            | "metavariable"
            | "shorthand_field_identifier"
            | "primitive_type" => Class::Skip,
            "identifier" | "type_identifier" if language.node_kind_is_named(id) => Class::Ident,
            "self" | "crate" | "super" => Class::Keyword,
            "use_declaration" => Class::Use,
            "scoped_identifier" | "scoped_type_identifier" => Class::Scoped,
            "scoped_use_list" => Class::ScopedUseList,
            "call_expression" => Class::Call,
            "token_tree" => Class::TokenTree,
            "macro_invocation" => Class::Macro,
            _ => Class::Other,
        })
        .collect()
});

/// Field ids looked at while walking.
struct Fields {
    macro_: u16,
    path: u16,
}

static FIELDS: LazyLock<Fields> = LazyLock::new(|| {
    let language = crate::Language::Rust.grammar();
    let id = |name: &str| language.field_id_for_name(name).map(|f| f.get()).unwrap_or(u16::MAX);
    Fields { macro_: id("macro"), path: id("path") }
});

fn class(node: Node) -> Class {
    CLASSES.get(node.kind_id() as usize).copied().unwrap_or(Class::Other)
}

/// A reference with borrowed names, while collecting.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Tmp<'s> {
    Name(&'s str),
    Owned(RawRef),
    Method(&'s str),
    SelfMethod(&'s str),
}

impl Tmp<'_> {
    fn owned(self) -> RawRef {
        match self {
            Tmp::Name(n) => RawRef::Path(vec![n.to_string()]),
            Tmp::Owned(r) => r,
            Tmp::Method(n) => RawRef::Method(n.to_string()),
            Tmp::SelfMethod(n) => RawRef::SelfMethod(n.to_string()),
        }
    }
}

/// Every path, method call and macro named under `root`, appended to `out` (deduplicated
/// within this call). One tree-cursor walk; each level's class is kept on a small stack
/// (`Node::parent` would search from the root).
pub(super) fn collect_refs(root: Node, src: &str, out: &mut Vec<RawRef>) {
    let mut found: Vec<Tmp> = Vec::new();
    let mut cursor = root.walk();
    let mut parents: Vec<Class> = Vec::new();
    loop {
        let node = cursor.node();
        let class = class(node);
        let parent = parents.last().copied().unwrap_or(Class::Other);
        // Field names matter only under a macro call or a path; reading them costs.
        let in_path = matches!(parent, Class::Scoped | Class::ScopedUseList);
        let field = if in_path || parent == Class::Macro { cursor.field_id().map(|f| f.get()) } else { None };
        let descend = match class {
            _ if parent == Class::Macro && field == Some(FIELDS.macro_) => false,
            Class::Skip | Class::Keyword => false,
            Class::Ident => {
                if !in_path {
                    found.push(Tmp::Name(text(node, src)));
                }
                false
            }
            Class::Use => {
                // A `use` inside a body: what it names is named by the enclosing item.
                let mut leaves = Vec::new();
                if let Some(arg) = node.child_by_field_name("argument") {
                    use_leaves(arg, src, &[], &mut leaves);
                }
                found.extend(leaves.into_iter().filter(|l| !l.glob).map(|l| Tmp::Owned(RawRef::Path(l.path))));
                false
            }
            Class::Scoped => {
                if !(in_path && field == Some(FIELDS.path)) {
                    found.push(Tmp::Owned(RawRef::Path(path_segments(node, src))));
                }
                true
            }
            Class::Call => {
                let mut f = node.child_by_field_name("function");
                if let Some(g) = f.filter(|g| g.kind() == "generic_function") {
                    f = g.child_by_field_name("function");
                }
                if let Some(fe) = f.filter(|f| f.kind() == "field_expression")
                    && let Some(field) = fe.child_by_field_name("field")
                {
                    let on_self = fe.child_by_field_name("value").is_some_and(|v| v.kind() == "self");
                    let name = text(field, src);
                    found.push(if on_self { Tmp::SelfMethod(name) } else { Tmp::Method(name) });
                }
                true
            }
            Class::TokenTree => {
                token_tree_refs(node, src, &mut found);
                false
            }
            Class::Macro => {
                if let Some(m) = node.child_by_field_name("macro") {
                    found.push(Tmp::Owned(RawRef::Macro(path_segments(m, src))));
                }
                true
            }
            Class::ScopedUseList | Class::Other => true,
        };
        if descend && cursor.goto_first_child() {
            parents.push(class);
            continue;
        }
        // Next sibling, or the next sibling of the nearest ancestor that has one.
        loop {
            if parents.is_empty() {
                found.sort_unstable();
                found.dedup();
                out.extend(found.into_iter().map(Tmp::owned));
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            cursor.goto_parent();
            parents.pop();
        }
    }
}

/// Paths, method calls and macro calls inside a macro's token tree, where tree-sitter
/// gives plain tokens: `a :: b` is a path, `. name` a method call, `m !` a macro call.
/// Nested token trees are read recursively.
fn token_tree_refs<'s>(tree: Node, src: &'s str, out: &mut Vec<Tmp<'s>>) {
    let mut c = tree.walk();
    let tokens: Vec<Node> = tree.children(&mut c).collect();
    let is_name = |n: &Node| matches!(class(*n), Class::Ident | Class::Keyword);
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if class(t) == Class::TokenTree {
            token_tree_refs(t, src, out);
            i += 1;
            continue;
        }
        if !is_name(&t) {
            i += 1;
            continue;
        }
        if i > 0 && tokens[i - 1].kind() == "." {
            let on_self = i > 1 && tokens[i - 2].kind() == "self";
            let name = text(t, src);
            out.push(if on_self { Tmp::SelfMethod(name) } else { Tmp::Method(name) });
            i += 1;
            continue;
        }
        let start = i;
        while i + 2 < tokens.len() && tokens[i + 1].kind() == "::" && is_name(&tokens[i + 2]) {
            i += 2;
        }
        let segs =
            || -> Vec<String> { tokens[start..=i].iter().step_by(2).map(|n| text(*n, src).to_string()).collect() };
        if tokens.get(i + 1).is_some_and(|n| n.kind() == "!") {
            out.push(Tmp::Owned(RawRef::Macro(segs())));
        } else if i > start {
            out.push(Tmp::Owned(RawRef::Path(segs())));
        } else if class(t) == Class::Ident {
            out.push(Tmp::Name(text(t, src)));
        }
        i += 1;
    }
}
