//! Signature parts of TypeScript/JavaScript definitions read from the tree: parameters,
//! heritage clauses, interface members, JSDoc, string literals.

use tree_sitter::Node;

use super::parse::text;
use super::queries::Kinds;
use crate::index::{Parameter, ParameterKind};

pub(crate) fn string_content(n: Node, src: &str) -> String {
    let t = text(n, src);
    let t = t.strip_prefix(['"', '\'', '`']).unwrap_or(t);
    let t = t.strip_suffix(['"', '\'', '`']).unwrap_or(t);
    t.to_string()
}

/// The JSDoc block right before `n` (`prev`, its previous sibling; only whitespace
/// between), cleaned of `/**`, `*/` and the leading `*` of each line.
pub(crate) fn jsdoc(k: &Kinds, n: Node, prev: Option<Node>, src: &str) -> Option<String> {
    let prev = prev?;
    if prev.kind_id() != k.comment {
        return None;
    }
    let t = text(prev, src);
    let gap = src.get(prev.end_byte()..n.start_byte())?;
    if !t.starts_with("/**") || !gap.trim().is_empty() || gap.matches('\n').count() > 1 {
        return None;
    }
    let inner = t.trim_start_matches("/**").trim_end_matches("*/");
    let lines: Vec<&str> = inner
        .lines()
        .map(|l| {
            let l = l.trim();
            l.strip_prefix("* ").or_else(|| l.strip_prefix('*')).unwrap_or(l).trim_end()
        })
        .collect();
    let doc = lines.join("\n").trim().to_string();
    (!doc.is_empty()).then_some(doc)
}

pub(crate) fn parameters(k: &Kinds, params: Option<Node>, src: &str) -> Vec<Parameter> {
    let Some(params) = params else {
        return Vec::new();
    };
    if params.kind_id() == k.identifier {
        return vec![Parameter {
            name: text(params, src).to_string(),
            kind: ParameterKind::PositionalOrKeyword,
            annotation: None,
            default: None,
        }];
    }
    let mut out = Vec::new();
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        let kind = p.kind_id();
        let ann = k.child(p, k.field_type).map(|t| text(t, src).trim_start_matches(':').trim().to_string());
        let (name_node, default) = if kind == k.required_parameter || kind == k.optional_parameter {
            (
                k.child(p, k.field_pattern).or_else(|| k.child(p, k.field_name)),
                k.child(p, k.field_value).map(|v| text(v, src).to_string()),
            )
        } else if kind == k.assignment_pattern {
            (k.child(p, k.field_left), k.child(p, k.field_right).map(|v| text(v, src).to_string()))
        } else if kind == k.comment {
            continue;
        } else {
            (Some(p), None)
        };
        let Some(name_node) = name_node else { continue };
        let mut name = text(name_node, src).to_string();
        let kind = if name_node.kind_id() == k.rest_pattern || name.starts_with("...") {
            name = name.trim_start_matches("...").to_string();
            ParameterKind::VarPositional
        } else {
            ParameterKind::PositionalOrKeyword
        };
        if p.kind_id() == k.optional_parameter {
            name.push('?');
        }
        out.push(Parameter { name, kind, annotation: ann, default });
    }
    out
}

/// Texts of the types in `extends`/`implements` clauses, and their first identifiers.
pub(crate) fn heritage(node: Node, src: &str) -> (Vec<String>, Vec<String>) {
    let mut texts = Vec::new();
    let mut c = node.walk();
    for h in node.children(&mut c) {
        let clauses: Vec<Node> = match h.kind() {
            "class_heritage" => {
                let mut c2 = h.walk();
                h.named_children(&mut c2).collect()
            }
            "extends_type_clause" => vec![h],
            _ => continue,
        };
        for clause in clauses {
            if matches!(clause.kind(), "extends_clause" | "implements_clause" | "extends_type_clause") {
                let mut c3 = clause.walk();
                for t in clause.named_children(&mut c3) {
                    if t.kind() != "type_arguments" && t.kind() != "comment" {
                        texts.push(text(t, src).to_string());
                    }
                }
            } else if clause.kind() != "comment" {
                texts.push(text(clause, src).to_string());
            }
        }
    }
    let heads = texts
        .iter()
        .map(|t| t.split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '$')).next().unwrap_or("").to_string())
        .filter(|h| !h.is_empty())
        .collect();
    (texts, heads)
}

pub(crate) fn interface_members(k: &Kinds, body: Option<Node>, src: &str) -> Vec<String> {
    let Some(body) = body else { return Vec::new() };
    let mut c = body.walk();
    body.named_children(&mut c)
        .filter(|m| m.kind_id() == k.property_signature || m.kind_id() == k.method_signature)
        .filter_map(|m| k.child(m, k.field_name))
        .map(|n| text(n, src).to_string())
        .collect()
}
