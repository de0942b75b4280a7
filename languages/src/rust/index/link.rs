//! Second pass: resolve the paths each item names to definitions, across the files of a
//! crate (and from a package's tests, examples and binaries into its library).
//!
//! Modules come from file paths (`src/a/b.rs` is `crate::a::b`) and inline `mod` items;
//! names are looked up in a module's items, child modules, `use` items (following
//! re-export chains) and glob imports, with `crate::`, `self::`, `super::` and `Self`
//! understood. `Type::assoc` resolves through the type's impl blocks (inherent and trait).
//! Method calls on values (`x.area()`) resolve without types, to every method of the
//! package with that name, and macros by name: an over-approximation, so that masking
//! stubs rather than deletes anything remaining code may call.

use std::collections::{BTreeSet, HashMap};

use super::parse::{ParsedFile, RawRef, UseLeaf};
use crate::Language;
use crate::index::{
    Definition, DefinitionKind, FileIndex, Import, ImportedName, LoadReference, LoadRole, ModuleReference, NodeId,
};

type DefRef = (usize, usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entity {
    Module(usize),
    Def(DefRef),
}

#[derive(Debug, Default)]
struct Module {
    krate: String,
    package: String,
    path: Vec<String>,
    items: HashMap<String, Vec<DefRef>>,
    /// alias → (file, use index, leaf index)
    uses: HashMap<String, Vec<(usize, usize, usize)>>,
    globs: Vec<(usize, usize, usize)>,
    children: HashMap<String, usize>,
    /// The crate root, the parent module and the package's library root (when this is
    /// another crate of the package), computed once.
    root: Option<usize>,
    parent: Option<usize>,
    lib: Option<usize>,
    /// The inline `mod` item, or the first file whose module this is.
    inline_item: Option<DefRef>,
    file: Option<usize>,
}

pub(super) struct Linker<'a> {
    files: &'a [ParsedFile],
    ids: Vec<Vec<NodeId>>,
    modules: Vec<Module>,
    module_ids: HashMap<(String, Vec<String>), usize>,
    /// (file, scope) → module id.
    scope_modules: Vec<Vec<usize>>,
    /// package → library crate name (from Cargo.toml when known).
    crate_names: HashMap<String, String>,
    /// Type or trait → associated functions by name (from every impl of it, and a trait's
    /// own items).
    members: HashMap<DefRef, HashMap<String, Vec<DefRef>>>,
    impl_type: HashMap<DefRef, DefRef>,
    impl_trait: HashMap<DefRef, DefRef>,
    methods: HashMap<(String, String), Vec<DefRef>>,
    macros: HashMap<(String, String), Vec<DefRef>>,
    test_modules: BTreeSet<(String, Vec<String>)>,
}

const MAX_DEPTH: usize = 12;

fn registers_in_module(kind: DefinitionKind) -> bool {
    matches!(
        kind,
        DefinitionKind::Function
            | DefinitionKind::Struct
            | DefinitionKind::Enum
            | DefinitionKind::Trait
            | DefinitionKind::TypeAlias
    )
}

impl<'a> Linker<'a> {
    /// The module, name and impl tables of a crate's parsed files.
    pub fn new(files: &'a [ParsedFile], crate_names: HashMap<String, String>) -> Linker<'a> {
        let mut l = Linker {
            files,
            ids: files.iter().map(node_ids).collect(),
            modules: Vec::new(),
            module_ids: HashMap::new(),
            scope_modules: Vec::new(),
            crate_names,
            members: HashMap::new(),
            impl_type: HashMap::new(),
            impl_trait: HashMap::new(),
            methods: HashMap::new(),
            macros: HashMap::new(),
            test_modules: BTreeSet::new(),
        };
        for (f, file) in files.iter().enumerate() {
            let mods = l.file_modules(f, file);
            l.register_items(f, file, &mods);
            l.register_uses(f, file, &mods);
            l.scope_modules.push(mods);
        }
        l.link_modules();
        l.resolve_impls();
        l.collect_members();
        l
    }

    /// The module of each scope of file `f` (created as needed), and its test modules.
    fn file_modules(&mut self, f: usize, file: &ParsedFile) -> Vec<usize> {
        let mut mods = Vec::new();
        for (s, path) in file.scopes.iter().enumerate() {
            let m = self.module(&file.location.krate, &file.location.package, path);
            if s == 0 {
                self.modules[m].file.get_or_insert(f);
            } else if let Some(item) = file.scope_items[s] {
                self.modules[m].inline_item = Some((f, item));
            }
            mods.push(m);
        }
        for t in &file.test_file_modules {
            self.test_modules.insert((file.location.krate.clone(), t.clone()));
        }
        mods
    }

    /// Registers file `f`'s items in their modules, and its methods and macros by name.
    fn register_items(&mut self, f: usize, file: &ParsedFile, mods: &[usize]) {
        for (i, item) in file.items.iter().enumerate() {
            let m = mods[item.scope];
            let in_container =
                item.parent.is_some_and(|p| matches!(file.items[p].kind, DefinitionKind::Impl | DefinitionKind::Trait));
            if registers_in_module(item.kind) && !in_container {
                self.modules[m].items.entry(item.name.clone()).or_default().push((f, i));
            }
            // Method calls on values of unknown type name inherent methods and trait
            // items; trait-impl methods are never deleted on their own (see `edit`).
            let in_trait_impl =
                item.parent.is_some_and(|p| file.items[p].impl_info.as_ref().is_some_and(|i| i.trait_path.is_some()));
            if item.kind == DefinitionKind::Method && !in_trait_impl {
                self.methods.entry((file.location.package.clone(), item.name.clone())).or_default().push((f, i));
            }
            if item.kind == DefinitionKind::Macro {
                self.macros.entry((file.location.package.clone(), item.name.clone())).or_default().push((f, i));
            }
        }
    }

    /// Registers file `f`'s `use` leaves in their modules: by bound name, or as globs.
    fn register_uses(&mut self, f: usize, file: &ParsedFile, mods: &[usize]) {
        for (u, raw) in file.uses.iter().enumerate() {
            let m = mods[raw.scope];
            for (k, leaf) in raw.leaves.iter().enumerate() {
                if leaf.glob {
                    self.modules[m].globs.push((f, u, k));
                } else if let Some(name) = leaf.alias.clone().or_else(|| leaf.path.last().cloned()) {
                    self.modules[m].uses.entry(name).or_default().push((f, u, k));
                }
            }
        }
    }

    /// Sets each module's crate root, parent module and package library root.
    fn link_modules(&mut self) {
        for m in 0..self.modules.len() {
            let (krate, package, path) =
                (self.modules[m].krate.clone(), self.modules[m].package.clone(), self.modules[m].path.clone());
            let lib = format!("{package}|src");
            self.modules[m].root = self.module_id(&krate, &[]);
            self.modules[m].parent = path.split_last().and_then(|(_, p)| self.module_id(&krate, p));
            self.modules[m].lib = if krate == lib { None } else { self.module_id(&lib, &[]) };
        }
    }

    /// Resolves the type and the trait of every impl block.
    fn resolve_impls(&mut self) {
        let files = self.files;
        for (f, file) in files.iter().enumerate() {
            for (i, item) in file.items.iter().enumerate() {
                let Some(info) = &item.impl_info else {
                    continue;
                };
                let m = self.scope_modules[f][item.scope];
                if let Some(Entity::Def(t)) = self.resolve(m, &info.self_type, None, 0, &mut Vec::new()) {
                    self.impl_type.insert((f, i), t);
                }
                if let Some(Entity::Def(t)) =
                    info.trait_path.as_ref().and_then(|p| self.resolve(m, p, None, 0, &mut Vec::new()))
                {
                    self.impl_trait.insert((f, i), t);
                }
            }
        }
    }

    /// Collects the methods of every type (from its impls) and trait, by name.
    fn collect_members(&mut self) {
        let files = self.files;
        for (f, file) in files.iter().enumerate() {
            for (i, item) in file.items.iter().enumerate() {
                let Some(p) = item.parent else { continue };
                if !matches!(item.kind, DefinitionKind::Method) {
                    continue;
                }
                let owner = match file.items[p].kind {
                    DefinitionKind::Trait => Some((f, p)),
                    DefinitionKind::Impl => self.impl_type.get(&(f, p)).copied(),
                    _ => None,
                };
                if let Some(owner) = owner {
                    self.members.entry(owner).or_default().entry(item.name.clone()).or_default().push((f, i));
                }
            }
        }
    }

    fn module(&mut self, krate: &str, package: &str, path: &[String]) -> usize {
        if let Some(&m) = self.module_ids.get(&(krate.to_string(), path.to_vec())) {
            return m;
        }
        let id = self.modules.len();
        self.modules.push(Module {
            krate: krate.to_string(),
            package: package.to_string(),
            path: path.to_vec(),
            ..Module::default()
        });
        self.module_ids.insert((krate.to_string(), path.to_vec()), id);
        if let Some((last, parent)) = path.split_last() {
            let p = self.module(krate, package, parent);
            self.modules[p].children.insert(last.clone(), id);
        }
        id
    }

    fn module_id(&self, krate: &str, path: &[String]) -> Option<usize> {
        self.module_ids.get(&(krate.to_string(), path.to_vec())).copied()
    }

    fn item(&self, d: DefRef) -> &super::parse::Item {
        &self.files[d.0].items[d.1]
    }

    fn library_root(&self, m: usize, name: &str) -> Option<usize> {
        let module = &self.modules[m];
        if matches!(name, "std" | "core" | "alloc") {
            return None;
        }
        match self.crate_names.get(&module.package) {
            Some(n) if n != name => None,
            _ => module.lib,
        }
    }

    /// Resolve a path in module `m`; every definition passed on the way is pushed to `via`.
    fn resolve(
        &self,
        m: usize,
        segs: &[String],
        self_item: Option<DefRef>,
        depth: usize,
        via: &mut Vec<DefRef>,
    ) -> Option<Entity> {
        let (first, rest) = segs.split_first()?;
        if depth > MAX_DEPTH {
            return None;
        }
        let mut ent = match first.as_str() {
            "crate" => Entity::Module(self.modules[m].root?),
            "self" => Entity::Module(m),
            "super" => Entity::Module(self.modules[m].parent?),
            "Self" => {
                let s = self_item?;
                match self.item(s).kind {
                    DefinitionKind::Trait => Entity::Def(s),
                    _ => Entity::Def(*self.impl_type.get(&s)?),
                }
            }
            name => match self.lookup(m, name, depth) {
                Some(e) => e,
                None => Entity::Module(self.library_root(m, name)?),
            },
        };
        for seg in rest {
            if let Entity::Def(d) = ent {
                via.push(d);
            }
            ent = match ent {
                Entity::Module(mm) => self.lookup(mm, seg, depth + 1)?,
                Entity::Def(d) => match self.members.get(&d).and_then(|ms| ms.get(seg)).and_then(|v| v.first()) {
                    Some(&member) => Entity::Def(member),
                    // An enum variant, or an associated item carve does not index.
                    None if self.item(d).kind == DefinitionKind::Enum => {
                        return Some(Entity::Def(d));
                    }
                    None => return None,
                },
            };
        }
        Some(ent)
    }

    fn lookup(&self, m: usize, name: &str, depth: usize) -> Option<Entity> {
        if depth > MAX_DEPTH {
            return None;
        }
        let module = &self.modules[m];
        if let Some(&d) = module.items.get(name).and_then(|v| v.first()) {
            return Some(Entity::Def(d));
        }
        if let Some(&c) = module.children.get(name) {
            return Some(Entity::Module(c));
        }
        if let Some(uses) = module.uses.get(name) {
            for &(f, u, k) in uses {
                let scope_module = self.scope_modules[f][self.files[f].uses[u].scope];
                let path = &self.files[f].uses[u].leaves[k].path;
                // `use foo;` of an external crate would resolve to itself.
                if path.len() == 1 && scope_module == m && path[0] == name {
                    continue;
                }
                if let Some(e) = self.resolve(scope_module, path, None, depth + 1, &mut Vec::new()) {
                    return Some(e);
                }
            }
        }
        for &(f, u, k) in &module.globs {
            let scope_module = self.scope_modules[f][self.files[f].uses[u].scope];
            let path = &self.files[f].uses[u].leaves[k].path;
            if let Some(Entity::Module(g)) = self.resolve(scope_module, path, None, depth + 1, &mut Vec::new())
                && g != m
                && let Some(e) = self.lookup(g, name, depth + 1)
            {
                return Some(e);
            }
        }
        None
    }

    fn resolve_ref(&self, f: usize, scope: usize, self_item: Option<DefRef>, r: &RawRef, out: &mut Vec<DefRef>) {
        let m = self.scope_modules[f][scope];
        let package = &self.files[f].location.package;
        match r {
            RawRef::Path(segs) => {
                let mut via = Vec::new();
                if let Some(Entity::Def(d)) = self.resolve(m, segs, self_item, 0, &mut via) {
                    out.push(d);
                }
                out.extend(via);
            }
            RawRef::SelfMethod(name) => {
                let owner = self_item.and_then(|si| match self.item(si).kind {
                    DefinitionKind::Trait => Some(si),
                    _ => self.impl_type.get(&si).copied(),
                });
                match owner.and_then(|o| self.members.get(&o)).and_then(|ms| ms.get(name)) {
                    Some(v) => out.extend(v.iter().copied()),
                    None => self.resolve_ref(f, scope, self_item, &RawRef::Method(name.clone()), out),
                }
            }
            RawRef::Method(name) => {
                if let Some(v) = self.methods.get(&(package.clone(), name.clone())) {
                    out.extend(v.iter().copied());
                }
            }
            RawRef::Macro(segs) if segs.len() == 1 => {
                if let Some(v) = self.macros.get(&(package.clone(), segs[0].clone())) {
                    out.extend(v.iter().copied());
                }
            }
            RawRef::Macro(segs) => {
                if let Some(Entity::Def(d)) = self.resolve(m, segs, self_item, 0, &mut Vec::new()) {
                    out.push(d);
                }
            }
        }
    }

    fn is_test_module(&self, krate: &str, path: &[String]) -> bool {
        (1..=path.len()).any(|n| self.test_modules.contains(&(krate.to_string(), path[..n].to_vec())))
    }

    fn id(&self, d: DefRef) -> NodeId {
        self.ids[d.0][d.1].clone()
    }

    /// The file's index and its definitions, with references resolved.
    pub fn link_file(&self, f: usize) -> (FileIndex, Vec<Definition>) {
        let file = &self.files[f];
        let test_file = file.is_test_file || self.is_test_module(&file.location.krate, &file.location.module);
        let defs = (0..file.items.len()).map(|i| self.definition(f, i, test_file)).collect();
        let module = if file.location.module.is_empty() {
            "crate".to_string()
        } else {
            format!("crate::{}", file.location.module.join("::"))
        };
        let fi = FileIndex {
            path: file.path.clone(),
            language: Language::Rust,
            module: Some(module),
            is_test: test_file,
            definitions: self.ids[f].clone(),
            imports: self.imports(f),
            module_references: self.module_references(f),
            exported: Vec::new(),
            value_bindings: Vec::new(),
            discarded_calls: Vec::new(),
            sha256: file.sha256.clone(),
            lines: file.lines,
        };
        (fi, defs)
    }

    /// Item `i` of file `f` as a definition, with its references resolved.
    fn definition(&self, f: usize, i: usize, test_file: bool) -> Definition {
        let file = &self.files[f];
        let item = &file.items[i];
        let mut targets = Vec::new();
        for r in &item.refs {
            self.resolve_ref(f, item.scope, item.self_item.map(|s| (f, s)), r, &mut targets);
        }
        if let Some(p) = item.parent.filter(|p| file.items[*p].kind == DefinitionKind::Impl) {
            // A trait impl's method implements the trait's item of the same name.
            if let Some(t) = self.impl_trait.get(&(f, p))
                && let Some(v) = self.members.get(t).and_then(|ms| ms.get(&item.name))
            {
                targets.extend(v.iter().copied().filter(|d| d.0 == t.0 && self.item(*d).parent == Some(t.1)));
            }
        }
        let mut references: Vec<NodeId> = targets.into_iter().filter(|d| *d != (f, i)).map(|d| self.id(d)).collect();
        references.sort();
        references.dedup();
        let parent = match self.impl_type.get(&(f, i)) {
            Some(t) => Some(self.id(*t)),
            None => item.parent.map(|p| self.ids[f][p].clone()),
        };
        Definition {
            id: self.ids[f][i].clone(),
            language: Language::Rust,
            path: file.path.clone(),
            qualname: item.qualname.clone(),
            name: item.name.clone(),
            kind: item.kind,
            span: item.span,
            def_line: item.def_line,
            body: item.body,
            signature: item.signature.clone(),
            docstring: item.docstring.clone(),
            parent,
            is_test: test_file || item.is_test,
            references,
            load_references: self.load_references(f, i),
        }
    }

    /// What an impl block (item `i` of file `f`) needs beyond the paths it names: its trait,
    /// and for a trait impl the type (or, for a type the index lacks, the trait) it stays with.
    fn load_references(&self, f: usize, i: usize) -> Vec<LoadReference> {
        let item = &self.files[f].items[i];
        let mut load_references = Vec::new();
        if let Some(t) = self.impl_trait.get(&(f, i)) {
            load_references.push(LoadReference { target: self.id(*t), role: LoadRole::BaseClass });
        }
        // A trait impl (of the index's trait or another crate's, `Display`) stays while
        // its type does: what uses it names no path to it.
        // One for a type the index does not define (`[Flag]`, `&[T]`, `Vec<T>`, a generic
        // `B`) stays while its trait does, for the same reason.
        if item.impl_info.as_ref().is_some_and(|info| info.trait_path.is_some())
            && let Some(t) = self.impl_type.get(&(f, i)).or_else(|| self.impl_trait.get(&(f, i)))
        {
            load_references.push(LoadReference { target: self.id(*t), role: LoadRole::Implementation });
        }
        load_references
    }

    /// What file `f`'s code outside every item names, sorted and deduplicated.
    fn module_references(&self, f: usize) -> Vec<ModuleReference> {
        let mut module_references = Vec::new();
        for (r, scope, line) in &self.files[f].module_refs {
            let mut targets = Vec::new();
            self.resolve_ref(f, *scope, None, r, &mut targets);
            module_references.extend(targets.into_iter().map(|d| ModuleReference { target: self.id(d), line: *line }));
        }
        module_references.sort();
        module_references.dedup();
        module_references
    }

    /// File `f`'s `use` items as imports, each leaf resolved to its target and file.
    fn imports(&self, f: usize) -> Vec<Import> {
        self.files[f]
            .uses
            .iter()
            .map(|u| {
                let m = self.scope_modules[f][u.scope];
                let prefix_len = if u.prefix.is_empty() { 0 } else { u.prefix.split("::").count() };
                let mut resolved_path = None;
                let names =
                    u.leaves.iter().map(|leaf| self.imported_name(m, prefix_len, leaf, &mut resolved_path)).collect();
                Import { span: u.span, module: u.prefix.clone(), resolved_path, names, module_level: u.module_level }
            })
            .collect()
    }

    /// One `use` leaf (in module `m`) as an imported name; sets `resolved_path` to the file
    /// of its target if no earlier leaf did.
    fn imported_name(
        &self,
        m: usize,
        prefix_len: usize,
        leaf: &UseLeaf,
        resolved_path: &mut Option<String>,
    ) -> ImportedName {
        let rel = leaf.path.get(prefix_len.min(leaf.path.len())..).unwrap_or(&[]).join("::");
        let name = match (leaf.glob, rel.is_empty()) {
            (true, true) => "*".to_string(),
            (true, false) => format!("{rel}::*"),
            (false, _) => rel,
        };
        let ent = if leaf.glob { None } else { self.resolve(m, &leaf.path, None, 0, &mut Vec::new()) };
        let target = match ent {
            Some(Entity::Def(d)) => Some(d),
            Some(Entity::Module(mm)) => self.modules[mm].inline_item,
            None => None,
        };
        let file_of = match ent {
            Some(Entity::Def(d)) => Some(d.0),
            Some(Entity::Module(mm)) => self.modules[mm].file.or(self.modules[mm].inline_item.map(|d| d.0)),
            None => None,
        };
        if resolved_path.is_none() {
            *resolved_path = file_of.map(|x| self.files[x].path.clone());
        }
        ImportedName { name, alias: leaf.alias.clone(), span: leaf.span, target: target.map(|d| self.id(d)) }
    }
}

/// Node ids of a file's items: `path::qualname`, with `@L<line>` when a qualname repeats.
fn node_ids(file: &ParsedFile) -> Vec<NodeId> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for item in &file.items {
        *counts.entry(item.qualname.as_str()).or_default() += 1;
    }
    file.items
        .iter()
        .map(|item| {
            if counts.get(item.qualname.as_str()).copied().unwrap_or(0) > 1 {
                format!("{}::{}@L{}", file.path, item.qualname, item.def_line)
            } else {
                format!("{}::{}", file.path, item.qualname)
            }
        })
        .collect()
}
