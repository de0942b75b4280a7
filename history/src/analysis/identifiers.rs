//! Identifiers a commit wrote: the identifier-like tokens on the lines it added inside
//! definitions, and the rows of table-driven tests that name what their test exercises.

use std::collections::{BTreeMap, BTreeSet};

/// Identifiers on the lines of `new` that are not in `old` (all of `new` when `old` is
/// none) and that lie inside a definition (`ranges`, byte spans in `new`): the code a commit
/// wrote, not its import lines or other module-level statements.
pub(super) fn added_code_identifiers(old: Option<&[u8]>, new: &[u8], ranges: &[(usize, usize)]) -> BTreeSet<String> {
    let n = std::str::from_utf8(new).unwrap_or("");
    let o = old.and_then(|o| std::str::from_utf8(o).ok()).unwrap_or("");
    let mut starts = vec![0usize];
    starts.extend(n.match_indices('\n').map(|(i, _)| i + 1));
    let inside = |line: usize| {
        let at = starts.get(line).copied().unwrap_or(usize::MAX);
        ranges.iter().any(|&(s, e)| at >= s && at < e)
    };
    let mut out = BTreeSet::new();
    let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(o, n);
    for change in diff.iter_all_changes() {
        if change.tag() == similar::ChangeTag::Insert && change.new_index().is_some_and(inside) {
            identifiers(change.value(), &mut out);
        }
    }
    out
}

/// Identifiers of each test definition (`tests`: byte ranges in `new`) whose lines the commit
/// added are data only: no call on them, as in a new row of a table-driven test
/// (`{ input: ["../a", "../b"], out: "b" },` in the `relativeTests` array of unjs/ufo's
/// `describe("joinRelativeURL")`). Such a row names no code itself; the test that runs the
/// table does, so the whole test definition's identifiers count. The innermost test definition
/// holding a line is the one that counts, and only when it is a test function that holds tests
/// itself (a `describe` block whose loop makes a test per row; `tests`: start, end, whether a
/// test function): a row inside a test that holds none is that test's own data. Used for the
/// languages whose tests are made in blocks (`LanguageFacts::tests_in_blocks`: JavaScript,
/// TypeScript); elsewhere every function of a test file is test code, so a helper nested in a
/// test would make it look like a block.
pub(super) fn table_test_identifiers(
    old: Option<&[u8]>,
    new: &[u8],
    tests: &[(usize, usize, bool)],
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if tests.is_empty() {
        return out;
    }
    let n = std::str::from_utf8(new).unwrap_or("");
    let o = old.and_then(|o| std::str::from_utf8(o).ok()).unwrap_or("");
    let mut starts = vec![0usize];
    starts.extend(n.match_indices('\n').map(|(i, _)| i + 1));
    // Per innermost test definition: whether any added line of it calls something.
    let mut rows: BTreeMap<(usize, usize, bool), bool> = BTreeMap::new();
    let diff = similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_lines(o, n);
    for change in diff.iter_all_changes() {
        if change.tag() != similar::ChangeTag::Insert {
            continue;
        }
        let Some(at) = change.new_index().and_then(|l| starts.get(l).copied()) else { continue };
        let Some(&innermost) = tests
            .iter()
            .filter(|&&(s, e, _)| at >= s && at < e)
            .min_by_key(|&&(s, e, _)| (e - s, std::cmp::Reverse(s)))
        else {
            continue;
        };
        if change.value().trim().is_empty() {
            continue;
        }
        *rows.entry(innermost).or_insert(false) |= has_call(change.value());
    }
    for ((s, e, function), calls) in rows {
        // Only a test function that holds tests (a `describe`) feeds its table to the tests it
        // makes; a row inside a test that holds none stays that test's own data.
        let holds_tests = tests.iter().any(|&(ts, te, _)| (ts, te) != (s, e) && s <= ts && te <= e);
        if !calls && function && holds_tests {
            identifiers(&n[s.min(n.len())..e.min(n.len())], &mut out);
        }
    }
    out
}

/// Whether `line` calls something: an identifier followed by `(` (outside nothing cleverer:
/// a parenthesis inside a string counts too, which only makes a row count as code).
fn has_call(line: &str) -> bool {
    let b = line.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'(' && {
            let before = line[..i].trim_end();
            before.chars().next_back().is_some_and(|p| p.is_ascii_alphanumeric() || p == '_' || p == '$')
        }
    })
}

/// Identifier-like tokens (`[A-Za-z_][A-Za-z0-9_]*`) of `text`, two characters or longer.
pub fn identifiers(text: &str, out: &mut BTreeSet<String>) {
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) if !c.is_ascii_digit() => start = Some(i),
            (Some(s), false) => {
                if i - s >= 2 {
                    out.insert(text[s..i].to_string());
                }
                start = None;
            }
            _ => {}
        }
    }
}
