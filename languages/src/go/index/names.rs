//! The names a Go file uses and binds, from one cursor walk over its tree: bare names,
//! `x.Name` selectors (and whether they are called), `pkg.Type`, local bindings
//! (parameters, `:=`, `var`, `const`, range variables, type parameters, local types) and
//! locals whose type is written next to them (for `x.Method`).
//!
//! A hand-written walk rather than a query: it visits every node once without query-state
//! bookkeeping, which keeps indexing close to the bare parse speed (see `synth::speed`).

use tree_sitter::{Node, Tree};

use super::parse::{TypeRef, type_ref};

/// One fact about a name, at a byte offset (which decides the definition it belongs to).
#[derive(Debug)]
pub(super) enum Fact<'a> {
    Use(&'a str),
    Local(&'a str),
    /// Operand (when an identifier), member, called.
    Selector(Option<&'a str>, &'a str, bool),
    Qualified(&'a str, &'a str),
    Typed(&'a str, TypeRef),
}

fn text<'a>(n: Node, src: &'a str) -> &'a str {
    src.get(n.byte_range()).unwrap_or("")
}

/// Identifier children of an `expression_list` (the left side of `:=` or `range`).
fn list_identifiers<'t>(list: Node<'t>) -> impl Iterator<Item = Node<'t>> {
    let mut c = list.walk();
    let v: Vec<Node<'t>> = list.named_children(&mut c).filter(|n| n.kind() == "identifier").collect();
    v.into_iter()
}

/// Facts of one node whose kind binds or selects names (the identifiers themselves are
/// reported by the walk).
fn node_facts<'a>(n: Node, parent_kind: &str, field: Option<&str>, src: &'a str, emit: &mut impl FnMut(Fact<'a>, Node)) {
    match n.kind() {
        "selector_expression" => {
            let (Some(op), Some(member)) = (n.child_by_field_name("operand"), n.child_by_field_name("field")) else { return };
            let called = parent_kind == "call_expression" && field == Some("function");
            let op_name = (op.kind() == "identifier").then(|| text(op, src));
            emit(Fact::Selector(op_name, text(member, src), called), member);
        }
        "qualified_type" => {
            if let (Some(p), Some(name)) = (n.child_by_field_name("package"), n.child_by_field_name("name")) {
                emit(Fact::Qualified(text(p, src), text(name, src)), p);
            }
        }
        "parameter_declaration" | "variadic_parameter_declaration" | "var_spec" | "const_spec" => {
            let ty = n.child_by_field_name("type").and_then(|t| type_ref(t, src));
            let mut c = n.walk();
            for name in n.children_by_field_name("name", &mut c) {
                let s = text(name, src);
                if let Some(t) = ty.as_ref().filter(|_| n.kind() != "variadic_parameter_declaration") {
                    emit(Fact::Typed(s, t.clone()), name);
                }
                emit(Fact::Local(s), name);
            }
        }
        "type_parameter_declaration" => {
            let mut c = n.walk();
            for name in n.children_by_field_name("name", &mut c) {
                emit(Fact::Local(text(name, src)), name);
            }
        }
        "type_spec" | "type_alias" => {
            if let Some(name) = n.child_by_field_name("name") {
                emit(Fact::Local(text(name, src)), name);
            }
        }
        "short_var_declaration" | "range_clause" => {
            let Some(left) = n.child_by_field_name("left") else { return };
            let mut first = true;
            for id in list_identifiers(left) {
                let s = text(id, src);
                if first && n.kind() == "short_var_declaration" {
                    // `x := T{…}` / `x := &T{…}`: the type is written on the right.
                    let lit = n.child_by_field_name("right").and_then(|r| r.named_child(0)).and_then(|v| match v.kind() {
                        "composite_literal" => Some(v),
                        "unary_expression" => v.child_by_field_name("operand").filter(|o| o.kind() == "composite_literal"),
                        _ => None,
                    });
                    if let Some(t) = lit.and_then(|l| l.child_by_field_name("type")).and_then(|t| type_ref(t, src)) {
                        emit(Fact::Typed(s, t), id);
                    }
                }
                first = false;
                emit(Fact::Local(s), id);
            }
        }
        _ => {}
    }
}

/// Walk the whole tree once, calling `emit` with every fact and the node it is about.
pub(super) fn walk<'a>(tree: &Tree, src: &'a str, mut emit: impl FnMut(Fact<'a>, Node)) {
    let mut cursor = tree.walk();
    // Kinds of the ancestors of the cursor's node.
    let mut kinds: Vec<&'static str> = Vec::new();
    loop {
        let n = cursor.node();
        let kind = n.kind();
        match kind {
            "identifier" | "type_identifier" => emit(Fact::Use(text(n, src)), n),
            "import_declaration" | "package_clause" | "comment" | "interpreted_string_literal" | "raw_string_literal" => {}
            _ => node_facts(n, kinds.last().copied().unwrap_or(""), cursor.field_name(), src, &mut emit),
        }
        let descend = !matches!(kind, "import_declaration" | "package_clause" | "comment" | "interpreted_string_literal" | "raw_string_literal");
        if descend && cursor.goto_first_child() {
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
