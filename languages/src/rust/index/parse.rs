//! First pass over one file: parse it and walk the tree once, keeping plain data — items
//! (functions, methods, structs, enums, unions, traits, impls, inline modules, type
//! aliases, `macro_rules!`) with their signatures and docs, `use` items flattened to
//! leaves, and the unresolved paths each item names. The tree is dropped when this
//! returns; `link` resolves names across files.

use std::sync::LazyLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, Query, QueryCursor};

use super::crates::{Location, locate};
use super::refs::collect_refs;
use crate::index::{DefinitionKind, IndexError, Parameter, ParameterKind, Signature, Span};

/// A name use not yet resolved.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum RawRef {
    /// `a`, `a::b::c`, `Self::new`, `crate::x` …
    Path(Vec<String>),
    /// `.name(…)`: a method call on a value whose type is not known statically.
    Method(String),
    /// `self.name(…)`: a method of the enclosing impl's type (or trait).
    SelfMethod(String),
    /// `name!(…)`
    Macro(Vec<String>),
}

#[derive(Debug, Clone)]
pub(super) struct ImplInfo {
    /// Path of the implemented type (`&`, generics and `dyn` stripped), `[]` when it is not
    /// a path (tuples, slices …).
    pub self_type: Vec<String>,
    pub trait_path: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
pub(super) struct Item {
    pub qualname: String,
    pub name: String,
    pub kind: DefinitionKind,
    pub span: Span,
    pub def_line: usize,
    pub body: Option<Span>,
    pub signature: Signature,
    pub docstring: Option<String>,
    /// Enclosing item (module, impl or trait) in this file.
    pub parent: Option<usize>,
    /// Module scope (index into [`ParsedFile::scopes`]) names are resolved in.
    pub scope: usize,
    /// The impl or trait `Self` means here.
    pub self_item: Option<usize>,
    pub is_test: bool,
    pub impl_info: Option<ImplInfo>,
    pub refs: Vec<RawRef>,
}

/// One leaf of a `use` tree: `use a::{b::C as D, e::*}` has leaves `a::b::C` (alias `D`)
/// and `a::e::*`.
#[derive(Debug, Clone)]
pub(super) struct UseLeaf {
    /// Full path; for a glob, the path of the module whose names it imports.
    pub path: Vec<String>,
    /// The leaf as written relative to the statement's prefix (`b::C`, `*`, `self`).
    pub written: String,
    pub alias: Option<String>,
    pub glob: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub(super) struct RawUse {
    /// The whole item, attributes included.
    pub span: Span,
    /// The path before the first `{` (or the whole path for a single leaf, minus its
    /// last segment).
    pub prefix: String,
    pub scope: usize,
    pub module_level: bool,
    pub leaves: Vec<UseLeaf>,
}

#[derive(Debug)]
pub(super) struct ParsedFile {
    pub path: String,
    pub location: Location,
    /// Module paths relative to the crate: `[0]` is the file's own module, then one per
    /// inline `mod`.
    pub scopes: Vec<Vec<String>>,
    /// The inline-module item of each scope (`None` for the file's module).
    pub scope_items: Vec<Option<usize>>,
    pub items: Vec<Item>,
    pub uses: Vec<RawUse>,
    /// `#[cfg(test)] mod name;` declarations: module paths whose files are test code.
    pub test_file_modules: Vec<Vec<String>>,
    /// Paths named by code outside every item (`const`, `static`, item-level macros), with
    /// their scope and line.
    pub module_refs: Vec<(RawRef, usize, usize)>,
    pub is_test_file: bool,
    pub sha256: String,
    pub lines: usize,
}

pub(crate) fn new_parser() -> Parser {
    let mut parser = Parser::new();
    // The grammar is compiled in; a version mismatch is a build problem, caught by tests.
    let _ = parser.set_language(&crate::Language::Rust.grammar());
    parser
}

pub(super) fn span(node: Node) -> Span {
    span_between(node, node)
}

fn span_between(first: Node, last: Node) -> Span {
    Span {
        start_byte: first.start_byte(),
        end_byte: last.end_byte(),
        start_line: first.start_position().row + 1,
        end_line: last.end_position().row + 1
            - usize::from(last.end_position().column == 0 && last.end_byte() > last.start_byte()),
    }
}

use crate::syntax::count_lines;
pub(super) use crate::syntax::text;

/// Parse and reduce one file. A file tree-sitter cannot parse cleanly is an error (the
/// caller lists it as skipped), as for Python: masking needs exact item boundaries.
pub(super) fn parse_file(parser: &mut Parser, path: &str, bytes: &[u8]) -> Result<ParsedFile, IndexError> {
    let src = std::str::from_utf8(bytes).map_err(|e| {
        let line = count_lines(&bytes[..e.valid_up_to()]).max(1);
        IndexError::InvalidUtf8 { path: path.to_string(), line }
    })?;
    let tree = parser.parse(src, None).ok_or_else(|| IndexError::Syntax {
        path: path.to_string(),
        line: 1,
        message: "tree-sitter gave up".into(),
    })?;
    let root = tree.root_node();
    if root.has_error() {
        let (line, message) = crate::syntax::parse_errors_with("rust", tree_sitter_rust::LANGUAGE.into(), src)
            .into_iter()
            .next()
            .unwrap_or((1, "syntax error".to_string()));
        return Err(IndexError::Syntax { path: path.to_string(), line, message });
    }
    let location = locate(path);
    let mut file = ParsedFile {
        path: path.to_string(),
        scopes: vec![location.module.clone()],
        scope_items: vec![None],
        location,
        items: Vec::new(),
        uses: Vec::new(),
        test_file_modules: Vec::new(),
        module_refs: Vec::new(),
        is_test_file: super::crates::is_test_path(path),
        sha256: crate::syntax::sha256_hex(bytes),
        lines: count_lines(bytes),
    };
    let ctx =
        Ctx { scope: 0, parent: None, container: Container::Module, prefix: String::new(), in_test: file.is_test_file };
    Walker { src, file: &mut file, cursor: QueryCursor::new() }.items(root, &ctx);
    Ok(file)
}

#[derive(Clone)]
enum Container {
    Module,
    /// Impl item index and the qualname prefix of its methods.
    Impl(usize),
    Trait(usize),
}

#[derive(Clone)]
struct Ctx {
    scope: usize,
    parent: Option<usize>,
    container: Container,
    /// Qualname prefix (`shapes.` inside `mod shapes`).
    prefix: String,
    in_test: bool,
}

/// Attributes and doc comments seen before an item.
#[derive(Default)]
struct Leading<'t> {
    first: Option<Node<'t>>,
    attributes: Vec<String>,
    docs: Vec<String>,
}

fn doc_text(node: Node, src: &str) -> String {
    let raw = text(node, src);
    if let Some(rest) = raw.strip_prefix("///") {
        return rest.strip_prefix(' ').unwrap_or(rest).trim_end_matches(['\n', '\r']).to_string();
    }
    let inner = raw.strip_prefix("/**").and_then(|r| r.strip_suffix("*/")).unwrap_or(raw);
    inner
        .lines()
        .map(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix('*').map(|r| r.strip_prefix(' ').unwrap_or(r)).unwrap_or(t);
            t.trim_end()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

fn attribute_text(node: Node, src: &str) -> String {
    let raw = text(node, src).trim();
    raw.strip_prefix("#[").and_then(|r| r.strip_suffix(']')).unwrap_or(raw).trim().to_string()
}

/// `#[test]`, `#[tokio::test]`, `#[rstest]`-style test attributes.
pub(crate) fn is_test_attribute(attr: &str) -> bool {
    let head = attr.split('(').next().unwrap_or("").trim();
    head == "test" || head.ends_with("::test") || head == "rstest" || head == "bench"
}

pub(crate) fn is_cfg_test(attr: &str) -> bool {
    let compact: String = attr.chars().filter(|c| !c.is_whitespace()).collect();
    compact == "cfg(test)" || (compact.starts_with("cfg(") && compact.contains("test") && !compact.contains("not(test"))
}

/// The Rust definitions query (`queries/rust/definitions.scm`) and its capture indices.
struct ItemsQuery {
    query: Query,
    /// What a node captured by each capture is, by capture index (`None` for the parts:
    /// `@name`, `@body` …).
    roles: Vec<Option<Role>>,
    name: u32,
    body: u32,
    trait_: u32,
    type_: u32,
}

/// What a child of an item list is, by the capture on the pattern's root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Item(DefinitionKind),
    Use,
    Attribute,
    Doc,
    Ignore,
}

pub(super) const DEFINITIONS: &str = include_str!("../../../queries/rust/definitions.scm");

static ITEMS: LazyLock<ItemsQuery> = LazyLock::new(|| {
    // The query ships with the crate and `tests/queries_compile.rs` compiles it.
    let query = Query::new(&crate::Language::Rust.grammar(), DEFINITIONS)
        .unwrap_or_else(|e| panic!("queries/rust/definitions.scm: {e}"));
    let roles = query
        .capture_names()
        .iter()
        .map(|name| match *name {
            "function" => Some(Role::Item(DefinitionKind::Function)),
            "struct" => Some(Role::Item(DefinitionKind::Struct)),
            "enum" => Some(Role::Item(DefinitionKind::Enum)),
            "trait" => Some(Role::Item(DefinitionKind::Trait)),
            "impl" => Some(Role::Item(DefinitionKind::Impl)),
            "module" => Some(Role::Item(DefinitionKind::Module)),
            "type_alias" => Some(Role::Item(DefinitionKind::TypeAlias)),
            "macro" => Some(Role::Item(DefinitionKind::Macro)),
            "use" => Some(Role::Use),
            "attribute" => Some(Role::Attribute),
            "doc" => Some(Role::Doc),
            "ignore" => Some(Role::Ignore),
            _ => None,
        })
        .collect();
    let capture = |name| crate::query::capture(&query, "rust", name);
    ItemsQuery {
        name: capture("name"),
        body: capture("body"),
        trait_: capture("trait_path"),
        type_: capture("self_type"),
        roles,
        query,
    }
});

/// One child of an item list as the query sees it.
struct Child<'t> {
    node: Node<'t>,
    role: Role,
    name: Option<Node<'t>>,
    body: Option<Node<'t>>,
    trait_: Option<Node<'t>>,
    type_: Option<Node<'t>>,
}

struct Walker<'s, 'f> {
    src: &'s str,
    file: &'f mut ParsedFile,
    cursor: QueryCursor,
}

impl<'s> Walker<'s, '_> {
    /// What the definitions query says of the direct children of `list`, in source order
    /// (the first pattern that matches a node decides).
    fn classify<'t>(&mut self, list: Node<'t>) -> Vec<Child<'t>> {
        let q = &*ITEMS;
        self.cursor.set_max_start_depth(Some(1));
        let mut out: Vec<Child<'t>> = Vec::new();
        let mut matches = self.cursor.matches(&q.query, list, self.src.as_bytes());
        while let Some(m) = matches.next() {
            let mut child = None;
            let mut parts = [None; 4];
            for c in m.captures {
                match q.roles.get(c.index as usize).copied().flatten() {
                    Some(role) => child = Some((c.node, role)),
                    None if c.index == q.name => parts[0] = Some(c.node),
                    None if c.index == q.body => parts[1] = Some(c.node),
                    None if c.index == q.trait_ => parts[2] = Some(c.node),
                    None if c.index == q.type_ => parts[3] = Some(c.node),
                    None => {}
                }
            }
            if let Some((node, role)) = child {
                let [name, body, trait_, type_] = parts;
                out.push(Child { node, role, name, body, trait_, type_ });
            }
        }
        out.sort_by_key(|c| c.node.start_byte());
        out.dedup_by_key(|c| c.node.id());
        out
    }

    /// The items of a `source_file` or `declaration_list`.
    fn items(&mut self, list: Node, ctx: &Ctx) {
        let classified = self.classify(list);
        let mut next = classified.into_iter().peekable();
        let mut leading = Leading::default();
        let mut cursor = list.walk();
        for child in list.named_children(&mut cursor) {
            let found = next.next_if(|c| c.node.id() == child.id());
            match found {
                Some(Child { role: Role::Attribute, .. }) => {
                    leading.first.get_or_insert(child);
                    leading.attributes.push(attribute_text(child, self.src));
                }
                Some(Child { role: Role::Doc, .. }) => {
                    leading.first.get_or_insert(child);
                    leading.docs.push(doc_text(child, self.src));
                }
                Some(Child { role: Role::Ignore, .. }) => {}
                Some(c @ Child { role: Role::Use, .. }) => {
                    self.use_item(c.node, &leading, ctx, true);
                    leading = Leading::default();
                }
                Some(c @ Child { role: Role::Item(_), .. }) => {
                    self.item(&c, &leading, ctx);
                    leading = Leading::default();
                }
                None => {
                    let mut refs = Vec::new();
                    collect_refs(child, self.src, &mut refs);
                    let line = child.start_position().row + 1;
                    self.file.module_refs.extend(refs.into_iter().map(|r| (r, ctx.scope, line)));
                    leading = Leading::default();
                }
            }
        }
    }

    /// Records one item (with its signature and references) and walks into its body.
    fn item(&mut self, child: &Child, leading: &Leading, ctx: &Ctx) {
        let src = self.src;
        let node = child.node;
        let Role::Item(kind) = child.role else { return };
        let full = span_between(leading.first.unwrap_or(node), node);
        let cfg_test = leading.attributes.iter().any(|a| is_cfg_test(a));
        let in_test = ctx.in_test || cfg_test;
        if kind == DefinitionKind::Module && child.body.is_none() {
            self.module_declaration(child, ctx, in_test);
            return;
        }
        let def_kind = match (kind, &ctx.container) {
            (DefinitionKind::Function, Container::Module) => DefinitionKind::Function,
            (DefinitionKind::Function, _) => DefinitionKind::Method,
            (kind, _) => kind,
        };
        let (name, qualname, impl_info) = self.names(child, def_kind, ctx);
        let is_test = in_test || leading.attributes.iter().any(|a| is_test_attribute(a));
        let body_node = match def_kind {
            DefinitionKind::Macro => None,
            _ => child.body,
        };
        let signature = signature(node, def_kind, body_node, leading, src);
        let refs = item_refs(node, def_kind, body_node, src);
        let self_item = match ctx.container {
            Container::Impl(i) | Container::Trait(i) => Some(i),
            Container::Module => None,
        };
        let index = self.file.items.len();
        self.file.items.push(Item {
            qualname,
            name,
            kind: def_kind,
            span: full,
            def_line: node.start_position().row + 1,
            body: body_node.map(span),
            signature,
            docstring: if leading.docs.is_empty() { None } else { Some(leading.docs.join("\n")) },
            parent: ctx.parent,
            scope: ctx.scope,
            self_item: if matches!(def_kind, DefinitionKind::Impl | DefinitionKind::Trait) {
                Some(index)
            } else {
                self_item
            },
            is_test,
            impl_info,
            refs,
        });
        let Some(body) = body_node else { return };
        self.descend(body, index, def_kind, ctx, in_test);
    }

    /// Records `mod name;` in test code as a module whose file is test code.
    fn module_declaration(&mut self, child: &Child, ctx: &Ctx, in_test: bool) {
        if let Some(name) = child.name
            && in_test
        {
            let mut path = self.file.scopes[ctx.scope].clone();
            path.push(text(name, self.src).to_string());
            self.file.test_file_modules.push(path);
        }
    }

    /// The name and qualname of an item (an impl's `<Trait>` or `<impl>` tag, a member's
    /// `Type.name`), and what an impl is of.
    fn names(&self, child: &Child, def_kind: DefinitionKind, ctx: &Ctx) -> (String, String, Option<ImplInfo>) {
        let src = self.src;
        let name = child.name.map(|n| text(n, src).to_string());
        match (def_kind, &ctx.container) {
            (DefinitionKind::Impl, _) => {
                let ty = child.type_;
                let self_type = ty.map(|t| type_path(t, src)).unwrap_or_default();
                let type_name = match (self_type.last(), ty) {
                    (Some(last), _) => last.clone(),
                    (None, Some(t)) => compact(text(t, src)),
                    (None, None) => "?".to_string(),
                };
                let trait_node = child.trait_;
                let trait_path = trait_node.map(|t| type_path(t, src));
                let tag = match trait_node {
                    Some(t) => format!("<{}>", trait_tag(t, src)),
                    None => "<impl>".to_string(),
                };
                let qualname = format!("{}{type_name}.{tag}", ctx.prefix);
                (tag, qualname, Some(ImplInfo { self_type, trait_path }))
            }
            (_, Container::Impl(i)) => {
                let n = name.unwrap_or_default();
                let item = &self.file.items[*i];
                let base = if item.name == "<impl>" {
                    item.qualname.strip_suffix(".<impl>").unwrap_or(&item.qualname).to_string()
                } else {
                    item.qualname.clone()
                };
                let q = format!("{base}.{n}");
                (n, q, None)
            }
            (_, Container::Trait(i)) => {
                let n = name.unwrap_or_default();
                let q = format!("{}.{n}", self.file.items[*i].qualname);
                (n, q, None)
            }
            (_, Container::Module) => {
                let n = name.unwrap_or_default();
                let q = format!("{}{n}", ctx.prefix);
                (n, q, None)
            }
        }
    }

    /// Walks the items of a module, impl or trait body, with the context they are in.
    fn descend(&mut self, body: Node, index: usize, def_kind: DefinitionKind, ctx: &Ctx, in_test: bool) {
        match def_kind {
            DefinitionKind::Module => {
                let mut path = self.file.scopes[ctx.scope].clone();
                path.push(self.file.items[index].name.clone());
                self.file.scopes.push(path);
                self.file.scope_items.push(Some(index));
                let inner = Ctx {
                    scope: self.file.scopes.len() - 1,
                    parent: Some(index),
                    container: Container::Module,
                    prefix: format!("{}.", self.file.items[index].qualname),
                    in_test,
                };
                self.items(body, &inner);
            }
            DefinitionKind::Impl | DefinitionKind::Trait => {
                let container =
                    if def_kind == DefinitionKind::Impl { Container::Impl(index) } else { Container::Trait(index) };
                let inner =
                    Ctx { scope: ctx.scope, parent: Some(index), container, prefix: ctx.prefix.clone(), in_test };
                self.items(body, &inner);
            }
            _ => {}
        }
    }

    fn use_item(&mut self, node: Node, leading: &Leading, ctx: &Ctx, module_level: bool) {
        let src = self.src;
        let Some(arg) = node.child_by_field_name("argument") else {
            return;
        };
        let mut leaves = Vec::new();
        use_leaves(arg, src, &[], &mut leaves);
        let prefix = match arg.kind() {
            "scoped_use_list" => arg.child_by_field_name("path").map(|p| text(p, src).to_string()).unwrap_or_default(),
            "use_wildcard" | "use_as_clause" | "scoped_identifier" => {
                leaves.first().map(|l| prefix_of(&l.path, l.glob)).unwrap_or_default()
            }
            _ => String::new(),
        };
        // Leaves are written relative to the prefix.
        for leaf in &mut leaves {
            let rel: Vec<&str> = leaf.written.split("::").collect();
            let p: Vec<&str> = if prefix.is_empty() { Vec::new() } else { prefix.split("::").collect() };
            if rel.len() > p.len() && rel[..p.len()] == p[..] && arg.kind() != "scoped_use_list" {
                leaf.written = rel[p.len()..].join("::");
            }
        }
        self.file.uses.push(RawUse {
            span: span_between(leading.first.unwrap_or(node), node),
            prefix,
            scope: ctx.scope,
            module_level,
            leaves,
        });
    }
}

/// The paths an item names, sorted and deduplicated; for a module, impl or trait only
/// those outside its body (the items of the body have their own).
fn item_refs(node: Node, def_kind: DefinitionKind, body_node: Option<Node>, src: &str) -> Vec<RawRef> {
    let mut refs = Vec::new();
    match def_kind {
        DefinitionKind::Impl | DefinitionKind::Trait | DefinitionKind::Module => {
            let mut c = node.walk();
            for ch in node.children(&mut c) {
                if Some(ch) != body_node {
                    collect_refs(ch, src, &mut refs);
                }
            }
        }
        _ => collect_refs(node, src, &mut refs),
    }
    refs.sort();
    refs.dedup();
    refs
}

fn prefix_of(path: &[String], glob: bool) -> String {
    if glob { path.join("::") } else { path[..path.len().saturating_sub(1)].join("::") }
}

/// Flatten a use tree into leaves.
pub(super) fn use_leaves(node: Node, src: &str, base: &[String], out: &mut Vec<UseLeaf>) {
    let with = |segs: Vec<String>| -> Vec<String> { base.iter().cloned().chain(segs).collect() };
    match node.kind() {
        "scoped_use_list" => {
            let path = node.child_by_field_name("path").map(|p| path_segments(p, src)).unwrap_or_default();
            let full = with(path);
            if let Some(list) = node.child_by_field_name("list") {
                use_leaves(list, src, &full, out);
            }
        }
        "use_list" => {
            let mut c = node.walk();
            for ch in node.named_children(&mut c) {
                use_leaves(ch, src, base, out);
            }
        }
        "use_wildcard" => {
            let inner = node.named_child(0).map(|p| path_segments(p, src)).unwrap_or_default();
            out.push(UseLeaf {
                path: with(inner),
                written: text(node, src).to_string(),
                alias: None,
                glob: true,
                span: span(node),
            });
        }
        "use_as_clause" => {
            let path = node.child_by_field_name("path").map(|p| path_segments(p, src)).unwrap_or_default();
            let alias = node.child_by_field_name("alias").map(|a| text(a, src).to_string());
            out.push(UseLeaf {
                path: with(path),
                written: text(node, src).to_string(),
                alias,
                glob: false,
                span: span(node),
            });
        }
        "line_comment" | "block_comment" | "attribute_item" => {}
        _ => {
            let segs = path_segments(node, src);
            let mut path = with(segs);
            let mut alias = None;
            if path.last().is_some_and(|s| s == "self") {
                path.pop();
                alias = path.last().cloned();
            }
            out.push(UseLeaf { path, written: text(node, src).to_string(), alias, glob: false, span: span(node) });
        }
    }
}

/// Segments of a path node: `a::b::C` → `[a, b, C]`; generic arguments are dropped
/// (`Vec::<T>::new` → `[Vec, new]`).
pub(super) fn path_segments(node: Node, src: &str) -> Vec<String> {
    match node.kind() {
        "scoped_identifier" | "scoped_type_identifier" => {
            let mut segs = node.child_by_field_name("path").map(|p| path_segments(p, src)).unwrap_or_default();
            if let Some(n) = node.child_by_field_name("name") {
                segs.push(text(n, src).to_string());
            }
            segs
        }
        "generic_type" | "generic_type_with_turbofish" => {
            node.child_by_field_name("type").map(|t| path_segments(t, src)).unwrap_or_default()
        }
        "bracketed_type" | "qualified_type" => vec!["<qualified>".to_string()],
        _ => vec![text(node, src).to_string()],
    }
}

/// The type path an impl is for: references, pointers, `dyn` and generics stripped.
fn type_path(node: Node, src: &str) -> Vec<String> {
    match node.kind() {
        "reference_type" | "pointer_type" => {
            node.child_by_field_name("type").map(|t| type_path(t, src)).unwrap_or_default()
        }
        "dynamic_type" | "abstract_type" => {
            node.child_by_field_name("trait").map(|t| type_path(t, src)).unwrap_or_default()
        }
        "type_identifier" | "scoped_type_identifier" | "generic_type" | "identifier" | "scoped_identifier" => {
            path_segments(node, src)
        }
        _ => Vec::new(),
    }
}

fn compact(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace(". ", ".").replace('.', "_")
}

/// How a trait impl is named in qualnames: the trait's last segment with its generic
/// arguments (`From<u32>`), spaces removed and dots replaced.
fn trait_tag(node: Node, src: &str) -> String {
    let t = text(node, src);
    let last = match node.kind() {
        "scoped_type_identifier" => node.child_by_field_name("name").map(|n| text(n, src)).unwrap_or(t),
        "generic_type" => {
            let base = node.child_by_field_name("type").map(|b| trait_tag(b, src)).unwrap_or_default();
            let args = node.child_by_field_name("type_arguments").map(|a| text(a, src)).unwrap_or("");
            return format!("{base}{}", args.split_whitespace().collect::<String>().replace('.', "_"));
        }
        _ => t,
    };
    last.split_whitespace().collect::<String>().replace('.', "_")
}

/// The signature of an item as written, without attributes, docs or body.
fn signature(node: Node, kind: DefinitionKind, body: Option<Node>, leading: &Leading, src: &str) -> Signature {
    let full_text = matches!(
        kind,
        DefinitionKind::Struct | DefinitionKind::Enum | DefinitionKind::TypeAlias | DefinitionKind::Macro
    );
    let end = match (full_text, body) {
        (false, Some(b)) => b.start_byte(),
        _ => node.end_byte(),
    };
    let header = src.get(node.start_byte()..end).unwrap_or("").trim_end();
    let header = if full_text { header } else { header.trim_end_matches(';').trim_end() };
    let mut sig =
        Signature { text: header.to_string(), decorators: leading.attributes.clone(), ..Signature::default() };
    sig.type_parameters = node.child_by_field_name("type_parameters").map(|t| text(t, src).to_string());
    match kind {
        DefinitionKind::Function | DefinitionKind::Method => {
            if let Some(params) = node.child_by_field_name("parameters") {
                let mut c = params.walk();
                for p in params.named_children(&mut c) {
                    match p.kind() {
                        "self_parameter" => {
                            sig.receiver = Some(text(p, src).to_string());
                        }
                        "parameter" => sig.parameters.push(Parameter {
                            name: p
                                .child_by_field_name("pattern")
                                .map(|x| text(x, src).to_string())
                                .unwrap_or_default(),
                            kind: ParameterKind::PositionalOrKeyword,
                            annotation: p.child_by_field_name("type").map(|x| text(x, src).to_string()),
                            default: None,
                        }),
                        "variadic_parameter" => sig.parameters.push(Parameter {
                            name: text(p, src).to_string(),
                            kind: ParameterKind::VarPositional,
                            annotation: None,
                            default: None,
                        }),
                        _ => {}
                    }
                }
            }
            sig.returns = node.child_by_field_name("return_type").map(|r| text(r, src).to_string());
            let mut c = node.walk();
            sig.is_async = node
                .children(&mut c)
                .any(|ch| ch.kind() == "function_modifiers" && text(ch, src).split_whitespace().any(|w| w == "async"));
        }
        DefinitionKind::Trait => {
            if let Some(b) = node.child_by_field_name("bounds") {
                let mut c = b.walk();
                sig.bases = b.named_children(&mut c).map(|x| text(x, src).to_string()).collect();
            }
        }
        DefinitionKind::Impl => {
            if let Some(t) = node.child_by_field_name("trait") {
                sig.bases = vec![text(t, src).to_string()];
            }
        }
        _ => {}
    }
    sig
}
