//! The leakage check of a task's workspace, recorded in `validation.json`:
//!
//! - **Gold code**: no file of the workspace holds a copy of the gold code. Lines are
//!   normalized (all white space removed); a line is *non-trivial* when it is not a comment
//!   (`#`, `//`, `/*`, `*`) and keeps at least [`MIN_LINE_CHARS`] characters; lines the
//!   contract shows anyway (signatures, doc comments: every line of a string in
//!   `contract.json`) count as trivial, since the agent is given them. The lines the gold
//!   patch adds are cut into *pieces*: each extracted top definition (the outermost
//!   extracted definition holding a line), and the lines of each hunk outside any. A
//!   workspace file repeats a piece's line when [`WINDOW`] consecutive non-trivial lines of
//!   it equal [`WINDOW`] consecutive lines of the piece holding that line. It *leaks* the
//!   piece when it repeats at least [`LEAK_PERCENT`]% of the piece's lines (in the
//!   repository's own source code, more than that of a piece of at least
//!   [`SIBLING_MIN_LINES`]): a whole definition, or most of one. Fewer are context, not the
//!   answer: sibling classes that override the same methods the same way share such windows. The share is recorded per
//!   piece (`similarity`) whether or not it leaks.
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
/// Share of one gold piece's compared lines, in percent, that one workspace file must repeat
/// to leak it: a copy of the answer repeats most of it.
pub const LEAK_PERCENT: usize = 50;
/// Compared lines a piece needs for a repeat in the repository's own source code to leak it.
/// Sibling definitions there that override the same methods the same way repeat small
/// pieces whole: in cachetools (28d4506), `_Link.unlink` (5 compared lines, 100%) and
/// `TTLCache.popitem` (8, 50%) repeat `LRUCache`'s; they are context, not the answer. A
/// near-copy of a real definition still leaks there (`_cached._condition`: 17 of 24, 70%).
pub const SIBLING_MIN_LINES: usize = 10;
/// Places in the repository's source code that must hold a window of a piece for its lines
/// to be an idiom of the project rather than a copy: arrow (`bench/corpus/python.toml`) ends
/// eight constructors with the same nine-line `cls(dt.year, dt.month, …)` call, so
/// `Arrow.utcnow` (13 compared lines) shared 9 with each of its siblings; the answer is the
/// line before it. One other place is a copy (boltons' urlutils vendors `cachedproperty`).
pub const IDIOM_PLACES: usize = 2;

/// The leakage check and the gold copies it found (`validation.json` `leakage`, typed in
/// `carve_formats::validation`).
pub use carve_formats::validation::{GoldCopy, GoldSimilarity, LeakageCheck};

fn rule() -> String {
    format!(
        "white space removed; comment lines, lines under {MIN_LINE_CHARS} characters and lines the contract shows skipped; \
         the gold code in pieces (each extracted top definition, else each gold.patch hunk); a file leaks a piece when its \
         windows of {WINDOW} consecutive remaining lines equal to {WINDOW} consecutive lines of the piece cover at least \
         {LEAK_PERCENT}% of the piece's lines; in the repository's own source code, more than {LEAK_PERCENT}% of a piece of at \
         least {SIBLING_MIN_LINES} lines (siblings share shorter pieces, and half of one); lines in windows the repository's \
         source code holds in {IDIOM_PLACES} or more places are the project's idiom and not compared, unless that leaves none"
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

/// One piece of the gold code: an extracted top definition (the outermost extracted
/// definition holding the lines), or the lines of one hunk outside any.
#[derive(Debug)]
struct GoldPiece {
    file: String,
    definition: Option<String>,
    /// Normalized, non-trivial lines the contract does not show, in order.
    lines: Vec<String>,
}

/// `(file, new-file line, hunk number, text)` of every line a unified diff adds.
fn added_lines(patch: &str) -> Vec<(String, usize, usize, &str)> {
    let mut out = Vec::new();
    let (mut file, mut line, mut hunk) = (String::new(), 0usize, 0usize);
    for l in patch.lines() {
        if let Some(path) = l.strip_prefix("+++ ") {
            file = path.strip_prefix("b/").unwrap_or(path).to_string();
        } else if l.starts_with("--- ") || l.starts_with("diff --git") {
        } else if let Some(header) = l.strip_prefix("@@") {
            hunk += 1;
            // `@@ -a,b +c,d @@`: the new file's lines start at c.
            let new = header.split_whitespace().find_map(|w| w.strip_prefix('+'));
            line = new.and_then(|n| n.split(',').next()?.parse().ok()).unwrap_or(1);
        } else if let Some(added) = l.strip_prefix('+') {
            out.push((file.clone(), line, hunk, added));
            line += 1;
        } else if l.starts_with(' ') || l.is_empty() {
            line += 1;
        }
    }
    out
}

/// The outermost extracted definition of `file` whose span holds `line`.
fn outermost_extracted<'i>(
    index: &'i DefinitionIndex,
    extracted: &BTreeSet<String>,
    file: &str,
    line: usize,
) -> Option<&'i str> {
    let defs = index.files.get(file).map(|f| f.definitions.as_slice()).unwrap_or(&[]);
    defs.iter()
        .filter(|id| extracted.contains(*id))
        .filter_map(|id| index.definitions.get(id))
        .filter(|d| d.span.start_line <= line && line <= d.span.end_line)
        .max_by_key(|d| (d.span.end_line - d.span.start_line, std::cmp::Reverse(d.id.as_str())))
        .map(|d| d.id.as_str())
}

/// The gold patch cut into pieces (extracted top definitions, else hunks), in patch order.
fn gold_pieces(
    gold_patch: &str,
    public: &BTreeSet<String>,
    index: &DefinitionIndex,
    extracted: &BTreeSet<String>,
) -> Vec<GoldPiece> {
    let mut pieces: Vec<GoldPiece> = Vec::new();
    let mut at: BTreeMap<(String, Option<String>, usize), usize> = BTreeMap::new();
    for (file, line, hunk, text) in added_lines(gold_patch) {
        let definition = outermost_extracted(index, extracted, &file, line).map(str::to_string);
        // Lines outside any definition are grouped per hunk.
        let key = (file.clone(), definition.clone(), if definition.is_some() { 0 } else { hunk });
        let pos = *at.entry(key).or_insert_with(|| {
            pieces.push(GoldPiece { file, definition, lines: Vec::new() });
            pieces.len() - 1
        });
        if let Some(n) = normalize(text).filter(|n| !public.contains(n)) {
            pieces[pos].lines.push(n);
        }
    }
    pieces
}

/// Windows of the gold pieces: joined normalized lines -> (piece, first line) of each.
fn gold_windows(pieces: &[GoldPiece]) -> BTreeMap<String, Vec<(usize, usize)>> {
    let mut out: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
    for (p, piece) in pieces.iter().enumerate() {
        for (i, w) in piece.lines.windows(WINDOW).enumerate() {
            out.entry(w.join("\n")).or_default().push((p, i));
        }
    }
    out
}

/// What one workspace file repeats of one gold piece: the piece's lines it covers and the
/// file's line ranges that repeat them.
#[derive(Debug, Default)]
struct Repeat {
    covered: BTreeSet<usize>,
    ranges: Vec<(usize, usize)>,
    /// The first line (in the piece) of each window the file holds, once per place.
    windows: Vec<usize>,
}

/// Per gold piece, what one file's text repeats of it.
fn repeats_in(
    text: &str,
    windows: &BTreeMap<String, Vec<(usize, usize)>>,
    public: &BTreeSet<String>,
) -> BTreeMap<usize, Repeat> {
    let norm: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| normalize(l).map(|n| (i + 1, n)))
        .filter(|(_, n)| !public.contains(n))
        .collect();
    let mut out: BTreeMap<usize, Repeat> = BTreeMap::new();
    for w in norm.windows(WINDOW) {
        let key = w.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join("\n");
        let Some(at) = windows.get(&key) else { continue };
        let (start, end) = (w[0].0, w[WINDOW - 1].0);
        for &(piece, first) in at {
            let r = out.entry(piece).or_default();
            r.covered.extend(first..first + WINDOW);
            r.windows.push(first);
            // Overlapping windows of one copy are reported as one range.
            match r.ranges.last_mut() {
                Some(last) if last.1 >= start => last.1 = last.1.max(end),
                _ => r.ranges.push((start, end)),
            }
        }
    }
    out
}

/// Whether a file that repeats `copied` of a piece's `lines` leaks it: at least
/// [`LEAK_PERCENT`]% of them; when the file is source code of the repository (where sibling
/// definitions live), a piece of at least [`SIBLING_MIN_LINES`] lines of which it repeats
/// *more* than [`LEAK_PERCENT`]%. Siblings share their opening and their return, half of a
/// short function: toolz (568c2b8) `_has_varargs` and `_has_keywords` (10 compared lines)
/// each share 5 with a sibling that stays (the registry lookup they all open with); the
/// answer is the other half.
///
/// `lines` are the piece's compared lines (without its idiom lines), `size` all of them: a
/// piece's size for the sibling rule includes its idiom.
fn leaks(copied: usize, lines: usize, size: usize, source: bool) -> bool {
    let share = copied * 100;
    match source {
        false => lines > 0 && share >= LEAK_PERCENT * lines,
        true => size >= SIBLING_MIN_LINES && share > LEAK_PERCENT * lines,
    }
}

/// One workspace file's repeat of one gold piece.
struct Found {
    file: String,
    /// The file is non-test source code of the repository.
    source: bool,
    repeat: Repeat,
}

/// Per piece, its lines that are the project's idiom: those in a window that the
/// repository's source files hold in [`IDIOM_PLACES`] or more places. When that is every
/// line the piece has, none: the piece is then repeated whole, which is a copy.
fn idiom_lines(pieces: &[GoldPiece], found: &BTreeMap<usize, Vec<Found>>) -> BTreeMap<usize, BTreeSet<usize>> {
    let mut out = BTreeMap::new();
    for (&p, all) in found {
        let mut places: BTreeMap<usize, usize> = BTreeMap::new();
        for w in all.iter().filter(|f| f.source).flat_map(|f| &f.repeat.windows) {
            *places.entry(*w).or_default() += 1;
        }
        let lines: BTreeSet<usize> =
            places.iter().filter(|(_, n)| **n >= IDIOM_PLACES).flat_map(|(w, _)| *w..*w + WINDOW).collect();
        if !lines.is_empty() && lines.len() < pieces[p].lines.len() {
            out.insert(p, lines);
        }
    }
    out
}

/// What the check found of the gold code: per piece repeated at all, the file repeating most
/// (the first in path order on ties), most first; the copies that leak; their problems.
/// A piece's idiom lines ([`idiom_lines`]) are compared by no file.
fn judge_repeats(
    pieces: &[GoldPiece],
    found: BTreeMap<usize, Vec<Found>>,
) -> (Vec<GoldSimilarity>, Vec<GoldCopy>, Vec<String>) {
    let (mut sims, mut copies, mut problems) = (Vec::new(), Vec::new(), Vec::new());
    let idioms = idiom_lines(pieces, &found);
    let none = BTreeSet::new();
    for (p, all) in found {
        let piece = &pieces[p];
        let idiom = idioms.get(&p).unwrap_or(&none);
        let lines = piece.lines.len() - idiom.len();
        let copied_of = |f: &Found| f.repeat.covered.difference(idiom).count();
        let what = piece.definition.as_deref().unwrap_or("a gold.patch hunk");
        for f in all.iter().filter(|f| leaks(copied_of(f), lines, piece.lines.len(), f.source)) {
            let copied = copied_of(f);
            let ranges: Vec<String> = f.repeat.ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
            let idiom_note = match idiom.len() {
                0 => String::new(),
                n => format!("; {n} more the project repeats in {IDIOM_PLACES} or more places not compared"),
            };
            problems.push(format!(
                "{} lines {} repeat gold code of {} ({copied} of the {lines} compared lines of {what}, {}%{idiom_note}: a copy of the answer)",
                f.file,
                ranges.join(", "),
                piece.file,
                copied * 100 / lines,
            ));
            copies.extend(f.repeat.ranges.iter().map(|r| GoldCopy::new(f.file.clone(), *r, piece.file.clone())));
        }
        let mut best: Option<&Found> = None;
        for f in &all {
            if best.is_none_or(|b| copied_of(f) > copied_of(b)) {
                best = Some(f);
            }
        }
        if let Some(b) = best {
            let mut sim =
                GoldSimilarity::new(piece.file.clone(), piece.definition.clone(), lines, b.file.clone(), copied_of(b));
            sim.source = b.source;
            sim.idiom_lines = idiom.len();
            sims.push(sim);
        }
    }
    sims.sort_by(|a, b| b.percent.cmp(&a.percent).then(b.copied.cmp(&a.copied)));
    copies.sort_by(|a, b| (&a.file, a.lines).cmp(&(&b.file, b.lines)));
    copies.dedup();
    (sims, copies, problems)
}

/// Identifier words of `text` (letters, digits, `_`; not starting with a digit).
fn words(text: &str, out: &mut BTreeSet<String>) {
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()) {
            out.insert(w.to_string());
        }
    }
}

/// Identifier words of the lines `test_patch` adds (the F2P tests' code).
fn test_words(test_patch: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, lines) in added_runs(test_patch) {
        for l in lines {
            words(l, &mut out);
        }
    }
    out
}

/// Whether `id` or one of its ancestors is in `extracted`.
fn in_extracted(index: &DefinitionIndex, extracted: &BTreeSet<String>, id: &str) -> bool {
    let mut cur = Some(id.to_string());
    for _ in 0..64 {
        let Some(c) = cur else { return false };
        if extracted.contains(&c) {
            return true;
        }
        cur = index.definitions.get(&c).and_then(|d| d.parent.clone());
    }
    false
}

/// The definitions the contract must still show for the interface check to hold: extracted
/// non-test definitions (or ones nested in extracted code) whose name the F2P tests' code
/// (`test_patch`'s added lines) uses and no word of `contract_json` is. The extract stage
/// adds them to the contract (`Contract::add_needed`) instead of letting the check reject.
pub fn unnamed_extracted(
    index: &DefinitionIndex,
    extracted: &BTreeSet<String>,
    test_patch: &str,
    contract_json: &str,
) -> BTreeSet<String> {
    let used = test_words(test_patch);
    let mut named = BTreeSet::new();
    words(contract_json, &mut named);
    index
        .definitions
        .values()
        .filter(|d| !d.is_test && !index.files.get(&d.path).is_some_and(|f| f.is_test))
        .filter(|d| used.contains(&d.name) && !named.contains(&d.name))
        .filter(|d| in_extracted(index, extracted, &d.id))
        .map(|d| d.id.clone())
        .collect()
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
    let pieces = gold_pieces(inputs.gold_patch, &public, inputs.index, inputs.extracted);
    let windows = gold_windows(&pieces);
    // Per piece, every file that repeats part of it (`files` is sorted).
    let mut found: BTreeMap<usize, Vec<Found>> = BTreeMap::new();
    let mut ws_words = BTreeSet::new();
    for rel in &files {
        let Ok(text) = std::fs::read_to_string(ws.join(rel)) else { continue };
        let source = inputs.index.files.get(rel).is_some_and(|f| !f.is_test);
        for (p, repeat) in repeats_in(&text, &windows, &public) {
            found.entry(p).or_default().push(Found { file: rel.clone(), source, repeat });
        }
        let is_test = inputs.index.files.get(rel).is_some_and(|f| f.is_test);
        if !is_test {
            words(&text, &mut ws_words);
        }
    }
    // Identifiers of the F2P tests' code.
    let test_words = test_words(inputs.test_patch);
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
    let (similarity, copies, leaked) = judge_repeats(&pieces, found);
    let single_commit = crate::agent_workspace::commit_count(ws)? == 1;
    let mut problems = Vec::new();
    problems.extend(leaked);
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
    check.similarity = similarity;
    check.needed_identifiers = needed.into_iter().collect();
    check.unnamed_identifiers = unnamed;
    check.problems = problems;
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLD: &str = "diff --git a/pkg/text.py b/pkg/text.py\n--- a/pkg/text.py\n+++ b/pkg/text.py\n@@ -1,2 +1,8 @@\n import re\n+def slugify(text, sep=\"-\"):\n+    # lower-case first\n+    text = text.strip().lower()\n+    text = re.sub(r\"[^a-z0-9]+\", sep, text)\n+    return text.strip(sep)\n+\n";

    fn in_file(file: &str, source: bool, found: BTreeMap<usize, Repeat>) -> BTreeMap<usize, Vec<Found>> {
        found.into_iter().map(|(p, repeat)| (p, vec![Found { file: file.into(), source, repeat }])).collect()
    }

    fn no_index() -> DefinitionIndex {
        DefinitionIndex::build(tempfile::tempdir().unwrap().path(), &Default::default()).unwrap()
    }

    #[test]
    fn windows_of_normalized_added_lines() {
        let pieces = gold_pieces(GOLD, &BTreeSet::new(), &no_index(), &BTreeSet::new());
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        assert_eq!((pieces[0].file.as_str(), pieces[0].definition.as_deref()), ("pkg/text.py", None));
        let w = gold_windows(&pieces);
        assert_eq!(w.len(), 1, "{w:?}");
        let key = w.keys().next().unwrap();
        assert!(key.starts_with("defslugify(text,sep=\"-\"):\ntext=text.strip().lower()"), "{key}");
        assert_eq!(w[key], [(0, 0)]);
    }

    #[test]
    fn a_reformatted_copy_is_found_with_its_lines() {
        let pieces = gold_pieces(GOLD, &BTreeSet::new(), &no_index(), &BTreeSet::new());
        let w = gold_windows(&pieces);
        let copy = "x = 1\n\ndef slugify(text,  sep=\"-\"):\n    text = text.strip().lower()   # lower\n    # a comment between\n    text = re.sub(r\"[^a-z0-9]+\", sep, text)\n    return text.strip(sep)\n";
        // The trailing comment changes that line, so it is no copy; without it it is.
        assert!(repeats_in(copy, &w, &BTreeSet::new()).is_empty());
        let copy = copy.replace("   # lower", "");
        let found = repeats_in(&copy, &w, &BTreeSet::new());
        assert_eq!(found[&0].ranges, [(3, 7)]);
        assert_eq!(found[&0].covered.len(), 4);
        let (sims, copies, problems) = judge_repeats(&pieces, in_file("docs/x.py", false, found));
        assert_eq!(copies, vec![GoldCopy::new("docs/x.py".into(), (3, 7), "pkg/text.py".into())]);
        assert_eq!(sims[0].percent, 100);
        assert!(
            problems[0].starts_with("docs/x.py lines 3-7 repeat gold code of pkg/text.py (4 of the 4"),
            "{problems:?}"
        );
        // The same lines in a sibling definition of the repository's source: a piece this
        // small is shared boilerplate there.
        let found = repeats_in(&copy, &w, &BTreeSet::new());
        let (sims, copies, problems) = judge_repeats(&pieces, in_file("pkg/other.py", true, found));
        assert!(copies.is_empty() && problems.is_empty(), "{problems:?}");
        assert!(sims[0].source && sims[0].percent == 100, "the figure is recorded: {sims:?}");
    }

    /// Half of a short function shared with a sibling in the repository's source is context;
    /// more than half leaks, as does half of it in a file that is not source code.
    #[test]
    fn half_a_function_shared_by_a_sibling_is_context() {
        assert!(!leaks(5, 10, 10, true), "half, in source: a sibling");
        assert!(leaks(6, 10, 10, true), "more than half, in source: a near copy");
        assert!(leaks(5, 10, 10, false), "half, in docs or tests: a copy");
        assert!(!leaks(9, 9, 9, true), "a piece under SIBLING_MIN_LINES in source is context");
        assert!(leaks(3, 4, 13, true), "idiom lines count in the size, not in the share");
        assert!(!leaks(0, 0, 0, false));
    }

    /// Two cache classes that update their order the same way: the extracted one's gold code
    /// shares one method (4 compared lines of 11) with its sibling, which stays. The
    /// share is recorded, and is no leak; the whole class copied elsewhere is one.
    #[test]
    fn a_sibling_sharing_one_method_is_context_and_a_whole_copy_leaks() {
        let fifo = "class FIFOCache(Cache):\n    def __init__(self, maxsize):\n        Cache.__init__(self, maxsize)\n        self.__order = collections.OrderedDict()\n\n    def __setitem__(self, key, value, cache_setitem=Cache.__setitem__):\n        cache_setitem(self, key, value)\n        try:\n            self.__order.move_to_end(key)\n        except KeyError:\n            self.__order[key] = None\n\n    def popitem(self):\n        try:\n            key = next(iter(self.__order))\n        except StopIteration:\n            raise KeyError(type(self).__name__) from None\n        else:\n            return (key, self.pop(key))\n";
        let lru = fifo.replace("FIFOCache", "LRUCache").replace(
            "        try:\n            key = next(iter(self.__order))",
            "        try:\n            key = next(reversed(self.__order))",
        );
        let dir = tempfile::tempdir().unwrap();
        carve_testutil::write_files(dir.path(), &[("pkg/caches.py", &format!("import collections\n\n\n{fifo}"))]);
        let index = DefinitionIndex::build(dir.path(), &Default::default()).unwrap();
        let class = "pkg/caches.py::FIFOCache".to_string();
        let extracted: BTreeSet<String> =
            index.definitions.keys().filter(|id| id.starts_with(&class)).cloned().collect();
        assert!(extracted.contains(&class), "{:?}", index.definitions.keys());
        let added: String = fifo.lines().map(|l| format!("+{l}\n")).collect();
        let gold = format!("--- a/pkg/caches.py\n+++ b/pkg/caches.py\n@@ -3,0 +4,19 @@\n{added}");
        let pieces = gold_pieces(&gold, &BTreeSet::new(), &index, &extracted);
        assert_eq!(pieces.len(), 1, "one piece, the class: {pieces:?}");
        assert_eq!(pieces[0].definition.as_deref(), Some(class.as_str()));
        let w = gold_windows(&pieces);
        let sibling = format!(
            "import collections\n\n\n{}",
            lru.replace(
                "    def __setitem__",
                "    def other(self):\n        return self.maxsize\n\n    def __setitem__"
            )
        );
        let found = repeats_in(&sibling, &w, &BTreeSet::new());
        let (sims, copies, _) = judge_repeats(&pieces, in_file("pkg/caches.py", true, found));
        assert!(copies.is_empty(), "{copies:?}");
        assert_eq!((sims[0].copied, sims[0].lines), (sims[0].copied, pieces[0].lines.len()));
        assert!(sims[0].copied >= WINDOW && sims[0].percent < LEAK_PERCENT, "{sims:?}");
        let found = repeats_in(&format!("{fifo}\n# copied\n"), &w, &BTreeSet::new());
        let (sims, copies, _) = judge_repeats(&pieces, in_file("docs/x.py", false, found));
        assert_eq!(sims[0].percent, 100, "{sims:?}");
        assert_eq!(copies.len(), 1);
    }

    #[test]
    fn short_or_trivial_runs_are_not_windows() {
        let patch = "+++ b/a.py\n@@ -1 +1,5 @@\n+def f():\n+    pass\n+    return None\n+}\n";
        let pieces = gold_pieces(patch, &BTreeSet::new(), &no_index(), &BTreeSet::new());
        assert!(gold_windows(&pieces).is_empty());
        assert_eq!(normalize("    # comment here"), None);
        assert_eq!(normalize("  return x  "), None);
        assert_eq!(normalize("  return value"), Some("returnvalue".into()));
    }

    /// A git repository at `dir` with `files`, committed once (as the agent's workspace is).
    fn committed(dir: &Path, files: &[(&str, &str)]) {
        carve_testutil::write_files(dir, files);
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
            assert!(ok.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&ok.stderr));
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "masked"]);
    }

    /// `check_valid` is extracted, `check_partial` stays, and both open with the same four
    /// lines (toolz's `_signatures.py`): the kept function is the project's own code, not a
    /// copy of the answer; the whole function in a document is one.
    #[test]
    fn an_idiom_a_kept_function_shares_is_no_leak_and_a_documented_copy_is() {
        let idiom = "    num_pos_only, func, keyword_exclude, sigspec = sig\n    if len(args) < num_pos_only:\n        \
                     args = args + pad_args\n    if keyword_exclude:\n        kwargs = dict(kwargs)\n";
        let valid = format!("def check_valid(sig, args, kwargs):\n{idiom}    return call(func, args, kwargs)\n");
        let partial = format!("def check_partial(sig, args, kwargs):\n{idiom}    return partial(func, args, kwargs)\n");
        let source = format!("{valid}\n\n{partial}");
        let index = DefinitionIndex::from_sources(&[("pkg/sigs.py".to_string(), source.as_bytes().to_vec())]);
        let added: String = valid.lines().map(|l| format!("+{l}\n")).collect();
        let gold = format!("+++ b/pkg/sigs.py\n@@ -1,0 +1,7 @@\n{added}");
        let extracted: BTreeSet<String> = ["pkg/sigs.py::check_valid".to_string()].into();
        let inputs = LeakageInputs {
            index: &index,
            extracted: &extracted,
            gold_patch: &gold,
            test_patch: "",
            contract_json: "{}",
        };
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/sigs.py", &format!("\n\n{partial}"))]);
        let kept = check(ws.path(), &inputs).unwrap();
        assert!(kept.ok && kept.gold_copies.is_empty(), "{kept:#?}");
        assert_eq!(kept.similarity.len(), 1, "the share is recorded: {kept:#?}");
        assert_eq!(kept.similarity[0].file, "pkg/sigs.py");
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/sigs.py", &format!("\n\n{partial}")), ("docs/guide.md", &valid)]);
        let documented = check(ws.path(), &inputs).unwrap();
        assert_eq!(documented.gold_copies.iter().map(|c| c.file.as_str()).collect::<Vec<_>>(), ["docs/guide.md"]);
        assert!(!documented.ok);
    }

    /// arrow's constructors all end with the same nine-line `cls(dt.year, …)` call: the
    /// extracted `utcnow` shares it with two siblings that stay, which is the project's idiom,
    /// not the answer (the line before it is). The whole method copied twice is a copy.
    #[test]
    fn an_idiom_of_the_project_is_context_and_a_piece_repeated_whole_is_a_copy() {
        let tail = "        return cls(\n            dt.year,\n            dt.month,\n            dt.day,\n            dt.hour,\n            \
                    dt.minute,\n            dt.second,\n            dt.microsecond,\n            dt.tzinfo,\n            \
                    fold=getattr(dt, 'fold', 0),\n        )\n";
        let method = |name: &str, first: &str| format!("    def {name}(cls, tzinfo=None):\n        {first}\n\n{tail}");
        let utcnow = method("utcnow", "dt = dt_datetime.now(timezone.utc)");
        let siblings =
            [method("now", "dt = dt_datetime.now(tzinfo or local())"), method("fromdate", "dt = date_to_dt(tzinfo)")];
        let class = |methods: &[&String]| {
            format!("class Arrow:\n{}", methods.iter().map(|m| format!("{m}\n")).collect::<String>())
        };
        let original = class(&[&siblings[0], &utcnow, &siblings[1]]);
        let index = DefinitionIndex::from_sources(&[("pkg/arrow.py".to_string(), original.as_bytes().to_vec())]);
        let extracted: BTreeSet<String> = ["pkg/arrow.py::Arrow.utcnow".to_string()].into();
        let added: String = utcnow.lines().map(|l| format!("+{l}\n")).collect();
        let at = original.lines().position(|l| l.contains("def utcnow")).unwrap() + 1;
        let gold = format!("+++ b/pkg/arrow.py\n@@ -{},0 +{at},13 @@\n{added}", at - 1);
        let inputs = LeakageInputs {
            index: &index,
            extracted: &extracted,
            gold_patch: &gold,
            test_patch: "",
            contract_json: "{}",
        };
        let pieces = gold_pieces(&gold, &BTreeSet::new(), &index, &extracted);
        assert_eq!(pieces.len(), 1, "{pieces:?}");
        let compared = pieces[0].lines.len();
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/arrow.py", &class(&[&siblings[0], &siblings[1]]))]);
        let masked = check(ws.path(), &inputs).unwrap();
        assert!(masked.ok && masked.gold_copies.is_empty(), "{masked:#?}");
        let sim = &masked.similarity[0];
        assert_eq!((sim.idiom_lines, sim.lines, sim.copied), (compared - 2, 2, 0), "{sim:#?}");
        // Without the second sibling the tail is repeated in one place: a near copy.
        let ws = tempfile::tempdir().unwrap();
        committed(ws.path(), &[("pkg/arrow.py", &class(&[&siblings[0]]))]);
        let one = check(ws.path(), &inputs).unwrap();
        assert!(!one.ok && one.similarity[0].idiom_lines == 0, "{one:#?}");
        // The whole method in two other modules: every line is repeated, none is an idiom.
        let ws = tempfile::tempdir().unwrap();
        let copy = class(&[&utcnow]);
        committed(ws.path(), &[("pkg/arrow.py", &class(&[])), ("pkg/a.py", &copy), ("pkg/b.py", &copy)]);
        let twice = check(ws.path(), &inputs).unwrap();
        assert_eq!(twice.gold_copies.len(), 2, "{twice:#?}");
        assert!(twice.problems[0].contains("a copy of the answer"), "{:?}", twice.problems);
    }
}
