//! The short ids a common harness prints for Rust tests: SWE-bench's `parse_log_cargo`,
//! re-implemented from its documented behaviour, and the mapping from carve's ids to the
//! names it yields.
//!
//! The parser trims each line of a `cargo test` log and matches
//! `^test\s+(\S+)\s+\.\.\.\s+(\w+)$`; `ok` → `PASSED`, `FAILED` → `FAILED`, anything else
//! (`ignored`) is not recorded, and a later line for the same name wins. Its names are
//! libtest's, without the test binary: `tests::adds`, `shared_name` (one name for the
//! `shared_name` of two binaries). Doctest names hold spaces (`src/lib.rs - add (line 8)`),
//! so it never reports doctests, nor ignored tests with a reason, nor `#[should_panic]`
//! tests (libtest prints `test <name> - should panic ... ok`); their harness id is still
//! the name, which that parser just never yields.

use std::collections::BTreeMap;

use super::targets::split_id;

pub const PASSED: &str = "PASSED";
pub const FAILED: &str = "FAILED";

/// `parse_log_cargo`: test name → status.
pub fn parse_log_cargo(log: &str) -> BTreeMap<String, &'static str> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("test") else {
            continue;
        };
        // `\s+(\S+)\s+\.\.\.\s+(\w+)$`
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let [name, dots, outcome] = words[..] else {
            continue;
        };
        if dots != "..." || !outcome.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        match outcome {
            "ok" => {
                out.insert(name.to_string(), PASSED);
            }
            "FAILED" => {
                out.insert(name.to_string(), FAILED);
            }
            _ => {}
        }
    }
    out
}

/// The name `parse_log_cargo` reports for carve id `id` (the libtest name), or `None` for
/// a doctest, which it never reports.
pub fn harness_id(id: &str) -> Option<String> {
    let (_, doc, name) = split_id(id);
    (!doc && !name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_swebench() {
        let log = "running 3 tests\ntest tests::adds ... ok\n  test tests::fails ... FAILED\r\n\
                   test tests::ignored ... ignored, deliberately ignored\ntest tests::plain_ignored ... ignored\n\
                   test src/lib.rs - add (line 8) ... ok\ntest result: ok. 1 passed\ntest\tx::y  ...  ok\n";
        let m = parse_log_cargo(log);
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, vec![("tests::adds", PASSED), ("tests::fails", FAILED), ("x::y", PASSED)]);
    }

    #[test]
    fn harness_ids_drop_the_target() {
        assert_eq!(harness_id("runner_cases::tests::adds").as_deref(), Some("tests::adds"));
        assert_eq!(harness_id("two::shared_name").as_deref(), Some("shared_name"));
        assert_eq!(harness_id("runner_cases::doctest::src/lib.rs - add (line 8)"), None);
    }
}
