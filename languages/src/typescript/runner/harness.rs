//! SWE-bench's log parsers for jest, vitest and mocha, re-implemented from their documented
//! behaviour (`swebench/harness/log_parsers/javascript.py`: `parse_log_jest` reads jest's
//! `--verbose` output, `parse_log_vitest` vitest's `--reporter=verbose` output,
//! `parse_log_tap` TAP lines, which mocha's `--reporter tap` prints: SWE-bench has no parser
//! of mocha's spec output), and the short id such a parser reports for a carve id
//! ([`harness_id`]).
//!
//! Both parsers look at each line, stripped: jest `^(✓|✕|○)\s(.+?)(?:\s\((\d+\s*m?s)\))?$`
//! gives the test's title only (describe blocks and file are not printed on the line);
//! vitest `^(✓|×|↓)\s(.+?)(?:\s(\d+\s*m?s?|\[skipped\]))?$` gives the whole
//! `path > describe > test` line. Both are not unique in general (jest titles repeat across
//! files and describe blocks), which is why carve keeps its own ids.

use std::collections::BTreeMap;

use crate::runner::TestStatus;

/// SWE-bench's `parse_log_jest`: `✓` passed, `✕` failed, `○` skipped (jest prints
/// `○ skipped <title>`, so the name keeps the word).
pub fn parse_log_jest(log: &str) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        let line = line.trim();
        let Some((status, rest)) =
            symbol(line, &[("✓", TestStatus::Passed), ("✕", TestStatus::Failed), ("○", TestStatus::Skipped)])
        else {
            continue;
        };
        if let Some(name) = lazy_name(rest, jest_suffix) {
            out.insert(name.to_string(), status);
        }
    }
    out
}

/// SWE-bench's `parse_log_vitest`: `✓` passed, `×` failed, `↓` skipped.
pub fn parse_log_vitest(log: &str) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        let line = line.trim();
        let Some((status, rest)) =
            symbol(line, &[("✓", TestStatus::Passed), ("×", TestStatus::Failed), ("↓", TestStatus::Skipped)])
        else {
            continue;
        };
        if let Some(name) = lazy_name(rest, vitest_suffix) {
            out.insert(name.to_string(), status);
        }
    }
    out
}

/// SWE-bench's `parse_log_tap`: each stripped line `^(ok|not ok) (\d+) (.+)$`, `ok` passed,
/// `not ok` failed. mocha's TAP reporter prints a pending test `ok N <title> # SKIP -`: the
/// parser reports it as passed, under that name.
pub fn parse_log_tap(log: &str) -> BTreeMap<String, TestStatus> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        let line = line.trim();
        let (status, rest) = if let Some(rest) = line.strip_prefix("not ok ") {
            (TestStatus::Failed, rest)
        } else if let Some(rest) = line.strip_prefix("ok ") {
            (TestStatus::Passed, rest)
        } else {
            continue;
        };
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if let Some(name) = rest[digits..].strip_prefix(' ').filter(|n| digits > 0 && !n.is_empty()) {
            out.insert(name.to_string(), status);
        }
    }
    out
}

/// The name SWE-bench's parser reports for carve id `id` of a test that ran (passed or
/// failed): jest the title (the id's last component), vitest the id itself as vitest ≥ 3
/// prints it (`<id> <duration>ms`), mocha (TAP) the full title: the titles after the file
/// joined by spaces, without `#` (mocha's TAP reporter drops them).
pub fn harness_id(kind: super::Kind, id: &str) -> Option<String> {
    harness_id_for(kind, id, TestStatus::Passed)
}

/// The name SWE-bench's parser reports for a test with `status`: skipped jest tests are
/// printed `○ skipped <title>`, skipped vitest tests without a duration (so a name ending
/// in a number loses it, as the parser's lazy pattern does). `None`: the parser never
/// reports such a test (node:test, or a status that prints no line).
pub fn harness_id_for(kind: super::Kind, id: &str, status: TestStatus) -> Option<String> {
    let title = id.rsplit(" > ").next().unwrap_or(id);
    match (kind, status) {
        (super::Kind::Jest, TestStatus::Passed | TestStatus::Failed) => Some(format!("✓ {title} (1 ms)")),
        (super::Kind::Jest, TestStatus::Skipped) => Some(format!("○ skipped {title}")),
        (super::Kind::Vitest, TestStatus::Passed | TestStatus::Failed) => Some(format!("✓ {id} 1ms")),
        (super::Kind::Vitest, TestStatus::Skipped) => Some(format!("↓ {id}")),
        (super::Kind::Mocha, TestStatus::Passed | TestStatus::Failed | TestStatus::Skipped) => {
            let full = id.split(" > ").skip(1).collect::<Vec<_>>().join(" ").replace('#', "");
            let skip = if status == TestStatus::Skipped { " # SKIP -" } else { "" };
            Some(format!("ok 1 {full}{skip}"))
        }
        _ => None,
    }
    .and_then(|line| {
        let parsed = match kind {
            super::Kind::Jest => parse_log_jest(&line),
            super::Kind::Mocha => parse_log_tap(&line),
            _ => parse_log_vitest(&line),
        };
        parsed.into_keys().next()
    })
}

/// The line without its leading status symbol and the one whitespace after it.
fn symbol<'a>(line: &'a str, symbols: &[(&str, TestStatus)]) -> Option<(TestStatus, &'a str)> {
    for (sym, status) in symbols {
        if let Some(rest) = line.strip_prefix(sym) {
            let mut chars = rest.chars();
            let ws = chars.next()?;
            if ws.is_whitespace() && !chars.as_str().is_empty() {
                return Some((*status, chars.as_str()));
            }
        }
    }
    None
}

/// The shortest non-empty prefix of `rest` such that what follows it is empty or a suffix
/// `suffix` accepts: the regex `(.+?)(?:\s(<suffix>))?$`.
fn lazy_name(rest: &str, suffix: fn(&str) -> bool) -> Option<&str> {
    let mut ends: Vec<usize> = rest.char_indices().map(|(i, _)| i).skip(1).collect();
    ends.push(rest.len());
    ends.into_iter()
        .find(|&end| {
            let tail = &rest[end..];
            tail.is_empty()
                || tail.chars().next().is_some_and(char::is_whitespace)
                    && suffix(&tail[tail.chars().next().map_or(0, char::len_utf8)..])
        })
        .map(|end| &rest[..end])
}

/// `\((\d+\s*m?s)\)` and nothing after.
fn jest_suffix(s: &str) -> bool {
    s.strip_prefix('(').and_then(|s| s.strip_suffix(')')).is_some_and(|inner| duration(inner, true))
}

/// `(\d+\s*m?s?|\[skipped\])` and nothing after.
fn vitest_suffix(s: &str) -> bool {
    s == "[skipped]" || duration(s, false)
}

/// `\d+\s*m?s` (`s_required`) or `\d+\s*m?s?`.
fn duration(s: &str, s_required: bool) -> bool {
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return false;
    }
    let rest = s[digits..].trim_start_matches(char::is_whitespace);
    let rest = rest.strip_prefix('m').unwrap_or(rest);
    match rest {
        "" => !s_required,
        "s" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::typescript::runner::Kind;

    #[test]
    fn jest_lines_give_titles_without_durations() {
        let log = "PASS tests/a.test.js\n  divide\n    ✓ divides (3 ms)\n    ✕ breaks (12 ms)\n    ○ skipped later\n    ✎ todo someday\n  ✓ no duration\n";
        let got = parse_log_jest(log);
        let want: BTreeMap<String, TestStatus> = [
            ("divides", TestStatus::Passed),
            ("breaks", TestStatus::Failed),
            ("skipped later", TestStatus::Skipped),
            ("no duration", TestStatus::Passed),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn vitest_lines_keep_the_path_and_lose_a_trailing_number_like_the_regex() {
        let log = " ✓ t/a.test.ts > divide > divide(1, 1) = 1 0ms\n × t/a.test.ts > fails 97ms\n ↓ t/a.test.ts > is skipped\n ✓ t/b.test.ts > costs 1\n";
        let got = parse_log_vitest(log);
        assert_eq!(got.get("t/a.test.ts > divide > divide(1, 1) = 1"), Some(&TestStatus::Passed));
        assert_eq!(got.get("t/a.test.ts > fails"), Some(&TestStatus::Failed));
        assert_eq!(got.get("t/a.test.ts > is skipped"), Some(&TestStatus::Skipped));
        // `(.+?)(?:\s(\d+\s*m?s?))?$` takes " 1" for a duration.
        assert_eq!(got.get("t/b.test.ts > costs"), Some(&TestStatus::Passed));
        assert_eq!(
            harness_id_for(Kind::Vitest, "t/b.test.ts > costs 1", TestStatus::Skipped).as_deref(),
            Some("t/b.test.ts > costs")
        );
        assert_eq!(harness_id(Kind::Vitest, "t/b.test.ts > costs 1").as_deref(), Some("t/b.test.ts > costs 1"));
        assert_eq!(harness_id(Kind::Jest, "t/a.test.js > d > works").as_deref(), Some("works"));
        assert_eq!(harness_id(Kind::NodeTest, "t/a.test.js > x"), None);
    }

    #[test]
    fn tap_lines_give_mochas_full_titles() {
        let log = "1..4\nok 1 area of a circle\nnot ok 2 cases fails on purpose\n  AssertionError\nok 3 cases is skipped # SKIP -\nok 4 top\n# tests 4\nok x no number\n";
        let got = parse_log_tap(log);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got.get("area of a circle"), Some(&TestStatus::Passed));
        assert_eq!(got.get("cases fails on purpose"), Some(&TestStatus::Failed));
        assert_eq!(got.get("cases is skipped # SKIP -"), Some(&TestStatus::Passed));
        assert_eq!(harness_id(Kind::Mocha, "test/a.js > area > of a circle").as_deref(), Some("area of a circle"));
        assert_eq!(harness_id(Kind::Mocha, "test/a.js > issue #12 > top").as_deref(), Some("issue 12 top"));
        assert_eq!(
            harness_id_for(Kind::Mocha, "test/c.js > cases > is skipped", TestStatus::Skipped).as_deref(),
            Some("cases is skipped # SKIP -")
        );
    }
}
