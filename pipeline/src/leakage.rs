//! The leakage check of a task's workspace, recorded in `validation.json`:
//!
//! - **Gold code**: no file of the workspace holds a body of the gold code. Lines are
//!   normalized (all white space removed); a line is *non-trivial* when it is not a comment
//!   (`#`, `//`, `/*`, `*`) and keeps at least [`MIN_LINE_CHARS`] characters. Every run of
//!   lines the gold patch adds (one hunk's `+` lines) gives windows of [`WINDOW`]
//!   consecutive non-trivial lines; lines the contract shows anyway (signatures, doc
//!   comments: every line of a string in `contract.json`) count as trivial, since the
//!   agent is given them. A workspace file leaks when [`WINDOW`] consecutive
//!   non-trivial lines of it equal such a window. Shorter runs are too small to tell a copy
//!   from a coincidence and are not checked.
//! - **Interface**: the contract names every identifier the F2P tests use (the lines
//!   `test.patch` adds) that is the name of a definition the workspace lacks: an extracted
//!   definition, or a non-test definition of the original whose name the workspace's files
//!   no longer contain. Imports from the repository and attribute accesses on feature
//!   objects are such uses. Names that are not definitions in the index (module-level
//!   constants) are not checked.

use crate::Result;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use carve_languages::DefinitionIndex;

/// Non-trivial lines per window.
pub const WINDOW: usize = 4;
/// Characters a normalized line needs to count.
pub const MIN_LINE_CHARS: usize = 8;

/// The leakage check and the gold copies it found (`validation.json` `leakage`, typed in
/// `carve_formats::validation`).
pub use carve_formats::validation::{GoldCopy, LeakageCheck};

fn rule() -> String {
    format!(
        "white space removed; comment lines and lines under {MIN_LINE_CHARS} characters skipped; \
         {WINDOW} consecutive remaining lines equal to {WINDOW} consecutive lines added by one gold.patch hunk"
    )
}

/// A normalized line, or `None` when it is trivial.
fn normalize(line: &str) -> Option<String> {
    let n: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let comment = ["#", "//", "/*", "*"].iter().any(|m| n.starts_with(m));
    (!comment && n.chars().count() >= MIN_LINE_CHARS).then_some(n)
}

/// `(file, added lines)` per hunk of a unified diff (`+++ b/path` names the file).
fn added_runs(patch: &str) -> Vec<(String, Vec<&str>)> {
    fn flush<'p>(file: &str, current: &mut Vec<&'p str>, runs: &mut Vec<(String, Vec<&'p str>)>) {
        if !current.is_empty() {
            runs.push((file.to_string(), std::mem::take(current)));
        }
    }
    let mut runs: Vec<(String, Vec<&str>)> = Vec::new();
    let mut file = String::new();
    let mut current: Vec<&str> = Vec::new();
    for line in patch.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            flush(&file, &mut current, &mut runs);
            file = path.strip_prefix("b/").unwrap_or(path).to_string();
        } else if line.starts_with("@@") || line.starts_with("diff --git") {
            flush(&file, &mut current, &mut runs);
        } else if let Some(added) = line.strip_prefix('+') {
            current.push(added);
        } else {
            // A context or removed line ends a run of added lines.
            flush(&file, &mut current, &mut runs);
        }
    }
    flush(&file, &mut current, &mut runs);
    runs
}

/// Normalized lines of every string in `contract.json` (signatures, doc comments): public.
fn public_lines(contract_json: &str) -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::String(s) => out.extend(s.lines().filter_map(normalize)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(contract_json) {
        walk(&v, &mut out);
    }
    out
}

/// Windows of the gold code: joined normalized lines -> the gold file.
fn gold_windows(gold_patch: &str, public: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (file, lines) in added_runs(gold_patch) {
        let norm: Vec<String> = lines.iter().filter_map(|l| normalize(l)).filter(|n| !public.contains(n)).collect();
        for w in norm.windows(WINDOW) {
            out.entry(w.join("\n")).or_insert_with(|| file.clone());
        }
    }
    out
}

/// Gold-code copies in one file's text.
fn copies_in(file: &str, text: &str, windows: &BTreeMap<String, String>, public: &BTreeSet<String>) -> Vec<GoldCopy> {
    let norm: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| normalize(l).map(|n| (i + 1, n)))
        .filter(|(_, n)| !public.contains(n))
        .collect();
    let mut out: Vec<GoldCopy> = Vec::new();
    for w in norm.windows(WINDOW) {
        let key = w.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join("\n");
        if let Some(gold_file) = windows.get(&key) {
            let (start, end) = (w[0].0, w[WINDOW - 1].0);
            // Overlapping windows of one copy are reported as one range.
            match out.last_mut() {
                Some(last) if last.lines.1 >= start && &last.gold_file == gold_file => last.lines.1 = end,
                _ => out.push(GoldCopy::new(file.to_string(), (start, end), gold_file.clone())),
            }
        }
    }
    out
}

/// Identifier words of `text` (letters, digits, `_`; not starting with a digit).
fn words(text: &str, out: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()) {
            out.insert(w.to_string());
        }
    }
}

/// What the check reads about the task.
pub struct LeakageInputs<'a> {
    /// The original repository's index (definitions, test files).
    pub index: &'a DefinitionIndex,
    pub extracted: &'a BTreeSet<String>,
    pub gold_patch: &'a str,
    /// The Level 1 test patch: adds the F2P tests back.
    pub test_patch: &'a str,
    /// `contract.json` as written.
    pub contract_json: &'a str,
}

/// Check the workspace at `ws` (written by [`crate::agent_workspace::write`]).
pub fn check(ws: &Path, inputs: &LeakageInputs<'_>) -> Result<LeakageCheck> {
    let files = crate::agent_workspace::committed_files(ws)?;
    let public = public_lines(inputs.contract_json);
    let windows = gold_windows(inputs.gold_patch, &public);
    let mut copies = Vec::new();
    let mut ws_words = BTreeSet::new();
    for rel in &files {
        let Ok(text) = std::fs::read_to_string(ws.join(rel)) else { continue };
        copies.extend(copies_in(rel, &text, &windows, &public));
        let is_test = inputs.index.files.get(rel).is_some_and(|f| f.is_test);
        if !is_test {
            words(&text, &mut ws_words);
        }
    }
    // Identifiers of the F2P tests' code.
    let mut test_words = BTreeSet::new();
    for (_, lines) in added_runs(inputs.test_patch) {
        for l in lines {
            words(l, &mut test_words);
        }
    }
    let mut needed = BTreeSet::new();
    for (id, d) in &inputs.index.definitions {
        // Test code (a helper of a `#[cfg(test)]` module) comes back with test.patch.
        let is_test = d.is_test || inputs.index.files.get(&d.path).is_some_and(|f| f.is_test);
        if is_test || !test_words.contains(&d.name) {
            continue;
        }
        if inputs.extracted.contains(id) || !ws_words.contains(&d.name) {
            needed.insert(d.name.clone());
        }
    }
    let mut named = BTreeSet::new();
    words(inputs.contract_json, &mut named);
    let unnamed: Vec<String> = needed.iter().filter(|n| !named.contains(*n)).cloned().collect();
    let single_commit = crate::agent_workspace::commit_count(ws)? == 1;
    let mut problems = Vec::new();
    for c in &copies {
        problems.push(format!(
            "{} lines {}-{} repeat gold code of {} (the workspace leaks the solution)",
            c.file, c.lines.0, c.lines.1, c.gold_file
        ));
    }
    if !unnamed.is_empty() {
        problems.push(format!(
            "the contract does not name {}, which the F2P tests use and the workspace lacks",
            unnamed.join(", ")
        ));
    }
    if !single_commit {
        problems.push("the workspace's git history has more than one commit".into());
    }
    let mut check = LeakageCheck::new(rule(), files.len(), windows.len(), single_commit);
    check.ok = problems.is_empty();
    check.gold_copies = copies;
    check.needed_identifiers = needed.into_iter().collect();
    check.unnamed_identifiers = unnamed;
    check.problems = problems;
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLD: &str = "diff --git a/pkg/text.py b/pkg/text.py\n--- a/pkg/text.py\n+++ b/pkg/text.py\n@@ -1,2 +1,8 @@\n import re\n+def slugify(text, sep=\"-\"):\n+    # lower-case first\n+    text = text.strip().lower()\n+    text = re.sub(r\"[^a-z0-9]+\", sep, text)\n+    return text.strip(sep)\n+\n";

    #[test]
    fn windows_of_normalized_added_lines() {
        let w = gold_windows(GOLD, &BTreeSet::new());
        assert_eq!(w.len(), 1, "{w:?}");
        let key = w.keys().next().unwrap();
        assert!(key.starts_with("defslugify(text,sep=\"-\"):\ntext=text.strip().lower()"), "{key}");
        assert_eq!(w[key], "pkg/text.py");
    }

    #[test]
    fn a_reformatted_copy_is_found_with_its_lines() {
        let w = gold_windows(GOLD, &BTreeSet::new());
        let copy = "x = 1\n\ndef slugify(text,  sep=\"-\"):\n    text = text.strip().lower()   # lower\n    # a comment between\n    text = re.sub(r\"[^a-z0-9]+\", sep, text)\n    return text.strip(sep)\n";
        // The trailing comment changes that line, so it is no copy; without it it is.
        assert!(copies_in("docs/x.py", copy, &w, &BTreeSet::new()).is_empty());
        let copy = copy.replace("   # lower", "");
        let found = copies_in("docs/x.py", &copy, &w, &BTreeSet::new());
        assert_eq!(found, vec![GoldCopy::new("docs/x.py".into(), (3, 7), "pkg/text.py".into())]);
    }

    #[test]
    fn short_or_trivial_runs_are_not_windows() {
        let patch = "+++ b/a.py\n@@ -1 +1,5 @@\n+def f():\n+    pass\n+    return None\n+}\n";
        assert!(gold_windows(patch, &BTreeSet::new()).is_empty());
        assert_eq!(normalize("    # comment here"), None);
        assert_eq!(normalize("  return x  "), None);
        assert_eq!(normalize("  return value"), Some("returnvalue".into()));
    }
}
