//! Python signatures and docstrings from tree-sitter nodes: the header text as written,
//! parameters with their kinds, return annotation, decorators, bases, and the docstring
//! unquoted and dedented like `inspect.cleandoc`.

use std::sync::LazyLock;

use tree_sitter::Node;

use crate::index::{Parameter, ParameterKind};

/// Node kind and field ids this module compares against (ids, not `Node::kind()` strings:
/// those are C strings measured on every call).
struct Ids {
    identifier: u16,
    default_parameter: u16,
    typed_default_parameter: u16,
    typed_parameter: u16,
    list_splat_pattern: u16,
    dictionary_splat_pattern: u16,
    keyword_separator: u16,
    positional_separator: u16,
    type_: u16,
    comment: u16,
    colon: u16,
    expression_statement: u16,
    string: u16,
    concatenated_string: u16,
    string_start: u16,
    string_end: u16,
    name_field: u16,
    value_field: u16,
    type_field: u16,
}

static IDS: LazyLock<Ids> = LazyLock::new(|| {
    let language = crate::Language::Python.grammar();
    let kind = |name: &str, named: bool| match language.id_for_node_kind(name, named) {
        0 => panic!("tree-sitter-python has no node kind `{name}`"),
        id => id,
    };
    let field = |name: &str| {
        language.field_id_for_name(name).map_or_else(|| panic!("tree-sitter-python has no field `{name}`"), |f| f.get())
    };
    Ids {
        identifier: kind("identifier", true),
        default_parameter: kind("default_parameter", true),
        typed_default_parameter: kind("typed_default_parameter", true),
        typed_parameter: kind("typed_parameter", true),
        list_splat_pattern: kind("list_splat_pattern", true),
        dictionary_splat_pattern: kind("dictionary_splat_pattern", true),
        keyword_separator: kind("keyword_separator", true),
        positional_separator: kind("positional_separator", true),
        type_: kind("type", true),
        comment: kind("comment", true),
        colon: kind(":", false),
        expression_statement: kind("expression_statement", true),
        string: kind("string", true),
        concatenated_string: kind("concatenated_string", true),
        string_start: kind("string_start", true),
        string_end: kind("string_end", true),
        name_field: field("name"),
        value_field: field("value"),
        type_field: field("type"),
    }
});

pub(super) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    &src[node.byte_range()]
}

/// Parameters of a `parameters` node, with positional-only (before `/`) and keyword-only
/// (after `*` or `*args`) kinds.
pub(super) fn parameters(node: Node, src: &str) -> Vec<Parameter> {
    let k = &*IDS;
    let mut out: Vec<Parameter> = Vec::new();
    let mut keyword_only = false;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let plain = if keyword_only { ParameterKind::KeywordOnly } else { ParameterKind::PositionalOrKeyword };
        let field = |id: u16| child.child_by_field_id(id).map(|n| text(n, src).to_string());
        let kind = child.kind_id();
        if kind == k.identifier {
            out.push(param(text(child, src), plain, None, None));
        } else if kind == k.default_parameter {
            let name = field(k.name_field).unwrap_or_default();
            out.push(param(&name, plain, None, field(k.value_field)));
        } else if kind == k.typed_default_parameter {
            let name = field(k.name_field).unwrap_or_default();
            out.push(param(&name, plain, field(k.type_field), field(k.value_field)));
        } else if kind == k.typed_parameter {
            let annotation = field(k.type_field);
            let mut c = child.walk();
            let Some(inner) = child.named_children(&mut c).find(|n| n.kind_id() != k.type_ && n.kind_id() != k.comment)
            else {
                continue;
            };
            let inner_kind = inner.kind_id();
            if inner_kind == k.list_splat_pattern {
                out.push(param(splat_name(inner, src), ParameterKind::VarPositional, annotation, None));
                keyword_only = true;
            } else if inner_kind == k.dictionary_splat_pattern {
                out.push(param(splat_name(inner, src), ParameterKind::VarKeyword, annotation, None))
            } else {
                out.push(param(text(inner, src), plain, annotation, None))
            }
        } else if kind == k.list_splat_pattern {
            out.push(param(splat_name(child, src), ParameterKind::VarPositional, None, None));
            keyword_only = true;
        } else if kind == k.dictionary_splat_pattern {
            out.push(param(splat_name(child, src), ParameterKind::VarKeyword, None, None));
        } else if kind == k.keyword_separator {
            keyword_only = true;
        } else if kind == k.positional_separator {
            for p in out.iter_mut().filter(|p| p.kind == ParameterKind::PositionalOrKeyword) {
                p.kind = ParameterKind::PositionalOnly;
            }
        }
    }
    out
}

fn param(name: &str, kind: ParameterKind, annotation: Option<String>, default: Option<String>) -> Parameter {
    Parameter { name: name.to_string(), kind, annotation, default }
}

fn splat_name<'s>(node: Node, src: &'s str) -> &'s str {
    let mut c = node.walk();
    let found = node.named_children(&mut c).find(|n| n.kind_id() != IDS.comment);
    found.map_or("", |n| text(n, src))
}

/// Named, non-comment children's text (superclass lists: `Base`, `metaclass=M`).
pub(super) fn arguments(node: Node, src: &str) -> Vec<String> {
    let mut c = node.walk();
    node.named_children(&mut c).filter(|n| n.kind_id() != IDS.comment).map(|n| text(n, src).to_string()).collect()
}

/// Decorator text without the `@`.
pub(super) fn decorator(node: Node, src: &str) -> String {
    let t = text(node, src).trim();
    t.strip_prefix('@').unwrap_or(t).trim().to_string()
}

/// The header of a `def`/`class` node as written, up to (excluding) the `:` before the body.
pub(super) fn header(def: Node, body: Node, src: &str) -> String {
    let mut end = body.start_byte();
    let mut c = def.walk();
    for child in def.children(&mut c) {
        if child.start_byte() >= body.start_byte() {
            break;
        }
        if child.kind_id() == IDS.colon {
            end = child.start_byte();
        }
    }
    src[def.start_byte()..end].trim_end().to_string()
}

/// The docstring of a body block: a string literal that is the first statement.
pub(super) fn docstring(body: Node, src: &str) -> Option<String> {
    let mut c = body.walk();
    let k = &*IDS;
    let first = body.named_children(&mut c).find(|n| n.kind_id() != k.comment)?;
    if first.kind_id() != k.expression_statement || first.named_child_count() != 1 {
        return None;
    }
    let expr = first.named_child(0)?;
    let value = if expr.kind_id() == k.string {
        string_value(expr, src)?
    } else if expr.kind_id() == k.concatenated_string {
        let mut c = expr.walk();
        let parts: Option<Vec<String>> =
            expr.named_children(&mut c).filter(|n| n.kind_id() == k.string).map(|n| string_value(n, src)).collect();
        parts?.concat()
    } else {
        return None;
    };
    Some(cleandoc(&value))
}

/// The value of a plain string literal (not bytes, not an f-string).
fn string_value(node: Node, src: &str) -> Option<String> {
    let count = node.child_count();
    if count < 2 {
        return None;
    }
    let start = node.child(0)?;
    let end = node.child(count - 1)?;
    if start.kind_id() != IDS.string_start || end.kind_id() != IDS.string_end {
        return None;
    }
    let prefix: String =
        text(start, src).chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_lowercase();
    if prefix.contains('f') || prefix.contains('b') || prefix.contains('t') {
        return None;
    }
    // Python reads source with universal newlines before it looks at escapes.
    let body = src[start.end_byte()..end.start_byte()].replace("\r\n", "\n").replace('\r', "\n");
    Some(if prefix.contains('r') { body } else { unescape(&body) })
}

/// Python string escapes; unknown escapes stay as written, as Python keeps them.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars.clone().take(n).collect();
                match (digits.len() == n)
                    .then(|| u32::from_str_radix(&digits, 16).ok())
                    .flatten()
                    .and_then(char::from_u32)
                {
                    Some(ch) => {
                        out.push(ch);
                        for _ in 0..n {
                            chars.next();
                        }
                    }
                    None => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// `inspect.cleandoc`: expand tabs, strip the first line's leading blanks, remove the
/// common indentation of the other lines, drop leading and trailing blank lines.
pub(super) fn cleandoc(doc: &str) -> String {
    let mut lines: Vec<String> = doc.split('\n').map(expand_tabs).collect();
    let margin = lines.iter().skip(1).filter_map(|l| {
        let content = l.trim_start().chars().count();
        (content > 0).then(|| l.chars().count() - content)
    });
    let margin = margin.min();
    if let Some(first) = lines.first_mut() {
        *first = first.trim_start().to_string();
    }
    if let Some(margin) = margin {
        for line in lines.iter_mut().skip(1) {
            *line = line.chars().skip(margin).collect();
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let leading = lines.iter().take_while(|l| l.is_empty()).count();
    lines.drain(..leading);
    lines.join("\n")
}

fn expand_tabs(line: &str) -> String {
    if !line.contains('\t') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut col = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = 8 - col % 8;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col = if c == '\r' || c == '\n' { 0 } else { col + 1 };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleandoc_matches_python() {
        assert_eq!(cleandoc("Summary.\n\n    Details\n      more\n    "), "Summary.\n\nDetails\n  more");
        assert_eq!(cleandoc("\n    Lead blank.\n    "), "Lead blank.");
        assert_eq!(cleandoc("  one line  "), "one line  ");
        assert_eq!(cleandoc("a\n\tb"), "a\nb");
    }

    #[test]
    fn unescape_like_python() {
        assert_eq!(unescape(r"a\nb\tc\\d\'e\x41\u00e9\q"), "a\nb\tc\\d'eAé\\q");
        assert_eq!(unescape("line\\\nnext"), "linenext");
        assert_eq!(unescape(r"\101"), "A");
    }
}
