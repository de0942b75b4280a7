//! Elements of package-level composite literals that name one definition and nothing else:
//! the entry `"date": date` of `var funcs = map[string]any{…}` (Masterminds/sprig registers
//! its template functions so), the element `greet` of a `[]func(string) string{…}`, the
//! field `Fn: greet` of a struct literal, at any depth of nested literals.
//!
//! Such an element is no use that keeps what it names: the mask can delete it together with
//! the function (the map just has one entry less) and the package still builds, so it
//! becomes an entry [`ValueBinding`](crate::index::ValueBinding) of the index, not a module
//! reference. Everything else at package level stays a module reference: a use inside an
//! expression (`var x = f(3)`, `var h = http.HandlerFunc(f)`), a function literal
//! (`"hello": func() string { … }` keeps what its body names), a key naming a definition,
//! and an element without a key in a literal whose type may be a struct (`T{f, 2}`: a
//! struct literal without keys needs every field, so only slice and array literals lose
//! positional elements).

use tree_sitter::Node;

use super::kinds::{Ids, ids};
use super::parse::{Use, span_of, text};
use crate::index::Span;

/// One removable element, before its uses are attributed and resolved.
#[derive(Debug, Clone)]
pub(crate) struct RawEntry {
    /// The element: `key: value`, or a value alone.
    pub span: Span,
    /// The variable whose literal holds it.
    pub name: String,
    /// Bytes of the value: the package-level uses inside them are the entry's.
    pub value: (usize, usize),
    /// The value's uses with their 1-based line (filled by `parse::attribute_uses`).
    pub uses: Vec<(Use, usize)>,
}

/// The removable elements of the file's package-level `var` literals, in source order.
pub(super) fn literal_entries(root: Node, src: &str) -> Vec<RawEntry> {
    let k = &ids().kinds;
    let mut out = Vec::new();
    let mut c = root.walk();
    for decl in root.named_children(&mut c).filter(|n| n.kind_id() == k.var_declaration) {
        let mut specs = Vec::new();
        let mut dc = decl.walk();
        for ch in decl.named_children(&mut dc) {
            if ch.kind_id() == k.var_spec {
                specs.push(ch);
            } else if ch.kind_id() == k.var_spec_list {
                let mut lc = ch.walk();
                specs.extend(ch.named_children(&mut lc).filter(|s| s.kind_id() == k.var_spec));
            }
        }
        for spec in specs {
            spec_entries(spec, src, &mut out);
        }
    }
    out
}

/// The entries of one `var a, b = x, y` spec: each value is bound to the name at its position.
fn spec_entries(spec: Node, src: &str, out: &mut Vec<RawEntry>) {
    let Ids { kinds: k, fields: f } = ids();
    let mut c = spec.walk();
    let names: Vec<&str> = spec
        .children_by_field_id(std::num::NonZeroU16::new(f.name).expect("field ids are non-zero"), &mut c)
        .map(|n| text(n, src))
        .collect();
    let Some(values) = spec.child_by_field_id(f.value).filter(|v| v.kind_id() == k.expression_list) else { return };
    let mut vc = values.walk();
    for (i, v) in values.named_children(&mut vc).enumerate() {
        let name = names.get(i).or(names.first()).copied().unwrap_or("_");
        if let Some(lit) = composite(v) {
            literal(lit, name, src, out);
        }
    }
}

/// The composite literal of `T{…}` or `&T{…}`.
fn composite(n: Node) -> Option<Node> {
    let Ids { kinds: k, fields: f } = ids();
    if n.kind_id() == k.composite_literal {
        Some(n)
    } else if n.kind_id() == k.unary_expression {
        n.child_by_field_id(f.operand).filter(|o| o.kind_id() == k.composite_literal)
    } else {
        None
    }
}

fn literal(lit: Node, name: &str, src: &str, out: &mut Vec<RawEntry>) {
    let f = &ids().fields;
    if let Some(body) = lit.child_by_field_id(f.body) {
        elements(body, lit.child_by_field_id(f.type_), name, src, out);
    }
}

/// The entries of one `{…}` whose type is `ty` (`None`: not known, as for the elided type
/// of a nested literal inside a struct-typed one).
fn elements(body: Node, ty: Option<Node>, name: &str, src: &str, out: &mut Vec<RawEntry>) {
    let Ids { kinds: k, fields: f } = ids();
    let sequence = ty.is_some_and(|t| t.kind_id() == k.slice_type || t.kind_id() == k.array_type);
    // The type of an element whose literal leaves it out (`{a, b}` in `map[string][]F{…}`).
    let element_type = ty.and_then(|t| {
        if t.kind_id() == k.map_type {
            t.child_by_field_id(f.value)
        } else if sequence {
            t.child_by_field_id(f.element)
        } else {
            None
        }
    });
    let mut c = body.walk();
    for el in body.named_children(&mut c) {
        let (value, removable) = if el.kind_id() == k.keyed_element {
            let key = el.child_by_field_id(f.key).and_then(|key| key.named_child(0));
            (el.child_by_field_id(f.value), key.is_some_and(|key| plain_key(key)))
        } else if el.kind_id() == k.literal_element {
            (Some(el), sequence)
        } else {
            continue;
        };
        let Some(v) = value.and_then(|v| v.named_child(0)) else { continue };
        if names_one_thing(v) {
            if removable {
                out.push(RawEntry {
                    span: span_of(el),
                    name: name.to_string(),
                    value: (v.start_byte(), v.end_byte()),
                    uses: Vec::new(),
                });
            }
        } else if v.kind_id() == k.literal_value {
            elements(v, element_type, name, src, out);
        } else if let Some(lit) = composite(v) {
            literal(lit, name, src, out);
        }
    }
}

/// A key that names no definition the element's deletion could take the last use of: a
/// basic literal, or a bare name (a struct field, a constant).
fn plain_key(key: Node) -> bool {
    let k = &ids().kinds;
    [
        k.interpreted_string_literal,
        k.raw_string_literal,
        k.int_literal,
        k.float_literal,
        k.imaginary_literal,
        k.rune_literal,
        k.identifier,
    ]
    .contains(&key.kind_id())
}

/// `f`, or `pkg.F` / `T.Method`: a value that is only a name.
fn names_one_thing(v: Node) -> bool {
    let Ids { kinds: k, fields: f } = ids();
    v.kind_id() == k.identifier
        || (v.kind_id() == k.selector_expression
            && v.child_by_field_id(f.operand).is_some_and(|o| o.kind_id() == k.identifier))
}
