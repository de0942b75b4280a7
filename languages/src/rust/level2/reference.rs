//! The reference solution of a Rust Level 2 task: `agent_code/src/lib.rs` holding the
//! feature's items copied from the library crate, with the crate's items they name that
//! another crate cannot use (private ones, or ones in private modules), transitively, and
//! `use <crate>::…;` for the public ones that stay. A type or trait copied brings every impl
//! of it; a method of a type that stays brings its whole type (a crate cannot add inherent
//! methods to another crate's type). All items sit at the crate root of `agent_code`, so
//! paths the copied code writes into its own crate (`crate::`, `self::`, `super::`) are
//! rewritten: to the bare name of what is copied, to `<crate>::…` for what stays.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::crate_items::{CrateItems, ItemKind, read};
use crate::Language;
use crate::interface::Level2Sources;

/// What a name or a path resolves to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Item(usize),
    Module(Vec<String>),
    External(Vec<String>),
}

struct Resolver<'c> {
    krate: &'c str,
    c: &'c CrateItems,
    by_name: BTreeMap<(&'c [String], &'c str), usize>,
    macros: BTreeMap<&'c str, usize>,
    /// The crate's optional dependencies, by the name its code calls them: `agent_code` has
    /// none of them.
    optional: BTreeMap<String, String>,
}

impl<'c> Resolver<'c> {
    fn new(krate: &'c str, c: &'c CrateItems, optional: BTreeMap<String, String>) -> Self {
        let mut by_name = BTreeMap::new();
        let mut macros = BTreeMap::new();
        for (i, it) in c.items.iter().enumerate() {
            match it.kind {
                ItemKind::Impl => {}
                ItemKind::Macro => {
                    macros.entry(it.name.as_str()).or_insert(i);
                }
                _ => {
                    by_name.entry((it.module.as_slice(), it.name.as_str())).or_insert(i);
                }
            }
        }
        Resolver { krate, c, by_name, macros, optional }
    }

    fn is_module(&self, m: &[String]) -> bool {
        self.c.modules.contains_key(m)
    }

    /// `path` as written in module `module`: an absolute path inside the crate, or an
    /// external one.
    fn absolutize(&self, module: &[String], path: &[String]) -> Result<Vec<String>, Vec<String>> {
        let Some(first) = path.first() else { return Ok(module.to_vec()) };
        match first.as_str() {
            "crate" => Ok(path[1..].to_vec()),
            "self" => Ok([module, &path[1..]].concat()),
            "super" => {
                let mut m = module.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    m.pop();
                    rest = &rest[1..];
                }
                Ok([m.as_slice(), rest].concat())
            }
            f if f == self.krate => Ok(path[1..].to_vec()),
            f => {
                let here: Vec<String> = [module, &[f.to_string()]].concat();
                // A name a `use` of this module binds: where that `use` leads. A `use` whose
                // path starts with the name it binds (`use no_panic::no_panic;`, itoa) names
                // something else by that first segment (the crate), not itself.
                let leaf =
                    self.c.modules.get(module).and_then(|m| m.uses.iter().find(|u| u.bound.as_deref() == Some(f)));
                if let Some(leaf) = leaf.filter(|l| l.path.first().map(String::as_str) != Some(f)) {
                    return match self.absolutize(module, &leaf.path) {
                        Ok(abs) => Ok([abs.as_slice(), &path[1..]].concat()),
                        Err(ext) => Err([ext.as_slice(), &path[1..]].concat()),
                    };
                }
                if self.is_module(&here) || self.by_name.contains_key(&(module, f)) {
                    Ok([module, path].concat())
                } else if self.is_module(&[f.to_string()]) || self.by_name.contains_key(&(&[][..], f)) {
                    Ok(path.to_vec())
                } else {
                    Err(path.to_vec())
                }
            }
        }
    }

    fn resolve_path(&self, module: &[String], path: &[String], depth: usize) -> Option<Target> {
        let abs = match self.absolutize(module, path) {
            Ok(a) => a,
            Err(ext) => return Some(Target::External(ext)),
        };
        self.resolve_abs(&abs, depth)
    }

    fn resolve_abs(&self, abs: &[String], depth: usize) -> Option<Target> {
        if self.is_module(abs) {
            return Some(Target::Module(abs.to_vec()));
        }
        if depth > 8 {
            return None;
        }
        // The longest prefix that names an item (`Enum::Variant`, `Type::method` name the
        // type), or a `use` that re-exports one.
        for k in (1..=abs.len()).rev() {
            let (m, name) = (&abs[..k - 1], abs[k - 1].as_str());
            if !self.is_module(m) {
                continue;
            }
            if let Some(&i) = self.by_name.get(&(m, name)) {
                return Some(Target::Item(i));
            }
            let leaf = self.c.modules[m].uses.iter().find(|u| u.bound.as_deref() == Some(name));
            if let Some(leaf) = leaf {
                return match self.resolve_path(m, &leaf.path, depth + 1)? {
                    Target::External(mut ext) => {
                        ext.extend(abs[k..].iter().cloned());
                        Some(Target::External(ext))
                    }
                    Target::Module(mut inner) if k < abs.len() => {
                        inner.extend(abs[k..].iter().cloned());
                        self.resolve_abs(&inner, depth + 1)
                    }
                    t => Some(t),
                };
            }
            return None;
        }
        None
    }

    /// A name used in module `module`.
    fn resolve_name(&self, module: &[String], name: &str) -> Option<Target> {
        if let Some(mac) = name.strip_suffix('!') {
            return self.macros.get(mac).map(|&i| Target::Item(i));
        }
        let m = self.c.modules.get(module)?;
        if let Some(leaf) = m.uses.iter().find(|u| u.bound.as_deref() == Some(name)) {
            return self.resolve_path(module, &leaf.path, 0);
        }
        if let Some(&i) = self.by_name.get(&(module, name)) {
            return Some(Target::Item(i));
        }
        let child: Vec<String> = [module, &[name.to_string()]].concat();
        if self.is_module(&child) {
            return Some(Target::Module(child));
        }
        for glob in m.uses.iter().filter(|u| u.bound.is_none()) {
            if let Ok(g) = self.absolutize(module, &glob.path)
                && let Some(&i) = self.by_name.get(&(g.as_slice(), name))
            {
                return Some(Target::Item(i));
            }
        }
        None
    }

    /// The path another crate names item `i` by, when it can.
    fn public_path(&self, i: usize) -> Option<Vec<String>> {
        let it = &self.c.items[i];
        if it.kind == ItemKind::Macro || it.kind == ItemKind::Impl {
            return None;
        }
        let reachable = (0..=it.module.len()).all(|k| self.c.modules.get(&it.module[..k]).is_some_and(|m| m.public));
        if it.public && reachable {
            return Some([it.module.as_slice(), &[it.name.clone()]].concat());
        }
        // A `pub use` at the crate root.
        let root = self.c.modules.get(&Vec::new())?;
        root.uses
            .iter()
            .filter(|u| u.public)
            .find(|u| u.bound.is_some() && self.resolve_path(&[], &u.path, 0) == Some(Target::Item(i)))
            .and_then(|u| u.bound.clone().map(|b| vec![b]))
    }

    fn module_public(&self, m: &[String]) -> bool {
        (0..=m.len()).all(|k| self.c.modules.get(&m[..k]).is_some_and(|x| x.public))
    }
}

/// What the reference copies, imports and rewrites.
pub(super) struct Plan {
    pub krate: String,
    c: CrateItems,
    /// Items to copy, by index.
    copied: BTreeSet<usize>,
    /// The items of the feature itself (and whole types).
    pub seeds: BTreeSet<usize>,
    /// Name → the `use` it binds.
    imports: BTreeMap<String, String>,
    /// `use … as _;` and external globs: what else the copied code's modules import.
    extra_imports: BTreeSet<String>,
    /// Per copied item: (start, end, replacement), absolute in its file.
    edits: BTreeMap<usize, Vec<(usize, usize, String)>>,
}

impl Plan {
    /// Names of the items copied besides the feature's, sorted.
    pub fn support_names(&self) -> Vec<String> {
        let names: BTreeSet<&str> = self
            .copied
            .iter()
            .filter(|i| !self.seeds.contains(i))
            .map(|&i| self.c.items[i].name.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        names.into_iter().map(str::to_string).collect()
    }
}

/// A `use` line of `core::` or `alloc::` as the same `use` of `std::`, which re-exports
/// both; other lines as they are.
fn std_facade(line: &str) -> String {
    for from in ["use core::", "use alloc::"] {
        if let Some(rest) = line.strip_prefix(from) {
            return format!("use std::{rest}");
        }
    }
    line.to_string()
}

/// `use <path>[ as <alias>];`; a path into `alloc` goes through `std` (`agent_code` is a std
/// crate, and `alloc` is no name there without an `extern crate alloc;`).
fn use_line(path: &[String], alias: Option<&str>) -> String {
    let p = path.join("::");
    let p = match p.strip_prefix("alloc::") {
        Some(rest) => format!("std::{rest}"),
        None => p,
    };
    match alias {
        Some(a) if path.last().map(String::as_str) != Some(a) => format!("use {p} as {a};"),
        _ => format!("use {p};"),
    }
}

/// Plan the reference: see the module doc. `whole` lists the extracted definitions' types
/// that stay (their items are taken whole).
pub(super) fn plan(sources: &Level2Sources<'_>, krate: &str) -> Result<Plan, String> {
    let c = read(sources.root, sources.index)?;
    let r = Resolver::new(krate, &c, super::manifest::optional_dependencies(sources.root));
    let seeds = with_generated(&c, &r, seeds(sources, &c, &r)?);
    let impls_of = impls_of(&c, &r);
    let copy = |j: usize| seeds.contains(&j) || r.public_path(j).is_none();
    let mut copied = BTreeSet::new();
    let mut imports = Imports::default();
    let mut edits: BTreeMap<usize, Vec<(usize, usize, String)>> = BTreeMap::new();
    let mut todo: Vec<usize> = seeds.iter().copied().collect();
    while let Some(i) = todo.pop() {
        if !copied.insert(i) {
            continue;
        }
        let it = &c.items[i];
        if matches!(it.kind, ItemKind::Type | ItemKind::Trait) {
            todo.extend(impls_of.get(&i).into_iter().flatten());
        }
        if it.kind == ItemKind::Impl {
            // An impl's type and trait are named by their paths; both resolve as names do.
            for p in [&it.impl_type, &it.impl_trait] {
                if let Some(Target::Item(t)) = r.resolve_path(&it.module, p, 0)
                    && copy(t)
                {
                    todo.push(t);
                }
            }
        }
        bind_uses(&r, i, &copy, &mut todo, &mut imports);
        edits.insert(i, path_edits(&r, i, &copy, &mut todo));
    }
    let imports = checked_names(&c, &copied, imports)?;
    let extra_imports = extra_imports(&r, &copied, &imports, &copy);
    Ok(Plan { krate: krate.to_string(), c, copied, seeds, imports, extra_imports, edits })
}

/// The top-level item holding each extracted definition; a method's impl brings its type, a
/// trait's method its trait.
fn seeds(sources: &Level2Sources<'_>, c: &CrateItems, r: &Resolver<'_>) -> Result<BTreeSet<usize>, String> {
    let mut seeds = BTreeSet::new();
    for d in sources.extracted.iter().filter_map(|id| sources.index.get(id)) {
        if d.language != Language::Rust || d.is_test {
            continue;
        }
        let Some(file) = c.files.iter().position(|(p, _)| *p == d.path) else {
            return Err(format!(
                "`{}` ({}) is not in the library crate at the repository root; Level 2 packages that crate only",
                d.qualname, d.path
            ));
        };
        let at = d.span.start_byte;
        let Some(i) = c.items.iter().position(|it| it.file == file && it.start <= at && at < it.end) else {
            continue; // a definition the crate reader leaves out (test code)
        };
        let it = &c.items[i];
        if it.kind != ItemKind::Impl {
            seeds.insert(i);
            continue;
        }
        // The crate's type, else the crate's trait (an impl for a foreign type comes with its
        // trait).
        let of = |p: &[String]| match r.resolve_path(&it.module, p, 0) {
            Some(Target::Item(t)) => Some(t),
            _ => None,
        };
        let Some(t) = of(&it.impl_type).or_else(|| of(&it.impl_trait)) else {
            return Err(format!(
                "`{}` ({}) is in an impl of `{}` for a trait that is not the crate's either; another crate cannot add to it",
                d.qualname,
                d.path,
                it.impl_type.join("::")
            ));
        };
        seeds.insert(t);
    }
    if seeds.is_empty() {
        return Err("the feature has no items in the library crate at the repository root".into());
    }
    Ok(seeds)
}

/// `seeds` with the items invocations of the crate's own macros make whose expansion reaches
/// one of them through the crate's items (fastrand's `integer!(usize, …)`: `pub fn usize(…)
/// { with_rng(…) }`, and `with_rng` names `Rng`, whose methods are the feature): they stay in
/// the crate at Level 1, where the mask cannot reach them, but work only with the feature, so
/// at Level 2 they go with it.
fn with_generated(c: &CrateItems, r: &Resolver<'_>, seeds: BTreeSet<usize>) -> BTreeSet<usize> {
    if c.items.iter().all(|it| it.made_by.is_none()) {
        return seeds;
    }
    // Who names whom, then what reaches a seed: backwards from the seeds.
    let mut named_by: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, it) in c.items.iter().enumerate() {
        for n in &it.uses {
            if let Some(Target::Item(j)) = r.resolve_name(&it.module, n)
                && j != i
            {
                named_by.entry(j).or_default().push(i);
            }
        }
    }
    let mut reaches = seeds.clone();
    let mut todo: Vec<usize> = seeds.iter().copied().collect();
    while let Some(j) = todo.pop() {
        for &i in named_by.get(&j).into_iter().flatten() {
            if reaches.insert(i) {
                todo.push(i);
            }
        }
    }
    let mut out = seeds;
    out.extend(reaches.into_iter().filter(|&i| c.items[i].made_by.is_some()));
    out
}

/// The names of the items [`with_generated`] adds to the feature's: the integration tests
/// take them from the package too.
pub(super) fn generated_names(sources: &Level2Sources<'_>, krate: &str) -> BTreeSet<String> {
    let Ok(c) = read(sources.root, sources.index) else { return BTreeSet::new() };
    let r = Resolver::new(krate, &c, BTreeMap::new());
    let Ok(seeds) = seeds(sources, &c, &r) else { return BTreeSet::new() };
    let all = with_generated(&c, &r, seeds.clone());
    all.difference(&seeds).map(|&i| c.items[i].name.clone()).collect()
}

/// Impls by the item they implement for or implement.
fn impls_of(c: &CrateItems, r: &Resolver<'_>) -> BTreeMap<usize, Vec<usize>> {
    let mut impls_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, it) in c.items.iter().enumerate().filter(|(_, it)| it.kind == ItemKind::Impl) {
        for p in [&it.impl_type, &it.impl_trait] {
            if let Some(Target::Item(t)) = r.resolve_path(&it.module, p, 0) {
                impls_of.entry(t).or_default().push(i);
            }
        }
    }
    impls_of
}

/// The `use` lines at the root of `agent_code`, by the name each binds, and the names two
/// lines bind differently.
#[derive(Default)]
struct Imports {
    lines: BTreeMap<String, String>,
    conflicts: BTreeSet<String>,
}

impl Imports {
    fn bind(&mut self, name: &str, line: String) {
        match self.lines.get(name) {
            // One item by two of the paths std re-exports it at (`core::fmt`, `std::fmt`; cfg
            // alternatives in fastrand's modules: `alloc::vec::Vec`, `std::vec::Vec`).
            Some(l) if *l != line && std_facade(l) == std_facade(&line) => {
                self.lines.insert(name.to_string(), std_facade(&line));
            }
            Some(l) if *l != line => {
                self.conflicts.insert(format!("`{name}` ({l} and {line})"));
            }
            _ => {
                self.lines.insert(name.to_string(), line);
            }
        }
    }
}

/// Bind the names item `i` uses: a copied item under the name the code uses, else the crate's
/// public path, a public module, or the external path.
fn bind_uses(r: &Resolver<'_>, i: usize, copy: &dyn Fn(usize) -> bool, todo: &mut Vec<usize>, imports: &mut Imports) {
    let (c, krate) = (r.c, r.krate);
    let it = &c.items[i];
    for name in &it.uses {
        match r.resolve_name(&it.module, name) {
            Some(Target::Item(j)) if j == i => {}
            Some(Target::Item(j)) if copy(j) => {
                todo.push(j);
                if c.items[j].name != *name && c.items[j].kind != ItemKind::Macro {
                    imports.bind(name, format!("use crate::{} as {name};", c.items[j].name));
                }
            }
            Some(Target::Item(j)) => {
                let path = r.public_path(j).unwrap_or_default();
                imports.bind(name, use_line(&[&[krate.to_string()][..], &path].concat(), Some(name)));
            }
            Some(Target::Module(m)) if r.module_public(&m) && !m.is_empty() => {
                imports.bind(name, use_line(&[&[krate.to_string()][..], &m].concat(), Some(name)));
            }
            Some(Target::External(p)) => {
                let first = p.first().map(String::as_str).unwrap_or("");
                if r.optional.contains_key(first) {
                    imports.bind(name, optional_use_line(r, &it.module, name, &p));
                } else if !matches!(first, "crate" | "self" | "super") {
                    imports.bind(name, use_line(&p, Some(name)));
                }
            }
            _ => {}
        }
    }
}

/// The `use` of a name from one of the crate's optional dependencies, which `agent_code`
/// does not get: under the `#[cfg(…)]` of the module's `use` (itoa's
/// `#[cfg(feature = "no-panic")] use no_panic::no_panic;`), else under the dependency's own
/// feature; `agent_code` has neither feature, so the line is left out as the code naming it
/// is (`#[cfg_attr(feature = "no-panic", no_panic)]`).
fn optional_use_line(r: &Resolver<'_>, module: &[String], name: &str, path: &[String]) -> String {
    let leaf = r.c.modules.get(module).and_then(|m| m.uses.iter().find(|u| u.bound.as_deref() == Some(name)));
    let cfg = match leaf.filter(|l| !l.cfg.is_empty()) {
        Some(l) => l.cfg.join(" "),
        None => format!("#[cfg(feature = \"{}\")]", r.optional.get(&path[0]).unwrap_or(&path[0])),
    };
    format!("{cfg} {}", use_line(path, Some(name)))
}

/// The edits to item `i`'s text: paths into the crate itself (to a copied item's name or the
/// crate's public path), narrowed visibilities, `$crate`; the outermost edit where two nest
/// (a `pub use` of one path inside another, or a path inside a macro).
fn path_edits(
    r: &Resolver<'_>,
    i: usize,
    copy: &dyn Fn(usize) -> bool,
    todo: &mut Vec<usize>,
) -> Vec<(usize, usize, String)> {
    let (c, krate) = (r.c, r.krate);
    let it = &c.items[i];
    let mut e: Vec<(usize, usize, String)> = Vec::new();
    for wp in &it.paths {
        let segs: Vec<String> = wp.segments.iter().map(|s| s.0.clone()).collect();
        let internal_root = matches!(segs[0].as_str(), "crate" | "self" | "super")
            || segs[0] == krate
            || matches!(r.resolve_name(&it.module, &segs[0]), Some(Target::Module(_)));
        if !internal_root {
            continue;
        }
        for k in (1..=segs.len()).rev() {
            let Ok(abs_k) = r.absolutize(&it.module, &segs[..k]) else { break };
            let (start, end) = (wp.segments[0].1, wp.segments[k - 1].2);
            match r.resolve_abs(&abs_k, 0) {
                Some(Target::Item(j)) if c.items[j].name == segs[k - 1] || k == 1 => {
                    if copy(j) {
                        todo.push(j);
                        e.push((start, end, c.items[j].name.clone()));
                    } else if let Some(p) = r.public_path(j) {
                        e.push((start, end, format!("{krate}::{}", p.join("::"))));
                    }
                    break;
                }
                Some(Target::Module(m)) => {
                    let text = if m.is_empty() { krate.to_string() } else { format!("{krate}::{}", m.join("::")) };
                    e.push((start, end, text));
                    break;
                }
                _ => {}
            }
        }
    }
    for &(s, end) in &it.narrow_visibility {
        e.push((s, end, "pub(crate)".into()));
    }
    for &(s, end) in &it.dollar_crate {
        e.push((s, end, format!("::{krate}")));
    }
    e.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut kept: Vec<(usize, usize, String)> = Vec::new();
    for x in e {
        if kept.last().is_some_and(|k| x.0 < k.1) {
            continue;
        }
        kept.push(x);
    }
    kept
}

/// The import lines, once no name is bound twice: by a copied item and an import, or by two
/// copied items.
fn checked_names(
    c: &CrateItems,
    copied: &BTreeSet<usize>,
    imports: Imports,
) -> Result<BTreeMap<String, String>, String> {
    let Imports { lines: mut imports, mut conflicts } = imports;
    let mut by_name: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for &i in copied {
        let it = &c.items[i];
        if !it.name.is_empty() && it.kind != ItemKind::Macro {
            by_name.entry(&it.name).or_default().insert(format!("{}::{}", module_text(&it.module), it.name));
        }
    }
    for (name, homes) in &by_name {
        if homes.len() > 1 {
            conflicts.insert(format!("`{name}` ({})", homes.iter().cloned().collect::<Vec<_>>().join(" and ")));
        }
    }
    imports.retain(|name, line| !(by_name.contains_key(name.as_str()) && !line.starts_with("use crate::")));
    if !conflicts.is_empty() {
        return Err(format!(
            "the feature's code names two different things by one name at the root of `agent_code`: {}",
            conflicts.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(imports)
}

/// What the copied code's modules import without naming it (traits for methods).
fn extra_imports(
    r: &Resolver<'_>,
    copied: &BTreeSet<usize>,
    imports: &BTreeMap<String, String>,
    copy: &dyn Fn(usize) -> bool,
) -> BTreeSet<String> {
    let (c, krate) = (r.c, r.krate);
    let bound: BTreeSet<&String> = imports.keys().chain(copied.iter().map(|&i| &c.items[i].name)).collect();
    let mut extra_imports = BTreeSet::new();
    let modules: BTreeSet<&Vec<String>> = copied.iter().map(|&i| &c.items[i].module).collect();
    for m in modules {
        for leaf in &c.modules[m].uses {
            if leaf.bound.as_ref().is_some_and(|b| bound.contains(b)) {
                continue;
            }
            match (r.resolve_path(m, &leaf.path, 0), &leaf.bound) {
                // What `agent_code` does not depend on: left out.
                (Some(Target::External(p)), _) if p.first().is_some_and(|f| r.optional.contains_key(f)) => {}
                (Some(Target::External(p)), None) if !p.is_empty() => {
                    extra_imports.insert(format!("use {}::*;", p.join("::")));
                }
                (Some(Target::External(p)), Some(_)) if !p.is_empty() && p[0] != "self" && p[0] != "super" => {
                    extra_imports.insert(format!("use {} as _;", p.join("::")));
                }
                (Some(Target::Item(j)), Some(_)) if c.items[j].kind == ItemKind::Trait && !copy(j) => {
                    if let Some(p) = r.public_path(j) {
                        extra_imports.insert(format!("use {krate}::{} as _;", p.join("::")));
                    }
                }
                _ => {}
            }
        }
    }
    extra_imports
}

fn module_text(m: &[String]) -> String {
    if m.is_empty() { "crate".into() } else { format!("crate::{}", m.join("::")) }
}

/// The text of `agent_code/src/lib.rs`.
pub(super) fn render(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! The reference solution of a Level 2 task: the feature's code from the crate `{}`,\n//! with the code of that crate it needs that another crate cannot use.",
        plan.krate
    );
    out.push_str("#![allow(dead_code, unused_imports, unused_macros)]\n");
    // Copied code that names `alloc::…` itself (a `no_std` crate's), beside what `std` has.
    let names_alloc = plan.copied.iter().any(|&i| {
        let it = &plan.c.items[i];
        plan.c.files[it.file].1[it.start..it.end].contains("alloc::")
    });
    if names_alloc || plan.extra_imports.iter().any(|l| l.contains(" alloc::")) {
        out.push_str("extern crate alloc;\n");
    }
    let mut lines: BTreeSet<&str> = plan.imports.values().map(String::as_str).collect();
    lines.extend(plan.extra_imports.iter().map(String::as_str));
    if !lines.is_empty() {
        out.push('\n');
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    // Macros first: a `macro_rules!` macro is in scope after its definition only.
    let mut order: Vec<usize> = plan.copied.iter().copied().collect();
    order.sort_by_key(|&i| {
        let it = &plan.c.items[i];
        (it.kind != ItemKind::Macro, &plan.c.files[it.file].0, it.start)
    });
    // The items one macro invocation declares share its text: written once.
    order.dedup_by_key(|&mut i| (plan.c.items[i].file, plan.c.items[i].start));
    for i in order {
        let it = &plan.c.items[i];
        let source = &plan.c.files[it.file].1;
        let mut text = String::new();
        let mut at = it.start;
        for (s, e, r) in plan.edits.get(&i).into_iter().flatten() {
            text.push_str(&source[at..*s]);
            text.push_str(r);
            at = *e;
        }
        text.push_str(&source[at..it.end]);
        let _ = write!(out, "\n{}\n", dedent(&text, source, it.start));
    }
    out
}

/// An item of an inline module, indented there, moved to column 0.
fn dedent(text: &str, source: &str, start: usize) -> String {
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &source[line_start..start];
    if indent.is_empty() || !indent.chars().all(|c| c == ' ' || c == '\t') {
        return text.to_string();
    }
    text.lines().map(|l| l.strip_prefix(indent).unwrap_or(l)).collect::<Vec<_>>().join("\n")
}
