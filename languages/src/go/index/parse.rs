//! One Go file to plain data: its package clause, imports, top-level definitions (with
//! signature, doc comment, receiver type, interface members) and the names each definition
//! and the package-level var/const code use, with local bindings already filtered out.
//! The tree is dropped before returning; linking across files happens in `link`.

use std::collections::{BTreeMap, BTreeSet};

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, Tree};

use super::entries::{RawEntry, literal_entries};
use super::kinds::{Ids, ids};
use super::names::Fact;
use super::queries::{Purpose, queries};
use crate::Language;
use crate::index::{Definition, DefinitionKind, IndexError, Parameter, ParameterKind, Signature, Span};

/// A type as written next to a local: `T`, `*T`, `pkg.T`, `T[int]` → (`pkg`, `T`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TypeRef {
    pub package: Option<String>,
    pub name: String,
}

/// A name a definition (or package-level code) uses, locals removed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Use {
    /// A bare name: a package-level function or type of the same package.
    Name(String),
    /// `x.Name` where `x` is not a local: an import alias, a type (method expression) or a
    /// package-level value; whether it is called.
    Selector(String, String, bool),
    /// `x.Name` where `x` is a local of a known type; whether it is called.
    Method(TypeRef, String, bool),
    /// `expr.Name(…)` where the type of `expr` is unknown (a call: field reads are not
    /// method uses).
    AnyMethod(String),
}

#[derive(Debug, Clone)]
pub(crate) struct GoImport {
    pub path: String,
    /// `name` of `import name "path"` (`.` and `_` included).
    pub alias: Option<String>,
    pub span: Span,
    pub alias_span: Option<Span>,
}

#[derive(Debug, Clone)]
pub(crate) struct RawDef {
    /// `id` is empty until linking; `parent` holds nothing until linking.
    pub def: Definition,
    /// Receiver base type name of a method (`Stack` for `(s *Stack[T])`).
    pub receiver_type: Option<String>,
    /// Method names of an interface type.
    pub interface_members: Vec<String>,
    pub uses: BTreeSet<Use>,
}

#[derive(Debug, Clone)]
pub(crate) struct ParsedFile {
    pub path: String,
    /// Directory of the file, `""` at the root.
    pub dir: String,
    pub package: String,
    pub is_test: bool,
    pub imports: Vec<GoImport>,
    pub defs: Vec<RawDef>,
    /// Uses in package-level var/const declarations, with their 1-based line, but for those
    /// of removable literal elements (`entries`).
    pub module_uses: Vec<(Use, usize)>,
    /// Elements of package-level literals that name one definition (see `entries`).
    pub entries: Vec<RawEntry>,
    pub sha256: String,
    pub lines: usize,
}

pub(crate) fn new_parser() -> Parser {
    let mut p = Parser::new();
    // The grammar is compiled in; failing to load it is a build problem, reported per file below.
    let _ = p.set_language(&Language::Go.grammar());
    p
}

pub(crate) use crate::syntax::{span_of, text};

/// Base type name and package of a type node, through pointers, generics and parentheses.
pub(crate) fn type_ref(n: Node, src: &str) -> Option<TypeRef> {
    type_name(n, src).map(TypeName::to_ref)
}

/// [`TypeRef`] borrowing the source: (`pkg`, `T`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypeName<'a> {
    pub package: Option<&'a str>,
    pub name: &'a str,
}

impl TypeName<'_> {
    pub fn to_ref(self) -> TypeRef {
        TypeRef { package: self.package.map(str::to_string), name: self.name.to_string() }
    }
}

/// [`type_ref`], borrowing the source.
pub(crate) fn type_name<'a>(n: Node, src: &'a str) -> Option<TypeName<'a>> {
    let Ids { kinds: k, fields: f } = ids();
    let kind = n.kind_id();
    if kind == k.type_identifier {
        Some(TypeName { package: None, name: text(n, src) })
    } else if kind == k.qualified_type {
        Some(TypeName {
            package: Some(text(n.child_by_field_id(f.package)?, src)),
            name: text(n.child_by_field_id(f.name)?, src),
        })
    } else if kind == k.pointer_type || kind == k.parenthesized_type {
        type_name(n.named_child(0)?, src)
    } else if kind == k.generic_type {
        type_name(n.child_by_field_id(f.type_)?, src)
    } else {
        None
    }
}

/// The doc comment of `siblings[i]`: the `//` or `/* */` comments directly above it, with
/// no blank line in between, markers stripped. Siblings are passed in because
/// `Node::prev_sibling` walks down from the root each time.
pub(crate) fn doc_comment(siblings: &[Node], i: usize, src: &str) -> Option<String> {
    let node = *siblings.get(i)?;
    let mut lines: Vec<String> = Vec::new();
    let mut next_row = node.start_position().row;
    let mut j = i;
    while j > 0 {
        let c = siblings[j - 1];
        if c.kind_id() != ids().kinds.comment || c.end_position().row + 1 != next_row {
            break;
        }
        // A trailing comment on the previous code line is not a doc comment.
        if j > 1 && siblings[j - 2].end_position().row == c.start_position().row {
            break;
        }
        let t = text(c, src);
        let mut block: Vec<String> = if let Some(rest) = t.strip_prefix("//") {
            vec![rest.strip_prefix(' ').unwrap_or(rest).trim_end().to_string()]
        } else {
            let inner = t.trim_start_matches("/*").trim_end_matches("*/");
            inner.lines().map(|l| l.trim().to_string()).collect()
        };
        block.extend(lines);
        lines = block;
        next_row = c.start_position().row;
        j -= 1;
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() { None } else { Some(lines.join("\n")) }
}

fn parameters(list: Node, src: &str) -> Vec<Parameter> {
    let Ids { kinds: k, fields: f } = ids();
    let mut out = Vec::new();
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        let kind = match p.kind_id() {
            id if id == k.parameter_declaration => ParameterKind::PositionalOrKeyword,
            id if id == k.variadic_parameter_declaration => ParameterKind::VarPositional,
            _ => continue,
        };
        let annotation = p.child_by_field_id(f.type_).map(|t| text(t, src).to_string());
        let mut names = Vec::new();
        let mut cc = p.walk();
        for n in p.children_by_field_id(field_id(f.name), &mut cc) {
            names.push(text(n, src).to_string());
        }
        if names.is_empty() {
            names.push(String::new());
        }
        for name in names {
            out.push(Parameter { name, kind, annotation: annotation.clone(), default: None });
        }
    }
    out
}

/// Number of `\n` bytes.
fn newline_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

fn field_id(id: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(id).expect("field ids are non-zero")
}

fn header(node: Node, body: Option<Node>, src: &str) -> String {
    let end = body.map(|b| b.start_byte()).unwrap_or(node.end_byte());
    src.get(node.start_byte()..end).unwrap_or("").trim_end().to_string()
}

fn base_def(path: &str, name: &str, kind: DefinitionKind, span: Span, def_line: usize, is_test: bool) -> Definition {
    Definition {
        id: String::new(),
        language: Language::Go,
        path: path.to_string(),
        qualname: name.to_string(),
        name: name.to_string(),
        kind,
        span,
        def_line,
        body: None,
        signature: Signature::default(),
        docstring: None,
        parent: None,
        is_test,
        references: Vec::new(),
        load_references: Vec::new(),
    }
}

/// The file a definition is read from.
struct FileCtx<'a> {
    path: &'a str,
    src: &'a str,
    is_test: bool,
}

fn function_def(node: Node, name: &str, receiver: Option<Node>, doc: Option<String>, file: &FileCtx) -> RawDef {
    let (path, src, is_test) = (file.path, file.src, file.is_test);
    let Ids { kinds: k, fields: f } = ids();
    let body = node.child_by_field_id(f.body);
    let kind = if receiver.is_some() { DefinitionKind::Method } else { DefinitionKind::Function };
    let mut def = base_def(path, name, kind, span_of(node), node.start_position().row + 1, is_test);
    let mut receiver_type = None;
    let mut receiver_text = None;
    if let Some(r) = receiver {
        let t = text(r, src);
        receiver_text = Some(t.trim_start_matches('(').trim_end_matches(')').trim().to_string());
        let mut c = r.walk();
        receiver_type = r
            .named_children(&mut c)
            .find(|p| p.kind_id() == k.parameter_declaration)
            .and_then(|p| p.child_by_field_id(f.type_))
            .and_then(|t| type_ref(t, src))
            .map(|t| t.name);
        if let Some(rt) = &receiver_type {
            def.qualname = format!("{rt}.{name}");
        }
    }
    def.body = body.map(span_of);
    def.signature = Signature {
        text: header(node, body, src),
        parameters: node.child_by_field_id(f.parameters).map(|p| parameters(p, src)).unwrap_or_default(),
        returns: node.child_by_field_id(f.result).map(|r| text(r, src).to_string()),
        receiver: receiver_text,
        type_parameters: node.child_by_field_id(f.type_parameters).map(|t| text(t, src).to_string()),
        ..Signature::default()
    };
    def.docstring = doc;
    RawDef { def, receiver_type, interface_members: Vec::new(), uses: BTreeSet::new() }
}

fn type_def(decl: Node, spec: Node, name: &str, ty: Node, decl_doc: Option<String>, file: &FileCtx) -> RawDef {
    let (path, src, is_test) = (file.path, file.src, file.is_test);
    let Ids { kinds: k, fields: f } = ids();
    let single = {
        let mut c = decl.walk();
        decl.named_children(&mut c).filter(|n| n.kind_id() == k.type_spec || n.kind_id() == k.type_alias).count() == 1
    };
    // A lone spec (`type X struct{}` or `type ( X int )`) is the whole declaration.
    let outer = if single { decl } else { spec };
    let kind = if spec.kind_id() == k.type_alias {
        DefinitionKind::TypeAlias
    } else if ty.kind_id() == k.struct_type {
        DefinitionKind::Struct
    } else if ty.kind_id() == k.interface_type {
        DefinitionKind::Interface
    } else {
        DefinitionKind::TypeAlias
    };
    let mut def = base_def(path, name, kind, span_of(outer), outer.start_position().row + 1, is_test);
    def.signature = Signature {
        text: format!("type {}", text(spec, src)),
        type_parameters: spec.child_by_field_id(f.type_parameters).map(|t| text(t, src).to_string()),
        ..Signature::default()
    };
    let group: Vec<Node> = {
        let mut c = decl.walk();
        decl.children(&mut c).collect()
    };
    let spec_doc = group.iter().position(|n| n.id() == spec.id()).and_then(|i| doc_comment(&group, i, src));
    def.docstring = spec_doc.or(if single { decl_doc } else { None });
    let mut interface_members = Vec::new();
    if ty.kind_id() == k.interface_type {
        let mut c = ty.walk();
        for m in ty.named_children(&mut c) {
            // (`method_spec`, the older grammar's name, is not a kind of this grammar.)
            if m.kind_id() == k.method_elem
                && let Some(n) = m.child_by_field_id(f.name)
            {
                interface_members.push(text(n, src).to_string());
            }
        }
    }
    RawDef { def, receiver_type: None, interface_members, uses: BTreeSet::new() }
}

/// Raw name facts of one definition (or of package-level code), before locals are applied;
/// names borrow the source until they become [`Use`]s.
#[derive(Default)]
struct Facts<'a> {
    names: Vec<(&'a str, usize)>,
    selectors: Vec<(Option<&'a str>, &'a str, bool, usize)>,
    qualified: Vec<(&'a str, &'a str, usize)>,
    locals: BTreeSet<&'a str>,
    typed: BTreeMap<&'a str, TypeName<'a>>,
}

impl Facts<'_> {
    fn into_uses(self, at_package_level: bool) -> Vec<(Use, usize)> {
        let local = |n: &str| !at_package_level && self.locals.contains(n);
        let mut out = Vec::new();
        // Inside a definition each name once: most identifiers repeat (package-level code
        // keeps every line, for module references).
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for (n, line) in &self.names {
            if !local(n) && *n != "_" && (at_package_level || seen.insert(n)) {
                out.push((Use::Name(n.to_string()), *line));
            }
        }
        for (p, n, line) in &self.qualified {
            out.push((Use::Selector(p.to_string(), n.to_string(), false), *line));
        }
        for (op, member, call, line) in &self.selectors {
            let u = match op {
                Some(op) if local(op) => match self.typed.get(op) {
                    Some(t) => Use::Method(t.to_ref(), member.to_string(), *call),
                    None if *call => Use::AnyMethod(member.to_string()),
                    None => continue,
                },
                Some(op) => Use::Selector(op.to_string(), member.to_string(), *call),
                None if *call => Use::AnyMethod(member.to_string()),
                None => continue,
            };
            out.push((u, *line));
        }
        out
    }
}

/// Parse one file. A file that is not UTF-8 or has no package clause is an error (skipped);
/// syntax errors elsewhere are tolerated: whatever tree-sitter recovers is indexed.
pub(crate) fn parse_file(parser: &mut Parser, path: &str, bytes: &[u8]) -> Result<ParsedFile, IndexError> {
    let src = crate::syntax::utf8(path, bytes)?;
    let tree = parser.parse(src, None).ok_or_else(|| IndexError::Syntax {
        path: path.to_string(),
        line: 1,
        message: "tree-sitter could not parse the file".into(),
    })?;
    let root = tree.root_node();
    let is_test = super::is_test_path(path);
    let package = package_name(root, src);
    if package.is_empty() {
        return Err(IndexError::Syntax { path: path.to_string(), line: 1, message: "no `package` clause".into() });
    }

    // Definitions and imports first: they decide which definition each name belongs to.
    let ctx = FileCtx { path, src, is_test };
    let (mut defs, imports) = defs_and_imports(root, &ctx);
    defs.sort_by_key(|d| d.def.span.start_byte);
    let mut entries = literal_entries(root, src);
    let module_uses = attribute_uses(&tree, src, &mut defs, &mut entries);

    let dir = path.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
    Ok(ParsedFile {
        path: path.to_string(),
        dir,
        package,
        is_test,
        imports,
        defs,
        module_uses,
        entries,
        sha256: crate::syntax::sha256_hex(bytes),
        // `src.lines().count()`, without splitting: every `\n` ends a line, and so does the
        // end of a file that does not end with one.
        lines: newline_count(bytes) + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n")),
    })
}

/// The name in the file's package clause; empty when there is none.
fn package_name(root: Node, src: &str) -> String {
    let mut package = String::new();
    let mut c = root.walk();
    for ch in root.named_children(&mut c) {
        if ch.kind_id() == ids().kinds.package_clause {
            let mut cc = ch.walk();
            if let Some(id) = ch.named_children(&mut cc).find(|n| n.kind_id() == ids().kinds.package_identifier) {
                package = text(id, src).to_string();
            }
            break;
        }
    }
    package
}

/// The file's top-level definitions (without uses yet) and imports, from the query matches.
fn defs_and_imports(root: Node, ctx: &FileCtx) -> (Vec<RawDef>, Vec<GoImport>) {
    let src = ctx.src;
    let q = queries();
    let cap = &q.captures;
    let mut defs: Vec<RawDef> = Vec::new();
    let mut imports: Vec<GoImport> = Vec::new();
    // The file's top-level nodes, in order (doc comments are found among them).
    let top_nodes: Vec<Node> = {
        let mut c = root.walk();
        root.children(&mut c).collect()
    };
    let mut cursor = QueryCursor::new();
    // Where matches can start, so that the query does not visit the code inside functions:
    // definition patterns start at the file node (the query then descends only as far as
    // a pattern in progress needs); import specs at most two levels below a top-level node
    // that can hold one (an import declaration, or anything with a syntax error in it:
    // error-free declarations of other kinds cannot contain an import spec).
    let k = &ids().kinds;
    let import_roots = top_nodes
        .iter()
        .filter(|n| n.kind_id() == k.import_declaration || n.kind_id() == k.import_spec || n.has_error());
    for (start, depth) in std::iter::once((root, 0)).chain(import_roots.map(|n| (*n, 2))) {
        cursor.set_max_start_depth(Some(depth));
        let mut matches = cursor.matches(&q.query, start, src.as_bytes());
        while let Some(m) = matches.next() {
            let purpose = q.purpose(m.pattern_index);
            let get = |idx: u32| m.captures.iter().find(|c| c.index == idx).map(|c| c.node);
            match purpose {
                Purpose::Definitions => {
                    let Some(name) = get(cap.name) else { continue };
                    let name_text = text(name, src);
                    let doc = |n: Node| {
                        top_nodes
                            .binary_search_by_key(&n.start_byte(), |t| t.start_byte())
                            .ok()
                            .and_then(|i| doc_comment(&top_nodes, i, src))
                    };
                    if let Some(f) = get(cap.function) {
                        defs.push(function_def(f, name_text, None, doc(f), ctx));
                    } else if let Some(f) = get(cap.method) {
                        defs.push(function_def(f, name_text, get(cap.receiver), doc(f), ctx));
                    } else if let (Some(decl), Some(spec), Some(ty)) =
                        (get(cap.type_declaration), get(cap.type_spec), get(cap.type_))
                    {
                        defs.push(type_def(decl, spec, name_text, ty, doc(decl), ctx));
                    }
                }
                Purpose::Imports => {
                    let (Some(imp), Some(p)) = (get(cap.import), get(cap.path)) else { continue };
                    let raw = text(p, src);
                    let path_text = raw.trim_matches(|c| c == '"' || c == '`').to_string();
                    let alias = get(cap.alias);
                    imports.push(GoImport {
                        path: path_text,
                        alias: alias.map(|a| text(a, src).to_string()),
                        span: span_of(imp),
                        alias_span: alias.map(span_of),
                    });
                }
            }
        }
    }
    (defs, imports)
}

/// Gives each definition (sorted by start) the uses inside its declaration and each entry
/// (in source order) the uses inside its value, and returns the uses of the rest of
/// package-level code with their lines, sorted and deduplicated.
fn attribute_uses(tree: &Tree, src: &str, defs: &mut [RawDef], entries: &mut [RawEntry]) -> Vec<(Use, usize)> {
    // Facts per definition (by index in `defs`), and for package-level code.
    let mut facts: Vec<Facts> = Vec::new();
    let mut top = Facts::default();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for d in defs.iter() {
        // Uses inside the whole declaration (a grouped type spec covers only its spec).
        ranges.push((d.def.span.start_byte, d.def.span.end_byte));
        facts.push(Facts::default());
    }
    let owner = |byte: usize| -> Option<usize> {
        let i = ranges.partition_point(|(s, _)| *s <= byte);
        if i == 0 {
            return None;
        }
        let (s, e) = ranges[i - 1];
        (byte >= s && byte < e).then_some(i - 1)
    };
    let mut entry_facts: Vec<Facts> = entries.iter().map(|_| Facts::default()).collect();
    let entry_of = |byte: usize| -> Option<usize> {
        let i = entries.partition_point(|e| e.value.0 <= byte);
        (i > 0 && byte < entries[i - 1].value.1).then(|| i - 1)
    };
    super::names::walk(tree, src, |fact, node| {
        // Only package-level uses keep their line (see `into_uses`' callers).
        let (f, line) = match owner(node.start_byte()) {
            Some(i) => (&mut facts[i], 0),
            None => match entry_of(node.start_byte()) {
                Some(e) => (&mut entry_facts[e], node.start_position().row + 1),
                None => (&mut top, node.start_position().row + 1),
            },
        };
        match fact {
            Fact::Use(n) => f.names.push((n, line)),
            Fact::Local(n) => {
                f.locals.insert(n);
            }
            Fact::Selector(op, member, called) => f.selectors.push((op, member, called, line)),
            Fact::Qualified(p, n) => f.qualified.push((p, n, line)),
            Fact::Typed(n, t) => {
                f.typed.insert(n, t);
            }
        }
    });
    for (d, f) in defs.iter_mut().zip(facts) {
        d.uses = f.into_uses(false).into_iter().map(|(u, _)| u).collect();
    }
    for (e, f) in entries.iter_mut().zip(entry_facts) {
        e.uses = f.into_uses(true);
    }
    let mut module_uses = top.into_uses(true);
    module_uses.sort();
    module_uses.dedup();
    module_uses
}
