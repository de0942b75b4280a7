//! Resolve the names of parsed TypeScript/JavaScript files across the repository: module
//! specifiers to files, imports to the definitions they bind (through re-export chains),
//! and every definition's used names to definitions. See `index.rs` for the rules.

use std::collections::{BTreeMap, BTreeSet};

use super::parse::{FxHashMap as HashMap, Object, ParsedFile, Ref};
use crate::index::{Definition, DefinitionKind, FileIndex, LoadReference, LoadRole, ModuleReference, NodeId};

/// What linking adds to a parsed definition.
pub(crate) struct Linked {
    id: NodeId,
    parent: Option<NodeId>,
    references: Vec<NodeId>,
    load_references: Vec<LoadReference>,
}

impl Linked {
    /// The definition `def` of file `path`, linked.
    pub fn apply(self, mut def: Definition, path: &str) -> Definition {
        def.id = self.id;
        def.path = path.to_string();
        def.parent = self.parent;
        def.references = self.references;
        def.load_references = self.load_references;
        def
    }
}

/// Re-export chains longer than this are cut (they are cycles in practice).
const MAX_DEPTH: usize = 24;

/// Where a definition lives: (file, definition) indices.
type At = (usize, usize);

pub(crate) struct Linker<'a> {
    files: &'a [ParsedFile],
    by_path: HashMap<&'a str, usize>,
    ids: Vec<Vec<NodeId>>,
    /// Per file: top-level definitions by name.
    top: Vec<HashMap<&'a str, Vec<usize>>>,
    /// Per file: children of each definition.
    children: Vec<Vec<Vec<usize>>>,
    /// Every class member of the repository by name (for `obj.m` on an untyped object).
    members: HashMap<&'a str, Vec<At>>,
    /// Per file: top-level definitions by the name they are exported under.
    exports: Vec<HashMap<&'a str, Vec<usize>>>,
    /// Per file: import bindings by local name.
    bindings: Vec<HashMap<&'a str, Vec<usize>>>,
    /// Per file, per import statement: the file it names.
    resolved: Vec<Vec<Option<usize>>>,
}

/// `a/b/../c/./d` → `a/c/d`; `None` when it climbs above the root.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

const EXTENSIONS: &[&str] = &["ts", "tsx", "d.ts", "js", "jsx", "mts", "cts", "mjs", "cjs"];

impl<'a> Linker<'a> {
    pub fn new(files: &'a [ParsedFile]) -> Linker<'a> {
        let by_path = files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
        let mut ids = Vec::with_capacity(files.len());
        let mut top = Vec::with_capacity(files.len());
        let mut children = Vec::with_capacity(files.len());
        let mut members: HashMap<&str, Vec<At>> = HashMap::default();
        for (fi, f) in files.iter().enumerate() {
            let mut count: HashMap<&str, usize> = HashMap::default();
            for d in &f.defs {
                *count.entry(d.def.qualname.as_str()).or_default() += 1;
            }
            ids.push(
                f.defs
                    .iter()
                    .map(|d| {
                        if count.get(d.def.qualname.as_str()).copied().unwrap_or(0) > 1 {
                            format!("{}::{}@L{}", f.path, d.def.qualname, d.def.def_line)
                        } else {
                            format!("{}::{}", f.path, d.def.qualname)
                        }
                    })
                    .collect(),
            );
            let mut t: HashMap<&str, Vec<usize>> = HashMap::default();
            let mut ch = vec![Vec::new(); f.defs.len()];
            for (i, d) in f.defs.iter().enumerate().filter(|(_, d)| !d.test_case) {
                match d.parent {
                    None => t.entry(d.def.name.as_str()).or_default().push(i),
                    Some(p) => {
                        if let Some(c) = ch.get_mut(p) {
                            c.push(i);
                        }
                        if f.defs.get(p).is_some_and(|pd| pd.def.kind == DefinitionKind::Class) {
                            members.entry(d.def.name.as_str()).or_default().push((fi, i));
                        }
                    }
                }
            }
            top.push(t);
            children.push(ch);
        }
        let exports = files
            .iter()
            .map(|f| {
                let mut m: HashMap<&str, Vec<usize>> = HashMap::default();
                for (i, d) in f.defs.iter().enumerate().filter(|(_, d)| d.parent.is_none()) {
                    for e in &d.exported_as {
                        m.entry(e.as_str()).or_default().push(i);
                    }
                }
                m
            })
            .collect();
        let bindings = files
            .iter()
            .map(|f| {
                let mut m: HashMap<&str, Vec<usize>> = HashMap::default();
                for (i, b) in f.bindings.iter().enumerate() {
                    m.entry(b.local.as_str()).or_default().push(i);
                }
                m
            })
            .collect();
        let mut linker =
            Linker { files, by_path, ids, top, children, members, exports, bindings, resolved: Vec::new() };
        linker.resolved = files
            .iter()
            .map(|f| f.imports.iter().map(|i| linker.resolve_specifier(&f.path, &i.module)).collect())
            .collect();
        linker
    }

    /// The file a repository-relative module path (no extension, or a `.js` one) names,
    /// with TypeScript's extension substitution and `index` files.
    fn resolve_base(&self, base: &str) -> Option<usize> {
        let mut candidates = Vec::new();
        for (js, ts) in [
            ("js", &["ts", "tsx", "d.ts"][..]),
            ("jsx", &["tsx"]),
            ("mjs", &["mts", "d.mts"]),
            ("cjs", &["cts", "d.cts"]),
        ] {
            if let Some(stem) = base.strip_suffix(&format!(".{js}")) {
                candidates.extend(ts.iter().map(|e| format!("{stem}.{e}")));
            }
        }
        candidates.push(base.to_string());
        candidates.extend(EXTENSIONS.iter().map(|e| format!("{base}.{e}")));
        candidates.extend(
            EXTENSIONS.iter().map(|e| if base.is_empty() { format!("index.{e}") } else { format!("{base}/index.{e}") }),
        );
        candidates.iter().find_map(|c| self.by_path.get(c.as_str()).copied())
    }

    /// The file a specifier names: relative specifiers from the importing file; then the
    /// common `tsconfig` set-ups, without reading them: `baseUrl` at the root or `src/`
    /// (`"money/money"`), and `paths` aliases `@/`, `~/`, `#/` (also matched as a path
    /// suffix anywhere in the repository). Package names resolve to nothing.
    fn resolve_specifier(&self, from: &str, spec: &str) -> Option<usize> {
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
            return self.resolve_base(&normalize(&format!("{dir}/{spec}"))?);
        }
        let alias = ["@/", "~/", "#/"].iter().find_map(|p| spec.strip_prefix(p));
        let rest = alias.unwrap_or(spec);
        if rest.is_empty() || rest.starts_with('/') || (alias.is_none() && spec.starts_with('@')) {
            return None;
        }
        let rest = normalize(rest)?;
        if let Some(found) = self.resolve_base(&rest).or_else(|| self.resolve_base(&format!("src/{rest}"))) {
            return Some(found);
        }
        // Only aliases go on to the suffix match.
        alias?;
        // `@/x/y` with `paths` pointing somewhere else: the file whose path ends with `x/y`.
        let suffix = format!("/{}", rest.trim_end_matches(".js"));
        self.files.iter().position(|f| {
            let stem = f.path.rsplit_once('.').map_or(f.path.as_str(), |(s, _)| s);
            let stem = stem.strip_suffix(".d").unwrap_or(stem);
            let stem = stem.strip_suffix("/index").unwrap_or(stem);
            stem.ends_with(&suffix)
        })
    }

    /// The file import statement `import` of file `f` names (resolved once, in `new`).
    fn import_target(&self, f: usize, import: usize) -> Option<usize> {
        self.resolved.get(f).and_then(|r| r.get(import)).copied().flatten()
    }

    /// Definitions a module exports under `name`.
    fn export(&self, f: usize, name: &str, depth: usize) -> Vec<At> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let file = &self.files[f];
        if let Some(direct) = self.exports[f].get(name) {
            return direct.iter().map(|&i| (f, i)).collect();
        }
        for (local, exported) in &file.local_exports {
            if exported == name {
                let found = self.local(f, local, depth + 1);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        for r in &file.reexports {
            let Some(target) = self.import_target(f, r.import) else {
                continue;
            };
            match (&r.imported, &r.exported) {
                (Some(imported), Some(exported)) if exported == name => {
                    let found = self.export(target, imported, depth + 1);
                    if !found.is_empty() {
                        return found;
                    }
                }
                (None, None) if name != "default" => {
                    let found = self.export(target, name, depth + 1);
                    if !found.is_empty() {
                        return found;
                    }
                }
                _ => {}
            }
        }
        Vec::new()
    }

    /// Definitions a name means at the top level of file `f`: its own top-level
    /// definitions, else what an import binds to it.
    fn local(&self, f: usize, name: &str, depth: usize) -> Vec<At> {
        if let Some(defs) = self.top[f].get(name) {
            return defs.iter().map(|&i| (f, i)).collect();
        }
        let file = &self.files[f];
        let bound = self.bindings[f].get(name).map_or(&[][..], Vec::as_slice);
        for b in bound.iter().map(|&i| &file.bindings[i]) {
            if let Some(target) = self.import_target(f, b.import) {
                // A namespace used as a value is the module's default export (CommonJS
                // `const f = require("./f")` with `module.exports = f`).
                let imported = if b.imported == "*" { "default" } else { b.imported.as_str() };
                return self.export(target, imported, depth + 1);
            }
        }
        Vec::new()
    }

    /// The module a namespace import binds to `name` in file `f`.
    fn namespace(&self, f: usize, name: &str) -> Option<usize> {
        let file = &self.files[f];
        let b = self.bindings[f].get(name)?.iter().map(|&i| &file.bindings[i]).find(|b| b.imported == "*")?;
        self.import_target(f, b.import)
    }

    fn children_named(&self, (f, d): At, name: &str) -> Vec<At> {
        self.children[f][d].iter().filter(|&&c| self.files[f].defs[c].def.name == name).map(|&c| (f, c)).collect()
    }

    /// A bare name used inside definition `from` of file `f` (or at module level).
    fn name(&self, f: usize, from: Option<usize>, name: &str) -> Vec<At> {
        let mut cur = from;
        while let Some(c) = cur {
            let d = &self.files[f].defs[c];
            if !matches!(d.def.kind, DefinitionKind::Class | DefinitionKind::Interface) {
                let found = self.children_named((f, c), name);
                if !found.is_empty() {
                    return found;
                }
            }
            cur = d.parent;
        }
        self.local(f, name, 0)
    }

    /// Members named `m` of a type, including those of its repository base types.
    fn member_of(&self, at: At, m: &str, depth: usize) -> Vec<At> {
        let own = self.children_named(at, m);
        if !own.is_empty() || depth > MAX_DEPTH {
            return own;
        }
        let (f, d) = at;
        for h in &self.files[f].defs[d].heritage {
            let parent = self.files[f].defs[d].parent;
            for base in self.name(f, parent, h) {
                let found = self.member_of(base, m, depth + 1);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }

    fn fallback(&self, m: &str) -> Vec<At> {
        self.members.get(m).cloned().unwrap_or_default()
    }

    fn resolve(&self, f: usize, from: Option<usize>, r: &Ref) -> Vec<At> {
        match r {
            Ref::Name(n) => self.name(f, from, n),
            Ref::Member { object: Object::This, member } => {
                let mut cur = from;
                while let Some(c) = cur {
                    if self.files[f].defs[c].def.kind == DefinitionKind::Class {
                        let found = self.member_of((f, c), member, 0);
                        return if found.is_empty() { self.fallback(member) } else { found };
                    }
                    cur = self.files[f].defs[c].parent;
                }
                self.fallback(member)
            }
            Ref::Member { object: Object::Name(o), member } => {
                if let Some(module) = self.namespace(f, o) {
                    return self.export(module, member, 0);
                }
                let found: Vec<At> =
                    self.name(f, from, o).into_iter().flat_map(|t| self.member_of(t, member, 0)).collect();
                if found.is_empty() { self.fallback(member) } else { found }
            }
            Ref::Member { object: Object::Other, member } => self.fallback(member),
        }
    }

    /// Names of the members a type's repository base types declare (recursively).
    fn base_member_names(&self, at: At, out: &mut BTreeSet<String>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let (f, d) = at;
        let def = &self.files[f].defs[d];
        for h in &def.heritage {
            for base in self.name(f, def.parent, h) {
                let b = &self.files[base.0].defs[base.1];
                out.extend(b.member_names.iter().cloned());
                out.extend(self.children[base.0][base.1].iter().map(|&c| self.files[base.0].defs[c].def.name.clone()));
                self.base_member_names(base, out, depth + 1);
            }
        }
    }

    /// File `f`'s index, and what linking adds to each of its definitions (in order).
    pub fn link_file(&self, f: usize) -> (FileIndex, Vec<Linked>) {
        let file = &self.files[f];
        let id = |(fi, di): At| self.ids[fi][di].clone();
        let mut defs = Vec::with_capacity(file.defs.len());
        for (i, raw) in file.defs.iter().enumerate() {
            let mut refs: BTreeSet<NodeId> = BTreeSet::new();
            let mut loads: BTreeMap<NodeId, LoadRole> = BTreeMap::new();
            for (r, role) in &raw.refs {
                let targets = self.resolve(f, Some(i), r).into_iter().map(id);
                match role {
                    None => refs.extend(targets),
                    Some(role) => {
                        for t in targets {
                            loads.entry(t).or_insert(*role);
                        }
                    }
                }
            }
            loads.remove(&self.ids[f][i]);
            if raw.def.kind == DefinitionKind::Class {
                // `new C(…)` and `super(…)` name the class, and call its constructor.
                refs.extend(self.children_named((f, i), "constructor").into_iter().map(id));
            }
            if raw.def.kind == DefinitionKind::Class && !raw.heritage.is_empty() {
                let mut names = BTreeSet::new();
                self.base_member_names((f, i), &mut names, 0);
                for &c in &self.children[f][i] {
                    if names.contains(&file.defs[c].def.name) {
                        refs.insert(id((f, c)));
                    }
                }
            }
            refs.remove(&self.ids[f][i]);
            defs.push(Linked {
                id: self.ids[f][i].clone(),
                parent: raw.parent.map(|p| self.ids[f][p].clone()),
                references: refs.into_iter().collect(),
                load_references: loads.into_iter().map(|(target, role)| LoadReference { target, role }).collect(),
            });
        }
        let mut module_references: Vec<ModuleReference> = Vec::new();
        for (r, line) in &file.module_refs {
            for t in self.resolve(f, None, r) {
                module_references.push(ModuleReference { target: id(t), line: *line });
            }
        }
        module_references.sort();
        module_references.dedup();
        let mut imports = file.imports.clone();
        for (k, imp) in imports.iter_mut().enumerate() {
            let target_file = self.import_target(f, k);
            imp.resolved_path = target_file.map(|t| self.files[t].path.clone());
            if let Some(t) = target_file {
                for n in &mut imp.names {
                    if n.name != "*" {
                        n.target = self.export(t, &n.name, 0).into_iter().next().map(id);
                    }
                }
            }
        }
        let mut exported: BTreeSet<NodeId> = file
            .defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.parent.is_none() && !d.exported_as.is_empty())
            .map(|(i, _)| self.ids[f][i].clone())
            .collect();
        for (local, _) in &file.local_exports {
            if let Some(defs) = self.top[f].get(local.as_str()) {
                exported.extend(defs.iter().map(|&i| self.ids[f][i].clone()));
            }
        }
        let index = FileIndex {
            path: file.path.clone(),
            language: file.language,
            module: None,
            is_test: file.is_test,
            definitions: self.ids[f].clone(),
            imports,
            module_references,
            exported: exported.into_iter().collect(),
            value_bindings: Vec::new(),
            discarded_calls: Vec::new(),
            sha256: file.sha256.clone(),
            lines: file.lines,
        };
        (index, defs)
    }
}
