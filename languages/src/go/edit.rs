//! Masking Go files. Definitions of the delete set go entirely (with their doc comment);
//! definitions of the stub set keep their signature and get the body
//! `{ panic("not implemented") }` (types keep their whole declaration, since remaining code
//! names them). Removing a type removes its methods (in any file of the package) the same
//! way; a type that is stubbed gets its methods stubbed. Imports whose package is no longer
//! used by the masked file are dropped — Go refuses to build with unused imports — by
//! re-parsing the file after the definition edits and comparing the import names used
//! before and after.
//!
//! Elements of package-level composite literals that only name a deleted function
//! (`"greet": greet,` of a registry map: the index's entry value bindings) go with it (see
//! [`elements`]).
//!
//! [`plan`] also promotes to "stub" every deleted definition that the kept text of a
//! stubbed one still names (a type in a stubbed function's signature, a receiver type, a
//! field type of a stubbed struct), so the masked package keeps compiling.

mod elements;
pub(crate) mod imports;

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser};

use crate::Language;
use crate::edit::{Edit, MaskError, apply};
use crate::index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, NodeId};

/// The body a stubbed function or method gets.
pub const STUB_BODY: &str = "{\n\tpanic(\"not implemented\")\n}";

/// What happens to each affected definition, over the whole index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub delete: BTreeSet<NodeId>,
    pub stub: BTreeSet<NodeId>,
}

fn is_function(d: &Definition) -> bool {
    matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method)
}

fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()).collect()
}

/// References that stay in the masked text of a stubbed definition: for a function, those
/// named by its signature; for a type, its whole declaration (but not the methods it
/// references for interface satisfaction, which are not written in it).
fn kept_references<'a>(index: &'a DefinitionIndex, d: &'a Definition) -> Vec<&'a NodeId> {
    let sig = identifiers(&d.signature.text);
    d.references
        .iter()
        .filter(|r| match index.get(r) {
            Some(t) if is_function(d) => sig.contains(t.name.as_str()),
            Some(t) => t.kind != DefinitionKind::Method,
            None => false,
        })
        .collect()
}

/// Expand the removals of Go definitions: methods follow their type (deleted with it,
/// stubbed with it), and deleted definitions still named by kept text are stubbed instead.
/// Ids of other languages pass through unchanged.
pub fn plan(index: &DefinitionIndex, delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>) -> Plan {
    let mut p = Plan { delete: delete.clone(), stub: stub.clone() };
    p.delete.retain(|id| !p.stub.contains(id));
    loop {
        let mut changed = false;
        for d in index.definitions.values().filter(|d| d.language == Language::Go && d.kind == DefinitionKind::Method) {
            if p.delete.contains(&d.id) || p.stub.contains(&d.id) {
                continue;
            }
            let Some(parent) = d.parent.as_ref() else { continue };
            if p.stub.contains(parent) {
                p.stub.insert(d.id.clone());
                changed = true;
            } else if p.delete.contains(parent) {
                p.delete.insert(d.id.clone());
                changed = true;
            }
        }
        let promote: Vec<NodeId> = p
            .stub
            .iter()
            .filter_map(|id| index.get(id))
            .filter(|d| d.language == Language::Go)
            .flat_map(|d| kept_references(index, d))
            .filter(|r| p.delete.contains(*r))
            .cloned()
            .collect();
        for id in promote {
            p.delete.remove(&id);
            p.stub.insert(id);
            changed = true;
        }
        if !changed {
            return p;
        }
    }
}

pub(crate) fn parse(source: &str, path: &str) -> Result<tree_sitter::Tree, MaskError> {
    let mut parser = Parser::new();
    parser.set_language(&Language::Go.grammar()).map_err(|_| MaskError::Parse { path: path.to_string() })?;
    parser.parse(source, None).ok_or_else(|| MaskError::Parse { path: path.to_string() })
}

/// The declaration node of a definition: the function/method declaration, or the type
/// declaration (a lone spec) or type spec (in a group) its span starts at.
fn find_node<'t>(root: Node<'t>, d: &Definition) -> Option<Node<'t>> {
    let mut c = root.walk();
    for ch in root.named_children(&mut c) {
        match ch.kind() {
            "function_declaration" | "method_declaration" if ch.start_byte() == d.span.start_byte && is_function(d) => {
                return Some(ch);
            }
            "type_declaration" if !is_function(d) => {
                if ch.start_byte() == d.span.start_byte && ch.end_byte() == d.span.end_byte {
                    return Some(ch);
                }
                let mut cc = ch.walk();
                if let Some(spec) = ch
                    .named_children(&mut cc)
                    .find(|s| s.start_byte() == d.span.start_byte && s.end_byte() == d.span.end_byte)
                {
                    return Some(spec);
                }
            }
            _ => {}
        }
    }
    None
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The bytes to delete for a node: from the start of its doc comment's line (when nothing
/// else precedes it there) to the end of its last line (when only a comment follows),
/// plus one blank line when the deletion would otherwise leave two in a row.
pub(crate) fn deletion_range(text: &str, node: Node) -> (usize, usize) {
    let mut start = node.start_byte();
    let mut cur = node.prev_sibling();
    let mut row = node.start_position().row;
    while let Some(c) = cur {
        if c.kind() != "comment" || c.end_position().row + 1 != row {
            break;
        }
        if c.prev_sibling().is_some_and(|p| p.end_position().row == c.start_position().row) {
            break;
        }
        start = c.start_byte();
        row = c.start_position().row;
        cur = c.prev_sibling();
    }
    let ls = line_start(text, start);
    if text[ls..start].trim().is_empty() {
        start = ls;
    }
    let mut end = node.end_byte();
    let rest_of_line = text[end..].split('\n').next().unwrap_or("");
    let rest = rest_of_line.trim();
    if rest.is_empty() || (rest.starts_with("//") && !rest_of_line.contains("*/")) {
        end = (end + rest_of_line.len() + 1).min(text.len());
        let blank_before = start == 0 || text[..start].ends_with("\n\n");
        if blank_before && text[end..].starts_with('\n') {
            end += 1;
        } else if blank_before && end == text.len() && start > 0 {
            start -= 1;
        }
    }
    (start, end)
}

/// The names import bindings are used under in a file: operands of `x.Name` and packages
/// of `pkg.Type`, outside import declarations.
pub(crate) fn selector_roots(root: Node, text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "import_declaration" => continue,
            "selector_expression" => {
                if let Some(op) = n.child_by_field_name("operand").filter(|o| o.kind() == "identifier") {
                    out.insert(text[op.byte_range()].to_string());
                }
            }
            "qualified_type" => {
                if let Some(p) = n.child_by_field_name("package") {
                    out.insert(text[p.byte_range()].to_string());
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out
}

/// The name an import spec binds: its alias, else the last path element (`foo` for
/// `…/foo/v2`). `None` for `_`, `.` and `"C"`, which are never dropped.
pub(crate) fn binding(spec: Node, text: &str) -> Option<String> {
    let path = spec.child_by_field_name("path").map(|p| text[p.byte_range()].trim_matches(|c| c == '"' || c == '`'))?;
    if path == "C" {
        return None;
    }
    if let Some(name) = spec.child_by_field_name("name") {
        let n = &text[name.byte_range()];
        return (n != "_" && n != ".").then(|| n.to_string());
    }
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let is_version = last.len() > 1 && last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit());
    Some(if is_version { parts.next().unwrap_or(last) } else { last }.to_string())
}

/// Edits deleting the import specs whose binding was used in `before` and is not in
/// `after`; a declaration whose specs all go is deleted whole.
pub(crate) fn unused_import_edits(
    text: &str,
    root: Node,
    before: &BTreeSet<String>,
    after: &BTreeSet<String>,
) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut c = root.walk();
    for decl in root.named_children(&mut c).filter(|n| n.kind() == "import_declaration") {
        let mut specs: Vec<Node> = Vec::new();
        let mut cc = decl.walk();
        for ch in decl.named_children(&mut cc) {
            if ch.kind() == "import_spec" {
                specs.push(ch);
            } else if ch.kind() == "import_spec_list" {
                let mut lc = ch.walk();
                specs.extend(ch.named_children(&mut lc).filter(|s| s.kind() == "import_spec"));
            }
        }
        let gone: Vec<Node> = specs
            .iter()
            .copied()
            .filter(|s| binding(*s, text).is_some_and(|b| before.contains(&b) && !after.contains(&b)))
            .collect();
        if gone.is_empty() {
            continue;
        }
        if gone.len() == specs.len() {
            let (s, e) = deletion_range(text, decl);
            edits.push(Edit::delete(s, e));
        } else {
            for s in gone {
                let (a, b) = deletion_range(text, s);
                edits.push(Edit::delete(a, b));
            }
        }
    }
    edits
}

/// The plan of a masking, computed once for the whole tree: `None` when nothing of Go is
/// removed (no plan to compute, no Go file changes).
pub fn plan_masking(index: &DefinitionIndex, delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>) -> Option<Plan> {
    let go_removed = delete.iter().chain(stub).any(|id| index.get(id).is_some_and(|d| d.language == Language::Go));
    go_removed.then(|| plan(index, delete, stub))
}

/// Edits that mask one Go file (see the module docs) with the plan of the whole removal
/// already made (see [`plan_masking`]).
pub fn mask_file_with(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    p: &Option<Plan>,
) -> Result<Vec<Edit>, MaskError> {
    let Some(p) = p else { return Ok(Vec::new()) };
    let mine: Vec<&Definition> = file
        .definitions
        .iter()
        .filter(|id| p.delete.contains(*id) || p.stub.contains(*id))
        .filter_map(|id| index.get(id))
        .collect();
    let entries = elements::dropped(file, p);
    if mine.is_empty() && entries.is_empty() {
        return Ok(Vec::new());
    }
    let tree = parse(source, &file.path)?;
    let root = tree.root_node();
    let mut edits = elements::deletions(source, root, &file.path, &entries)?;
    for d in &mine {
        let node = find_node(root, d).ok_or_else(|| MaskError::DefinitionNotFound {
            path: file.path.clone(),
            id: d.id.clone(),
            line: d.def_line,
        })?;
        if p.delete.contains(&d.id) {
            // A spec in a group whose other specs all go too: delete the declaration once.
            let group = node.parent().filter(|g| node.kind() == "type_spec" && g.kind() == "type_declaration");
            if let Some(g) = group {
                let mut gc = g.walk();
                let all_gone = g
                    .named_children(&mut gc)
                    .filter(|s| s.kind() == "type_spec" || s.kind() == "type_alias")
                    .all(|s| {
                        mine.iter()
                            .any(|o| p.delete.contains(&o.id) && o.span.start_byte == s.start_byte() && !is_function(o))
                    });
                if all_gone {
                    let (s, e) = deletion_range(source, g);
                    edits.push(Edit::delete(s, e));
                    continue;
                }
            }
            let (s, e) = deletion_range(source, node);
            edits.push(Edit::delete(s, e));
        } else if is_function(d)
            && let Some(body) = node.child_by_field_name("body")
        {
            edits.push(Edit::replace(body.start_byte(), body.end_byte(), STUB_BODY));
        }
    }
    let mut edits = merge_deletions(source, edits);
    let masked = apply(source, &edits).map_err(|_| MaskError::Parse { path: file.path.clone() })?;
    let new_tree = parse(&masked, &file.path)?;
    let before = selector_roots(root, source);
    let after = selector_roots(new_tree.root_node(), &masked);
    edits.extend(unused_import_edits(source, root, &before, &after));
    Ok(merge_deletions(source, edits))
}

/// Sort edits and merge deletions that overlap or touch (neighbouring definitions each
/// take a blank line); an edit inside a deletion is dropped. A deletion reaching the end
/// of the file also takes the blank line before it.
fn merge_deletions(source: &str, mut edits: Vec<Edit>) -> Vec<Edit> {
    edits.sort();
    edits.dedup();
    let mut out: Vec<Edit> = Vec::with_capacity(edits.len());
    for e in edits {
        if let Some(last) = out.last_mut()
            && last.inserted_text.is_empty()
            && e.position <= last.end()
        {
            if e.inserted_text.is_empty() {
                let end = last.end().max(e.end());
                last.deleted_length = end - last.position;
                continue;
            }
            if e.end() <= last.end() && e.position < last.end() {
                continue;
            }
        }
        out.push(e);
    }
    let prev_end = if out.len() > 1 { out[out.len() - 2].end() } else { 0 };
    if let Some(last) = out.last_mut()
        && last.inserted_text.is_empty()
        && last.end() == source.len()
        && last.position > prev_end
        && source[..last.position].ends_with("\n\n")
    {
        last.position -= 1;
        last.deleted_length += 1;
    }
    out
}

#[cfg(test)]
mod tests;
