//! Masking TypeScript/JavaScript files: delete removed definitions nothing else names,
//! stub the ones remaining code still names, and drop the imports and exports that would
//! no longer resolve, so that the masked project keeps type-checking.
//!
//! Rules:
//! - A definition's fate is decided by its outermost ancestor (itself included) that is
//!   in `delete` or `stub`: under a stubbed class or namespace every member is stubbed,
//!   never deleted (its signature is the interface, and `implements`/`abstract` need it).
//! - Deleting removes the whole statement (`export`, decorators, overload signatures, a
//!   `const` holding only this function), its JSDoc, a member's trailing `;`, and the
//!   blank line it leaves behind; one declarator of `const a = …, b = …` goes with its comma.
//!   Removing a class removes its members; removing a test case removes its `it(…)` call.
//! - Stubbing replaces a function body with `{ throw new Error("not implemented"); }`
//!   (an expression body of an arrow function too), which type-checks against any
//!   declared return type. A derived class's constructor keeps a leading `super(…)` call,
//!   which TypeScript requires. Interfaces, type aliases, enums and abstract or overload
//!   signatures have nothing to stub and stay as written.
//! - Import and `export … from` statements drop the names whose target is deleted (the
//!   whole statement when none is left); local `export { a }` lists and `export default a`
//!   drop deleted names the same way. An import that only removed code used (deleted
//!   definitions, stubbed bodies, removed tests) goes too, so projects built with
//!   `noUnusedLocals` keep building; imports that were unused before are left alone.
//!   Import names of packages and private module constants (`const _RE = /…/`) that only
//!   removed code read go the same way (`edit/unread.rs`).
//!
//! Limits: a function without a declared return type gets the type its stub implies
//! (`never`/`void`), which can upset callers that used the inferred type; class field
//! initializers of a stubbed class are kept as written.

mod unread;

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser};

use super::index::queries::Dialect;
use crate::edit::{Edit, MaskError};
use crate::index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, NodeId};

/// What happens to one definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Keep,
    Delete,
    Stub,
}

/// The fate of `id`: decided by its outermost ancestor (itself included) in `delete` or
/// `stub`; a stubbed ancestor wins over everything below it.
pub fn fate(index: &DefinitionIndex, id: &str, delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>) -> Fate {
    let mut chain = Vec::new();
    let mut cur = Some(id.to_string());
    while let Some(c) = cur {
        if chain.len() > 256 {
            break;
        }
        cur = index.get(&c).and_then(|d| d.parent.clone());
        chain.push(c);
    }
    for c in chain.iter().rev() {
        if stub.contains(c) {
            return Fate::Stub;
        }
        if delete.contains(c) {
            return Fate::Delete;
        }
    }
    Fate::Keep
}

/// Whether `d` lies in the body of an enclosing function that is stubbed: that body is
/// replaced whole, so `d` needs no edit of its own (one would overlap it).
fn in_stubbed_body(
    index: &DefinitionIndex,
    d: &Definition,
    delete: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
) -> bool {
    let mut cur = d.parent.as_deref().and_then(|p| index.get(p));
    for _ in 0..256 {
        let Some(p) = cur else { return false };
        if matches!(p.kind, DefinitionKind::Function | DefinitionKind::Method)
            && p.body.is_some()
            && fate(index, &p.id, delete, stub) == Fate::Stub
        {
            return true;
        }
        cur = p.parent.as_deref().and_then(|q| index.get(q));
    }
    false
}

const NOT_IMPLEMENTED: &str = "throw new Error(\"not implemented\");";
/// After [`NOT_IMPLEMENTED`] in a function without a declared return type that returned a
/// value (unreachable; TypeScript reports unreachable code as an error only under
/// `allowUnreachableCode: false`).
const UNTYPED_RETURN: &str = "return undefined as any;";

fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn indent_of_line(src: &str, at: usize) -> &str {
    let s = line_start(src, at);
    let rest = &src[s..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// The smallest node spanning exactly `start..end`, if any.
fn node_at(root: Node, start: usize, end: usize) -> Option<Node> {
    let mut n = root.descendant_for_byte_range(start, end)?;
    loop {
        if n.start_byte() == start && n.end_byte() == end {
            return Some(n);
        }
        n = n.parent()?;
        if n.start_byte() < start || n.end_byte() > end {
            return None;
        }
    }
}

/// Byte range deleted for a definition (or any statement) spanning `start..end`: with its
/// JSDoc, a trailing `;`, its own lines and one blank line left behind.
fn deletion_range(src: &str, mut start: usize, mut end: usize, root: Node) -> (usize, usize) {
    // A JSDoc comment right before (only whitespace between).
    let before = src[..start].trim_end();
    if before.ends_with("*/")
        && let Some(open) = before.rfind("/*")
        && before[open..].starts_with("/**")
        && root
            .descendant_for_byte_range(open, open + 1)
            .is_some_and(|n| n.kind() == "comment" && n.start_byte() == open)
    {
        start = open;
    }
    let bytes = src.as_bytes();
    let mut e = end;
    while e < bytes.len() && (bytes[e] == b' ' || bytes[e] == b'\t') {
        e += 1;
    }
    if e < bytes.len() && bytes[e] == b';' {
        end = e + 1;
    }
    let ls = line_start(src, start);
    if !src[ls..start].trim().is_empty() {
        return (start, end);
    }
    let mut e = end;
    while e < bytes.len() && (bytes[e] == b' ' || bytes[e] == b'\t' || bytes[e] == b'\r') {
        e += 1;
    }
    if e < bytes.len() && bytes[e] != b'\n' {
        return (start, end);
    }
    let mut e = (e + 1).min(bytes.len());
    // Leave at most one blank line where the definition was.
    // … or none right after the opening of a block.
    let prev_blank = ls == 0
        || src[..ls - 1]
            .rsplit('\n')
            .next()
            .is_some_and(|l| l.trim().is_empty() || l.trim_end().ends_with(['{', '(', '[']));
    if prev_blank {
        let next_line_end = src[e..].find('\n').map_or(src.len(), |i| e + i + 1);
        if src[e..next_line_end].trim().is_empty() {
            e = next_line_end;
        }
    }
    (ls, e)
}

/// Parse `source` with the grammar of `path`.
fn parse(path: &str, source: &str) -> Result<tree_sitter::Tree, MaskError> {
    let err = || MaskError::Parse { path: path.to_string() };
    let dialect = Dialect::of_path(path).ok_or_else(err)?;
    let mut parser = Parser::new();
    parser.set_language(&dialect.grammar()).map_err(|_| err())?;
    parser.parse(source, None).ok_or_else(err)
}

/// Edits that mask one TypeScript/JavaScript file; see the module documentation.
pub fn mask_file(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    delete: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
) -> Result<Vec<Edit>, MaskError> {
    let defs: Vec<&Definition> = file.definitions.iter().filter_map(|id| index.get(id)).collect();
    let fates: Vec<Fate> = defs.iter().map(|d| fate(index, &d.id, delete, stub)).collect();
    let deleted_target = |t: &str| fate(index, t, delete, stub) == Fate::Delete;
    let touches_imports =
        file.imports.iter().flat_map(|i| &i.names).any(|n| n.target.as_deref().is_some_and(deleted_target));
    if fates.iter().all(|f| *f == Fate::Keep) && !touches_imports {
        return Ok(Vec::new());
    }
    let tree = parse(&file.path, source)?;
    let root = tree.root_node();
    let mut masking =
        Masking { source, root, file, index, delete, stub, defs, fates, ranges: Vec::new(), edits: Vec::new() };
    masking.definitions()?;
    masking.imports()?;
    let Masking { mut ranges, mut edits, .. } = masking;
    local_exports(source, root, file, index, delete, stub, &mut ranges, &mut edits);
    Ok(merge_deletions(ranges, edits))
}

/// One file being masked: its definitions with their fates, and the deletions (byte ranges)
/// and other edits found so far.
struct Masking<'a> {
    source: &'a str,
    root: Node<'a>,
    file: &'a FileIndex,
    index: &'a DefinitionIndex,
    delete: &'a BTreeSet<NodeId>,
    stub: &'a BTreeSet<NodeId>,
    defs: Vec<&'a Definition>,
    fates: Vec<Fate>,
    ranges: Vec<(usize, usize)>,
    edits: Vec<Edit>,
}

impl Masking<'_> {
    fn fate(&self, id: &str) -> Fate {
        fate(self.index, id, self.delete, self.stub)
    }

    /// Delete or stub each definition whose fate says so (not those inside a deleted parent
    /// or a stubbed body, which go with it).
    fn definitions(&mut self) -> Result<(), MaskError> {
        let (source, root) = (self.source, self.root);
        for (d, f) in self.defs.iter().zip(&self.fates) {
            if d.span.end_byte > source.len()
                || !source.is_char_boundary(d.span.start_byte)
                || !source.is_char_boundary(d.span.end_byte)
            {
                return Err(MaskError::DefinitionNotFound {
                    path: self.file.path.clone(),
                    id: d.id.clone(),
                    line: d.def_line,
                });
            }
            let parent_fate = d.parent.as_deref().map_or(Fate::Keep, |p| self.fate(p));
            match f {
                Fate::Delete if parent_fate != Fate::Delete => {
                    let (s, e) = (d.span.start_byte, d.span.end_byte);
                    match node_at(root, s, e).filter(|n| n.kind() == "variable_declarator") {
                        Some(n) => self.ranges.push(declarator_range(source, n)),
                        None => self.ranges.push(deletion_range(source, s, e, root)),
                    }
                }
                Fate::Stub
                    if parent_fate != Fate::Delete && !in_stubbed_body(self.index, d, self.delete, self.stub) =>
                {
                    if let Some(e) = stub_edit(source, root, d, self.index)? {
                        self.edits.push(e);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The references of the file's code: all of them (`keep_only` false), or those of the
    /// code the mask keeps (a stub keeps its signature's).
    fn uses(&self, keep_only: bool) -> BTreeSet<&str> {
        let mut out: BTreeSet<&str> = self.file.module_references.iter().map(|m| m.target.as_str()).collect();
        for (d, f) in self.defs.iter().zip(&self.fates) {
            let (body, signature) = match (keep_only, f) {
                (false, _) | (true, Fate::Keep) => (true, true),
                (true, Fate::Stub) => (false, true),
                (true, Fate::Delete) => (false, false),
            };
            if body {
                out.extend(d.references.iter().map(String::as_str));
            }
            if signature {
                out.extend(d.load_references.iter().map(|l| l.target.as_str()));
            }
        }
        out
    }

    /// Imports and re-exports of deleted definitions, and imports that only removed code used.
    fn imports(&mut self) -> Result<(), MaskError> {
        let (source, root, file) = (self.source, self.root, self.file);
        let (before, after) = (self.uses(false), self.uses(true));
        let became_unused = |t: &str| before.contains(t) && !after.contains(t);
        // Names the mask leaves unread, by the syntax tree (packages and plain constants too).
        let removed: Vec<(usize, usize)> =
            self.ranges.iter().copied().chain(self.edits.iter().map(|e| (e.position, e.end()))).collect();
        let unread = unread::unread(source, root, file, &removed);
        let mut ranges = unread.ranges;
        let mut edits = unread.edits;
        for (i, imp) in file.imports.iter().enumerate() {
            let is_import = src_starts_with_import(source, imp.span.start_byte);
            let dropped: Vec<bool> = imp
                .names
                .iter()
                .enumerate()
                .map(|(j, n)| {
                    unread.names.contains(&(i, j))
                        || n.target
                            .as_deref()
                            .is_some_and(|t| self.fate(t) == Fate::Delete || (is_import && became_unused(t)))
                })
                .collect();
            if !dropped.iter().any(|d| *d) {
                continue;
            }
            let Some(stmt) = node_at(root, imp.span.start_byte, imp.span.end_byte) else {
                return Err(MaskError::ImportNotFound { path: file.path.clone(), line: imp.span.start_line });
            };
            let kept: Vec<&crate::index::ImportedName> =
                imp.names.iter().zip(&dropped).filter(|(_, d)| !**d).map(|(n, _)| n).collect();
            if kept.is_empty() {
                ranges.push(deletion_range(source, imp.span.start_byte, imp.span.end_byte, root));
            } else {
                edits.push(Edit::replace(imp.span.start_byte, imp.span.end_byte, render_import(source, stmt, &kept)));
            }
        }
        self.ranges.extend(ranges);
        self.edits.extend(edits);
        Ok(())
    }
}

/// Merge overlapping deletions; drop edits inside them; the edits sorted.
fn merge_deletions(mut ranges: Vec<(usize, usize)>, mut edits: Vec<Edit>) -> Vec<Edit> {
    ranges.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    edits.retain(|e| !merged.iter().any(|(s, end)| e.position < *end && e.end() > *s));
    edits.extend(merged.into_iter().map(|(s, e)| Edit::delete(s, e)));
    edits.sort();
    edits
}

/// Whether the statement at `at` is an `import` (not an `export … from`).
fn src_starts_with_import(src: &str, at: usize) -> bool {
    src.get(at..).is_some_and(|t| t.starts_with("import"))
}

/// One declarator of a multi-name `const`/`let`/`var`, with the comma that separates it.
fn declarator_range(src: &str, n: Node) -> (usize, usize) {
    if let Some(next) = n.next_sibling().filter(|s| s.kind() == ",") {
        let after = next.end_byte();
        let ws = src[after..].len() - src[after..].trim_start_matches([' ', '\t', '\n', '\r']).len();
        return (n.start_byte(), after + ws);
    }
    if let Some(prev) = n.prev_sibling().filter(|s| s.kind() == ",") {
        return (prev.start_byte(), n.end_byte());
    }
    (n.start_byte(), n.end_byte())
}

/// The body replacement of a stubbed function-like definition, if it has a body.
fn stub_edit(src: &str, root: Node, d: &Definition, index: &DefinitionIndex) -> Result<Option<Edit>, MaskError> {
    if !matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method) {
        return Ok(None);
    }
    let Some(body) = d.body else { return Ok(None) };
    let Some(node) = node_at(root, body.start_byte, body.end_byte) else {
        return Err(MaskError::DefinitionNotFound { path: d.path.clone(), id: d.id.clone(), line: d.def_line });
    };
    // A test case's callback (`it("…", () => {…})`) is not a function anything calls.
    if d.is_test && node.parent().and_then(|f| f.parent()).is_some_and(|a| a.kind() == "arguments") {
        return Ok(None);
    }
    // The indentation of the header's line (not of a decorator or JSDoc).
    let header = src.split_inclusive('\n').take(d.def_line.saturating_sub(1)).map(str::len).sum::<usize>();
    let indent = indent_of_line(src, header.min(node.start_byte()));
    let mut lines = Vec::new();
    if node.kind() == "statement_block" && d.name == "constructor" && derived_class(d, index) {
        let mut c = node.walk();
        if let Some(first) = node.named_children(&mut c).find(|n| n.kind() != "comment")
            && first.kind() == "expression_statement"
            && first.named_child(0).is_some_and(|call| {
                call.kind() == "call_expression"
                    && call.child_by_field_name("function").is_some_and(|f| f.kind() == "super")
            })
        {
            lines.push(src[first.start_byte()..first.end_byte()].to_string());
        }
    }
    lines.push(NOT_IMPLEMENTED.to_string());
    // Without a declared return type, callers see the type TypeScript infers from the
    // body: keep it usable (`any`) when the original returned a value.
    if d.signature.returns.is_none() && d.language == crate::Language::TypeScript && returns_value(node) {
        lines.push(UNTYPED_RETURN.to_string());
    }
    let inner: String = lines.iter().map(|l| format!("{indent}  {l}\n")).collect();
    Ok(Some(Edit::replace(body.start_byte, body.end_byte, format!("{{\n{inner}{indent}}}"))))
}

/// Whether a function body (or an arrow's expression body) returns a value, not counting
/// nested functions and classes.
fn returns_value(body: Node) -> bool {
    if body.kind() != "statement_block" {
        return true;
    }
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if n.kind() == "return_statement" && n.named_child_count() > 0 {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c).filter(|k| {
            !matches!(
                k.kind(),
                "function_declaration"
                    | "function_expression"
                    | "arrow_function"
                    | "method_definition"
                    | "class"
                    | "class_declaration"
                    | "generator_function"
                    | "generator_function_declaration"
            )
        }));
    }
    false
}

fn derived_class(d: &Definition, index: &DefinitionIndex) -> bool {
    d.parent.as_deref().and_then(|p| index.get(p)).is_some_and(|c| {
        c.signature.text.split(|ch: char| ch.is_whitespace() || ch == '<' || ch == '>').any(|w| w == "extends")
    })
}

/// `import`/`export … from` with only the `kept` names, in their original text.
fn render_import(src: &str, stmt: Node, kept: &[&crate::index::ImportedName]) -> String {
    let text = &src[stmt.start_byte()..stmt.end_byte()];
    if matches!(stmt.kind(), "lexical_declaration" | "variable_declaration") {
        // `const { a, b: c } = require("./m");`
        let keyword = stmt.child(0).map_or("const", |k| &src[k.start_byte()..k.end_byte()]);
        let call = text.find("require").map_or("require(\"\")", |i| text[i..].trim_end().trim_end_matches(';'));
        let specs: Vec<&str> =
            kept.iter().map(|n| src.get(n.span.start_byte..n.span.end_byte).unwrap_or(&n.name)).collect();
        let semi = if text.trim_end().ends_with(';') { ";" } else { "" };
        return format!("{keyword} {{ {} }} = {call}{semi}", specs.join(", "));
    }
    let source = stmt.child_by_field_name("source").map_or("\"\"", |s| &src[s.start_byte()..s.end_byte()]);
    let semi = if text.trim_end().ends_with(';') { ";" } else { "" };
    let is_export = stmt.kind() == "export_statement";
    let type_only = {
        let mut c = stmt.walk();
        stmt.children(&mut c).any(|n| n.kind() == "type" && !n.is_named())
    };
    let mut parts = Vec::new();
    let mut named = Vec::new();
    for n in kept {
        let t = src.get(n.span.start_byte..n.span.end_byte).unwrap_or(&n.name);
        match n.name.as_str() {
            "default" if !is_export => parts.push(n.alias.clone().unwrap_or_default()),
            "*" => parts.push(format!("* as {}", n.alias.clone().unwrap_or_default())),
            _ => named.push(t.to_string()),
        }
    }
    if !named.is_empty() {
        parts.push(format!("{{ {} }}", named.join(", ")));
    }
    let keyword = if is_export { "export" } else { "import" };
    let type_kw = if type_only { "type " } else { "" };
    format!("{keyword} {type_kw}{} from {source}{semi}", parts.join(", "))
}

/// Drop deleted names from `export { a, b }` lists and `export default a` of this file.
#[allow(clippy::too_many_arguments)]
fn local_exports(
    src: &str,
    root: Node,
    file: &FileIndex,
    index: &DefinitionIndex,
    delete: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
    ranges: &mut Vec<(usize, usize)>,
    edits: &mut Vec<Edit>,
) {
    let deleted_names: BTreeSet<&str> = file
        .definitions
        .iter()
        .filter_map(|id| index.get(id))
        .filter(|d| d.parent.is_none() && fate(index, &d.id, delete, stub) == Fate::Delete)
        .map(|d| d.name.as_str())
        .collect();
    if deleted_names.is_empty() {
        return;
    }
    let mut c = root.walk();
    for stmt in root.named_children(&mut c).filter(|n| n.kind() == "expression_statement") {
        commonjs_exports(src, root, stmt, &deleted_names, ranges, edits);
    }
    let mut c = root.walk();
    for stmt in root
        .named_children(&mut c)
        .filter(|n| n.kind() == "export_statement" && n.child_by_field_name("source").is_none())
    {
        if stmt.child_by_field_name("declaration").is_some() {
            continue;
        }
        if let Some(v) = stmt.child_by_field_name("value") {
            if v.kind() == "identifier" && deleted_names.contains(&src[v.start_byte()..v.end_byte()]) {
                ranges.push(deletion_range(src, stmt.start_byte(), stmt.end_byte(), root));
            }
            continue;
        }
        let mut c2 = stmt.walk();
        let Some(clause) = stmt.named_children(&mut c2).find(|n| n.kind() == "export_clause") else {
            continue;
        };
        let mut c3 = clause.walk();
        let specs: Vec<Node> = clause.named_children(&mut c3).filter(|n| n.kind() == "export_specifier").collect();
        let keep: Vec<&str> = specs
            .iter()
            .filter(|s| {
                let name = s.child_by_field_name("name").map_or("", |n| &src[n.start_byte()..n.end_byte()]);
                !deleted_names.contains(name)
            })
            .map(|s| &src[s.start_byte()..s.end_byte()])
            .collect();
        if keep.len() == specs.len() {
            continue;
        }
        if keep.is_empty() {
            ranges.push(deletion_range(src, stmt.start_byte(), stmt.end_byte(), root));
        } else {
            edits.push(Edit::replace(clause.start_byte(), clause.end_byte(), format!("{{ {} }}", keep.join(", "))));
        }
    }
}

/// CommonJS exports of deleted names: drop them from `module.exports = { a, b: c }`, and
/// delete `module.exports = a` / `exports.x = a` statements that export one.
fn commonjs_exports(
    src: &str,
    root: Node,
    stmt: Node,
    deleted: &BTreeSet<&str>,
    ranges: &mut Vec<(usize, usize)>,
    edits: &mut Vec<Edit>,
) {
    let Some((left, right)) = super::assignment_sides(stmt) else {
        return;
    };
    let target = &src[left.start_byte()..left.end_byte()];
    if target != "module.exports" && !target.starts_with("exports.") && !target.starts_with("module.exports.") {
        return;
    }
    let name_of = |n: Node| &src[n.start_byte()..n.end_byte()];
    match right.kind() {
        "identifier" if deleted.contains(name_of(right)) => {
            ranges.push(deletion_range(src, stmt.start_byte(), stmt.end_byte(), root));
        }
        "object" if target == "module.exports" => {
            let mut c = right.walk();
            let props: Vec<Node> = right.named_children(&mut c).filter(|p| p.kind() != "comment").collect();
            let keep: Vec<&str> = props
                .iter()
                .filter(|p| {
                    let value = match p.kind() {
                        "shorthand_property_identifier" => Some(**p),
                        "pair" => p.child_by_field_name("value").filter(|v| v.kind() == "identifier"),
                        _ => None,
                    };
                    !value.is_some_and(|v| deleted.contains(name_of(v)))
                })
                .map(|p| name_of(*p))
                .collect();
            if keep.len() != props.len() {
                edits.push(Edit::replace(right.start_byte(), right.end_byte(), format!("{{ {} }}", keep.join(", "))));
            }
        }
        _ => {}
    }
}
