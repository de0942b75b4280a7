//! One TypeScript/JavaScript file → plain data: its definitions (with signatures, JSDoc,
//! nesting), the names each one uses (unresolved), its imports, exports and re-exports.
//! The tree is dropped when the file is done; `link` resolves names across files.
//!
//! Submodules: `family` (parents and siblings from the walk), `definition` (one match → a
//! definition with its signature; overloads folded, names qualified).

mod definition;
mod family;

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, QueryMatch, Tree};

use super::queries::{Captures, Dialect, Kinds, Queries};
use crate::Language;
use crate::index::{Definition, DefinitionKind, Import, IndexError, LoadRole, Span};
use definition::{merge_overloads, qualify, raw_def};
use family::Family;

/// The Fx hash (as in rustc): much cheaper than SipHash for the short keys the indexer
/// hashes (node ids, names); no protection against crafted collisions is needed here.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<FxHasher>;
pub(crate) type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
pub(crate) type FxHashSet<T> = HashSet<T, FxBuild>;

/// A name used by a definition (or by module-level code), before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ref {
    Name(String),
    Member { object: Object, member: String },
}

/// The object of `obj.member`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Object {
    This,
    Name(String),
    Other,
}

#[derive(Debug)]
pub(crate) struct RawDef {
    /// `id`, `parent` and `references` are filled by the linker.
    pub def: Definition,
    pub parent: Option<usize>,
    /// Names it is exported under from its module (`default` for `export default`).
    pub exported_as: Vec<String>,
    /// Names used, with the load role of those outside a function body (signature types,
    /// decorators, heritage, a type's own body): what a stub of it still needs.
    pub refs: Vec<(Ref, Option<LoadRole>)>,
    /// First identifiers of the `extends`/`implements` types.
    pub heritage: Vec<String>,
    /// Interface members (property and method signatures) by name.
    pub member_names: Vec<String>,
    /// An overload signature (folded into its implementation by `merge_overloads`).
    pub overload: bool,
    /// A test case (`it("…", () => …)`): named by its title, never in scope as a name.
    pub test_case: bool,
    /// Where the header starts, after decorators.
    pub sig_start: usize,
}

/// A name bound by an import: `local` refers to export `imported` of `imports[import]`
/// (`*` for a namespace import).
#[derive(Debug)]
pub(crate) struct Binding {
    pub local: String,
    pub import: usize,
    pub imported: String,
}

/// `export … from "spec"`: `export { imported as exported }` or `export *` (both `None`).
#[derive(Debug)]
pub(crate) struct ReExport {
    pub import: usize,
    pub imported: Option<String>,
    pub exported: Option<String>,
}

#[derive(Debug)]
pub(crate) struct ParsedFile {
    pub path: String,
    pub language: Language,
    pub is_test: bool,
    pub sha256: String,
    pub lines: usize,
    pub defs: Vec<RawDef>,
    /// Import statements and `export … from` statements, in source order.
    pub imports: Vec<Import>,
    pub bindings: Vec<Binding>,
    /// `export { local as exported }` and `export default local`.
    pub local_exports: Vec<(String, String)>,
    pub reexports: Vec<ReExport>,
    /// Names used outside every definition, with their 1-based line.
    pub module_refs: Vec<(Ref, usize)>,
}

pub(crate) use crate::syntax::text;

pub(crate) fn span_of(start: Node, end: Node) -> Span {
    Span {
        start_byte: start.start_byte(),
        end_byte: end.end_byte(),
        start_line: start.start_position().row + 1,
        end_line: end.end_position().row + 1,
    }
}

use crate::syntax::count_lines;

/// Which definition capture matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cap {
    Function,
    Overload,
    Class,
    Method,
    Field,
    Property,
    Variable,
    Interface,
    TypeAlias,
    Enum,
    Namespace,
    Test,
}

struct Found<'t> {
    cap: Cap,
    node: Node<'t>,
    name: Node<'t>,
    /// The node whose range is the definition's (statement, declarator, member).
    stmt: Node<'t>,
    /// Start of the span: the statement, or the first decorator of a class member.
    start: Node<'t>,
}

const TEST_CALLEES: &[&str] = &["describe", "it", "test", "suite", "context", "bench"];

/// What one indexing thread reuses from file to file.
pub(crate) struct Worker {
    parser: Parser,
    cursor: QueryCursor,
}

pub(crate) fn new_parser() -> Worker {
    Worker { parser: Parser::new(), cursor: QueryCursor::new() }
}

/// A name used, as byte ranges of the source (turned into strings once deduplicated).
enum RawRef {
    Name(Range<usize>),
    Member { object: RawObject, member: Range<usize> },
}

enum RawObject {
    This,
    Name(Range<usize>),
    Other,
}

/// A [`RawRef`] compared by text: (kind, object or name, member).
type RefKey<'s> = (u8, &'s str, &'s str);

impl RawRef {
    fn key<'s>(&self, src: &'s str) -> RefKey<'s> {
        let t = |r: &Range<usize>| src.get(r.clone()).unwrap_or("");
        match self {
            RawRef::Name(n) => (0, t(n), ""),
            RawRef::Member { object, member } => match object {
                RawObject::This => (1, "", t(member)),
                RawObject::Name(o) => (2, t(o), t(member)),
                RawObject::Other => (3, "", t(member)),
            },
        }
    }

    fn to_ref(&self, src: &str) -> Ref {
        let t = |r: &Range<usize>| src.get(r.clone()).unwrap_or("").to_string();
        match self {
            RawRef::Name(n) => Ref::Name(t(n)),
            RawRef::Member { object, member } => Ref::Member {
                object: match object {
                    RawObject::This => Object::This,
                    RawObject::Name(o) => Object::Name(t(o)),
                    RawObject::Other => Object::Other,
                },
                member: t(member),
            },
        }
    }
}

/// What the query matches of one file collect.
struct Collect<'t> {
    found: Vec<Found<'t>>,
    /// Start bytes of names that declare rather than use.
    names: Vec<usize>,
    imports: Vec<Node<'t>>,
    exports: Vec<Node<'t>>,
}

/// Read one match of the definitions/imports query.
fn take_match<'t>(
    m: &QueryMatch<'_, 't>,
    caps: &Captures,
    src: &str,
    is_test: bool,
    st: &mut Collect<'t>,
    fam: &mut Family<'t>,
) {
    let k = fam.kinds;
    let is = |c: Option<u32>, idx: u32| c == Some(idx);
    let mut def: Option<(Cap, Node)> = None;
    let (mut name, mut callee) = (None, None);
    for c in m.captures {
        let i = c.index;
        let cap = if is(caps.function, i) {
            Some(Cap::Function)
        } else if is(caps.overload, i) {
            Some(Cap::Overload)
        } else if is(caps.class, i) {
            Some(Cap::Class)
        } else if is(caps.method, i) {
            Some(Cap::Method)
        } else if is(caps.field, i) {
            Some(Cap::Field)
        } else if is(caps.property, i) {
            Some(Cap::Property)
        } else if is(caps.variable, i) {
            Some(Cap::Variable)
        } else if is(caps.interface, i) {
            Some(Cap::Interface)
        } else if is(caps.type_alias, i) {
            Some(Cap::TypeAlias)
        } else if is(caps.enumeration, i) {
            Some(Cap::Enum)
        } else if is(caps.namespace, i) {
            Some(Cap::Namespace)
        } else if is(caps.test, i) {
            Some(Cap::Test)
        } else {
            None
        };
        if let Some(cap) = cap {
            def = Some((cap, c.node));
        } else if is(caps.name, i) {
            name = Some(c.node);
        } else if is(caps.callee, i) {
            callee = Some(c.node);
        } else if is(caps.import, i) || is(caps.require, i) {
            fam.parent(c.node);
            st.imports.push(c.node);
        } else if is(caps.export, i) || is(caps.cjs, i) {
            fam.parent(c.node);
            st.exports.push(c.node);
        }
    }
    let (Some((cap, node)), Some(name)) = (def, name) else {
        return;
    };
    if cap == Cap::Property && k.child(node, k.field_value).is_some_and(|v| k.is_function_value(v.kind_id())) {
        // A method-like field: `@definition.field` has it.
        return;
    }
    if cap == Cap::Test {
        let head = callee.map(|c| text(c, src).split('.').next().unwrap_or("")).unwrap_or("");
        if !is_test || !TEST_CALLEES.contains(&head) {
            return;
        }
    } else {
        st.names.push(name.start_byte());
    }
    let stmt = match cap {
        Cap::Variable if node.kind_id() == k.assignment_expression => fam.statement_of(node),
        Cap::Variable => fam.variable_statement(node),
        Cap::Class if node.kind_id() == k.variable_declarator => fam.variable_statement(node),
        Cap::Method | Cap::Field | Cap::Overload | Cap::Property if fam.in_class_body(node) => node,
        Cap::Test => fam.parent(node).filter(|p| p.kind_id() == k.expression_statement).unwrap_or(node),
        _ => fam.statement_of(node),
    };
    let start = if fam.in_class_body(stmt) { fam.first_decorator(stmt) } else { stmt };
    st.found.push(Found { cap, node, name, stmt, start });
}

pub(crate) fn parse_file(worker: &mut Worker, path: &str, source: &[u8]) -> Result<ParsedFile, IndexError> {
    let Worker { parser, cursor } = worker;
    let src = crate::syntax::utf8(path, source)?;
    let syntax = |message: &str| IndexError::Syntax { path: path.to_string(), line: 1, message: message.to_string() };
    let dialect = Dialect::of_path(path).ok_or_else(|| syntax("not a TypeScript or JavaScript file"))?;
    parser.set_language(&dialect.grammar()).map_err(|_| syntax("the grammar could not be loaded"))?;
    let tree = parser.parse(src, None).ok_or_else(|| syntax("tree-sitter produced no tree"))?;
    let is_test = super::super::is_test_path(path);
    let q = dialect.queries();
    let kinds = &q.kinds;
    let mut fam = Family::new(kinds);
    let (st, mut refs) = walk(&tree, cursor, q, src, is_test, &mut fam);
    let Collect { mut found, mut names, imports, exports } = st;
    drop_declaring_names(&mut refs, &mut names, &imports, &exports);
    found.sort_by_key(|f| (f.start.start_byte(), std::cmp::Reverse(f.stmt.end_byte())));
    found.dedup_by(|a, b| a.stmt.id() == b.stmt.id() && a.name.id() == b.name.id());
    let parents = nesting(&found);
    let mut defs: Vec<RawDef> = found.iter().map(|f| raw_def(f, src, dialect, is_test, &mut fam)).collect();
    for (d, p) in defs.iter_mut().zip(&parents) {
        d.parent = *p;
    }
    merge_overloads(&mut defs);
    qualify(&mut defs);
    let module_refs = attribute_refs(&mut defs, refs, src, source);
    let mut file = ParsedFile {
        path: path.to_string(),
        language: dialect.language(),
        is_test,
        sha256: crate::syntax::sha256_hex(source),
        lines: count_lines(source),
        defs,
        imports: Vec::new(),
        bindings: Vec::new(),
        local_exports: Vec::new(),
        reexports: Vec::new(),
        module_refs,
    };
    let mut statements: Vec<Node> = imports.into_iter().chain(exports).collect();
    statements.sort_by_key(|n| n.start_byte());
    statements.dedup_by_key(|n| n.id());
    for s in statements {
        let module_level = fam.parent_kind(s) == Some(kinds.program);
        super::read_import_or_export(&mut file, s, src, module_level);
    }
    Ok(file)
}

/// One walk over the tree: it reads the names used (references) itself, and runs the
/// definitions/imports query only on the nodes where one of its patterns starts, no
/// deeper than those patterns reach.
fn walk<'t>(
    tree: &'t Tree,
    cursor: &mut QueryCursor,
    q: &Queries,
    src: &str,
    is_test: bool,
    fam: &mut Family<'t>,
) -> (Collect<'t>, Vec<(usize, RawRef)>) {
    // Test cases are only kept in test files: other files run the query without them.
    let (query, roots) = if is_test { (&q.query, &q.roots) } else { (&q.query_no_tests, &q.roots_no_tests) };
    let kinds = &q.kinds;
    let mut st = Collect { found: Vec::new(), names: Vec::new(), imports: Vec::new(), exports: Vec::new() };
    let mut refs: Vec<(usize, RawRef)> = Vec::new();
    cursor.set_max_start_depth(Some(0));
    let mut walk = tree.walk();
    'walk: loop {
        let node = walk.node();
        let kind = node.kind_id();
        if roots.get(kind as usize).copied().unwrap_or(false) {
            fam.at = Some(node);
            let mut matches = cursor.matches(query, node, src.as_bytes());
            while let Some(m) = matches.next() {
                take_match(m, &q.captures, src, is_test, &mut st, fam);
            }
        }
        if let Some(r) = reference_at(node, kinds) {
            refs.push(r);
        }
        if walk.goto_first_child() {
            fam.ancestors.push(node);
            continue;
        }
        while !walk.goto_next_sibling() {
            if !walk.goto_parent() {
                break 'walk;
            }
            fam.ancestors.pop();
        }
    }
    fam.at = None;
    (st, refs)
}

/// The name `node` uses, with where it starts: an identifier, or the member of `obj.member`
/// (`ns.Type` in types).
fn reference_at(node: Node, kinds: &Kinds) -> Option<(usize, RawRef)> {
    let kind = node.kind_id();
    if kind == kinds.identifier || kind == kinds.type_identifier || kind == kinds.shorthand_property_identifier {
        return Some((node.start_byte(), RawRef::Name(node.byte_range())));
    }
    if kind != kinds.member_expression && kind != kinds.nested_type_identifier {
        return None;
    }
    let (object, member) = if kind == kinds.member_expression {
        (kinds.field_object, kinds.field_property)
    } else {
        (kinds.field_module, kinds.field_name)
    };
    let object = object.and_then(|f| node.child_by_field_id(f.get()));
    let member = member.and_then(|f| node.child_by_field_id(f.get())).filter(|m| {
        m.kind_id() == if kind == kinds.member_expression { kinds.property_identifier } else { kinds.type_identifier }
    });
    let (Some(o), Some(mem)) = (object.filter(|o| o.is_named()), member) else { return None };
    let object = if o.kind_id() == kinds.this {
        RawObject::This
    } else if o.kind_id() == kinds.identifier {
        RawObject::Name(o.byte_range())
    } else {
        RawObject::Other
    };
    Some((mem.start_byte(), RawRef::Member { object, member: mem.byte_range() }))
}

/// Drop the plain names that declare rather than use: definition names (`names`), import
/// and re-export specifiers, `export { a }` lists and `export default a` (read as exports
/// later).
fn drop_declaring_names(refs: &mut Vec<(usize, RawRef)>, names: &mut Vec<usize>, imports: &[Node], exports: &[Node]) {
    let mut skip: Vec<(usize, usize)> = Vec::new();
    for st in imports.iter().chain(exports) {
        if st.kind() == "expression_statement" {
            // CommonJS `module.exports = { a, b: c }` / `exports.x = a` name exports; other
            // right-hand sides (functions, calls) are code.
            let right = st.named_child(0).and_then(|a| a.child_by_field_name("right"));
            match right {
                Some(r) if r.kind() == "object" => skip.push((r.start_byte(), r.end_byte())),
                Some(r) if r.kind() == "identifier" => names.push(r.start_byte()),
                _ => {}
            }
        } else if st.kind() == "import_statement" || st.child_by_field_name("source").is_some() {
            skip.push((st.start_byte(), st.end_byte()));
        } else if let Some(v) = st.child_by_field_name("value") {
            if v.kind() == "identifier" {
                names.push(v.start_byte());
            }
        } else {
            skip.push((st.start_byte(), st.end_byte()));
        }
    }
    names.sort_unstable();
    names.dedup();
    skip.sort_unstable();
    let skipped = |at: usize| {
        let i = skip.partition_point(|(s, _)| *s <= at);
        i > 0 && at < skip[i - 1].1
    };
    refs.retain(|(start, r)| {
        !(matches!(r, RawRef::Name(_)) && (names.binary_search(start).is_ok() || skipped(*start)))
    });
}

/// Nesting by containment of spans (`found` sorted by start, outermost first): each
/// definition's parent.
fn nesting(found: &[Found]) -> Vec<Option<usize>> {
    let mut parents: Vec<Option<usize>> = Vec::with_capacity(found.len());
    let mut stack: Vec<usize> = Vec::new();
    for (i, f) in found.iter().enumerate() {
        while let Some(&top) = stack.last() {
            if found[top].stmt.end_byte() >= f.stmt.end_byte() && found[top].start.start_byte() <= f.start.start_byte()
            {
                break;
            }
            stack.pop();
        }
        parents.push(stack.last().copied());
        stack.push(i);
    }
    parents
}

/// Attribute references to the innermost definition whose span holds them. A name used
/// again with the same role adds nothing (the linker resolves each the same way), so
/// each definition keeps the first of each. Returns the module-level references, with
/// their lines.
fn attribute_refs(defs: &mut [RawDef], mut refs: Vec<(usize, RawRef)>, src: &str, source: &[u8]) -> Vec<(Ref, usize)> {
    refs.sort_by_key(|r| r.0);
    let mut module_refs = Vec::new();
    let mut seen: Vec<FxHashSet<(RefKey<'_>, Option<LoadRole>)>> = vec![FxHashSet::default(); defs.len()];
    let mut seen_module: FxHashSet<(RefKey<'_>, usize)> = FxHashSet::default();
    // Lines of module-level names, counted forward (references are in source order).
    let (mut line, mut counted) = (1usize, 0usize);
    for (at, r) in refs {
        let key = r.key(src);
        match innermost(defs, at) {
            Some(i) => {
                let role = load_role(&defs[i], at);
                if seen[i].insert((key, role)) {
                    defs[i].refs.push((r.to_ref(src), role));
                }
            }
            None => {
                line += source[counted..at].iter().filter(|&&b| b == b'\n').count();
                counted = at;
                if seen_module.insert((key, line)) {
                    module_refs.push((r.to_ref(src), line));
                }
            }
        }
    }
    module_refs
}

/// How a name used at byte `at` inside `d` is needed when `d` is stubbed: `None` for the
/// body of a function (a stub drops it).
fn load_role(d: &RawDef, at: usize) -> Option<LoadRole> {
    if d.test_case {
        return None;
    }
    let in_body = d.def.body.is_some_and(|b| b.start_byte <= at && at < b.end_byte);
    match d.def.kind {
        DefinitionKind::Function | DefinitionKind::Method if in_body => None,
        DefinitionKind::Function | DefinitionKind::Method => {
            Some(if at < d.sig_start { LoadRole::Decorator } else { LoadRole::DefaultOrAnnotation })
        }
        _ if in_body => Some(LoadRole::ClassBody),
        DefinitionKind::Class | DefinitionKind::Interface => Some(LoadRole::BaseClass),
        _ => Some(LoadRole::DefaultOrAnnotation),
    }
}

fn innermost(defs: &[RawDef], at: usize) -> Option<usize> {
    let mut i = defs.partition_point(|d| d.def.span.start_byte <= at).checked_sub(1)?;
    loop {
        if defs[i].def.span.end_byte > at {
            return Some(i);
        }
        i = defs[i].parent?;
    }
}
