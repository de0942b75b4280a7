//! The reference solution of a Go Level 2 task: the feature's top-level declarations copied
//! from their package into `agent_code`, with every package-level declaration they name
//! (transitively; a type brings all its methods), in file and source order, and the imports
//! the copied code uses.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use tree_sitter::Node;

use super::{Mirror, dir_of, init_file, mirrors, package_name};
use crate::Language;
use crate::go::edit::{binding, parse};
use crate::interface::Level2Sources;

/// A top-level declaration of the source package.
struct Decl {
    file: usize,
    start: usize,
    end: usize,
    /// Names it declares (a grouped `const (…)` declares several).
    names: Vec<String>,
    /// A method's receiver base type.
    receiver: Option<String>,
    /// Identifiers and type identifiers it uses.
    uses: BTreeSet<String>,
    /// Selector operands it uses (package bindings among them).
    roots: BTreeSet<String>,
    /// `operand.field` pairs it uses: the names it takes from other packages.
    selectors: BTreeSet<(String, String)>,
    /// A function's result types (the types it makes, for a constructor).
    makes: BTreeSet<String>,
}

struct SourceFile {
    path: String,
    text: String,
    constrained: bool,
    /// Import binding → the import spec as written, and its import path.
    imports: BTreeMap<String, (String, String)>,
}

const GOOS: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "illumos",
    "ios",
    "js",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "linux",
];
const GOARCH: &[&str] = &[
    "386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le", "mipsle", "ppc64", "ppc64le", "riscv64",
    "s390x", "wasm",
];

/// A file only some builds compile: a `//go:build` line, or a `_GOOS`/`_GOARCH` name.
fn constrained(path: &str, text: &str) -> bool {
    let stem = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".go");
    let parts: Vec<&str> = stem.split('_').collect();
    let by_name = parts.len() > 1 && parts[1..].iter().rev().take(2).any(|p| GOOS.contains(p) || GOARCH.contains(p));
    by_name || text.lines().take_while(|l| !l.starts_with("package ")).any(|l| l.starts_with("//go:build"))
}

/// The start of a declaration's doc comment (the comment lines right above it).
fn doc_start(node: Node) -> usize {
    let mut start = node.start_byte();
    let mut row = node.start_position().row;
    let mut cur = node.prev_sibling();
    while let Some(c) = cur.filter(|c| c.kind() == "comment" && c.end_position().row + 1 == row) {
        start = c.start_byte();
        row = c.start_position().row;
        cur = c.prev_sibling();
    }
    start
}

#[derive(Default)]
struct Uses {
    names: BTreeSet<String>,
    roots: BTreeSet<String>,
    selectors: BTreeSet<(String, String)>,
}

fn collect_uses(node: Node, text: &str) -> Uses {
    let mut out = Uses::default();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" | "type_identifier" => {
                out.names.insert(text[n.byte_range()].to_string());
            }
            "selector_expression" | "qualified_type" => {
                let op = n.child_by_field_name("operand").or_else(|| n.child_by_field_name("package"));
                let field = n.child_by_field_name("field").or_else(|| n.child_by_field_name("name"));
                if let Some(op) = op.filter(|o| matches!(o.kind(), "identifier" | "package_identifier")) {
                    let op = text[op.byte_range()].to_string();
                    if let Some(f) = field {
                        out.selectors.insert((op.clone(), text[f.byte_range()].to_string()));
                    }
                    out.roots.insert(op);
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out
}

/// The names a top-level declaration declares, and a method's receiver type.
fn declared(node: Node, text: &str) -> (Vec<String>, Option<String>) {
    let name = |n: Node| n.child_by_field_name("name").map(|x| text[x.byte_range()].to_string());
    match node.kind() {
        "function_declaration" => (name(node).into_iter().collect(), None),
        "method_declaration" => {
            let recv = node.child_by_field_name("receiver").and_then(|r| {
                let mut found = None;
                let mut stack = vec![r];
                while let Some(n) = stack.pop() {
                    if n.kind() == "type_identifier" {
                        found = Some(text[n.byte_range()].to_string());
                        break;
                    }
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c).collect::<Vec<_>>().into_iter().rev());
                }
                found
            });
            (Vec::new(), recv)
        }
        _ => {
            let mut names = Vec::new();
            let mut stack = vec![node];
            while let Some(n) = stack.pop() {
                if matches!(n.kind(), "type_spec" | "type_alias" | "const_spec" | "var_spec") {
                    let mut c = n.walk();
                    names.extend(n.children_by_field_name("name", &mut c).map(|x| text[x.byte_range()].to_string()));
                    continue;
                }
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            (names, None)
        }
    }
}

/// The names an import without an alias may bind: its last path element, and the package
/// names such paths usually hold (`yaml` for `yaml.v3`, `foo` for `go-foo` or `foo-go`).
fn guesses(last: &str) -> Vec<String> {
    let mut out = vec![last.to_string()];
    let base = last.split('.').next().unwrap_or(last);
    let base = base.strip_prefix("go-").unwrap_or(base);
    let base = base.strip_suffix("-go").unwrap_or(base);
    out.push(base.to_string());
    out.push(base.replace('-', "_"));
    out.push(base.replace('-', ""));
    out.sort();
    out.dedup();
    out
}

fn read_package(sources: &Level2Sources<'_>, dir: &str) -> Result<(Vec<SourceFile>, Vec<Decl>), String> {
    let mut files = Vec::new();
    let mut decls = Vec::new();
    let paths: BTreeSet<&String> = sources
        .index
        .files
        .values()
        .filter(|f| f.language == Language::Go && !f.is_test)
        .filter(|f| f.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("") == dir)
        .map(|f| &f.path)
        .collect();
    for path in paths {
        let full = sources.root.join(path);
        let text = std::fs::read_to_string(&full).map_err(|e| format!("cannot read {}: {e}", full.display()))?;
        let tree = parse(&text, path).map_err(|e| e.to_string())?;
        let root = tree.root_node();
        let mut imports = BTreeMap::new();
        let mut c = root.walk();
        for top in root.named_children(&mut c) {
            match top.kind() {
                "import_declaration" => {
                    let mut stack = vec![top];
                    while let Some(n) = stack.pop() {
                        if n.kind() == "import_spec" {
                            if n.child_by_field_name("path").is_some_and(|p| &text[p.byte_range()] == "\"C\"") {
                                return Err(format!("{path} uses cgo (import \"C\")"));
                            }
                            if let Some(b) = binding(n, &text) {
                                let explicit = n.child_by_field_name("name").is_some();
                                let path = n
                                    .child_by_field_name("path")
                                    .map(|p| text[p.byte_range()].trim_matches(['"', '`']).to_string())
                                    .unwrap_or_default();
                                for g in if explicit { vec![b] } else { guesses(&b) } {
                                    imports.insert(g, (text[n.byte_range()].to_string(), path.clone()));
                                }
                            }
                            continue;
                        }
                        let mut cc = n.walk();
                        stack.extend(n.named_children(&mut cc));
                    }
                }
                "function_declaration"
                | "method_declaration"
                | "type_declaration"
                | "const_declaration"
                | "var_declaration" => {
                    let (names, receiver) = declared(top, &text);
                    let Uses { names: uses, roots, selectors } = collect_uses(top, &text);
                    let makes = match top.kind() {
                        "function_declaration" => {
                            top.child_by_field_name("result").map(|r| collect_uses(r, &text).names).unwrap_or_default()
                        }
                        _ => BTreeSet::new(),
                    };
                    let start = doc_start(top);
                    let file = files.len();
                    let end = top.end_byte();
                    decls.push(Decl { file, start, end, names, receiver, uses, roots, selectors, makes });
                }
                _ => {}
            }
        }
        files.push(SourceFile { path: path.clone(), constrained: constrained(path, &text), text, imports });
    }
    Ok((files, decls))
}

/// The declarations to copy: the feature's, and what they name, to a fixed point.
fn closure(files: &[SourceFile], decls: &[Decl], seeds: &BTreeSet<String>) -> Result<BTreeSet<usize>, String> {
    // Name → declaration; an unconstrained file's declaration wins.
    let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, d) in decls.iter().enumerate() {
        for n in d.names.iter().filter(|n| n.as_str() != "_" && n.as_str() != "init") {
            match by_name.get(n.as_str()) {
                Some(&j) if !files[decls[j].file].constrained || files[d.file].constrained => {}
                _ => {
                    by_name.insert(n, i);
                }
            }
        }
    }
    let mut methods: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, d) in decls.iter().enumerate() {
        if let Some(r) = &d.receiver
            && !files[d.file].constrained
        {
            methods.entry(r).or_default().push(i);
        }
    }
    let mut out = BTreeSet::new();
    let mut todo: Vec<usize> = Vec::new();
    for s in seeds {
        todo.push(*by_name.get(s.as_str()).ok_or_else(|| format!("no declaration of {s} in its package"))?);
    }
    while let Some(i) = todo.pop() {
        if !out.insert(i) {
            continue;
        }
        let d = &decls[i];
        todo.extend(d.uses.iter().filter_map(|u| by_name.get(u.as_str())).filter(|j| !out.contains(j)));
        for n in &d.names {
            todo.extend(methods.get(n.as_str()).into_iter().flatten().filter(|j| !out.contains(j)));
        }
    }
    Ok(out)
}

/// One of the feature's packages, its files and declarations, the declarations to copy, and
/// where the copy goes.
struct Carved {
    dir: String,
    from: Option<String>,
    mirror: Mirror,
    files: Vec<SourceFile>,
    decls: Vec<Decl>,
    chosen: BTreeSet<usize>,
    seeds: BTreeSet<String>,
    /// The feature's own names (the seeds before constructors and other packages' uses).
    own: BTreeSet<String>,
}

/// The exported functions of the package that make one of `types` (return it): a type taken
/// whole comes with its constructors, so that the tests make its values from the package too
/// (a value of the original type has the original's masked methods).
fn constructors(files: &[SourceFile], decls: &[Decl], types: &BTreeSet<String>) -> BTreeSet<String> {
    decls
        .iter()
        .filter(|d| !files[d.file].constrained && d.receiver.is_none() && !d.makes.is_disjoint(types))
        .flat_map(|d| &d.names)
        .filter(|n| n.chars().next().is_some_and(char::is_uppercase))
        .cloned()
        .collect()
}

/// The types that stay whose methods the feature has, by package directory: the package
/// takes them whole.
fn whole_types_by_dir(sources: &Level2Sources<'_>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in sources.extracted.iter().filter_map(|id| sources.index.get(id)) {
        if let Some(t) =
            d.parent.as_ref().filter(|p| !sources.extracted.contains(*p)).and_then(|p| sources.index.get(p))
        {
            out.entry(dir_of(&d.path).to_string()).or_default().insert(t.name.clone());
        }
    }
    out
}

/// The feature's top-level names by package directory: its own, and the type that stays of
/// each of its methods (see `GoLevel2::takes_whole_types`).
fn seeds_by_dir(sources: &Level2Sources<'_>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in sources.extracted.iter().filter_map(|id| sources.index.get(id)) {
        if d.language != Language::Go || d.is_test {
            continue;
        }
        let name = match &d.parent {
            None => d.name.clone(),
            Some(p) if !sources.extracted.contains(p) => match sources.index.get(p) {
                Some(t) => t.name.clone(),
                None => continue,
            },
            Some(_) => continue,
        };
        out.entry(dir_of(&d.path).to_string()).or_default().insert(name);
    }
    out
}

/// The names the chosen declarations of `c` take from the other mirrored packages, by the
/// import path of the package they come from.
fn cross_uses(c: &Carved) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for d in c.chosen.iter().map(|&i| &c.decls[i]) {
        for (op, field) in &d.selectors {
            if let Some((_, path)) = c.files[d.file].imports.get(op) {
                out.entry(path.as_str()).or_default().insert(field.as_str());
            }
        }
    }
    out
}

/// Every package of the feature with the declarations to copy: each package's closure, and
/// what the copies take from each other's packages (they import each other's mirrors), to a
/// fixed point.
fn copy(sources: &Level2Sources<'_>) -> Result<Vec<Carved>, String> {
    let seeds = seeds_by_dir(sources);
    if seeds.is_empty() {
        return Err("the feature has no Go definitions".into());
    }
    let mirrors = mirrors(sources.index, sources.extracted, sources.package);
    let whole = whole_types_by_dir(sources);
    let mut carved = Vec::new();
    for (dir, mut seeds) in seeds {
        let own = seeds.clone();
        let (files, decls) = read_package(sources, &dir)?;
        if let Some(types) = whole.get(&dir) {
            seeds.extend(constructors(&files, &decls, types));
        }
        let chosen = closure(&files, &decls, &seeds)?;
        let mirror = mirrors.get(&dir).cloned().ok_or_else(|| format!("no mirror of the package in {dir}"))?;
        let from = Some(mirror.from.clone()).filter(|f| !f.is_empty());
        carved.push(Carved { dir, from, mirror, files, decls, chosen, seeds, own });
    }
    loop {
        let mut wanted: Vec<(usize, String)> = Vec::new();
        for c in &carved {
            for (path, names) in cross_uses(c) {
                let Some(j) = carved.iter().position(|o| o.mirror.from == path) else { continue };
                let o = &carved[j];
                let declared = |n: &str| o.decls.iter().any(|d| d.names.iter().any(|x| x == n));
                wanted.extend(
                    names.into_iter().filter(|n| !o.seeds.contains(*n) && declared(n)).map(|n| (j, n.to_string())),
                );
            }
        }
        if wanted.is_empty() {
            return Ok(carved);
        }
        for (j, name) in wanted {
            carved[j].seeds.insert(name);
        }
        for c in &mut carved {
            c.chosen = closure(&c.files, &c.decls, &c.seeds)?;
        }
    }
}

/// What the package holds besides the feature's own code.
pub struct Support {
    /// The feature's package (import path).
    pub from: String,
    /// Declarations of that package the feature uses, sorted.
    pub names: Vec<String>,
    /// Types that stay there whose methods the feature has, taken whole, sorted.
    pub whole_types: Vec<String>,
    /// Where the package goes: its own import path, or a sub-package of the agent package
    /// when the feature spans several packages.
    pub mirror: Mirror,
}

/// See [`Support`], for each of the feature's packages (the one at the agent package's root
/// first).
pub fn support(sources: &Level2Sources<'_>) -> Result<Vec<Support>, String> {
    let mut out = Vec::new();
    let whole = whole_types_by_dir(sources);
    for c in copy(sources)? {
        let whole_types = whole.get(&c.dir).cloned().unwrap_or_default();
        let names: BTreeSet<&String> = c
            .chosen
            .iter()
            .flat_map(|&i| &c.decls[i].names)
            .filter(|n| !c.own.contains(*n) && n.as_str() != "_")
            .collect();
        out.push(Support {
            from: c.from.clone().unwrap_or(c.dir.clone()),
            names: names.into_iter().cloned().collect(),
            whole_types: whole_types.into_iter().collect(),
            mirror: c.mirror.clone(),
        });
    }
    out.sort_by_key(|s| s.mirror.import != sources.package);
    Ok(out)
}

/// The exported top-level names each copy declares, by the import path of the package it
/// copies: the rewritten tests take all of them from the copy, so that the values they hand
/// to the feature are the copy's types.
pub fn copied_names(sources: &Level2Sources<'_>) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in copy(sources)? {
        let names = c.chosen.iter().flat_map(|&i| &c.decls[i].names);
        let exported = names.filter(|n| n.chars().next().is_some_and(char::is_uppercase)).cloned();
        out.entry(c.mirror.from.clone()).or_default().extend(exported);
    }
    Ok(out)
}

/// The text of one package's copy: its chosen declarations, in file and source order, with
/// the imports they use; an import of another mirrored package names the mirror instead.
fn package_text(c: &Carved, all: &[Carved]) -> String {
    let roots: BTreeSet<&String> = c.chosen.iter().flat_map(|&i| &c.decls[i].roots).collect();
    let mut imports: BTreeSet<String> = BTreeSet::new();
    for f in c.chosen.iter().map(|&i| &c.files[c.decls[i].file]) {
        for (b, (spec, path)) in f.imports.iter().filter(|(b, _)| roots.contains(b)) {
            match all.iter().find(|o| &o.mirror.from == path) {
                Some(o) => imports.insert(format!("{b} \"{}\"", o.mirror.import)),
                None => imports.insert(spec.clone()),
            };
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Package {} is the reference solution of a Level 2 task: the feature's code from\n// package {}, with the package-level code it needs.\npackage {}",
        c.mirror.name,
        c.from.as_deref().unwrap_or(&c.dir),
        c.mirror.name
    );
    if !imports.is_empty() {
        out.push_str("\nimport (\n");
        for spec in imports {
            let _ = writeln!(out, "\t{spec}");
        }
        out.push_str(")\n");
    }
    let mut order: Vec<usize> = c.chosen.iter().copied().collect();
    order.sort_by_key(|&i| (&c.files[c.decls[i].file].path, c.decls[i].start));
    for i in order {
        let d = &c.decls[i];
        let _ = write!(out, "\n{}\n", &c.files[d.file].text[d.start..d.end]);
    }
    out
}

/// The reference package's files, `(path relative to the tree, text)`, the package's own
/// file first: see the module doc. A feature of one package is one file; a feature that
/// spans several packages has one per package, each at its mirror's place.
pub fn reference_files(sources: &Level2Sources<'_>) -> Result<Vec<(String, String)>, String> {
    let carved = copy(sources)?;
    let mut out: Vec<(String, String)> =
        carved.iter().map(|c| (c.mirror.file.clone(), package_text(c, &carved))).collect();
    let root = init_file(sources.package);
    if !out.iter().any(|(f, _)| *f == root) {
        let name = package_name(sources.package);
        let doc = format!("// Package {name} holds the feature's packages below it.\npackage {name}\n");
        out.push((root.clone(), doc));
    }
    out.sort_by_key(|(f, _)| (*f != root, f.clone()));
    Ok(out)
}

/// The reference package's own file's text (see [`reference_files`]).
pub fn reference(sources: &Level2Sources<'_>) -> Result<String, String> {
    Ok(reference_files(sources)?.swap_remove(0).1)
}
