//! The reference solution of a Go Level 2 task: the feature's top-level declarations copied
//! from their package into `agent_code`, with every package-level declaration they name
//! (transitively; a type brings all its methods), in file and source order, and the imports
//! the copied code uses.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use tree_sitter::Node;

use super::package_name;
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
}

struct SourceFile {
    path: String,
    text: String,
    constrained: bool,
    /// Import binding → the import spec as written.
    imports: BTreeMap<String, String>,
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

fn collect_uses(node: Node, text: &str, uses: &mut BTreeSet<String>, roots: &mut BTreeSet<String>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" | "type_identifier" => {
                uses.insert(text[n.byte_range()].to_string());
            }
            "selector_expression" | "qualified_type" => {
                let op = n.child_by_field_name("operand").or_else(|| n.child_by_field_name("package"));
                if let Some(op) = op.filter(|o| matches!(o.kind(), "identifier" | "package_identifier")) {
                    roots.insert(text[op.byte_range()].to_string());
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
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
                                for g in if explicit { vec![b] } else { guesses(&b) } {
                                    imports.insert(g, text[n.byte_range()].to_string());
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
                    let (mut uses, mut roots) = (BTreeSet::new(), BTreeSet::new());
                    collect_uses(top, &text, &mut uses, &mut roots);
                    let start = doc_start(top);
                    decls.push(Decl { file: files.len(), start, end: top.end_byte(), names, receiver, uses, roots });
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

/// The feature's package, its files and declarations, and the declarations to copy.
struct Carved {
    dir: String,
    from: Option<String>,
    files: Vec<SourceFile>,
    decls: Vec<Decl>,
    chosen: BTreeSet<usize>,
    seeds: BTreeSet<String>,
}

fn copy(sources: &Level2Sources<'_>) -> Result<Carved, String> {
    let tops: Vec<_> = sources
        .extracted
        .iter()
        .filter_map(|id| sources.index.get(id))
        .filter(|d| d.language == Language::Go && !d.is_test)
        .collect();
    let dirs: BTreeSet<&str> = tops.iter().map(|d| d.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")).collect();
    let dir = match dirs.len() {
        0 => return Err("the feature has no Go definitions".into()),
        1 => *dirs.first().unwrap_or(&""),
        _ => {
            let list = dirs.iter().map(|d| if d.is_empty() { "." } else { d }).collect::<Vec<_>>().join(", ");
            return Err(format!("the feature spans {} Go packages ({list}); one package holds one", dirs.len()));
        }
    };
    // A method of a type that stays brings its whole type (see `GoLevel2::takes_whole_types`).
    let seeds: BTreeSet<String> = tops
        .iter()
        .filter_map(|d| match &d.parent {
            None => Some(d.name.clone()),
            Some(p) if !sources.extracted.contains(p) => sources.index.get(p).map(|t| t.name.clone()),
            Some(_) => None,
        })
        .collect();
    let (files, decls) = read_package(sources, dir)?;
    let chosen = closure(&files, &decls, &seeds)?;
    let from = tops.first().and_then(|d| sources.index.files.get(&d.path)).and_then(|f| f.module.clone());
    Ok(Carved { dir: dir.to_string(), from, files, decls, chosen, seeds })
}

/// What the package holds besides the feature's own code.
pub struct Support {
    /// The feature's package (import path).
    pub from: String,
    /// Declarations of that package the feature uses, sorted.
    pub names: Vec<String>,
    /// Types that stay there whose methods the feature has, taken whole, sorted.
    pub whole_types: Vec<String>,
}

/// See [`Support`].
pub fn support(sources: &Level2Sources<'_>) -> Result<Support, String> {
    let c = copy(sources)?;
    let whole_types: BTreeSet<String> = sources
        .extracted
        .iter()
        .filter_map(|id| sources.index.get(id))
        .filter_map(|d| d.parent.as_ref().filter(|p| !sources.extracted.contains(*p)))
        .filter_map(|p| sources.index.get(p).map(|t| t.name.clone()))
        .collect();
    let names: BTreeSet<&String> = c
        .chosen
        .iter()
        .flat_map(|&i| &c.decls[i].names)
        .filter(|n| !c.seeds.contains(*n) && n.as_str() != "_")
        .collect();
    Ok(Support {
        from: c.from.unwrap_or(c.dir),
        names: names.into_iter().cloned().collect(),
        whole_types: whole_types.into_iter().collect(),
    })
}

/// The reference package's text: see the module doc.
pub fn reference(sources: &Level2Sources<'_>) -> Result<String, String> {
    let Carved { dir, from, files, decls, chosen, .. } = copy(sources)?;
    let name = package_name(sources.package);
    let roots: BTreeSet<&String> = chosen.iter().flat_map(|&i| &decls[i].roots).collect();
    let mut imports: BTreeSet<&str> = BTreeSet::new();
    for f in chosen.iter().map(|&i| &files[decls[i].file]) {
        imports.extend(f.imports.iter().filter(|(b, _)| roots.contains(b)).map(|(_, spec)| spec.as_str()));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// Package {name} is the reference solution of a Level 2 task: the feature's code from\n// package {}, with the package-level code it needs.\npackage {name}",
        from.as_deref().unwrap_or(&dir)
    );
    if !imports.is_empty() {
        out.push_str("\nimport (\n");
        for spec in imports {
            let _ = writeln!(out, "\t{spec}");
        }
        out.push_str(")\n");
    }
    let mut order: Vec<usize> = chosen.into_iter().collect();
    order.sort_by_key(|&i| (&files[decls[i].file].path, decls[i].start));
    for i in order {
        let d = &decls[i];
        let _ = write!(out, "\n{}\n", &files[d.file].text[d.start..d.end]);
    }
    Ok(out)
}
