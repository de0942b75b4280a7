//! Deleting the elements of package-level composite literals that name a deleted definition
//! (the index's entry value bindings, see `index/entries.rs`): `"greet": greet,` of a
//! registry map goes with `greet`, so the package still builds and a lookup of `"greet"`
//! finds nothing, as if the function had never been registered.
//!
//! An element alone on its line (with its comma and a trailing comment) takes the whole
//! line. Otherwise it goes with the separator after it (`{a, b, c}` → `{a, c}`), or, when
//! it is the last element, with the separator before it back to the last element that
//! stays (`{a, b, c}` → `{a, b}`; `{f}` → `{}`).

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::Plan;
use crate::edit::{Edit, MaskError};
use crate::index::{FileIndex, ValueBinding};

/// The entries of `file` naming a definition the plan deletes (a stubbed one stays named).
pub(super) fn dropped<'f>(file: &'f FileIndex, p: &Plan) -> Vec<&'f ValueBinding> {
    file.value_bindings.iter().filter(|b| b.entry && b.targets.iter().any(|t| p.delete.contains(&t.target))).collect()
}

/// Edits deleting the elements of `entries` from `source` (parsed as `root`).
pub(super) fn deletions(
    source: &str,
    root: Node,
    path: &str,
    entries: &[&ValueBinding],
) -> Result<Vec<Edit>, MaskError> {
    let mut nodes = Vec::with_capacity(entries.len());
    for b in entries {
        let node = element_at(root, b.span.start_byte, b.span.end_byte).ok_or_else(|| {
            MaskError::DefinitionNotFound { path: path.to_string(), id: b.name.clone(), line: b.span.start_line }
        })?;
        nodes.push(node);
    }
    let dropped: BTreeSet<usize> = nodes.iter().map(|n| n.id()).collect();
    Ok(nodes
        .iter()
        .map(|n| {
            let (start, end) = element_range(source, *n, &dropped);
            Edit::delete(start, end)
        })
        .collect())
}

fn is_element(n: Node) -> bool {
    matches!(n.kind(), "keyed_element" | "literal_element") && n.parent().is_some_and(|p| p.kind() == "literal_value")
}

/// The element of a literal spanning exactly `start..end`.
fn element_at(root: Node, start: usize, end: usize) -> Option<Node> {
    let mut n = root.descendant_for_byte_range(start, end)?;
    loop {
        if n.start_byte() != start || n.end_byte() != end {
            return None;
        }
        if is_element(n) {
            return Some(n);
        }
        n = n.parent()?;
    }
}

/// Where the line holding byte `at` starts.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding byte `at`, past its newline, when only a comma, blanks and a
/// line comment follow `at` there.
fn rest_of_line_empty(text: &str, at: usize) -> Option<usize> {
    let line = text[at..].split('\n').next().unwrap_or("");
    let rest = line.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix(',').unwrap_or(rest).trim();
    let empty = rest.is_empty() || (rest.starts_with("//") && !line.contains("*/"));
    empty.then(|| (at + line.len() + 1).min(text.len()))
}

/// The bytes deleting element `n` takes (`dropped`: the ids of every element deleted).
fn element_range(text: &str, n: Node, dropped: &BTreeSet<usize>) -> (usize, usize) {
    let ls = line_start(text, n.start_byte());
    if text[ls..n.start_byte()].trim().is_empty()
        && let Some(end) = rest_of_line_empty(text, n.end_byte())
    {
        return (ls, end);
    }
    let Some(list) = n.parent() else { return (n.start_byte(), n.end_byte()) };
    let mut c = list.walk();
    let elems: Vec<Node> = list.named_children(&mut c).filter(|e| is_element(*e)).collect();
    let i = elems.iter().position(|e| e.id() == n.id()).unwrap_or(0);
    if let Some(next) = elems.get(i + 1) {
        return (n.start_byte(), next.start_byte());
    }
    match elems[..i].iter().rev().find(|e| !dropped.contains(&e.id())) {
        Some(kept) => (kept.end_byte(), n.end_byte()),
        // Every element goes: a trailing comma too (`{a, b,}` → `{}`).
        None => {
            let rest = &text[n.end_byte()..];
            let comma = n.end_byte() + rest.len() - rest.trim_start_matches([' ', '\t']).len();
            (n.start_byte(), if text[comma..].starts_with(',') { comma + 1 } else { n.end_byte() })
        }
    }
}
