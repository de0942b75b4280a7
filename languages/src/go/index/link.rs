//! Linking parsed Go files: node ids, packages (directory + package clause), import paths
//! from `go.mod`, and each definition's references resolved across the files of its package
//! and the in-module packages its file imports.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::parse::{GoImport, ParsedFile, RawDef, Use};
use crate::Language;
use crate::index::{
    Definition, DefinitionKind, FileIndex, Import, ImportedName, LoadReference, LoadRole, ModuleReference, NodeId,
    ValueBinding,
};

/// Method names of standard-library interfaces a type commonly satisfies implicitly; a type
/// that stays needs these methods even when no code in the module calls them by name.
const STDLIB_INTERFACE_METHODS: &[&str] = &[
    "Error",
    "String",
    "GoString",
    "Format",
    "Read",
    "Write",
    "Close",
    "Seek",
    "ReadFrom",
    "WriteTo",
    "MarshalJSON",
    "UnmarshalJSON",
    "MarshalText",
    "UnmarshalText",
    "MarshalBinary",
    "UnmarshalBinary",
    "ServeHTTP",
    "Unwrap",
];

/// A Go module: the directory holding its `go.mod` and its module path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoModule {
    pub dir: String,
    pub path: String,
}

/// The module path of a `go.mod` file's `module` line.
pub(crate) fn module_path(go_mod: &str) -> Option<String> {
    for line in go_mod.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if let Some(rest) = line.strip_prefix("module") {
            if !rest.starts_with([' ', '\t', '"']) {
                continue;
            }
            let p = rest.trim().trim_matches('"').trim_matches('`').trim();
            if !p.is_empty() {
                return Some(p.to_string());
            }
        }
    }
    None
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (false, true) => dir.to_string(),
        (false, false) => format!("{dir}/{rest}"),
    }
}

/// The import path of a repository directory: its nearest enclosing module's path plus the
/// directory below the module root.
pub(crate) fn import_path(modules: &[GoModule], dir: &str) -> Option<String> {
    modules
        .iter()
        .filter_map(|m| {
            let rest = if m.dir.is_empty() {
                dir
            } else if dir == m.dir {
                ""
            } else {
                dir.strip_prefix(&m.dir)?.strip_prefix('/')?
            };
            Some((m.dir.len(), if rest.is_empty() { m.path.clone() } else { format!("{}/{rest}", m.path) }))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, p)| p)
}

/// The repository directory of an import path inside one of `modules`.
fn import_dir(modules: &[GoModule], path: &str) -> Option<String> {
    modules
        .iter()
        .filter_map(|m| {
            let rest = if path == m.path { "" } else { path.strip_prefix(&m.path)?.strip_prefix('/')? };
            Some((m.path.len(), join(&m.dir, rest)))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, d)| d)
}

/// The name an import binds by default: the last path element (`yaml` for `gopkg.in/yaml.v3`
/// is not guessed; `foo/v2` binds `foo`).
fn default_name(path: &str) -> String {
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let is_version = last.len() > 1 && last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit());
    if is_version { parts.next().unwrap_or(last).to_string() } else { last.to_string() }
}

type PackageKey = (String, String);

#[derive(Default)]
struct Package {
    /// Functions and types by name: (id, in a test file, is a type).
    names: BTreeMap<String, Vec<(NodeId, bool, bool)>>,
    /// Methods by receiver type, then method name.
    methods: BTreeMap<String, BTreeMap<String, Vec<(NodeId, bool)>>>,
    /// Methods by name alone.
    methods_by_name: BTreeMap<String, Vec<(NodeId, bool)>>,
}

impl Package {
    /// The methods `name` of the type `ty`.
    fn method(&self, ty: &str, name: &str) -> &[(NodeId, bool)] {
        self.methods.get(ty).and_then(|m| m.get(name)).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Where one file's names resolve.
struct Scope<'a> {
    own: Option<&'a Package>,
    is_test: bool,
    /// Import binding → in-module package (None: outside the module, or not a package).
    imports: BTreeMap<String, Option<(&'a Package, bool)>>,
    dot_imports: Vec<(&'a Package, bool)>,
}

fn visible(entries: &[(NodeId, bool)], tests: bool) -> impl Iterator<Item = &NodeId> {
    entries.iter().filter(move |(_, t)| tests || !t).map(|(id, _)| id)
}

impl Scope<'_> {
    fn names(&self, pkg: &Package, tests: bool, name: &str, out: &mut BTreeSet<NodeId>) {
        for (id, t, _) in pkg.names.get(name).into_iter().flatten() {
            if tests || !t {
                out.insert(id.clone());
            }
        }
    }

    fn any_method(&self, name: &str, out: &mut BTreeSet<NodeId>) {
        let pkgs = self.own.map(|p| (p, self.is_test)).into_iter().chain(self.imports.values().flatten().copied());
        for (pkg, tests) in pkgs {
            out.extend(visible(pkg.methods_by_name.get(name).map(Vec::as_slice).unwrap_or(&[]), tests).cloned());
        }
    }

    fn resolve(&self, u: &Use, out: &mut BTreeSet<NodeId>) {
        match u {
            Use::Name(n) => {
                if let Some(own) = self.own {
                    self.names(own, self.is_test, n, out);
                }
                for (pkg, tests) in &self.dot_imports {
                    self.names(pkg, *tests, n, out);
                }
            }
            Use::Selector(op, n, call) => {
                if let Some(target) = self.imports.get(op) {
                    if let Some((pkg, tests)) = target {
                        self.names(pkg, *tests, n, out);
                    }
                    return;
                }
                let own_type = self.own.and_then(|p| p.names.get(op)).is_some_and(|v| v.iter().any(|(_, _, ty)| *ty));
                if let Some(own) = self.own.filter(|_| own_type) {
                    out.extend(visible(own.method(op, n), self.is_test).cloned());
                } else if *call {
                    self.any_method(n, out);
                }
            }
            Use::Method(t, m, call) => {
                let pkg = match &t.package {
                    None => self.own.map(|p| (p, self.is_test)),
                    Some(alias) => self.imports.get(alias).copied().flatten(),
                };
                let found: Vec<NodeId> =
                    pkg.map(|(p, tests)| visible(p.method(&t.name, m), tests).cloned().collect()).unwrap_or_default();
                if found.is_empty() && *call {
                    // A promoted method of an embedded type, or a field: stay conservative.
                    self.any_method(m, out);
                } else {
                    out.extend(found);
                }
            }
            Use::AnyMethod(m) => self.any_method(m, out),
        }
    }
}

/// What a definition's kept text names, should its body be stubbed: the types (and
/// functions, e.g. in array lengths) its signature names — receiver included — for a
/// function or method; everything but methods for a type declaration (field types,
/// embedded types, constraints), all as [`LoadRole::DefaultOrAnnotation`].
fn load_references(
    def: &Definition,
    refs: &BTreeSet<NodeId>,
    kinds: &BTreeMap<&str, (&str, bool)>,
) -> Vec<LoadReference> {
    if refs.is_empty() {
        return Vec::new();
    }
    let is_function = matches!(def.kind, DefinitionKind::Function | DefinitionKind::Method);
    let sig: BTreeSet<&str> = if is_function {
        def.signature.text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()).collect()
    } else {
        BTreeSet::new()
    };
    refs.iter()
        .filter(|r| match kinds.get(r.as_str()) {
            Some((name, _)) if is_function => sig.contains(name),
            Some((_, is_method)) => !*is_method,
            None => false,
        })
        .map(|r| LoadReference { target: r.clone(), role: LoadRole::DefaultOrAnnotation })
        .collect()
}

/// Assign node ids: `path::Qual.Name`, with `@L<line>` when a qualname repeats in a file
/// (several `init` functions, methods of a type whose receiver could not be read …).
fn assign_ids(file: &mut ParsedFile) {
    let repeated: Vec<bool> = {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for d in &file.defs {
            *counts.entry(d.def.qualname.as_str()).or_default() += 1;
        }
        file.defs.iter().map(|d| counts.get(d.def.qualname.as_str()).copied().unwrap_or(0) > 1).collect()
    };
    for (d, repeated) in file.defs.iter_mut().zip(repeated) {
        d.def.id = if repeated {
            format!("{}::{}@L{}", file.path, d.def.qualname, d.def.def_line)
        } else {
            format!("{}::{}", file.path, d.def.qualname)
        };
    }
}

/// Link parsed files into the index's files and definitions (both in path, then source order).
pub(crate) fn link(mut files: Vec<ParsedFile>, modules: &[GoModule]) -> (Vec<FileIndex>, Vec<Definition>) {
    files.sort_by(|a, b| a.path.cmp(&b.path));
    for f in &mut files {
        assign_ids(f);
    }
    let (packages, dir_package) = package_tables(&files);
    let iface_methods = interface_methods(&files);
    let kinds = definition_kinds(&packages);
    let cx = LinkContext {
        modules,
        packages: &packages,
        dir_package: &dir_package,
        iface_methods: &iface_methods,
        kinds: &kinds,
    };

    let def_count = files.iter().map(|f| f.defs.len()).sum();
    // Each file resolves on its own against the shared tables: in parallel, in path order.
    let linked: Vec<(FileIndex, Vec<Definition>)> = files.into_par_iter().map(|f| cx.link_file(f)).collect();
    let mut out_files = Vec::with_capacity(linked.len());
    let mut out_defs = Vec::with_capacity(def_count);
    for (file, defs) in linked {
        out_files.push(file);
        out_defs.extend(defs);
    }
    (out_files, out_defs)
}

/// The packages of the files (by directory and package clause), and the package each
/// directory's importers see.
fn package_tables(files: &[ParsedFile]) -> (BTreeMap<PackageKey, Package>, BTreeMap<String, String>) {
    let mut packages: BTreeMap<PackageKey, Package> = BTreeMap::new();
    let mut dir_package: BTreeMap<String, String> = BTreeMap::new();
    for f in files {
        let pkg = packages.entry((f.dir.clone(), f.package.clone())).or_default();
        if !f.package.ends_with("_test") && (!f.is_test || !dir_package.contains_key(&f.dir)) {
            dir_package.insert(f.dir.clone(), f.package.clone());
        }
        for d in &f.defs {
            let id = d.def.id.clone();
            match (&d.receiver_type, d.def.kind) {
                (Some(rt), DefinitionKind::Method) => {
                    let of_type = pkg.methods.entry(rt.clone()).or_default();
                    of_type.entry(d.def.name.clone()).or_default().push((id.clone(), f.is_test));
                    pkg.methods_by_name.entry(d.def.name.clone()).or_default().push((id, f.is_test));
                }
                (None, DefinitionKind::Method) => {}
                (_, kind) => {
                    let is_type = kind != DefinitionKind::Function;
                    pkg.names.entry(d.def.name.clone()).or_default().push((id, f.is_test, is_type));
                }
            }
        }
    }
    (packages, dir_package)
}

/// Method names of the module's interfaces and of common standard-library ones.
fn interface_methods(files: &[ParsedFile]) -> BTreeSet<String> {
    let mut iface_methods: BTreeSet<String> = STDLIB_INTERFACE_METHODS.iter().map(|m| m.to_string()).collect();
    for f in files {
        for d in &f.defs {
            iface_methods.extend(d.interface_members.iter().cloned());
        }
    }
    iface_methods
}

/// Name of every definition a name can resolve to (those of the packages), and whether it
/// is a method, for load references.
fn definition_kinds(packages: &BTreeMap<PackageKey, Package>) -> BTreeMap<&str, (&str, bool)> {
    let mut kinds: BTreeMap<&str, (&str, bool)> = BTreeMap::new();
    for pkg in packages.values() {
        for (name, entries) in &pkg.names {
            kinds.extend(entries.iter().map(|(id, _, _)| (id.as_str(), (name.as_str(), false))));
        }
        for (name, entries) in pkg.methods.values().flatten() {
            kinds.extend(entries.iter().map(|(id, _)| (id.as_str(), (name.as_str(), true))));
        }
    }
    kinds
}

/// The tables shared by every file of one link.
struct LinkContext<'a> {
    modules: &'a [GoModule],
    packages: &'a BTreeMap<PackageKey, Package>,
    dir_package: &'a BTreeMap<String, String>,
    iface_methods: &'a BTreeSet<String>,
    kinds: &'a BTreeMap<&'a str, (&'a str, bool)>,
}

impl<'a> LinkContext<'a> {
    /// One parsed file as the index's file and its definitions, names resolved.
    fn link_file(&self, f: ParsedFile) -> (FileIndex, Vec<Definition>) {
        let own = self.packages.get(&(f.dir.clone(), f.package.clone()));
        let mut scope = Scope { own, is_test: f.is_test, imports: BTreeMap::new(), dot_imports: Vec::new() };
        let mut imports = Vec::new();
        for imp in &f.imports {
            imports.push(self.bind_import(&f, imp, &mut scope));
        }
        let file_refs: Vec<BTreeSet<NodeId>> = f.defs.iter().map(|d| self.def_refs(d, &scope)).collect();
        let parents: Vec<Option<NodeId>> = f.defs.iter().map(|d| receiver_parent(d, own, &f)).collect();
        let definitions: Vec<NodeId> = f.defs.iter().map(|d| d.def.id.clone()).collect();
        let module_references = module_references(&f, &scope);
        let value_bindings = literal_entries(&f, &scope);
        let mut out_defs = Vec::with_capacity(f.defs.len());
        for ((d, refs), parent) in f.defs.into_iter().zip(file_refs).zip(parents) {
            let mut def = d.def;
            def.load_references = load_references(&def, &refs, self.kinds);
            def.parent = parent;
            def.references = refs.into_iter().collect();
            out_defs.push(def);
        }
        let file = FileIndex {
            path: f.path,
            language: Language::Go,
            module: import_path(self.modules, &f.dir),
            is_test: f.is_test,
            definitions,
            imports,
            module_references,
            exported: Vec::new(),
            value_bindings,
            discarded_calls: Vec::new(),
            sha256: f.sha256,
            lines: f.lines,
        };
        (file, out_defs)
    }

    /// Binds one import of file `f` in its scope (by alias, package name or dot import) and
    /// returns it as the index's import.
    fn bind_import(&self, f: &ParsedFile, imp: &GoImport, scope: &mut Scope<'a>) -> Import {
        let dir = import_dir(self.modules, &imp.path);
        let target = dir.as_ref().and_then(|d| {
            let name = self.dir_package.get(d)?;
            let pkg = self.packages.get(&(d.clone(), name.clone()))?;
            Some((pkg, f.is_test && *d == f.dir, name.clone()))
        });
        let bound = imp
            .alias
            .clone()
            .or_else(|| target.as_ref().map(|t| t.2.clone()))
            .unwrap_or_else(|| default_name(&imp.path));
        let pkg = target.as_ref().map(|(p, tests, _)| (*p, *tests));
        match bound.as_str() {
            "_" => {}
            "." => scope.dot_imports.extend(pkg),
            _ => {
                scope.imports.insert(bound.clone(), pkg);
            }
        }
        let names = match (&imp.alias, imp.alias_span) {
            (Some(alias), Some(span)) => vec![ImportedName {
                name: target.as_ref().map(|t| t.2.clone()).unwrap_or_else(|| default_name(&imp.path)),
                alias: Some(alias.clone()),
                span,
                target: None,
            }],
            _ => Vec::new(),
        };
        Import {
            span: imp.span,
            module: imp.path.clone(),
            resolved_path: dir.filter(|d| self.dir_package.contains_key(d)),
            names,
            module_level: true,
        }
    }

    /// What one definition's uses resolve to in `scope` (itself excluded); a type also
    /// references its methods named like an interface's.
    fn def_refs(&self, d: &RawDef, scope: &Scope) -> BTreeSet<NodeId> {
        let mut refs = BTreeSet::new();
        for u in &d.uses {
            scope.resolve(u, &mut refs);
        }
        // A type that stays needs the methods that make it satisfy interfaces.
        if d.def.kind != DefinitionKind::Function
            && d.def.kind != DefinitionKind::Method
            && let Some(p) = scope.own
        {
            // The type's methods whose name is an interface's.
            for (m, entries) in p.methods.get(&d.def.name).into_iter().flatten() {
                if self.iface_methods.contains(m) {
                    refs.extend(visible(entries, scope.is_test).cloned());
                }
            }
        }
        refs.remove(&d.def.id);
        refs
    }
}

/// The type a method's receiver names: the one declared in file `f` first, else any visible one.
fn receiver_parent(d: &RawDef, own: Option<&Package>, f: &ParsedFile) -> Option<NodeId> {
    let rt = d.receiver_type.as_ref()?;
    let entries = own?.names.get(rt)?;
    // Prefer the type declared in this file, then any visible one.
    entries
        .iter()
        .filter(|(_, t, ty)| *ty && (f.is_test || !t))
        .map(|(id, _, _)| id)
        .min_by_key(|id| !id.starts_with(&format!("{}::", f.path)))
        .cloned()
}

/// What the file's package-level code names (and `main` of package main), sorted and
/// deduplicated.
fn module_references(f: &ParsedFile, scope: &Scope) -> Vec<ModuleReference> {
    let mut module_references = Vec::new();
    // The runtime calls `main` of package main: it must keep existing.
    if f.package == "main" {
        for d in f.defs.iter().filter(|d| d.def.kind == DefinitionKind::Function && d.def.name == "main") {
            module_references.push(ModuleReference { target: d.def.id.clone(), line: d.def.def_line });
        }
    }
    for (u, line) in &f.module_uses {
        let mut refs = BTreeSet::new();
        scope.resolve(u, &mut refs);
        module_references.extend(refs.into_iter().map(|target| ModuleReference { target, line: *line }));
    }
    module_references.sort();
    module_references.dedup();
    module_references
}

/// The file's removable literal elements that name definitions, as entry value bindings
/// (nothing outside the literal names an entry; an element naming none is left out).
fn literal_entries(f: &ParsedFile, scope: &Scope) -> Vec<ValueBinding> {
    f.entries
        .iter()
        .filter_map(|e| {
            let mut targets = Vec::new();
            for (u, line) in &e.uses {
                let mut refs = BTreeSet::new();
                scope.resolve(u, &mut refs);
                targets.extend(refs.into_iter().map(|target| ModuleReference { target, line: *line }));
            }
            targets.sort();
            targets.dedup();
            (!targets.is_empty()).then(|| ValueBinding {
                span: e.span,
                name: e.name.clone(),
                entry: true,
                class: None,
                targets,
                named_by: Vec::new(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_lines_and_import_paths() {
        assert_eq!(
            module_path("// c\nmodule example.com/shapes // x\n\ngo 1.22\n").as_deref(),
            Some("example.com/shapes")
        );
        assert_eq!(module_path("module \"quoted/mod\"\n").as_deref(), Some("quoted/mod"));
        assert_eq!(module_path("modulex y\ngo 1.2\n"), None);
        let mods = vec![
            GoModule { dir: String::new(), path: "ex.com/a".into() },
            GoModule { dir: "tools".into(), path: "ex.com/tools".into() },
        ];
        assert_eq!(import_path(&mods, "").as_deref(), Some("ex.com/a"));
        assert_eq!(import_path(&mods, "geo/x").as_deref(), Some("ex.com/a/geo/x"));
        assert_eq!(import_path(&mods, "tools/gen").as_deref(), Some("ex.com/tools/gen"));
        assert_eq!(import_dir(&mods, "ex.com/tools/gen").as_deref(), Some("tools/gen"));
        assert_eq!(import_dir(&mods, "ex.com/a").as_deref(), Some(""));
        assert_eq!(import_dir(&mods, "ex.com/ab"), None);
        assert_eq!(default_name("github.com/x/foo/v2"), "foo");
        assert_eq!(default_name("fmt"), "fmt");
    }
}
