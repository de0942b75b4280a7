//! Stubs instead of deletions: a method of a class that stays, overriding a method of one of
//! its base classes in the repository, is not deleted:
//!
//! - when the base method is abstract (`@abstractmethod`, also under `abc.` or with
//!   `@property`), deleting the override makes the class abstract and every instance of it
//!   fails to build ("Can't instantiate abstract class … with abstract method …"), a
//!   module-level one at import;
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
