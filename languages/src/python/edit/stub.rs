//! Stubs instead of deletions: a method of a class that stays, overriding a method of one of
//! its base classes in the repository, is not deleted:
//!
//! - when the base method is abstract (`@abstractmethod`, also under `abc.` or with
//!   `@property`), deleting the override makes the class abstract and every instance of it
//!   fails to build ("Can't instantiate abstract class … with abstract method …"), a
//!   module-level one at import; the same for the abstract methods of a standard-library
//!   collection ABC named as a base (`class Flags(MutableSet)`: `add`, `discard`, …);
//! - when the base method stays, deleting the override hands its calls to the base method,
//!   which does something else without failing: a mixin's `load_payload` gone, the base
//!   class's plain one runs, and tests that check a round trip still pass on the masked
//!   state (itsdangerous `URLSafeSerializerMixin`, `fixtures/python/envelope`).
//!
//! Such a method keeps its decorators, signature and docstring; its body becomes
//! `raise NotImplementedError`.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::edit::Edit;
use crate::index::{Definition, DefinitionIndex, LoadRole, NodeId};

/// Whether `def` is a method of a class that stays (not in `remove`) and overrides a method
/// of one of the class's base classes in the repository (transitively) that is abstract or
/// stays (neither it nor its class in `remove`).
pub(super) fn overrides_a_base_method(index: &DefinitionIndex, remove: &BTreeSet<NodeId>, def: &Definition) -> bool {
    let Some(class) = def.parent.as_deref().and_then(|p| index.get(p)) else { return false };
    if class.kind != crate::index::DefinitionKind::Class || remove.contains(&class.id) {
        return false;
    }
    if overrides_a_library_abstract_method(index, class, def) {
        return true;
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut bases: Vec<&str> = base_classes(class).collect();
    while let Some(base) = bases.pop() {
        if !seen.insert(base) {
            continue;
        }
        let Some(b) = index.get(base) else { continue };
        let base_stays = !remove.contains(&b.id);
        let overridden = index.definitions.values().any(|m| {
            m.parent.as_deref() == Some(base)
                && m.name == def.name
                && (is_abstract(m) || (base_stays && !remove.contains(&m.id)))
        });
        if overridden {
            return true;
        }
        bases.extend(base_classes(b));
    }
    false
}

/// Whether `def` is one of the abstract methods of a standard-library collection ABC that
/// `class` (or a class of the repository it derives from) names as a base outside the
/// repository (`class Flags(MutableSet)`, `collections.abc.Mapping`, `typing.Iterator[str]`):
/// deleting it makes the class abstract, as for an abstract method of the repository
/// (hyperframe's `Flags.discard`: a module-level `Flags(...)` could not be built, so the load
/// repair kept the method, which was the whole feature).
fn overrides_a_library_abstract_method(index: &DefinitionIndex, class: &Definition, def: &Definition) -> bool {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut todo = vec![class];
    while let Some(c) = todo.pop() {
        if !seen.insert(c.id.as_str()) {
            continue;
        }
        let in_repo: BTreeSet<&str> = base_classes(c).filter_map(|b| index.get(b)).map(|b| b.name.as_str()).collect();
        let outside = c.signature.bases.iter().filter_map(|b| {
            let name = b.split('[').next().unwrap_or(b).trim();
            let last = name.rsplit('.').next().unwrap_or(name);
            (!name.contains('=') && !in_repo.contains(last)).then_some(last)
        });
        if outside.flat_map(collection_abc_abstract_methods).any(|m| *m == def.name) {
            return true;
        }
        todo.extend(base_classes(c).filter_map(|b| index.get(b)));
    }
    false
}

/// The abstract methods of a `collections.abc` class (the "Abstract Methods" column of its
/// documentation, inherited ones included), by the class's name; `typing` re-exports them.
fn collection_abc_abstract_methods(abc: &str) -> &'static [&'static str] {
    match abc {
        "Container" => &["__contains__"],
        "Hashable" => &["__hash__"],
        "Iterable" => &["__iter__"],
        "Iterator" => &["__next__"],
        "Reversible" => &["__reversed__", "__iter__"],
        "Generator" => &["send", "throw"],
        "Sized" => &["__len__"],
        "Callable" => &["__call__"],
        "Collection" | "Set" | "AbstractSet" => &["__contains__", "__iter__", "__len__"],
        "Sequence" | "ByteString" => &["__getitem__", "__len__"],
        "MutableSequence" => &["__getitem__", "__setitem__", "__delitem__", "__len__", "insert"],
        "MutableSet" => &["__contains__", "__iter__", "__len__", "add", "discard"],
        "Mapping" => &["__getitem__", "__iter__", "__len__"],
        "MutableMapping" => &["__getitem__", "__setitem__", "__delitem__", "__iter__", "__len__"],
        "Awaitable" => &["__await__"],
        "Coroutine" => &["send", "throw", "__await__"],
        "AsyncIterable" => &["__aiter__"],
        "AsyncIterator" => &["__anext__"],
        "AsyncGenerator" => &["asend", "athrow"],
        _ => &[],
    }
}

fn base_classes(class: &Definition) -> impl Iterator<Item = &str> {
    class.load_references.iter().filter(|l| l.role == LoadRole::BaseClass).map(|l| l.target.as_str())
}

fn is_abstract(method: &Definition) -> bool {
    method.signature.decorators.iter().any(|d| {
        let name = d.rsplit('.').next().unwrap_or(d);
        matches!(name, "abstractmethod" | "abstractproperty" | "abstractclassmethod" | "abstractstaticmethod")
    })
}

/// The edit that stubs the function statement `stmt` (a `function_definition`, or the
/// `decorated_definition` around one): its body after the docstring becomes
/// `raise NotImplementedError`.
pub(super) fn stub_body(source: &str, stmt: Node) -> Option<Edit> {
    let func = if stmt.kind() == "decorated_definition" { stmt.child_by_field_name("definition")? } else { stmt };
    let body = func.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    let raise = "raise NotImplementedError";
    let is_docstring =
        first.kind() == "expression_statement" && first.named_child(0).is_some_and(|s| s.kind() == "string");
    if !is_docstring {
        return Some(Edit::replace(body.start_byte(), body.end_byte(), raise));
    }
    // After the docstring, at its indentation (or after `;` when it shares the `def` line).
    let line_start = source[..first.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let indent = &source[line_start..first.start_byte()];
    let text =
        if indent.chars().all(|c| c == ' ' || c == '\t') { format!("\n{indent}{raise}") } else { format!("; {raise}") };
    Some(Edit::replace(first.end_byte(), body.end_byte(), text))
}
