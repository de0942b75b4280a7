//! The library crate at the repository root, read as items per module for the Level 2
//! reference: every item of every module (inline `mod` bodies included, `#[cfg(test)]`
//! modules and test functions left out), with the names it uses and the crate paths it
//! writes, and every module's `use` leaves.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::super::index::crates;
use crate::Language;
use crate::index::DefinitionIndex;

/// What kind of item: what it brings along when copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ItemKind {
    /// `fn`, `const`, `static`, `type`.
    Value,
    /// `struct`, `enum`, `union`: its impls come with it.
    Type,
    /// A trait: its impls come with it.
    Trait,
    /// `impl [Trait for] Type`.
    Impl,
    /// `macro_rules!`.
    Macro,
}

/// One item of the crate.
pub(super) struct Item {
    pub file: usize,
    /// Module path inside the crate (`[]` for the crate root).
    pub module: Vec<String>,
    /// The name it declares (`""` for an impl).
    pub name: String,
    pub kind: ItemKind,
    /// Its text's range, attributes and outer doc comments included.
    pub start: usize,
    pub end: usize,
    /// Declared plainly `pub`.
    pub public: bool,
    /// An impl's type and trait, as the paths written (`[Rect]`, `[crate, shapes, Shape]`).
    pub impl_type: Vec<String>,
    pub impl_trait: Vec<String>,
    /// Identifiers, type identifiers and macro names it uses.
    pub uses: BTreeSet<String>,
    /// The paths it writes (`a::b::c`, simple segments only), for the crate's own ones.
    pub paths: Vec<WrittenPath>,
    /// Byte ranges of `pub(super)` / `pub(in …)` visibilities, which mean nothing at the
    /// root of another crate.
    pub narrow_visibility: Vec<(usize, usize)>,
    /// Byte ranges of `$crate` in a macro's body.
    pub dollar_crate: Vec<(usize, usize)>,
    /// The crate's own macro whose invocation at module level made it (fastrand's
    /// `integer!(usize, …)` makes `pub fn usize`).
    pub made_by: Option<String>,
}

impl Item {
    fn new(file: usize, module: &[String], name: String, kind: ItemKind, span: (usize, usize), public: bool) -> Self {
        Item {
            file,
            module: module.to_vec(),
            name,
            kind,
            start: span.0,
            end: span.1,
            public,
            impl_type: Vec::new(),
            impl_trait: Vec::new(),
            uses: BTreeSet::new(),
            paths: Vec::new(),
            narrow_visibility: Vec::new(),
            dollar_crate: Vec::new(),
            made_by: None,
        }
    }
}

/// A path written in an item: its segments and the byte range of each.
pub(super) struct WrittenPath {
    pub segments: Vec<(String, usize, usize)>,
}

/// One `use` leaf of a module: the name it binds (None for a glob) and the path.
#[derive(Debug, Clone)]
pub(super) struct UseLeaf {
    pub bound: Option<String>,
    pub path: Vec<String>,
    /// `pub use`.
    pub public: bool,
    /// The `#[cfg(…)]` attributes of its `use` declaration, as written.
    pub cfg: Vec<String>,
}

#[derive(Default)]
pub(super) struct Module {
    pub uses: Vec<UseLeaf>,
    /// Declared plainly `pub mod` (the root counts as public).
    pub public: bool,
}

pub(super) struct CrateItems {
    pub files: Vec<(String, String)>,
    pub items: Vec<Item>,
    pub modules: BTreeMap<Vec<String>, Module>,
    /// The rules of the crate's `macro_rules!` macros read so far, by name.
    rules: BTreeMap<String, Vec<Rule>>,
}

/// An item a macro invocation declares: its name, kind, whether `pub`.
type Declared = (String, ItemKind, bool);

/// One rule of a `macro_rules!` macro, as far as reading what an invocation declares needs:
/// its pattern's comma-separated parts, and the items its expansion declares at its top
/// level (a name, or a `$metavariable` bound by the pattern).
struct Rule {
    pattern: Vec<Part>,
    declares: Vec<Declared>,
}

/// A part of a rule's pattern: one `$name:fragment`, or tokens to match as written.
enum Part {
    Bind(String),
    Literal(String),
}

/// The files of the library crate at the repository root (`src/`, without binaries).
fn library_files(index: &DefinitionIndex) -> BTreeSet<&str> {
    index
        .files
        .values()
        .filter(|f| f.language == Language::Rust && !f.is_test)
        .map(|f| f.path.as_str())
        .filter(|p| p.starts_with("src/") && *p != "src/main.rs" && !p.starts_with("src/bin/"))
        .filter(|p| crates::locate(p).package.is_empty())
        .collect()
}

fn text<'s>(n: Node, source: &'s str) -> &'s str {
    &source[n.byte_range()]
}

fn is_cfg_test_attr(n: Node, source: &str) -> bool {
    n.kind() == "attribute_item" && {
        let t: String = text(n, source).chars().filter(|c| !c.is_whitespace()).collect();
        t.starts_with("#[cfg(test") || t == "#[test]" || t.starts_with("#[cfg(all(test")
    }
}

/// The item's attributes and outer doc comments right above it: where its text starts, and
/// whether one of them makes it test code.
fn leading(node: Node, source: &str) -> (usize, bool) {
    let mut start = node.start_byte();
    let mut test = false;
    let mut cur = node.prev_sibling();
    while let Some(c) = cur {
        let outer_doc = c.kind() == "line_comment" && c.child_by_field_name("outer").is_some()
            || c.kind() == "block_comment" && text(c, source).starts_with("/**");
        if c.kind() != "attribute_item" && !outer_doc {
            break;
        }
        test |= is_cfg_test_attr(c, source);
        start = c.start_byte();
        cur = c.prev_sibling();
    }
    (start, test)
}

fn has_pub(node: Node, source: &str) -> bool {
    let mut c = node.walk();
    node.named_children(&mut c).any(|n| n.kind() == "visibility_modifier" && text(n, source) == "pub")
}

/// The simple segments of a path node (`crate::a::B`), or None when one is not simple
/// (generics, `<T as Trait>`).
pub(super) fn path_segments(n: Node, source: &str) -> Option<Vec<(String, usize, usize)>> {
    match n.kind() {
        "identifier" | "type_identifier" | "crate" | "self" | "super" => {
            Some(vec![(text(n, source).to_string(), n.start_byte(), n.end_byte())])
        }
        "scoped_identifier" | "scoped_type_identifier" => {
            let mut out = match n.child_by_field_name("path") {
                Some(p) => path_segments(p, source)?,
                None => return None,
            };
            let name = n.child_by_field_name("name")?;
            out.push((text(name, source).to_string(), name.start_byte(), name.end_byte()));
            Some(out)
        }
        _ => None,
    }
}

fn collect(n: Node, source: &str, item: &mut Item) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" | "type_identifier" => {
                item.uses.insert(text(n, source).to_string());
            }
            "scoped_identifier" | "scoped_type_identifier" => {
                if let Some(segments) = path_segments(n, source) {
                    item.uses.insert(segments[0].0.clone());
                    item.paths.push(WrittenPath { segments });
                    continue;
                }
            }
            "visibility_modifier" => {
                let t = text(n, source);
                if t.contains("super") || t.contains(" in ") || t.contains("(in") || t.contains("self") {
                    item.narrow_visibility.push((n.start_byte(), n.end_byte()));
                }
                continue;
            }
            "attribute_item" if is_cfg_test_attr(n, source) => {
                // A `#[cfg(test)]` item inside an impl or a body: dropped with its parent's
                // tests; its names do not count.
                continue;
            }
            "macro_invocation" => {
                // A macro's name is no value's or type's: `name!` resolves to a macro only.
                if let Some(m) = n.child_by_field_name("macro").filter(|m| m.kind() == "identifier") {
                    item.uses.insert(format!("{}!", text(m, source)));
                }
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c).filter(|x| x.kind() == "token_tree"));
                continue;
            }
            "token_tree" => {
                // A macro's arguments are tokens: `a` `::` `b` is a path all the same.
                token_paths(n, source, item);
            }
            "metavariable" if text(n, source) == "$crate" => {
                item.dollar_crate.push((n.start_byte(), n.end_byte()));
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // `$crate` inside a macro's token trees is a plain token sequence `$` `crate`.
    if item.kind == ItemKind::Macro {
        let body = &source[item.start..item.end];
        let mut from = 0;
        while let Some(i) = body[from..].find("$crate") {
            let at = item.start + from + i;
            if !item.dollar_crate.iter().any(|(s, _)| *s == at) {
                item.dollar_crate.push((at, at + "$crate".len()));
            }
            from += i + "$crate".len();
        }
        item.dollar_crate.sort();
    }
}

/// The paths among a token tree's own tokens (`inner` `::` `twice`), as written paths.
fn token_paths(tt: Node, source: &str, item: &mut Item) {
    let mut c = tt.walk();
    let tokens: Vec<Node> = tt.children(&mut c).collect();
    let segment = |n: Node| matches!(n.kind(), "identifier" | "crate" | "self" | "super");
    let mut i = 0;
    while i < tokens.len() {
        let starts = segment(tokens[i]) && (i == 0 || text(tokens[i - 1], source) != "::");
        if !starts {
            i += 1;
            continue;
        }
        let mut segments = vec![(text(tokens[i], source).to_string(), tokens[i].start_byte(), tokens[i].end_byte())];
        let mut j = i;
        while j + 2 < tokens.len() && text(tokens[j + 1], source) == "::" && segment(tokens[j + 2]) {
            j += 2;
            segments.push((text(tokens[j], source).to_string(), tokens[j].start_byte(), tokens[j].end_byte()));
        }
        if segments.len() > 1 {
            item.paths.push(WrittenPath { segments });
        }
        i = j + 1;
    }
}

/// The `use` leaves of a `use` declaration's argument, under `prefix`; false (and some
/// leaves left out) when a path is not plain segments.
pub(super) fn use_leaves(n: Node, source: &str, prefix: &[String], public: bool, out: &mut Vec<UseLeaf>) -> bool {
    let seg = |n: Node| path_segments(n, source).map(|v| v.into_iter().map(|s| s.0).collect::<Vec<_>>());
    // `a::{self}` binds `a`.
    let join = |path: Vec<String>| {
        let mut full = prefix.to_vec();
        full.extend(path.into_iter().filter(|s| s != "self" || prefix.is_empty()));
        full
    };
    match n.kind() {
        "identifier" | "scoped_identifier" | "crate" | "self" | "super" => {
            let Some(path) = seg(n) else { return false };
            let full = join(path);
            out.push(UseLeaf { bound: full.last().cloned(), path: full, public, cfg: Vec::new() });
        }
        "use_as_clause" => {
            let (Some(p), Some(a)) = (n.child_by_field_name("path"), n.child_by_field_name("alias")) else {
                return false;
            };
            let Some(path) = seg(p) else { return false };
            out.push(UseLeaf { bound: Some(text(a, source).to_string()), path: join(path), public, cfg: Vec::new() });
        }
        "use_wildcard" => {
            let mut full = prefix.to_vec();
            match n.named_child(0).map(seg) {
                Some(Some(p)) => full.extend(p),
                Some(None) => return false,
                None => {}
            }
            out.push(UseLeaf { bound: None, path: full, public, cfg: Vec::new() });
        }
        "scoped_use_list" => {
            let mut full = prefix.to_vec();
            if let Some(p) = n.child_by_field_name("path") {
                let Some(p) = seg(p) else { return false };
                full.extend(p);
            }
            let Some(list) = n.child_by_field_name("list") else { return false };
            return use_leaves(list, source, &full, public, out);
        }
        "use_list" => {
            let mut c = n.walk();
            let children: Vec<Node> = n.named_children(&mut c).collect();
            return children.into_iter().fold(true, |ok, child| use_leaves(child, source, prefix, public, out) && ok);
        }
        _ => return false,
    }
    true
}

fn item_kind(kind: &str) -> Option<ItemKind> {
    Some(match kind {
        "function_item" | "const_item" | "static_item" | "type_item" => ItemKind::Value,
        "struct_item" | "enum_item" | "union_item" => ItemKind::Type,
        "trait_item" => ItemKind::Trait,
        "impl_item" => ItemKind::Impl,
        "macro_definition" => ItemKind::Macro,
        _ => return None,
    })
}

/// The items a macro invoked at module level declares, read from its own tokens (not nested
/// groups): `static NAME` (`thread_local!`; `static ref NAME`, `lazy_static!`), `struct`,
/// `enum`, `union`, `trait`, `fn`, `const`, `type` followed by a name (`bitflags!`'s struct);
/// `pub` right before the keyword makes one public. Each is an item whose text is the whole
/// invocation (smol-rs/fastrand's `std::thread_local! { static RNG: … }`).
pub(super) fn macro_items(node: Node, source: &str) -> Vec<Declared> {
    let mut c = node.walk();
    let Some(tt) = node.named_children(&mut c).find(|n| n.kind() == "token_tree") else { return Vec::new() };
    declared(&inner_tokens(tt), source, false)
}

/// The tokens of a group between its delimiters.
fn inner_tokens(tt: Node) -> Vec<Node> {
    let mut c = tt.walk();
    let tokens: Vec<Node> = tt.children(&mut c).collect();
    let inner = if tokens.len() >= 2 { &tokens[1..tokens.len() - 1] } else { &tokens[..0] };
    inner.to_vec()
}

/// The items `tokens` declare at their own level; `metavariables`: a name may be a `$name`.
fn declared(tokens: &[Node], source: &str, metavariables: bool) -> Vec<Declared> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let kind = match text(*t, source) {
            "static" | "fn" | "const" | "type" => ItemKind::Value,
            "struct" | "enum" | "union" => ItemKind::Type,
            "trait" => ItemKind::Trait,
            _ => continue,
        };
        let mut k = i + 1;
        while tokens.get(k).is_some_and(|n| matches!(text(*n, source), "ref" | "mut")) {
            k += 1;
        }
        let named = |n: &&Node| n.kind() == "identifier" || metavariables && n.kind() == "metavariable";
        let Some(name) = tokens.get(k).filter(named) else { continue };
        let public = i > 0 && text(tokens[i - 1], source) == "pub";
        out.push((text(*name, source).to_string(), kind, public));
    }
    out
}

/// `tokens` split at their commas, each part's text without spaces (a trailing comma makes no
/// part).
fn parts<'t>(tokens: &[Node<'t>], source: &str) -> Vec<Vec<Node<'t>>> {
    let mut out: Vec<Vec<Node>> = vec![Vec::new()];
    for t in tokens {
        if text(*t, source) == "," {
            out.push(Vec::new());
        } else if let Some(last) = out.last_mut() {
            last.push(*t);
        }
    }
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

fn squeezed(nodes: &[Node], source: &str) -> String {
    nodes.iter().map(|n| text(*n, source)).collect::<String>().split_whitespace().collect()
}

/// The rules of a `macro_rules!` definition.
fn rules(node: Node, source: &str) -> Vec<Rule> {
    let mut c = node.walk();
    let mut out = Vec::new();
    for rule in node.named_children(&mut c).filter(|n| n.kind() == "macro_rule") {
        let (Some(left), Some(right)) = (rule.child_by_field_name("left"), rule.child_by_field_name("right")) else {
            continue;
        };
        let pattern = parts(&inner_tokens(left), source)
            .into_iter()
            .map(|p| match p.as_slice() {
                [b] if b.kind() == "token_binding_pattern" => {
                    let name = b.child_by_field_name("name").map_or("", |n| text(n, source));
                    Part::Bind(name.to_string())
                }
                _ => Part::Literal(squeezed(&p, source)),
            })
            .collect();
        out.push(Rule { pattern, declares: declared(&inner_tokens(right), source, true) });
    }
    out
}

/// What an invocation of one of the crate's macros declares, with that macro's name: the
/// first rule whose comma-separated parts match the arguments' (a `$name` binds one part),
/// its declared names with the metavariables bound. None when the macro is not the crate's
/// or no rule matches so.
fn expand(node: Node, source: &str, rules: &BTreeMap<String, Vec<Rule>>) -> Option<(String, Vec<Declared>)> {
    let name = node.child_by_field_name("macro").filter(|m| m.kind() == "identifier")?;
    let name = text(name, source);
    let mut c = node.walk();
    let tt = node.named_children(&mut c).find(|n| n.kind() == "token_tree")?;
    let args = parts(&inner_tokens(tt), source);
    for rule in rules.get(name)? {
        if rule.pattern.len() != args.len() {
            continue;
        }
        let mut bound = BTreeMap::new();
        let matched = rule.pattern.iter().zip(&args).all(|(p, a)| match p {
            Part::Bind(b) => {
                bound.insert(b.as_str(), squeezed(a, source));
                true
            }
            Part::Literal(l) => *l == squeezed(a, source),
        });
        if !matched {
            continue;
        }
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
        let declares = rule
            .declares
            .iter()
            .filter_map(|(n, kind, public)| {
                let n = if n.starts_with('$') { bound.get(n.as_str())?.clone() } else { n.clone() };
                ident(&n).then_some((n, *kind, *public))
            })
            .collect();
        return Some((name.to_string(), declares));
    }
    None
}

/// The `#[cfg(…)]` attributes right above an item, as written.
fn cfg_attributes(node: Node, source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = node.prev_sibling();
    while let Some(c) = cur.filter(|c| c.kind() == "attribute_item" || c.kind().ends_with("comment")) {
        let t = text(c, source);
        if c.kind() == "attribute_item" && t.split_whitespace().collect::<String>().starts_with("#[cfg(") {
            out.insert(0, t.to_string());
        }
        cur = c.prev_sibling();
    }
    out
}

/// Read the items of one item list (a file, or a `mod` body) of module `module`.
fn read_list(list: Node, source: &str, file: usize, module: &[String], out: &mut CrateItems) {
    let mut c = list.walk();
    for node in list.named_children(&mut c) {
        let (start, test) = leading(node, source);
        if test {
            continue;
        }
        match node.kind() {
            "use_declaration" => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    let public = has_pub(node, source);
                    let m = out.modules.entry(module.to_vec()).or_default();
                    let from = m.uses.len();
                    use_leaves(arg, source, &[], public, &mut m.uses);
                    let cfg = cfg_attributes(node, source);
                    m.uses[from..].iter_mut().for_each(|u| u.cfg.clone_from(&cfg));
                }
            }
            "mod_item" => {
                let Some(name) = node.child_by_field_name("name") else { continue };
                let mut inner = module.to_vec();
                inner.push(text(name, source).to_string());
                out.modules.entry(inner.clone()).or_default().public = has_pub(node, source);
                if let Some(body) = node.child_by_field_name("body") {
                    read_list(body, source, file, &inner, out);
                }
            }
            // `name! { … }`, or `name!(…);` (a statement).
            "macro_invocation" | "expression_statement" => {
                let Some(inv) = Some(node).filter(|n| n.kind() == "macro_invocation").or_else(|| {
                    node.named_child(0).filter(|c| c.kind() == "macro_invocation" && node.named_child_count() == 1)
                }) else {
                    continue;
                };
                let (made_by, declared) = match expand(inv, source, &out.rules) {
                    Some((m, d)) => (Some(m), d),
                    None => (None, macro_items(inv, source)),
                };
                for (name, kind, public) in declared {
                    let mut item = Item::new(file, module, name, kind, (start, node.end_byte()), public);
                    item.made_by.clone_from(&made_by);
                    collect(node, source, &mut item);
                    out.items.push(item);
                }
            }
            kind => {
                let Some(kind) = item_kind(kind) else { continue };
                let name = node.child_by_field_name("name").map(|n| text(n, source).to_string()).unwrap_or_default();
                let segs = |field: &str| {
                    let mut n = node.child_by_field_name(field);
                    while let Some(g) = n.filter(|g| g.kind() == "generic_type") {
                        n = g.child_by_field_name("type");
                    }
                    n.and_then(|n| path_segments(n, source))
                        .map(|v| v.into_iter().map(|s| s.0).collect())
                        .unwrap_or_default()
                };
                if kind == ItemKind::Macro {
                    out.rules.insert(name.clone(), rules(node, source));
                }
                let mut item = Item::new(file, module, name, kind, (start, node.end_byte()), has_pub(node, source));
                if kind == ItemKind::Impl {
                    item.impl_type = segs("type");
                    item.impl_trait = segs("trait");
                }
                collect(node, source, &mut item);
                if kind == ItemKind::Macro {
                    // Its own name is no use; what its body names is.
                    item.uses.remove(&item.name.clone());
                }
                out.items.push(item);
            }
        }
    }
}

/// Read the library crate at the repository root.
pub(super) fn read(root: &std::path::Path, index: &DefinitionIndex) -> Result<CrateItems, String> {
    let mut out = CrateItems { files: Vec::new(), items: Vec::new(), modules: BTreeMap::new(), rules: BTreeMap::new() };
    out.modules.entry(Vec::new()).or_default().public = true;
    let mut parser = super::super::index::parse::new_parser();
    for path in library_files(index) {
        let full = root.join(path);
        let source = std::fs::read_to_string(&full).map_err(|e| format!("cannot read {}: {e}", full.display()))?;
        let tree = parser.parse(&source, None).ok_or_else(|| format!("cannot parse {path}"))?;
        let module = crates::locate(path).module;
        let file = out.files.len();
        out.modules.entry(module.clone()).or_default();
        read_list(tree.root_node(), &source, file, &module, &mut out);
        out.files.push((path.to_string(), source));
    }
    // A file module's `pub`: from its parent's `mod` line, read above when the parent was
    // read first; read it again for the ones whose parent came later.
    let mut declared: BTreeMap<Vec<String>, bool> = BTreeMap::new();
    for (path, source) in &out.files {
        let module = crates::locate(path).module;
        let Some(tree) = parser.parse(source, None) else { continue };
        let mut c = tree.root_node().walk();
        for node in tree.root_node().named_children(&mut c) {
            if node.kind() == "mod_item" && node.child_by_field_name("body").is_none() {
                if let Some(name) = node.child_by_field_name("name") {
                    let mut m = module.clone();
                    m.push(text(name, source).to_string());
                    declared.insert(m, has_pub(node, source));
                }
            }
        }
    }
    for (m, public) in declared {
        out.modules.entry(m).or_default().public = public;
    }
    Ok(out)
}
