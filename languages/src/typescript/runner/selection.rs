//! Turning requested ids into the runner's own filters: the files to run and anchored,
//! escaped name patterns (vitest/jest `-t`, node:test `--test-name-pattern`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::runner::{TestId, is_ancestor};

/// A name pattern that matches no test: used to collect without running.
pub const NOTHING: &str = "(?!)";

/// node:test's message for a test its name pattern deselected (it reports them as skipped).
pub const NODE_DESELECTED: &str = "test name does not match pattern";

/// The files and names a selection needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Existing files (relative to the root) the requested ids live in, sorted.
    pub files: Vec<String>,
    /// The requested entries that exist, for filtering what the runner reports.
    pub entries: Vec<TestId>,
    /// For every requested entry below file level, its names (describe blocks, test).
    names: Vec<Vec<String>>,
    /// Some entry names a whole file or directory: no name pattern can be used, except
    /// to leave out the tests of those files that already have an outcome (a rerun).
    whole_file: bool,
    /// Tests of whole-file entries not to run again (names after the file).
    exclude: BTreeSet<Vec<String>>,
}

impl Plan {
    pub fn new(root: &Path, ids: &[TestId]) -> Plan {
        Plan::of(ids, |file| root.join(file).exists())
    }

    /// The plan of `ids` whose file `exists` accepts (a path relative to the root); ids
    /// whose file is empty, starts with `-` or leaves the root (`..`) are dropped.
    pub fn of(ids: &[TestId], exists: impl Fn(&str) -> bool) -> Plan {
        let mut files = BTreeSet::new();
        let mut entries = Vec::new();
        let mut names = Vec::new();
        let mut whole_file = false;
        for id in ids {
            let mut parts = id.split(" > ");
            let file = parts.next().unwrap_or_default().trim_end_matches('/');
            let rest: Vec<String> = parts.map(str::to_string).collect();
            if file.is_empty() || file.starts_with('-') || file.split('/').any(|c| c == "..") || !exists(file) {
                continue;
            }
            files.insert(file.to_string());
            entries.push(id.clone());
            if rest.is_empty() {
                whole_file = true;
            } else {
                names.push(rest);
            }
        }
        Plan { files: files.into_iter().collect(), entries, names, whole_file, exclude: BTreeSet::new() }
    }

    /// Leave out `done` tests of the selected files (they ran in an earlier process); only
    /// needed when a whole file is selected, where no name pattern would keep them out.
    pub fn exclude_done<'a>(&mut self, done: impl IntoIterator<Item = &'a TestId>) {
        for id in done {
            if let Some((_, names)) = id.split_once(" > ").filter(|_| self.files.iter().any(|f| is_ancestor(f, id))) {
                self.exclude.insert(names.split(" > ").map(str::to_string).collect());
            }
        }
    }

    /// Does some entry name a whole file (or directory)?
    pub fn whole_file(&self) -> bool {
        self.whole_file
    }

    /// Is `id` one of the requested entries or under one?
    pub fn wants(&self, id: &str) -> bool {
        self.entries.iter().any(|e| e == id || is_ancestor(e, id))
    }

    /// vitest/jest: both match a test's names joined by spaces (describe blocks, then the
    /// test). An entry matches itself or, as a describe block, everything under it.
    pub fn name_pattern(&self) -> Option<String> {
        let join = |set: BTreeSet<String>| set.into_iter().collect::<Vec<_>>().join("|");
        if self.whole_file {
            // Everything in the selected files but what is done (the named entries too).
            return (!self.exclude.is_empty())
                .then(|| format!("^(?! ?(?:{})$)", join(self.exclude.iter().map(|n| escape(&n.join(" "))).collect())));
        }
        // ` ?`: vitest 1.1's full names start with its unnamed root suite (" describe test").
        (!self.names.is_empty())
            .then(|| format!("^ ?(?:{})(?: |$)", join(self.names.iter().map(|n| escape(&n.join(" "))).collect())))
    }

    /// vitest/jest, for an evaluation script that runs exactly the requested tests: like
    /// [`Plan::name_pattern`], but an entry matches only itself (`adds` leaves `adds more`
    /// out), as its entries are tests, not describe blocks. `None` when some entry names a
    /// whole file (those files run whole, and so do the others').
    pub fn exact_name_pattern(&self) -> Option<String> {
        if self.whole_file || self.names.is_empty() {
            return None;
        }
        let names: BTreeSet<String> = self.names.iter().map(|n| escape(&n.join(" "))).collect();
        Some(format!("^ ?(?:{})$", names.into_iter().collect::<Vec<_>>().join("|")))
    }

    /// node:test (Node 20) matches each test's own name; a test's subtests run only when
    /// it runs, so every name along the entry is let through (suites are never filtered),
    /// and the whole name too, for the Node versions that match that.
    pub fn node_name_patterns(&self) -> Vec<String> {
        if self.whole_file {
            let leaves: BTreeSet<String> = self.exclude.iter().filter_map(|n| n.last()).map(|n| escape(n)).collect();
            if leaves.is_empty() {
                return Vec::new();
            }
            return vec![format!("^(?!(?:{})$)", leaves.into_iter().collect::<Vec<_>>().join("|"))];
        }
        let mut names: BTreeSet<String> = self.names.iter().flatten().map(|n| format!("^{}$", escape(n))).collect();
        // Newer Node versions match a test's ancestors' names and its own joined by spaces.
        names.extend(self.names.iter().filter(|n| n.len() > 1).map(|n| format!("^{}$", escape(&n.join(" ")))));
        names.into_iter().collect()
    }
}

/// `text` with every character that means something in a JavaScript regular expression
/// escaped, and control characters written as `\uXXXX` escapes: a test name may hold one
/// (unjs/ufo names tests by their input, `"\0https://invalid.com"`), and a NUL byte cannot be
/// passed in a command's arguments at all.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{:04x}", c as u32));
            continue;
        }
        if "\\^$.*+?()[]{}|/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// unjs/ufo's `parseURL` tests are named by their input, one of them `"\0https://invalid.com"`:
    /// the pattern must hold no NUL byte (no command argument can), and still match the name.
    #[test]
    fn control_characters_in_names_become_unicode_escapes() {
        assert_eq!(escape("parseURL \0https://x.com\t."), "parseURL \\u0000https:\\/\\/x\\.com\\u0009\\.");
    }

    #[test]
    fn patterns_are_anchored_and_escaped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/a.test.ts"), "").unwrap();
        let ids: Vec<TestId> = vec![
            "t/a.test.ts > divide > edge cases > divide(1, 4) = 0.25".into(),
            "t/a.test.ts > adds".into(),
            "t/gone.test.ts > x".into(),
        ];
        let plan = Plan::new(dir.path(), &ids);
        assert_eq!(plan.files, vec!["t/a.test.ts"]);
        assert_eq!(
            plan.name_pattern().as_deref(),
            Some(r"^ ?(?:adds|divide edge cases divide\(1, 4\) = 0\.25)(?: |$)")
        );
        assert_eq!(
            plan.node_name_patterns(),
            vec![
                r"^adds$",
                r"^divide edge cases divide\(1, 4\) = 0\.25$",
                r"^divide$",
                r"^divide\(1, 4\) = 0\.25$",
                r"^edge cases$"
            ]
        );
        assert!(plan.wants("t/a.test.ts > adds"));
        assert!(!plan.wants("t/a.test.ts > adds more"));
        assert!(!plan.wants("t/gone.test.ts > x"));
        let mut whole = Plan::new(dir.path(), &["t/a.test.ts".to_string(), "t/a.test.ts > adds".to_string()]);
        assert_eq!(whole.name_pattern(), None);
        whole.exclude_done(&["t/a.test.ts > d > spins".to_string(), "t/other.ts > x".to_string()]);
        assert_eq!(whole.name_pattern().as_deref(), Some("^(?! ?(?:d spins)$)"));
        assert_eq!(whole.node_name_patterns(), vec!["^(?!(?:spins)$)"]);
        assert!(whole.wants("t/a.test.ts > anything"));
        assert_eq!(escape("a/b-c[d]"), r"a\/b-c\[d\]");
    }
}
