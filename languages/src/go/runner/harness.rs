//! The short ids a common harness prints for Go tests: SWE-bench's `parse_log_gotest`,
//! re-implemented from its documented behaviour, and the mapping from carve's ids to the
//! names it yields.
//!
//! The parser reads a plain `go test -v` log line by line, trims each line and matches
//! `^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$` (the name is the greedy group, so it runs to the
//! last ` (` of the line); PASS → `PASSED`, FAIL → `FAILED`, SKIP → `SKIPPED`, a later line
//! for the same name wins. Its names carry no package: `TestX/sub`, so the same test name
//! in two packages is one name to it.

use std::collections::BTreeMap;

/// SWE-bench's statuses.
pub const PASSED: &str = "PASSED";
pub const FAILED: &str = "FAILED";
pub const SKIPPED: &str = "SKIPPED";

/// `parse_log_gotest`: test name → status, from a plain `go test -v` log.
pub fn parse_log_gotest(log: &str) -> BTreeMap<String, &'static str> {
    let mut out = BTreeMap::new();
    for line in log.split('\n') {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("--- ") else {
            continue;
        };
        let Some((word, rest)) = rest.split_once(": ") else {
            continue;
        };
        let status = match word {
            "PASS" => PASSED,
            "FAIL" => FAILED,
            "SKIP" => SKIPPED,
            _ => continue,
        };
        let Some(inner) = rest.strip_suffix(')') else {
            continue;
        };
        // Greedy `(.+) \((.+)\)`: the last ` (` that leaves both groups non-empty.
        let split = inner.rmatch_indices(" (").map(|(i, _)| i).find(|&i| i > 0 && i + 2 < inner.len());
        if let Some(i) = split {
            out.insert(inner[..i].to_string(), status);
        }
    }
    out
}

/// The package and the test path of a carve Go id (`importpath/TestX/sub`): the package
/// ends before the first path element that names a test function (`Test…`, `Example…`,
/// `Fuzz…`, `Benchmark…` as `go test` recognises them).
pub fn split_id(id: &str) -> Option<(&str, &str)> {
    let mut start = 0;
    for (n, part) in id.split('/').enumerate() {
        if n > 0 && is_test_function(part) {
            return Some((&id[..start - 1], &id[start..]));
        }
        start += part.len() + 1;
    }
    None
}

/// Whether `name` names a function `go test` runs (`TestX`, `Example`, `ExampleT_M`, …).
pub(crate) fn is_test_function(name: &str) -> bool {
    ["Test", "Example", "Fuzz", "Benchmark"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| {
            rest.chars().next().is_none_or(|c| !c.is_lowercase())
                && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// The name `parse_log_gotest` reports for carve id `id`: the test path without the
/// package (`TestX/sub`).
pub fn harness_id(id: &str) -> Option<String> {
    split_id(id).map(|(_, test)| test.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_swebench() {
        let log = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n    --- FAIL: TestB/with_space (0.01s)\n\
                   --- SKIP: TestC/a_(b) (0.00s)\n--- PASS: TestD\nok  \tm/p\t0.1s\n--- FAIL: TestA (1.00s)\r\n";
        let m = parse_log_gotest(log);
        let got: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, vec![("TestA", FAILED), ("TestB/with_space", FAILED), ("TestC/a_(b)", SKIPPED)]);
    }

    #[test]
    fn ids_split_at_the_test_function() {
        assert_eq!(split_id("example.com/m/strs/TestShout/x"), Some(("example.com/m/strs", "TestShout/x")));
        assert_eq!(split_id("example.com/m/ExampleAdd"), Some(("example.com/m", "ExampleAdd")));
        assert_eq!(split_id("example.com/testdata/Testing/TestX"), Some(("example.com/testdata/Testing", "TestX")));
        assert_eq!(split_id("TestX"), None);
        assert_eq!(harness_id("m/p/TestNested/outer/inner").as_deref(), Some("TestNested/outer/inner"));
    }
}
