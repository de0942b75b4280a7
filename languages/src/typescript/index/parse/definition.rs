//! One definition the query found → a [`RawDef`]: its kind, span, signature (header text,
//! parameters, return type, decorators, heritage), JSDoc and the names it is exported
//! under; then overload signatures folded into their implementation and names qualified by
//! nesting.

use tree_sitter::Node;

use super::super::queries::{Dialect, Kinds};
use super::super::signature::{heritage, interface_members, jsdoc, parameters, string_content};
use super::family::{Family, first_non_decorator, has_token};
use super::{Cap, Found, RawDef, span_of, text};
use crate::index::{Definition, DefinitionKind, Signature};

pub(super) fn raw_def<'t>(f: &Found<'t>, src: &str, dialect: Dialect, is_test: bool, fam: &mut Family<'t>) -> RawDef {
    let k = fam.kinds;
    let node = f.node;
    let stmt_parent = fam.parent_kind(f.stmt);
    let in_class_body = stmt_parent == Some(k.class_body);
    let func = function_node(f, k);
    let body = match f.cap {
        Cap::TypeAlias | Cap::Overload | Cap::Property => None,
        _ => k.child(func, k.field_body),
    };
    let name = if f.cap == Cap::Test { string_content(f.name, src) } else { text(f.name, src).to_string() };
    // Signature: from `export`/modifiers (decorators excluded) to the body.
    let sig_start = first_non_decorator(k, f.stmt).start_byte();
    let sig_end = match f.cap {
        Cap::Interface | Cap::TypeAlias | Cap::Enum | Cap::Overload | Cap::Property => f.stmt.end_byte(),
        Cap::Test => f.name.end_byte(),
        _ => body.map_or(f.stmt.end_byte(), |b| b.start_byte()),
    };
    let sig_text = if f.cap == Cap::Test {
        name.clone()
    } else {
        src.get(sig_start..sig_end.max(sig_start)).unwrap_or("").trim().trim_end_matches(';').trim_end().to_string()
    };
    let exported_stmt = f.stmt.kind_id() == k.export_statement;
    let decorators = decorators(f, src, exported_stmt, in_class_body, fam);
    let (bases, heritage_names) =
        if matches!(f.cap, Cap::Class | Cap::Interface) { heritage(func, src) } else { Default::default() };
    let signature = signature(f.cap, func, k, src, sig_text, decorators, bases);
    let exported_as = if exported_stmt && stmt_parent == Some(k.program) {
        if has_token(f.stmt, k.default_token) { vec!["default".to_string()] } else { vec![name.clone()] }
    } else if node.kind_id() == k.assignment_expression {
        // `exports.f = …` (the query only matches `exports` / `module.exports`).
        vec![name.clone()]
    } else {
        Vec::new()
    };
    let def_line = first_non_decorator(
        k,
        match f.cap {
            Cap::Variable | Cap::Field | Cap::Test => f.stmt,
            _ => node,
        },
    )
    .start_position()
    .row + 1;
    let doc_anchor = if in_class_body { f.start } else { f.stmt };
    let doc_prev = fam.prev_sibling(doc_anchor);
    RawDef {
        def: Definition {
            id: String::new(),
            language: dialect.language(),
            path: String::new(),
            qualname: String::new(),
            name,
            kind: kind_of(f.cap, in_class_body),
            span: span_of(f.start, f.stmt),
            def_line,
            body: body.map(|b| span_of(b, b)),
            signature,
            docstring: jsdoc(k, doc_anchor, doc_prev, src),
            parent: None,
            is_test,
            references: Vec::new(),
            load_references: Vec::new(),
        },
        parent: None,
        exported_as,
        refs: Vec::new(),
        heritage: heritage_names,
        member_names: if f.cap == Cap::Interface { interface_members(k, body, src) } else { Vec::new() },
        overload: f.cap == Cap::Overload,
        test_case: f.cap == Cap::Test,
        sig_start,
    }
}

/// The function node of a definition: for variables and fields their value, for a test case
/// the function passed to it.
fn function_node<'t>(f: &Found<'t>, k: &Kinds) -> Node<'t> {
    let node = f.node;
    match f.cap {
        Cap::Variable | Cap::Field => {
            k.child(node, k.field_value).or_else(|| k.child(node, k.field_right)).unwrap_or(node)
        }
        Cap::Class if node.kind_id() == k.variable_declarator => k.child(node, k.field_value).unwrap_or(node),
        Cap::Test => {
            let args = k.child(node, k.field_arguments);
            let mut c = node.walk();
            args.and_then(|a| {
                a.named_children(&mut c)
                    .find(|n| n.kind_id() == k.arrow_function || n.kind_id() == k.function_expression)
            })
            .unwrap_or(node)
        }
        _ => node,
    }
}

fn kind_of(cap: Cap, in_class_body: bool) -> DefinitionKind {
    match cap {
        Cap::Function | Cap::Variable | Cap::Test => DefinitionKind::Function,
        Cap::Overload if in_class_body => DefinitionKind::Method,
        Cap::Overload => DefinitionKind::Function,
        Cap::Method | Cap::Field => DefinitionKind::Method,
        Cap::Property => DefinitionKind::Field,
        Cap::Class => DefinitionKind::Class,
        Cap::Interface => DefinitionKind::Interface,
        Cap::TypeAlias => DefinitionKind::TypeAlias,
        Cap::Enum => DefinitionKind::Enum,
        Cap::Namespace => DefinitionKind::Module,
    }
}

/// The decorators of a definition, in source order: a class member's (siblings before it in
/// the class body), then the `export` statement's, then the node's own.
fn decorators<'t>(
    f: &Found<'t>,
    src: &str,
    exported_stmt: bool,
    in_class_body: bool,
    fam: &mut Family<'t>,
) -> Vec<String> {
    let k = fam.kinds;
    let mut decorators: Vec<String> = Vec::new();
    let mut collect_decorators = |n: Node| {
        let mut c = n.walk();
        for d in n.children(&mut c).filter(|d| d.kind_id() == k.decorator) {
            decorators.push(text(d, src).trim_start_matches('@').trim().to_string());
        }
    };
    if exported_stmt {
        collect_decorators(f.stmt);
    }
    collect_decorators(f.node);
    let mut before = Vec::new();
    if in_class_body {
        let mut prev = fam.prev_sibling(f.stmt);
        while let Some(p) = prev.filter(|p| p.kind_id() == k.decorator) {
            before.push(text(p, src).trim_start_matches('@').trim().to_string());
            prev = fam.prev_sibling(p);
        }
    }
    before.reverse();
    before.append(&mut decorators);
    before
}

/// The signature of a definition whose header reads `text`: parameters, return type and
/// `async` for function-like ones.
fn signature(
    cap: Cap,
    func: Node,
    k: &Kinds,
    src: &str,
    text_: String,
    decorators: Vec<String>,
    bases: Vec<String>,
) -> Signature {
    let is_fn =
        !matches!(cap, Cap::Class | Cap::Interface | Cap::TypeAlias | Cap::Enum | Cap::Namespace | Cap::Property);
    Signature {
        text: text_,
        parameters: if is_fn && cap != Cap::Test {
            parameters(k, k.child(func, k.field_parameters).or_else(|| k.child(func, k.field_parameter)), src)
        } else {
            Vec::new()
        },
        returns: if is_fn {
            k.child(func, k.field_return_type).map(|r| text(r, src).trim_start_matches(':').trim().to_string())
        } else {
            None
        },
        is_async: is_fn && has_token(func, k.async_token),
        decorators,
        bases,
        receiver: None,
        type_parameters: k.child(func, k.field_type_parameters).map(|t| text(t, src).to_string()),
    }
}

/// Fold overload signatures into the implementation that follows them (same parent, same
/// name): one definition whose span starts at the first signature and whose signature
/// text lists every overload, then the implementation header.
pub(super) fn merge_overloads(defs: &mut Vec<RawDef>) {
    let overload = |d: &RawDef| d.overload;
    let mut keep = vec![true; defs.len()];
    let mut i = 0;
    while i < defs.len() {
        if !overload(&defs[i]) {
            i += 1;
            continue;
        }
        // A run of signatures with the same name and parent.
        let mut j = i + 1;
        while j < defs.len()
            && defs[j].parent == defs[i].parent
            && defs[j].def.name == defs[i].def.name
            && overload(&defs[j])
        {
            j += 1;
        }
        let target = if j < defs.len()
            && defs[j].parent == defs[i].parent
            && defs[j].def.name == defs[i].def.name
            && defs[j].def.body.is_some()
        {
            j
        } else {
            // No implementation (`declare`, `.d.ts`): the first signature stands for all.
            i
        };
        let texts: Vec<String> = (i..j).map(|k| defs[k].def.signature.text.clone()).collect();
        let start = defs[i].def.span;
        let doc = defs[i].def.docstring.clone();
        let exported = defs[i].exported_as.clone();
        let t = &mut defs[target];
        let own = if target == i { None } else { Some(t.def.signature.text.clone()) };
        // Overload signatures end with `;` as written; the implementation header follows.
        t.def.signature.text = match own {
            Some(own) => format!("{};\n{own}", texts.join(";\n")),
            None => texts.join(";\n"),
        };
        t.def.span.start_byte = start.start_byte;
        t.def.span.start_line = start.start_line;
        if t.def.docstring.is_none() {
            t.def.docstring = doc;
        }
        if t.exported_as.is_empty() {
            t.exported_as = exported;
        }
        for (k, flag) in keep.iter_mut().enumerate().take(j).skip(i) {
            if k != target {
                *flag = false;
            }
        }
        i = j.max(i + 1);
    }
    if keep.iter().all(|k| *k) {
        return;
    }
    let mut remap = vec![None; defs.len()];
    let mut n = 0;
    for (k, flag) in keep.iter().enumerate() {
        if *flag {
            remap[k] = Some(n);
            n += 1;
        }
    }
    let old = std::mem::take(defs);
    for (k, mut d) in old.into_iter().enumerate() {
        if keep[k] {
            d.parent = d.parent.and_then(|p| remap[p]);
            defs.push(d);
        }
    }
}

pub(super) fn qualify(defs: &mut [RawDef]) {
    for i in 0..defs.len() {
        let q = match defs[i].parent {
            Some(p) if p < i => format!("{}.{}", defs[p].def.qualname, defs[i].def.name),
            _ => defs[i].def.name.clone(),
        };
        defs[i].def.qualname = q;
    }
}
