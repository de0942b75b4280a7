//! Second pass, across files: resolve imports to repository files, imported names to
//! definitions (following re-exports), and every raw name use to the definition it names.
//!
//! Scopes follow Python: a function sees its own bindings (nested definitions, imports in
//! its body, parameters and assigned names — which shadow outer names), then enclosing
//! functions, then the module; class bodies are visible only to code directly in them.
//! Code that runs in a scope itself (module code, class bodies, decorators) sees the
//! binding in effect at its position; code in nested function bodies sees the last one.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use super::modules::{ModuleMap, location};
use super::parse::{ParsedFile, RawBinding, RawImportKind, RawRef};
use crate::Language;
use crate::index::{
    Definition, DefinitionKind, DiscardedCall, FileIndex, Import, ImportedName, LoadReference, LoadRole,
    ModuleReference, ParameterKind, Span, ValueBinding,
};

/// Whether every use of a callee in one body is a discarded-value call, and those calls (each
/// with whether its value is only tested).
type Uses = (bool, Vec<(Span, bool)>);

/// Re-export chains and inheritance are followed this deep at most (cycles end here).
const MAX_DEPTH: usize = 24;

#[derive(Debug, Clone)]
enum Binding {
    Def(usize),
    /// A module location.
    Module(String),
    /// `from <location> import name`.
    From {
        module: String,
        name: String,
    },
    /// Bound to something outside the repository.
    External,
    /// A module-level name bound by `name = callee(…)` (and by nothing else there): an
    /// instance when `callee` is a class of the repository.
    Instance {
        callee: Box<str>,
        pos: usize,
    },
}

#[derive(Debug, Clone)]
enum Target {
    Def(usize, usize),
    Module(String),
    /// `self`/`cls` inside a method of this class.
    Instance(usize, usize),
}

#[derive(Debug, Default)]
struct Scope {
    /// Name -> bindings in source order, keyed by the byte where the binding takes effect.
    names: HashMap<String, Vec<(usize, Binding)>>,
}

impl Scope {
    fn bind(&mut self, name: &str, pos: usize, binding: Binding) {
        self.names.entry(name.to_string()).or_default().push((pos, binding));
    }

    /// The binding in effect at `pos` or, without a position or when none precedes it,
    /// the last one.
    fn get(&self, name: &str, pos: Option<usize>) -> Option<&Binding> {
        let list = self.names.get(name)?;
        if let Some(pos) = pos {
            let before = list.partition_point(|(p, _)| *p <= pos);
            if before > 0 {
                return Some(&list[before - 1].1);
            }
        }
        list.last().map(|(_, b)| b)
    }
}

struct FilePrep {
    /// Resolved location of each import's module.
    import_locations: Vec<Option<String>>,
    /// Scope 0 is the module; scope `i + 1` is definition `i`.
    scopes: Vec<Scope>,
    /// Locations of module-level `from m import *`.
    stars: Vec<String>,
}

pub(super) struct Linker<'a> {
    files: &'a [ParsedFile],
    all_paths: &'a [String],
    /// Index in `all_paths` -> index in `files`.
    parsed: Vec<Option<usize>>,
    map: ModuleMap,
    preps: Vec<FilePrep>,
    /// Name -> the uses (file, use, owning definition) whose chain holds it, for the names
    /// value bindings bind.
    uses_of: HashMap<&'a str, Vec<NameUse<'a>>>,
}

/// A use of a name that a value binding binds.
struct NameUse<'a> {
    file: usize,
    r: &'a RawRef,
    /// The definition whose code holds the use; `None`: module-level code.
    owner: Option<usize>,
    /// Where in `r.chain` the name is (0: the chain's root).
    part: usize,
}

impl<'a> Linker<'a> {
    /// `all_paths`: every Python file of the repository, including ones that failed to
    /// parse (imports may still resolve to them); `files`: the parsed ones.
    pub(super) fn new(files: &'a [ParsedFile], all_paths: &'a [String]) -> Linker<'a> {
        let map = ModuleMap::new(all_paths.iter().map(String::as_str));
        let by_path: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
        let parsed = all_paths.iter().map(|p| by_path.get(p.as_str()).copied()).collect();
        let preps = files.iter().map(|f| prepare(f, &map)).collect();
        let uses_of = uses_of(files);
        Linker { files, all_paths, parsed, map, preps, uses_of }
    }

    /// Whether file `g` imports file `f` (an import or `from … import` naming its module).
    fn imports_file(&self, g: usize, f: usize) -> bool {
        let prep = &self.preps[g];
        prep.import_locations.iter().flatten().chain(&prep.stars).any(|l| self.parsed_at(l) == Some(f))
    }

    /// The finished [`ValueBinding`] of `b` (in file `file`), or `None` when it names no
    /// definition.
    fn value_binding(&self, file: usize, b: &RawBinding) -> Option<ValueBinding> {
        let f = &self.files[file];
        let targets: BTreeSet<ModuleReference> = b
            .refs
            .iter()
            .filter_map(|r| {
                self.resolve_chain(file, r, 0).map(|t| ModuleReference { target: self.id(t), line: r.line })
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        let named_by = if b.entry { BTreeSet::new() } else { self.named_by(file, b) };
        Some(ValueBinding {
            span: b.span,
            name: b.name.clone(),
            entry: b.entry,
            class: b.class.map(|c| f.defs[c].def.id.clone()),
            targets: targets.into_iter().collect(),
            named_by: named_by.into_iter().collect(),
        })
    }

    /// Code outside statement `b` that names what it binds: in its own file a bare name in
    /// its scope (module code and functions for a module binding, the class body for a class
    /// attribute) or an attribute `x.name`; in a file that imports its file, an attribute
    /// `x.name`, a bare name under `from … import *`, or `from … import name` (module
    /// bindings). A use that resolves to a definition of that name is that definition's,
    /// not the binding's.
    fn named_by(&self, file: usize, b: &RawBinding) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let owner_id = |g: usize, owner: Option<usize>| match owner {
            Some(d) => self.files[g].defs[d].def.id.clone(),
            None => self.files[g].path.clone(),
        };
        let is_definition = |g: usize, r: &RawRef| {
            self.resolve_chain(g, r, 0).is_some_and(|(tf, td)| self.files[tf].defs[td].def.name == b.name)
        };
        for u in self.uses_of.get(b.name.as_str()).into_iter().flatten() {
            let inside = u.file == file && b.statement.0 <= u.r.pos && u.r.pos < b.statement.1;
            if inside {
                continue;
            }
            let same = u.file == file;
            let imports = same || self.imports_file(u.file, file);
            let counts = match (u.part, b.class) {
                (0, None) => same || self.preps[u.file].stars.iter().any(|l| self.parsed_at(l) == Some(file)),
                (0, Some(c)) => same && u.r.scope == Some(c),
                _ => imports,
            };
            if counts && !is_definition(u.file, u.r) {
                out.insert(owner_id(u.file, u.owner));
            }
        }
        if b.class.is_none() {
            for (g, other) in self.files.iter().enumerate() {
                for (imp, loc) in other.imports.iter().zip(&self.preps[g].import_locations) {
                    let RawImportKind::From { names, .. } = &imp.kind else { continue };
                    let Some(loc) = loc.as_deref().filter(|l| self.parsed_at(l) == Some(file)) else { continue };
                    let named = names.iter().any(|n| n.name == b.name);
                    let is_def = matches!(self.module_attr(loc, &b.name, 0), Some(Target::Def(tf, td)) if self.files[tf].defs[td].def.name == b.name);
                    if named && !is_def {
                        out.insert(owner_id(g, imp.scope));
                    }
                }
            }
        }
        out
    }

    fn parsed_at(&self, loc: &str) -> Option<usize> {
        self.map.file(loc).and_then(|i| self.parsed.get(i).copied().flatten())
    }

    fn id(&self, (file, def): (usize, usize)) -> String {
        self.files[file].defs[def].def.id.clone()
    }

    /// Name `name` as an attribute of module `file` (what `from m import name` binds).
    fn resolve_in_module(&self, file: usize, name: &str, depth: usize) -> Option<Target> {
        if depth > MAX_DEPTH {
            return None;
        }
        let prep = &self.preps[file];
        if let Some(b) = prep.scopes[0].get(name, None) {
            return self.resolve_binding(file, b, depth + 1);
        }
        let path = &self.files[file].path;
        let is_package = path == "__init__.py" || path.ends_with("/__init__.py");
        if let Some(child) = location(path).filter(|_| is_package).and_then(|loc| self.map.child(loc, name)) {
            return Some(Target::Module(child));
        }
        self.resolve_star(file, name, depth)
    }

    /// `name` as bound by the module's `from m import *` statements, transitively: each
    /// module once, honouring `__all__` or else skipping `_private` names.
    fn resolve_star(&self, file: usize, name: &str, depth: usize) -> Option<Target> {
        let mut seen = HashSet::from([file]);
        let mut queue: VecDeque<usize> = self.preps[file].stars.iter().filter_map(|s| self.parsed_at(s)).collect();
        while let Some(f) = queue.pop_front() {
            if !seen.insert(f) {
                continue;
            }
            let exports = &self.files[f].exports;
            let exported = if exports.is_empty() { !name.starts_with('_') } else { exports.iter().any(|e| e == name) };
            if !exported {
                continue;
            }
            if let Some(b) = self.preps[f].scopes[0].get(name, None) {
                return self.resolve_binding(f, b, depth + 1);
            }
            queue.extend(self.preps[f].stars.iter().filter_map(|s| self.parsed_at(s)));
        }
        None
    }

    fn resolve_binding(&self, file: usize, binding: &Binding, depth: usize) -> Option<Target> {
        match binding {
            Binding::Def(d) => Some(Target::Def(file, *d)),
            Binding::Module(loc) => Some(Target::Module(loc.clone())),
            Binding::From { module, name } => self.module_attr(module, name, depth + 1),
            Binding::External => None,
            Binding::Instance { callee, pos } => {
                let r = RawRef { chain: callee.clone(), scope: None, pos: *pos, line: 0, call_statement: None };
                let (f, d) = self.resolve_chain(file, &r, depth + 1)?;
                let class = &self.files[f].defs[d];
                // The whole chain must name the class (`mod.Client`, or an imported alias),
                // not a class on the way to something unresolved (`Client.create`).
                let whole = !callee.contains('.') || callee.rsplit('.').next() == Some(class.def.name.as_str());
                (class.is_class() && whole).then_some(Target::Instance(f, d))
            }
        }
    }

    /// `module.name`: a name of the module, or one of its submodules.
    fn module_attr(&self, loc: &str, name: &str, depth: usize) -> Option<Target> {
        if let Some(t) = self.parsed_at(loc).and_then(|f| self.resolve_in_module(f, name, depth + 1)) {
            return Some(t);
        }
        self.map.child(loc, name).map(Target::Module)
    }

    /// A bare name used in `scope` of `file` at byte `pos`.
    fn resolve_name(&self, file: usize, scope: Option<usize>, name: &str, pos: usize, depth: usize) -> Option<Target> {
        let f = &self.files[file];
        let prep = &self.preps[file];
        let mut cur = scope;
        let mut direct = true;
        loop {
            let at = direct.then_some(pos);
            let Some(d) = cur else {
                if let Some(b) = prep.scopes[0].get(name, at) {
                    return self.resolve_binding(file, b, depth);
                }
                return self.resolve_star(file, name, depth);
            };
            let def = &f.defs[d];
            if def.is_class() {
                if let Some(b) = prep.scopes[d + 1].get(name, at).filter(|_| direct) {
                    return self.resolve_binding(file, b, depth);
                }
            } else {
                if let Some(b) = prep.scopes[d + 1].get(name, at) {
                    return self.resolve_binding(file, b, depth);
                }
                if def.locals.contains(name) {
                    let first = def.def.signature.parameters.first().filter(|p| {
                        matches!(p.kind, ParameterKind::PositionalOnly | ParameterKind::PositionalOrKeyword)
                    });
                    let is_static = def.def.signature.decorators.iter().any(|d| d == "staticmethod");
                    if def.def.kind == DefinitionKind::Method && !is_static && first.is_some_and(|p| p.name == name) {
                        return def.parent.map(|c| Target::Instance(file, c));
                    }
                    return None;
                }
            }
            cur = def.parent;
            direct = false;
        }
    }

    /// Member `name` of a class: defined in its body, or inherited from a repository base
    /// (breadth-first over the repository ancestors, each class once).
    fn class_member(&self, file: usize, class: usize, name: &str, depth: usize) -> Option<Target> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([(file, class)]);
        while let Some((f, c)) = queue.pop_front() {
            if !seen.insert((f, c)) {
                continue;
            }
            if let Some(t) =
                self.preps[f].scopes[c + 1].get(name, None).and_then(|b| self.resolve_binding(f, b, depth + 1))
            {
                return Some(t);
            }
            let bases = self.files[f].defs[c].load_refs.iter().filter(|(_, role)| *role == LoadRole::BaseClass);
            for (r, _) in bases {
                if let Some((bf, bd)) =
                    self.resolve_chain(f, r, depth + 1).filter(|&(bf, bd)| self.files[bf].defs[bd].is_class())
                {
                    queue.push_back((bf, bd));
                }
            }
        }
        None
    }

    /// The definition a use names: the deepest definition along `a.b.c` that resolves.
    fn resolve_chain(&self, file: usize, r: &RawRef, depth: usize) -> Option<(usize, usize)> {
        if depth > MAX_DEPTH {
            return None;
        }
        if r.chain.is_empty() {
            return None;
        }
        let mut parts = r.chain.split('.');
        let first = parts.next()?;
        let mut t = self.resolve_name(file, r.scope, first, r.pos, depth)?;
        let mut best = match t {
            Target::Def(f, d) => Some((f, d)),
            _ => None,
        };
        for part in parts {
            let next = match &t {
                Target::Def(f, d) if self.files[*f].defs[*d].is_class() => self.class_member(*f, *d, part, depth + 1),
                Target::Def(..) => None,
                Target::Instance(f, d) => self.class_member(*f, *d, part, depth + 1),
                Target::Module(loc) => self.module_attr(loc, part, depth + 1),
            };
            let Some(next) = next else { break };
            if let Target::Def(f, d) = next {
                best = Some((f, d));
            }
            t = next;
        }
        best
    }

    /// The calls of definition `raw` (of file `file`) whose value is discarded, for each
    /// callee every use of which in its body is such a call: a callee that resolves (to a
    /// definition of the chain's last name), or else an attribute name none of whose uses
    /// there resolves (`alg.check_key_length(key)`). In source order.
    fn discarded_calls(&self, file: usize, raw: &super::parse::RawDef) -> Vec<DiscardedCall> {
        if raw.is_class() {
            return Vec::new();
        }
        // Callee -> (every use a discarded call, those calls).
        let mut by_callee: BTreeMap<(Option<String>, &str), Uses> = BTreeMap::new();
        for r in &raw.body_refs {
            let name = r.chain.rsplit('.').next().unwrap_or(&r.chain);
            let key = match self.resolve_chain(file, r, 0) {
                Some((tf, td)) => {
                    let def = &self.files[tf].defs[td].def;
                    // `self.helper.run()` resolving to `helper` uses `helper`, not a call of it.
                    let called = def.name == name;
                    let e = by_callee.entry((Some(def.id.clone()), "")).or_insert((true, Vec::new()));
                    match r.call_statement.filter(|_| called) {
                        Some(span) => e.1.push(span),
                        None => e.0 = false,
                    }
                    continue;
                }
                None if r.chain.contains('.') => (None, name),
                None => continue,
            };
            let e = by_callee.entry(key).or_insert((true, Vec::new()));
            match r.call_statement {
                Some(span) => e.1.push(span),
                None => e.0 = false,
            }
        }
        // Definitions named in `span` and nowhere else in this body (other than the callee).
        let names_only_in = |span: Span, callee: &Option<String>| -> Vec<String> {
            let (mut inside, mut outside) = (BTreeSet::new(), BTreeSet::new());
            for r in &raw.body_refs {
                let Some((tf, td)) = self.resolve_chain(file, r, 0) else { continue };
                let id = &self.files[tf].defs[td].def.id;
                if span.start_byte <= r.pos && r.pos < span.end_byte {
                    inside.insert(id.clone());
                } else {
                    outside.insert(id.clone());
                }
            }
            inside.into_iter().filter(|id| !outside.contains(id) && Some(id) != callee.as_ref()).collect()
        };
        let mut out: Vec<DiscardedCall> = Vec::new();
        for ((target, name), (all, spans)) in by_callee {
            if !all {
                continue;
            }
            let name = match &target {
                Some(t) => self.name_of(t).unwrap_or(name).to_string(),
                None => name.to_string(),
            };
            for (span, tested) in spans {
                out.push(DiscardedCall {
                    caller: raw.def.id.clone(),
                    target: target.clone(),
                    name: name.clone(),
                    span,
                    tested,
                    names: names_only_in(span, &target),
                });
            }
        }
        out.sort_by_key(|c| c.span);
        out
    }

    /// The last part of a definition id's qualified name (`f.py::A.m` -> `m`).
    fn name_of<'s>(&self, id: &'s str) -> Option<&'s str> {
        let qual = id.split_once("::")?.1;
        qual.rsplit('.').next()
    }

    /// The finished index entries of parsed file `file`.
    pub(super) fn link_file(&self, file: usize) -> (FileIndex, Vec<Definition>) {
        let f = &self.files[file];
        let prep = &self.preps[file];
        let resolve = |r: &RawRef| self.resolve_chain(file, r, 0).map(|t| self.id(t));

        let definitions: Vec<Definition> = f
            .defs
            .iter()
            .map(|raw| {
                let mut def = raw.def.clone();
                let refs: BTreeSet<String> = raw.body_refs.iter().filter_map(resolve).collect();
                let loads: BTreeSet<LoadReference> = raw
                    .load_refs
                    .iter()
                    .filter_map(|(r, role)| resolve(r).map(|target| LoadReference { target, role: *role }))
                    .collect();
                def.references = refs.into_iter().collect();
                def.load_references = loads.into_iter().collect();
                def
            })
            .collect();

        let imports = f
            .imports
            .iter()
            .zip(&prep.import_locations)
            .map(|(imp, loc)| {
                let target = |name: &str| -> Option<String> {
                    match self.module_attr(loc.as_deref()?, name, 0)? {
                        Target::Def(tf, td) => Some(self.id((tf, td))),
                        _ => None,
                    }
                };
                let names = match &imp.kind {
                    RawImportKind::Plain { .. } => Vec::new(),
                    RawImportKind::From { names, .. } | RawImportKind::Future { names } => names
                        .iter()
                        .map(|n| ImportedName {
                            name: n.name.clone(),
                            alias: n.alias.clone(),
                            span: n.span,
                            target: if n.name == "*" || matches!(imp.kind, RawImportKind::Future { .. }) {
                                None
                            } else {
                                target(&n.name)
                            },
                        })
                        .collect(),
                };
                Import {
                    span: imp.span,
                    module: imp.module.clone(),
                    resolved_path: loc.as_deref().and_then(|l| self.map.file(l)).map(|i| self.all_paths[i].clone()),
                    names,
                    module_level: imp.scope.is_none(),
                }
            })
            .collect();

        let module_refs: BTreeSet<ModuleReference> = f
            .module_refs
            .iter()
            .filter_map(|r| resolve(r).map(|target| ModuleReference { target, line: r.line }))
            .collect();

        let value_bindings: Vec<ValueBinding> = f.bindings.iter().filter_map(|b| self.value_binding(file, b)).collect();
        let discarded_calls: Vec<DiscardedCall> =
            f.defs.iter().flat_map(|raw| self.discarded_calls(file, raw)).collect();

        let mut exported: Vec<String> = Vec::new();
        for name in &f.exports {
            if let Some(Target::Def(tf, td)) = self.resolve_in_module(file, name, 0) {
                let id = self.id((tf, td));
                if !exported.contains(&id) {
                    exported.push(id);
                }
            }
        }

        let index = FileIndex {
            path: f.path.clone(),
            language: Language::Python,
            module: self.map.module_name(&f.path),
            is_test: super::modules::is_test_path(&f.path),
            definitions: definitions.iter().map(|d| d.id.clone()).collect(),
            imports,
            module_references: module_refs.into_iter().collect(),
            exported,
            value_bindings,
            discarded_calls,
            sha256: f.sha256.clone(),
            lines: f.lines,
        };
        (index, definitions)
    }
}

/// The uses, in every file, of the names that value bindings bind.
fn uses_of(files: &[ParsedFile]) -> HashMap<&str, Vec<NameUse<'_>>> {
    let names: HashSet<&str> = files.iter().flat_map(|f| &f.bindings).map(|b| b.name.as_str()).collect();
    let mut out: HashMap<&str, Vec<NameUse>> = HashMap::new();
    if names.is_empty() {
        return out;
    }
    for (file, f) in files.iter().enumerate() {
        let module = f.module_refs.iter().chain(f.bindings.iter().flat_map(|b| &b.refs)).map(|r| (r, None));
        let in_defs =
            f.defs.iter().enumerate().flat_map(|(i, d)| {
                d.body_refs.iter().chain(d.load_refs.iter().map(|(r, _)| r)).map(move |r| (r, Some(i)))
            });
        for (r, owner) in module.chain(in_defs) {
            for (part, name) in r.chain.split('.').enumerate() {
                if let Some(&n) = names.get(name) {
                    out.entry(n).or_default().push(NameUse { file, r, owner, part });
                }
            }
        }
    }
    out
}

/// Resolve a file's imports to locations and build its scopes' binding tables.
fn prepare(f: &ParsedFile, map: &ModuleMap) -> FilePrep {
    let mut scopes: Vec<Scope> = (0..=f.defs.len()).map(|_| Scope::default()).collect();
    let mut stars = Vec::new();
    let scope_index = |s: Option<usize>| s.map_or(0, |d| d + 1);
    for (i, d) in f.defs.iter().enumerate() {
        scopes[scope_index(d.parent)].bind(&d.def.name, d.def.span.end_byte, Binding::Def(i));
    }
    let mut import_locations = Vec::with_capacity(f.imports.len());
    for imp in &f.imports {
        let loc = match imp.kind {
            RawImportKind::Future { .. } => None,
            _ if imp.level > 0 => map.resolve_relative(&f.path, imp.level, &imp.dotted),
            _ => map.resolve_absolute(&f.path, &imp.dotted).map(|(loc, _)| loc),
        };
        let scope = &mut scopes[scope_index(imp.scope)];
        let pos = imp.span.end_byte;
        match &imp.kind {
            RawImportKind::Plain { alias: Some(alias) } => {
                scope.bind(alias, pos, loc.clone().map_or(Binding::External, Binding::Module));
            }
            RawImportKind::Plain { alias: None } => {
                // `import a.b.c` binds `a`.
                let top = imp.dotted.split('.').next().unwrap_or("");
                let top_loc = map.resolve_absolute(&f.path, top).map(|(l, _)| l);
                scope.bind(top, pos, top_loc.map_or(Binding::External, Binding::Module));
            }
            RawImportKind::From { names, wildcard } => {
                for n in names.iter().filter(|n| n.name != "*") {
                    let bound = n.alias.as_deref().unwrap_or(&n.name);
                    let binding = match &loc {
                        Some(module) => Binding::From { module: module.clone(), name: n.name.clone() },
                        None => Binding::External,
                    };
                    scope.bind(bound, pos, binding);
                }
                if let Some(l) = loc.as_ref().filter(|_| *wildcard && imp.scope.is_none()) {
                    stars.push(l.clone());
                }
            }
            RawImportKind::Future { .. } => {}
        }
        import_locations.push(loc);
    }
    // `_obj = Client()` at module level, for a name nothing else there binds.
    let bound: HashSet<String> = scopes[0].names.keys().cloned().collect();
    let mut instances: HashMap<&str, Option<(Box<str>, usize)>> = HashMap::new();
    for b in f.bindings.iter().filter(|b| b.class.is_none() && !b.entry && !bound.contains(&b.name)) {
        let this = b.constructs.clone().map(|c| (c, b.statement.1));
        // Bound twice (or once to something else): no one class is known.
        instances.entry(&b.name).and_modify(|e| *e = None).or_insert(this);
    }
    for (name, (callee, pos)) in instances.into_iter().filter_map(|(n, i)| i.map(|i| (n, i))) {
        scopes[0].bind(name, pos, Binding::Instance { callee, pos });
    }
    for scope in &mut scopes {
        for list in scope.names.values_mut() {
            list.sort_by_key(|(pos, _)| *pos);
        }
    }
    FilePrep { import_locations, scopes, stars }
}
