//! The pytest runner against real pytest on small projects made here. Ignored (with the reason)
//! when `python3` has no pytest.

use super::*;
use std::collections::BTreeSet;

struct Project {
    root: tempfile::TempDir,
    scratch: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let root = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Project { root, scratch: tempfile::tempdir().unwrap() }
    }

    fn request(&self, tests: Option<&[&str]>) -> RunRequest {
        let mut r =
            RunRequest::new(self.root.path(), TestCommand::pytest("python3", vec![]), self.scratch.path().join("s"));
        r.tests = tests.map(|t| t.iter().map(|s| s.to_string()).collect());
        r.timeout = Duration::from_secs(120);
        r.test_timeout = Duration::from_secs(60);
        r
    }

    /// Every file and directory under the root with its bytes.
    fn tree(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let p = entry.unwrap().path();
                let rel = p.strip_prefix(base).unwrap().to_path_buf();
                if p.is_dir() {
                    out.insert(rel, None);
                    walk(&p, base, out);
                } else {
                    out.insert(rel, Some(std::fs::read(&p).unwrap()));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.root.path(), self.root.path(), &mut out);
        out
    }

    /// The scratch directory holds nothing once a run is over.
    fn assert_scratch_cleaned(&self) {
        let left: Vec<_> = std::fs::read_dir(self.scratch.path().join("s")).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

fn statuses(r: &RunResult) -> Vec<(String, TestStatus)> {
    r.statuses.iter().map(|(k, v)| (k.clone(), v.status)).collect()
}

fn message<'a>(r: &'a RunResult, id: &str) -> &'a str {
    r.statuses.get(id).and_then(|o| o.message.as_deref()).unwrap_or("")
}

const KINDS: &str = r#"
import pytest
from pkg.helpers import double

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

@pytest.fixture
def bad_teardown():
    yield 1
    raise RuntimeError("teardown exploded")

def test_pass(answer):
    assert double(answer) == 84

def test_fail():
    assert 1 == 2, "one is not two"

def test_fixture_error(broken):
    pass

def test_teardown_error(bad_teardown):
    pass

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

def test_skip_inside():
    pytest.skip("skipped inside")

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

@pytest.mark.xfail(strict=True, reason="should fail")
def test_xpass_strict():
    pass

@pytest.mark.xfail(reason="maybe")
def test_xpass():
    pass

@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n != 2

class TestThing:
    def test_method(self):
        assert True

    def test_method_fails(self):
        raise ValueError("bad value")
"#;

fn kinds_project() -> Project {
    Project::new(&[
        // `-x` in addopts would stop at the first failure: carve's flags must win.
        ("pytest.ini", "[pytest]\naddopts = -x\n"),
        ("pkg/__init__.py", ""),
        ("pkg/helpers.py", "def double(x):\n    return 2 * x\n"),
        ("tests/conftest.py", "import pytest\n\n@pytest.fixture\ndef answer():\n    return 42\n"),
        ("tests/test_kinds.py", KINDS),
        ("tests/test_other.py", "def test_other():\n    pass\n"),
    ])
}

#[carve_testutil::needs("pytest")]
fn every_kind_of_outcome_gets_its_status_and_the_tree_is_untouched() {
    let p = kinds_project();
    let before = p.tree();
    let r = run(&p.request(None)).unwrap();
    let k = |t: &str| format!("tests/test_kinds.py::{t}");
    let expected: Vec<(String, TestStatus)> = vec![
        (k("TestThing::test_method"), TestStatus::Passed),
        (k("TestThing::test_method_fails"), TestStatus::Failed),
        (k("test_fail"), TestStatus::Failed),
        (k("test_fixture_error"), TestStatus::Error),
        (k("test_param[1]"), TestStatus::Passed),
        (k("test_param[2]"), TestStatus::Failed),
        (k("test_param[3]"), TestStatus::Passed),
        (k("test_pass"), TestStatus::Passed),
        (k("test_skip"), TestStatus::Skipped),
        (k("test_skip_inside"), TestStatus::Skipped),
        (k("test_teardown_error"), TestStatus::Error),
        (k("test_xfail"), TestStatus::Skipped),
        (k("test_xpass"), TestStatus::Passed),
        (k("test_xpass_strict"), TestStatus::Failed),
        ("tests/test_other.py::test_other".to_string(), TestStatus::Passed),
    ];
    assert_eq!(statuses(&r), expected, "stdout:\n{}\nstderr:\n{}", r.stdout_tail, r.stderr_tail);
    assert!(message(&r, &k("test_fail")).contains("one is not two"), "{}", message(&r, &k("test_fail")));
    assert!(message(&r, &k("test_fixture_error")).contains("fixture exploded"));
    assert!(message(&r, &k("test_teardown_error")).contains("teardown exploded"));
    assert!(message(&r, &k("test_skip")).contains("not today"));
    assert_eq!(message(&r, &k("test_xfail")), "xfail: known bug");
    assert!(message(&r, &k("test_xpass_strict")).contains("XPASS(strict)"));
    assert!(message(&r, &k("TestThing::test_method_fails")).contains("ValueError: bad value"));
    assert!(!message(&r, &k("test_pass")).contains('\n'));
    assert!(r.statuses[&k("test_pass")].duration_ms.is_some());
    assert_eq!(r.exit_code, Some(1));
    assert_eq!((r.timed_out.as_deref(), r.crashed, r.processes), (None, false, 1));
    assert!(r.collection_errors.is_empty());
    assert!(
        r.command_line.contains("-p carve_report") && r.command_line.contains("-p no:cacheprovider"),
        "{}",
        r.command_line
    );
    assert_eq!(p.tree(), before, "the run wrote into the tree");
    p.assert_scratch_cleaned();
}

#[carve_testutil::needs("pytest")]
fn a_selection_reports_exactly_the_requested_ids() {
    let p = kinds_project();
    let req = p.request(Some(&[
        "tests/test_kinds.py::test_pass",
        "tests/test_kinds.py::test_param[2]",
        "tests/test_kinds.py::TestThing",
        "tests/test_kinds.py::test_does_not_exist",
        "tests/test_gone.py::test_x",
    ]));
    let r = run(&req).unwrap();
    let expected = vec![
        ("tests/test_gone.py::test_x".to_string(), TestStatus::Missing),
        ("tests/test_kinds.py::TestThing::test_method".to_string(), TestStatus::Passed),
        ("tests/test_kinds.py::TestThing::test_method_fails".to_string(), TestStatus::Failed),
        ("tests/test_kinds.py::test_does_not_exist".to_string(), TestStatus::Missing),
        ("tests/test_kinds.py::test_param[2]".to_string(), TestStatus::Failed),
        ("tests/test_kinds.py::test_pass".to_string(), TestStatus::Passed),
    ];
    assert_eq!(statuses(&r), expected, "{}", r.stdout_tail);
    // Only the requested file was handed to pytest.
    assert!(r.command_line.ends_with(" tests/test_kinds.py"), "{}", r.command_line);

    // Nothing requested exists: no process at all, everything missing.
    let r = run(&p.request(Some(&["tests/nowhere.py::test_a"]))).unwrap();
    assert_eq!(statuses(&r), vec![("tests/nowhere.py::test_a".to_string(), TestStatus::Missing)]);
    assert_eq!(r.processes, 0);
    p.assert_scratch_cleaned();
}

/// Tests of every test file of `tests/`: pytest is handed the directory (one collection of
/// it, not one per file argument) and still reports exactly the requested ids.
#[carve_testutil::needs("pytest")]
fn a_selection_of_every_file_of_a_directory_passes_the_directory() {
    let p = kinds_project();
    let r = run(&p.request(Some(&["tests/test_kinds.py::test_pass", "tests/test_other.py::test_other"]))).unwrap();
    let expected = vec![
        ("tests/test_kinds.py::test_pass".to_string(), TestStatus::Passed),
        ("tests/test_other.py::test_other".to_string(), TestStatus::Passed),
    ];
    assert_eq!(statuses(&r), expected, "{}", r.stdout_tail);
    assert!(r.command_line.ends_with(" tests"), "{}", r.command_line);
    p.assert_scratch_cleaned();
}

#[carve_testutil::needs("pytest")]
fn collect_lists_ids_without_running_them() {
    let p = Project::new(&[(
        "tests/test_a.py",
        "import pathlib\n\ndef test_one():\n    pathlib.Path('ran').write_text('x')\n\nclass TestK:\n    def test_two(self):\n        pass\n",
    )]);
    let c = collect(&p.request(None)).unwrap();
    let ids: Vec<&str> = c.ids.iter().map(String::as_str).collect();
    assert_eq!(ids, vec!["tests/test_a.py::TestK::test_two", "tests/test_a.py::test_one"]);
    assert!(!p.root.path().join("ran").exists());
    let c = collect(&p.request(Some(&["tests/test_a.py::TestK"]))).unwrap();
    assert_eq!(c.ids, BTreeSet::from(["tests/test_a.py::TestK::test_two".to_string()]));
}

/// A parametrized id that depends on string hashing: the tuple's id is its position
/// (`value3`), and its position in a set of strings changes with the hash seed (w3lib's
/// `…-output185` came and went from run to run). Every run seeds hashing the same way, so
/// the ids are the same in every run (unseeded, four runs agree about once in 700).
#[carve_testutil::needs("pytest")]
fn test_ids_that_depend_on_string_hashing_are_the_same_in_every_run() {
    let p = Project::new(&[(
        "tests/test_h.py",
        concat!(
            "import pytest\n\n",
            "VALUES = list({'alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', ('t',)})\n\n\n",
            "@pytest.mark.parametrize('value', VALUES)\ndef test_v(value):\n    pass\n",
        ),
    )]);
    let tuple_id = |ids: &BTreeSet<String>| ids.iter().find(|i| i.contains("[value")).cloned();
    let first = collect(&p.request(None)).unwrap().ids;
    assert_eq!(first.len(), 9, "{first:?}");
    let id = tuple_id(&first).expect("the tuple's id");
    for _ in 0..3 {
        let again = collect(&p.request(None)).unwrap().ids;
        assert_eq!(tuple_id(&again).as_ref(), Some(&id), "{again:?}");
    }
}

/// A Hypothesis property test draws the same examples in every run carve makes (unseeded,
/// each run draws new ones: w3lib's `test_idempotent` reached code on a masked state that the
/// traced run's examples never had), and the tree gets no `.hypothesis` database.
#[carve_testutil::needs("pytest", "hypothesis")]
fn hypothesis_draws_the_same_examples_in_every_run() {
    let p = Project::new(&[(
        "tests/test_prop.py",
        concat!(
            "import os\n\nfrom hypothesis import given, strategies as st\n\n\n",
            "@given(st.integers())\ndef test_draws(x):\n",
            "    with open(os.environ['DRAWS'], 'a') as f:\n        f.write(f'{x}\\n')\n",
        ),
    )]);
    let before = p.tree();
    let draws = |n: usize| {
        let file = p.scratch.path().join(format!("draws-{n}"));
        let mut req = p.request(None);
        req.env.push(("DRAWS".into(), file.display().to_string()));
        let r = run(&req).unwrap();
        assert_eq!(statuses(&r), [("tests/test_prop.py::test_draws".to_string(), TestStatus::Passed)]);
        std::fs::read_to_string(file).unwrap()
    };
    let first = draws(1);
    assert!(first.lines().count() > 10, "{first}");
    assert_eq!(draws(2), first);
    assert_eq!(p.tree(), before, "the run wrote into the tree");
}

#[carve_testutil::needs("pytest")]
fn a_hung_test_is_killed_with_its_group_and_the_rest_still_run() {
    let p = Project::new(&[(
        "tests/test_hang.py",
        r#"
import os, subprocess, time

def test_a():
    pass

def test_b_hangs():
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["CARVE_TEST_PIDFILE"], "w") as f:
        f.write(str(child.pid))
    time.sleep(300)

def test_c():
    pass
"#,
    )]);
    let before = p.tree();
    let pidfile = p.scratch.path().join("pid");
    let mut req = p.request(None);
    req.test_timeout = Duration::from_secs(2);
    req.env.push(("CARVE_TEST_PIDFILE".into(), pidfile.display().to_string()));
    let started = Instant::now();
    let r = run(&req).unwrap();
    assert!(started.elapsed() < Duration::from_secs(40), "took {:?}", started.elapsed());
    assert_eq!(
        statuses(&r),
        vec![
            ("tests/test_hang.py::test_a".to_string(), TestStatus::Passed),
            ("tests/test_hang.py::test_b_hangs".to_string(), TestStatus::Timeout),
            ("tests/test_hang.py::test_c".to_string(), TestStatus::Passed),
        ],
        "{}",
        r.stderr_tail
    );
    assert_eq!(r.timed_out.as_deref(), Some("tests/test_hang.py::test_b_hangs"));
    assert!(message(&r, "tests/test_hang.py::test_b_hangs").contains("no progress for 2s"));
    assert!(!r.crashed);
    assert_eq!(r.processes, 2);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(crate::runner::tests_support::process_gone(pid.trim()), "the test's child {pid} outlived the run");
    assert_eq!(p.tree(), before);
}

#[carve_testutil::needs("pytest")]
fn the_run_deadline_kills_even_a_test_that_ignores_sigterm() {
    let p = Project::new(&[(
        "tests/test_slow.py",
        "import signal, time\n\ndef test_a():\n    pass\n\ndef test_b_stubborn():\n    \
         signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(300)\n\ndef test_c():\n    pass\n",
    )]);
    let mut req = p.request(None);
    // Long enough for pytest to start and collect on a loaded machine.
    req.timeout = Duration::from_secs(10);
    let started = Instant::now();
    let r = run(&req).unwrap();
    assert!(started.elapsed() < Duration::from_secs(40), "took {:?}", started.elapsed());
    assert_eq!(r.status("tests/test_slow.py::test_a"), TestStatus::Passed);
    assert_eq!(r.status("tests/test_slow.py::test_b_stubborn"), TestStatus::Timeout);
    assert_eq!(r.status("tests/test_slow.py::test_c"), TestStatus::Timeout);
    assert!(message(&r, "tests/test_slow.py::test_c").starts_with("not run: the run's time limit"));
    assert_eq!(r.timed_out.as_deref(), Some("tests/test_slow.py::test_b_stubborn"));
    assert_eq!((r.processes, r.exit_code), (1, None));
}

#[carve_testutil::needs("pytest")]
fn a_test_that_kills_its_process_is_an_error_and_the_rest_still_run() {
    let p = Project::new(&[(
        "tests/test_crash.py",
        "import os\n\ndef test_a():\n    pass\n\ndef test_b_exits():\n    os._exit(3)\n\ndef test_c():\n    assert False\n",
    )]);
    let before = p.tree();
    let r = run(&p.request(None)).unwrap();
    assert_eq!(
        statuses(&r),
        vec![
            ("tests/test_crash.py::test_a".to_string(), TestStatus::Passed),
            ("tests/test_crash.py::test_b_exits".to_string(), TestStatus::Error),
            ("tests/test_crash.py::test_c".to_string(), TestStatus::Failed),
        ]
    );
    assert_eq!(message(&r, "tests/test_crash.py::test_b_exits"), attempts::CRASHED_MESSAGE);
    assert!(r.crashed);
    assert_eq!(r.timed_out, None);
    assert_eq!(r.processes, 2);
    assert_eq!(p.tree(), before);
}

#[carve_testutil::needs("pytest")]
fn collection_errors_are_per_file() {
    let p = Project::new(&[
        ("tests/test_broken.py", "import not_a_module_anywhere\n\ndef test_x():\n    pass\n"),
        ("tests/test_ok.py", "def test_ok():\n    pass\n"),
    ]);
    let r = run(&p.request(None)).unwrap();
    assert_eq!(statuses(&r), vec![("tests/test_ok.py::test_ok".to_string(), TestStatus::Passed)]);
    let err = r.collection_errors.get("tests/test_broken.py").map(String::as_str).unwrap_or("");
    assert!(err.contains("No module named 'not_a_module_anywhere'"), "{:?}", r.collection_errors);

    let r = run(&p.request(Some(&["tests/test_broken.py::test_x", "tests/test_ok.py::test_ok"]))).unwrap();
    assert_eq!(r.status("tests/test_broken.py::test_x"), TestStatus::Error);
    assert!(message(&r, "tests/test_broken.py::test_x").starts_with("could not collect tests/test_broken.py"));
    assert_eq!(r.status("tests/test_ok.py::test_ok"), TestStatus::Passed);
}

#[carve_testutil::needs("pytest")]
fn a_broken_conftest_is_an_error_with_the_output_tail() {
    let p = Project::new(&[
        ("conftest.py", "import missing_dependency_xyz\n"),
        ("tests/test_ok.py", "def test_ok():\n    pass\n"),
    ]);
    let err = run(&p.request(None)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RunnerError::Collection { .. }), "{text}");
    assert!(text.contains("missing_dependency_xyz"), "{text}");
    assert!(text.contains("install the project's dependencies"), "{text}");
    p.assert_scratch_cleaned();
}

#[carve_testutil::needs("pytest")]
fn extras_reach_the_test_process() {
    // What the traced run does: a plugin from a private directory, loaded with `-p`, plus
    // environment variables; the project's own PYTHONPATH entries are kept after ours.
    let plugins = tempfile::tempdir().unwrap();
    std::fs::write(
        plugins.path().join("my_shim.py"),
        "LOADED = []\n\ndef pytest_configure(config):\n    LOADED.append(1)\n",
    )
    .unwrap();
    let extra = tempfile::tempdir().unwrap();
    std::fs::write(extra.path().join("extra_mod.py"), "VALUE = 7\n").unwrap();
    let p = Project::new(&[(
        "tests/test_env.py",
        "import os, sys\n\ndef test_env():\n    import my_shim, extra_mod\n    assert my_shim.LOADED == [1]\n    \
         assert extra_mod.VALUE == 7\n    assert os.environ['CARVE_FLAG'] == 'on'\n    assert sys.dont_write_bytecode\n",
    )]);
    let mut req = p.request(None);
    req.extra_args = vec!["-p".into(), "my_shim".into()];
    req.pythonpath_prepend = vec![plugins.path().to_path_buf()];
    req.env = vec![("CARVE_FLAG".into(), "on".into()), ("PYTHONPATH".into(), extra.path().display().to_string())];
    let r = run(&req).unwrap();
    assert_eq!(
        r.status("tests/test_env.py::test_env"),
        TestStatus::Passed,
        "{}",
        message(&r, "tests/test_env.py::test_env")
    );
}

#[carve_testutil::needs("pytest")]
fn set_up_problems_say_what_to_do() {
    let p = Project::new(&[("tests/test_ok.py", "def test_ok():\n    pass\n")]);
    // An interpreter without site-packages has no pytest.
    let bin = tempfile::tempdir().unwrap();
    let python = bin.path().join("python");
    std::fs::write(&python, "#!/bin/sh\nexec python3 -S \"$@\"\n").unwrap();
    let mut perms = std::fs::metadata(&python).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&python, perms).unwrap();
    let mut req = p.request(None);
    req.command = TestCommand::pytest(&python, vec![]);
    let err = run(&req).unwrap_err();
    assert!(matches!(err, RunnerError::PytestNotInstalled { .. }), "{err}");
    assert!(err.to_string().contains("-m pip install pytest"), "{err}");
    assert!(matches!(check_pytest(&python), Err(RunnerError::PytestNotInstalled { .. })));

    req.command = TestCommand::pytest("/nonexistent/bin/python3", vec![]);
    let err = run(&req).unwrap_err();
    assert!(matches!(err, RunnerError::InterpreterNotFound { .. }), "{err}");
    assert!(err.to_string().contains("test.python"), "{err}");

    let mut req = p.request(None);
    req.scratch = p.root.path().join("scratch");
    assert!(matches!(run(&req), Err(RunnerError::ScratchInsideRoot { .. })));
    assert!(!p.root.path().join("scratch").exists());
}

#[test]
fn report_lines_are_parsed_and_bad_ones_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"event\":\"header\",\"version\":1,\"pid\":1,\"pytest\":\"9\"}\n",
            "{\"event\":\"collected\",\"ids\":[\"a.py::t\",\"a.py::u\"]}\n",
            "{\"event\":\"start\",\"id\":\"a.py::t\"}\n",
            "{\"event\":\"result\",\"id\":\"a.py::t\",\"status\":\"failed\",\"duration\":0.0125,\"message\":\"boom\"}\n",
            "{\"event\":\"start\",\"id\":\"a.py::u\"}\n",
            "{\"event\":\"resu",
        ),
    )
    .unwrap();
    let mut r = ReportReader::new(path.clone());
    assert!(r.poll());
    assert_eq!(r.collected.as_deref(), Some(&["a.py::t".to_string(), "a.py::u".to_string()][..]));
    assert_eq!(
        r.results["a.py::t"],
        TestOutcome { status: TestStatus::Failed, duration_ms: Some(13), message: Some("boom".into()) }
    );
    assert_eq!(r.running.as_ref().map(|(id, _)| id.as_str()), Some("a.py::u"));
    assert!(!r.poll(), "a partial line is not progress");
    assert!(r.problem.is_none());

    std::fs::write(&path, "{\"event\":\"header\",\"version\":1}\nnot json\n").unwrap();
    let mut r = ReportReader::new(path);
    r.poll();
    assert!(r.problem.as_deref().unwrap_or("").contains("line 2"), "{:?}", r.problem);
}
