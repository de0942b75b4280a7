//! cargo-nextest, when the command says `nextest = true`: it runs every test but the
//! doctests (which nextest does not run; they still go through `cargo test --doc`), each
//! in a process of its own, and carve reads its JUnit report. The ids are the same as
//! with `cargo test` (nextest's binary id `package::target` maps back to carve's target
//! label). Selection is a filterset per test
//! (`binary_id(runner-cases::two) & test(=shared_name)`); a test that hangs is killed by
//! nextest itself (`slow-timeout` with `terminate-after`, from the request's per-test
//! timeout) and reported as `timeout`. nextest's store (the JUnit file) is carve's work
//! directory, set in a tool config file there, so nothing is written into the tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use std::time::Instant;

use quick_xml::events::{BytesStart, Event};

use super::libtest::{test_id, without_thread_id};
use super::targets::{Kind, Target, Workspace, split_id};
use super::{Suite, cargo_command, display, spawn_error, startup_error};
use crate::runner::attempts::Attempt;
use crate::runner::steps::{self, Step, StepReader, WorkDir};
use crate::runner::{RunRequest, RunnerError, TestCommand, TestId, TestOutcome, TestStatus};
use carve_core::process::{Ended, Limits, Progress, Stop};

/// What the nextest part of an attempt gives: outcomes, how nextest ended, its command.
pub(crate) type Part = (BTreeMap<TestId, TestOutcome>, Option<Ended>, Option<String>);

impl Suite {
    /// Run the non-doctest part of an attempt with nextest. `Ok(Err(attempt))` when nextest
    /// stopped before running anything (that attempt carries the error).
    pub(super) fn nextest_part(
        &self,
        req: &RunRequest,
        work: &WorkDir,
        selection: Option<&[TestId]>,
        deadline: Instant,
        number: u32,
    ) -> Result<Result<Part, Attempt>, RunnerError> {
        let TestCommand::Cargo { args: user, workspace, .. } = &req.command else {
            unreachable!("rust::runner called for {}", req.command.runner_name())
        };
        let ids: Option<Vec<TestId>> = match selection {
            None if self.broken.is_empty() => None,
            None => Some(self.compiling_targets()),
            Some(ids) => Some(ids.to_vec()),
        };
        let dir = work.dir.join(format!("nextest-{number}"));
        std::fs::create_dir_all(&dir).map_err(RunnerError::io("create", &dir))?;
        let (config, junit) = write_config(&dir, req.test_timeout)?;
        let Some(mut args) = args(user, *workspace, &config, &self.ws, &self.listed, ids.as_deref()) else {
            return Ok(Ok((BTreeMap::new(), None, None)));
        };
        args.insert(2, "--locked".into());
        if !self.broken.is_empty() {
            // nextest builds every target of the package whatever the filter says: name the
            // ones that compile (the tests of the others are missing, their build error is
            // in the collection errors), as the libtest path does.
            let Some(flags) = compiling_target_flags(&self.ws, &self.broken, ids.as_deref().unwrap_or(&[])) else {
                return Ok(Ok((BTreeMap::new(), None, None)));
            };
            args.splice(3..3, flags);
        }
        args.push("--no-tests=pass".into());
        args.extend(req.extra_args.iter().cloned());
        let line = display(&args);
        let step = Step { cmd: cargo_command(req, work, &args), command_line: line.clone() };
        // nextest kills a hanging test itself after the per-test timeout; carve's watchdog
        // only steps in when nextest itself stops making progress.
        let limits = Limits::new(deadline, req.test_timeout + Duration::from_secs(60));
        let ended = steps::run_steps(vec![step], &dir, "nextest", limits, &mut Growth::default())
            .map_err(|(l, e)| spawn_error(&l, e))?;
        if ended.stop != Stop::Exited {
            return Ok(Ok((BTreeMap::new(), Some(ended), Some(line))));
        }
        match std::fs::read_to_string(&junit) {
            Ok(xml) => {
                let results = read_junit(&xml, &self.ws).map_err(|detail| RunnerError::Unparseable {
                    command: line.clone(),
                    detail,
                    tail: ended.tail(),
                })?;
                Ok(Ok((results, Some(ended), Some(line))))
            }
            Err(_) => {
                let err = if ended.tail().contains("no such command: `nextest`") {
                    RunnerError::ToolNotFound {
                        program: "cargo-nextest".into(),
                        hint: "run `cargo install cargo-nextest --locked`, or set `test.nextest = false` in carve.toml"
                            .into(),
                    }
                } else {
                    startup_error(&work.root, &line, &ended)
                };
                Ok(Err(Attempt::failed_to_start(line, ended, err)))
            }
        }
    }
}

/// The profile carve defines in its tool config file.
const PROFILE: &str = "carve";

/// nextest's id of a target's test binary.
pub(crate) fn binary_id(t: &Target) -> String {
    match t.kind {
        Kind::Lib => t.package.clone(),
        Kind::Test => format!("{}::{}", t.package, t.name),
        Kind::Bin => format!("{}::bin/{}", t.package, t.name),
        Kind::Example => format!("{}::example/{}", t.package, t.name),
        Kind::Bench => format!("{}::bench/{}", t.package, t.name),
    }
}

/// Write carve's nextest tool config into `dir`; returns its path and the JUnit report's.
pub(crate) fn write_config(dir: &Path, test_timeout: Duration) -> Result<(PathBuf, PathBuf), RunnerError> {
    let store = dir.join("nextest-store");
    let path = dir.join("carve-nextest.toml");
    let secs = test_timeout.as_secs().max(1);
    let text = format!(
        "[store]\ndir = {store:?}\n\n[profile.{PROFILE}]\nfail-fast = false\nretries = 0\n\
         slow-timeout = {{ period = \"{secs}s\", terminate-after = 1 }}\n\n\
         [profile.{PROFILE}.junit]\npath = \"junit.xml\"\nstore-success-output = false\n",
        store = store.display().to_string()
    );
    std::fs::write(&path, text).map_err(RunnerError::io("write", &path))?;
    Ok((path, store.join(PROFILE).join("junit.xml")))
}

/// `cargo nextest run` arguments (after `cargo`) for the non-doctest part of a run:
/// everything (`ids` = `None`) or the given ids; `None` when there is nothing to run.
pub(crate) fn args(
    user: &[String],
    workspace: bool,
    config: &Path,
    ws: &Workspace,
    listed: &[TestId],
    ids: Option<&[TestId]>,
) -> Option<Vec<String>> {
    let mut args: Vec<String> = ["nextest", "run", "--no-fail-fast"].map(String::from).to_vec();
    if workspace {
        args.push("--workspace".into());
    }
    args.extend(user.iter().cloned());
    args.extend(["--tool-config-file".to_string(), format!("carve:{}", config.display())]);
    args.extend(["--profile".to_string(), PROFILE.to_string()]);
    let Some(ids) = ids else { return Some(args) };
    let mut terms = Vec::new();
    for id in ids {
        let (label, doc, name) = split_id(id);
        let Some(target) = ws.targets.get(label) else {
            continue;
        };
        if doc {
            continue;
        }
        let bid = binary_id(target);
        let term = if name.is_empty() {
            format!("binary_id({bid})")
        } else if listed.iter().any(|t| t == id) {
            format!("(binary_id({bid}) & test(={name}))")
        } else {
            format!("(binary_id({bid}) & test(/^{}(::|$)/))", regex_escape(name))
        };
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    if terms.is_empty() {
        return None;
    }
    args.extend(["-E".to_string(), terms.join(" | ")]);
    Some(args)
}

/// `-p <package> --lib --test <name> …` for the targets of `ids` (all tested targets when
/// `ids` is empty or names a doctest only) that are not `broken`; `None` when every such
/// target is broken.
pub(crate) fn compiling_target_flags(
    ws: &Workspace,
    broken: &BTreeMap<String, String>,
    ids: &[TestId],
) -> Option<Vec<String>> {
    let wanted: Vec<&Target> = ws
        .targets
        .values()
        .filter(|t| !broken.contains_key(&t.label))
        .filter(|t| {
            if ids.is_empty() {
                return t.tested;
            }
            ids.iter().any(|id| {
                let (label, doc, _) = split_id(id);
                label == t.label && !doc
            })
        })
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let mut packages: Vec<&str> = wanted.iter().map(|t| t.package.as_str()).collect();
    packages.sort();
    packages.dedup();
    let mut flags = Vec::new();
    for p in packages {
        flags.extend(["-p".to_string(), ws.spec(p).to_string()]);
    }
    for t in wanted {
        let f = t.cargo_flags();
        if f != ["--lib"] || !flags.iter().any(|x| x == "--lib") {
            flags.extend(f);
        }
    }
    Some(flags)
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if r"\.+*?()|[]{}^$/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Outcomes from nextest's JUnit report.
pub(crate) fn read_junit(xml: &str, ws: &Workspace) -> Result<BTreeMap<TestId, TestOutcome>, String> {
    let by_binary: BTreeMap<String, &Target> = ws.targets.values().map(|t| (binary_id(t), t)).collect();
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = BTreeMap::new();
    let mut target: Option<&Target> = None;
    let mut case: Option<(TestId, TestOutcome)> = None;
    loop {
        let event = reader.read_event().map_err(|e| format!("JUnit report: {e}"))?;
        match event {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testsuite" => {
                let name = attr(&e, "name")?.unwrap_or_default();
                target = by_binary.get(&name).copied();
                if target.is_none() {
                    return Err(format!("JUnit report: no workspace target has nextest binary id `{name}`"));
                }
            }
            Event::Start(ref e) | Event::Empty(ref e) if e.name().as_ref() == b"testcase" => {
                let name = attr(e, "name")?.unwrap_or_default();
                let millis = attr(e, "time")?.and_then(|t| t.parse::<f64>().ok()).map(|s| (s * 1000.0).round() as u64);
                let id = target.map(|t| test_id(t, false, &name)).unwrap_or(name);
                let outcome = TestOutcome { status: TestStatus::Passed, duration_ms: millis, message: None };
                if matches!(event, Event::Empty(_)) {
                    out.insert(id, outcome);
                } else {
                    case = Some((id, outcome));
                }
            }
            Event::Start(ref e) | Event::Empty(ref e) if case.is_some() => {
                let kind = attr(e, "type")?.unwrap_or_default();
                let message = attr(e, "message")?.map(|m| without_thread_id(&m));
                if let Some((_, o)) = case.as_mut() {
                    match e.name().as_ref() {
                        b"failure" if kind.contains("timeout") => {
                            o.status = TestStatus::Timeout;
                            o.message = Some("killed by nextest after its slow-timeout".into());
                        }
                        b"failure" => {
                            o.status = TestStatus::Failed;
                            o.message = message;
                        }
                        b"error" => {
                            o.status = TestStatus::Error;
                            o.message = message.or(Some(kind));
                        }
                        b"skipped" => {
                            o.status = TestStatus::Skipped;
                            o.message = message;
                        }
                        _ => {}
                    }
                }
            }
            Event::End(e) if e.name().as_ref() == b"testcase" => {
                if let Some((id, o)) = case.take() {
                    out.insert(id, o);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

fn attr(e: &BytesStart<'_>, name: &str) -> Result<Option<String>, String> {
    match e.try_get_attribute(name) {
        Ok(Some(a)) => a.unescape_value().map(|v| Some(v.into_owned())).map_err(|e| format!("JUnit report: {e}")),
        Ok(None) => Ok(None),
        Err(e) => Err(format!("JUnit report: {e}")),
    }
}

/// Progress of a nextest process: its output growing (it prints a line per finished test).
#[derive(Default)]
pub(crate) struct Growth {
    path: PathBuf,
    size: u64,
}

impl Progress for Growth {
    fn poll(&mut self) -> bool {
        let size = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let grew = size > self.size;
        self.size = size;
        grew
    }
}

impl StepReader for Growth {
    fn begin(&mut self, stdout: &Path) {
        self.path = stdout.to_path_buf();
        self.size = 0;
    }

    fn end(&mut self, _: &Ended) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"packages":[{"id":"a","name":"runner-cases","manifest_path":"/w/Cargo.toml","targets":[
        {"name":"runner_cases","kind":["lib"],"src_path":"/w/src/lib.rs"},
        {"name":"two","kind":["test"],"src_path":"/w/tests/two.rs"}]}],"workspace_members":["a"],"workspace_root":"/w"}"#;

    const JUNIT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="4">
    <testsuite name="runner-cases" tests="3">
        <testcase name="tests::adds" classname="runner-cases" time="0.009"/>
        <testcase name="tests::fails" classname="runner-cases" time="0.162">
            <failure message="thread &apos;tests::fails&apos; (14508) panicked at src/lib.rs:35:9" type="test failure with exit code 101">long output</failure>
        </testcase>
        <testcase name="tests::hangs" classname="runner-cases" time="2.010">
            <failure type="test timeout"/>
        </testcase>
    </testsuite>
    <testsuite name="runner-cases::two" tests="1">
        <testcase name="shared_name" classname="runner-cases::two" time="0.013"/>
    </testsuite>
</testsuites>"#;

    #[test]
    fn junit_reports_map_back_to_carve_ids() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let r = read_junit(JUNIT, &ws).unwrap();
        let got: Vec<(&str, TestStatus)> = r.iter().map(|(k, v)| (k.as_str(), v.status)).collect();
        assert_eq!(
            got,
            vec![
                ("runner_cases::tests::adds", TestStatus::Passed),
                ("runner_cases::tests::fails", TestStatus::Failed),
                ("runner_cases::tests::hangs", TestStatus::Timeout),
                ("two::shared_name", TestStatus::Passed),
            ]
        );
        assert_eq!(
            r["runner_cases::tests::fails"].message.as_deref(),
            Some("thread 'tests::fails' panicked at src/lib.rs:35:9")
        );
        assert_eq!(r["runner_cases::tests::adds"].duration_ms, Some(9));
        assert!(read_junit(r#"<testsuite name="elsewhere"></testsuite>"#, &ws).is_err());
    }

    #[test]
    fn a_broken_target_is_left_out_of_what_nextest_builds() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let broken: BTreeMap<String, String> = [("two".to_string(), "error[E0432]".to_string())].into();
        let all = compiling_target_flags(&ws, &broken, &[]).unwrap();
        assert_eq!(all, ["-p", "runner-cases", "--lib"]);
        // Only the broken target asked for: nothing to build or run.
        assert_eq!(compiling_target_flags(&ws, &broken, &["two::shared_name".to_string()]), None);
        let some = compiling_target_flags(&ws, &broken, &["runner_cases::tests::adds".into(), "two::x".into()]);
        assert_eq!(some.unwrap(), ["-p", "runner-cases", "--lib"]);
    }

    #[test]
    fn selections_become_filtersets() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let listed = vec!["two::shared_name".to_string(), "runner_cases::tests::adds".to_string()];
        let ids: Vec<TestId> =
            ["two::shared_name", "runner_cases::tests", "runner_cases::doctest::src/lib.rs - add (line 8)"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let a = args(&[], true, Path::new("/s/c.toml"), &ws, &listed, Some(&ids)).unwrap();
        assert_eq!(
            a.join(" "),
            "nextest run --no-fail-fast --workspace --tool-config-file carve:/s/c.toml --profile carve -E \
             (binary_id(runner-cases::two) & test(=shared_name)) | (binary_id(runner-cases) & test(/^tests(::|$)/))"
        );
        let only_doc = vec!["runner_cases::doctest::src/lib.rs - add (line 8)".to_string()];
        assert!(args(&[], true, Path::new("/s/c.toml"), &ws, &listed, Some(&only_doc)).is_none());
    }
}
