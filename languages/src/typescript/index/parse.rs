//! One TypeScript/JavaScript file → plain data: its definitions (with signatures, JSDoc,
//! nesting), the names each one uses (unresolved), its imports, exports and re-exports.
//! The tree is dropped when the file is done; `link` resolves names across files.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, QueryMatch};

use super::queries::{Captures, Dialect, Kinds};
use super::signature::{heritage, interface_members, jsdoc, parameters, string_content};
use crate::Language;
use crate::index::{Definition, DefinitionKind, Import, IndexError, LoadRole, Signature, Span};

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

/// Parents and siblings of the nodes definitions are read from. `Node::parent` and
/// `Node::prev_sibling` search down from the root on every call; the walk knows each
/// node's ancestors, so parents are taken from it (and remembered), and siblings from one
/// list of a parent's children.
struct Family<'t> {
    kinds: &'static Kinds,
    parents: FxHashMap<usize, Option<Node<'t>>>,
    children: FxHashMap<usize, Vec<Node<'t>>>,
    /// The node the walk is on, and its ancestors (root first).
    at: Option<Node<'t>>,
    ancestors: Vec<Node<'t>>,
}

impl<'t> Family<'t> {
    fn new(kinds: &'static Kinds) -> Family<'t> {
        Family { kinds, parents: FxHashMap::default(), children: FxHashMap::default(), at: None, ancestors: Vec::new() }
    }

    fn children_of(&mut self, p: Node<'t>) -> &[Node<'t>] {
        self.children.entry(p.id()).or_insert_with(|| {
            let mut c = p.walk();
            p.children(&mut c).collect()
        })
    }

    /// The parent of `n`: from the walk when `n` is the current node, one of its
    /// ancestors or one of its children, else `Node::parent`.
    fn parent(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        if let Some(p) = self.parents.get(&n.id()) {
            return *p;
        }
        let p = match self.at {
            Some(at) if at.id() == n.id() => self.ancestors.last().copied(),
            Some(at) => match self.ancestors.iter().rposition(|a| a.id() == n.id()) {
                Some(i) => i.checked_sub(1).map(|i| self.ancestors[i]),
                None if self.children_of(at).iter().any(|k| k.id() == n.id()) => Some(at),
                None => n.parent(),
            },
            None => n.parent(),
        };
        self.parents.insert(n.id(), p);
        p
    }

    fn parent_kind(&mut self, n: Node<'t>) -> Option<u16> {
        self.parent(n).map(|p| p.kind_id())
    }

    fn in_class_body(&mut self, n: Node<'t>) -> bool {
        self.parent_kind(n) == Some(self.kinds.class_body)
    }

    /// The sibling before `n` (named or not), as `Node::prev_sibling`.
    fn prev_sibling(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        let Some(p) = self.parent(n) else {
            return n.prev_sibling();
        };
        let kids = self.children_of(p);
        match kids.iter().position(|k| k.id() == n.id()) {
            Some(i) => i.checked_sub(1).map(|i| kids[i]),
            None => n.prev_sibling(),
        }
    }

    /// Wrap a declaration in the statements that own it: `export`, `declare`, and the
    /// expression statement of a namespace.
    fn statement_of(&mut self, node: Node<'t>) -> Node<'t> {
        let k = self.kinds;
        let mut n = node;
        while let Some(p) = self.parent(n) {
            let kind = p.kind_id();
            if kind == k.export_statement || kind == k.ambient_declaration || kind == k.expression_statement {
                n = p;
            } else {
                break;
            }
        }
        n
    }

    /// The node of a variable definition: the whole `const`/`let`/`var` statement when it
    /// declares only this name, else the declarator alone.
    fn variable_statement(&mut self, declarator: Node<'t>) -> Node<'t> {
        let k = self.kinds;
        let Some(decl) = self.parent(declarator) else {
            return declarator;
        };
        if decl.kind_id() != k.lexical_declaration && decl.kind_id() != k.variable_declaration {
            return declarator;
        }
        let mut c = decl.walk();
        let count = decl.named_children(&mut c).filter(|n| n.kind_id() == k.variable_declarator).count();
        if count == 1 { self.statement_of(decl) } else { declarator }
    }

    /// First decorator sibling before a class member (TypeScript puts member decorators in
    /// the class body).
    fn first_decorator(&mut self, member: Node<'t>) -> Node<'t> {
        let mut start = member;
        let mut prev = self.prev_sibling(member);
        while let Some(p) = prev {
            if p.kind_id() == self.kinds.decorator {
                start = p;
                prev = self.prev_sibling(p);
            } else {
                break;
            }
        }
        start
    }
}

fn first_non_decorator<'t>(k: &Kinds, n: Node<'t>) -> Node<'t> {
    let mut c = n.walk();
    n.children(&mut c).find(|c| c.kind_id() != k.decorator && c.kind_id() != k.comment).unwrap_or(n)
}

/// Whether `n` has the anonymous token of kind `token` among its children.
fn has_token(n: Node, token: u16) -> bool {
    let mut c = n.walk();
    n.children(&mut c).any(|k| !k.is_named() && k.kind_id() == token)
}

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
    // Test cases are only kept in test files: other files run the query without them.
    let (query, roots) = if is_test { (&q.query, &q.roots) } else { (&q.query_no_tests, &q.roots_no_tests) };
    let kinds = &q.kinds;

    let mut st = Collect { found: Vec::new(), names: Vec::new(), imports: Vec::new(), exports: Vec::new() };
    let mut refs: Vec<(usize, RawRef)> = Vec::new();
    // One walk over the tree: it reads the names used (references) itself, and runs the
    // definitions/imports query only on the nodes where one of its patterns starts, no
    // deeper than those patterns reach.
    cursor.set_max_start_depth(Some(0));
    let mut fam = Family::new(kinds);
    let mut walk = tree.walk();
    'walk: loop {
        let node = walk.node();
        let kind = node.kind_id();
        if roots.get(kind as usize).copied().unwrap_or(false) {
            fam.at = Some(node);
            let mut matches = cursor.matches(query, node, src.as_bytes());
            while let Some(m) = matches.next() {
                take_match(m, &q.captures, src, is_test, &mut st, &mut fam);
            }
        }
        if kind == kinds.identifier || kind == kinds.type_identifier || kind == kinds.shorthand_property_identifier {
            refs.push((node.start_byte(), RawRef::Name(node.byte_range())));
        } else if kind == kinds.member_expression || kind == kinds.nested_type_identifier {
            let (object, member) = if kind == kinds.member_expression {
                (kinds.field_object, kinds.field_property)
            } else {
                (kinds.field_module, kinds.field_name)
            };
            let object = object.and_then(|f| node.child_by_field_id(f.get()));
            let member = member.and_then(|f| node.child_by_field_id(f.get())).filter(|m| {
                m.kind_id()
                    == if kind == kinds.member_expression { kinds.property_identifier } else { kinds.type_identifier }
            });
            if let (Some(o), Some(mem)) = (object.filter(|o| o.is_named()), member) {
                let object = if o.kind_id() == kinds.this {
                    RawObject::This
                } else if o.kind_id() == kinds.identifier {
                    RawObject::Name(o.byte_range())
                } else {
                    RawObject::Other
                };
                refs.push((mem.start_byte(), RawRef::Member { object, member: mem.byte_range() }));
            }
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
    let Collect { mut found, mut names, imports, exports } = st;
    // Names that declare rather than use: definition names, import and re-export
    // specifiers, `export { a }` lists and `export default a` (read as exports below).
    let mut skip: Vec<(usize, usize)> = Vec::new();
    for st in imports.iter().chain(&exports) {
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
    found.sort_by_key(|f| (f.start.start_byte(), std::cmp::Reverse(f.stmt.end_byte())));
    found.dedup_by(|a, b| a.stmt.id() == b.stmt.id() && a.name.id() == b.name.id());

    // Nesting by containment of spans.
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

    let mut defs: Vec<RawDef> = found.iter().map(|f| raw_def(f, src, dialect, is_test, &mut fam)).collect();
    for (d, p) in defs.iter_mut().zip(&parents) {
        d.parent = *p;
    }
    merge_overloads(&mut defs);
    qualify(&mut defs);

    // Attribute references to the innermost definition whose span holds them. A name used
    // again with the same role adds nothing (the linker resolves each the same way), so
    // each definition keeps the first of each.
    refs.sort_by_key(|r| r.0);
    let mut module_refs = Vec::new();
    let mut seen: Vec<FxHashSet<(RefKey<'_>, Option<LoadRole>)>> = vec![FxHashSet::default(); defs.len()];
    let mut seen_module: FxHashSet<(RefKey<'_>, usize)> = FxHashSet::default();
    // Lines of module-level names, counted forward (references are in source order).
    let (mut line, mut counted) = (1usize, 0usize);
    for (at, r) in refs {
        let key = r.key(src);
        match innermost(&defs, at) {
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

fn raw_def<'t>(f: &Found<'t>, src: &str, dialect: Dialect, is_test: bool, fam: &mut Family<'t>) -> RawDef {
    let k = fam.kinds;
    let node = f.node;
    let stmt_parent = fam.parent_kind(f.stmt);
    let in_class_body = stmt_parent == Some(k.class_body);
    // The function node for variables and fields is their value.
    let func = match f.cap {
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
    };
    let body = match f.cap {
        Cap::TypeAlias | Cap::Overload | Cap::Property => None,
        _ => k.child(func, k.field_body),
    };
    let name = if f.cap == Cap::Test { string_content(f.name, src) } else { text(f.name, src).to_string() };
    let kind = match f.cap {
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
    };
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
    let mut decorators: Vec<String> = Vec::new();
    let mut collect_decorators = |n: Node| {
        let mut c = n.walk();
        for d in n.children(&mut c).filter(|d| d.kind_id() == k.decorator) {
            decorators.push(text(d, src).trim_start_matches('@').trim().to_string());
        }
    };
    let exported_stmt = f.stmt.kind_id() == k.export_statement;
    if exported_stmt {
        collect_decorators(f.stmt);
    }
    collect_decorators(node);
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
    let decorators = before;
    let (bases, heritage_names) =
        if matches!(f.cap, Cap::Class | Cap::Interface) { heritage(func, src) } else { Default::default() };
    let is_fn =
        !matches!(f.cap, Cap::Class | Cap::Interface | Cap::TypeAlias | Cap::Enum | Cap::Namespace | Cap::Property);
    let signature = Signature {
        text: sig_text,
        parameters: if is_fn && f.cap != Cap::Test {
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
    };
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
            kind,
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

/// Fold overload signatures into the implementation that follows them (same parent, same
/// name): one definition whose span starts at the first signature and whose signature
/// text lists every overload, then the implementation header.
fn merge_overloads(defs: &mut Vec<RawDef>) {
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

fn qualify(defs: &mut [RawDef]) {
    for i in 0..defs.len() {
        let q = match defs[i].parent {
            Some(p) if p < i => format!("{}.{}", defs[p].def.qualname, defs[i].def.name),
            _ => defs[i].def.name.clone(),
        };
        defs[i].def.qualname = q;
    }
}
