//! First pass over one file: parse it, run the queries, and keep plain data (definitions
//! with their signatures, raw imports, and unresolved name uses attributed to the scope
//! that evaluates them). The tree is dropped when this returns; resolution across files
//! happens later in `link`.

use std::collections::{BTreeMap, HashSet};

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, QueryMatch};

mod uses;

use super::queries::{Purpose, QUERIES};
use super::signature;
use crate::Language;
use crate::index::{Definition, DefinitionKind, IndexError, LoadRole, Signature, Span};

/// A name use not yet resolved: `a` or `a.b.c`, evaluated in `scope` (index of a
/// definition of the same file, or `None` for module scope) at byte `pos`.
#[derive(Debug, Clone)]
pub(super) struct RawRef {
    /// The names of `a` or `a.b.c`, joined by `.` (one allocation per use).
    pub chain: Box<str>,
    pub scope: Option<usize>,
    pub pos: usize,
    /// 1-based line, for module-level uses only (the index lists their lines); 0 elsewhere.
    pub line: usize,
    /// For a use in a function body that is the callee of a call whose value is discarded
    /// (an expression statement `f(x)`, `self.m(x)`, `await self.m(x)`): that statement; or
    /// whose value is only tested (`v = f(x)` then `if v: …`): both statements, and `true`.
    pub call_statement: Option<(Span, bool)>,
}

#[derive(Debug)]
pub(super) struct RawDef {
    /// Complete except `references` and `load_references`, filled in by `link`.
    pub def: Definition,
    pub parent: Option<usize>,
    /// Byte where the `def`/`class` keyword (or `async`) starts, after decorators.
    pub keyword_start: usize,
    pub body_start: usize,
    pub body_end: usize,
    /// Names local to this function: parameters and assigned names, minus `global`s.
    pub locals: HashSet<String>,
    pub body_refs: Vec<RawRef>,
    pub load_refs: Vec<(RawRef, LoadRole)>,
}

impl RawDef {
    pub fn is_class(&self) -> bool {
        self.def.kind == DefinitionKind::Class
    }
    fn in_body(&self, pos: usize) -> bool {
        self.body_start <= pos && pos < self.body_end
    }
}

#[derive(Debug, Clone)]
pub(super) struct RawName {
    pub name: String,
    pub alias: Option<String>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(super) enum RawImportKind {
    /// `import a.b [as c]`: one `RawImport` per module of the statement.
    Plain {
        alias: Option<String>,
    },
    From {
        names: Vec<RawName>,
        wildcard: bool,
    },
    Future {
        names: Vec<RawName>,
    },
}

#[derive(Debug, Clone)]
pub(super) struct RawImport {
    pub span: Span,
    /// As written: `.core`, `..`, `pkg.core`.
    pub module: String,
    /// Leading dots.
    pub level: usize,
    /// The module without leading dots.
    pub dotted: String,
    pub kind: RawImportKind,
    /// Scope that the import binds names in.
    pub scope: Option<usize>,
}

/// A statement or entry that names definitions only to bind a value (see
/// [`crate::index::ValueBinding`]), with its name uses.
#[derive(Debug)]
pub(super) struct RawBinding {
    /// The statement, or the entry of a container literal.
    pub span: Span,
    /// The whole statement (uses inside it are not uses of what it binds).
    pub statement: (usize, usize),
    pub name: String,
    pub entry: bool,
    /// The class whose body holds it.
    pub class: Option<usize>,
    /// Uses inside it; `line` is set.
    pub refs: Vec<RawRef>,
    /// For a whole statement whose value is a call (`_obj = Client()`), the callee's chain:
    /// the name may hold an instance of that class (`encode = _obj.encode` names
    /// `Client.encode`).
    pub constructs: Option<Box<str>>,
}

#[derive(Debug)]
pub(super) struct ParsedFile {
    pub path: String,
    pub sha256: String,
    pub lines: usize,
    pub defs: Vec<RawDef>,
    pub imports: Vec<RawImport>,
    pub module_refs: Vec<RawRef>,
    pub exports: Vec<String>,
    pub bindings: Vec<RawBinding>,
}

pub(super) fn new_parser() -> Parser {
    let mut parser = Parser::new();
    // The grammar is compiled into the crate with a matching ABI; a mismatch would be a
    // build error of the crate, checked by every test.
    parser.set_language(&Language::Python.grammar()).expect("tree-sitter-python matches the tree-sitter ABI");
    parser
}

pub(super) fn span(node: Node) -> Span {
    span_of(node.start_byte(), node.end_byte(), node.start_position().row, node.end_position())
}

fn span_of(start_byte: usize, end_byte: usize, start_row: usize, end: tree_sitter::Point) -> Span {
    // A node ending at column 0 ends on the previous line (inclusive line numbers).
    let end_line = if end.column == 0 && end.row > start_row { end.row } else { end.row + 1 };
    Span { start_byte, end_byte, start_line: start_row + 1, end_line }
}

use crate::syntax::count_lines;

pub(super) fn parse_file(parser: &mut Parser, path: &str, source: &[u8]) -> Result<ParsedFile, IndexError> {
    let src = crate::syntax::utf8(path, source)?;
    let tree = parser.parse(src, None).ok_or_else(|| IndexError::Syntax {
        path: path.to_string(),
        line: 1,
        message: "tree-sitter produced no tree".to_string(),
    })?;
    let root = tree.root_node();
    if root.has_error() {
        let (line, message) = first_error(root, src);
        return Err(IndexError::Syntax { path: path.to_string(), line, message });
    }
    let mut found = collect(root, src);
    let mut defs = definitions(&found.defs, path, src);
    let imports_found = std::mem::take(&mut found.imports);
    let exports_found = std::mem::take(&mut found.exports);
    let mut module_refs = Vec::new();
    let mut bindings = Vec::new();
    uses::collect_uses(found, src, &mut defs, &mut module_refs, &mut bindings);
    let imports = imports(imports_found, &defs);
    let exports = exports(exports_found, &defs);
    Ok(ParsedFile {
        path: path.to_string(),
        sha256: crate::syntax::sha256_hex(source),
        lines: count_lines(source),
        defs,
        imports,
        module_refs,
        exports,
        bindings,
    })
}

/// Line and description of the first ERROR or MISSING node, in document order.
fn first_error(root: Node, src: &str) -> (usize, String) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_missing() {
            return (node.start_position().row + 1, format!("syntax error: missing `{}`", node.kind()));
        }
        if node.is_error() {
            let snippet: String = signature::text(node, src).lines().next().unwrap_or("").chars().take(40).collect();
            return (node.start_position().row + 1, format!("syntax error near `{}`", snippet.trim()));
        }
        // Descend only into subtrees that contain the error.
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return (root.start_position().row + 1, "syntax error".to_string());
            }
        }
    }
}

/// Index of the innermost definition whose span contains `pos` (`defs` sorted by start).
fn innermost(defs: &[RawDef], pos: usize) -> Option<usize> {
    let after = defs.partition_point(|d| d.def.span.start_byte <= pos);
    let mut cur = after.checked_sub(1);
    while let Some(i) = cur {
        if pos < defs[i].def.span.end_byte {
            return Some(i);
        }
        cur = defs[i].parent;
    }
    None
}

/// The scope evaluating code at `pos`: the innermost definition whose *body* holds it
/// (headers — decorators, defaults, bases — run in the enclosing scope).
fn scope_at(defs: &[RawDef], pos: usize) -> Option<usize> {
    let d = innermost(defs, pos)?;
    if defs[d].in_body(pos) { Some(d) } else { defs[d].parent }
}

/// Nodes of one `function_definition`/`class_definition` match.
struct DefMatch<'t> {
    node: Node<'t>,
    /// `node`, or its `decorated_definition` parent.
    outer: Node<'t>,
    is_class: bool,
    name: Node<'t>,
    params: Option<Node<'t>>,
    returns: Option<Node<'t>>,
    bases: Option<Node<'t>>,
    type_parameters: Option<Node<'t>>,
    body: Node<'t>,
}

/// One match of imports.scm: a statement and one of its names.
struct ImportMatch<'t> {
    stmt: Node<'t>,
    kind: ImportKind,
    module: Option<String>,
    from: Option<String>,
    name: Option<String>,
    alias: Option<String>,
    item: Node<'t>,
    wildcard: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ImportKind {
    Plain,
    From,
    Future,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum UseKind {
    /// An identifier.
    Name,
    /// An `attribute` node.
    Chain,
    /// A `dotted_name` node.
    Dotted,
}

/// Everything the queries found, from one walk over the tree.
#[derive(Default)]
struct Collected<'t> {
    defs: Vec<DefMatch<'t>>,
    /// (node, how to read its name chain)
    uses: Vec<(Node<'t>, UseKind)>,
    not_uses: HashSet<usize>,
    ranges: Vec<(usize, usize)>,
    /// (position, name, is a parameter)
    bindings: Vec<(usize, String, bool)>,
    globals: Vec<(usize, String)>,
    imports: Vec<ImportMatch<'t>>,
    exports: Vec<(usize, String)>,
}

/// One walk over the tree: every identifier is a candidate use, and the queries run on
/// the nodes where their patterns start (instead of a query cursor visiting every node).
fn collect<'t>(root: Node<'t>, src: &str) -> Collected<'t> {
    let queries = &*QUERIES;
    let mut out = Collected::default();
    let mut query_cursor = QueryCursor::new();
    query_cursor.set_max_start_depth(Some(0));
    let mut cursor = root.walk();
    // The ancestors of the cursor's node, and their kinds.
    let mut parents: Vec<Node<'t>> = Vec::new();
    let mut parent_kinds: Vec<u16> = Vec::new();
    loop {
        let node = cursor.node();
        let kind = node.kind_id();
        if kind == queries.identifier || kind == queries.attribute {
            // The parts of a chain (`a` and `b` of `a.b`, `a.b` of `a.b.c`, the names of a
            // dotted name) are not uses: the maximal chain stands for them.
            let parent = parent_kinds.last().copied().unwrap_or(0);
            let part = parent == queries.dotted_name
                || (parent == queries.attribute
                    && cursor
                        .field_id()
                        .is_some_and(|f| f.get() == queries.object_field || f.get() == queries.attribute_field));
            if !part {
                // A chain not rooted at an identifier (`f().x`) is dropped by `attribute_chain`.
                out.uses.push((node, if kind == queries.identifier { UseKind::Name } else { UseKind::Chain }));
            }
        } else if queries.is_root(kind) {
            collect_matches(&mut query_cursor, node, parents.last().copied(), src, &mut out);
        }
        if cursor.goto_first_child() {
            parents.push(node);
            parent_kinds.push(kind);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
            parents.pop();
            parent_kinds.pop();
        }
    }
}

/// Matches of the queries rooted at `node`.
fn collect_matches<'t>(
    cursor: &mut QueryCursor,
    node: Node<'t>,
    parent: Option<Node<'t>>,
    src: &str,
    out: &mut Collected<'t>,
) {
    let queries = &*QUERIES;
    let mut matches = cursor.matches(&queries.query, node, src.as_bytes());
    while let Some(m) = matches.next() {
        match queries.purpose(m.pattern_index) {
            Purpose::Definitions => definition_match(m, parent, out),
            Purpose::References => reference_match(m, src, out),
            Purpose::Imports => import_match(m, src, out),
            Purpose::Exports => {
                let k = &queries.captures;
                for c in m.captures.iter().filter(|c| c.index == k.export) {
                    out.exports.push((c.node.start_byte(), signature::text(c.node, src).to_string()));
                }
            }
        }
    }
}

/// Records the function or class of one definitions.scm match (with its decorated span).
fn definition_match<'t>(m: &QueryMatch<'_, 't>, parent: Option<Node<'t>>, out: &mut Collected<'t>) {
    let queries = &*QUERIES;
    let k = &queries.captures;
    let (mut node, mut is_class, mut name, mut params, mut returns, mut bases, mut body) =
        (None, false, None, None, None, None, None);
    let mut type_parameters = None;
    for c in m.captures {
        let i = c.index;
        if i == k.definition_function || i == k.definition_class {
            node = Some(c.node);
            is_class = i == k.definition_class;
        } else if i == k.name {
            name = Some(c.node);
        } else if i == k.parameters {
            params = Some(c.node);
        } else if i == k.returns {
            returns = Some(c.node);
        } else if i == k.bases {
            bases = Some(c.node);
        } else if i == k.body {
            body = Some(c.node);
        } else if i == k.type_parameters {
            type_parameters = Some(c.node);
        }
    }
    if let (Some(node), Some(name), Some(body)) = (node, name, body) {
        // A `decorated_definition` parent is the definition's full span.
        let outer = parent.filter(|p| p.kind_id() == queries.decorated_definition).unwrap_or(node);
        out.defs.push(DefMatch { node, outer, is_class, name, params, returns, bases, type_parameters, body });
    }
}

/// Records the uses, bindings, globals and ignored nodes of one references.scm match.
fn reference_match<'t>(m: &QueryMatch<'_, 't>, src: &str, out: &mut Collected<'t>) {
    let k = &QUERIES.captures;
    let text = |n: Node| signature::text(n, src).to_string();
    for c in m.captures {
        let (i, node) = (c.index, c.node);
        if i == k.reference_dotted {
            out.uses.push((node, UseKind::Dotted));
        } else if i == k.reference_pattern {
            if node.named_child_count() > 1 {
                out.uses.push((node, UseKind::Dotted));
            } else {
                out.bindings.push((node.start_byte(), text(node), false));
            }
        } else if i == k.local_parameter || i == k.local_assign {
            out.not_uses.insert(node.id());
            out.bindings.push((node.start_byte(), text(node), i == k.local_parameter));
        } else if i == k.local_global {
            out.not_uses.insert(node.id());
            out.globals.push((node.start_byte(), text(node)));
        } else if i == k.ignore {
            out.not_uses.insert(node.id());
        } else if i == k.ignore_range {
            out.ranges.push((node.start_byte(), node.end_byte()));
        }
    }
}

/// Records the statement and imported name of one imports.scm match.
fn import_match<'t>(m: &QueryMatch<'_, 't>, src: &str, out: &mut Collected<'t>) {
    let k = &QUERIES.captures;
    let text = |n: Node| signature::text(n, src).to_string();
    let (mut stmt, mut kind, mut item) = (None, ImportKind::Plain, None);
    let (mut module, mut from, mut name, mut alias, mut wildcard) = (None, None, None, None, false);
    for c in m.captures {
        let i = c.index;
        if i == k.import || i == k.import_from || i == k.import_future {
            stmt = Some(c.node);
            kind = if i == k.import {
                ImportKind::Plain
            } else if i == k.import_from {
                ImportKind::From
            } else {
                ImportKind::Future
            };
        } else if i == k.module {
            module = Some(text(c.node));
        } else if i == k.from {
            from = Some(text(c.node));
        } else if i == k.name {
            name = Some(text(c.node));
        } else if i == k.alias {
            alias = Some(text(c.node));
        } else if i == k.item {
            item = Some(c.node);
        } else if i == k.wildcard {
            wildcard = true;
        }
    }
    if let (Some(stmt), Some(item)) = (stmt, item) {
        out.imports.push(ImportMatch { stmt, kind, module, from, name, alias, item, wildcard });
    }
}

fn definitions(matches: &[DefMatch], path: &str, src: &str) -> Vec<RawDef> {
    let mut found: Vec<RawDef> = matches.iter().map(|m| build_def(m, path, src)).collect();
    found.sort_by_key(|d| d.def.span.start_byte);
    found.dedup_by_key(|d| d.def.span.start_byte);

    // Parents by nesting (spans nest properly), then qualified names and ids.
    let mut stack: Vec<usize> = Vec::new();
    for i in 0..found.len() {
        while stack.last().is_some_and(|&top| found[top].def.span.end_byte <= found[i].def.span.start_byte) {
            stack.pop();
        }
        if let Some(&parent) = stack.last() {
            found[i].parent = Some(parent);
            found[i].def.qualname = format!("{}.{}", found[parent].def.qualname, found[i].def.name);
            if found[i].def.kind == DefinitionKind::Function && found[parent].is_class() {
                found[i].def.kind = DefinitionKind::Method;
            }
        }
        stack.push(i);
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for d in &found {
        *counts.entry(d.def.qualname.as_str()).or_default() += 1;
    }
    let ids: Vec<String> = found
        .iter()
        .map(|d| {
            if counts.get(d.def.qualname.as_str()).copied().unwrap_or(0) > 1 {
                format!("{path}::{}@L{}", d.def.qualname, d.def.def_line)
            } else {
                format!("{path}::{}", d.def.qualname)
            }
        })
        .collect();
    for d in found.iter_mut() {
        d.def.parent = d.parent.map(|p| ids[p].clone());
    }
    for (d, id) in found.iter_mut().zip(ids) {
        d.def.id = id;
    }
    found
}

fn build_def(m: &DefMatch, path: &str, src: &str) -> RawDef {
    let DefMatch { node, outer, is_class, name, params, returns, bases, type_parameters, body } = *m;
    let q = &*QUERIES;
    let mut decorators = Vec::new();
    if outer.id() != node.id() {
        let mut c = outer.walk();
        for child in outer.named_children(&mut c).filter(|n| n.kind_id() == q.decorator) {
            decorators.push(signature::decorator(child, src));
        }
    }
    let is_async = node.child(0).is_some_and(|c| c.kind_id() == q.async_keyword);
    let name = signature::text(name, src).to_string();
    let signature = Signature {
        text: signature::header(node, body, src),
        parameters: params.map(|p| signature::parameters(p, src)).unwrap_or_default(),
        returns: returns.map(|r| signature::text(r, src).to_string()),
        is_async,
        decorators,
        bases: bases.map(|b| signature::arguments(b, src)).unwrap_or_default(),
        type_parameters: type_parameters.map(|t| signature::text(t, src).to_string()),
        // Fields other languages use (receivers) stay empty.
        ..Signature::default()
    };
    let def_line = node.start_position().row + 1;
    RawDef {
        def: Definition {
            id: String::new(),
            language: Language::Python,
            path: path.to_string(),
            qualname: name.clone(),
            name,
            kind: if is_class { DefinitionKind::Class } else { DefinitionKind::Function },
            span: span(outer),
            def_line,
            body: Some(span(body)),
            signature,
            docstring: signature::docstring(body, src),
            parent: None,
            is_test: super::modules::is_test_path(path),
            references: Vec::new(),
            load_references: Vec::new(),
        },
        parent: None,
        keyword_start: node.start_byte(),
        body_start: body.start_byte(),
        body_end: body.end_byte().max(node.end_byte()),
        locals: HashSet::new(),
        body_refs: Vec::new(),
        load_refs: Vec::new(),
    }
}

fn imports(matches: Vec<ImportMatch>, defs: &[RawDef]) -> Vec<RawImport> {
    // Statement start -> the statement's names, with their item start.
    #[derive(Default)]
    struct Stmt {
        span: Option<Span>,
        from: String,
        future: bool,
        wildcard: bool,
        names: Vec<(usize, RawName)>,
    }
    let mut plain: Vec<(usize, RawImport)> = Vec::new();
    let mut froms: BTreeMap<usize, Stmt> = BTreeMap::new();
    for ImportMatch { stmt, kind, module, from, name, alias, item, wildcard } in matches {
        let stmt_span = span(stmt);
        let scope = scope_at(defs, stmt.start_byte());
        match kind {
            ImportKind::Plain => {
                let Some(module) = module else { continue };
                let module: String = module.split_whitespace().collect();
                plain.push((
                    item.start_byte(),
                    RawImport {
                        span: stmt_span,
                        dotted: module.clone(),
                        module,
                        level: 0,
                        kind: RawImportKind::Plain { alias },
                        scope,
                    },
                ));
            }
            ImportKind::From | ImportKind::Future => {
                let entry = froms.entry(stmt.start_byte()).or_default();
                entry.span = Some(stmt_span);
                entry.future = kind == ImportKind::Future;
                if let Some(from) = from {
                    entry.from = from.split_whitespace().collect();
                }
                if wildcard {
                    entry.wildcard = true;
                    entry
                        .names
                        .push((item.start_byte(), RawName { name: "*".to_string(), alias: None, span: span(item) }));
                } else if let Some(name) = name {
                    let name: String = name.split_whitespace().collect();
                    entry.names.push((item.start_byte(), RawName { name, alias, span: span(item) }));
                }
            }
        }
    }
    let mut out: Vec<(usize, RawImport)> = plain;
    for (start, mut stmt) in froms {
        let Some(span) = stmt.span else { continue };
        stmt.names.sort_by_key(|(pos, _)| *pos);
        stmt.names.dedup_by_key(|(pos, _)| *pos);
        let names: Vec<RawName> = stmt.names.into_iter().map(|(_, n)| n).collect();
        let (module, level, dotted, kind) = if stmt.future {
            ("__future__".to_string(), 0, "__future__".to_string(), RawImportKind::Future { names })
        } else {
            let level = stmt.from.chars().take_while(|&c| c == '.').count();
            let dotted = stmt.from[level..].to_string();
            (stmt.from, level, dotted, RawImportKind::From { names, wildcard: stmt.wildcard })
        };
        out.push((start, RawImport { span, module, level, dotted, kind, scope: scope_at(defs, start) }));
    }
    out.sort_by_key(|(pos, _)| *pos);
    out.into_iter().map(|(_, i)| i).collect()
}

/// `__all__` string entries at module level, in order, without duplicates.
fn exports(mut found: Vec<(usize, String)>, defs: &[RawDef]) -> Vec<String> {
    found.retain(|(pos, _)| scope_at(defs, *pos).is_none());
    found.sort();
    found.dedup_by_key(|(pos, _)| *pos);
    let mut seen = HashSet::new();
    found.into_iter().map(|(_, s)| s).filter(|s| seen.insert(s.clone())).collect()
}
