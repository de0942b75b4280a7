//! TypeScript and JavaScript (one module: the grammars share almost every node kind):
//! the definition index, masking edits and the `tsc` build check.
//!
//! Node ids follow the shared scheme (`src/money.ts::Money.plus`). Class members are
//! `Class.member`; a getter and a setter of the same property share the qualified name
//! and therefore both get `@L<line>` (`Money.amount@L31`), as do declarations merged
//! under one name (a function and a namespace). Overload signatures belong to their
//! implementation: one definition whose signature text lists every overload, then the
//! implementation's header. Test cases of test files (`describe`/`it`/`test` calls with a
//! title and a callback) are definitions too, named by their title
//! (`tests/money.test.ts::Money.keeps cents exactly`), so that single tests can be removed.

pub mod build;
pub mod detect;
pub mod edit;
pub mod index;
mod link;
mod parse;
mod queries;
pub mod runner;
mod signature;
#[cfg(test)]
mod tests;
pub mod trace;

pub use build::{BuildCheckError, build_check};
pub use index::{index_files, index_sources};

/// The `left` and `right` of the assignment an expression statement holds (`a = b;`, as in
/// `module.exports = { a }` or `exports.x = a`), or `None` for any other statement.
fn assignment_sides(stmt: tree_sitter::Node) -> Option<(tree_sitter::Node, tree_sitter::Node)> {
    let assign = stmt.named_child(0).filter(|a| a.kind() == "assignment_expression")?;
    Some((assign.child_by_field_name("left")?, assign.child_by_field_name("right")?))
}

/// Test code by the jest/vitest conventions: `*.test.*` and `*.spec.*` files, and every
/// file under a `__tests__/` directory.
pub fn is_test_path(rel: &str) -> bool {
    if rel.split('/').any(|c| c == "__tests__") {
        return true;
    }
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let mut parts = name.split('.');
    parts.next();
    let rest: Vec<&str> = parts.collect();
    // `a.test.ts`, `a.spec.tsx`, `a.test.d.ts` is not code but still test-only.
    rest.len() >= 2 && rest[..rest.len() - 1].iter().any(|p| *p == "test" || *p == "spec")
}
