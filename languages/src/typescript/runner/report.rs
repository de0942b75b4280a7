//! Reading the JSON report vitest (`--reporter=json`) and jest (`--json --outputFile`)
//! write at the end of a run: the same jest-compatible shape for both.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::runner::{TestId, TestOutcome, TestStatus};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    failure_messages: Vec<String>,
}

/// The statuses and the files that failed to load, by carve id.
pub(crate) struct Parsed {
    pub results: BTreeMap<TestId, TestOutcome>,
    pub file_errors: BTreeMap<String, String>,
}

/// Read the report at `path`; ids are relative to `root`.
pub(crate) fn read(path: &Path, root: &Path) -> Result<Parsed, String> {
    let text =
        std::fs::read(path).map_err(|e| format!("could not read the runner's JSON report {}: {e}", path.display()))?;
    parse(&text, root).map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn parse(text: &[u8], root: &Path) -> Result<Parsed, String> {
    let report: Report = serde_json::from_slice(text).map_err(|e| format!("not a jest/vitest JSON report: {e}"))?;
    let mut results = BTreeMap::new();
    let mut file_errors = BTreeMap::new();
    for file in report.test_results {
        let rel = relative(root, &file.name);
        if file.assertion_results.is_empty() && file.status.as_deref() == Some("failed") {
            let message = first_line(file.message.as_deref().unwrap_or("")).unwrap_or_else(|| "failed to load".into());
            file_errors.insert(rel.clone(), message);
        }
        for a in file.assertion_results {
            let id = std::iter::once(rel.as_str())
                // vitest 1.1 lists the file's unnamed root suite as an empty title.
                .chain(a.ancestor_titles.iter().map(String::as_str).filter(|t| !t.is_empty()))
                .chain([a.title.as_str()])
                .collect::<Vec<_>>()
                .join(" > ");
            let status = match a.status.as_str() {
                "passed" => TestStatus::Passed,
                "failed" => TestStatus::Failed,
                "pending" | "skipped" | "todo" | "disabled" | "focused" => TestStatus::Skipped,
                _ => TestStatus::Error,
            };
            let message = a.failure_messages.first().and_then(|m| first_line(m));
            let duration_ms = a.duration.filter(|d| d.is_finite() && *d >= 0.0).map(|d| d.round() as u64);
            results.insert(id, TestOutcome { status, duration_ms, message });
        }
    }
    Ok(Parsed { results, file_errors })
}

/// `name` (an absolute path in the report) relative to the root, with `/` separators.
fn relative(root: &Path, name: &str) -> String {
    let p = Path::new(name);
    let rel = p.strip_prefix(root).unwrap_or(p);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The first non-empty line, without ANSI colour codes.
fn first_line(text: &str) -> Option<String> {
    let mut clean = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            clean.push(c);
        }
    }
    clean.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertions_become_ids_and_empty_failed_files_errors() {
        let json = br#"{"testResults":[
          {"name":"/r/t/a.test.ts","status":"failed","message":"","assertionResults":[
            {"ancestorTitles":["outer","inner"],"title":"works","status":"passed","duration":1.6,"failureMessages":[]},
            {"ancestorTitles":[],"title":"breaks","status":"failed","failureMessages":["\u001b[31mAssertionError: no\u001b[39m\n  at x"]},
            {"ancestorTitles":[],"title":"later","status":"todo"}]},
          {"name":"/r/t/b.test.ts","status":"failed","message":"SyntaxError: bad\nmore","assertionResults":[]}]}"#;
        let p = parse(json, Path::new("/r")).unwrap();
        assert_eq!(p.results["t/a.test.ts > outer > inner > works"].status, TestStatus::Passed);
        assert_eq!(p.results["t/a.test.ts > outer > inner > works"].duration_ms, Some(2));
        assert_eq!(p.results["t/a.test.ts > breaks"].message.as_deref(), Some("AssertionError: no"));
        assert_eq!(p.results["t/a.test.ts > later"].status, TestStatus::Skipped);
        assert_eq!(p.file_errors["t/b.test.ts"], "SyntaxError: bad");
        assert!(parse(b"{oops", Path::new("/r")).is_err());
    }
}
