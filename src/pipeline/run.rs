//! One run of the project's tests in a shadow copy through its runner, with the warnings
//! every stage wants about it (missing dependencies, hung tests, crashes). Baseline, trace
//! and validate all run tests through here.

use anyhow::Result;
use carve_languages::runner::{RunRequest, RunResult, TestCommand};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::{Session, TestId};

/// Extra settings of one run (for the traced run: the shim's environment and plugin).
#[derive(Default, Clone)]
pub struct RunExtras {
    pub env: Vec<(String, String)>,
    pub pythonpath: Vec<PathBuf>,
    pub args: Vec<String>,
}

/// Run tests of `tree` (a shadow copy) through the project's runner.
pub fn run_tests(
    session: &Session,
    tree: &Path,
    tests: Option<Vec<TestId>>,
    extras: &RunExtras,
    scratch: &Path,
) -> Result<RunResult> {
    let cfg = &session.config;
    let request = RunRequest {
        root: tree.to_path_buf(),
        command: resolved_command(&cfg.test, &session.repo),
        tests,
        env: extras.env.clone(),
        pythonpath_prepend: extras.pythonpath.clone(),
        extra_args: extras.args.clone(),
        timeout: Duration::from_secs(cfg.timeouts.run),
        test_timeout: Duration::from_secs(cfg.timeouts.test),
        scratch: scratch.to_path_buf(),
    };
    let result = carve_languages::run_tests(&request).map_err(|e| {
        let hint = cfg.setup.as_deref().map(|s| format!(" (set-up command: `{s}`)")).unwrap_or_default();
        anyhow::anyhow!("{e}{hint}")
    })?;
    // Test files that cannot import a module usually mean dependencies are not installed.
    if let Some((file, err)) =
        result.collection_errors.iter().find(|(_, e)| e.contains("No module named") || e.contains("Cannot find module"))
    {
        let setup =
            cfg.setup.as_deref().map(|s| format!(": run `{s}` in {}", session.repo.display())).unwrap_or_default();
        session.progress.note(format!(
            "warning: {file} could not be loaded ({err}); the project's dependencies may not be installed{setup}"
        ));
    }
    if let Some(t) = &result.timed_out {
        session
            .progress
            .note(format!("warning: test {t} hung and was killed after its timeout (with its process group)"));
    }
    if result.crashed {
        session.progress.note(format!(
            "warning: the test process crashed during `{}`; tests it did not finish are reported as errors",
            result.command_line
        ));
    }
    Ok(result)
}

/// The test command with a bare interpreter name (`python3`, as detected without a
/// virtualenv) replaced by the interpreter it starts when run in the repository
/// (`sys.executable`), resolved once per process. Version managers put a shell script of
/// that name first on `PATH` (pyenv's shims) that picks the version by the directory
/// (`.python-version` in the repository or above it) and then starts it: run from a shadow
/// copy elsewhere it could pick another version than the user's, and it costs a shell and
/// a `pyenv` process before every test run (0.3-0.5 s each on the benchmark machine). An
/// interpreter given as a path (a virtualenv's) is kept as it is; so is the name when it
/// cannot be resolved (the run then reports the interpreter's own error).
fn resolved_command(command: &TestCommand, repo: &Path) -> TestCommand {
    let TestCommand::Pytest { python, args } = command else { return command.clone() };
    if python.components().count() != 1 {
        return command.clone();
    }
    static RESOLVED: OnceLock<Mutex<BTreeMap<(PathBuf, PathBuf), Option<PathBuf>>>> = OnceLock::new();
    let key = (python.clone(), repo.to_path_buf());
    let mut cache = RESOLVED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let resolved = cache.entry(key).or_insert_with(|| interpreter_path(python, repo)).clone();
    TestCommand::Pytest { python: resolved.unwrap_or_else(|| python.clone()), args: args.clone() }
}

/// `sys.executable` of `python` started in `dir`, when it names an existing file.
fn interpreter_path(python: &Path, dir: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new(python)
        .args(["-c", "import sys; print(sys.executable)"])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[carve_testutil::needs("python3")]
    fn a_bare_interpreter_name_resolves_to_the_interpreter_it_starts_and_a_path_stays() {
        let dir = tempfile::tempdir().unwrap();
        let bare = TestCommand::pytest("python3", vec!["-q".into()]);
        let TestCommand::Pytest { python, args } = resolved_command(&bare, dir.path()) else { unreachable!() };
        assert_eq!(args, vec!["-q".to_string()]);
        assert!(python.is_absolute() && python.is_file(), "{}", python.display());
        // Started directly, it is the interpreter that `python3` started.
        let again = std::process::Command::new(&python).args(["-c", "import sys; print(sys.executable)"]).output();
        assert_eq!(String::from_utf8_lossy(&again.unwrap().stdout).trim(), python.to_string_lossy());
        let venv = TestCommand::pytest(".venv/bin/python", vec![]);
        assert_eq!(resolved_command(&venv, dir.path()), venv);
        let missing = TestCommand::pytest("no-such-python-carve", vec![]);
        assert_eq!(resolved_command(&missing, dir.path()), missing);
    }
}
