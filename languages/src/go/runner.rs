//! The `go test` runner: ids `importpath/TestX/sub` (subtests as `go test` prints them:
//! spaces as `_`, duplicates as `#01`), statuses from `go test -json` (test2json events).
//!
//! A run first asks `go list -e` for the packages and `go test -list` for each package's
//! top-level tests (this also builds the test binaries, so a package that does not build is
//! known before anything runs: its requested tests get `error` with the compiler's output).
//! Then `go test -json -count=1 -timeout=0 <args> [-run pattern] <packages>` runs them,
//! `-count=1` so the test cache never answers instead of the tests. Selection goes through
//! `-run`: per package, one anchored, escaped alternation per subtest level
//! (`^(TestA|TestB)$/^(sub)$`); packages with the same pattern share a process. A level is
//! only restricted when every requested test of the package reaches it, so the pattern may
//! select more than was asked (sibling subtests), never less; what was not asked for is
//! dropped from the result.
//!
//! Nothing is written into the tree: go keeps its build cache in GOCACHE (the user's), test
//! binaries in a temporary directory (GOTMPDIR, pointed at carve's scratch directory).

mod events;
pub mod harness;
pub mod panics;
mod unbuilt;

pub use events::text_log;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use events::{GoReader, test_id};

use crate::runner::attempts::{self, Attempt};
use crate::runner::steps::{self, Step, WorkDir, last_lines};
use crate::runner::{
    Collection, RunRequest, RunResult, RunnerError, TestCommand, TestId, TestOutcome, TestStatus, is_ancestor,
};
use carve_core::process::{self, Ended, Limits, Stop};

/// The command that fetches a module's dependencies, named in errors.
pub const SETUP: &str = "go mod download";

/// Run the tests `req` asks for with `go test`.
pub fn run(req: &RunRequest) -> Result<RunResult, RunnerError> {
    let work = WorkDir::create(req, "go")?;
    let result = run_in(req, &work);
    work.remove();
    let mut result = result?;
    attempts::keep_requested(&mut result, req.tests.as_deref());
    Ok(result)
}

/// The tests `go test` would run for `req`: top-level tests only (subtests exist only once
/// their parent runs), plus requested subtests of listed tests.
pub fn collect(req: &RunRequest) -> Result<Collection, RunnerError> {
    let work = WorkDir::create(req, "go")?;
    let suite = Suite::list(req, &work, Instant::now() + req.timeout);
    work.remove();
    let suite = suite?;
    Ok(Collection {
        ids: suite.units(req.tests.as_deref()).into_iter().collect(),
        collection_errors: suite.build_failed.clone(),
        command_line: suite.command_line.clone(),
    })
}

fn run_in(req: &RunRequest, work: &WorkDir) -> Result<RunResult, RunnerError> {
    let deadline = Instant::now() + req.timeout;
    let suite = Suite::list(req, work, deadline)?;
    attempts::run_with_reruns(req, |selection, deadline, number| suite.attempt(req, work, selection, deadline, number))
}

fn go_command(req: &RunRequest, work: &WorkDir, args: &[String]) -> Command {
    let mut cmd = Command::new("go");
    cmd.args(args).current_dir(&work.root);
    cmd.env("GOTMPDIR", &work.dir);
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    cmd
}

/// What `go list` and `go test -list` found.
struct Suite {
    /// Every package of the module (or of the command's package patterns).
    packages: BTreeSet<String>,
    /// Listed top-level tests per package.
    tests: BTreeMap<String, Vec<TestId>>,
    build_failed: BTreeMap<String, String>,
    command_line: String,
}

impl Suite {
    fn list(req: &RunRequest, work: &WorkDir, deadline: Instant) -> Result<Suite, RunnerError> {
        let TestCommand::GoTest { packages: patterns, args: user_args } = &req.command else {
            unreachable!("go::runner called for {}", req.command.runner_name())
        };
        let patterns = patterns.clone().unwrap_or_else(|| vec!["./...".to_string()]);
        let limits = Limits::new(deadline, req.timeout);
        let template = "{{.ImportPath}}{{if .Error}}\t{{.Error}}{{end}}";
        let mut args = vec!["list".to_string(), "-e".into(), "-f".into(), template.into()];
        args.extend(patterns.iter().cloned());
        let timed_out = |command: String, ended: &Ended| RunnerError::CollectionTimeout {
            runner: "go test",
            root: work.root.clone(),
            command,
            after: req.timeout,
            tail: ended.tail(),
        };
        let line = process::display_command(Path::new("go"), &args);
        let out = work.dir.join("go-list.out");
        let ended =
            process::supervise(go_command(req, work, &args), &out, &work.dir.join("go-list.err"), limits, &mut Quiet)
                .map_err(|e| spawn_error(&line, e))?;
        if ended.stop != Stop::Exited {
            return Err(timed_out(line, &ended));
        }
        let text = std::fs::read_to_string(&out).map_err(RunnerError::io("read", &out))?;
        // `-e` reports a pattern that matched nothing as a "package" named by the pattern.
        let mut all = BTreeSet::new();
        let mut errors = Vec::new();
        for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (path, error) = l.split_once('\t').unwrap_or((l, ""));
            if path.starts_with('.') || path.starts_with('/') || path.contains("...") {
                errors.push(format!("{path}: {error}"));
            } else {
                all.insert(path.to_string());
            }
        }
        if ended.exit_code != Some(0) || all.is_empty() {
            let mut ended = ended;
            ended.stderr_tail.push_str(&errors.join("\n"));
            return Err(startup_error(&work.root, &line, &ended));
        }
        // Only the packages the selection needs are listed (and built).
        let wanted: Vec<String> = match &req.tests {
            None => all.iter().cloned().collect(),
            Some(ids) => {
                let set: BTreeSet<String> =
                    ids.iter().filter_map(|id| package_of(&all, id)).map(String::from).collect();
                set.into_iter().collect()
            }
        };
        let mut suite =
            Suite { packages: all, tests: BTreeMap::new(), build_failed: BTreeMap::new(), command_line: line };
        if wanted.is_empty() {
            return Ok(suite);
        }
        // The user's flags too: `-tags` decide which tests exist, `-vet=off` whether vet runs.
        let mut args: Vec<String> = ["test", "-json", "-count=1"].map(String::from).to_vec();
        args.extend(user_args.iter().cloned());
        args.extend(["-list".to_string(), "^(Test|Fuzz)".to_string()]);
        args.extend(wanted);
        let line = process::display_command(Path::new("go"), &args);
        let mut reader = GoReader::new();
        let step = Step { cmd: go_command(req, work, &args), command_line: line.clone() };
        let ended = steps::run_steps(vec![step], &work.dir, "list", limits, &mut reader)
            .map_err(|(l, e)| spawn_error(&l, e))?;
        if ended.stop != Stop::Exited {
            return Err(timed_out(line, &ended));
        }
        if reader.events == 0 || missing_dependencies(&ended.tail()) {
            return Err(startup_error(&work.root, &line, &ended));
        }
        // A package whose test binary fails even to list its tests (a TestMain that exits
        // first, a panic in init) cannot run them either: like a build failure.
        let unlistable: Vec<(String, String)> = suite
            .packages
            .iter()
            .filter_map(|p| {
                reader
                    .package_failure(p)
                    .map(|m| (p.clone(), m.replace("before this test ran", "while listing its tests")))
            })
            .collect();
        for (pkg, names) in std::mem::take(&mut reader.listed) {
            suite.tests.insert(pkg.clone(), names.iter().map(|n| test_id(&pkg, n)).collect());
        }
        suite.build_failed = std::mem::take(&mut reader.build_failed);
        if req.tests.is_none() && !suite.build_failed.is_empty() {
            return Err(unbuilt::test_build_error(&work.root, &line, &suite.build_failed));
        }
        for (pkg, message) in unlistable {
            suite.tests.remove(&pkg);
            suite.build_failed.entry(pkg).or_insert(message);
        }
        suite.command_line = line;
        Ok(suite)
    }

    /// The units a selection stands for: listed top-level tests, and requested tests below
    /// a listed one (a subtest, or an example that `-list` leaves out).
    fn units(&self, selection: Option<&[TestId]>) -> Vec<TestId> {
        let listed = || self.tests.values().flatten();
        let Some(ids) = selection else {
            return listed().cloned().collect();
        };
        let mut out = BTreeSet::new();
        for id in ids {
            let under: Vec<&TestId> = listed().filter(|t| *t == id || is_ancestor(id, t)).collect();
            if !under.is_empty() {
                out.extend(under.into_iter().cloned());
            } else if listed().any(|t| is_ancestor(t, id)) {
                out.insert(id.clone());
            }
        }
        out.into_iter().collect()
    }

    /// One attempt: a `go test` process per distinct `-run` pattern.
    fn attempt(
        &self,
        req: &RunRequest,
        work: &WorkDir,
        selection: Option<&[TestId]>,
        deadline: Instant,
        number: u32,
    ) -> Result<Attempt, RunnerError> {
        let TestCommand::GoTest { args: user_args, packages: patterns } = &req.command else {
            unreachable!("go::runner called for {}", req.command.runner_name())
        };
        let mut base: Vec<String> = ["test", "-json", "-count=1", "-timeout=0"].map(String::from).to_vec();
        base.extend(user_args.iter().cloned());
        base.extend(req.extra_args.iter().cloned());
        let groups: Vec<(Option<String>, Vec<String>)> = match selection {
            None => vec![(None, patterns.clone().unwrap_or_else(|| vec!["./...".to_string()]))],
            Some(ids) => self.selection_groups(ids),
        };
        let mut steps_ = Vec::new();
        let mut first_line = None;
        for (pattern, packages) in groups {
            let mut args = base.clone();
            if let Some(p) = pattern {
                args.extend(["-run".to_string(), p]);
            }
            args.extend(packages);
            let line = process::display_command(Path::new("go"), &args);
            first_line.get_or_insert_with(|| line.clone());
            steps_.push(Step { cmd: go_command(req, work, &args), command_line: line });
        }
        let units = self.units(selection);
        let command_line = first_line.unwrap_or_else(|| process::display_command(Path::new("go"), &base));
        let mut reader = GoReader::new();
        let limits = Limits::tests(deadline, req.test_timeout);
        let ended = if steps_.is_empty() {
            Ended::nothing_to_run()
        } else {
            steps::run_steps(steps_, &work.dir, &number.to_string(), limits, &mut reader)
                .map_err(|(l, e)| spawn_error(&l, e))?
        };
        if ended.spawned && reader.events == 0 && ended.stop == Stop::Exited {
            let err = startup_error(&work.root, &command_line, &ended);
            return Ok(Attempt::failed_to_start(command_line, ended, err));
        }
        let mut results = std::mem::take(&mut reader.results);
        let unit_of = |id: &str| units.iter().find(|u| *u == id || is_ancestor(u, id)).cloned();
        // The test that was running when the process was killed is blamed as its unit (so a
        // rerun does not start it again); the subtests that were running are timeouts too.
        let mut running = None;
        if ended.stop != Stop::Exited {
            if let Some((id, since)) = reader.running.last() {
                running = Some((unit_of(id).unwrap_or_else(|| id.clone()), since.elapsed()));
            }
            let message = "killed with its process group while this subtest ran".to_string();
            for (id, _) in &reader.running {
                if running.as_ref().is_none_or(|(r, _)| r != id) {
                    results.insert(id.clone(), TestOutcome::new(TestStatus::Timeout, Some(message.clone())));
                }
            }
        } else {
            // A requested subtest whose parent finished without running it does not exist.
            for unit in &units {
                if results.contains_key(unit) {
                    continue;
                }
                if let Some(parent) = results.keys().find(|r| is_ancestor(r, unit)).cloned() {
                    let message = format!("the runner has no such test: {parent} ran without it");
                    results.insert(unit.clone(), TestOutcome::new(TestStatus::Missing, Some(message)));
                } else if let Some(message) = package_of(&self.packages, unit).and_then(|p| reader.package_failure(p)) {
                    results.insert(unit.clone(), TestOutcome::new(TestStatus::Error, Some(message)));
                }
            }
        }
        let mut collection_errors = reader.build_failed;
        if number == 0 {
            collection_errors.extend(self.build_failed.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Ok(Attempt {
            command_line,
            collected: Some(units),
            results,
            running,
            session_finished: !reader.crashed,
            collection_errors,
            ended,
            startup_error: None,
        })
    }

    /// `(-run pattern, packages)` per distinct pattern; `None` runs a whole package.
    fn selection_groups(&self, ids: &[TestId]) -> Vec<(Option<String>, Vec<String>)> {
        let mut per_package: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for id in ids {
            if let Some(pkg) = package_of(&self.packages, id) {
                if self.build_failed.contains_key(pkg) {
                    continue;
                }
                let test = id.get(pkg.len() + 1..).unwrap_or("");
                per_package.entry(pkg).or_default().push(test);
            }
        }
        let mut groups: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for (pkg, tests) in per_package {
            groups.entry(run_pattern(&tests)).or_default().push(pkg.to_string());
        }
        groups.into_iter().collect()
    }
}

/// The package an id belongs to: the longest known package it starts with.
fn package_of<'a>(packages: &'a BTreeSet<String>, id: &str) -> Option<&'a str> {
    packages
        .iter()
        .filter(|p| id == p.as_str() || id.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/')))
        .max_by_key(|p| p.len())
        .map(String::as_str)
}

/// The `-run` pattern selecting `tests` (test paths inside one package; an empty one means
/// the whole package, and gives `None`).
fn run_pattern(tests: &[&str]) -> Option<String> {
    let paths: Vec<Vec<&str>> = tests.iter().map(|t| t.split('/').collect()).collect();
    let depth = paths.iter().map(|p| if p == &[""] { 0 } else { p.len() }).min()?;
    if depth == 0 {
        return None;
    }
    let levels: Vec<String> = (0..depth)
        .map(|d| {
            let names: BTreeSet<String> = paths.iter().map(|p| quote_meta(p[d])).collect();
            format!("^({})$", names.into_iter().collect::<Vec<_>>().join("|"))
        })
        .collect();
    Some(levels.join("/"))
}

/// The evaluation command of `tests` (see `LanguageSupport::eval_command`): their packages,
/// split from each id by [`harness::split_id`], and one `-run` pattern for their top-level
/// tests (a subtest's parent runs whole, as `go test` would report it).
pub(crate) fn eval_command(command: &TestCommand, tests: &[String]) -> Option<String> {
    let TestCommand::GoTest { args, .. } = command else { return None };
    let mut packages = BTreeSet::new();
    let mut names = Vec::new();
    for id in tests {
        let (pkg, path) = harness::split_id(id)?;
        packages.insert(pkg.to_string());
        names.push(path.split('/').next().unwrap_or(path));
    }
    let mut words: Vec<String> = ["go", "test", "-count=1", "-v"].map(String::from).into();
    words.extend(args.iter().cloned());
    if let Some(pattern) = run_pattern(&names) {
        words.extend(["-run".to_string(), pattern]);
    }
    if packages.is_empty() {
        words.push("./...".into());
    }
    words.extend(packages);
    Some(crate::env::shell::join(&words))
}

/// Go's `regexp.QuoteMeta`.
fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

struct Quiet;
impl process::Progress for Quiet {
    fn poll(&mut self) -> bool {
        false
    }
}

fn missing_dependencies(tail: &str) -> bool {
    [
        "missing go.sum entry",
        "no required module provides package",
        "updates to go.mod needed",
        "cannot find module providing package",
    ]
    .iter()
    .any(|m| tail.contains(m))
}

/// Why go ended without reporting anything a run can use.
fn startup_error(root: &Path, command: &str, ended: &Ended) -> RunnerError {
    let tail = ended.tail();
    if missing_dependencies(&tail) {
        return RunnerError::MissingDependencies {
            runner: "go test",
            root: root.to_path_buf(),
            setup: SETUP.into(),
            command: command.into(),
            tail,
        };
    }
    let hint = if ["go.mod file not found", "cannot find main module", "does not contain main module"]
        .iter()
        .any(|m| tail.contains(m))
    {
        "; this is not a Go module: run carve on the directory holding go.mod"
    } else if tail.contains("flag provided but not defined") || tail.contains("unknown flag") {
        "; go rejected its arguments: check `test.args` in carve.toml"
    } else {
        ""
    };
    RunnerError::Collection {
        runner: "go test",
        root: root.to_path_buf(),
        command: command.into(),
        exit_code: ended.exit_code,
        hint: hint.into(),
        tail: last_lines(&tail, 60),
    }
}

fn spawn_error(command: &str, e: std::io::Error) -> RunnerError {
    steps::spawn_error("go", "install Go (https://go.dev/dl/) and put `go` on PATH", command, e)
}

/// The `go test` arguments of a whole-suite run of `command`, for tools that want the raw
/// output (the harness round trip).
pub fn suite_args(command: &TestCommand) -> Vec<String> {
    let mut args: Vec<String> = ["test", "-json", "-count=1", "-timeout=0"].map(String::from).to_vec();
    if let TestCommand::GoTest { args: user, packages } = command {
        args.extend(user.iter().cloned());
        args.extend(packages.clone().unwrap_or_else(|| vec!["./...".to_string()]));
    }
    args
}

#[cfg(test)]
mod tests;
