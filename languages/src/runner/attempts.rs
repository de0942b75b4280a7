//! Turning runner processes ("attempts") into one [`RunResult`]: every collected test gets
//! exactly one outcome, every requested id one too, and a test that hangs or kills its
//! process costs only itself — the tests after it run again in a fresh process, up to
//! [`MAX_RERUNS`] times and within the whole run's deadline.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::{Collection, RunRequest, RunResult, RunnerError, TestId, TestOutcome, TestStatus, is_ancestor};
use carve_core::process::{Ended, Stop};

/// At most this many extra processes after the first one.
pub(crate) const MAX_RERUNS: u32 = 10;
/// How much of stdout and of stderr a [`RunResult`] keeps over all its processes.
const RESULT_TAIL_BYTES: usize = 16 * 1024;

pub(crate) const CRASHED_MESSAGE: &str = "the test process exited before this test finished";

/// What one runner process reported.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub command_line: String,
    /// The ids it set out to run (after selection); `None` if it never got that far.
    pub collected: Option<Vec<TestId>>,
    /// Tests that finished.
    pub results: BTreeMap<TestId, TestOutcome>,
    /// The test that had started but not finished when the process ended, and for how long
    /// it had been running.
    pub running: Option<(TestId, Duration)>,
    /// The runner ended its session normally (it did not die or get killed).
    pub session_finished: bool,
    /// Collectors (files, packages) that failed to collect, with a one-line message.
    pub collection_errors: BTreeMap<String, String>,
    pub ended: Ended,
    /// Why the runner never reported its collection: on the first attempt this is the
    /// run's error; on a rerun the remaining tests get it as their message.
    pub startup_error: Option<RunnerError>,
}

impl Attempt {
    /// A process that ended before reporting its collection: `startup_error` says why.
    pub fn failed_to_start(command_line: String, ended: Ended, startup_error: RunnerError) -> Attempt {
        Attempt {
            command_line,
            collected: None,
            results: BTreeMap::new(),
            running: None,
            session_finished: false,
            collection_errors: BTreeMap::new(),
            ended,
            startup_error: Some(startup_error),
        }
    }

    /// What a collect-only attempt found, or its startup error.
    pub fn into_collection(self) -> Result<Collection, RunnerError> {
        if let Some(err) = self.startup_error {
            return Err(err);
        }
        Ok(Collection {
            ids: self.collected.unwrap_or_default().into_iter().collect(),
            collection_errors: self.collection_errors,
            command_line: self.command_line,
        })
    }
}

/// Keep only the statuses of the tests `tests` asks for (an id, or an ancestor of one);
/// `None` asks for all.
pub(crate) fn keep_requested(result: &mut RunResult, tests: Option<&[TestId]>) {
    if let Some(wanted) = tests {
        result.statuses.retain(|id, _| wanted.iter().any(|w| w == id || is_ancestor(w, id)));
    }
}

/// Run attempts until every collected test has an outcome. `attempt(selection, deadline,
/// number)` runs one process on `selection` (`None` = what the request asks for).
pub(crate) fn run_with_reruns(
    req: &RunRequest,
    mut attempt: impl FnMut(Option<&[TestId]>, Instant, u32) -> Result<Attempt, RunnerError>,
) -> Result<RunResult, RunnerError> {
    let deadline = Instant::now() + req.timeout;
    let mut result = RunResult::default();
    let mut tails: (String, String) = (String::new(), String::new());
    let mut collected_ever: BTreeSet<TestId> = BTreeSet::new();
    let mut selection: Option<Vec<TestId>> = req.tests.clone();
    let timeout_s = req.timeout.as_secs_f64();
    let test_timeout_s = req.test_timeout.as_secs_f64();
    for number in 0..=MAX_RERUNS {
        let a = attempt(selection.as_deref(), deadline, number)?;
        result.processes += u32::from(a.ended.spawned);
        if number == 0 {
            result.command_line = a.command_line.clone();
        }
        result.exit_code = a.ended.exit_code;
        append_tails(&mut tails, &a.ended, number);
        if let Some(err) = a.startup_error {
            if number == 0 {
                return Err(err);
            }
            fail_selection(&mut result, selection.as_deref(), a.ended.stop, &err);
            break;
        }
        let collected = a.collected.unwrap_or_default();
        collected_ever.extend(collected.iter().cloned());
        result.collection_errors.extend(a.collection_errors);
        let progressed = !a.results.is_empty() || a.running.is_some();
        result.statuses.extend(a.results);
        let running = a.running.as_ref();
        let remaining = |result: &RunResult| -> Vec<TestId> {
            collected.iter().filter(|id| !result.statuses.contains_key(*id)).cloned().collect()
        };
        match a.ended.stop {
            Stop::Exited if a.session_finished => {
                let message = "the runner ended its session before this test ran".to_string();
                let rest = remaining(&result);
                fill(&mut result, rest, TestStatus::Error, &message);
                break;
            }
            Stop::Exited => {
                result.crashed = true;
                blame(&mut result, running, TestStatus::Error, CRASHED_MESSAGE.to_string());
            }
            Stop::NoProgress => {
                let message = format!("no progress for {test_timeout_s}s: killed with its process group");
                blame(&mut result, running, TestStatus::Timeout, message);
            }
            Stop::Deadline => {
                let message = format!("the run's time limit of {timeout_s}s passed while this test ran");
                blame(&mut result, running, TestStatus::Timeout, message);
                let message = format!("not run: the run's time limit of {timeout_s}s passed");
                let rest = remaining(&result);
                fill(&mut result, rest, TestStatus::Timeout, &message);
                break;
            }
        }
        let rest = remaining(&result);
        if rest.is_empty() {
            break;
        }
        if let Some(message) = give_up_message(progressed, number, deadline, timeout_s) {
            let status = if result.crashed { TestStatus::Error } else { TestStatus::Timeout };
            fill(&mut result, rest, status, &message);
            break;
        }
        selection = Some(rest);
    }
    mark_uncollected(&mut result, req.tests.as_deref(), &collected_ever);
    result.stdout_tail = tails.0;
    result.stderr_tail = tails.1;
    Ok(result)
}

/// Gives every test of a rerun's `selection` without an outcome the first line of the
/// rerun's startup error (`error`, or `timeout` when the process was killed).
fn fail_selection(result: &mut RunResult, selection: Option<&[TestId]>, stop: Stop, err: &RunnerError) {
    let status = if stop == Stop::Exited { TestStatus::Error } else { TestStatus::Timeout };
    let first_line = err.to_string().lines().next().unwrap_or_default().to_string();
    for id in selection.into_iter().flatten() {
        result.statuses.entry(id.clone()).or_insert_with(|| TestOutcome::new(status, Some(first_line.clone())));
    }
}

/// Gives the test that was running when its process ended (if any) `status` and `message`;
/// the first one to time out is the run's `timed_out`.
fn blame(result: &mut RunResult, running: Option<&(TestId, Duration)>, status: TestStatus, message: String) {
    if let Some((id, ran)) = running {
        let outcome = TestOutcome { status, duration_ms: Some(millis(*ran)), message: Some(message) };
        result.statuses.insert(id.clone(), outcome);
        if status == TestStatus::Timeout && result.timed_out.is_none() {
            result.timed_out = Some(id.clone());
        }
    }
}

/// Why the tests left after attempt `number` are not run again, or `None` to rerun them.
fn give_up_message(progressed: bool, number: u32, deadline: Instant, timeout_s: f64) -> Option<String> {
    if !progressed {
        Some("not run: the test process stopped before it finished any test".to_string())
    } else if number == MAX_RERUNS {
        Some(format!("not run: gave up after {} test processes hung or crashed", MAX_RERUNS + 1))
    } else if Instant::now() >= deadline {
        Some(format!("not run: the run's time limit of {timeout_s}s passed"))
    } else {
        None
    }
}

/// Gives every requested id that no attempt collected an outcome: `error` when a collector
/// holding it failed, else `missing`.
fn mark_uncollected(result: &mut RunResult, requested: Option<&[TestId]>, collected_ever: &BTreeSet<TestId>) {
    for entry in requested.into_iter().flatten() {
        if result.statuses.contains_key(entry) || covers(collected_ever, entry) {
            continue;
        }
        let failed_collector = result.collection_errors.iter().find(|(c, _)| *c == entry || is_ancestor(c, entry));
        let outcome = match failed_collector {
            Some((c, m)) => TestOutcome::new(TestStatus::Error, Some(format!("could not collect {c}: {m}"))),
            None => TestOutcome::new(TestStatus::Missing, Some("the runner has no such test".to_string())),
        };
        result.statuses.insert(entry.clone(), outcome);
    }
}

/// Does `entry` name a collected test, or a file/class/directory containing one?
fn covers(collected: &BTreeSet<TestId>, entry: &str) -> bool {
    collected
        .range::<str, _>((std::ops::Bound::Included(entry), std::ops::Bound::Unbounded))
        .take_while(|id| id.starts_with(entry))
        .any(|id| id == entry || is_ancestor(entry, id))
}

fn fill(result: &mut RunResult, ids: Vec<TestId>, status: TestStatus, message: &str) {
    for id in ids {
        result.statuses.entry(id).or_insert_with(|| TestOutcome::new(status, Some(message.to_string())));
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn append_tails(tails: &mut (String, String), ended: &Ended, number: u32) {
    for (acc, part) in [(&mut tails.0, &ended.stdout_tail), (&mut tails.1, &ended.stderr_tail)] {
        if number > 0 && !part.is_empty() {
            acc.push_str(&format!("\n--- carve: test process {} ---\n", number + 1));
        }
        acc.push_str(part);
        if acc.len() > RESULT_TAIL_BYTES {
            let mut cut = acc.len() - RESULT_TAIL_BYTES;
            while !acc.is_char_boundary(cut) {
                cut += 1;
            }
            acc.drain(..cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::TestCommand;

    fn ended(stop: Stop) -> Ended {
        Ended { spawned: true, stop, exit_code: None, stdout_tail: String::new(), stderr_tail: String::new() }
    }

    fn attempt(
        collected: &[&str],
        done: &[(&str, TestStatus)],
        running: Option<&str>,
        stop: Stop,
        finished: bool,
    ) -> Attempt {
        Attempt {
            command_line: "runner".into(),
            collected: Some(collected.iter().map(|s| s.to_string()).collect()),
            results: done.iter().map(|(id, s)| (id.to_string(), TestOutcome::new(*s, None))).collect(),
            running: running.map(|r| (r.to_string(), Duration::from_millis(5))),
            session_finished: finished,
            collection_errors: BTreeMap::new(),
            ended: ended(stop),
            startup_error: None,
        }
    }

    fn request(tests: Option<&[&str]>) -> RunRequest {
        let mut r = RunRequest::new("/nonexistent", TestCommand::pytest("python3", vec![]), "/tmp/x");
        r.tests = tests.map(|t| t.iter().map(|s| s.to_string()).collect());
        r
    }

    #[test]
    fn a_hung_test_is_blamed_and_the_rest_rerun() {
        let mut selections = Vec::new();
        let r = run_with_reruns(&request(None), |sel, _, n| {
            selections.push(sel.map(|s| s.to_vec()));
            Ok(match n {
                0 => attempt(&["a", "b", "c"], &[("a", TestStatus::Passed)], Some("b"), Stop::NoProgress, false),
                _ => attempt(&["c"], &[("c", TestStatus::Failed)], None, Stop::Exited, true),
            })
        })
        .unwrap();
        assert_eq!(selections, vec![None, Some(vec!["c".to_string()])]);
        assert_eq!(r.status("a"), TestStatus::Passed);
        assert_eq!(r.status("b"), TestStatus::Timeout);
        assert_eq!(r.status("c"), TestStatus::Failed);
        assert_eq!(r.timed_out.as_deref(), Some("b"));
        assert!(!r.crashed);
        assert_eq!(r.processes, 2);
    }

    #[test]
    fn a_process_that_keeps_dying_without_progress_stops_the_reruns() {
        let r = run_with_reruns(&request(None), |_, _, n| {
            Ok(match n {
                0 => attempt(&["a", "b"], &[], Some("a"), Stop::Exited, false),
                _ => attempt(&["b"], &[], None, Stop::Exited, false),
            })
        })
        .unwrap();
        assert_eq!(r.statuses["a"].message.as_deref(), Some(CRASHED_MESSAGE));
        assert_eq!(r.status("b"), TestStatus::Error);
        assert!(r.crashed);
        assert_eq!(r.processes, 2);
    }

    #[test]
    fn requested_entries_are_missing_expanded_or_collection_errors() {
        let req = request(Some(&["t/a.py::x", "t/a.py::K", "t/a.py::nope", "t/b.py::y", "t/c.py::z"]));
        let r = run_with_reruns(&req, |_, _, _| {
            let mut a = attempt(
                &["t/a.py::x", "t/a.py::K::m"],
                &[("t/a.py::x", TestStatus::Passed), ("t/a.py::K::m", TestStatus::Skipped)],
                None,
                Stop::Exited,
                true,
            );
            a.collection_errors.insert("t/b.py".into(), "ImportError: no".into());
            Ok(a)
        })
        .unwrap();
        let got: Vec<(&str, TestStatus)> = r.statuses.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
        assert_eq!(
            got,
            vec![
                ("t/a.py::K::m", TestStatus::Skipped),
                ("t/a.py::nope", TestStatus::Missing),
                ("t/a.py::x", TestStatus::Passed),
                ("t/b.py::y", TestStatus::Error),
                ("t/c.py::z", TestStatus::Missing),
            ]
        );
        assert_eq!(r.statuses["t/b.py::y"].message.as_deref(), Some("could not collect t/b.py: ImportError: no"));
    }

    #[test]
    fn the_deadline_marks_everything_left_as_timeout() {
        let r = run_with_reruns(&request(None), |_, _, _| {
            Ok(attempt(&["a", "b", "c"], &[("a", TestStatus::Passed)], Some("b"), Stop::Deadline, false))
        })
        .unwrap();
        assert_eq!(r.status("b"), TestStatus::Timeout);
        assert_eq!(r.status("c"), TestStatus::Timeout);
        assert!(r.statuses["c"].message.as_deref().unwrap().starts_with("not run"));
        assert_eq!(r.processes, 1);
    }

    #[test]
    fn a_startup_error_on_the_first_attempt_is_the_runs_error() {
        let err = run_with_reruns(&request(None), |_, _, _| {
            let mut a = attempt(&[], &[], None, Stop::Exited, false);
            a.collected = None;
            a.startup_error = Some(RunnerError::PytestNotInstalled { python: "py".into() });
            Ok(a)
        })
        .unwrap_err();
        assert!(matches!(err, RunnerError::PytestNotInstalled { .. }));
    }

    #[test]
    fn tails_are_bounded() {
        let mut tails = (String::new(), String::new());
        let big = Ended {
            spawned: true,
            stop: Stop::Exited,
            exit_code: Some(0),
            stdout_tail: "é".repeat(10_000),
            stderr_tail: "x".into(),
        };
        append_tails(&mut tails, &big, 0);
        append_tails(&mut tails, &big, 1);
        assert!(tails.0.len() <= RESULT_TAIL_BYTES);
        assert_eq!(tails.1, "x\n--- carve: test process 2 ---\nx");
    }
}
