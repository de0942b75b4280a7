//! Reading `go test -json` (test2json events) as the run goes: one outcome per test, the
//! tests running right now, packages whose test binary did not build (with the compiler's
//! output), and in `-list` mode the names a package lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

use serde::Deserialize;

use crate::runner::steps::{StepReader, last_lines};
use crate::runner::{TestId, TestOutcome, TestStatus};
use carve_core::process::{Appended, Ended, Progress};

/// Output lines kept per test and per package for messages.
const KEEP_LINES: usize = 40;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package")]
    package: Option<String>,
    #[serde(rename = "ImportPath")]
    import_path: Option<String>,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Output")]
    output: Option<String>,
    #[serde(rename = "Elapsed")]
    elapsed: Option<f64>,
    #[serde(rename = "FailedBuild")]
    failed_build: Option<String>,
}

/// The carve id of test `test` in package `package`: `importpath/TestX/sub`.
pub(crate) fn test_id(package: &str, test: &str) -> TestId {
    format!("{package}/{test}")
}

/// Follows the stdout files of `go test -json` processes.
#[derive(Default)]
pub(crate) struct GoReader {
    stdout: Appended,
    pub results: BTreeMap<TestId, TestOutcome>,
    /// Started and not finished, in start order.
    pub running: Vec<(TestId, Instant)>,
    /// Output lines per test (framework lines left out), for failure and skip messages.
    output: BTreeMap<TestId, Vec<String>>,
    /// Per test, the function its panic came from (its whole output is read for that).
    panics: BTreeMap<TestId, super::panics::PanicReader>,
    /// Build output per import path (the `[pkg.test]` suffix removed).
    build_output: BTreeMap<String, Vec<String>>,
    /// Package-level output (not inside a test), per package.
    package_output: BTreeMap<String, Vec<String>>,
    /// Packages whose tests could not be built or set up, with the compiler's output tail.
    pub build_failed: BTreeMap<String, String>,
    /// Every package go reported on.
    pub packages: BTreeSet<String>,
    /// `-list` mode: the names each package listed.
    pub listed: BTreeMap<String, Vec<String>>,
    /// A test binary exited while tests were still running.
    pub crashed: bool,
    /// Packages whose test binary failed (not a build failure).
    failed_packages: BTreeSet<String>,
    /// JSON lines read, and lines that were not JSON.
    pub events: usize,
    pub junk_lines: usize,
}

impl GoReader {
    pub fn new() -> GoReader {
        GoReader::default()
    }

    fn handle(&mut self, line: &[u8]) {
        let Ok(e) = serde_json::from_slice::<Event>(line) else {
            self.junk_lines += 1;
            return;
        };
        self.events += 1;
        if let Some(import_path) = &e.import_path {
            let pkg = strip_variant(import_path).to_string();
            if e.action == "build-output" {
                let out = self.build_output.entry(pkg).or_default();
                push_bounded(out, e.output.as_deref().unwrap_or_default());
            }
            return;
        }
        let Some(package) = e.package else { return };
        self.packages.insert(package.clone());
        let Some(test) = e.test else {
            self.package_event(&package, &e.action, e.output.as_deref(), e.failed_build.as_deref());
            return;
        };
        let id = test_id(&package, &test);
        match e.action.as_str() {
            "run" => self.running.push((id, Instant::now())),
            "output" => {
                let text = e.output.unwrap_or_default();
                let framework = ["=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- PASS", "--- FAIL", "--- SKIP"];
                if !framework.iter().any(|f| text.trim_start().starts_with(f)) {
                    self.panics.entry(id.clone()).or_default().feed(&text);
                    push_bounded(self.output.entry(id).or_default(), &text);
                }
            }
            "pass" | "fail" | "skip" => {
                let status = match e.action.as_str() {
                    "pass" => TestStatus::Passed,
                    "fail" => TestStatus::Failed,
                    _ => TestStatus::Skipped,
                };
                self.running.retain(|(r, _)| *r != id);
                let lines = self.output.remove(&id).unwrap_or_default();
                let panic = self.panics.remove(&id).and_then(|p| p.site);
                let message = match status {
                    TestStatus::Passed => None,
                    // A panic names the function that panicked (a stub, on a masked state).
                    _ if panic.is_some() => panic.map(|p| p.message()),
                    _ => lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()).map(str::to_string),
                };
                let duration_ms = e.elapsed.filter(|d| d.is_finite() && *d >= 0.0).map(|d| (d * 1000.0).round() as u64);
                self.results.insert(id, TestOutcome { status, duration_ms, message });
            }
            _ => {}
        }
    }

    fn package_event(&mut self, package: &str, action: &str, output: Option<&str>, failed_build: Option<&str>) {
        match action {
            "output" => {
                let text = output.unwrap_or_default();
                let name = text.trim_end();
                if is_listed_name(name) {
                    self.listed.entry(package.to_string()).or_default().push(name.to_string());
                }
                push_bounded(self.package_output.entry(package.to_string()).or_default(), text);
            }
            "pass" | "fail" | "skip" => {
                if action == "fail" && failed_build.is_none() {
                    self.failed_packages.insert(package.to_string());
                }
                if let Some(broken) = failed_build {
                    let key = strip_variant(broken);
                    let lines = self.build_output.get(key).or_else(|| self.build_output.get(package));
                    let text = lines.map(|l| l.concat()).unwrap_or_default();
                    let message = if text.trim().is_empty() {
                        format!("the tests of {package} did not build ({broken})")
                    } else {
                        last_lines(&text, 12)
                    };
                    self.build_failed.insert(package.to_string(), message);
                }
                // Tests still running when their package ends: the binary exited under them.
                let prefix = format!("{package}/");
                let (gone, still): (Vec<_>, Vec<_>) =
                    self.running.drain(..).partition(|(id, _)| id.starts_with(&prefix));
                self.running = still;
                if !gone.is_empty() {
                    self.crashed = true;
                    let tail = self.package_output.get(package).map(|l| last_lines(&l.concat(), 3)).unwrap_or_default();
                    for (id, since) in gone {
                        let message = format!("the test binary of {package} exited while this test ran: {tail}");
                        let outcome = TestOutcome {
                            status: TestStatus::Error,
                            duration_ms: Some(u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)),
                            message: Some(message.trim_end().to_string()),
                        };
                        self.results.insert(id, outcome);
                    }
                }
            }
            _ => {}
        }
    }

    /// Why `package`'s test binary failed, when it did: the last lines it printed outside
    /// any test (a TestMain exit, a panic in init, a data race report).
    pub fn package_failure(&self, package: &str) -> Option<String> {
        self.failed_packages.contains(package).then(|| {
            let tail = self.package_output.get(package).map(|l| last_lines(&l.concat(), 3)).unwrap_or_default();
            format!("the test binary of {package} failed before this test ran: {}", tail.replace('\n', " | "))
        })
    }
}

impl Progress for GoReader {
    fn poll(&mut self) -> bool {
        if self.stdout.path.as_os_str().is_empty() {
            return false;
        }
        let lines = self.stdout.read_lines(&mut None);
        lines.iter().for_each(|line| self.handle(line));
        !lines.is_empty()
    }
}

impl StepReader for GoReader {
    fn begin(&mut self, stdout: &Path) {
        self.stdout.restart(stdout);
    }

    fn end(&mut self, _: &Ended) {
        self.poll();
        if !self.stdout.pending.is_empty() {
            let line = std::mem::take(&mut self.stdout.pending);
            self.handle(&line);
        }
    }
}

/// `pkg [pkg.test]` → `pkg`.
fn strip_variant(import_path: &str) -> &str {
    import_path.split(" [").next().unwrap_or(import_path)
}

/// A line `go test -list` prints for a test: `TestX`, `FuzzY` (identifiers only).
fn is_listed_name(line: &str) -> bool {
    (line.starts_with("Test") || line.starts_with("Fuzz") || line.starts_with("Example"))
        && line.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn push_bounded(lines: &mut Vec<String>, text: &str) {
    lines.push(text.to_string());
    if lines.len() > KEEP_LINES {
        lines.remove(0);
    }
}

/// The text `go test -v` would have printed: the events' `Output` fields in order (build
/// output included), for log parsers that read plain `go test` logs.
pub fn text_log(json: &str) -> String {
    let mut out = String::new();
    for line in json.lines() {
        if let Ok(e) = serde_json::from_str::<Event>(line) {
            out.push_str(e.output.as_deref().unwrap_or_default());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> GoReader {
        let mut r = GoReader::new();
        for l in lines {
            r.handle(l.as_bytes());
        }
        r
    }

    #[test]
    fn results_messages_and_running_tests() {
        let r = feed(&[
            r#"{"Action":"start","Package":"m/p"}"#,
            r#"{"Action":"run","Package":"m/p","Test":"TestA"}"#,
            r#"{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\n"}"#,
            r#"{"Action":"output","Package":"m/p","Test":"TestA","Output":"    a_test.go:9: want 5\n"}"#,
            r#"{"Action":"fail","Package":"m/p","Test":"TestA","Elapsed":0.25}"#,
            r#"{"Action":"run","Package":"m/p","Test":"TestB"}"#,
            r#"{"Action":"run","Package":"m/p","Test":"TestB/with_space"}"#,
            r#"{"Action":"skip","Package":"m/p","Test":"TestB/with_space","Elapsed":0}"#,
            "not json",
        ]);
        assert_eq!(r.results["m/p/TestA"].status, TestStatus::Failed);
        assert_eq!(r.results["m/p/TestA"].message.as_deref(), Some("a_test.go:9: want 5"));
        assert_eq!(r.results["m/p/TestA"].duration_ms, Some(250));
        assert_eq!(r.results["m/p/TestB/with_space"].status, TestStatus::Skipped);
        assert_eq!(r.running.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), vec!["m/p/TestB"]);
        assert_eq!((r.events, r.junk_lines), (8, 1));
        assert!(!r.crashed);
    }

    /// google/uuid's masked state: a P2P test hits the stub of `setNodeInterface` (the
    /// output captured from go1.26.8, one output event per line as test2json sends it).
    #[test]
    fn a_panicking_test_names_the_function_that_panicked() {
        let mut lines =
            vec![r#"{"Action":"run","Package":"github.com/google/uuid","Test":"TestNewV6WithTime"}"#.to_string()];
        for l in include_str!("testdata/uuid-lazy-stub.txt").split_inclusive('\n') {
            let e = serde_json::json!({"Action": "output", "Package": "github.com/google/uuid", "Test": "TestNewV6WithTime", "Output": l});
            lines.push(e.to_string());
        }
        lines.push(
            r#"{"Action":"fail","Package":"github.com/google/uuid","Test":"TestNewV6WithTime","Elapsed":0}"#.into(),
        );
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let r = feed(&refs);
        let m = r.results["github.com/google/uuid/TestNewV6WithTime"].message.as_deref().unwrap();
        assert_eq!(
            m,
            "panic: not implemented [recovered, repanicked] in github.com/google/uuid.setNodeInterface (node.go:40)"
        );
        assert!(r.panics.is_empty(), "finished tests leave nothing behind");
    }

    #[test]
    fn build_failures_and_binaries_that_exit_under_a_test() {
        let r = feed(&[
            r##"{"ImportPath":"m/q [m/q.test]","Action":"build-output","Output":"# m/q [m/q.test]\n"}"##,
            r#"{"ImportPath":"m/q [m/q.test]","Action":"build-output","Output":"q/x.go:3:28: cannot use \"x\"\n"}"#,
            r#"{"ImportPath":"m/q [m/q.test]","Action":"build-fail"}"#,
            r#"{"Action":"fail","Package":"m/q","Elapsed":0,"FailedBuild":"m/q [m/q.test]"}"#,
            r#"{"Action":"run","Package":"m/p","Test":"TestExit"}"#,
            r#"{"Action":"output","Package":"m/p","Output":"exit status 3\n"}"#,
            r#"{"Action":"fail","Package":"m/p","Elapsed":0.1}"#,
        ]);
        assert_eq!(r.build_failed["m/q"], "# m/q [m/q.test]\nq/x.go:3:28: cannot use \"x\"");
        assert_eq!(r.results["m/p/TestExit"].status, TestStatus::Error);
        assert!(r.results["m/p/TestExit"].message.as_deref().unwrap().contains("exit status 3"));
        assert!(r.crashed);
        assert!(r.running.is_empty());
    }

    #[test]
    fn list_mode_collects_names_only() {
        let r = feed(&[
            r#"{"Action":"output","Package":"m/p","Output":"TestA\n"}"#,
            r#"{"Action":"output","Package":"m/p","Output":"FuzzB\n"}"#,
            r#"{"Action":"output","Package":"m/p","Output":"init printed this\n"}"#,
            r#"{"Action":"output","Package":"m/p","Output":"ok  \tm/p\t0.004s\n"}"#,
            r#"{"Action":"pass","Package":"m/p","Elapsed":0.004}"#,
        ]);
        assert_eq!(r.listed["m/p"], vec!["TestA".to_string(), "FuzzB".to_string()]);
    }

    #[test]
    fn the_text_log_is_the_outputs_in_order() {
        let json = concat!(
            r#"{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}"#,
            "\n",
            r#"{"Action":"pass","Package":"m/p","Test":"TestA"}"#,
            "\n"
        );
        assert_eq!(text_log(json), "=== RUN   TestA\n--- PASS: TestA (0.00s)\n");
    }
}
