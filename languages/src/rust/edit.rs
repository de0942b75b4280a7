//! Masking Rust sources: which removed definitions go entirely and which keep their
//! signature with a `todo!()` body, and the edits that do it in one file.
//!
//! Rules (the masked crate must still build):
//! - a definition in `delete` goes, with its attributes and `///` docs; so does everything
//!   whose parent goes (an impl's parent is its type, so removing a type removes its impl
//!   blocks wherever they are), every impl of a removed trait, and trait-impl methods of a
//!   removed trait item;
//! - an inherent impl all of whose methods go, goes — unless it holds other items too
//!   (`const`s, associated types, macro calls), which stay in it;
//! - a trait impl that stays keeps every method (the trait requires them): its removed
//!   methods are stubbed instead — impls are used where no path names them (`dyn Trait`
//!   coercions, generic bounds, `{}` formatting), so carve never deletes one on its own;
//! - a definition in `stub` keeps its signature and gets the body `{ todo!() }`; a stubbed
//!   type, trait, impl or module stubs every function inside it (impl methods included);
//!   an `impl Iterator` return gets `std::iter::empty()` after the `todo!()`;
//! - `use` leaves whose target goes are removed (the whole item when no leaf is left);
//! - F2P `#[test]` functions removed from a file that keeps other tests take the test
//!   helpers and `use` leaves only they used with them (`test_removal`).

use std::collections::{BTreeMap, BTreeSet};

use crate::Language;

pub(crate) mod mod_decls;
mod test_removal;
#[cfg(test)]
mod tests;
use crate::edit::{Edit, MaskError};
use crate::index::{Definition, DefinitionIndex, DefinitionKind, FileIndex, LoadRole, NodeId};

/// The outcome of the delete/stub rules over the whole index.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RustRemovals {
    /// Definitions that disappear (nested ones included).
    pub gone: BTreeSet<NodeId>,
    /// Functions and methods whose body becomes `todo!()`.
    pub stubbed: BTreeSet<NodeId>,
    /// Inherent impls in `gone` as a whole or because every method of theirs goes. One that also
    /// holds other items (`const`s, types, macro calls) keeps those: only its methods go.
    pub emptied: BTreeSet<NodeId>,
    /// Files left out of the masked tree (whole F2P test files): the `mod` items that
    /// declare them go (`mod clear;` in `src/tests.rs` for `src/tests/clear.rs`).
    pub removed_files: BTreeSet<String>,
}

fn trait_of<'a>(index: &'a DefinitionIndex, imp: &Definition) -> Option<&'a Definition> {
    imp.load_references.iter().find(|l| l.role == LoadRole::BaseClass).and_then(|l| index.get(&l.target))
}

/// Whether `d` is a trait impl (`impl Trait for T`), of a trait of the index or not (`Display`).
fn is_trait_impl(d: &Definition) -> bool {
    d.kind == DefinitionKind::Impl && !d.signature.bases.is_empty()
}

/// The enclosing impl of a method, when it is a trait impl: `(impl, trait)`, the trait
/// when the index has it.
fn trait_impl_of<'a>(index: &'a DefinitionIndex, d: &Definition) -> Option<(&'a Definition, Option<&'a Definition>)> {
    let imp = index.get(d.parent.as_deref()?)?;
    if !is_trait_impl(imp) {
        return None;
    }
    Some((imp, trait_of(index, imp)))
}

/// Apply the rules above to the Rust definitions of `index`. A stubbed definition keeps
/// its signature (a type, trait or impl: all of it), so what that signature names stays
/// too: such removals are turned into stubs until nothing kept names anything gone.
pub fn plan(index: &DefinitionIndex, delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>) -> RustRemovals {
    let (mut delete, mut stub) = (test_removal::with_unused_test_helpers(index, delete), stub.clone());
    // A trait impl removed on its own keeps its methods, stubbed (see the rules above); it
    // still goes with its type or its trait.
    for id in delete.clone() {
        if index.get(&id).is_some_and(is_trait_impl) {
            delete.remove(&id);
            stub.insert(id);
        }
    }
    loop {
        let r = plan_once(index, &delete, &stub);
        let mut required = BTreeSet::new();
        let kept = r.stubbed.iter().chain(stub.iter().filter(|s| !r.gone.contains(*s)));
        for k in kept {
            let Some(d) = index.get(k) else { continue };
            let whole = !matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method);
            for t in d.references.iter().filter(|t| r.gone.contains(*t)) {
                let Some(target) = index.get(t) else { continue };
                if whole || names_word(&d.signature.text, &target.name) {
                    required.insert(t.clone());
                }
            }
        }
        if required.is_empty() {
            return r;
        }
        for t in required {
            delete.remove(&t);
            stub.insert(t);
        }
    }
}

/// `(delete, stub)` with what the removed module files (`src/tests/clear.rs`) name moved
/// from `delete` to `stub`: such a file is compiled into the crate's test binary with the
/// tests that stay, so when the test patch puts it back it must compile (its tests then
/// fail on `todo!()`); a definition it names that was deleted would break every test of
/// that binary. Removed crate roots (`tests/x.rs`) are binaries of their own.
pub fn stub_what_removed_modules_name(
    index: &DefinitionIndex,
    delete: &BTreeSet<NodeId>,
    stub: &BTreeSet<NodeId>,
    removed_files: &BTreeSet<String>,
) -> (BTreeSet<NodeId>, BTreeSet<NodeId>) {
    let (mut delete, mut stub) = (delete.clone(), stub.clone());
    let named: BTreeSet<&NodeId> = removed_files
        .iter()
        .filter(|f| mod_decls::is_module_file(f))
        .filter_map(|f| index.files.get(f))
        .flat_map(|f| f.definitions.iter().filter_map(|d| index.get(d)))
        .flat_map(|d| d.references.iter())
        .collect();
    // With the blocks that hold them (a method's impl).
    for id in named {
        let mut cur = Some(id.as_str());
        while let Some(c) = cur {
            if delete.remove(c) {
                stub.insert(c.to_string());
            }
            cur = index.get(c).and_then(|d| d.parent.as_deref());
        }
    }
    (delete, stub)
}

/// Whether `name` appears in `text` as a whole identifier.
fn names_word(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

fn plan_once(index: &DefinitionIndex, delete: &BTreeSet<NodeId>, stub: &BTreeSet<NodeId>) -> RustRemovals {
    let rust: Vec<&Definition> = index.definitions.values().filter(|d| d.language == Language::Rust).collect();
    let mut children: BTreeMap<&str, Vec<&Definition>> = BTreeMap::new();
    for d in &rust {
        if let Some(p) = &d.parent {
            children.entry(p.as_str()).or_default().push(d);
        }
    }
    let mut gone: BTreeSet<NodeId> = rust.iter().filter(|d| delete.contains(&d.id)).map(|d| d.id.clone()).collect();
    // An inherent impl removed as a whole (the class of an extracted method) is emptied too:
    // it may hold more than its methods.
    let mut emptied_impls: BTreeSet<NodeId> = rust
        .iter()
        .filter(|d| delete.contains(&d.id) && d.kind == DefinitionKind::Impl && !is_trait_impl(d))
        .map(|d| d.id.clone())
        .collect();
    // Trait-impl methods whose impl and trait item stay are stubbed, never deleted.
    let mut stub_extra = BTreeSet::new();
    loop {
        let mut changed = false;
        for d in &rust {
            if gone.contains(&d.id) {
                continue;
            }
            let parent_gone = d.parent.as_ref().is_some_and(|p| gone.contains(p));
            let trait_gone = d.kind == DefinitionKind::Impl && trait_of(index, d).is_some_and(|t| gone.contains(&t.id));
            let item_gone = trait_impl_of(index, d).is_some_and(|(_, t)| {
                t.is_some_and(|t| {
                    d.references.iter().any(|r| {
                        gone.contains(r) && index.get(r).is_some_and(|x| x.parent.as_deref() == Some(t.id.as_str()))
                    })
                })
            });
            let emptied = d.kind == DefinitionKind::Impl && !is_trait_impl(d) && {
                let kids = children.get(d.id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
                let methods: Vec<_> = kids.iter().filter(|k| k.kind == DefinitionKind::Method).collect();
                !methods.is_empty() && methods.iter().all(|k| gone.contains(&k.id))
            };
            if parent_gone || trait_gone || item_gone || emptied {
                if !(parent_gone || trait_gone || item_gone) {
                    emptied_impls.insert(d.id.clone());
                }
                gone.insert(d.id.clone());
                changed = true;
            }
        }
        // Explicitly deleted trait-impl methods of impls that stay.
        for d in &rust {
            if !gone.contains(&d.id) || !delete.contains(&d.id) {
                continue;
            }
            if let Some((imp, t)) = trait_impl_of(index, d) {
                let item_gone = t.is_some_and(|t| {
                    d.references.iter().any(|r| {
                        gone.contains(r) && index.get(r).is_some_and(|x| x.parent.as_deref() == Some(t.id.as_str()))
                    })
                });
                if !gone.contains(&imp.id) && !item_gone {
                    gone.remove(&d.id);
                    stub_extra.insert(d.id.clone());
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let stubbed = rust
        .iter()
        .filter(|d| matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method) && d.body.is_some())
        .filter(|d| !gone.contains(&d.id))
        .filter(|d| {
            if stub_extra.contains(&d.id) {
                return true;
            }
            let mut cur = Some(d.id.as_str());
            let mut hops = 0;
            while let Some(c) = cur {
                if stub.contains(c) || (hops > 0 && delete.contains(c)) {
                    return true;
                }
                cur = index.get(c).and_then(|x| x.parent.as_deref());
                hops += 1;
                if hops > 64 {
                    break;
                }
            }
            false
        })
        .map(|d| d.id.clone())
        .collect();
    RustRemovals { gone, stubbed, emptied: emptied_impls, removed_files: BTreeSet::new() }
}

/// Whether `id` or one of its ancestors is in `set`.
fn under(index: &DefinitionIndex, id: &str, set: &BTreeSet<NodeId>, skip_self: bool) -> bool {
    let mut cur = if skip_self { index.get(id).and_then(|d| d.parent.clone()) } else { Some(id.to_string()) };
    let mut hops = 0;
    while let Some(c) = cur {
        if set.contains(&c) {
            return true;
        }
        hops += 1;
        if hops > 64 {
            return false;
        }
        cur = index.get(&c).and_then(|d| d.parent.clone());
    }
    false
}

/// Widen `[start, end)` to whole lines when only whitespace shares them, and swallow one
/// blank line after when one precedes (so removing an item leaves one blank line).
fn whole_lines(src: &str, start: usize, end: usize) -> (usize, usize) {
    let b = src.as_bytes();
    let mut s = start;
    while s > 0 && (b[s - 1] == b' ' || b[s - 1] == b'\t') {
        s -= 1;
    }
    let at_line_start = s == 0 || b[s - 1] == b'\n';
    if !at_line_start {
        s = start;
    }
    let mut e = end;
    while e < b.len() && (b[e] == b' ' || b[e] == b'\t' || b[e] == b'\r') {
        e += 1;
    }
    if e < b.len() && b[e] == b'\n' && at_line_start {
        e += 1;
        let blank_before = s == 0 || (s >= 2 && b[s - 2] == b'\n') || (s >= 3 && &b[s - 3..s - 1] == b"\r\n");
        let mut n = e;
        while n < b.len() && (b[n] == b' ' || b[n] == b'\t' || b[n] == b'\r') {
            n += 1;
        }
        if blank_before && n < b.len() && b[n] == b'\n' {
            e = n + 1;
        }
    } else {
        e = end;
    }
    (s, e)
}

/// Remove one leaf of a `use` list with its comma.
/// Deletions of the `use` leaves at `spans` (of one `use`, not all its leaves). Dead
/// neighbours (`{Circle, Rect, Shape}` keeping `Circle`) go as one run, so that the comma
/// between them is not claimed twice.
fn leaf_edits(source: &str, mut spans: Vec<(usize, usize)>) -> Vec<Edit> {
    spans.sort();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (s, e) in spans {
        match runs.last_mut() {
            Some(last) if source.get(last.1..s).is_some_and(|gap| gap.trim() == ",") => last.1 = e,
            _ => runs.push((s, e)),
        }
    }
    runs.into_iter().map(|(s, e)| leaf_edit(source, s, e)).collect()
}

fn leaf_edit(src: &str, start: usize, end: usize) -> Edit {
    let b = src.as_bytes();
    let mut e = end;
    while e < b.len() && b[e].is_ascii_whitespace() {
        e += 1;
    }
    if e < b.len() && b[e] == b',' {
        e += 1;
        while e < b.len() && (b[e] == b' ' || b[e] == b'\t') {
            e += 1;
        }
        return Edit::delete(start, e);
    }
    let mut s = start;
    while s > 0 && b[s - 1].is_ascii_whitespace() {
        s -= 1;
    }
    if s > 0 && b[s - 1] == b',' {
        return Edit::delete(s - 1, end);
    }
    Edit::delete(start, end)
}

/// `{ todo!() }` at the definition's indentation; an `impl Iterator` return also gets
/// `std::iter::empty()` after it, since `!` does not implement `Iterator`.
fn stub_body(d: &Definition, indent: &str) -> String {
    let returns = d.signature.returns.as_deref().unwrap_or("");
    if returns.trim_start().starts_with("impl") && returns.contains("Iterator") {
        format!("{{\n{indent}    todo!();\n{indent}    std::iter::empty()\n{indent}}}")
    } else {
        format!("{{\n{indent}    todo!()\n{indent}}}")
    }
}

fn line_indent(src: &str, at: usize) -> &str {
    let start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &src[start..];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// Edits that mask one Rust file (see the module documentation for the rules) with the
/// rules already applied to the whole removal (see [`plan`]).
pub fn mask_file_with(
    source: &str,
    file: &FileIndex,
    index: &DefinitionIndex,
    removals: &RustRemovals,
) -> Result<Vec<Edit>, MaskError> {
    let shells = impl_shells(source, file, index, removals);
    let kept_gone;
    let gone = if shells.is_empty() {
        &removals.gone
    } else {
        kept_gone = removals.gone.difference(&shells).cloned().collect::<BTreeSet<_>>();
        &kept_gone
    };
    let mut edits = Vec::new();
    for id in &file.definitions {
        let Some(d) = index.get(id) else { continue };
        if d.span.end_byte > source.len()
            || !source.is_char_boundary(d.span.start_byte)
            || !source.is_char_boundary(d.span.end_byte)
        {
            return Err(MaskError::DefinitionNotFound { path: file.path.clone(), id: id.clone(), line: d.def_line });
        }
        let parent_here = d.parent.as_deref().and_then(|p| index.get(p)).filter(|p| p.path == file.path);
        let ancestor_gone = parent_here.is_some() && under(index, id, gone, true) && {
            // Only an ancestor in this file removes the text around us.
            let mut cur = d.parent.clone();
            let mut found = false;
            while let Some(c) = cur {
                let Some(x) = index.get(&c) else { break };
                if x.path != file.path {
                    break;
                }
                if gone.contains(&c) {
                    found = true;
                    break;
                }
                cur = x.parent.clone();
            }
            found
        };
        if ancestor_gone {
            continue;
        }
        if gone.contains(id) {
            let (s, e) = whole_lines(source, d.span.start_byte, d.span.end_byte);
            edits.push(Edit::delete(s, e));
        } else if removals.stubbed.contains(id)
            && let Some(body) = d.body
        {
            let indent = line_indent(source, body.start_byte.min(source.len()));
            let text = stub_body(d, indent);
            edits.push(Edit::replace(body.start_byte, body.end_byte, text));
        }
    }
    for (s, e) in mod_decls::declaring(source, &file.path, &removals.removed_files) {
        let (s, e) = whole_lines(source, s, e);
        edits.push(Edit::delete(s, e));
    }
    // `use` leaves whose target goes, or that only removed tests named.
    let test_uses: BTreeMap<usize, Vec<usize>> =
        test_removal::dead_test_uses(source, file, index, gone).into_iter().collect();
    for (i, import) in file.imports.iter().enumerate() {
        if import.span.end_byte > source.len() {
            return Err(MaskError::ImportNotFound { path: file.path.clone(), line: import.span.start_line });
        }
        let inside_gone = file.definitions.iter().filter_map(|i| index.get(i)).any(|d| {
            gone.contains(&d.id)
                && d.span.start_byte <= import.span.start_byte
                && import.span.end_byte <= d.span.end_byte
        });
        if inside_gone {
            continue;
        }
        let only_tests = test_uses.get(&i).map(Vec::as_slice).unwrap_or(&[]);
        let dead: Vec<_> = import
            .names
            .iter()
            .enumerate()
            .filter(|(k, n)| {
                only_tests.contains(k)
                    || n.target.as_ref().is_some_and(|t| gone.contains(t) || under(index, t, gone, false))
            })
            .map(|(_, n)| n)
            .collect();
        if dead.is_empty() {
            continue;
        }
        if dead.len() == import.names.len() {
            let (s, e) = whole_lines(source, import.span.start_byte, import.span.end_byte);
            edits.push(Edit::delete(s, e));
        } else {
            edits.extend(leaf_edits(source, dead.iter().map(|n| (n.span.start_byte, n.span.end_byte)).collect()));
        }
    }
    edits.sort();
    edits.dedup();
    merge_overlapping_deletions(edits, &file.path)
}

/// Two deletions whose ranges overlap become one (their union: both texts go). With a
/// stale index (the file changed since it was indexed) the whole-line ranges of neighbouring
/// items can overlap by a few bytes. Any other overlap (a replacement inside a deletion) is
/// the stale-index error, never edits that do not apply.
fn merge_overlapping_deletions(edits: Vec<Edit>, path: &str) -> Result<Vec<Edit>, MaskError> {
    let mut out: Vec<Edit> = Vec::with_capacity(edits.len());
    for e in edits {
        match out.last_mut() {
            Some(prev) if e.position < prev.end() => {
                if !(prev.inserted_text.is_empty() && e.inserted_text.is_empty()) {
                    return Err(MaskError::EditsOverlap { path: path.to_string(), position: e.position });
                }
                let end = prev.end().max(e.end());
                prev.deleted_length = end - prev.position;
            }
            _ => out.push(e),
        }
    }
    Ok(out)
}

/// The inherent impls of `file` that [`RustRemovals::emptied`] removes but that hold more
/// than functions (`const`s, associated types, macro calls, which code that stays may
/// name: `Flags::A`): they stay, without their methods.
fn impl_shells(source: &str, file: &FileIndex, index: &DefinitionIndex, removals: &RustRemovals) -> BTreeSet<NodeId> {
    let candidates: Vec<&Definition> = file
        .definitions
        .iter()
        .filter(|id| removals.emptied.contains(*id) && !under(index, id, &removals.gone, true))
        .filter_map(|id| index.get(id))
        .collect();
    if candidates.is_empty() {
        return BTreeSet::new();
    }
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&Language::Rust.grammar()).is_err() {
        return BTreeSet::new();
    }
    let Some(tree) = parser.parse(source, None) else { return BTreeSet::new() };
    candidates
        .into_iter()
        .filter(|d| {
            let Some(body) = d.body else { return false };
            let node = tree.root_node().descendant_for_byte_range(body.start_byte, body.end_byte);
            node.filter(|n| n.kind() == "declaration_list").is_some_and(|list| {
                let mut cursor = list.walk();
                list.named_children(&mut cursor)
                    .any(|c| !matches!(c.kind(), "function_item" | "attribute_item" | "line_comment" | "block_comment"))
            })
        })
        .map(|d| d.id.clone())
        .collect()
}
