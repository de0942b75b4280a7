//! The names a Go file uses and binds, from one cursor walk over its tree: bare names,
//! `x.Name` selectors (and whether they are called), `pkg.Type`, local bindings
//! (parameters, `:=`, `var`, `const`, range variables, type parameters, local types) and
//! locals whose type is written next to them (for `x.Method`).
//!
//! A hand-written walk rather than a query: it visits every node once without query-state
//! bookkeeping, which keeps indexing close to the bare parse speed (see `synth::speed`).

use tree_sitter::{Node, Tree};

use super::kinds::{Ids, ids};
use super::parse::{TypeName, type_name};

/// One fact about a name, at a byte offset (which decides the definition it belongs to).
#[derive(Debug)]
pub(super) enum Fact<'a> {
    Use(&'a str),
    Local(&'a str),
    /// Operand (when an identifier), member, called.
    Selector(Option<&'a str>, &'a str, bool),
    Qualified(&'a str, &'a str),
    Typed(&'a str, TypeName<'a>),
}

fn text<'a>(n: Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

/// Facts of one node whose kind binds or selects names (the identifiers themselves are
/// reported by the walk). `called`: the node is the `function` of a call.
fn node_facts<'a>(n: Node, kind: u16, called: bool, src: &'a str, emit: &mut impl FnMut(Fact<'a>, Node)) {
    let Ids { kinds: k, fields: f } = ids();
    if kind == k.selector_expression {
        let (Some(op), Some(member)) = (n.child_by_field_id(f.operand), n.child_by_field_id(f.field)) else { return };
        let op_name = (op.kind_id() == k.identifier).then(|| text(op, src));
        emit(Fact::Selector(op_name, text(member, src), called), member);
    } else if kind == k.qualified_type {
        if let (Some(p), Some(name)) = (n.child_by_field_id(f.package), n.child_by_field_id(f.name)) {
            emit(Fact::Qualified(text(p, src), text(name, src)), p);
        }
    } else if kind == k.parameter_declaration
        || kind == k.variadic_parameter_declaration
        || kind == k.var_spec
        || kind == k.const_spec
    {
        // Children in one pass: the `name`s come before the `type`.
        let mut names: [Option<Node>; 8] = [None; 8];
        let mut extra: Vec<Node> = Vec::new();
        let mut count = 0;
        let mut ty = None;
        let mut c = n.walk();
        if c.goto_first_child() {
            loop {
                match c.field_id().map(std::num::NonZeroU16::get) {
                    Some(id) if id == f.name => {
                        if count < names.len() {
                            names[count] = Some(c.node());
                        } else {
                            extra.push(c.node());
                        }
                        count += 1;
                    }
                    Some(id) if id == f.type_ && ty.is_none() => ty = Some(c.node()),
                    _ => {}
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        let ty = ty.and_then(|t| type_name(t, src));
        for name in names.iter().flatten().chain(extra.iter()).copied() {
            let s = text(name, src);
            if let Some(t) = ty.as_ref().filter(|_| kind != k.variadic_parameter_declaration) {
                emit(Fact::Typed(s, *t), name);
            }
            emit(Fact::Local(s), name);
        }
    } else if kind == k.type_parameter_declaration {
        let mut c = n.walk();
        for name in n.children_by_field_id(field_id(f.name), &mut c) {
            emit(Fact::Local(text(name, src)), name);
        }
    } else if kind == k.type_spec || kind == k.type_alias {
        if let Some(name) = n.child_by_field_id(f.name) {
            emit(Fact::Local(text(name, src)), name);
        }
    } else if kind == k.short_var_declaration || kind == k.range_clause {
        let Some(left) = n.child_by_field_id(f.left) else { return };
        let mut first = true;
        let mut c = left.walk();
        if !c.goto_first_child() {
            return;
        }
        loop {
            let id = c.node();
            if id.kind_id() == k.identifier {
                let s = text(id, src);
                if first && kind == k.short_var_declaration {
                    // `x := T{…}` / `x := &T{…}`: the type is written on the right.
                    let lit = n.child_by_field_id(f.right).and_then(|r| r.named_child(0)).and_then(|v| {
                        let vk = v.kind_id();
                        if vk == k.composite_literal {
                            Some(v)
                        } else if vk == k.unary_expression {
                            v.child_by_field_id(f.operand).filter(|o| o.kind_id() == k.composite_literal)
                        } else {
                            None
                        }
                    });
                    if let Some(t) = lit.and_then(|l| l.child_by_field_id(f.type_)).and_then(|t| type_name(t, src)) {
                        emit(Fact::Typed(s, t), id);
                    }
                }
                first = false;
                emit(Fact::Local(s), id);
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
}

fn field_id(id: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(id).expect("field ids are non-zero")
}

/// Walk the whole tree once, calling `emit` with every fact and the node it is about.
pub(super) fn walk<'a>(tree: &Tree, src: &'a str, mut emit: impl FnMut(Fact<'a>, Node)) {
    let Ids { kinds: k, fields: f } = ids();
    let mut cursor = tree.walk();
    // Kinds of the ancestors of the cursor's node.
    let mut kinds: Vec<u16> = Vec::new();
    loop {
        let n = cursor.node();
        let kind = n.kind_id();
        let skip = kind == k.import_declaration
            || kind == k.package_clause
            || kind == k.comment
            || kind == k.interpreted_string_literal
            || kind == k.raw_string_literal;
        if kind == k.identifier || kind == k.type_identifier {
            emit(Fact::Use(text(n, src)), n);
        } else if !skip {
            let called = kind == k.selector_expression
                && kinds.last() == Some(&k.call_expression)
                && cursor.field_id().map(std::num::NonZeroU16::get) == Some(f.function);
            node_facts(n, kind, called, src, &mut emit);
        }
        if !skip && cursor.goto_first_child() {
            kinds.push(kind);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            kinds.pop();
        }
    }
}
