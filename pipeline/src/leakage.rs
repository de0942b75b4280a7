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
//!   from a coincidence and are not checked. A window the original repository's own source
//!   files hold more often than the gold patch adds it (an idiom written out in two
//!   functions, one extracted and one kept) is the project's code, not a copy of the
//!   solution, when the workspace holds it in such a source file: it is recorded as
//!   `repeated_in_original`, not as a leak. A copy anywhere else (documentation, examples,
//!   tests) leaks whatever the source repeats.
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
         {WINDOW} consecutive remaining lines equal to {WINDOW} consecutive lines added by one gold.patch hunk, \
         unless the original's source files hold them more often than gold.patch adds them and the copy is in \
         a source file"
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
#[cfg(test)]
fn gold_windows(gold_patch: &str, public: &BTreeSet<String>) -> BTreeMap<String, String> {
    gold_window_counts(gold_patch, public).into_iter().map(|(w, (file, _))| (w, file)).collect()
}

/// Windows of the gold code: joined normalized lines -> the first gold file and how many
/// times the patch adds the window.
fn gold_window_counts(gold_patch: &str, public: &BTreeSet<String>) -> BTreeMap<String, (String, usize)> {
    let mut out: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for (file, lines) in added_runs(gold_patch) {
        let norm: Vec<String> = lines.iter().filter_map(|l| normalize(l)).filter(|n| !public.contains(n)).collect();
        for w in norm.windows(WINDOW) {
            out.entry(w.join("\n")).or_insert_with(|| (file.clone(), 0)).1 += 1;
        }
    }
    out
}

/// How many times the non-test source files of the original repository at `original` (the
/// files of `index`) hold each window of `windows`.
fn original_counts(
    original: &Path,
    index: &DefinitionIndex,
    windows: &BTreeMap<String, String>,
    public: &BTreeSet<String>,
) -> BTreeMap<String, usize> {
    let mut out: BTreeMap<String, usize> = BTreeMap::new();
    for (rel, _) in index.files.iter().filter(|(_, f)| !f.is_test) {
        let Ok(text) = std::fs::read_to_string(original.join(rel)) else { continue };
        let norm: Vec<String> = text.lines().filter_map(normalize).filter(|n| !public.contains(n)).collect();
        for w in norm.windows(WINDOW) {
            let key = w.join("\n");
            if windows.contains_key(&key) {
                *out.entry(key).or_default() += 1;
            }
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
    /// The original repository (its source files tell the project's own repetitions).
    pub original: &'a Path,
}

/// Check the workspace at `ws` (written by [`crate::agent_workspace::write`]).
pub fn check(ws: &Path, inputs: &LeakageInputs<'_>) -> Result<LeakageCheck> {
    let files = crate::agent_workspace::committed_files(ws)?;
    let public = public_lines(inputs.contract_json);
    let counts = gold_window_counts(inputs.gold_patch, &public);
    let windows: BTreeMap<String, String> = counts.iter().map(|(w, (file, _))| (w.clone(), file.clone())).collect();
    let in_original = original_counts(inputs.original, inputs.index, &windows, &public);
    let (repeated, unique): (BTreeMap<String, String>, BTreeMap<String, String>) =
        windows.iter().map(|(w, f)| (w.clone(), f.clone())).partition(|(w, _)| in_original.get(w) > Some(&counts[w].1));
    let mut copies = Vec::new();
    let mut repeated_copies = Vec::new();
    let mut ws_words = BTreeSet::new();
    for rel in &files {
        let Ok(text) = std::fs::read_to_string(ws.join(rel)) else { continue };
        let source = inputs.index.files.get(rel).is_some_and(|f| !f.is_test);
        if source {
            copies.extend(copies_in(rel, &text, &unique, &public));
            repeated_copies.extend(copies_in(rel, &text, &repeated, &public));
        } else {
            copies.extend(copies_in(rel, &text, &windows, &public));
        }
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
    check.repeated_in_original = repeated_copies;
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

    /// A git repository at `dir` with `files`, committed once (as the agent's workspace is).
    fn committed(dir: &Path, files: &[(&str, &str)]) {
        for (rel, text) in files {
            std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
            std::fs::write(dir.join(rel), text).unwrap();
        }
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
            assert!(ok.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&ok.stderr));
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "masked"]);
    }

    /// `check_valid` is extracted, `check_partial` stays, and both open with the same four
    /// lines (toolz's `_signatures.py`): the project's own repetition, not a leak. The same
    /// lines in a document still leak.
    #[test]
    fn an_idiom_the_original_repeats_outside_the_gold_code_is_no_leak_in_source() {
        let idiom = "    num_pos_only, func, keyword_exclude, sigspec = sig\n    if len(args) < num_pos_only:\n        \
                     args = args + pad_args\n    if keyword_exclude:\n        kwargs = dict(kwargs)\n";
        let valid = format!("def check_valid(sig, args, kwargs):\n{idiom}    return call(func, args, kwargs)\n");
        let partial = format!("def check_partial(sig, args, kwargs):\n{idiom}    return partial(func, args, kwargs)\n");
        let original = tempfile::tempdir().unwrap();
        let source = format!("{valid}\n\n{partial}");
        committed(original.path(), &[("pkg/sigs.py", &source)]);
        let index = DefinitionIndex::from_sources(&[("pkg/sigs.py".to_string(), source.as_bytes().to_vec())]);
        let added: String = valid.lines().map(|l| format!("+{l}\n")).collect();
        let gold = format!("+++ b/pkg/sigs.py\n@@ -1,0 +1,7 @@\n{added}");
        let extracted: BTreeSet<String> = ["pkg/sigs.py::check_valid".to_string()].into();
        let inputs = |original| LeakageInputs {
            index: &index,
            extracted: &extracted,
            gold_patch: &gold,
            test_patch: "",
            contract_json: "{}",
            original,
        };
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/sigs.py", &format!("\n\n{partial}")), ("docs/guide.md", &valid)]);
        let check = check(ws.path(), &inputs(original.path())).unwrap();
        assert_eq!(check.repeated_in_original.len(), 1, "{check:#?}");
        assert_eq!(check.repeated_in_original[0].file, "pkg/sigs.py");
        // The document's copy of check_valid leaks, whatever the source repeats.
        assert_eq!(check.gold_copies.iter().map(|c| c.file.as_str()).collect::<Vec<_>>(), ["docs/guide.md"]);
        assert!(!check.ok);
        // Had the original held the idiom once (check_partial written differently), the kept
        // copy would be the gold code itself left behind: a leak.
        let once = tempfile::tempdir().unwrap();
        committed(once.path(), &[("pkg/sigs.py", &valid)]);
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/sigs.py", &format!("\n\n{partial}"))]);
        let check = super::check(ws.path(), &inputs(once.path())).unwrap();
        assert!(check.repeated_in_original.is_empty());
        assert_eq!(check.gold_copies.len(), 1, "{check:#?}");
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
