//! Stage specs (FeatureArc III-E), written without a model: the requirements document comes
//! from the stage's commit, the definitions it adds or changes (through carve's contract
//! machinery) and its F2P tests (names, asserted literals, error messages); the identifier
//! scan then checks that every name the hidden tests use which the stage introduces is named
//! in the spec.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use carve_extractor::{Contract, build_contract};
use carve_languages::DefinitionIndex;

use crate::analysis::identifiers;
use crate::mine::StageSummary;

pub struct StageSpec {
    pub markdown: String,
    pub contract: Contract,
    /// Names the hidden tests use that the stage introduces and the spec does not name.
    pub unnamed: Vec<String>,
}

fn humanize(name: &str) -> String {
    let n = name.trim_start_matches("test_").trim_start_matches("Test").trim_start_matches("test");
    n.replace('_', " ").trim().to_string()
}

/// String literals (`"…"`, `'…'`, `` `…` ``) of `text`, in order, de-duplicated.
fn string_literals(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if q == b'"' || q == b'\'' || q == b'`' {
            let mut j = i + 1;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            if j < b.len() && b[j] == q {
                let lit = &text[i..=j];
                if lit.len() > 2 && !out.iter().any(|o| o == lit) {
                    out.push(lit.to_string());
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn source_idents(index: &DefinitionIndex, root: &Path, tests: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (path, f) in &index.files {
        if f.is_test == tests {
            if let Ok(text) = std::fs::read_to_string(root.join(path)) {
                identifiers(&text, &mut out);
            }
        }
    }
    out
}

/// Names assigned by a line of non-test code (`NAME = …`, `const NAME: T = …`, `NAME := …`):
/// the first identifier of the line, or the one after a declaration keyword, followed by an
/// optional type and a single `=`.
fn assigned_names(index: &DefinitionIndex, root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (path, f) in &index.files {
        if f.is_test {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(root.join(path)) {
            assigned_in(&text, &mut out);
        }
    }
    out
}

fn assigned_in(text: &str, out: &mut BTreeSet<String>) {
    {
        for line in text.lines() {
            let mut rest = line.trim_start();
            for kw in ["export ", "pub ", "const ", "static ", "var ", "let ", "final "] {
                rest = rest.strip_prefix(kw).unwrap_or(rest);
            }
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let (name, tail) = rest.split_at(end);
            if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let tail = tail.trim_start();
            let tail = if let Some(t) = tail.strip_prefix(':') {
                t.split_once('=').map_or("\0", |x| x.1)
            } else {
                tail.strip_prefix(":=").or_else(|| tail.strip_prefix('=')).unwrap_or("\0")
            };
            if tail != "\0" && !tail.starts_with('=') {
                out.insert(name.to_string());
            }
        }
    }
}

/// The spec of stage `k`: `before`/`after` are the indexes of S_k and S_(k+1) (trees at
/// `before_dir`/`after_dir`), `f2p` its F2P tests, `test_files` its hidden test files.
#[allow(clippy::too_many_arguments)]
pub fn stage_spec(
    k: usize,
    stage: &StageSummary,
    before: &DefinitionIndex,
    after: &DefinitionIndex,
    f2p: &[String],
    test_files: &[String],
    before_dir: &Path,
    after_dir: &Path,
) -> StageSpec {
    let extracted: BTreeSet<String> = stage
        .definitions_added
        .iter()
        .chain(&stage.definitions_modified)
        .filter(|id| after.definitions.get(*id).is_some_and(|d| !d.is_test))
        .cloned()
        .collect();
    let contract = build_contract(after, &extracted);
    let mut md = String::new();
    let _ = writeln!(md, "# Stage {}: {}\n", k + 1, stage.title);
    let _ = writeln!(
        md,
        "This stage extends the feature built so far (earlier stages are already implemented in the \
         workspace). Implement the behaviour below on top of the existing code.\n"
    );
    write_interface(&mut md, &contract, before, &extracted);
    // Acceptance criteria from the F2P tests.
    write_acceptance(&mut md, f2p, after, test_files, after_dir);
    // Names the hidden tests use that this stage introduces.
    let used = names_the_tests_use(after, test_files, after_dir);
    let new_names = new_names(before, after, before_dir, after_dir);
    let needed: BTreeSet<&String> = used.intersection(&new_names).collect();
    write_other_names(&mut md, &needed, after, after_dir);
    let mut named = BTreeSet::new();
    identifiers(&md, &mut named);
    let unnamed = needed.into_iter().filter(|n| !named.contains(n.as_str())).cloned().collect();
    StageSpec { markdown: md, contract, unnamed }
}

/// The spec's interface section: each object of the contract (added, changed or extended),
/// its signature, the first line of its docs, and its members the stage adds or changes.
fn write_interface(md: &mut String, contract: &Contract, before: &DefinitionIndex, extracted: &BTreeSet<String>) {
    let _ = writeln!(md, "## Interface\n");
    for o in &contract.objects {
        let what = if o.existing {
            "extend the existing"
        } else if before.definitions.contains_key(&o.id) {
            "change"
        } else {
            "add"
        };
        let _ = writeln!(
            md,
            "- {what} `{}` in `{}`{}",
            o.access,
            o.path,
            o.import_path.as_ref().map(|i| format!(" (`{i}`)")).unwrap_or_default()
        );
        let _ = writeln!(md, "  ```\n  {}\n  ```", o.signature.text.replace('\n', "\n  "));
        if let Some(doc) = &o.docstring {
            let _ = writeln!(md, "  {}", doc.lines().next().unwrap_or("").trim());
        }
        for m in o.members.iter().filter(|m| extracted.contains(&m.id) || !before.definitions.contains_key(&m.id)) {
            let what = if before.definitions.contains_key(&m.id) { "change" } else { "add" };
            let _ = writeln!(md, "  - {what} `{}`: `{}`", m.access, m.signature.text.lines().next().unwrap_or(""));
            if let Some(doc) = &m.docstring {
                let _ = writeln!(md, "    {}", doc.lines().next().unwrap_or("").trim());
            }
        }
    }
}

/// The spec's acceptance criteria: per F2P test, its humanized name with the literals it
/// asserts, or that it passes when its definition is not found.
fn write_acceptance(md: &mut String, f2p: &[String], after: &DefinitionIndex, test_files: &[String], after_dir: &Path) {
    let _ = writeln!(md, "\n## Acceptance criteria\n");
    let tests: Vec<_> = after.definitions.values().filter(|d| d.is_test && test_files.contains(&d.path)).collect();
    for id in f2p {
        let mut toks = BTreeSet::new();
        identifiers(id.split('[').next().unwrap_or(id), &mut toks);
        let Some(def) = tests.iter().rev().find(|d| toks.contains(&d.name)) else {
            let _ = writeln!(md, "- `{id}` passes");
            continue;
        };
        let text = std::fs::read_to_string(after_dir.join(&def.path)).unwrap_or_default();
        let body = text.get(def.span.start_byte..def.span.end_byte).unwrap_or("");
        let lits = string_literals(body);
        let _ = write!(md, "- {}", humanize(&def.name));
        if !lits.is_empty() {
            let _ = write!(md, " (expected values and messages: {})", lits.join(", "));
        }
        let _ = writeln!(md);
    }
}

/// The identifiers of the hidden test files (of a source file with inline tests, its tests).
fn names_the_tests_use(after: &DefinitionIndex, test_files: &[String], after_dir: &Path) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for f in test_files {
        if let Ok(t) = std::fs::read_to_string(after_dir.join(f)) {
            // A source file with inline tests (Rust's): only its tests are hidden.
            let t = match (after.files.get(f), carve_languages::inline_tests_of(f)) {
                (Some(file), Some(split)) if !file.is_test => split.tests_only(&t).unwrap_or(t),
                _ => t,
            };
            identifiers(&t, &mut used);
        }
    }
    used
}

/// New names of the stage's code: definitions, and names assigned at the start of a line
/// (constants); other new tokens (attributes of library objects …) are not interface.
fn new_names(
    before: &DefinitionIndex,
    after: &DefinitionIndex,
    before_dir: &Path,
    after_dir: &Path,
) -> BTreeSet<String> {
    let (now, then) = (source_idents(after, after_dir, false), source_idents(before, before_dir, false));
    let introduced = now.difference(&then);
    let defined: BTreeSet<&str> = after.definitions.values().filter(|d| !d.is_test).map(|d| d.name.as_str()).collect();
    let assigned = assigned_names(after, after_dir);
    introduced.filter(|n| defined.contains(n.as_str()) || assigned.contains(n.as_str())).cloned().collect()
}

/// The spec's "other names" section: each name the tests need that the spec does not name
/// yet, with the line of the stage's code that introduces it.
fn write_other_names(md: &mut String, needed: &BTreeSet<&String>, after: &DefinitionIndex, after_dir: &Path) {
    let mut named = BTreeSet::new();
    identifiers(md, &mut named);
    let mut extra = String::new();
    for n in needed.iter().filter(|n| !named.contains(n.as_str())) {
        // Quote the line of the stage's code that introduces it.
        let line = after.files.iter().filter(|(_, f)| !f.is_test).find_map(|(p, _)| {
            let text = std::fs::read_to_string(after_dir.join(p)).ok()?;
            let l = text.lines().find(|l| {
                let mut ids = BTreeSet::new();
                identifiers(l, &mut ids);
                ids.contains(n.as_str()) && !l.trim_start().starts_with(['#', '/'])
            })?;
            Some(format!("- `{n}` ({p}: `{}`)", l.trim()))
        });
        if let Some(line) = line {
            let _ = writeln!(extra, "{line}");
        }
    }
    if !extra.is_empty() {
        let _ = writeln!(md, "\n## Other names the tests use\n\n{extra}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assigned_names_are_constants_not_comparisons() {
        let src = "LIMIT = 3\nconst MAX: u32 = 1\nn := 2\nif a == b:\n    key: 1\nexport const name = 'x'\n";
        let mut out = BTreeSet::new();
        assigned_in(src, &mut out);
        let names: Vec<String> = out.into_iter().collect();
        assert_eq!(names, vec!["LIMIT", "MAX", "n", "name"]);
    }

    #[test]
    fn string_literals_keep_quotes_and_skip_empty() {
        let lits = string_literals(r#"assert f("a b") == 'x' and g("") and h("a b") and `t`"#);
        assert_eq!(lits, vec![r#""a b""#, "'x'", "`t`"]);
    }
}
