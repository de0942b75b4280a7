//! F2P tests removed one by one from a Rust file that keeps other tests (a `#[cfg(test)]`
//! module, an integration test file): what goes with them.
//!
//! - **Helpers.** A definition of the same test code (inside a `#[cfg(test)]` module or a
//!   `tests/` file) that is not itself a test — a function, a struct with its impls, a
//!   constant — goes when the removed code names it and nothing that stays does (no other
//!   definition, anywhere, references it or anything inside it; no module-level code
//!   does). Transitively: a helper only a removed helper calls goes too.
//! - **`use` leaves.** In the module (or integration test file) a removed test was in, a
//!   leaf whose name the removed code spells and the rest of that module no longer does is
//!   removed (the whole `use` when no leaf is left). A glob (`use super::*`) always stays.
//!   The check is on the text, so it also covers names outside the repository
//!   (`std::collections::BTreeSet`); a trait imported for its methods alone is never named
//!   by the removed code either, so it stays.
//!
//! Both only ever follow a removed `#[test]` function: code the tests never used, or used
//! only by tests that stay, is left as it was.

use std::collections::BTreeSet;

use crate::index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, Import, NodeId};
use crate::rust::index::is_test_attribute;

/// Whether `d` is a test function (`#[test]`, `#[tokio::test]` …), not a helper.
pub(super) fn is_test_function(d: &Definition) -> bool {
    d.is_test && d.kind == DefinitionKind::Function && d.signature.decorators.iter().any(|a| is_test_attribute(a))
}

/// Whether `id` or one of its ancestors is in `set`.
fn within(index: &DefinitionIndex, id: &str, set: &BTreeSet<NodeId>) -> bool {
    super::under(index, id, set, false)
}

/// `delete` with the test helpers that only its removed test functions used (see the
/// module documentation); unchanged when it removes no test function.
pub(super) fn with_unused_test_helpers(index: &DefinitionIndex, delete: &BTreeSet<NodeId>) -> BTreeSet<NodeId> {
    let mut delete = delete.clone();
    let files: BTreeSet<&str> =
        delete.iter().filter_map(|id| index.get(id)).filter(|d| is_test_function(d)).map(|d| d.path.as_str()).collect();
    if files.is_empty() {
        return delete;
    }
    // Helpers: test code of those files at module level (methods go with their type).
    let module_level = |d: &Definition| {
        d.parent.as_deref().and_then(|p| index.get(p)).is_none_or(|p| p.kind == DefinitionKind::Module)
    };
    let candidates: Vec<&Definition> = index
        .definitions
        .values()
        .filter(|d| files.contains(d.path.as_str()) && d.is_test && !is_test_function(d))
        .filter(|d| !matches!(d.kind, DefinitionKind::Module | DefinitionKind::Impl) && module_level(d))
        .collect();
    loop {
        let mut changed = false;
        for c in &candidates {
            if within(index, &c.id, &delete) {
                continue;
            }
            let own = BTreeSet::from([c.id.clone()]);
            let mut named_by_removed = false;
            let mut named_by_kept = false;
            for d in index.definitions.values() {
                if within(index, &d.id, &own) {
                    continue; // its own methods and impls
                }
                let names = d.references.iter().chain(d.load_references.iter().map(|l| &l.target));
                if !names.into_iter().any(|t| within(index, t, &own)) {
                    continue;
                }
                if within(index, &d.id, &delete) {
                    named_by_removed = true;
                } else {
                    named_by_kept = true;
                    break;
                }
            }
            let at_module_level =
                index.files.values().any(|f| f.module_references.iter().any(|m| within(index, &m.target, &own)));
            if named_by_removed && !named_by_kept && !at_module_level {
                delete.insert(c.id.clone());
                changed = true;
            }
        }
        if !changed {
            return delete;
        }
    }
}

/// The name a `use` leaf binds: its alias, else its last segment (`a::b::{self}` binds `b`).
fn bound_name<'a>(import: &'a Import, name: &'a str, alias: Option<&'a str>) -> Option<&'a str> {
    if let Some(a) = alias {
        return (a != "_").then_some(a);
    }
    let mut segments = name.rsplit("::");
    match segments.next()? {
        "*" => None,
        "self" => segments.next().or_else(|| import.module.rsplit("::").next()).filter(|s| !s.is_empty()),
        "" => None,
        last => Some(last),
    }
}

fn names_word(text: &str, name: &str) -> bool {
    super::names_word(text, name)
}

/// Leaves (indices into `import.names`) of the `use` items of `file` that only removed
/// test code named (see the module documentation). `gone` is every definition the masking
/// removes; only test scopes that lose a `#[test]` function are looked at.
pub(super) fn dead_test_uses(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    gone: &BTreeSet<NodeId>,
) -> Vec<(usize, Vec<usize>)> {
    let defs: Vec<&Definition> = file.definitions.iter().filter_map(|i| index.get(i)).collect();
    let removed_tests: Vec<&Definition> =
        defs.iter().copied().filter(|d| is_test_function(d) && within(index, &d.id, gone)).collect();
    if removed_tests.is_empty() {
        return Vec::new();
    }
    // Spans of removed definitions, outermost only.
    let mut removed: Vec<(usize, usize)> = defs
        .iter()
        .filter(|d| gone.contains(&d.id))
        .map(|d| (d.span.start_byte, d.span.end_byte.min(source.len())))
        .collect();
    removed.sort();
    // The innermost test module holding a span, or the whole file for an integration test
    // file; `None` outside test code.
    let scope_of = |start: usize, end: usize| -> Option<(usize, usize)> {
        let inner = defs
            .iter()
            .filter(|d| d.kind == DefinitionKind::Module && d.body.is_some())
            .filter(|d| d.span.start_byte <= start && end <= d.span.end_byte)
            .min_by_key(|d| d.span.end_byte - d.span.start_byte);
        match inner {
            Some(m) if m.is_test => Some((m.span.start_byte, m.span.end_byte.min(source.len()))),
            Some(_) => None,
            None => file.is_test.then_some((0, source.len())),
        }
    };
    let mut out = Vec::new();
    for (i, import) in file.imports.iter().enumerate() {
        let (s, e) = (import.span.start_byte, import.span.end_byte);
        let Some(scope) = scope_of(s, e) else { continue };
        // The scope must be where a removed test was (not an enclosing or sibling module).
        let lost_a_test = removed_tests.iter().any(|t| scope_of(t.span.start_byte, t.span.end_byte) == Some(scope));
        if !lost_a_test || removed.iter().any(|&(rs, re)| rs <= s && e <= re) {
            continue;
        }
        let inside = |&(rs, re): &(usize, usize)| scope.0 <= rs && re <= scope.1;
        let removed_text: String = removed.iter().filter(|r| inside(r)).map(|&(rs, re)| &source[rs..re]).collect();
        // What stays in the scope: its text without the removed definitions and this `use`.
        let mut kept = String::new();
        let mut at = scope.0;
        let mut cuts: Vec<(usize, usize)> = removed.iter().copied().filter(|r| inside(r)).collect();
        cuts.push((s, e));
        cuts.sort();
        for (cs, ce) in cuts {
            if cs >= at {
                kept.push_str(&source[at..cs]);
            }
            at = at.max(ce);
        }
        kept.push_str(&source[at.min(scope.1)..scope.1]);
        let dead: Vec<usize> = import
            .names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                bound_name(import, &n.name, n.alias.as_deref())
                    .is_some_and(|b| names_word(&removed_text, b) && !names_word(&kept, b))
            })
            .map(|(k, _)| k)
            .collect();
        if !dead.is_empty() {
            out.push((i, dead));
        }
    }
    out
}
