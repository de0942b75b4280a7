//! The short ids a common harness reports for pytest tests: SWE-bench's `parse_log_pytest`
//! (`swebench/harness/log_parsers/python.py`), re-implemented from its behaviour, and the
//! mapping from carve's ids to the names it yields.
//!
//! The parser reads a `pytest -rA` log line by line (split on `\n` only) and keeps, per
//! name, the status of the last line that names it:
//! - status first, `^(FAILED|PASSED|SKIPPED|ERROR|XFAIL)\s+(\S+)` (the `-rA` summary): the
//!   name is the first whitespace-delimited word after the status; for `FAILED` it is taken
//!   again after replacing every ` - ` of the line with a space (the ` - message` tail),
//!   which yields the same word; a `SKIPPED` name starting with `[digits]` is a skip count
//!   (`SKIPPED [1] tests/a.py:10: reason`) and names no test;
//! - else name first, `^(\S+)\s+(STATUS)(?:\s|$)` (the `-v` progress lines).
//!
//! Names stop at the first whitespace, so a parametrized id with spaces in its parameters
//! (`t.py::test[two words]`) is reported cut (`t.py::test[two`), and such a test's `-v`
//! line names nothing (its second word is not a status). Plain skips appear only in `-v`
//! lines (the `-rA` summary lists them by location); xfails as `XFAIL`; xpasses not at all.
//! Whitespace is Python's (`str.isspace`: Unicode White_Space plus U+001C–U+001F).

use std::collections::BTreeMap;

/// SWE-bench's statuses, in its `TestStatus` order.
pub const FAILED: &str = "FAILED";
pub const PASSED: &str = "PASSED";
pub const SKIPPED: &str = "SKIPPED";
pub const ERROR: &str = "ERROR";
pub const XFAIL: &str = "XFAIL";
const STATUSES: [&str; 5] = [FAILED, PASSED, SKIPPED, ERROR, XFAIL];

/// `parse_log_pytest`: test name → status, from a `pytest -rA` (optionally `-v`) log.
pub fn parse_log_pytest(log: &str) -> BTreeMap<String, &'static str> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        if let Some((name, status)) = parse_result_line(line) {
            out.insert(name, status);
        }
    }
    out
}

/// The name `parse_log_pytest` reports for carve id `id` (a pytest node id): the id up to
/// its first whitespace. `None` for an id that starts with whitespace or is empty (never
/// a pytest node id).
pub fn harness_id(id: &str) -> Option<String> {
    let word = id.split(is_space).next().unwrap_or("");
    (!word.is_empty()).then(|| word.to_string())
}

/// Python's `str.isspace` (and `\s` of a `str` regex).
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()` with no argument.
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(is_space).filter(|w| !w.is_empty())
}

fn parse_result_line(line: &str) -> Option<(String, &'static str)> {
    // ^(STATUS)\s+(\S+)
    for status in STATUSES {
        let Some(rest) = line.strip_prefix(status) else {
            continue;
        };
        let trimmed = rest.trim_start_matches(is_space);
        if trimmed.len() == rest.len() {
            continue;
        }
        let Some(name) = trimmed.split(is_space).next().filter(|w| !w.is_empty()) else {
            continue;
        };
        let name =
            if status == FAILED { words(&line.replace(" - ", " ")).nth(1)?.to_string() } else { name.to_string() };
        if status == SKIPPED && starts_with_skip_count(&name) {
            return None;
        }
        return Some((name, status));
    }
    // ^(\S+)\s+(STATUS)(?:\s|$)
    let end = line.find(is_space)?;
    let (name, rest) = line.split_at(end);
    if name.is_empty() {
        return None;
    }
    let rest = rest.trim_start_matches(is_space);
    STATUSES.into_iter().find_map(|status| {
        let after = rest.strip_prefix(status)?;
        (after.is_empty() || after.starts_with(is_space)).then(|| (name.to_string(), status))
    })
}

/// `\[\d+\]` at the start (ASCII digits: pytest's counts).
fn starts_with_skip_count(name: &str) -> bool {
    name.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(log: &str) -> Vec<(String, &'static str)> {
        parse_log_pytest(log).into_iter().collect()
    }

    #[test]
    fn reads_the_summary_and_progress_lines_like_swebench() {
        let log = "tests/a.py::test_v PASSED                     [ 10%]\n\
                   tests/a.py::test_s SKIPPED (no reason)       [ 20%]\n\
                   tests/a.py::test_p[two words] PASSED         [ 30%]\n\
                   tests/a.py::test_x XPASS\n\
                   PASSED tests/a.py::test_p[two words]\n\
                   SKIPPED [2] tests/a.py:10: skipped on purpose\n\
                   XFAIL tests/a.py::test_xf - known bug\n\
                   ERROR tests/a.py::test_e - RuntimeError: boom\n\
                   FAILED tests/a.py::test_f[a - b] - assert 1 == 2\r\n\
                   FAILED tests/a.py::test_v - now failing\n\
                   PASSED\n  PASSED tests/indented.py::t\nPASSEDX tests/a.py::no\n\
                   ===== 1 failed, 2 passed in 0.1s =====";
        let want: Vec<(String, &str)> = [
            ("tests/a.py::test_e", ERROR),
            ("tests/a.py::test_f[a", FAILED),
            ("tests/a.py::test_p[two", PASSED),
            ("tests/a.py::test_s", SKIPPED),
            ("tests/a.py::test_v", FAILED),
            ("tests/a.py::test_xf", XFAIL),
        ]
        .into_iter()
        .map(|(n, s)| (n.to_string(), s))
        .collect();
        assert_eq!(parsed(log), want);
    }

    #[test]
    fn a_failed_line_is_read_after_dropping_dashes() {
        // `FAILED - x`: the regex finds `-`, the replaced line's second word is `x`.
        assert_eq!(parsed("FAILED - x"), vec![("x".to_string(), FAILED)]);
        assert_eq!(parsed("ERROR - x"), vec![("-".to_string(), ERROR)]);
        assert_eq!(parsed("SKIPPED [1]x"), vec![]);
        assert_eq!(parsed("SKIPPED [a] t.py::x"), vec![("[a]".to_string(), SKIPPED)]);
    }

    #[test]
    fn harness_ids_stop_at_whitespace() {
        assert_eq!(harness_id("t.py::C::test[a - b]").as_deref(), Some("t.py::C::test[a"));
        assert_eq!(harness_id("t.py::test[a\u{1f}b]").as_deref(), Some("t.py::test[a"));
        assert_eq!(harness_id("t.py::test[a[0]]").as_deref(), Some("t.py::test[a[0]]"));
        assert_eq!(harness_id(" x"), None);
    }
}
