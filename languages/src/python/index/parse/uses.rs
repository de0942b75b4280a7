//! Second half of the first pass: the name uses and local bindings of one file, attributed
//! to the scope that evaluates them, and the discarded and tested call statements the masking
//! deletes with the definitions they call.

use super::*;

/// Whether `node` (a use at module level, `chain` its text) is the target `f.attr` of a
/// module-level assignment statement `f.attr = …` where `f` is a top-level definition of
/// the file.
fn sets_attribute_of_definition(node: Node, chain: &str, defs: &[RawDef]) -> bool {
    let Some((owner, _)) = chain.split_once('.') else { return false };
    node.kind() == "attribute"
        && node.child_by_field_name("object").is_some_and(|o| o.kind() == "identifier")
        && node.parent().is_some_and(|a| {
            a.kind() == "assignment"
                && a.child_by_field_name("left").is_some_and(|l| l.id() == node.id())
                && crate::python::edit::is_module_statement(a)
        })
        && defs.iter().any(|d| d.parent.is_none() && d.def.name == owner)
}

/// Name uses and local bindings (references.scm), attributed to definitions by position.
pub(super) fn collect_uses(
    found: Collected,
    src: &str,
    defs: &mut [RawDef],
    module_refs: &mut Vec<RawRef>,
    value_bindings: &mut Vec<RawBinding>,
) {
    let Collected { mut uses, not_uses, mut ranges, bindings, globals, .. } = found;
    ranges.sort_unstable();
    let in_range = |pos: usize| {
        let after = ranges.partition_point(|r| r.0 <= pos);
        after > 0 && pos < ranges[after - 1].1
    };

    for (pos, name, is_parameter) in bindings {
        let scope = if is_parameter { innermost(defs, pos) } else { scope_at(defs, pos) };
        if let Some(d) = scope {
            defs[d].locals.insert(name);
        }
    }
    for (pos, name) in globals {
        if let Some(d) = scope_at(defs, pos) {
            defs[d].locals.remove(&name);
        }
    }

    uses.sort_by_key(|(n, _)| (n.start_byte(), n.id()));
    uses.dedup_by_key(|(n, _)| n.id());
    for (node, kind) in uses {
        let pos = node.start_byte();
        if not_uses.contains(&node.id()) || in_range(pos) {
            continue;
        }
        // Non-maximal chains and identifiers inside chains are `@ignore`d by the query.
        let chain = match kind {
            UseKind::Name => signature::text(node, src).into(),
            UseKind::Chain => match attribute_chain(node, src) {
                Some(chain) => chain,
                None => continue,
            },
            UseKind::Dotted => {
                let mut c = node.walk();
                let names: Vec<&str> = node
                    .named_children(&mut c)
                    .filter(|n| n.kind_id() == QUERIES.identifier)
                    .map(|n| signature::text(n, src))
                    .collect();
                names.join(".").into()
            }
        };
        let raw = |chain, scope| RawRef { chain, scope, pos, line: 0, call_statement: None };
        let line = node.start_position().row + 1;
        match innermost(defs, pos) {
            // `f.__doc__ = …` belongs to `f`: the mask deletes it with `f`, so it keeps nothing.
            None if sets_attribute_of_definition(node, &chain, defs) => {}
            None => match value_binding_at(node, src, None) {
                Some(b) => binding_entry(value_bindings, b).refs.push(RawRef { line, ..raw(chain, None) }),
                None => module_refs.push(RawRef { line, ..raw(chain, None) }),
            },
            Some(d) if defs[d].in_body(pos) => {
                if defs[d].is_class()
                    && let Some(b) = value_binding_at(node, src, Some(d))
                {
                    binding_entry(value_bindings, b).refs.push(RawRef { line, ..raw(chain, Some(d)) });
                } else if defs[d].is_class() {
                    defs[d].load_refs.push((raw(chain, Some(d)), LoadRole::ClassBody));
                } else {
                    let call_statement = discarded_call_statement(node)
                        .map(|s| (span(s), false))
                        .or_else(|| tested_call_statements(node, src).map(|(a, b)| (span_from_to(a, b), true)));
                    defs[d].body_refs.push(RawRef { call_statement, ..raw(chain, Some(d)) });
                }
            }
            Some(d) => {
                let role = if pos < defs[d].keyword_start {
                    LoadRole::Decorator
                } else if defs[d].is_class() {
                    LoadRole::BaseClass
                } else {
                    LoadRole::DefaultOrAnnotation
                };
                let enclosing = defs[d].parent;
                // The enclosing function evaluates this header when it runs.
                if let Some(e) = enclosing.filter(|&e| !defs[e].is_class()) {
                    defs[e].body_refs.push(raw(chain.clone(), Some(e)));
                }
                defs[d].load_refs.push((raw(chain, enclosing), role));
            }
        }
    }
}

/// The expression statement whose whole value is a call of `callee` (`f(x)`, `a.b(x)`,
/// `await a.b(x)`): its value is discarded, so deleting the statement leaves the code around
/// it valid.
fn discarded_call_statement(callee: Node) -> Option<Node> {
    let call = callee.parent().filter(|c| c.kind() == "call")?;
    if call.child_by_field_name("function").is_none_or(|f| f.id() != callee.id()) {
        return None;
    }
    let mut value = call;
    if let Some(a) = value.parent().filter(|p| p.kind() == "await") {
        value = a;
    }
    value.parent().filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)
}

/// The statements `v = <call of callee>` and, right after it, `if v: …` (or `if not v`, `if v is
/// None`, `if v is not None`; no `elif`/`else`), when the value `v` is used nowhere else in the
/// function: the call's value only decides whether the `if` runs, so deleting both leaves the
/// code around them valid, and changes what it does only where the call gave a value that
/// ran the `if` (validation decides whether any pass-to-pass test relied on that).
fn tested_call_statements<'t>(callee: Node<'t>, src: &str) -> Option<(Node<'t>, Node<'t>)> {
    let call = callee.parent().filter(|c| c.kind() == "call")?;
    if call.child_by_field_name("function").is_none_or(|f| f.id() != callee.id()) {
        return None;
    }
    let assign = call.parent().filter(|a| a.kind() == "assignment")?;
    if assign.child_by_field_name("right").is_none_or(|r| r.id() != call.id())
        || assign.child_by_field_name("type").is_some()
    {
        return None;
    }
    let left = assign.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
    let name = signature::text(left, src);
    let first = assign.parent().filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)?;
    let mut next = first.next_named_sibling();
    while next.is_some_and(|n| n.kind() == "comment") {
        next = next.and_then(|n| n.next_named_sibling());
    }
    let guard = next.filter(|n| n.kind() == "if_statement")?;
    if guard.child_by_field_name("alternative").is_some() {
        return None;
    }
    let cond = guard.child_by_field_name("condition")?;
    let tests_only_v = match cond.kind() {
        "identifier" => signature::text(cond, src) == name,
        "not_operator" => cond
            .child_by_field_name("argument")
            .is_some_and(|a| a.kind() == "identifier" && signature::text(a, src) == name),
        "comparison_operator" => {
            let parts: Vec<Node> = {
                let mut c = cond.walk();
                cond.named_children(&mut c).collect()
            };
            parts.len() == 2
                && parts[0].kind() == "identifier"
                && signature::text(parts[0], src) == name
                && parts[1].kind() == "none"
        }
        _ => false,
    };
    if !tests_only_v {
        return None;
    }
    // The function whose body holds them: no other use of `v` there.
    let mut func = first.parent()?;
    while !matches!(func.kind(), "function_definition" | "module" | "class_definition") {
        func = func.parent()?;
    }
    if func.kind() != "function_definition" {
        return None;
    }
    let (start, end) = (first.start_byte(), guard.end_byte());
    let mut stack = vec![func];
    while let Some(n) = stack.pop() {
        if n.end_byte() <= start || n.start_byte() >= end {
            if n.kind() == "identifier" && signature::text(n, src) == name {
                return None;
            }
        } else if n.kind() == "identifier" {
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    Some((first, guard))
}

/// The span from the start of `a` to the end of `b`.
fn span_from_to(a: Node, b: Node) -> Span {
    let (s, e) = (span(a), span(b));
    Span { end_byte: e.end_byte, end_line: e.end_line, ..s }
}

/// The binding (found before, or new) that `b` describes.
fn binding_entry(bindings: &mut Vec<RawBinding>, b: RawBinding) -> &mut RawBinding {
    match bindings.iter().position(|x| x.span == b.span) {
        Some(i) => &mut bindings[i],
        None => {
            bindings.push(b);
            bindings.last_mut().expect("just pushed")
        }
    }
}

/// The value binding holding the use `node`, directly at module level (`class: None`) or
/// directly in the body of class `class`: a statement `name = value` (one plain, non-dunder
/// target; an annotation is not part of the value) with the use in `value`, or, when `value`
/// is a dict, list, tuple or set literal, the entry of it that holds the use.
fn value_binding_at(node: Node, src: &str, class: Option<usize>) -> Option<RawBinding> {
    let mut cur = node.parent()?;
    while cur.kind() != "assignment" {
        if matches!(cur.kind(), "block" | "module" | "expression_statement") {
            return None;
        }
        cur = cur.parent()?;
    }
    let assign = cur;
    let value = assign.child_by_field_name("right")?;
    let left = assign.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
    let name = signature::text(left, src);
    let stmt = assign.parent().filter(|s| s.kind() == "expression_statement" && s.named_child_count() == 1)?;
    let container = stmt.parent()?;
    let placed = match class {
        None => container.kind() == "module",
        Some(_) => container.kind() == "block" && container.parent().is_some_and(|c| c.kind() == "class_definition"),
    };
    let dunder = name.starts_with("__") && name.ends_with("__");
    if !placed || dunder || !(value.start_byte() <= node.start_byte() && node.end_byte() <= value.end_byte()) {
        return None;
    }
    // The element of the literal on the path from the use up to `value`.
    let mut elem = node;
    while elem.id() != value.id() && elem.parent().is_some_and(|p| p.id() != value.id()) {
        elem = elem.parent()?;
    }
    let literal = matches!(value.kind(), "dictionary" | "list" | "tuple" | "set");
    let entry = literal && elem.id() != value.id() && elem.is_named() && elem.kind() != "comment";
    let target = if entry { elem } else { stmt };
    let constructs = (!entry && value.kind() == "call")
        .then(|| value.child_by_field_name("function"))
        .flatten()
        .and_then(|callee| attribute_chain(callee, src));
    Some(RawBinding {
        span: span(target),
        statement: (stmt.start_byte(), stmt.end_byte()),
        name: name.to_string(),
        entry,
        class,
        refs: Vec::new(),
        constructs,
    })
}

/// `a.b.c` as `"a.b.c"` (without whatever spacing the source has), when the chain is
/// rooted at an identifier.
fn attribute_chain(node: Node, src: &str) -> Option<Box<str>> {
    let q = &*QUERIES;
    let mut parts = Vec::new();
    let mut cur = node;
    loop {
        let kind = cur.kind_id();
        if kind == q.attribute {
            parts.push(signature::text(cur.child_by_field_id(q.attribute_field)?, src));
            cur = cur.child_by_field_id(q.object_field)?;
        } else if kind == q.identifier {
            parts.push(signature::text(cur, src));
            parts.reverse();
            return Some(parts.join(".").into());
        } else {
            return None;
        }
    }
}
