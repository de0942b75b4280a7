//! Level 2 rewrite of a test file: the feature's objects are imported from the solution
//! package (`agent_code`) instead of the repository. Deterministic and tree-sitter based:
//!
//! - `from pkg.mod import X, helper` (X extracted) becomes `from agent_code import X` and
//!   `from pkg.mod import helper` (aliases kept: `X as Y` stays `X as Y`);
//! - with `import pkg.mod as m` (or `import pkg.mod`, or `from pkg import mod`), every
//!   `m.X` (`pkg.mod.X`) becomes `agent_code.X`, and `import agent_code` is added after
//!   the file's last module-level import.
//!
//! Extracted module-level definitions move, and so does a module-level class that stays with
//! methods of the feature: the package takes it whole (see [`whole_types`]), with the classes
//! that derive from it and that the tests name ([`package_classes`]). Nested functions cannot
//! be imported by name.

mod reference;

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::lines::Lines;
use super::{import_name_nodes, import_statement_at, parse, resolve_imported_name, resolve_in_module, same_name};
use crate::edit::Edit;
use crate::index::{DefinitionIndex, DefinitionKind, FileIndex, LoadRole, NodeId};

/// Module-level classes that stay in the project with methods of the feature: a Level 2
/// package provides each whole (it may subclass the project's), and the rewritten tests take
/// it from there, so the feature's methods are asked of the package.
pub fn whole_types(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> BTreeSet<NodeId> {
    extracted
        .iter()
        .filter_map(|id| index.definitions.get(id)?.parent.clone())
        .filter(|p| !extracted.contains(p))
        .filter(|p| index.definitions.get(p).is_some_and(|d| d.parent.is_none() && d.kind == DefinitionKind::Class))
        .collect()
}

fn movable(index: &DefinitionIndex, moved: &BTreeSet<NodeId>, id: &str) -> bool {
    moved.contains(id) && index.definitions.get(id).is_some_and(|d| d.parent.is_none())
}

/// Classes of the project that stay, are not taken whole, derive (through any number of
/// classes) from one of `whole`, and are named by test code or at run time by the project's
/// code that stays, each with the class of `whole` it derives from. Tests that use one would
/// get the project's class without the feature's methods, so the package provides it too
/// ([`package_classes`]): itsdangerous' `BadHeader(BadSignature)`, which the tests expect the
/// feature's signer to raise; sqlparse's `Statement(TokenList)`, which its engine builds
/// (the rewritten tests bind the project's name to the package's, [`project_bindings`]). A
/// subclass nothing names (marshmallow's `examples/flask_example.py::AuthorSchema`) stays in
/// the project: the reference, run with the rewritten tests beside the masked project, shows
/// whether a package can pass.
fn staying_subclasses(
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    whole: &BTreeSet<NodeId>,
) -> BTreeMap<NodeId, NodeId> {
    let bases = |d: &crate::index::Definition| -> Vec<NodeId> {
        d.load_references.iter().filter(|r| r.role == LoadRole::BaseClass).map(|r| r.target.clone()).collect()
    };
    let mut derived: BTreeMap<NodeId, NodeId> = whole.iter().map(|w| (w.clone(), w.clone())).collect();
    loop {
        let before = derived.len();
        for d in index.definitions.values().filter(|d| d.kind == DefinitionKind::Class && !d.is_test) {
            if derived.contains_key(&d.id) || extracted.contains(&d.id) {
                continue;
            }
            if let Some(root) = bases(d).iter().find_map(|b| derived.get(b).cloned()) {
                derived.insert(d.id.clone(), root);
            }
        }
        if derived.len() == before {
            break;
        }
    }
    // What test code names, once: test definitions' references and test files' module code;
    // and what the project's code that stays names at run time, other than a class's own
    // methods naming it (sqlparse's engine builds `sql.Statement`s, a `TokenList` the
    // package takes whole: the rewritten tests bind the project's name to the package's).
    let in_tests = |d: &crate::index::Definition| d.is_test || index.files.get(&d.path).is_some_and(|f| f.is_test);
    let own = |d: &crate::index::Definition, r: &str| d.id.starts_with(r) && d.id[r.len()..].starts_with('.');
    let named: BTreeSet<&str> = index
        .definitions
        .values()
        .filter(|d| in_tests(d) || !extracted.contains(&d.id))
        .flat_map(|d| d.references.iter().filter(move |r| !own(d, r)).map(String::as_str))
        .chain(
            index
                .files
                .values()
                .filter(|f| f.is_test)
                .flat_map(|f| f.module_references.iter().map(|r| r.target.as_str())),
        )
        .collect();
    derived.into_iter().filter(|(c, _)| !whole.contains(c) && named.contains(c.as_str())).collect()
}

/// The classes of the project the package provides whole: those with methods of the feature
/// ([`whole_types`]) and the module-level classes that stay, derive from one of them and
/// are named by tests ([`staying_subclasses`]). The rewritten tests take all of them from the
/// package.
pub fn package_classes(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> BTreeSet<NodeId> {
    let whole = whole_types(index, extracted);
    let subclasses = staying_subclasses(index, extracted, &whole);
    let module_level = |id: &NodeId| index.definitions.get(id).is_some_and(|d| d.parent.is_none());
    whole.iter().cloned().chain(subclasses.into_keys().filter(module_level)).collect()
}

/// Edits that make the test file `file` import the extracted objects from `package`.
pub fn rewrite_imports_for_level2(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    extracted: &BTreeSet<NodeId>,
    package: &str,
) -> Vec<Edit> {
    let Some(tree) = parse(source) else { return Vec::new() };
    let root = tree.root_node();
    let lines = Lines::new(source);
    let mut edits = Vec::new();
    let mut moved = package_classes(index, extracted);
    moved.extend(extracted.iter().cloned());
    let extracted = &moved;

    // 1. `from m import X, helper`.
    for imp in file.imports.iter().filter(|i| !i.names.is_empty()) {
        let moved: Vec<_> = imp
            .names
            .iter()
            .filter(|n| resolve_imported_name(index, imp, n).is_some_and(|t| movable(index, extracted, &t)))
            .collect();
        if moved.is_empty() {
            continue;
        }
        let Some(stmt) = import_statement_at(root, imp.span.start_byte, imp.span.end_byte) else { continue };
        let Some(module) = stmt.child_by_field_name("module_name") else { continue };
        let names = import_name_nodes(stmt);
        let (go, stay): (Vec<Node>, Vec<Node>) =
            names.iter().copied().partition(|n| moved.iter().any(|m| same_name(*n, m, source)));
        if go.is_empty() {
            continue;
        }
        let join = |ns: &[Node]| ns.iter().map(|n| &source[n.byte_range()]).collect::<Vec<_>>().join(", ");
        let mut text = format!("from {package} import {}", join(&go));
        if !stay.is_empty() {
            let sep = if lines.only_space_before(stmt.start_byte()) {
                format!("{}{}", lines.newline(), lines.indent_text(stmt.start_position().row))
            } else {
                "; ".to_string()
            };
            text.push_str(&sep);
            text.push_str(&format!("from {} import {}", &source[module.byte_range()], join(&stay)));
        }
        edits.push(Edit::replace(stmt.start_byte(), stmt.end_byte(), text));
    }

    // 2. `m.X` through a module binding.
    let bindings = module_bindings(root, source, file, index);
    let mut replaced = false;
    if !bindings.is_empty() {
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if matches!(n.kind(), "import_statement" | "import_from_statement") {
                continue;
            }
            if n.kind() == "attribute"
                && let (Some(obj), Some(attr)) = (n.child_by_field_name("object"), n.child_by_field_name("attribute"))
            {
                let obj_text: String = source[obj.byte_range()].chars().filter(|c| !c.is_whitespace()).collect();
                let name = &source[attr.byte_range()];
                if let Some(path) = bindings.get(&obj_text)
                    && resolve_in_module(index, path, name, 0).is_some_and(|t| movable(index, extracted, &t))
                {
                    edits.push(Edit::replace(n.start_byte(), n.end_byte(), format!("{package}.{name}")));
                    replaced = true;
                    continue;
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
    let wiring = project_bindings(index, extracted);
    if replaced || !wiring.is_empty() {
        edits.push(import_package_edit(root, source, &lines, &package_import_text(package, &wiring, lines.newline())));
    }
    edits
}

/// A name of a project module that stays bound to an object of the feature, which the
/// project's code that stays calls by that name at run time (boltons' `wraps`, which stays,
/// calls `update_wrapper` of the feature; toolz's `countby` calls `getter`, imported by
/// `recipes`): `(module, attribute, the package's name)`, sorted.
pub type ProjectBinding = (String, String, String);

/// Where the project's code that stays names the package's objects ([`ProjectBinding`]):
/// their home modules, and the modules that import them by name. The rewritten tests bind
/// these names to the package's objects, so the feature the tests reach through the project
/// is the package's: without it that code finds the masked project's (a `NameError`), and no
/// package could pass.
pub fn project_bindings(index: &DefinitionIndex, extracted: &BTreeSet<NodeId>) -> Vec<ProjectBinding> {
    let mut moved = package_classes(index, extracted);
    moved.extend(extracted.iter().cloned());
    let in_feature = |id: &NodeId| {
        let mut at = index.definitions.get(id);
        while let Some(d) = at {
            if moved.contains(&d.id) {
                return true;
            }
            at = d.parent.as_ref().and_then(|p| index.definitions.get(p));
        }
        false
    };
    let test_file = |path: &str| index.files.get(path).is_none_or(|f| f.is_test);
    // What code that stays calls at run time (not what runs at import: that has run by then).
    let used: BTreeSet<&NodeId> = index
        .definitions
        .values()
        .filter(|d| !d.is_test && !test_file(&d.path) && !in_feature(&d.id))
        .flat_map(|d| d.references.iter())
        .filter(|r| movable(index, &moved, r))
        .collect();
    let module_of = |path: &str| index.files.get(path).and_then(|f| f.module.clone());
    let mut out: BTreeSet<ProjectBinding> = BTreeSet::new();
    for id in &used {
        let Some(d) = index.definitions.get(*id) else { continue };
        if let Some(module) = module_of(&d.path) {
            out.insert((module, d.name.clone(), d.name.clone()));
        }
    }
    for file in index.files.values().filter(|f| !f.is_test && f.language == crate::Language::Python) {
        let Some(module) = &file.module else { continue };
        for imp in file.imports.iter().filter(|i| i.module_level) {
            for n in &imp.names {
                let Some(target) = resolve_imported_name(index, imp, n) else { continue };
                if let Some(d) = index.definitions.get(&target).filter(|_| used.contains(&target)) {
                    out.insert((module.clone(), n.alias.clone().unwrap_or_else(|| n.name.clone()), d.name.clone()));
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The statement's sentence on [`ProjectBinding`]s: the project's code that stays calls the
/// package's objects, so they must behave as the project expects.
fn project_note(wiring: &[ProjectBinding], package: &str) -> Option<String> {
    if wiring.is_empty() {
        return None;
    }
    let mut named: Vec<String> = wiring.iter().map(|(m, a, n)| format!("`{m}.{a}` is `{package}.{n}`")).collect();
    named.dedup();
    Some(format!(
        "The project's code that stays calls some of these objects, and the tests give it the package's: {}. \
         They must work as the project's callers expect.",
        named.join(", ")
    ))
}

/// `import <package>`, then one line per [`ProjectBinding`] setting the project module's name
/// to the package's object (an empty package fails here, at collection).
fn package_import_text(package: &str, wiring: &[ProjectBinding], nl: &str) -> String {
    if wiring.is_empty() {
        return format!("import {package}");
    }
    let mut text = format!("import {package}{nl}import importlib as _carve_importlib{nl}{nl}");
    text.push_str(&format!(
        "# The project's code that stays calls the feature by these names: it gets `{package}`'s.{nl}"
    ));
    for (module, attribute, name) in wiring {
        text.push_str(&format!("_carve_importlib.import_module({module:?}).{attribute} = {package}.{name}{nl}"));
    }
    text.trim_end_matches(nl).to_string()
}

/// Names bound to repository modules: `import a.b as m` → `m`, `import a.b` → `a.b`,
/// `from a import b` (a module) → `b`, and `p.sub` for every submodule of a bound package
/// `p`; each mapped to the module's file.
fn module_bindings(root: Node, source: &str, file: &FileIndex, index: &DefinitionIndex) -> BTreeMap<String, String> {
    let by_module: BTreeMap<&str, &str> =
        index.files.values().filter_map(|f| Some((f.module.as_deref()?, f.path.as_str()))).collect();
    let mut out = BTreeMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "import_statement" {
            for name in import_name_nodes(n) {
                let (module, binding) = match name.kind() {
                    "aliased_import" => match (name.child_by_field_name("name"), name.child_by_field_name("alias")) {
                        (Some(m), Some(a)) => (&source[m.byte_range()], &source[a.byte_range()]),
                        _ => continue,
                    },
                    _ => (&source[name.byte_range()], &source[name.byte_range()]),
                };
                let module: String = module.chars().filter(|c| !c.is_whitespace()).collect();
                if let Some(path) = by_module.get(module.as_str()) {
                    out.insert(binding.to_string(), path.to_string());
                }
            }
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // `import pkg` also reaches `pkg.sub.X` for every submodule of the package.
    let packages: Vec<(String, String)> = out
        .iter()
        .filter(|(_, path)| path.ends_with("__init__.py"))
        .filter_map(|(b, path)| Some((b.clone(), index.files.get(path)?.module.clone()?)))
        .collect();
    for (binding, module) in packages {
        let prefix = format!("{module}.");
        for (m, path) in by_module.range(prefix.as_str()..).take_while(|(m, _)| m.starts_with(&prefix)) {
            out.entry(format!("{binding}.{}", &m[prefix.len()..])).or_insert_with(|| path.to_string());
        }
    }
    for imp in &file.imports {
        let Some(base) =
            imp.resolved_path.as_deref().and_then(|p| index.files.get(p)).and_then(|f| f.module.as_deref())
        else {
            continue;
        };
        for n in &imp.names {
            if resolve_imported_name(index, imp, n).is_some() {
                continue;
            }
            if let Some(path) = by_module.get(format!("{base}.{}", n.name).as_str()) {
                out.insert(n.alias.clone().unwrap_or_else(|| n.name.clone()), path.to_string());
            }
        }
    }
    out
}

/// `statement` (`import <package>`, and what goes with it) after the last module-level
/// import (or after the module docstring).
fn import_package_edit(root: Node, source: &str, lines: &Lines, statement: &str) -> Edit {
    let nl = lines.newline();
    let mut c = root.walk();
    let top: Vec<Node> = root.named_children(&mut c).collect();
    let anchor = top
        .iter()
        .filter(|n| matches!(n.kind(), "import_statement" | "import_from_statement" | "future_import_statement"))
        .last()
        .or_else(|| {
            top.first().filter(|n| {
                n.kind() == "expression_statement" && n.named_child(0).is_some_and(|s| s.kind() == "string")
            })
        });
    match anchor {
        Some(a) => {
            let row = a.end_position().row;
            let at = lines.end_incl_newline(row);
            if at == source.len() && !source.ends_with('\n') {
                Edit::insert(at, format!("{nl}{statement}{nl}"))
            } else {
                Edit::insert(at, format!("{statement}{nl}"))
            }
        }
        None => Edit::insert(0, format!("{statement}{nl}")),
    }
}

/// Python's Level 2 package: `<package>/__init__.py`.
pub struct PythonLevel2;

impl crate::interface::Level2Packaging for PythonLevel2 {
    fn init_file(&self, package: &str) -> String {
        format!("{package}/__init__.py")
    }

    /// A doctest is in the project's own module (`--doctest-modules`) or text file
    /// (`--doctest-glob`): the package cannot change what its examples import, and its module
    /// keeps only the project's masked code (sortedcontainers' `SortedList` examples).
    fn tests_blocker(&self, index: &DefinitionIndex, tests: &[(String, String)]) -> Option<String> {
        use crate::interface::LanguageSupport as _;
        let why = |(id, file): &(String, String)| {
            if crate::python::Python.doctest_owner(index, id).is_some() {
                Some(format!("`{id}` is a doctest in {file}"))
            } else if !file.ends_with(".py") {
                Some(format!("`{id}` is a doctest in the text file {file}"))
            } else {
                None
            }
        };
        let found: Vec<String> = tests.iter().filter_map(why).collect();
        (!found.is_empty()).then(|| {
            format!(
                "no Level 2 task: F2P tests that are not test files cannot import from `agent_code` ({})",
                crate::interface::listed(&found, 3)
            )
        })
    }

    fn reference(&self, sources: &crate::interface::Level2Sources<'_>) -> Result<String, String> {
        let index = sources.index;
        let whole = whole_types(index, sources.extracted);
        let name = |id: &NodeId| index.definitions.get(id).map_or(id.clone(), |d| d.qualname.clone());
        let subclasses = staying_subclasses(index, sources.extracted, &whole);
        // A nested class cannot be imported from the package by name.
        if let Some((class, base)) =
            subclasses.iter().find(|(c, _)| index.definitions.get(*c).is_some_and(|d| d.parent.is_some()))
        {
            return Err(format!(
                "`{}` ({class}) derives from `{}`, which the package would take whole, stays in the project and is \
                 nested, so the package cannot provide it: what uses it gets the project's `{}` without the \
                 feature's methods",
                name(class),
                name(base),
                name(base)
            ));
        }
        let mut names = sources.names.to_vec();
        for class in subclasses.keys().filter_map(|c| index.definitions.get(c)) {
            let module = index.files.get(&class.path).and_then(|f| f.module.clone()).unwrap_or(class.path.clone());
            if let Some((other, _)) = names.iter().find(|(m, n)| *n == class.name && *m != module) {
                return Err(format!(
                    "`{}` names objects of {other} and {module} (one package namespace holds one)",
                    class.name
                ));
            }
            names.push((module, class.name.clone()));
        }
        names.sort();
        names.dedup();
        reference::standalone(sources.root, index, &names)
    }

    /// The reference runs the feature's own code beside the project as the task leaves it
    /// ([`reference::standalone`]): the gold patch adds the package alone.
    fn reference_restores_original(&self) -> bool {
        false
    }

    /// Each class taken whole: what stays of it in the project, and that the package's class
    /// has the rest too.
    fn support_note(&self, sources: &crate::interface::Level2Sources<'_>) -> Option<String> {
        let index = sources.index;
        let whole = whole_types(index, sources.extracted);
        let project_name = |d: &crate::index::Definition| {
            let module = index.files.get(&d.path).and_then(|f| f.module.clone()).unwrap_or(d.path.clone());
            format!("`{}` (the project's `{module}.{}`)", d.name, d.name)
        };
        let classes: Vec<String> = whole.iter().filter_map(|id| index.definitions.get(id)).map(project_name).collect();
        let wiring = project_note(&project_bindings(index, sources.extracted), sources.package);
        if classes.is_empty() {
            return wiring;
        }
        let mut note = format!(
            "The project keeps {}, without the methods listed below; the tests take {} from `{}` alone, so the \
             package's class has those methods and everything else the tests use of it (it may subclass the \
             project's class).",
            classes.join(", "),
            if classes.len() == 1 { "it" } else { "them" },
            sources.package
        );
        let subclasses = staying_subclasses(index, sources.extracted, &whole);
        let mut derived: Vec<String> = subclasses
            .iter()
            .filter_map(|(c, base)| Some((index.definitions.get(c)?, index.definitions.get(base)?)))
            .filter(|(d, _)| d.parent.is_none())
            .map(|(d, base)| {
                let module = index.files.get(&d.path).and_then(|f| f.module.clone()).unwrap_or(d.path.clone());
                format!("`{}` (the project's `{module}.{}`, a subclass of `{}`)", d.name, d.name, base.name)
            })
            .collect();
        derived.sort();
        if !derived.is_empty() {
            note.push_str(&format!(
                " The tests also import {} from `{}`: the package provides {} as the project has {}, deriving \
                 from the package's classes.",
                derived.join(", "),
                sources.package,
                if derived.len() == 1 { "it" } else { "them" },
                if derived.len() == 1 { "it" } else { "them" },
            ));
        }
        if let Some(wiring) = wiring {
            note.push(' ');
            note.push_str(&wiring);
        }
        Some(note)
    }

    /// A method of a class that stays comes with its whole class ([`whole_types`]).
    fn takes_whole_types(&self) -> bool {
        true
    }

    fn empty(&self, _package: &str) -> String {
        "\"\"\"Empty solution: exposes nothing.\"\"\"\n".to_string()
    }

    fn describe(&self, package: &str) -> String {
        format!(
            "a Python package named `{package}`: a directory\n`{package}/` with an `__init__.py`, importable from the working directory"
        )
    }

    fn keeps_decorator(&self, decorator: &str) -> bool {
        builtin_decorator(decorator)
    }

    fn import_line(&self, package: &str, name: &str) -> String {
        format!("from {package} import {name}")
    }

    fn rewrite_test_imports(
        &self,
        _root: &std::path::Path,
        source: &str,
        file: &crate::index::FileIndex,
        index: &crate::index::DefinitionIndex,
        extracted: &std::collections::BTreeSet<crate::index::NodeId>,
        package: &str,
    ) -> Vec<crate::edit::Edit> {
        rewrite_imports_for_level2(source, file, index, extracted, package)
    }
}

/// Decorators a from-scratch solution can write without the original project.
fn builtin_decorator(d: &str) -> bool {
    let head = d.split('(').next().unwrap_or(d).trim();
    matches!(
        head,
        "staticmethod"
            | "classmethod"
            | "property"
            | "abstractmethod"
            | "abc.abstractmethod"
            | "dataclass"
            | "dataclasses.dataclass"
            | "functools.cache"
            | "functools.lru_cache"
            | "functools.cached_property"
            | "cached_property"
            | "contextmanager"
            | "contextlib.contextmanager"
            | "overload"
            | "typing.overload"
    ) || head.ends_with(".setter")
        || head.ends_with(".getter")
        || head.ends_with(".deleter")
}
