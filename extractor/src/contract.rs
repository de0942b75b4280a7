//! The interface contract: every extracted object a solver must implement, with its
//! language, path, import path, kind, full signature, docstring, enclosing class and the
//! extracted types its signature uses. Serialized as `contract.json` (versioned, see
//! `docs/formats.md`) and rendered as the "Interface" section of the problem statement.
//!
//! Shape: one entry per *top object* — an extracted definition whose parent is not
//! extracted — in file and source order. An extracted class carries its methods (and nested
//! classes) as `members`. Extracted methods of a class that stays are grouped under an
//! entry for that class with `existing: true` (it is context, not work). An extracted
//! function nested in a function that stays names that function in `enclosing_function`
//! and has no import path. Rust impl blocks are looked through: a method is listed under
//! its type, naming the type (`enclosing_class`), the trait (`enclosing_trait`) and the
//! impl header (`enclosing_impl`), and is imported through the type.

use std::collections::{BTreeMap, BTreeSet};

use carve_formats::contract as format;
use carve_languages::index::{Definition, DefinitionIndex, DefinitionKind, NodeId};
use carve_languages::syntax::{ContractSyntax, ImportStyle, MethodPlacement};
use carve_languages::{Language, Level2Packaging, support};
use serde::{Deserialize, Serialize};

use carve_formats::contract::{Parameter, Signature};

/// Version of `contract.json` (`carve_formats::contract::VERSION`).
pub const CONTRACT_VERSION: u32 = format::VERSION;

/// One object of a contract, its language and kind as `carve_languages` names them.
pub type ContractObject = format::ContractObject<Language, DefinitionKind>;

/// `contract.json` (the format is `carve_formats::contract::Contract`, here with
/// `carve_languages`' `Language` and `DefinitionKind`), with what a task asks of it that needs
/// the language's support: whether a Level 2 task can be made, and its Level 2 view. A
/// newtype (serialized as the format itself, read through `Deref`) so that these stay methods
/// of the contract; the format's fields are the inner value's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Contract(pub format::Contract<Language, DefinitionKind>);

impl std::ops::Deref for Contract {
    type Target = format::Contract<Language, DefinitionKind>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Contract {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Contract {
    /// Whether a from-scratch (Level 2) task can ask for every object: all are module-level
    /// definitions (no functions nested in others, no methods of classes that stay unless the
    /// language's package takes whole types) and no two of them share a name (one
    /// `agent_code` namespace holds them all).
    pub fn level2_supported(&self) -> bool {
        self.level2_blockers().is_empty()
    }

    /// Why a from-scratch package cannot provide every object of the contract, one phrase
    /// each, in contract order; empty when it can ([`Self::level2_supported`]).
    pub fn level2_blockers(&self) -> Vec<String> {
        // Only languages with Level 2 packaging have solution packages.
        if support(self.language).level2().is_none() {
            return vec![format!("{} has no Level 2 packaging", self.language)];
        }
        let mut out: Vec<String> = self
            .objects
            .iter()
            .filter(|o| !self.level2_object(o) && !self.nested_in_whole(o))
            .map(|o| match (&o.enclosing_function, &o.enclosing_class) {
                (Some(f), _) => format!("`{}` is nested in `{f}`, which stays", o.qualname),
                (None, Some(c)) => format!("`{}` is nested in the class `{c}`", o.qualname),
                (None, None) => {
                    let methods: Vec<String> = o.members.iter().map(|m| format!("`{}`", m.name)).collect();
                    format!("{} of `{}`, a class that stays", methods.join(", "), o.name)
                }
            })
            .collect();
        let mut homes: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (module, name) in self.level2_names_ref() {
            homes.entry(name).or_default().push(module);
        }
        for (name, modules) in homes.into_iter().filter(|(_, m)| m.len() > 1) {
            out.push(format!("`{name}` names objects of {} (one package namespace holds one)", modules.join(" and ")));
        }
        out
    }

    /// [`Self::level2_names`], borrowed and unsorted.
    fn level2_names_ref(&self) -> BTreeSet<(&str, &str)> {
        self.objects
            .iter()
            .filter(|o| self.level2_object(o))
            .map(|o| (o.module.as_deref().unwrap_or(&o.path), o.name.as_str()))
            .collect()
    }

    /// A module-level object a Level 2 package can hold: not nested, and not a class that
    /// stays unless the language's package takes whole types.
    fn level2_object(&self, o: &ContractObject) -> bool {
        let whole = support(self.language).level2().is_some_and(|l2| l2.takes_whole_types());
        (!o.existing || whole) && o.enclosing_function.is_none() && o.enclosing_class.is_none()
    }

    /// A class nested (at any depth) in a module-level class the package holds, when the
    /// package takes whole types: the package's copy of that class has it (marshmallow's
    /// `URL.RegexMemoizer`, with methods of the feature, inside `URL`, taken whole).
    fn nested_in_whole(&self, o: &ContractObject) -> bool {
        let whole = support(self.language).level2().is_some_and(|l2| l2.takes_whole_types());
        let Some(class) = o.enclosing_class.as_deref().filter(|_| whole && o.enclosing_function.is_none()) else {
            return false;
        };
        let top = class.split('.').next().unwrap_or(class);
        self.objects.iter().any(|t| t.qualname == top && self.level2_object(t))
    }

    /// `(module, name)` of every module-level object (the path for a language without module
    /// names), sorted: what `agent_code` must expose.
    pub fn level2_names(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self
            .objects
            .iter()
            .filter(|o| self.level2_object(o))
            // A language without module names (TypeScript) is imported by path.
            .map(|o| (o.module.clone().unwrap_or_else(|| o.path.clone()), o.name.clone()))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The contract as a Level 2 task sees it: module-level objects imported from `package`,
    /// decorators of the original project dropped (builtin ones such as `property` kept).
    pub fn for_level2(&self, package: &str) -> Contract {
        let mut c = self.clone();
        c.objects.retain(|o| self.level2_object(o) || self.nested_in_whole(o));
        if let Some(l2) = support(self.language).level2() {
            let modules: BTreeSet<String> = c.objects.iter().filter_map(|o| o.module.clone()).collect();
            for o in &mut c.objects {
                retarget(o, l2, package, &modules);
            }
        }
        c
    }
}

fn retarget(o: &mut ContractObject, l2: &dyn Level2Packaging, package: &str, modules: &BTreeSet<String>) {
    let top = o.access.split('.').next().unwrap_or(&o.access).to_string();
    o.import_path = Some(l2.import_line_of(package, &top, o.module.as_deref(), modules));
    o.signature.decorators.retain(|d| l2.keeps_decorator(d));
    for m in &mut o.members {
        retarget(m, l2, package, modules);
    }
}

/// How `d`'s language writes contracts.
fn syntax(d: &Definition) -> &'static ContractSyntax {
    support(d.language).contract_syntax()
}

fn is_type(kind: DefinitionKind) -> bool {
    matches!(
        kind,
        DefinitionKind::Class
            | DefinitionKind::Struct
            | DefinitionKind::Enum
            | DefinitionKind::Trait
            | DefinitionKind::Interface
            | DefinitionKind::TypeAlias
    )
}

/// A definition whose members are listed with it: a type, a module/namespace (Rust `mod`,
/// TypeScript `namespace`) or a Rust impl block.
fn is_container(kind: DefinitionKind) -> bool {
    is_type(kind) || matches!(kind, DefinitionKind::Module | DefinitionKind::Impl)
}

/// The trait of a Rust impl header (`fmt::Display` in `impl<S> fmt::Display for R<S>`), as
/// written; `None` for an inherent impl.
fn impl_trait(header: &str) -> Option<String> {
    let rest = header.trim_start();
    let rest = rest.strip_prefix("unsafe").map(str::trim_start).unwrap_or(rest);
    let mut rest = rest.strip_prefix("impl")?;
    // Skip the impl's own generics.
    if rest.starts_with('<') {
        let mut depth = 0usize;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' if rest[..i].ends_with('-') => {}
                '>' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            None
        })?;
        rest = &rest[end..];
    }
    // The word `for` outside brackets, before any `where` clause.
    let mut depth = 0i32;
    for (i, c) in rest.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if rest[..i].ends_with('-') => {}
            '>' | ')' | ']' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                let next = rest[i..].trim_start();
                let word = next.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                match word {
                    "where" => return None,
                    "for" if !rest[..i].trim().is_empty() => return Some(rest[..i].trim().to_string()),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    None
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty())
}

struct Builder<'a> {
    index: &'a DefinitionIndex,
    extracted: &'a BTreeSet<NodeId>,
    /// Extracted type names → ids.
    types: BTreeMap<&'a str, Vec<&'a str>>,
}

impl<'a> Builder<'a> {
    fn module(&self, d: &Definition) -> Option<String> {
        self.index.files.get(&d.path).and_then(|f| f.module.clone())
    }

    fn uses_types(&self, d: &Definition) -> Vec<NodeId> {
        let sig = &d.signature;
        let texts = sig
            .parameters
            .iter()
            .filter_map(|p| p.annotation.as_deref())
            .chain(sig.returns.as_deref())
            .chain(sig.bases.iter().map(String::as_str));
        // Other languages: the whole signature as written (overloads, generic constraints,
        // an interface's or type alias's members).
        let written = syntax(d)
            .typed_signature_text
            .then_some(sig.text.as_str())
            .into_iter()
            .chain(sig.type_parameters.as_deref());
        let texts = texts.chain(written);
        let mut out: BTreeSet<NodeId> = BTreeSet::new();
        for t in texts {
            for ident in identifiers(t) {
                for id in self.types.get(ident).into_iter().flatten() {
                    if *id != d.id {
                        out.insert(id.to_string());
                    }
                }
            }
        }
        out.into_iter().collect()
    }

    /// The type a Rust impl block is for: its parent when that resolves, else the type named
    /// in its qualified name (`Circle` of `Circle.<From<u8>>`).
    fn impl_type(&self, imp: &Definition) -> String {
        match imp.parent.as_deref().and_then(|p| self.index.definitions.get(p)) {
            Some(t) => t.qualname.clone(),
            None => imp.qualname.rsplit_once(".<").map_or(imp.qualname.as_str(), |(t, _)| t).to_string(),
        }
    }

    /// The trait a Rust impl block implements, as written (`fmt::Display`).
    fn impl_trait_of(imp: &Definition) -> Option<String> {
        impl_trait(&imp.signature.text).or_else(|| {
            let name = imp.name.strip_prefix('<')?.strip_suffix('>')?;
            (name != "impl").then(|| name.to_string())
        })
    }

    /// For `ImportStyle::UsePath` languages (Rust): the definitions from the outermost item
    /// below the file's module down to `d` (inline modules before it are left out), and
    /// those inline modules' names.
    fn use_path_chain<'b>(&'b self, d: &'b Definition) -> (Vec<&'b str>, Vec<&'b Definition>) {
        let mut chain = vec![d];
        while let Some(p) = chain.last().and_then(|c| c.parent.as_deref()).and_then(|p| self.index.definitions.get(p)) {
            chain.push(p);
        }
        chain.reverse();
        let modules = chain.iter().take_while(|c| c.kind == DefinitionKind::Module && c.id != d.id).count();
        let names = chain[..modules].iter().map(|m| m.name.as_str()).collect();
        (names, chain[modules..].to_vec())
    }

    /// The name the outermost item of a chain is imported by (an impl block whose type
    /// does not resolve stands for that type).
    fn use_path_head(&self, head: &Definition) -> String {
        match head.kind {
            DefinitionKind::Impl => {
                let t = self.impl_type(head);
                t.rsplit('.').next().unwrap_or(&t).to_string()
            }
            _ => head.name.clone(),
        }
    }

    /// The `use` path of a `UsePath` definition below its file's module: inline modules, then
    /// the outermost item (a method is reached through its type).
    fn use_path_item(&self, d: &Definition) -> String {
        let (mut segments, items) = self.use_path_chain(d);
        let head = items.first().map(|h| self.use_path_head(h)).unwrap_or_default();
        segments.push(&head);
        segments.join("::")
    }

    /// How `UsePath` code names `d` once its `use` path is imported: `convert`, `Report::new`,
    /// `<Circle as Shape>::area` for a trait impl's method.
    fn use_path_access(&self, d: &Definition) -> String {
        let (_, items) = self.use_path_chain(d);
        let Some((head, rest)) = items.split_first() else { return d.name.clone() };
        let mut access = self.use_path_head(head);
        for item in rest {
            match item.kind {
                DefinitionKind::Impl => {
                    if let Some(t) = Self::impl_trait_of(item) {
                        access = format!("<{access} as {t}>");
                    }
                }
                _ => access = format!("{access}::{}", item.name),
            }
        }
        access
    }

    fn object(&self, d: &Definition, existing: bool) -> ContractObject {
        let module = self.module(d);
        let parent = d.parent.as_deref().and_then(|p| self.index.definitions.get(p));
        let (enclosing_class, enclosing_function) = match parent {
            // A Rust method belongs to the type its impl block is for.
            Some(p) if p.kind == DefinitionKind::Impl => (Some(self.impl_type(p)), None),
            Some(p) if is_container(p.kind) => (Some(p.qualname.clone()), None),
            Some(p) => (None, Some(p.qualname.clone())),
            None => (None, None),
        };
        let (enclosing_trait, enclosing_impl) = match parent {
            Some(p) if p.kind == DefinitionKind::Impl => (Self::impl_trait_of(p), Some(p.signature.text.clone())),
            _ => (None, None),
        };
        let nested_in_function = self.in_function(d);
        let top = d.qualname.split('.').next().unwrap_or(&d.qualname);
        let import_path = match (&module, nested_in_function) {
            (Some(m), false) => Some(match syntax(d).import {
                ImportStyle::QuotedPackage => format!("import \"{m}\""),
                ImportStyle::UsePath => format!("use {m}::{};", self.use_path_item(d)),
                ImportStyle::FromImport | ImportStyle::EsModule => format!("from {m} import {top}"),
            }),
            (None, false) if syntax(d).import == ImportStyle::EsModule => self.es_import(d, top),
            _ => None,
        };
        let members = if is_container(d.kind) && !existing {
            self.index
                .children(&d.id)
                .chain(self.methods_elsewhere(d))
                // A Rust type's methods are listed with it, each naming its impl block.
                .flat_map(|c| -> Box<dyn Iterator<Item = &Definition> + '_> {
                    if c.kind == DefinitionKind::Impl && d.kind != DefinitionKind::Impl {
                        Box::new(self.index.children(&c.id))
                    } else {
                        Box::new(std::iter::once(c))
                    }
                })
                .filter(|c| {
                    matches!(c.kind, DefinitionKind::Method | DefinitionKind::Field)
                        || is_type(c.kind)
                        || (d.kind == DefinitionKind::Module
                            && matches!(c.kind, DefinitionKind::Function | DefinitionKind::Module))
                })
                .map(|c| self.object(c, false))
                .collect()
        } else {
            Vec::new()
        };
        let access =
            if syntax(d).import == ImportStyle::UsePath { self.use_path_access(d) } else { d.qualname.clone() };
        let mut o = ContractObject::new(
            d.id.clone(),
            d.language,
            d.path.clone(),
            d.kind,
            d.name.clone(),
            d.qualname.clone(),
            access,
            contract_signature(&d.signature),
        );
        o.module = module;
        o.import_path = import_path;
        o.docstring = d.docstring.clone();
        o.enclosing_class = enclosing_class;
        o.enclosing_trait = enclosing_trait;
        o.enclosing_impl = enclosing_impl;
        o.enclosing_function = enclosing_function;
        o.existing = existing;
        o.uses_types = if existing { Vec::new() } else { self.uses_types(d) };
        o.members = members;
        o
    }

    /// `import { Top } from "./path/of/module";` (from the repository root) for an
    /// exported top-level TypeScript/JavaScript definition; `None` when it is not exported.
    fn es_import(&self, d: &Definition, top: &str) -> Option<String> {
        let file = self.index.files.get(&d.path)?;
        let top_id =
            file.definitions.iter().find(|id| self.index.definitions.get(*id).is_some_and(|t| t.qualname == top))?;
        if !file.exported.contains(top_id) {
            return None;
        }
        let top_def = self.index.definitions.get(top_id)?;
        let module = d.path.rsplit_once('.').map_or(d.path.as_str(), |(stem, _)| stem);
        let module = module.strip_suffix(".d").unwrap_or(module);
        let module = module.strip_suffix("/index").unwrap_or(module);
        let default = top_def.signature.text.lines().next().is_some_and(|l| l.starts_with("export default"));
        Some(if default {
            format!("import {top} from \"./{module}\";")
        } else {
            format!("import {{ {top} }} from \"./{module}\";")
        })
    }

    /// Go methods and Rust impl blocks declared in another file than their type
    /// (`children` only looks in the parent's file), in id order.
    fn methods_elsewhere(&self, d: &'a Definition) -> impl Iterator<Item = &'a Definition> + 'a {
        let apart = syntax(d).methods != MethodPlacement::InBody;
        self.index
            .definitions
            .values()
            .filter(move |c| apart && c.path != d.path && c.parent.as_deref() == Some(d.id.as_str()))
    }

    /// The entry an extracted definition is listed under when its parent stays: the parent,
    /// except that a Rust method is listed under its type rather than its impl block.
    fn owner(&self, d: &Definition) -> Option<&'a Definition> {
        let p = self.index.definitions.get(d.parent.as_deref()?)?;
        if p.kind == DefinitionKind::Impl
            && d.kind != DefinitionKind::Impl
            && let Some(t) = p.parent.as_deref().and_then(|t| self.index.definitions.get(t))
        {
            return Some(t);
        }
        Some(p)
    }

    /// Whether a function is somewhere up the parent chain.
    fn in_function(&self, d: &Definition) -> bool {
        let mut cur = d.parent.as_deref();
        let mut hops = 0;
        while let Some(p) = cur.and_then(|p| self.index.definitions.get(p)) {
            if !is_container(p.kind) {
                return true;
            }
            hops += 1;
            if hops > 64 {
                break;
            }
            cur = p.parent.as_deref();
        }
        false
    }
}

fn source_order(index: &DefinitionIndex, id: &str) -> (String, usize, String) {
    match index.definitions.get(id) {
        Some(d) => (d.path.clone(), d.span.start_byte, d.id.clone()),
        None => (String::new(), 0, id.to_string()),
    }
}

/// The contract for `extracted` (ids missing from the index are ignored).
pub fn build_contract(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> Contract {
    let mut types: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for id in extracted {
        if let Some(d) = index.definitions.get(id).filter(|d| is_type(d.kind)) {
            types.entry(d.name.as_str()).or_default().push(d.id.as_str());
        }
    }
    let b = Builder { index, extracted, types };
    // Top objects: neither the parent nor the owner (a Rust method's type) is extracted.
    let mut tops: Vec<&Definition> = extracted
        .iter()
        .filter_map(|id| index.definitions.get(id))
        .filter(|d| d.parent.as_ref().is_none_or(|p| !b.extracted.contains(p)))
        .filter(|d| b.owner(d).is_none_or(|o| !b.extracted.contains(&o.id)))
        .collect();
    tops.sort_by_key(|d| source_order(index, &d.id));

    let mut objects: Vec<ContractObject> = Vec::new();
    // Existing classes, by id → position in `objects`.
    let mut existing: BTreeMap<NodeId, usize> = BTreeMap::new();
    for d in tops {
        match b.owner(d) {
            Some(p) if is_container(p.kind) => {
                let pos = *existing.entry(p.id.clone()).or_insert_with(|| {
                    objects.push(b.object(p, true));
                    objects.len() - 1
                });
                let member = b.object(d, false);
                objects[pos].members.push(member);
            }
            _ => objects.push(b.object(d, false)),
        }
    }
    // An existing class none of whose methods stays is a whole class to implement.
    for (id, pos) in &existing {
        let mut methods = index.children(id).filter(|c| c.kind == DefinitionKind::Method).peekable();
        objects[*pos].all_methods = methods.peek().is_some() && methods.all(|m| extracted.contains(&m.id));
    }
    let files: BTreeSet<String> =
        extracted.iter().filter_map(|id| index.definitions.get(id)).map(|d| d.path.clone()).collect();
    let language = objects
        .first()
        .map(|o| o.language)
        .or_else(|| index.files.values().next().map(|f| f.language))
        // An empty index: no objects to render, any language will do.
        .unwrap_or(Language::ALL[0]);
    let whole_modules = files
        .iter()
        .filter(|f| {
            index.files.get(*f).is_some_and(|fi| {
                !fi.is_test && !fi.definitions.is_empty() && fi.definitions.iter().all(|d| extracted.contains(d))
            })
        })
        .cloned()
        .collect();
    let mut contract = format::Contract::new(language, files.into_iter().collect(), objects);
    contract.whole_modules = whole_modules;
    Contract(contract)
}

impl Contract {
    /// Complete the contract with `ids`, definitions the hidden tests name that it does not
    /// show yet (a function nested in an extracted function, such as the `decorator` a
    /// decorator factory returns): each is listed, with its signature, among the members of
    /// the entry of its nearest ancestor the contract lists, else as an object of its own.
    /// Ids already listed or missing from the index are ignored.
    pub fn add_needed(&mut self, index: &DefinitionIndex, extracted: &BTreeSet<NodeId>, ids: &BTreeSet<NodeId>) {
        let b = Builder { index, extracted, types: BTreeMap::new() };
        for id in ids {
            let Some(d) = index.definitions.get(id) else { continue };
            if find_object(&mut self.0.objects, id).is_some() {
                continue;
            }
            let mut ancestor = d.parent.clone();
            let mut hops = 0;
            let owner = loop {
                let Some(a) = ancestor.filter(|_| hops < 64) else { break None };
                if find_object(&mut self.0.objects, &a).is_some() {
                    break Some(a);
                }
                ancestor = index.definitions.get(&a).and_then(|p| p.parent.clone());
                hops += 1;
            };
            let object = b.object(d, false);
            match owner.and_then(|a| find_object(&mut self.0.objects, &a)) {
                Some(o) => o.members.push(object),
                None => self.0.objects.push(object),
            }
        }
    }
}

/// The object or member with node id `id`, at any depth.
fn find_object<'o>(objects: &'o mut [ContractObject], id: &str) -> Option<&'o mut ContractObject> {
    for o in objects {
        if o.id == id {
            return Some(o);
        }
        if let Some(m) = find_object(&mut o.members, id) {
            return Some(m);
        }
    }
    None
}

/// The index's signature as the contract writes it.
fn contract_signature(s: &carve_languages::index::Signature) -> Signature {
    let parameters = s
        .parameters
        .iter()
        .map(|p| Parameter::new(p.name.clone(), p.kind, p.annotation.clone(), p.default.clone()))
        .collect();
    let mut out = Signature::new(s.text.clone(), parameters);
    out.returns = s.returns.clone();
    out.is_async = s.is_async;
    out.decorators = s.decorators.clone();
    out.bases = s.bases.clone();
    out.receiver = s.receiver.clone();
    out.type_parameters = s.type_parameters.clone();
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use carve_languages::index::{FileIndex, Parameter, ParameterKind, Signature, Span};

    fn param(name: &str, kind: ParameterKind, annotation: Option<&str>, default: Option<&str>) -> Parameter {
        Parameter { name: name.into(), kind, annotation: annotation.map(Into::into), default: default.map(Into::into) }
    }

    fn def(
        path: &str,
        qualname: &str,
        kind: DefinitionKind,
        line: usize,
        signature: Signature,
        doc: Option<&str>,
    ) -> Definition {
        let parent = qualname.rsplit_once('.').map(|(p, _)| format!("{path}::{p}"));
        Definition {
            id: format!("{path}::{qualname}"),
            language: Language::Python,
            path: path.into(),
            qualname: qualname.into(),
            name: qualname.rsplit('.').next().unwrap_or(qualname).into(),
            kind,
            span: Span { start_byte: line * 100, end_byte: line * 100 + 50, start_line: line, end_line: line + 1 },
            def_line: line,
            body: None,
            signature,
            docstring: doc.map(Into::into),
            parent,
            is_test: false,
            references: Vec::new(),
            load_references: Vec::new(),
        }
    }

    /// A hand-built index of `inventory/`: models (Item), pricing (functions of every
    /// parameter kind), cart (a class that stays with an extracted method, a nested function).
    pub(crate) fn inventory_index() -> DefinitionIndex {
        use DefinitionKind::*;
        use ParameterKind::*;
        let defs = vec![
            def(
                "inventory/models.py",
                "Item",
                Class,
                3,
                Signature { text: "class Item(Base)".into(), bases: vec!["Base".into()], decorators: vec!["dataclass".into()], ..Default::default() },
                Some("A stock item."),
            ),
            def(
                "inventory/models.py",
                "Item.price_with_tax",
                Method,
                8,
                Signature {
                    text: "def price_with_tax(self, rate: float = 0.2) -> float".into(),
                    parameters: vec![param("self", PositionalOrKeyword, None, None), param("rate", PositionalOrKeyword, Some("float"), Some("0.2"))],
                    returns: Some("float".into()),
                    ..Default::default()
                },
                None,
            ),
            def(
                "inventory/pricing.py",
                "total_value",
                Function,
                10,
                Signature {
                    text: "def total_value(items: list[Item], /, scale=1, *extra: Item, discount: float = 0.0, **options) -> float".into(),
                    parameters: vec![
                        param("items", PositionalOnly, Some("list[Item]"), None),
                        param("scale", PositionalOrKeyword, None, Some("1")),
                        param("extra", VarPositional, Some("Item"), None),
                        param("discount", KeywordOnly, Some("float"), Some("0.0")),
                        param("options", VarKeyword, None, None),
                    ],
                    returns: Some("float".into()),
                    decorators: vec!["register(\"total\")".into(), "functools.cache".into()],
                    ..Default::default()
                },
                Some("Total value of the items.\n\nThe discount applies after scaling."),
            ),
            def(
                "inventory/pricing.py",
                "refresh",
                Function,
                20,
                Signature { text: "async def refresh(*, timeout: int = 5) -> None".into(), is_async: true, returns: Some("None".into()), parameters: vec![param("timeout", KeywordOnly, Some("int"), Some("5"))], ..Default::default() },
                None,
            ),
            def("inventory/cart.py", "Cart", Class, 5, Signature { text: "class Cart".into(), ..Default::default() }, Some("A cart.")),
            def(
                "inventory/cart.py",
                "Cart.add",
                Method,
                9,
                Signature { text: "def add(self, item)".into(), parameters: vec![param("self", PositionalOrKeyword, None, None), param("item", PositionalOrKeyword, None, None)], ..Default::default() },
                None,
            ),
            def(
                "inventory/cart.py",
                "Cart.total",
                Method,
                12,
                Signature {
                    text: "def total(self) -> float".into(),
                    parameters: vec![param("self", PositionalOrKeyword, None, None)],
                    returns: Some("float".into()),
                    ..Default::default()
                },
                Some("Sum of the cart."),
            ),
            def("inventory/cart.py", "report", Function, 30, Signature { text: "def report(cart)".into(), ..Default::default() }, None),
            def("inventory/cart.py", "report.fmt", Function, 31, Signature { text: "def fmt(x: Item) -> str".into(), returns: Some("str".into()), parameters: vec![param("x", PositionalOrKeyword, Some("Item"), None)], ..Default::default() }, None),
        ];
        let mut index = DefinitionIndex::default();
        for d in defs {
            let f = index.files.entry(d.path.clone()).or_insert_with(|| FileIndex {
                path: d.path.clone(),
                language: Language::Python,
                module: Some(d.path.trim_end_matches(".py").replace('/', ".")),
                is_test: false,
                definitions: Vec::new(),
                imports: Vec::new(),
                module_references: Vec::new(),
                exported: Vec::new(),
                value_bindings: Vec::new(),
                discarded_calls: Vec::new(),
                sha256: String::new(),
                lines: 40,
            });
            f.definitions.push(d.id.clone());
            index.definitions.insert(d.id.clone(), d);
        }
        index
    }

    pub(crate) fn inventory_extracted() -> BTreeSet<NodeId> {
        [
            "inventory/models.py::Item",
            "inventory/models.py::Item.price_with_tax",
            "inventory/pricing.py::total_value",
            "inventory/pricing.py::refresh",
            "inventory/cart.py::Cart.total",
            "inventory/cart.py::report.fmt",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    #[test]
    fn contract_covers_every_signature_part() {
        let contract = build_contract(&inventory_index(), &inventory_extracted());
        insta::assert_json_snapshot!(contract);
    }

    #[test]
    fn the_trait_of_a_rust_impl_header_as_written() {
        assert_eq!(
            impl_trait("impl<S: Shape + ?Sized> fmt::Display for Report<'_, S>").as_deref(),
            Some("fmt::Display")
        );
        assert_eq!(impl_trait("impl<'a, S: Shape + ?Sized> Report<'a, S>"), None);
        assert_eq!(impl_trait("impl<F: Fn(u8) -> u8> From<F> for Op<F>").as_deref(), Some("From<F>"));
        assert_eq!(impl_trait("unsafe impl Send for Raw").as_deref(), Some("Send"));
        assert_eq!(impl_trait("impl<T> Wrap<T>\nwhere\n    T: for<'a> Fn(&'a u8),"), None);
        assert_eq!(impl_trait("impl<T> Iterator for Iter<T>\nwhere\n    T: Clone,").as_deref(), Some("Iterator"));
        assert_eq!(impl_trait("fn not_an_impl()"), None);
    }

    #[test]
    fn contract_is_deterministic_and_round_trips() {
        let a = serde_json::to_string(&build_contract(&inventory_index(), &inventory_extracted())).unwrap();
        let b = serde_json::to_string(&build_contract(&inventory_index(), &inventory_extracted())).unwrap();
        assert_eq!(a, b);
        let back: Contract = serde_json::from_str(&a).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), a);
    }

    /// Python's package takes a class that stays whole, and a class nested in it with it:
    /// `URL.Memo` (methods of the feature) needs no package name of its own when `URL` (one
    /// too) is taken whole; nested in a class the package does not hold, it blocks Level 2.
    #[test]
    fn a_class_nested_in_a_class_taken_whole_goes_with_it() {
        let src = "class URL:\n    class Memo:\n        def get(self, key):\n            return key\n\n    \
                   def check(self, v):\n        return v\n\n    def other(self):\n        return 1\n\n\
                   class Other:\n    class Inner:\n        def run(self):\n            return 2\n";
        let index = DefinitionIndex::from_sources(&[("pkg/validate.py".to_string(), src.as_bytes().to_vec())]);
        let ids =
            |names: &[&str]| -> BTreeSet<NodeId> { names.iter().map(|n| format!("pkg/validate.py::{n}")).collect() };
        let c = build_contract(&index, &ids(&["URL.Memo.get", "URL.check"]));
        assert!(c.level2_supported(), "{:?}", c.level2_blockers());
        assert_eq!(c.level2_names(), [("pkg.validate".to_string(), "URL".to_string())]);
        let l2 = c.for_level2("agent_code");
        let kept: Vec<&str> = l2.objects.iter().map(|o| o.qualname.as_str()).collect();
        assert_eq!(kept, ["URL.Memo", "URL"], "the statement still lists the nested class's methods");
        assert_eq!(l2.objects[0].import_path.as_deref(), Some("from agent_code import URL"));
        let c = build_contract(&index, &ids(&["Other.Inner.run"]));
        assert_eq!(c.level2_blockers(), ["`Other.Inner` is nested in the class `Other`"]);
    }

    #[test]
    fn level2_view_keeps_module_level_objects() {
        let c = build_contract(&inventory_index(), &inventory_extracted());
        assert!(!c.level2_supported(), "a nested function is not L2-able");
        assert_eq!(c.level2_blockers(), vec!["`report.fmt` is nested in `report`, which stays"]);
        assert_eq!(
            c.level2_names(),
            vec![
                // Python's package takes the class that stays with `Cart.total` whole.
                ("inventory.cart".to_string(), "Cart".to_string()),
                ("inventory.models".to_string(), "Item".to_string()),
                ("inventory.pricing".to_string(), "refresh".to_string()),
                ("inventory.pricing".to_string(), "total_value".to_string())
            ]
        );
        let l2 = c.for_level2("agent_code");
        assert!(l2.level2_supported());
        assert!(
            l2.objects
                .iter()
                .all(|o| o.import_path.as_deref().is_some_and(|i| i.starts_with("from agent_code import ")))
        );
        assert_eq!(l2.objects[0].name, "Cart");
        assert!(l2.objects[0].existing, "the class stays in the project");
        assert_eq!(l2.objects[0].members[0].import_path.as_deref(), Some("from agent_code import Cart"));
        assert_eq!(l2.objects[1].members[0].import_path.as_deref(), Some("from agent_code import Item"));
    }
}
