//! Go Level 2 (from scratch): the feature becomes a package of its own, `agent_code/` at the
//! module root (import path `<module path>/agent_code`, package name `agent_code`), and the
//! F2P test files are rewritten to use it:
//!
//! - in a test file of the feature's own package (`package foo`), every bare name of an
//!   extracted exported top-level function or type becomes `agent_code.Name` (and the name
//!   of a type that stays whose methods the feature has: the package takes it whole);
//! - anywhere, `foo.Name` through an import of the feature's package becomes
//!   `agent_code.Name`, and the import goes when nothing else uses it;
//! - `import "<module>/agent_code"` is added after the package clause.
//!
//! The reference solution ([`reference`]) is the feature's own code copied into the package
//! with the package-level code it names (transitively: helpers, types with all their
//! methods, vars and consts), never `init` functions; the original package is not imported
//! (a test of that package importing `agent_code` would make an import cycle). So the
//! reference proves the package alone, added to the masked state, passes the rewritten
//! tests: the gold patch does not restore the repository. A type taken whole comes with the
//! package's exported functions that return it (its constructors), and the rewritten tests
//! take every exported name the copy declares from the copy, so the values they hand to the
//! feature are of the copy's types.
//!
//! A feature that spans several packages is mirrored with their layout ([`Mirror`]): the
//! package in directory `D` is copied to `agent_code/D` (the module root's to `agent_code`),
//! an import of another mirrored package names its mirror, and the tests import each mirror
//! as `agent_code_D`.
//!
//! Limits, on purpose: a type taken whole is a new type, so
//! a test that hands its values to code that stays fails to build (the task is rejected); files with build constraints (a
//! `//go:build` line or a `_GOOS`/`_GOARCH` name) serve only names no other file declares;
//! unexported names the tests use are not rewritten (such a task fails its validation and
//! is rejected); cgo (`import "C"`) has no reference.

mod reference;
#[cfg(test)]
mod tests;

pub use reference::{copied_names, reference, reference_files, support};

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::edit::{binding, parse, selector_roots, unused_import_edits};
use crate::Language;
use crate::edit::Edit;
use crate::index::{DefinitionIndex, FileIndex, NodeId};
use crate::interface::{Level2Packaging, Level2Sources};

/// Go's Level 2 packaging.
pub struct GoLevel2;

/// The last component of an import path: the package's name and folder.
fn package_name(package: &str) -> &str {
    package.rsplit('/').next().unwrap_or(package)
}

/// A repository-relative file's directory (`""` at the root).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// The package's file, relative to the tree: `agent_code/agent_code.go`.
fn init_file(package: &str) -> String {
    let name = package_name(package);
    format!("{name}/{name}.go")
}

/// A Go identifier made of a path: `a/b-c` → `a_b_c`.
fn identifier(path: &str) -> String {
    path.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// Where the mirror of the package in directory `dir` goes under the agent package: the same
/// path, but an `internal` element becomes `internal_` — `agent_code/internal/x` could be
/// imported only from inside `agent_code`, and the tests that imported `internal/x` are
/// outside it.
fn mirror_dir(dir: &str) -> String {
    dir.split('/').map(|e| if e == "internal" { "internal_" } else { e }).collect::<Vec<_>>().join("/")
}

/// A mirror's package and file name, from its directory's name: an identifier, never ending
/// in `_test` (`toml-test` → `toml_test_`: a `toml_test.go` file would be a test file).
fn mirror_name(dir: &str) -> String {
    let name = identifier(dir);
    if name.ends_with("_test") { format!("{name}_") } else { name }
}

/// Where one of the feature's packages goes. A feature of one package is the agent package
/// itself; a feature that spans several is mirrored with its layout: the package in
/// directory `D` becomes `agent_code/D` (the module root's becomes `agent_code`), and the
/// copies import each other's mirrors as the originals imported each other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mirror {
    /// The original package's import path.
    pub from: String,
    /// The mirror's import path.
    pub import: String,
    /// Its package name.
    pub name: String,
    /// The name the rewritten tests import it as.
    pub alias: String,
    /// Its file, relative to the tree.
    pub file: String,
}

/// The mirror of each of the feature's packages, by directory (see [`Mirror`]).
pub fn mirrors(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>, package: &str) -> BTreeMap<String, Mirror> {
    let mut dirs: BTreeMap<String, String> = BTreeMap::new();
    for d in extracted.iter().filter_map(|id| index.get(id)).filter(|d| d.language == Language::Go && !d.is_test) {
        if let Some(module) = index.files.get(&d.path).and_then(|f| f.module.clone()) {
            dirs.insert(dir_of(&d.path).to_string(), module);
        }
    }
    let own = package_name(package).to_string();
    let several = dirs.len() > 1;
    dirs.into_iter()
        .map(|(dir, from)| {
            let mirror = if !several || dir.is_empty() {
                Mirror {
                    from,
                    import: package.to_string(),
                    name: own.clone(),
                    alias: own.clone(),
                    file: init_file(package),
                }
            } else {
                let at = mirror_dir(&dir);
                let name = mirror_name(at.rsplit('/').next().unwrap_or(&at));
                Mirror {
                    from,
                    import: format!("{package}/{at}"),
                    alias: format!("{own}_{}", identifier(&dir)),
                    file: format!("{own}/{at}/{name}.go"),
                    name,
                }
            };
            (dir, mirror)
        })
        .collect()
}

/// The module path of the module at the tree's root, from the import paths of the indexed
/// Go files (a file in `a/b/` of module `m` has import path `m/a/b`).
pub fn root_module(index: &DefinitionIndex) -> Result<String, String> {
    let mut found: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for f in index.files.values().filter(|f| f.language == Language::Go) {
        let Some(module) = f.module.as_deref() else { continue };
        let dir = f.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let root = if dir.is_empty() {
            Some(module.to_string())
        } else {
            module.strip_suffix(dir).and_then(|m| m.strip_suffix('/')).map(str::to_string)
        };
        if let Some(root) = root {
            found.entry(dir.matches('/').count() + usize::from(!dir.is_empty())).or_default().insert(root);
        }
    }
    found
        .into_values()
        .next()
        .and_then(|roots| roots.into_iter().next())
        .ok_or_else(|| "no Go module has its go.mod at the repository root, where the package would go".to_string())
}

impl Level2Packaging for GoLevel2 {
    fn package_import(&self, _root: &std::path::Path, index: &DefinitionIndex, name: &str) -> Result<String, String> {
        Ok(format!("{}/{name}", root_module(index)?))
    }

    fn init_file(&self, package: &str) -> String {
        init_file(package)
    }

    fn reference(&self, sources: &Level2Sources<'_>) -> Result<String, String> {
        reference(sources)
    }

    fn reference_files(&self, sources: &Level2Sources<'_>) -> Result<Vec<(String, String)>, String> {
        reference_files(sources)
    }

    fn support_note(&self, sources: &Level2Sources<'_>) -> Option<String> {
        let support = support(sources).ok()?;
        let several = support.len() > 1;
        let mut out = Vec::new();
        if several {
            let list = support
                .iter()
                .map(|s| {
                    format!("`{}` (imported as `{}`) holds the part of `{}`", s.mirror.import, s.mirror.alias, s.from)
                })
                .collect::<Vec<_>>()
                .join("; ");
            out.push(format!(
                "The feature spans {} Go packages, and so does the package, with their layout: {list}. Each imports the others where the original packages imported each other.",
                support.len()
            ));
        }
        for s in &support {
            out.extend(support_sentences(s, several));
        }
        (!out.is_empty()).then(|| out.join(" "))
    }

    /// A method of a type that stays comes with a copy of its whole type.
    fn takes_whole_types(&self) -> bool {
        true
    }

    fn reference_restores_original(&self) -> bool {
        false
    }

    fn empty(&self, package: &str) -> String {
        let name = package_name(package);
        format!("// Package {name} is where the feature is to be written.\npackage {name}\n")
    }

    fn empty_file(&self, package: &str, path: &str) -> Option<String> {
        let own = package_name(package);
        let (dir, file) = path.strip_prefix(own)?.strip_prefix('/')?.rsplit_once('/')?;
        let name = file.strip_suffix(".go").filter(|n| *n == mirror_name(dir.rsplit('/').next().unwrap_or(dir)))?;
        Some(format!("// Package {name} is where the feature's part of `{dir}` is to be written.\npackage {name}\n"))
    }

    fn describe(&self, package: &str) -> String {
        let name = package_name(package);
        format!(
            "a Go package `{name}` in the directory\n`{name}/` at the module root, imported as `{package}`; it must not import the\npackage the feature came from (that package's tests import yours)"
        )
    }

    fn import_line(&self, package: &str, _name: &str) -> String {
        format!("import \"{package}\"")
    }

    fn import_line_of(&self, package: &str, name: &str, module: Option<&str>, modules: &BTreeSet<String>) -> String {
        let own = package_name(package);
        let root = package.strip_suffix(own).and_then(|r| r.strip_suffix('/'));
        let dir = module.zip(root).and_then(|(m, r)| m.strip_prefix(r)).and_then(|d| d.strip_prefix('/'));
        match dir {
            Some(dir) if modules.len() > 1 => {
                format!("import {own}_{} \"{package}/{}\"", identifier(dir), mirror_dir(dir))
            }
            _ => self.import_line(package, name),
        }
    }

    fn rewrite_test_imports(
        &self,
        root: &std::path::Path,
        source: &str,
        file: &FileIndex,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        package: &str,
    ) -> Vec<Edit> {
        let sources = Level2Sources { root, index, extracted, names: &[], package };
        let mut moved = moved_names(index, extracted);
        for (module, names) in copied_names(&sources).unwrap_or_default() {
            moved.entry(module).or_default().extend(names);
        }
        rewrite_test(source, file, index, extracted, package, &moved)
    }
}

/// What one package of the package must declare besides the feature's own objects.
fn support_sentences(support: &reference::Support, several: bool) -> Vec<String> {
    let quote = |v: &[String]| v.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let (it, its) = match several {
        true => (format!("`{}`", support.mirror.import), format!("`{}`", support.mirror.import)),
        false => ("It".to_string(), "The package".to_string()),
    };
    let mut out = Vec::new();
    if !support.whole_types.is_empty() {
        out.push(format!(
            "{its} declares its own {} with every method (the methods not listed below as they are in `{}`).",
            quote(&support.whole_types),
            support.from
        ));
    }
    if !support.names.is_empty() {
        out.push(format!(
            "{it} cannot import `{}` (that package's tests import it), so it also declares what the feature uses from there: {}.",
            support.from,
            quote(&support.names)
        ));
    }
    out
}

/// Exported top-level extracted names, by the import path of their package.
fn moved_names(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in extracted.iter().filter_map(|id| index.get(id)) {
        if d.language != Language::Go || d.is_test {
            continue;
        }
        // A method of a type that stays moves its type (the package takes it whole).
        let d = match &d.parent {
            None => d,
            Some(p) if !extracted.contains(p) => match index.get(p) {
                Some(t) => t,
                None => continue,
            },
            Some(_) => continue,
        };
        if !d.name.chars().next().is_some_and(char::is_uppercase) {
            continue;
        }
        if let Some(module) = index.files.get(&d.path).and_then(|f| f.module.clone()) {
            out.entry(module).or_default().insert(d.name.clone());
        }
    }
    out
}

/// The package clause's name.
fn package_clause(root: Node, source: &str) -> Option<(String, usize)> {
    let mut c = root.walk();
    let clause = root.named_children(&mut c).find(|n| n.kind() == "package_clause")?;
    let mut cc = clause.walk();
    let name = clause.named_children(&mut cc).find(|n| n.kind() == "package_identifier")?;
    Some((source[name.byte_range()].to_string(), clause.end_byte()))
}

/// Import specs of the file: binding → import path.
fn import_bindings(root: Node, source: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "import_spec" {
            let path = n.child_by_field_name("path").map(|p| source[p.byte_range()].trim_matches(['"', '`']));
            if let (Some(b), Some(path)) = (binding(n, source), path) {
                out.insert(b, path.to_string());
            }
            continue;
        }
        if matches!(n.kind(), "source_file" | "import_declaration" | "import_spec_list") {
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
    out
}

/// A bare name that is a declaration's own name or a composite literal's key, not a use.
fn is_declared_or_key(n: Node) -> bool {
    let Some(parent) = n.parent() else { return false };
    if parent.child_by_field_name("name").is_some_and(|c| c.id() == n.id()) {
        return true;
    }
    let is_key = |p: Node, c: Node| p.kind() == "keyed_element" && p.named_child(0).is_some_and(|k| k.id() == c.id());
    is_key(parent, n) || (parent.kind() == "literal_element" && parent.parent().is_some_and(|g| is_key(g, parent)))
}

/// Edits that make the Go test file `file` use the moved names from `package` (from the
/// mirror of their package, when the feature spans several: see [`Mirror`]).
fn rewrite_test(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
    moved: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Edit> {
    let Ok(tree) = parse(source, &file.path) else { return Vec::new() };
    let root = tree.root_node();
    let by_module: BTreeMap<String, Mirror> =
        mirrors(index, extracted, package).into_values().map(|m| (m.from.clone(), m)).collect();
    let target = |module: &str| by_module.get(module).cloned();
    let Some((clause, clause_end)) = package_clause(root, source) else { return Vec::new() };
    let internal = match clause.ends_with("_test") {
        true => None,
        false => file.module.as_ref().and_then(|m| Some((moved.get(m)?, target(m)?))),
    };
    let bindings: BTreeMap<String, (&BTreeSet<String>, Mirror)> = import_bindings(root, source)
        .into_iter()
        .filter_map(|(b, path)| Some((b, (moved.get(&path)?, target(&path)?))))
        .collect();
    let mut edits = Vec::new();
    let mut used: BTreeSet<&Mirror> = BTreeSet::new();
    let mut rewritten: BTreeMap<String, usize> = BTreeMap::new();
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "import_declaration" | "package_clause" => continue,
            "selector_expression" | "qualified_type" => {
                let (op, field) = match n.kind() {
                    "selector_expression" => (n.child_by_field_name("operand"), n.child_by_field_name("field")),
                    _ => (n.child_by_field_name("package"), n.child_by_field_name("name")),
                };
                if let (Some(op), Some(field)) = (op, field)
                    && matches!(op.kind(), "identifier" | "package_identifier")
                {
                    let b = &source[op.byte_range()];
                    *uses.entry(b.to_string()).or_default() += 1;
                    if let Some((_, mirror)) =
                        bindings.get(b).filter(|(names, _)| names.contains(&source[field.byte_range()]))
                    {
                        edits.push(Edit::replace(op.start_byte(), op.end_byte(), mirror.alias.clone()));
                        used.insert(mirror);
                        *rewritten.entry(b.to_string()).or_default() += 1;
                        continue;
                    }
                }
                // Only the operand can name a moved object (`Type.Method`); the field, or a
                // qualified type's name, is another package's or a member's.
                stack.extend(n.child_by_field_name("operand"));
                continue;
            }
            "identifier" | "type_identifier" => {
                let text = &source[n.byte_range()];
                if let Some((_, mirror)) = internal.as_ref().filter(|(names, _)| names.contains(text))
                    && !is_declared_or_key(n)
                {
                    edits.push(Edit::replace(n.start_byte(), n.end_byte(), format!("{}.{text}", mirror.alias)));
                    used.insert(mirror);
                }
                continue;
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    if edits.is_empty() {
        return edits;
    }
    let before = selector_roots(root, source);
    let gone: BTreeSet<String> =
        rewritten.iter().filter(|(b, k)| uses.get(*b) == Some(k)).map(|(b, _)| b.clone()).collect();
    let after: BTreeSet<String> = before.difference(&gone).cloned().collect();
    edits.extend(unused_import_edits(source, root, &before, &after));
    let imports = used
        .iter()
        .map(|m| match m.alias == m.name {
            true => format!("import \"{}\"", m.import),
            false => format!("import {} \"{}\"", m.alias, m.import),
        })
        .collect::<Vec<_>>()
        .join("\n");
    edits.push(Edit::insert(clause_end, format!("\n\n{imports}")));
    edits
}
