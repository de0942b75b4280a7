//! The TypeScript/JavaScript definition index: functions (declarations, and arrow
//! functions / function expressions bound to names, exported or not), classes with their
//! methods, getters, setters, constructors and arrow-function fields, interfaces, type
//! aliases, enums, namespaces, and test cases of test files; with signatures, JSDoc,
//! imports, exports and the definitions each one names, resolved statically.
//!
//! Two passes as for Python: `parse` reduces each file to plain data (one tree alive per
//! worker), `link` resolves names across files. Both run in parallel with rayon; the
//! result is sorted, so the index is deterministic.
//!
//! Resolution: lexical scopes of nested functions and namespaces (class bodies are not
//! scopes: members are reached through `this.x` or `Class.x`), then the file's top-level
//! definitions, then ES imports (named, default, namespace; `import type`; relative
//! specifiers resolved with extension substitution `./a.js` → `a.ts`, `./a` → `a.ts`,
//! `a/index.ts`), following re-exports (`export { a as b } from`, `export *`) through any
//! chain. `this.m` resolves in the enclosing class; `obj.m` on anything it cannot type
//! resolves to every class member named `m` in the repository (an over-approximation on
//! purpose: a reference too many makes the extractor stub instead of delete, a reference
//! too few breaks the build). A class also references its members that implement or
//! override members of its repository base classes and interfaces (deleting them would
//! break `implements`/`abstract`). Besides relative specifiers, `baseUrl`-style paths (from
//! the root or `src/`) and `@/`, `~/`, `#/` aliases resolve (see `link.rs`); package names
//! (`vitest`, `node:fs`) resolve to nothing. CommonJS: `require` bindings (whole module or
//! destructured), `module.exports = { a, b: c }`, `module.exports = f`, `exports.x = a`,
//! and `exports.f = function …` definitions.

pub(crate) mod link;
pub(super) mod parse;
pub(super) mod queries;
mod signature;

use std::path::Path;

use rayon::prelude::*;
use tree_sitter::Node;

use crate::index::{Definition, FileIndex, Import, ImportedName, IndexError};
use parse::{Binding, ParsedFile, ReExport, span_of, text};

/// TypeScript and JavaScript files indexed together.
pub type ScriptIndex = crate::index::LanguageIndex;

/// Index files held in memory: `(repository-relative path, bytes)`, TypeScript and
/// JavaScript ones (others are skipped with a reason).
pub fn index_sources(sources: &[(String, Vec<u8>)]) -> ScriptIndex {
    let parsed: Vec<(String, Result<ParsedFile, IndexError>)> = sources
        .par_iter()
        .map_init(parse::new_parser, |parser, (path, bytes)| (path.clone(), parse::parse_file(parser, path, bytes)))
        .collect();
    finish(parsed)
}

/// Index the files `paths` (repository-relative, `/`-separated) under `root`.
pub fn index_files(root: &Path, paths: &[String]) -> ScriptIndex {
    let parsed = crate::walk::parse_files(root, paths, parse::new_parser, parse::parse_file);
    let parsed: Vec<(String, Result<ParsedFile, IndexError>)> = paths.iter().cloned().zip(parsed).collect();
    finish(parsed)
}

fn finish(results: Vec<(String, Result<ParsedFile, IndexError>)>) -> ScriptIndex {
    let (files, skipped) = crate::index::split_parsed(results, |f| &f.path);
    let linker = link::Linker::new(&files);
    let links: Vec<(FileIndex, Vec<link::Linked>)> =
        (0..files.len()).into_par_iter().map(|i| linker.link_file(i)).collect();
    drop(linker);
    // The parsed definitions are moved into the index, not copied.
    let linked: Vec<(FileIndex, Vec<Definition>)> = files
        .into_par_iter()
        .zip(links)
        .map(|(file, (index, links))| {
            let defs = file.defs.into_iter().zip(links).map(|(raw, link)| link.apply(raw.def, &file.path)).collect();
            (index, defs)
        })
        .collect();
    ScriptIndex::from_linked(linked, skipped)
}

fn source_of(stmt: Node, src: &str) -> Option<String> {
    let s = stmt.child_by_field_name("source")?;
    Some(parse::text(s, src).trim_matches(['"', '\'', '`']).to_string())
}

fn name_span(n: Node) -> crate::index::Span {
    span_of(n, n)
}

/// Read one `import` statement or non-declaration `export` statement into `file`.
/// `module_level`: whether its parent is the program.
pub(super) fn read_import_or_export(file: &mut ParsedFile, stmt: Node, src: &str, module_level: bool) {
    match stmt.kind() {
        "lexical_declaration" | "variable_declaration" => {
            return read_require(file, stmt, src, module_level);
        }
        "expression_statement" => return read_module_exports(file, stmt, src),
        _ => {}
    }
    if stmt.kind() == "import_statement" {
        read_import(file, stmt, src, module_level);
    } else {
        read_export(file, stmt, src, module_level);
    }
}

/// One `import` statement: its default, namespace and named bindings, and TypeScript's
/// `import x = require(…)`.
fn read_import(file: &mut ParsedFile, stmt: Node, src: &str, module_level: bool) {
    let Some(module) = source_of(stmt, src) else {
        return;
    };
    let mut names = Vec::new();
    let mut c = stmt.walk();
    for clause in stmt.named_children(&mut c) {
        match clause.kind() {
            "import_clause" => {
                let mut c2 = clause.walk();
                for part in clause.named_children(&mut c2) {
                    match part.kind() {
                        "identifier" => names.push(("default".to_string(), Some(text(part, src).to_string()), part)),
                        "namespace_import" => {
                            let mut c3 = part.walk();
                            if let Some(id) = part.named_children(&mut c3).find(|n| n.kind() == "identifier") {
                                names.push(("*".to_string(), Some(text(id, src).to_string()), part));
                            }
                        }
                        "named_imports" => {
                            let mut c3 = part.walk();
                            for spec in part.named_children(&mut c3).filter(|n| n.kind() == "import_specifier") {
                                let Some(name) = spec.child_by_field_name("name") else {
                                    continue;
                                };
                                let alias = spec.child_by_field_name("alias").map(|a| text(a, src).to_string());
                                let name = text(name, src).trim_matches(['"', '\'']).to_string();
                                names.push((name, alias, spec));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "import_require_clause" => {
                let mut c2 = clause.walk();
                if let Some(id) = clause.named_children(&mut c2).find(|n| n.kind() == "identifier") {
                    names.push(("*".to_string(), Some(text(id, src).to_string()), id));
                }
            }
            _ => {}
        }
    }
    push_import(file, stmt, module, names, module_level);
}

/// An `export` statement without a declaration: a re-export from another module
/// (`export { a as b } from`, `export * as ns from`, `export *`), or local exports
/// (`export { a }`, `export default a`).
fn read_export(file: &mut ParsedFile, stmt: Node, src: &str, module_level: bool) {
    let source = source_of(stmt, src);
    let mut c = stmt.walk();
    let children: Vec<Node> = stmt.children(&mut c).collect();
    let clause = children.iter().find(|n| n.kind() == "export_clause").copied();
    let mut specifiers: Vec<(String, Option<String>, Node)> = Vec::new();
    if let Some(clause) = clause {
        let mut c2 = clause.walk();
        for spec in clause.named_children(&mut c2).filter(|n| n.kind() == "export_specifier") {
            let Some(name) = spec.child_by_field_name("name") else {
                continue;
            };
            let alias = spec.child_by_field_name("alias").map(|a| text(a, src).trim_matches(['"', '\'']).to_string());
            specifiers.push((text(name, src).trim_matches(['"', '\'']).to_string(), alias, spec));
        }
    }
    match source {
        Some(module) => {
            let clause = clause.is_some().then_some(specifiers);
            read_reexport(file, stmt, src, module, clause, &children, module_level)
        }
        None => {
            for (name, alias, _) in specifiers {
                let exported = alias.unwrap_or_else(|| name.clone());
                file.local_exports.push((name, exported));
            }
            if children.iter().any(|n| !n.is_named() && n.kind() == "default")
                && let Some(v) = stmt.child_by_field_name("value").filter(|v| v.kind() == "identifier")
            {
                file.local_exports.push((text(v, src).to_string(), "default".to_string()));
            }
        }
    }
}

/// An `export … from module` statement: an [`Import`] of the names it re-exports (all of
/// them, `*`, without a clause) and the re-exports themselves. `clause`: the specifiers of
/// its export clause, when it has one.
fn read_reexport(
    file: &mut ParsedFile,
    stmt: Node,
    src: &str,
    module: String,
    clause: Option<Vec<(String, Option<String>, Node)>>,
    children: &[Node],
    module_level: bool,
) {
    let at = file.imports.len();
    let mut names = Vec::new();
    if let Some(specifiers) = clause {
        for (name, alias, spec) in specifiers {
            file.reexports.push(ReExport {
                import: at,
                imported: Some(name.clone()),
                exported: Some(alias.clone().unwrap_or_else(|| name.clone())),
            });
            names.push(ImportedName { name, alias, span: name_span(spec), target: None });
        }
    } else if let Some(ns) = children.iter().find(|n| n.kind() == "namespace_export") {
        let mut c3 = ns.walk();
        let alias = ns.named_children(&mut c3).last().map(|a| text(a, src).to_string());
        names.push(ImportedName { name: "*".to_string(), alias, span: name_span(*ns), target: None });
    } else {
        file.reexports.push(ReExport { import: at, imported: None, exported: None });
        names.push(ImportedName { name: "*".to_string(), alias: None, span: span_of(stmt, stmt), target: None });
    }
    file.imports.push(Import { span: span_of(stmt, stmt), module, resolved_path: None, names, module_level });
}

/// `const x = require("./m")` (a namespace binding, whose bare use means the module's
/// `module.exports`) and `const { a, b: c } = require("./m")` (named bindings). One
/// [`Import`] per statement; only a statement declaring one name per `require` is read.
fn read_require(file: &mut ParsedFile, stmt: Node, src: &str, module_level: bool) {
    let mut c = stmt.walk();
    let declarators: Vec<Node> = stmt.named_children(&mut c).filter(|n| n.kind() == "variable_declarator").collect();
    let [declarator] = declarators.as_slice() else {
        return;
    };
    let Some(call) = declarator.child_by_field_name("value") else {
        return;
    };
    let Some(arg) = call.child_by_field_name("arguments").and_then(|a| a.named_child(0)) else {
        return;
    };
    let Some(pattern) = declarator.child_by_field_name("name") else {
        return;
    };
    let module = text(arg, src).trim_matches(['"', '\'', '`']).to_string();
    let mut names: Vec<(String, Option<String>, Node)> = Vec::new();
    match pattern.kind() {
        "identifier" => names.push(("*".to_string(), Some(text(pattern, src).to_string()), pattern)),
        "object_pattern" => {
            let mut c2 = pattern.walk();
            for p in pattern.named_children(&mut c2) {
                match p.kind() {
                    "shorthand_property_identifier_pattern" => names.push((text(p, src).to_string(), None, p)),
                    "pair_pattern" => {
                        let (Some(k), Some(v)) = (p.child_by_field_name("key"), p.child_by_field_name("value")) else {
                            continue;
                        };
                        if v.kind() == "identifier" {
                            names.push((text(k, src).to_string(), Some(text(v, src).to_string()), p));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => return,
    }
    push_import(file, stmt, module, names, module_level);
}

/// Add the import `stmt` of `module` to `file`, with a binding per imported
/// `(name, alias, node)` (the alias, if any, is the local name).
fn push_import(
    file: &mut ParsedFile,
    stmt: Node,
    module: String,
    names: Vec<(String, Option<String>, Node)>,
    module_level: bool,
) {
    let at = file.imports.len();
    for (name, alias, _) in &names {
        let local = alias.clone().unwrap_or_else(|| name.clone());
        file.bindings.push(Binding { local, import: at, imported: name.clone() });
    }
    file.imports.push(Import {
        span: span_of(stmt, stmt),
        module,
        resolved_path: None,
        names: names
            .into_iter()
            .map(|(name, alias, node)| ImportedName { name, alias, span: name_span(node), target: None })
            .collect(),
        module_level,
    });
}

/// `module.exports = { a, b: c }`, `module.exports = a` (the module's `default`) and
/// `exports.x = a` / `module.exports.x = a` as local exports.
fn read_module_exports(file: &mut ParsedFile, stmt: Node, src: &str) {
    let Some((left, right)) = super::assignment_sides(stmt) else {
        return;
    };
    let target = text(left, src);
    let whole = target == "module.exports";
    let member = target.strip_prefix("module.exports.").or_else(|| target.strip_prefix("exports."));
    match (whole, member, right.kind()) {
        (true, _, "object") => {
            let mut c = right.walk();
            for p in right.named_children(&mut c) {
                match p.kind() {
                    "shorthand_property_identifier" => {
                        let n = text(p, src).to_string();
                        file.local_exports.push((n.clone(), n));
                    }
                    "pair" => {
                        let (Some(k), Some(v)) = (p.child_by_field_name("key"), p.child_by_field_name("value")) else {
                            continue;
                        };
                        if v.kind() == "identifier" {
                            file.local_exports
                                .push((text(v, src).to_string(), text(k, src).trim_matches(['"', '\'']).to_string()));
                        }
                    }
                    _ => {}
                }
            }
        }
        (true, _, "identifier") => file.local_exports.push((text(right, src).to_string(), "default".to_string())),
        (false, Some(name), "identifier") => file.local_exports.push((text(right, src).to_string(), name.to_string())),
        _ => {}
    }
}
