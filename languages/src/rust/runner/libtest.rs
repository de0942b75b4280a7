//! Reading `cargo test` output (cargo's stderr merged into stdout) as the run goes:
//! `Running …`/`Doc-tests …` headers name the test binary, libtest's
//! `test <name> ... ok|FAILED|ignored[, reason]` lines give outcomes, a `test <name> ... `
//! without its end yet is the test running now (tests run one at a time), the
//! `---- <name> stdout ----` sections give failure messages; and in `--list --format terse`
//! mode, `<name>: test` lines.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use super::targets::{Target, Workspace};
use crate::runner::steps::StepReader;
use crate::runner::{TestId, TestOutcome, TestStatus};
use carve_core::process::{self, Appended, Ended, Progress};

/// The carve id of libtest test `name` in `target`.
pub(crate) fn test_id(target: &Target, doc: bool, name: &str) -> TestId {
    if doc { format!("{}{}{name}", target.label, super::DOCTEST_MARK) } else { format!("{}::{name}", target.label) }
}

pub(crate) struct LibtestReader<'w> {
    ws: &'w Workspace,
    stdout: Appended,
    /// The binary whose output is being read, and whether it runs doctests.
    current: Option<(&'w Target, bool)>,
    /// Headers no target matched (reported as a problem when tests follow them).
    pub unknown_headers: Vec<String>,
    pub results: BTreeMap<TestId, TestOutcome>,
    /// `--list` mode: the tests listed.
    pub listed: Vec<TestId>,
    pub running: Option<(TestId, Instant)>,
    /// The failure section being read: the test's id, and 0 before its panic line, 1 right
    /// after it, 2 once the message is taken.
    failure: Option<(TestId, u8)>,
    /// A test binary died under a test.
    pub crashed: bool,
    last_crash: Option<TestId>,
    /// The last crash was the last thing cargo reported (no test or binary after it): when
    /// carve killed the run, that "crash" is the kill.
    pub crash_is_last: bool,
    /// cargo printed at least one header (it got as far as running tests).
    pub headers: usize,
}

impl<'w> LibtestReader<'w> {
    pub fn new(ws: &'w Workspace) -> LibtestReader<'w> {
        LibtestReader {
            ws,
            stdout: Appended::default(),
            current: None,
            unknown_headers: Vec::new(),
            results: BTreeMap::new(),
            listed: Vec::new(),
            running: None,
            failure: None,
            crashed: false,
            last_crash: None,
            crash_is_last: false,
            headers: 0,
        }
    }

    fn id(&self, name: &str) -> Option<TestId> {
        self.current.map(|(t, doc)| test_id(t, doc, name))
    }

    pub(crate) fn handle(&mut self, line: &str) {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_prefix("Running ") {
            self.headers += 1;
            self.crash_is_last = false;
            self.end_binary();
            self.current = self.ws.for_running(header).map(|t| (t, false));
            if self.current.is_none() {
                self.unknown_headers.push(trimmed.to_string());
            }
            return;
        }
        if let Some(krate) = trimmed.strip_prefix("Doc-tests ") {
            self.headers += 1;
            self.crash_is_last = false;
            self.end_binary();
            self.current = self.ws.for_doctests(krate).map(|t| (t, true));
            if self.current.is_none() {
                self.unknown_headers.push(trimmed.to_string());
            }
            return;
        }
        if trimmed.contains("process didn't exit successfully") {
            if let Some(id) = &self.last_crash
                && let Some(o) = self.results.get_mut(id)
            {
                o.message = Some(format!("the test binary exited while this test ran: {trimmed}"));
            }
            return;
        }
        if let Some((name, outcome)) = line.strip_prefix("test ").and_then(|r| r.split_once(" ... ")) {
            self.outcome(name, outcome);
            return;
        }
        if let Some(name) = trimmed.strip_prefix("---- ").and_then(|r| r.strip_suffix(" stdout ----")) {
            self.failure = self.id(name).map(|id| (id, 0));
            return;
        }
        if trimmed == "failures:" || trimmed.starts_with("test result:") {
            self.failure = None;
            return;
        }
        if let Some((name, "test")) = trimmed.rsplit_once(": ") {
            if let Some(id) = self.id(name) {
                self.listed.push(id);
            }
            return;
        }
        if let Some((id, stage)) = &mut self.failure {
            // The message is the line after `thread '…' panicked at …:`, or that line itself.
            let panicked = trimmed.starts_with("thread '") && trimmed.contains("panicked at");
            match (*stage, panicked, trimmed.is_empty()) {
                (0, true, _) => {
                    *stage = 1;
                    if let Some(o) = self.results.get_mut(id.as_str()) {
                        o.message = Some(without_thread_id(trimmed));
                    }
                }
                (1, _, false) => {
                    *stage = 2;
                    if let Some(o) = self.results.get_mut(id.as_str()) {
                        o.message = Some(trimmed.to_string());
                    }
                }
                _ => {}
            }
        }
    }

    fn outcome(&mut self, name: &str, outcome: &str) {
        let name = strip_mode(name);
        let Some(id) = self.id(name) else { return };
        self.crash_is_last = false;
        if self.running.as_ref().is_some_and(|(r, _)| *r == id) {
            self.running = None;
        }
        let (status, message) = if outcome == "ok" || outcome.starts_with("ok ") {
            (TestStatus::Passed, None)
        } else if outcome.starts_with("FAILED") {
            (TestStatus::Failed, None)
        } else if let Some(reason) = outcome.strip_prefix("ignored") {
            let reason = reason.trim_start_matches(',').trim();
            (TestStatus::Skipped, (!reason.is_empty()).then(|| reason.to_string()))
        } else {
            // The binary died mid-test: what follows on the line is cargo's own report.
            self.crashed = true;
            self.last_crash = Some(id.clone());
            let message = "the test binary exited while this test ran".to_string();
            self.results.insert(id, TestOutcome::new(TestStatus::Error, Some(message)));
            self.crash_is_last = true;
            let rest = outcome.to_string();
            self.handle(&rest);
            return;
        };
        self.results.insert(id, TestOutcome::new(status, message));
    }

    fn end_binary(&mut self) {
        self.failure = None;
        if let Some((id, _)) = self.running.take() {
            self.crashed = true;
            self.last_crash = Some(id.clone());
            let message = "the test binary exited while this test ran".to_string();
            self.results.insert(id, TestOutcome::new(TestStatus::Error, Some(message)));
            self.crash_is_last = true;
        }
    }

    /// Undo the last crash when it was carve killing the run: that test was running.
    pub fn crash_was_the_kill(&mut self) {
        if self.running.is_none()
            && self.crash_is_last
            && let Some(id) = self.last_crash.take()
        {
            self.results.remove(&id);
            self.running = Some((id, Instant::now()));
            self.crash_is_last = false;
        }
    }

    /// A `test <name> ... ` still waiting for its outcome is the running test.
    fn watch_partial(&mut self) {
        let partial = String::from_utf8_lossy(&self.stdout.pending);
        if let Some(name) = partial.strip_prefix("test ").and_then(|r| r.strip_suffix(" ... "))
            && let Some(id) = self.id(strip_mode(name))
            && self.running.as_ref().is_none_or(|(r, _)| *r != id)
        {
            self.running = Some((id, Instant::now()));
        }
    }
}

/// A panic line without the OS thread id recent Rust prints after the thread's name (1.95:
/// `thread 'tests::fails' (14508) panicked at src/lib.rs:35:9` → `thread 'tests::fails'
/// panicked at src/lib.rs:35:9`). The id changes with every run, and a failure message kept
/// in the baseline must not: two runs of one tree give the same baseline and bundles.
/// Anything else is returned as it is.
pub(crate) fn without_thread_id(line: &str) -> String {
    let strip = || {
        let rest = line.strip_prefix("thread '")?;
        let at = rest.find("' (")? + "' (".len();
        let (digits, tail) = rest[at..].split_once(')')?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && tail.starts_with(" panicked at "))
            .then(|| format!("thread '{}{tail}", &rest[..at - " (".len()]))
    };
    strip().unwrap_or_else(|| line.to_string())
}

/// libtest prints `test <name> - should panic ... ` (and `- compile fail`, `- compile` for
/// doctests that only compile): the test's name is what comes before.
fn strip_mode(name: &str) -> &str {
    [" - should panic", " - compile fail", " - compile"].iter().find_map(|m| name.strip_suffix(m)).unwrap_or(name)
}

impl Progress for LibtestReader<'_> {
    fn poll(&mut self) -> bool {
        if self.stdout.path.as_os_str().is_empty() || self.stdout.read().is_err() {
            return false;
        }
        let mut any = false;
        while let Some(line) = process::take_line(&mut self.stdout.pending) {
            let text = String::from_utf8_lossy(&line);
            self.handle(text.trim_end_matches(['\n', '\r']));
            any = true;
        }
        let before = self.running.as_ref().map(|(id, _)| id.clone());
        self.watch_partial();
        any || self.running.as_ref().map(|(id, _)| id) != before.as_ref()
    }
}

impl StepReader for LibtestReader<'_> {
    fn begin(&mut self, stdout: &Path) {
        self.stdout.restart(stdout);
        self.current = None;
    }

    fn end(&mut self, ended: &Ended) {
        self.poll();
        if !self.stdout.pending.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.stdout.pending)).into_owned();
            self.handle(&rest);
        }
        if ended.stop == carve_core::process::Stop::Exited {
            self.end_binary();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"packages":[{"id":"a","name":"runner-cases","manifest_path":"/w/Cargo.toml","targets":[
        {"name":"runner_cases","kind":["lib"],"src_path":"/w/src/lib.rs"},
        {"name":"one","kind":["test"],"src_path":"/w/tests/one.rs"}]}],"workspace_members":["a"]}"#;

    const OUTPUT: &str = "   Compiling runner-cases v0.1.0 (/w)
     Running unittests src/lib.rs (/t/debug/deps/runner_cases-bfb3)

running 4 tests
test tests::adds ... ok
test tests::panics - should panic ... ok
test tests::fails ... FAILED
test tests::ignored ... ignored, deliberately ignored
test tests::crash ... error: test failed, to rerun pass `-p runner-cases --lib`

Caused by:
  process didn't exit successfully: `/t/debug/deps/runner_cases-bfb3` (signal: 6, SIGABRT: process abort signal)
     Running tests/one.rs (/t/debug/deps/one-5cc4)

running 1 test
test shared_name ... FAILED

failures:

---- shared_name stdout ----

thread 'shared_name' (14441) panicked at tests/one.rs:52:5:
assertion `left == right` failed
  left: 1

failures:
    shared_name

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.14s

   Doc-tests runner_cases

running 1 test
test src/lib.rs - add (line 8) ... ok
test src/lib.rs - sign (line 17) ... ";

    #[test]
    fn outcomes_messages_crashes_and_the_running_test() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let mut r = LibtestReader::new(&ws);
        let (lines, partial) = OUTPUT.rsplit_once('\n').unwrap();
        for line in lines.lines() {
            r.handle(line);
        }
        r.stdout.pending = partial.as_bytes().to_vec();
        r.watch_partial();
        let got: Vec<(&str, TestStatus)> = r.results.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
        assert_eq!(
            got,
            vec![
                ("one::shared_name", TestStatus::Failed),
                ("runner_cases::doctest::src/lib.rs - add (line 8)", TestStatus::Passed),
                ("runner_cases::tests::adds", TestStatus::Passed),
                ("runner_cases::tests::crash", TestStatus::Error),
                ("runner_cases::tests::fails", TestStatus::Failed),
                ("runner_cases::tests::ignored", TestStatus::Skipped),
                ("runner_cases::tests::panics", TestStatus::Passed),
            ]
        );
        assert_eq!(r.results["one::shared_name"].message.as_deref(), Some("assertion `left == right` failed"));
        assert_eq!(r.results["runner_cases::tests::ignored"].message.as_deref(), Some("deliberately ignored"));
        assert!(r.results["runner_cases::tests::crash"].message.as_deref().unwrap().contains("SIGABRT"));
        assert!(r.crashed);
        assert_eq!(
            r.running.as_ref().map(|(id, _)| id.as_str()),
            Some("runner_cases::doctest::src/lib.rs - sign (line 17)")
        );
    }

    #[test]
    fn panic_lines_lose_the_thread_id() {
        let cases = [
            (
                "thread 'tests::fails' (14508) panicked at src/lib.rs:35:9:",
                "thread 'tests::fails' panicked at src/lib.rs:35:9:",
            ),
            ("thread '<unnamed>' (7) panicked at src/a.rs:1:1", "thread '<unnamed>' panicked at src/a.rs:1:1"),
            // Older toolchains print no id; other lines are not panic lines.
            ("thread 'main' panicked at src/main.rs:2:5:", "thread 'main' panicked at src/main.rs:2:5:"),
            ("thread 'x' (abc) panicked at src/a.rs:1:1", "thread 'x' (abc) panicked at src/a.rs:1:1"),
            ("thread 'x' (12) exited", "thread 'x' (12) exited"),
            ("assertion `left == right` failed", "assertion `left == right` failed"),
        ];
        for (line, want) in cases {
            assert_eq!(without_thread_id(line), want, "{line}");
        }
    }

    #[test]
    fn a_panic_without_a_message_line_is_kept_without_its_thread_id() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let mut r = LibtestReader::new(&ws);
        for line in [
            "     Running tests/one.rs (/t/debug/deps/one-5cc4)",
            "test shared_name ... FAILED",
            "failures:",
            "---- shared_name stdout ----",
            "thread 'shared_name' (14441) panicked at tests/one.rs:52:5:",
            "",
        ] {
            r.handle(line);
        }
        assert_eq!(
            r.results["one::shared_name"].message.as_deref(),
            Some("thread 'shared_name' panicked at tests/one.rs:52:5:")
        );
    }

    #[test]
    fn list_mode() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let mut r = LibtestReader::new(&ws);
        for line in [
            "     Running tests/one.rs (/t/debug/deps/one-5cc4)",
            "shared_name: test",
            "bench_x: benchmark",
            "   Doc-tests runner_cases",
            "src/lib.rs - add (line 8): test",
        ] {
            r.handle(line);
        }
        assert_eq!(
            r.listed,
            vec!["one::shared_name".to_string(), "runner_cases::doctest::src/lib.rs - add (line 8)".to_string()]
        );
    }
}
