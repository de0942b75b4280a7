//! Reading carve's progress reporters (vitest, jest, node:test): JSON lines appended to a
//! file as the run goes, followed while the runner runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Instant;

use serde::Deserialize;

use crate::runner::{TestId, TestOutcome, TestStatus};
use carve_core::process::{self, Appended, Progress};

/// The version of the reporters' JSON lines this reader understands.
const VERSION: u32 = 1;

#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    Header {
        version: u32,
    },
    Collected {
        file: String,
        ids: Vec<TestId>,
    },
    FileStart {
        file: String,
    },
    Start {
        id: TestId,
    },
    End {
        id: TestId,
    },
    Result {
        id: TestId,
        status: TestStatus,
        duration: Option<f64>,
        message: Option<String>,
    },
    CollectError {
        file: String,
        message: String,
    },
    FileError {
        file: String,
        message: Option<String>,
    },
    SuiteError {
        id: TestId,
        message: Option<String>,
    },
    RunError {
        message: Option<String>,
    },
    Finished {},
    #[serde(other)]
    Other,
}

/// What the reporter said, once the process ended.
pub(crate) struct Outcome {
    pub header: bool,
    pub collected: Vec<TestId>,
    pub results: BTreeMap<TestId, TestOutcome>,
    /// The test (or, when no test had started, the file) that was running at the end.
    pub running: Option<(TestId, Instant)>,
    pub finished: bool,
    pub collection_errors: BTreeMap<String, String>,
    /// Files that started and never reported their whole list of tests.
    pub open_files: Vec<String>,
    /// Files whose whole list of tests is known.
    pub known_files: BTreeSet<String>,
}

pub(crate) struct ProgressReader {
    report: Appended,
    line: usize,
    header: bool,
    collected: Vec<TestId>,
    seen: BTreeSet<TestId>,
    results: BTreeMap<TestId, TestOutcome>,
    /// Tests that started and have neither ended nor reported, with when they started.
    started: BTreeMap<TestId, Instant>,
    /// Files that started and have not reported their tests, with when they started.
    files: BTreeMap<String, Instant>,
    /// Files that reported all their tests (or failed to load).
    known_files: BTreeSet<String>,
    finished: bool,
    collection_errors: BTreeMap<String, String>,
    /// The first line that could not be understood.
    pub problem: Option<String>,
}

impl ProgressReader {
    pub fn new(path: PathBuf) -> ProgressReader {
        ProgressReader {
            report: Appended::maybe_missing(path),
            line: 0,
            header: false,
            collected: Vec::new(),
            seen: BTreeSet::new(),
            results: BTreeMap::new(),
            started: BTreeMap::new(),
            files: BTreeMap::new(),
            known_files: BTreeSet::new(),
            finished: false,
            collection_errors: BTreeMap::new(),
            problem: None,
        }
    }

    fn collect(&mut self, id: &str) {
        if self.seen.insert(id.to_string()) {
            self.collected.push(id.to_string());
        }
    }

    pub fn handle(&mut self, line: &[u8]) {
        self.line += 1;
        let Some(event) = process::json_line::<Event>(&self.report.path, self.line, line, &mut self.problem) else {
            return;
        };
        match event {
            Event::Header { version } => {
                self.header = true;
                if version != VERSION && self.problem.is_none() {
                    self.problem =
                        Some(format!("{}: reporter version {version}, expected {VERSION}", self.report.path.display()));
                }
            }
            Event::Collected { file, ids } => {
                self.files.remove(&file);
                self.known_files.insert(file);
                for id in ids {
                    self.collect(&id);
                }
            }
            Event::FileStart { file } => {
                self.files.entry(file).or_insert_with(Instant::now);
            }
            Event::Start { id } => {
                if !self.results.contains_key(&id) {
                    self.started.insert(id, Instant::now());
                }
            }
            Event::End { id } => {
                self.started.remove(&id);
            }
            Event::Result { id, status, duration, message } => {
                self.started.remove(&id);
                self.collect(&id);
                let duration_ms = duration.filter(|d| d.is_finite() && *d >= 0.0).map(|d| d.round() as u64);
                self.results.insert(id, TestOutcome { status, duration_ms, message });
            }
            Event::CollectError { file, message } => {
                self.files.remove(&file);
                self.known_files.insert(file.clone());
                self.collection_errors.insert(file, message);
            }
            Event::FileError { file, message } => {
                self.files.remove(&file);
                self.known_files.insert(file.clone());
                self.collection_errors
                    .entry(file)
                    .or_insert_with(|| message.unwrap_or_else(|| "the test file failed".into()));
            }
            Event::SuiteError { id, message } => {
                self.collection_errors
                    .entry(id)
                    .or_insert_with(|| message.unwrap_or_else(|| "the suite failed".into()));
            }
            Event::RunError { message } => {
                self.collection_errors
                    .entry("<run>".into())
                    .or_insert_with(|| message.unwrap_or_else(|| "the run failed".into()));
            }
            Event::Finished {} => self.finished = true,
            Event::Other => {}
        }
    }

    pub fn into_outcome(self) -> Outcome {
        // The last test to start is the one that was running; else a file that started
        // and never reported (jest, node:test before any test of it started).
        let running = if self.finished { None } else { self.running() };
        let mut collected = self.collected;
        if let Some((id, _)) = running.as_ref().filter(|(id, _)| !self.seen.contains(id)) {
            collected.push(id.clone());
        }
        Outcome {
            header: self.header,
            collected,
            results: self.results,
            running,
            finished: self.finished,
            collection_errors: self.collection_errors,
            open_files: self.files.into_keys().collect(),
            known_files: self.known_files,
        }
    }

    fn running(&self) -> Option<(TestId, Instant)> {
        self.started
            .iter()
            .filter(|(id, _)| !self.results.contains_key(*id))
            .max_by_key(|(_, at)| **at)
            .map(|(id, at)| (id.clone(), *at))
            .or_else(|| {
                self.files
                    .iter()
                    .filter(|(f, _)| !self.seen.iter().any(|id| crate::runner::is_ancestor(f, id)))
                    .min_by_key(|(_, at)| **at)
                    .map(|(f, at)| (f.clone(), *at))
            })
    }
}

impl Progress for ProgressReader {
    fn poll(&mut self) -> bool {
        let lines = self.report.read_lines(&mut self.problem);
        lines.iter().for_each(|line| self.handle(line));
        !lines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> ProgressReader {
        let mut r = ProgressReader::new(PathBuf::from("/nonexistent"));
        for l in lines {
            r.handle(l.as_bytes());
        }
        r
    }

    #[test]
    fn the_last_started_unfinished_test_is_running() {
        let r = feed(&[
            r#"{"event":"header","version":1,"runner":"vitest"}"#,
            r#"{"event":"collected","file":"t/a.ts","ids":["t/a.ts > x","t/a.ts > y","t/a.ts > z"]}"#,
            r#"{"event":"start","id":"t/a.ts > x"}"#,
            r#"{"event":"end","id":"t/a.ts > x"}"#,
            r#"{"event":"start","id":"t/a.ts > y"}"#,
            r#"{"event":"something_new","id":"t/a.ts > y"}"#,
        ]);
        assert!(r.problem.is_none());
        let o = r.into_outcome();
        assert!(o.header && !o.finished);
        assert_eq!(o.running.map(|r| r.0).as_deref(), Some("t/a.ts > y"));
        assert_eq!(o.collected, vec!["t/a.ts > x", "t/a.ts > y", "t/a.ts > z"]);
    }

    #[test]
    fn a_file_that_started_without_tests_is_blamed_and_bad_lines_are_problems() {
        let r = feed(&[
            r#"{"event":"header","version":1,"runner":"jest"}"#,
            r#"{"event":"file_start","file":"t/a.js"}"#,
            r#"{"event":"result","id":"t/b.js > ok","status":"passed","duration":2.4}"#,
        ]);
        let o = r.into_outcome();
        assert_eq!(o.running.map(|r| r.0).as_deref(), Some("t/a.js"));
        assert_eq!(o.results["t/b.js > ok"].duration_ms, Some(2));
        let r = feed(&["not json"]);
        assert!(r.problem.as_deref().unwrap().contains("line 1"));
    }
}
