//! Rust Level 2 (from scratch): the feature becomes a crate of its own, `agent_code/` at the
//! repository root (`agent_code/Cargo.toml`, `agent_code/src/lib.rs`), which may depend on
//! the repository's library crate by path (`<crate> = { path = ".." }`) and use what it keeps
//! public. The repository's `Cargo.toml` names it as a dev-dependency
//! (`agent_code = { path = "agent_code" }`; cargo allows this cycle, and an integration test
//! links one copy of the library), and `Cargo.lock` gains its entry. The package's import
//! path is its crate name, `agent_code`; the library's name is the one integration tests
//! call it by ([`root_crate_name`]).
//!
//! F2P tests that are integration tests (`tests/*.rs`) are rewritten: a `use` leaf
//! `<crate>::…::X` of a moved item becomes `use agent_code::X;` (the rest of the `use`
//! stays), and a path `<crate>::…::X…` in code becomes `agent_code::X…`. Moved items: the
//! feature's top-level items, and the types whose methods the feature has (taken whole).
//!
//! The reference solution ([`reference`]) copies the feature's items with what they need
//! (see that module), so it proves the crate alone, added to the masked state, passes the
//! rewritten tests: the gold patch does not restore the repository.
//!
//! F2P doctests of the library become `#[test]` functions of a new integration test file
//! (`tests/carve_doctests.rs`, [`carried`]): their code already calls the crate by its name.
//!
//! Limits, on purpose: the library crate at the repository root only (a workspace's member
//! crates have none); F2P tests in `#[cfg(test)]` modules have no Level 2 task (they use the
//! crate's private items through `super::*`, which another crate cannot name); a copied type is a
//! new type, so a test that hands its values to code that stays fails to build (the task is
//! rejected); the copied code's own dependencies are the crate's non-optional
//! `[dependencies]`, and its features forward to the crate's.

mod carried;
mod crate_items;
mod manifest;
mod reference;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::Path;

use tree_sitter::Node;

use crate::Language;
use crate::edit::Edit;
use crate::index::{DefinitionIndex, DefinitionKind, FileIndex, NodeId};
use crate::interface::{CarriedTests, Level2Packaging, Level2Sources};

pub use manifest::write_manifest;

/// Rust's Level 2 packaging.
pub struct RustLevel2;

/// The crate's name and folder: the last component of the package's import path.
fn package_name(package: &str) -> &str {
    package.rsplit('/').next().unwrap_or(package)
}

/// The name integration tests call the library crate at the repository root by: the first
/// segment of their `use` items that resolve into its files, or (when the index resolved
/// none) that import a name the library defines; the most common one. Tests that name the
/// crate only in paths (`fastrand::u8(..)`, `itoa::Buffer::new()`: no `use` needed since
/// Rust 2018) call it by the library's name in `root`'s `Cargo.toml`, when their code
/// references the library's items.
pub fn root_crate_name(root: &Path, index: &DefinitionIndex) -> Result<String, String> {
    if !index.files.get("src/lib.rs").is_some_and(|f| f.language == Language::Rust) {
        return Err(
            "the repository root holds no library crate (src/lib.rs); Level 2 in Rust packages a feature of that crate"
                .into(),
        );
    }
    let defined: BTreeSet<&str> = index
        .files
        .values()
        .filter(|f| f.language == Language::Rust && !f.is_test && f.path.starts_with("src/"))
        .flat_map(|f| f.definitions.iter().filter_map(|id| index.get(id)))
        .map(|d| d.name.as_str())
        .collect();
    let mut resolved: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut named: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let tests =
        index.files.values().filter(|f| f.language == Language::Rust && f.is_test && f.path.starts_with("tests/"));
    for imp in tests.flat_map(|f| &f.imports) {
        let first = imp.module.split("::").next().unwrap_or("");
        if matches!(first, "" | "crate" | "self" | "super" | "std" | "core" | "alloc") {
            continue;
        }
        if imp.resolved_path.as_deref().is_some_and(|p| p.starts_with("src/")) {
            *resolved.entry(first).or_default() += 1;
        }
        if imp.names.iter().any(|n| defined.contains(n.name.rsplit("::").next().unwrap_or(&n.name))) {
            *named.entry(first).or_default() += 1;
        }
    }
    let counts = if resolved.is_empty() { named } else { resolved };
    if let Some((name, _)) = counts.into_iter().max_by_key(|(name, n)| (*n, std::cmp::Reverse(*name))) {
        return Ok(name.to_string());
    }
    let in_library = |id: &NodeId| index.get(id).is_some_and(|d| !d.is_test && d.path.starts_with("src/"));
    let by_path = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Rust && d.path.starts_with("tests/"))
        .any(|d| d.references.iter().any(in_library));
    match by_path || has_doctests(root, index) {
        true => std::fs::read_to_string(root.join("Cargo.toml"))
            .ok()
            .and_then(|text| super::index::package_name(&text))
            .ok_or_else(|| "the integration tests or doctests name the library crate, but its name is not in Cargo.toml's [package] or [lib]".into()),
        false => Err("no integration test (tests/*.rs) or doctest uses the library crate at the repository root, by a `use` or a path; Level 2 in Rust rewrites integration tests and carries doctests only".into()),
    }
}

/// Whether the library's doc comments hold doctests (they call the crate by its manifest
/// name): an item's, or the crate's `//!` comment.
fn has_doctests(root: &Path, index: &DefinitionIndex) -> bool {
    let of_items = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Rust && !d.is_test && d.path.starts_with("src/"))
        .any(|d| d.docstring.as_deref().and_then(super::doctests::doctest_code).is_some());
    of_items || {
        let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap_or_default();
        super::doctests::doctest_code(&carried::inner_doc(&lib)).is_some()
    }
}

impl Level2Packaging for RustLevel2 {
    fn package_import(&self, root: &Path, index: &DefinitionIndex, name: &str) -> Result<String, String> {
        root_crate_name(root, index)?;
        Ok(name.to_string())
    }

    fn init_file(&self, package: &str) -> String {
        format!("{}/src/lib.rs", package_name(package))
    }

    fn reference(&self, sources: &Level2Sources<'_>) -> Result<String, String> {
        let plan = reference::plan(sources, &root_crate_name(sources.root, sources.index)?)?;
        Ok(reference::render(&plan))
    }

    fn support_note(&self, sources: &Level2Sources<'_>) -> Option<String> {
        let plan = reference::plan(sources, &root_crate_name(sources.root, sources.index).ok()?).ok()?;
        let quote = |v: &[String]| v.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        let whole: Vec<String> =
            whole_types(sources.index, sources.extracted).into_iter().map(|id| id.name.clone()).collect();
        let mut out = Vec::new();
        if !whole.is_empty() {
            out.push(format!(
                "The crate declares its own {} with every method and impl (a crate cannot add methods to another crate's type).",
                quote(&whole)
            ));
        }
        let support: Vec<String> = plan.support_names().into_iter().filter(|n| !whole.contains(n)).collect();
        if !support.is_empty() {
            out.push(format!(
                "It also declares what the feature uses from `{}` that another crate cannot use there (private items): {}.",
                plan.krate,
                quote(&support)
            ));
        }
        let generated: Vec<String> = reference::generated_names(sources, &plan.krate).into_iter().collect();
        if !generated.is_empty() {
            out.push(format!(
                "It also declares the items `{}`'s own macros make around the feature, which the tests call from the crate: {}.",
                plan.krate,
                quote(&generated)
            ));
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

    fn empty(&self, _package: &str) -> String {
        "//! Where the feature is to be written.\n".into()
    }

    fn describe(&self, package: &str) -> String {
        let name = package_name(package);
        format!(
            "a Rust library crate named `{name}` in the directory `{name}/` at the repository\nroot (`{name}/Cargo.toml`, `{name}/src/lib.rs`); it may depend on the repository's\nlibrary crate by path (`path = \"..\"`) and use what that crate keeps public, and the\nrepository's `Cargo.toml` must list it under `[dev-dependencies]` as\n`{name} = {{ path = \"{name}\" }}` (with `Cargo.lock` brought up to date)"
        )
    }

    fn import_line(&self, package: &str, name: &str) -> String {
        format!("use {}::{name};", package_name(package))
    }

    fn rewrite_test_imports(
        &self,
        root: &Path,
        source: &str,
        file: &FileIndex,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        package: &str,
    ) -> Vec<Edit> {
        if !file.is_test || !file.path.starts_with("tests/") {
            return Vec::new();
        }
        let Ok(krate) = root_crate_name(root, index) else { return Vec::new() };
        let moved = moved_names(root, index, extracted, &krate);
        rewrite_test(source, &krate, package_name(package), &moved)
    }

    fn project_files(&self, tree: &Path, package: &str, env: &[(String, String)]) -> Result<Vec<String>, String> {
        write_manifest(tree, package_name(package), env)
    }

    /// The F2P doctests of the library become an integration test ([`carried`]).
    fn carried_tests(
        &self,
        root: &Path,
        index: &DefinitionIndex,
        extracted: &BTreeSet<NodeId>,
        tests: &[String],
        package: &str,
    ) -> Result<Option<CarriedTests>, String> {
        if !tests.iter().any(|t| t.contains(super::runner::DOCTEST_MARK)) {
            return Ok(None);
        }
        carried::carry(root, index, extracted, tests, &root_crate_name(root, index)?, package)
    }

    fn tests_blocker(&self, _index: &DefinitionIndex, tests: &[(String, String)]) -> Option<String> {
        let why = |(id, file): &(String, String)| {
            if id.contains(super::runner::DOCTEST_MARK) {
                Some(format!("`{id}` is a doctest"))
            } else if file.starts_with("tests/") {
                None
            } else if file.starts_with("src/") {
                Some(format!("`{id}` is in a `#[cfg(test)]` module of {file}"))
            } else {
                Some(format!("`{id}` is a test of another crate ({file})"))
            }
        };
        let found: Vec<String> = tests.iter().filter_map(why).collect();
        (!found.is_empty()).then(|| {
            format!(
                "no Level 2 task: F2P tests that cannot be pointed at another crate ({}); only integration tests in tests/ can use `agent_code`",
                crate::interface::listed(&found, 3)
            )
        })
    }
}

/// Types that stay whose methods the feature has (the package takes them whole).
fn whole_types<'i>(index: &'i DefinitionIndex, extracted: &BTreeSet<NodeId>) -> Vec<&'i crate::index::Definition> {
    let mut out: Vec<&crate::index::Definition> = Vec::new();
    for d in extracted.iter().filter_map(|id| index.get(id)).filter(|d| !d.is_test) {
        let mut p = d.parent.as_ref().and_then(|p| index.get(p));
        // A method's parent is its impl block, whose parent is the type.
        while let Some(x) = p.filter(|x| x.kind == DefinitionKind::Impl) {
            p = x.parent.as_ref().and_then(|pp| index.get(pp));
        }
        if let Some(t) = p.filter(|t| !extracted.contains(&t.id) && t.kind != DefinitionKind::Module)
            && !out.iter().any(|o| o.id == t.id)
        {
            out.push(t);
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// Names of the moved items: extracted top-level items of the library, whole types, and the
/// items the crate's macros make around them ([`reference::generated_names`]).
fn moved_names(root: &Path, index: &DefinitionIndex, extracted: &BTreeSet<NodeId>, krate: &str) -> BTreeSet<String> {
    let sources = Level2Sources { root, index, extracted, names: &[], package: "" };
    let mut out = extracted_names(index, extracted);
    out.extend(reference::generated_names(&sources, krate));
    out
}

/// Names of the extracted top-level items of the library and of whole types.
fn extracted_names(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = extracted
        .iter()
        .filter_map(|id| index.get(id))
        .filter(|d| d.language == Language::Rust && !d.is_test && d.path.starts_with("src/"))
        .filter(|d| d.kind != DefinitionKind::Impl)
        .filter(|d| d.parent.as_ref().and_then(|p| index.get(p)).is_none_or(|p| p.kind == DefinitionKind::Module))
        .map(|d| d.name.clone())
        .collect();
    out.extend(whole_types(index, extracted).into_iter().map(|t| t.name.clone()));
    out
}

fn text<'s>(n: Node, source: &'s str) -> &'s str {
    &source[n.byte_range()]
}

/// A `use` leaf of a test file: its path, its alias, whether a glob.
struct Leaf {
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
}

/// The leaves of a `use` declaration's argument; None when a path is not plain segments.
fn leaves(arg: Node, source: &str) -> Option<Vec<Leaf>> {
    let mut out = Vec::new();
    if !crate_items::use_leaves(arg, source, &[], false, &mut out) {
        return None;
    }
    let leaf = |u: crate_items::UseLeaf| {
        let alias = u.bound.clone().filter(|b| u.path.last() != Some(b));
        Leaf { glob: u.bound.is_none(), path: u.path, alias }
    };
    Some(out.into_iter().map(leaf).collect())
}

fn leaf_text(l: &Leaf) -> String {
    let mut p = l.path.join("::");
    if l.glob {
        p = if p.is_empty() { "*".into() } else { format!("{p}::*") };
    }
    match &l.alias {
        Some(a) => format!("{p} as {a}"),
        None => p,
    }
}

/// Edits that make the integration test `source` use the `moved` items from crate `package`
/// instead of crate `krate`.
fn rewrite_test(source: &str, krate: &str, package: &str, moved: &BTreeSet<String>) -> Vec<Edit> {
    let mut parser = super::index::parse::new_parser();
    let Some(tree) = parser.parse(source, None) else { return Vec::new() };
    let mut edits = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "use_declaration" => {
                let Some(arg) = n.child_by_field_name("argument") else { continue };
                let Some(ls) = leaves(arg, source) else { continue };
                let ours = |l: &Leaf| l.path.first().is_some_and(|f| f == krate);
                let is_moved = |l: &Leaf| !l.glob && ours(l) && l.path.last().is_some_and(|x| moved.contains(x));
                let globbed: Vec<&Leaf> = ls.iter().filter(|l| l.glob && ours(l)).collect();
                if !ls.iter().any(is_moved) && globbed.is_empty() {
                    continue;
                }
                let prefix = &source[n.start_byte()..arg.start_byte()];
                let mut lines: Vec<String> = Vec::new();
                let (gone, kept): (Vec<&Leaf>, Vec<&Leaf>) = ls.iter().partition(|l| is_moved(l));
                lines.extend(kept.iter().map(|l| format!("{prefix}{};", leaf_text(l))));
                let mut names: Vec<String> = gone
                    .iter()
                    .map(|l| {
                        let name = l.path.last().cloned().unwrap_or_default();
                        match &l.alias {
                            Some(a) if *a != name => format!("{name} as {a}"),
                            _ => name,
                        }
                    })
                    .collect();
                // A glob of the crate's modules: the moved names it would bring come from
                // the package, explicitly (an explicit import shadows a glob).
                if !globbed.is_empty() {
                    names.extend(moved.iter().cloned());
                }
                names.sort();
                names.dedup();
                if !names.is_empty() {
                    lines.push(match names.as_slice() {
                        [one] => format!("{prefix}{package}::{one};"),
                        _ => format!("{prefix}{package}::{{{}}};", names.join(", ")),
                    });
                }
                edits.push(Edit::replace(n.start_byte(), n.end_byte(), lines.join("\n")));
                continue;
            }
            "scoped_identifier" | "scoped_type_identifier" => {
                if n.parent().is_some_and(|p| p.kind() == "use_declaration" || p.kind().contains("use")) {
                    continue;
                }
                if let Some(segs) = crate_items::path_segments(n, source)
                    && segs.len() >= 2
                    && segs[0].0 == krate
                {
                    if let Some(k) = segs.iter().position(|s| moved.contains(&s.0)).filter(|&k| k > 0) {
                        edits.push(Edit::replace(segs[0].1, segs[k].2, format!("{package}::{}", segs[k].0)));
                    }
                    continue;
                }
            }
            "token_tree" => {
                edits.extend(rewrite_tokens(n, source, krate, package, moved));
                continue;
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    edits
}

/// Inside a macro's arguments paths are tokens: `krate` `::` `a` `::` `X` …
fn rewrite_tokens(tt: Node, source: &str, krate: &str, package: &str, moved: &BTreeSet<String>) -> Vec<Edit> {
    let mut c = tt.walk();
    let tokens: Vec<Node> = tt.children(&mut c).collect();
    let mut edits = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if t.kind() == "token_tree" {
            edits.extend(rewrite_tokens(t, source, krate, package, moved));
            i += 1;
            continue;
        }
        let preceded = i > 0 && text(tokens[i - 1], source) == "::";
        if t.kind() != "identifier" || text(t, source) != krate || preceded {
            i += 1;
            continue;
        }
        // The path's segments after the crate name.
        let mut j = i;
        let mut found = None;
        // `u128` in `fastrand::u128(..)` is a primitive type's token.
        let segment = |n: Node| matches!(n.kind(), "identifier" | "primitive_type");
        while j + 2 < tokens.len() && text(tokens[j + 1], source) == "::" && segment(tokens[j + 2]) {
            j += 2;
            if moved.contains(text(tokens[j], source)) {
                found = Some(j);
                break;
            }
        }
        if let Some(k) = found {
            let name = text(tokens[k], source);
            edits.push(Edit::replace(t.start_byte(), tokens[k].end_byte(), format!("{package}::{name}")));
            i = k + 1;
        } else {
            i = j + 1;
        }
    }
    edits
}
