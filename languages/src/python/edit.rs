//! Python masking edits: delete extracted definitions (decorators, attached comments and
//! the trailing newline included), put `pass` in blocks left empty, collapse the blank
//! lines a deletion leaves to what PEP 8 would have, drop imported names whose
//! definitions are gone, and take those names and the deleted definitions' out of the
//! module's `__all__` (else `from module import *` fails), and delete module-level
//! `f.attr = …` statements of deleted functions and classes, and the value bindings (a
//! statement `x = wrap(f)`, an entry `KEY: f` of a bound literal) that name deleted
//! definitions; a method of a class that stays overriding an abstract method, or a method
//! that stays, of a base class is stubbed instead (see `stub`). Also the deterministic Level 2 rewrite of test imports
//! (see [`rewrite_imports_for_level2`]).
//!
//! Everything here produces [`Edit`]s against the original text; nothing is applied in
//! place. Statements are found with tree-sitter, deletions are made on whole lines.

mod level2;
mod lines;
mod stub;
#[cfg(test)]
mod tests;

pub use level2::{PythonLevel2, rewrite_imports_for_level2};

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Parser, Tree};

use crate::edit::{Edit, MaskError};
use crate::index::{Definition, DefinitionIndex, FileIndex, Import, ImportedName, NodeId, ValueBinding};
use lines::{LineRange, Lines};

pub(crate) fn parse(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
    parser.parse(source, None)
}

/// The definition an imported name binds: the index's `target`, or else the top-level
/// definition of that name in the module the import resolves to, following re-exports
/// (`from .pricing import total` in `__init__.py`) a few levels deep.
pub fn resolve_imported_name(index: &DefinitionIndex, import: &Import, name: &ImportedName) -> Option<NodeId> {
    if let Some(t) = &name.target {
        return Some(t.clone());
    }
    resolve_in_module(index, import.resolved_path.as_deref()?, &name.name, 0)
}

/// The definition `name` denotes at the top level of the module in file `path`.
pub fn resolve_in_module(index: &DefinitionIndex, path: &str, name: &str, depth: usize) -> Option<NodeId> {
    if depth > 8 {
        return None;
    }
    let file = index.files.get(path)?;
    if let Some(id) = file
        .definitions
        .iter()
        .filter_map(|id| index.definitions.get(id))
        .filter(|d| d.parent.is_none() && d.qualname == name)
        .map(|d| d.id.clone())
        .next_back()
    {
        return Some(id);
    }
    for imp in file.imports.iter().filter(|i| i.module_level) {
        for n in &imp.names {
            if n.alias.as_deref().unwrap_or(&n.name) == name {
                if let Some(t) = &n.target {
                    return Some(t.clone());
                }
                if let Some(p) = &imp.resolved_path {
                    return resolve_in_module(index, p, &n.name, depth + 1);
                }
            }
        }
    }
    None
}

/// Whether `id` or one of its ancestors is in `set`.
fn removed_with_ancestor(index: &DefinitionIndex, set: &BTreeSet<NodeId>, def: &Definition) -> bool {
    let mut cur = def.parent.as_deref();
    let mut hops = 0;
    while let Some(p) = cur {
        if set.contains(p) {
            return true;
        }
        hops += 1;
        if hops > 64 {
            break;
        }
        cur = index.definitions.get(p).and_then(|d| d.parent.as_deref());
    }
    false
}

/// What one import statement loses.
struct ImportDrop<'a> {
    import: &'a Import,
    dropped: Vec<&'a ImportedName>,
}

/// Edits that mask `file`: see the module doc. `remove` may hold ids of any file; only this
/// file's definitions are deleted, and imports of removed definitions from anywhere are
/// dropped. Returns no edits when nothing in the file is affected.
pub fn mask_file(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    remove: &BTreeSet<NodeId>,
) -> Result<Vec<Edit>, MaskError> {
    mask_file_with(source, file, index, remove, &[])
}

/// [`mask_file`] that also deletes `calls`, call statements of this file whose value is
/// discarded (spans of the index's `DiscardedCall`s), that go with the definitions they
/// call; a block they empty gets `pass`.
pub fn mask_file_with(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    remove: &BTreeSet<NodeId>,
    calls: &[crate::index::Span],
) -> Result<Vec<Edit>, MaskError> {
    let plan = MaskPlan::new(file, index, remove, calls);
    if plan.is_empty() {
        return Ok(Vec::new());
    }
    let tree = parse(source).ok_or_else(|| MaskError::Parse { path: file.path.clone() })?;
    let root = tree.root_node();
    let mut masking = Masking { source, file, root, deleted: Vec::new(), edits: Vec::new() };
    masking.definitions(index, remove, &plan.defs)?;
    masking.attribute_assignments(&plan.defs);
    masking.call_statements(&plan.calls)?;
    masking.bindings(&plan.bindings)?;
    masking.imports(&plan)?;
    // `__all__` must not name what is gone, or `from module import *` fails.
    let gone = plan.gone_names();
    if !gone.is_empty() {
        masking.edits.extend(dunder_all_edits(source, root, &gone));
    }
    Ok(masking.finish())
}

/// What masking one file touches, found in the index before the source is parsed.
struct MaskPlan<'a> {
    /// Topmost removed definitions of this file.
    defs: Vec<&'a Definition>,
    /// Import statements (outside `defs`) that lose names.
    drops: Vec<ImportDrop<'a>>,
    /// Value bindings (outside `defs`) naming what is removed.
    bindings: Vec<&'a ValueBinding>,
    /// Discarded call statements (outside `defs`) that go with the definitions they call.
    calls: Vec<&'a crate::index::Span>,
}

impl<'a> MaskPlan<'a> {
    /// The definitions, imports, bindings and calls of `file` that masking `remove` touches.
    fn new(
        file: &'a FileIndex,
        index: &'a DefinitionIndex,
        remove: &BTreeSet<NodeId>,
        calls: &'a [crate::index::Span],
    ) -> Self {
        let defs: Vec<&Definition> = file
            .definitions
            .iter()
            .filter(|id| remove.contains(*id))
            .filter_map(|id| index.definitions.get(id))
            .filter(|d| !removed_with_ancestor(index, remove, d))
            .collect();
        let mut plan = MaskPlan { defs, drops: Vec::new(), bindings: Vec::new(), calls: Vec::new() };
        plan.drops = file
            .imports
            .iter()
            .filter(|imp| !imp.names.is_empty() && !plan.inside_removed(imp.span.start_byte, imp.span.end_byte))
            .filter_map(|imp| {
                let dropped: Vec<&ImportedName> = imp
                    .names
                    .iter()
                    .filter(|n| {
                        n.name != "*" && resolve_imported_name(index, imp, n).is_some_and(|t| remove.contains(&t))
                    })
                    .collect();
                (!dropped.is_empty()).then_some(ImportDrop { import: imp, dropped })
            })
            .collect();
        // Value bindings naming what is removed go with it (the classifier extracts a
        // definition such a binding names only when nothing that stays names what it binds).
        let gone_def =
            |id: &NodeId| remove.contains(id) || index.get(id).is_some_and(|d| removed_with_ancestor(index, remove, d));
        plan.bindings = file
            .value_bindings
            .iter()
            .filter(|b| b.targets.iter().any(|t| gone_def(&t.target)))
            .filter(|b| !plan.inside_removed(b.span.start_byte, b.span.end_byte))
            .collect();
        plan.calls = calls.iter().filter(|c| !plan.inside_removed(c.start_byte, c.end_byte)).collect();
        plan
    }

    /// Whether the byte range lies inside one of the removed definitions.
    fn inside_removed(&self, start: usize, end: usize) -> bool {
        self.defs.iter().any(|d| d.span.start_byte <= start && end <= d.span.end_byte)
    }

    /// Whether nothing in the file is affected.
    fn is_empty(&self) -> bool {
        self.defs.is_empty() && self.drops.is_empty() && self.bindings.is_empty() && self.calls.is_empty()
    }

    /// The module-level names that are gone: deleted definitions, bindings and imported names.
    fn gone_names(&self) -> BTreeSet<String> {
        let mut gone: BTreeSet<String> =
            self.defs.iter().filter(|d| d.parent.is_none()).map(|d| d.name.clone()).collect();
        gone.extend(self.bindings.iter().filter(|b| !b.entry && b.class.is_none()).map(|b| b.name.clone()));
        for drop in self.drops.iter().filter(|d| d.import.module_level) {
            gone.extend(drop.dropped.iter().map(|n| n.alias.clone().unwrap_or_else(|| n.name.clone())));
        }
        gone
    }
}

/// One file's masking under way: its parsed source and the edits found so far.
struct Masking<'t> {
    source: &'t str,
    file: &'t FileIndex,
    root: Node<'t>,
    /// Statements to delete, whole lines.
    deleted: Vec<Node<'t>>,
    /// Every other edit.
    edits: Vec<Edit>,
}

impl<'t> Masking<'t> {
    /// Deletes the removed definitions, or stubs those that override a method that stays.
    fn definitions(
        &mut self,
        index: &DefinitionIndex,
        remove: &BTreeSet<NodeId>,
        defs: &[&Definition],
    ) -> Result<(), MaskError> {
        let by_def_line = definition_statements(self.root, self.source);
        for d in defs {
            let stmt = by_def_line.get(&(d.def_line, d.name.clone())).copied().ok_or_else(|| {
                MaskError::DefinitionNotFound { path: self.file.path.clone(), id: d.id.clone(), line: d.def_line }
            })?;
            match stub::overrides_a_base_method(index, remove, d).then(|| stub::stub_body(self.source, stmt)).flatten()
            {
                Some(edit) => self.edits.push(edit),
                None => self.deleted.push(stmt),
            }
        }
        Ok(())
    }

    /// Deletes `f.__doc__ = …` at module level with `f` (the index does not count it as a use).
    fn attribute_assignments(&mut self, defs: &[&Definition]) {
        let deleted_names: BTreeSet<&str> =
            defs.iter().filter(|d| d.parent.is_none()).map(|d| d.name.as_str()).collect();
        let mut c = self.root.walk();
        for stmt in self.root.named_children(&mut c) {
            if let Some(owner) = attribute_assignment_owner(stmt, self.source)
                && deleted_names.contains(owner)
            {
                self.deleted.push(stmt);
            }
        }
    }

    /// Deletes the discarded call statements, with the statements testing their value.
    fn call_statements(&mut self, calls: &[&crate::index::Span]) -> Result<(), MaskError> {
        for c in calls {
            let not_found = || MaskError::DefinitionNotFound {
                path: self.file.path.clone(),
                id: "call statement".into(),
                line: c.start_line,
            };
            match node_at(self.root, c.start_byte, c.end_byte) {
                Some(node) if node.kind() == "expression_statement" => self.deleted.push(node),
                // A tested value: `v = f(x)` and the `if v: …` after it, siblings in one block.
                _ => {
                    self.deleted.extend(statements_spanning(self.root, c.start_byte, c.end_byte).ok_or_else(not_found)?)
                }
            }
        }
        Ok(())
    }

    /// Deletes the value bindings of removed definitions: statements, or entries of a literal.
    fn bindings(&mut self, bindings: &[&ValueBinding]) -> Result<(), MaskError> {
        let mut entries: BTreeMap<usize, (Node, Vec<Node>)> = BTreeMap::new();
        for b in bindings {
            let node = node_at(self.root, b.span.start_byte, b.span.end_byte).ok_or_else(|| {
                MaskError::DefinitionNotFound {
                    path: self.file.path.clone(),
                    id: b.name.clone(),
                    line: b.span.start_line,
                }
            })?;
            match node.parent().filter(|_| b.entry) {
                Some(container) => entries.entry(container.id()).or_insert((container, Vec::new())).1.push(node),
                None => self.deleted.push(node),
            }
        }
        for (container, dropped) in entries.values() {
            let mut c = container.walk();
            let elems: Vec<Node> = container.named_children(&mut c).filter(|n| n.kind() != "comment").collect();
            let keep: Vec<Node> = elems.iter().copied().filter(|e| !dropped.iter().any(|d| d.id() == e.id())).collect();
            self.edits.extend(element_list_edits(self.source, container.start_position().row, true, &elems, &keep));
        }
        Ok(())
    }

    /// Takes the dropped names out of their imports, deleting an import that loses every name.
    fn imports(&mut self, plan: &MaskPlan) -> Result<(), MaskError> {
        let file = self.file;
        // Imports that lose every name; a submodule one of them binds needs keeping only when no
        // other import of the file binds it (and then once).
        let whole: BTreeSet<usize> = plan
            .drops
            .iter()
            .filter(|d| d.dropped.len() == d.import.names.len())
            .map(|d| d.import.span.start_byte)
            .collect();
        let mut bound: BTreeSet<String> = file
            .imports
            .iter()
            .filter(|i| !whole.contains(&i.span.start_byte) && !plan.inside_removed(i.span.start_byte, i.span.end_byte))
            .filter_map(|i| submodule_binding(file, i))
            .collect();
        for drop in &plan.drops {
            let (stmt, names, keep) = split_import(self.root, drop, self.source, file)?;
            if keep.is_empty() {
                match submodule_binding(file, drop.import).filter(|sub| bound.insert(sub.clone())) {
                    // `from .sub import a` in a package's `__init__.py` also binds `sub`
                    // (importing a submodule sets it on its package): keep that binding and the
                    // import's side effects, or a later `sub.x` / `del sub` fails to load.
                    Some(sub) => self.edits.push(Edit::replace(
                        stmt.start_byte(),
                        stmt.end_byte(),
                        format!("from . import {sub}"),
                    )),
                    None => self.deleted.push(stmt),
                }
            } else if keep.len() < names.len() {
                self.edits.extend(name_list_edits(self.source, stmt, &names, &keep));
            }
        }
        Ok(())
    }

    /// All the edits: the others, then the deletions of the statements (each once).
    fn finish(mut self) -> Vec<Edit> {
        self.deleted.sort_by_key(|n| n.start_byte());
        self.deleted.dedup_by_key(|n| n.id());
        self.edits.extend(statement_deletions(self.source, &self.deleted));
        self.edits
    }
}

/// Edits that take the names `drop` out of `file`'s module-level `from m import …`
/// statements: a statement that keeps some loses those names, one that keeps none goes (with
/// `pass` in a block it empties: `if has_simplejson: from simplejson import JSONDecodeError`).
pub fn drop_imported_names(
    source: &str,
    file: &FileIndex,
    drop: &BTreeSet<crate::index::ImportedKey>,
) -> Result<Vec<Edit>, MaskError> {
    let drops: Vec<ImportDrop> = file
        .imports
        .iter()
        .filter(|imp| imp.module_level)
        .filter_map(|imp| {
            let dropped: Vec<&ImportedName> = imp
                .names
                .iter()
                .filter(|n| drop.contains(&(imp.module.clone(), n.name.clone(), n.alias.clone())))
                .collect();
            (!dropped.is_empty()).then_some(ImportDrop { import: imp, dropped })
        })
        .collect();
    if drops.is_empty() {
        return Ok(Vec::new());
    }
    let tree = parse(source).ok_or_else(|| MaskError::Parse { path: file.path.clone() })?;
    let root = tree.root_node();
    let mut deleted: Vec<Node> = Vec::new();
    let mut edits = Vec::new();
    for drop in &drops {
        let (stmt, names, keep) = split_import(root, drop, source, file)?;
        if keep.is_empty() {
            deleted.push(stmt);
        } else if keep.len() < names.len() {
            edits.extend(name_list_edits(source, stmt, &names, &keep));
        }
    }
    deleted.sort_by_key(|n| n.start_byte());
    deleted.dedup_by_key(|n| n.id());
    edits.extend(statement_deletions(source, &deleted));
    Ok(edits)
}

/// The submodule `import` binds in the package namespace of `file` as a side effect: a
/// module-level `from .sub import …` (or `from pkg.sub import …`, or `from .sub.deeper
/// import …`) in `pkg/__init__.py` binds `sub`, when it resolves to a file of the repository.
fn submodule_binding(file: &FileIndex, import: &Import) -> Option<String> {
    let dir = file.path.strip_suffix("__init__.py")?;
    if !import.module_level || import.module.starts_with("..") {
        return None;
    }
    let rest = import.resolved_path.as_deref()?.strip_prefix(dir)?;
    let first = rest.split('/').next()?;
    let sub = first.strip_suffix(".py").unwrap_or(first);
    let is_identifier = sub.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && sub.chars().all(|c| c.is_alphanumeric() || c == '_');
    (is_identifier && sub != "__init__").then(|| sub.to_string())
}

/// Whether `node` is a statement directly in the module (not in a block).
pub(crate) fn is_module_statement(node: Node) -> bool {
    node.parent()
        .is_some_and(|p| p.kind() == "expression_statement" && p.parent().is_some_and(|m| m.kind() == "module"))
}

/// `f` when `stmt` is an expression statement `f.attr = …` (one target, an attribute of a
/// plain name).
fn attribute_assignment_owner<'s>(stmt: Node, source: &'s str) -> Option<&'s str> {
    if stmt.kind() != "expression_statement" || stmt.named_child_count() != 1 {
        return None;
    }
    let assign = stmt.named_child(0).filter(|a| a.kind() == "assignment")?;
    let left = assign.child_by_field_name("left").filter(|l| l.kind() == "attribute")?;
    let object = left.child_by_field_name("object").filter(|o| o.kind() == "identifier")?;
    Some(&source[object.byte_range()])
}

/// Statement nodes of every `def`/`class` (the decorated form when decorated), keyed by the
/// 1-based line of the keyword and the name.
fn definition_statements<'t>(root: Node<'t>, source: &str) -> BTreeMap<(usize, String), Node<'t>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "function_definition" | "class_definition") {
            if let Some(name) = n.child_by_field_name("name") {
                let stmt = match n.parent() {
                    Some(p) if p.kind() == "decorated_definition" => p,
                    _ => n,
                };
                out.insert((n.start_position().row + 1, source[name.byte_range()].to_string()), stmt);
            }
        }
        let mut c = n.walk();
        for ch in n.named_children(&mut c) {
            stack.push(ch);
        }
    }
    out
}

/// The outermost node spanning exactly `start..end` (a statement, or an entry of a literal),
/// short of a block: a class body of one statement has that statement's span, and the
/// statement goes (with `pass` left), not the body.
fn node_at(root: Node, start: usize, end: usize) -> Option<Node> {
    let mut n = root.descendant_for_byte_range(start, end)?;
    while let Some(p) =
        n.parent().filter(|p| p.start_byte() == start && p.end_byte() == end && !matches!(p.kind(), "module" | "block"))
    {
        n = p;
    }
    (n.start_byte() == start && n.end_byte() == end).then_some(n)
}

/// The consecutive statements of one block that together span exactly `start..end`.
fn statements_spanning(root: Node, start: usize, end: usize) -> Option<Vec<Node>> {
    let mut first = root.descendant_for_byte_range(start, start)?;
    while first.start_byte() == start && first.parent().is_some_and(|p| p.start_byte() == start && p.kind() != "block")
    {
        first = first.parent()?;
    }
    if first.start_byte() != start || first.parent().is_none_or(|p| p.kind() != "block") {
        return None;
    }
    let mut out = vec![first];
    let mut cur = first;
    while cur.end_byte() < end {
        cur = cur.next_named_sibling()?;
        out.push(cur);
    }
    (cur.end_byte() == end).then_some(out)
}

/// The statement of import `drop` in the tree, the nodes of the names it imports, and those of
/// them that stay (not in `drop.dropped`).
fn split_import<'t>(
    root: Node<'t>,
    drop: &ImportDrop<'_>,
    source: &str,
    file: &FileIndex,
) -> Result<(Node<'t>, Vec<Node<'t>>, Vec<Node<'t>>), MaskError> {
    let stmt = import_statement_at(root, drop.import.span.start_byte, drop.import.span.end_byte)
        .ok_or_else(|| MaskError::ImportNotFound { path: file.path.clone(), line: drop.import.span.start_line })?;
    let names = import_name_nodes(stmt);
    let keep = names.iter().copied().filter(|n| !drop.dropped.iter().any(|d| same_name(*n, d, source))).collect();
    Ok((stmt, names, keep))
}

fn import_statement_at(root: Node, start: usize, end: usize) -> Option<Node> {
    let mut n = root.descendant_for_byte_range(start, end.max(start))?;
    loop {
        if n.kind() == "import_from_statement" {
            return Some(n);
        }
        n = n.parent()?;
    }
}

fn import_name_nodes(stmt: Node) -> Vec<Node> {
    let mut c = stmt.walk();
    stmt.children_by_field_name("name", &mut c).collect()
}

fn same_name(n: Node, name: &ImportedName, source: &str) -> bool {
    if n.start_byte() == name.span.start_byte {
        return true;
    }
    let (nm, alias) = match n.kind() {
        "aliased_import" => (
            n.child_by_field_name("name").map(|x| &source[x.byte_range()]),
            n.child_by_field_name("alias").map(|x| &source[x.byte_range()]),
        ),
        _ => (Some(&source[n.byte_range()]), None),
    };
    nm == Some(name.name.as_str()) && alias == name.alias.as_deref()
}

/// Edits removing the names of `names` not in `keep` from a `from m import …` statement.
fn name_list_edits(source: &str, stmt: Node, names: &[Node], keep: &[Node]) -> Vec<Edit> {
    let parenthesized = {
        let mut c = stmt.walk();
        stmt.children(&mut c).any(|ch| ch.kind() == "(")
    };
    element_list_edits(source, stmt.start_position().row, parenthesized, names, keep)
}

/// Edits removing the elements of `elems` not in `keep` from a comma-separated list that
/// opens on row `open_row`: when the list is bracketed and every element sits alone on its
/// own line, the dropped elements' lines go (layout and comments of the rest survive);
/// otherwise the elements are rewritten as `a, b` (a trailing comma stays where it was).
fn element_list_edits(source: &str, open_row: usize, bracketed: bool, elems: &[Node], keep: &[Node]) -> Vec<Edit> {
    let lines = Lines::new(source);
    let rows: Vec<usize> = elems.iter().map(|n| n.start_position().row).collect();
    let after_elem = |n: &Node| {
        let bytes = source.as_bytes();
        let mut j = n.end_byte();
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        if j < bytes.len() && bytes[j] == b',' {
            j += 1;
        }
        j
    };
    let own_lines = bracketed
        && elems.iter().all(|n| {
            let r = n.start_position().row;
            r > open_row
                && n.end_position().row == r
                && rows.iter().filter(|x| **x == r).count() == 1
                && lines.only_space_before(n.start_byte())
                && lines.only_space_or_comment_after(after_elem(n))
        });
    if own_lines {
        return elems
            .iter()
            .filter(|n| !keep.iter().any(|k| k.id() == n.id()))
            .map(|n| {
                let r = n.start_position().row;
                Edit::delete(lines.start(r), lines.end_incl_newline(r))
            })
            .collect();
    }
    let (Some(first), Some(last)) = (elems.first(), elems.last()) else { return Vec::new() };
    let text = keep.iter().map(|k| &source[k.byte_range()]).collect::<Vec<_>>().join(", ");
    if keep.is_empty() {
        // Nothing left: drop a trailing comma too (`[a,]` → `[]`).
        return vec![Edit::delete(first.start_byte(), after_elem(last))];
    }
    vec![Edit::replace(first.start_byte(), last.end_byte(), text)]
}

/// The value of a plain string literal (`"x"`, `'x'`), without prefix or quotes.
fn string_value<'s>(n: Node, source: &'s str) -> Option<&'s str> {
    if n.kind() != "string" {
        return None;
    }
    let mut c = n.walk();
    let parts: Vec<Node> = n.named_children(&mut c).filter(|p| p.kind() == "string_content").collect();
    match parts.as_slice() {
        [one] => Some(&source[one.byte_range()]),
        [] => Some(""),
        _ => None,
    }
}

/// Edits removing `names` from the module's `__all__ = [...]` / `__all__ += (...)`.
fn dunder_all_edits(source: &str, root: Node, names: &BTreeSet<String>) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut c = root.walk();
    for stmt in root.named_children(&mut c).filter(|n| n.kind() == "expression_statement") {
        let Some(assign) = stmt.named_child(0).filter(|a| matches!(a.kind(), "assignment" | "augmented_assignment"))
        else {
            continue;
        };
        let (Some(left), Some(right)) = (assign.child_by_field_name("left"), assign.child_by_field_name("right"))
        else {
            continue;
        };
        if &source[left.byte_range()] != "__all__" || !matches!(right.kind(), "list" | "tuple") {
            continue;
        }
        let mut rc = right.walk();
        let elems: Vec<Node> = right.named_children(&mut rc).filter(|n| n.kind() != "comment").collect();
        let keep: Vec<Node> =
            elems.iter().copied().filter(|e| !string_value(*e, source).is_some_and(|v| names.contains(v))).collect();
        if keep.len() == elems.len() {
            continue;
        }
        // A one-element tuple needs its comma: `("a", "b")` minus `"b"` must stay a tuple.
        if right.kind() == "tuple" && keep.len() == 1 {
            let text = format!("{},", &source[keep[0].byte_range()]);
            if let (Some(first), Some(last)) = (elems.first(), elems.last()) {
                edits.push(Edit::replace(first.start_byte(), last.end_byte(), text));
                continue;
            }
        }
        let bracketed = source[right.byte_range()].starts_with(['[', '(']);
        edits.extend(element_list_edits(source, right.start_position().row, bracketed, &elems, &keep));
    }
    edits
}

/// The block a statement sits in, and whether that is a `block` (not the module).
fn enclosing_block(stmt: Node) -> Option<Node> {
    stmt.parent().filter(|p| p.kind() == "block")
}

fn statement_children(block: Node) -> Vec<Node> {
    let mut c = block.walk();
    block.named_children(&mut c).filter(|n| n.kind() != "comment").collect()
}

/// Edits deleting `deleted` statements (sorted, topmost only), with `pass` in emptied blocks
/// and blank-line collapsing.
fn statement_deletions(source: &str, deleted: &[Node]) -> Vec<Edit> {
    let lines = Lines::new(source);
    let is_deleted = |n: &Node| deleted.iter().any(|d| d.id() == n.id());
    // Blocks emptied by the deletions: the first deleted statement of each carries the `pass`.
    let mut pass_for: BTreeSet<usize> = BTreeSet::new();
    let mut seen_blocks: BTreeSet<usize> = BTreeSet::new();
    for d in deleted {
        if let Some(b) = enclosing_block(*d) {
            if seen_blocks.insert(b.id()) && statement_children(b).iter().all(is_deleted) {
                pass_for.insert(d.id());
            }
        }
    }
    let mut range = LineRange::new(lines.count());
    let mut edits = Vec::new();
    for d in deleted {
        let (start, end) = (d.start_byte(), d.end_byte());
        let whole = lines.only_space_before(start) && lines.only_space_or_comment_after(end);
        let wants_pass = pass_for.contains(&d.id());
        if !whole {
            if wants_pass {
                edits.push(Edit::replace(start, end, "pass"));
            } else {
                edits.push(inline_deletion(source, start, end));
            }
            continue;
        }
        let indent = lines.indent_text(d.start_position().row).to_string();
        let first = lines.attached_comments_start(d.start_position().row, &indent);
        let end_row = match d.end_position() {
            p if p.column == 0 && p.row > d.start_position().row => p.row - 1,
            p => p.row,
        };
        let last = lines.trailing_comments_end(end_row, indent.len());
        let header_row = d
            .parent()
            .filter(|p| p.kind() == "block")
            .and_then(|b| b.prev_sibling())
            .map(|colon| colon.end_position().row);
        let at_start = match header_row {
            Some(h) => first == h + 1,
            None => first == 0 || d.prev_named_sibling().is_none(),
        };
        let at_end = {
            let mut next = d.next_named_sibling();
            while let Some(n) = next.filter(|n| n.kind() == "comment" || is_deleted(n)) {
                next = n.next_named_sibling();
            }
            next.is_none()
        };
        range.mark(first, last, at_start, at_end, wants_pass.then_some(indent));
    }
    edits.extend(range.edits(&lines));
    edits
}

/// Deletion of a statement that shares its line with others through `;`.
fn inline_deletion(source: &str, start: usize, end: usize) -> Edit {
    let bytes = source.as_bytes();
    let mut j = end;
    while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
        j += 1;
    }
    if j < bytes.len() && bytes[j] == b';' {
        j += 1;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        return Edit::delete(start, j);
    }
    let mut i = start;
    while i > 0 && (bytes[i - 1] == b' ' || bytes[i - 1] == b'\t') {
        i -= 1;
    }
    if i > 0 && bytes[i - 1] == b';' {
        return Edit::delete(i - 1, end);
    }
    Edit::delete(start, end)
}
