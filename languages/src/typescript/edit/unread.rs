//! Module-level bindings the mask leaves unread: an `import` name, a private (not
//! exported) `const`/`let`/`var` or a private function declaration that was read before the mask and is named only inside
//! removed code afterwards (deleted definitions, stubbed bodies, removed test cases).
//! Projects built with `noUnusedLocals` fail on them ("TS6133: 'x' is declared but its
//! value is never read"), so the mask drops them too; the gold patch brings them back.
//!
//! This goes by names in the syntax tree, not by the index's resolved targets, so it also
//! covers names that bind no definition of the index: packages (`import zeptomatch from
//! "zeptomatch"`), plain constants of other modules, and the file's own regular
//! expressions and tables (`const _EXTNAME_RE = /…/`). A name counts as read wherever an
//! identifier spells it outside its own declaration, so a local that shadows it keeps it
//! (the safe side: keeping too much is what the build check would report, never a
//! behaviour change). A private constant goes only when its initializer runs nothing at
//! load time (literals, regular expressions, arrays and objects of them, `new Set(…)` and
//! the like), so dropping it cannot change what the remaining code sees; constants that
//! only dropped constants read go in the same pass.
//!
//! A `private` class member (a field or a constructor's parameter property) that only
//! removed code read (TS6133/TS6138 under `noUnusedLocals`) is made `public` instead: it
//! stays, so the kept code that writes it still builds (and a parameter property stays a
//! property), and a public member is not checked for reads. Writes (`this.x = …`) are no reads, as for `tsc`.

use std::collections::BTreeSet;

use tree_sitter::Node;

use crate::edit::Edit;
use crate::index::FileIndex;

/// What the mask drops besides its own edits.
#[derive(Debug, Default)]
pub(super) struct Unread {
    /// `(import, name)` positions in `file.imports` of import names left unread.
    pub names: BTreeSet<(usize, usize)>,
    /// Byte ranges of private module-level declarations left unread.
    pub ranges: Vec<(usize, usize)>,
    /// `private` → `public` of class members left unread.
    pub edits: Vec<Edit>,
}

/// Identifier occurrences of a file: `(text, start byte)`, in source order.
fn identifiers<'s>(src: &'s str, root: Node) -> Vec<(&'s str, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "identifier" | "type_identifier" | "shorthand_property_identifier") {
            out.push((&src[n.start_byte()..n.end_byte()], n.start_byte()));
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    out.sort_by_key(|(_, at)| *at);
    out
}

/// A private module-level declarator `name = value` with a value that runs nothing.
struct Constant<'s> {
    name: &'s str,
    /// The declarator (its name excluded from the uses).
    span: (usize, usize),
    /// What deleting it removes: the statement, or the declarator and its comma.
    delete: (usize, usize),
}

fn constants<'s>(src: &'s str, root: Node) -> Vec<Constant<'s>> {
    let mut out = Vec::new();
    let mut c = root.walk();
    for stmt in root.named_children(&mut c) {
        // A private function declaration runs nothing at load time either; removing one
        // definition alone leaves the private helpers only it called unread.
        if matches!(stmt.kind(), "function_declaration" | "generator_function_declaration") {
            if let Some(name) = stmt.child_by_field_name("name") {
                out.push(Constant {
                    name: &src[name.start_byte()..name.end_byte()],
                    span: (stmt.start_byte(), stmt.end_byte()),
                    delete: super::deletion_range(src, stmt.start_byte(), stmt.end_byte(), root),
                });
            }
            continue;
        }
        if !matches!(stmt.kind(), "lexical_declaration" | "variable_declaration") {
            continue;
        }
        let mut c2 = stmt.walk();
        let declarators: Vec<Node> =
            stmt.named_children(&mut c2).filter(|n| n.kind() == "variable_declarator").collect();
        for d in &declarators {
            let Some(name) = d.child_by_field_name("name").filter(|n| n.kind() == "identifier") else {
                continue;
            };
            let Some(value) = d.child_by_field_name("value") else { continue };
            if !runs_nothing(src, value) {
                continue;
            }
            let delete = if declarators.len() == 1 {
                super::deletion_range(src, stmt.start_byte(), stmt.end_byte(), root)
            } else {
                super::declarator_range(src, *d)
            };
            out.push(Constant {
                name: &src[name.start_byte()..name.end_byte()],
                span: (d.start_byte(), d.end_byte()),
                delete,
            });
        }
    }
    out
}

/// Constructors whose `new` runs no code of the project.
const PURE_NEW: &[&str] = &["Set", "Map", "WeakMap", "WeakSet", "RegExp", "Array", "Object"];

/// Whether evaluating `value` at load time runs nothing (no call but `Symbol(…)` /
/// `Symbol.for(…)`, no `new` but of [`PURE_NEW`], no assignment). A function value runs
/// nothing until called.
fn runs_nothing(src: &str, value: Node) -> bool {
    // A class expression may run static blocks and initializers; a function's body does not
    // run when the function is made.
    if value.kind() == "class" {
        return false;
    }
    let mut stack = vec![value];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "call_expression" => {
                let callee = n.child_by_field_name("function").map_or("", |f| &src[f.start_byte()..f.end_byte()]);
                if !matches!(callee, "Symbol" | "Symbol.for") {
                    return false;
                }
            }
            "new_expression" => {
                let ctor = n.child_by_field_name("constructor").map_or("", |f| &src[f.start_byte()..f.end_byte()]);
                if !PURE_NEW.contains(&ctor) {
                    return false;
                }
            }
            "assignment_expression"
            | "augmented_assignment_expression"
            | "update_expression"
            | "await_expression"
            | "yield_expression"
            | "tagged_template_string" => return false,
            // A nested function's body does not run while the constant is made.
            "arrow_function" | "function_expression" | "function" => continue,
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    true
}

fn inside(ranges: &[(usize, usize)], at: usize) -> bool {
    ranges.iter().any(|(s, e)| *s <= at && at < *e)
}

/// The import names and private constants of `file` that were read before the mask and
/// are not after it, given the byte ranges the mask deletes or replaces (`removed`).
pub(super) fn unread(src: &str, root: Node, file: &FileIndex, removed: &[(usize, usize)]) -> Unread {
    let idents = identifiers(src, root);
    // Whether `name` is spelled outside `own` (its declaration) and outside `gone`.
    let read = |name: &str, own: (usize, usize), gone: &[(usize, usize)]| {
        idents.iter().any(|(t, at)| *t == name && !(own.0 <= *at && *at < own.1) && !inside(gone, *at))
    };
    let mut gone: Vec<(usize, usize)> = removed.to_vec();
    let mut out = Unread::default();
    // Constants first, to a fixed point: one only dropped constants read goes too.
    let mut candidates: Vec<Constant> =
        constants(src, root).into_iter().filter(|k| !inside(removed, k.span.0) && read(k.name, k.span, &[])).collect();
    loop {
        let before = candidates.len();
        let (drop, keep): (Vec<Constant>, Vec<Constant>) =
            candidates.into_iter().partition(|k| !read(k.name, k.span, &gone));
        for k in &drop {
            gone.push(k.span);
            out.ranges.push(k.delete);
        }
        candidates = keep;
        if candidates.len() == before {
            break;
        }
    }
    out.edits = private_members(src, root, &gone);
    for (i, imp) in file.imports.iter().enumerate() {
        if !src.get(imp.span.start_byte..).is_some_and(|t| t.starts_with("import"))
            || inside(removed, imp.span.start_byte)
        {
            continue;
        }
        let own = (imp.span.start_byte, imp.span.end_byte);
        for (j, n) in imp.names.iter().enumerate() {
            let local = n.alias.as_deref().unwrap_or(&n.name);
            if local.is_empty() || local == "default" || local == "*" {
                continue;
            }
            if read(local, own, &[]) && !read(local, own, &gone) {
                out.names.insert((i, j));
            }
        }
    }
    out
}

/// `private` → `public` for the class members that are read before the mask and not
/// outside `gone` after it.
fn private_members(src: &str, root: Node, gone: &[(usize, usize)]) -> Vec<Edit> {
    let (mut members, mut reads): (Vec<(&str, Node)>, Vec<(&str, usize)>) = (Vec::new(), Vec::new());
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "public_field_definition" | "required_parameter" | "optional_parameter" => {
                let mut c = n.walk();
                let private = n
                    .children(&mut c)
                    .find(|m| m.kind() == "accessibility_modifier" && &src[m.start_byte()..m.end_byte()] == "private");
                let name = n.child_by_field_name("name").or_else(|| n.child_by_field_name("pattern"));
                if let (Some(m), Some(name)) = (private, name)
                    && matches!(name.kind(), "property_identifier" | "identifier")
                    && !inside(gone, n.start_byte())
                {
                    members.push((&src[name.start_byte()..name.end_byte()], m));
                }
            }
            "member_expression" => {
                let written = n.parent().is_some_and(|p| {
                    p.kind() == "assignment_expression"
                        && p.child_by_field_name("left").is_some_and(|l| l.id() == n.id())
                });
                if let Some(p) = n.child_by_field_name("property").filter(|_| !written) {
                    reads.push((&src[p.start_byte()..p.end_byte()], p.start_byte()));
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    let mut out = Vec::new();
    for (name, modifier) in members {
        let read_before = reads.iter().any(|(t, _)| *t == name);
        let read_after = reads.iter().any(|(t, at)| *t == name && !inside(gone, *at));
        if read_before && !read_after {
            out.push(Edit::replace(modifier.start_byte(), modifier.end_byte(), "public".to_string()));
        }
    }
    out
}
