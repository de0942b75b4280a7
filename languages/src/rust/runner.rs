//! The `cargo test` runner: ids `target::module::test` (the library by its crate name,
//! other targets by their own name — see `targets`), doctests
//! `crate::doctest::src/lib.rs - f` (rustdoc's name without its line, which masking
//! moves — see `doctest_ids`), statuses from libtest's output per binary.
//!
//! A run asks `cargo metadata --no-deps` for the workspace's targets, then lists the tests
//! with `cargo test --no-fail-fast -- --list --format terse` (which also builds them; a
//! target that does not compile is left out and its tests get `error`, see `broken`), then
//! runs
//! `cargo test --locked --no-fail-fast [--workspace] <args> -- --test-threads=1 <test_args>`.
//! Tests run one at a time so a test that hangs is known by name (libtest prints
//! `test <name> ... ` before it starts) and is killed alone with its process group; the
//! rest run again in a fresh process. Selection: per package, the selected targets'
//! flags (`--lib`, `--test one`, …) with `-- --exact <names…>`, and doctests apart with
//! `--doc` (cargo cannot mix it with other targets); a name that appears in several of the
//! selected binaries runs in each, and only what was asked for is kept.
//!
//! Nothing is written into the tree: `--locked` keeps Cargo.lock as it is (a missing or
//! stale one is an error naming `cargo generate-lockfile`), and CARGO_TARGET_DIR is
//! `<scratch>/cargo-target/<hash of the tree's path>` (kept between runs so builds are
//! incremental) unless the request's environment sets it.
//!
//! With `nextest = true`, cargo-nextest runs everything but the doctests and carve reads its
//! JUnit report (see `nextest`); the ids stay the same.

mod broken;
mod doctest_ids;
pub mod harness;
mod libtest;
mod nextest;
pub(crate) mod targets;
pub mod test_ids;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use doctest_ids::DoctestIds;
use libtest::LibtestReader;
use targets::{Workspace, split_id};

use crate::runner::attempts::{self, Attempt};
use crate::runner::steps::{self, Step, WorkDir, last_lines};
use crate::runner::{
    Collection, RunRequest, RunResult, RunnerError, TestCommand, TestId, TestOutcome, TestStatus, is_ancestor,
};
use carve_core::process::{self, Ended, Limits, Stop};

/// What the id of every doctest holds, between its target and its rustdoc name
/// (`either::doctest::src/lib.rs - Either<L,R>::map (line 161)`).
pub const DOCTEST_MARK: &str = "::doctest::";

/// A package without a `Cargo.lock` (libraries often commit none) gets one resolved offline
/// from the local cargo cache, as this runner runs `--locked`. When that fails (a dependency
/// not in the cache), the tree stays without one and the run says what is missing.
pub fn lock_offline(tree: &Path) {
    if tree.join("Cargo.toml").is_file() && !tree.join("Cargo.lock").exists() {
        let _ = Command::new("cargo")
            .args(["generate-lockfile", "--offline"])
            .current_dir(tree)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Run the tests `req` asks for with `cargo test`.
pub fn run(req: &RunRequest) -> Result<RunResult, RunnerError> {
    let work = WorkDir::create(req, "cargo")?;
    let result = (|| {
        let suite = Suite::list(req, &work, Instant::now() + req.timeout)?;
        let raw = suite.doctest_ids.raw_request(req);
        let mut result = attempts::run_with_reruns(&raw, |selection, deadline, number| {
            suite.attempt(&raw, &work, selection, deadline, number)
        })?;
        suite.doctest_ids.stabilize(&mut result);
        Ok(result)
    })();
    work.remove();
    let mut result = result?;
    attempts::keep_requested(&mut result, req.tests.as_deref());
    Ok(result)
}

/// The tests `cargo test` would run for `req`, doctests included, without running them.
pub fn collect(req: &RunRequest) -> Result<Collection, RunnerError> {
    let work = WorkDir::create(req, "cargo")?;
    let suite = Suite::list(req, &work, Instant::now() + req.timeout);
    work.remove();
    let suite = suite?;
    let raw = suite.doctest_ids.raw_request(req);
    Ok(Collection {
        ids: suite.units(raw.tests.as_deref()).into_iter().map(|t| suite.doctest_ids.stable(&t).to_string()).collect(),
        collection_errors: suite.broken.clone(),
        command_line: suite.command_line,
    })
}

/// The arguments after `cargo` of a whole-suite run of `command` (what `run` executes,
/// for tools that want the raw log).
pub fn suite_args(command: &TestCommand) -> Vec<String> {
    let TestCommand::Cargo { args, test_args, workspace, .. } = command else {
        return Vec::new();
    };
    let mut out: Vec<String> = ["test", "--locked", "--no-fail-fast"].map(String::from).to_vec();
    if *workspace {
        out.push("--workspace".into());
    }
    out.extend(args.iter().cloned());
    out.push("--".to_string());
    out.extend(serial(test_args));
    out.extend(test_args.iter().cloned());
    out
}

/// `cargo <args>` with stderr merged into stdout (cargo's headers and the binaries' output
/// must stay in order), the target directory outside the tree, no colours.
fn cargo_command(req: &RunRequest, work: &WorkDir, args: &[String]) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("exec \"$0\" \"$@\" 2>&1").arg("cargo").args(args).current_dir(&work.root);
    cmd.env("CARGO_TARGET_DIR", target_dir(work));
    cmd.env("CARGO_TERM_COLOR", "never").env("CARGO_TERM_PROGRESS_WHEN", "never");
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    cmd
}

/// `<scratch>/cargo-target/<tree hash>`: one per tree, because cargo names a workspace's
/// artifacts independently of where the workspace is, and judges them fresh by the source
/// paths it last built from — two trees sharing one target directory would run each
/// other's stale binaries.
fn target_dir(work: &WorkDir) -> std::path::PathBuf {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(work.root.as_os_str().as_encoded_bytes());
    work.scratch.join("cargo-target").join(&hex::encode(digest)[..16])
}

fn display(args: &[String]) -> String {
    process::display_command(Path::new("cargo"), args)
}

/// The tests of one package (doctests or the rest) run in one process: the target flags,
/// the names, whether every name is a full test name (`--exact`), whether a whole target
/// was asked for (no name filter at all).
type Group<'a> = (BTreeSet<Vec<String>>, BTreeSet<&'a str>, bool, bool);

struct Suite {
    ws: Workspace,
    /// Every test `--list` printed, in order (doctests by rustdoc's names).
    listed: Vec<TestId>,
    /// carve's doctest ids for rustdoc's names.
    doctest_ids: DoctestIds,
    /// Targets that do not compile (label → compiler output): left out of every run.
    broken: BTreeMap<String, String>,
    command_line: String,
}

impl Suite {
    fn list(req: &RunRequest, work: &WorkDir, deadline: Instant) -> Result<Suite, RunnerError> {
        let limits = Limits::new(deadline, req.timeout);
        let args: Vec<String> =
            ["metadata", "--no-deps", "--format-version", "1", "--locked"].map(String::from).to_vec();
        let line = display(&args);
        let mut cmd = Command::new("cargo");
        cmd.args(&args).current_dir(&work.root);
        for (k, v) in &req.env {
            cmd.env(k, v);
        }
        let (out, err) = (work.dir.join("metadata.json"), work.dir.join("metadata.err"));
        let ended = process::supervise(cmd, &out, &err, limits, &mut Quiet).map_err(|e| spawn_error(&line, e))?;
        if ended.stop != Stop::Exited || ended.exit_code != Some(0) {
            return Err(startup_error(&work.root, &line, &ended));
        }
        let json = std::fs::read(&out).map_err(RunnerError::io("read", &out))?;
        let ws = Workspace::from_metadata(&json).map_err(|e| RunnerError::Unparseable {
            command: line.clone(),
            detail: e.to_string(),
            tail: ended.tail(),
        })?;

        let listing = broken::list_tests(req, work, &ws, deadline)?;
        let doctest_ids = DoctestIds::of(&listing.tests);
        Ok(Suite { ws, listed: listing.tests, doctest_ids, broken: listing.broken, command_line: listing.command_line })
    }

    /// The listed tests a selection stands for (all of them without one).
    fn units(&self, selection: Option<&[TestId]>) -> Vec<TestId> {
        let mut out: Vec<TestId> = match selection {
            None => self.listed.clone(),
            Some(ids) => {
                self.listed.iter().filter(|t| ids.iter().any(|w| w == *t || is_ancestor(w, t))).cloned().collect()
            }
        };
        out.sort();
        out.dedup();
        out
    }

    /// The targets (and doctest sets) with listed tests, as selection entries.
    fn compiling_targets(&self) -> Vec<TestId> {
        let mut out = BTreeSet::new();
        for id in &self.listed {
            let (label, doc, _) = split_id(id);
            out.insert(if doc { format!("{label}::doctest") } else { label.to_string() });
        }
        out.into_iter().collect()
    }

    /// `cargo test` argument lists for a selection: per package, its targets with exact
    /// names (or name prefixes as filters), doctests in a process of their own.
    fn selection_args(&self, req: &RunRequest, ids: &[TestId]) -> Vec<Vec<String>> {
        let TestCommand::Cargo { args: user, test_args, .. } = &req.command else {
            return Vec::new();
        };
        let listed: BTreeSet<&TestId> = self.listed.iter().collect();
        let mut groups: BTreeMap<(&str, bool), Group> = BTreeMap::new();
        // A whole library stands for its doctests too.
        let expanded: Vec<TestId> = ids
            .iter()
            .flat_map(|id| {
                let (label, doc, name) = split_id(id);
                let lib = self.ws.targets.get(label).is_some_and(|t| t.doctest);
                let extra = (lib && !doc && name.is_empty()).then(|| format!("{label}::doctest"));
                std::iter::once(id.clone()).chain(extra)
            })
            .collect();
        for id in &expanded {
            let (label, doc, name) = split_id(id);
            let Some(target) = self.ws.targets.get(label) else {
                continue;
            };
            if !self.listed.iter().any(|t| t == id || is_ancestor(id, t)) {
                continue;
            }
            // `label` alone must not match its doctests: they run in their own process.
            if !doc && name.is_empty() && !self.listed.iter().any(|t| is_ancestor(id, t) && !split_id(t).1) {
                continue;
            }
            let g = groups
                .entry((target.package.as_str(), doc))
                .or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), true, false));
            if !doc {
                g.0.insert(target.cargo_flags());
            }
            if name.is_empty() {
                g.3 = true; // a whole target: no name filter
            } else {
                g.1.insert(name);
                g.2 &= listed.contains(id);
            }
        }
        let mut out = Vec::new();
        for ((package, doc), (flags, names, exact, whole)) in groups {
            let mut args: Vec<String> =
                ["test", "--locked", "--no-fail-fast", "-p", self.ws.spec(package)].map(String::from).to_vec();
            if doc {
                args.push("--doc".into());
            }
            args.extend(flags.into_iter().flatten());
            args.extend(user.iter().cloned());
            args.push("--".to_string());
            args.extend(serial(test_args));
            args.extend(test_args.iter().cloned());
            if !whole {
                if doc {
                    // cargo hands doctest filters to rustdoc's `--test-args`, which splits them
                    // at whitespace: filter on the item path (`src/lib.rs - add (line 8)` →
                    // `add`), a superset that the result is cut back to.
                    let tokens: BTreeSet<&str> = names.iter().map(|n| doctest_filter(n)).collect();
                    args.extend(tokens.into_iter().map(String::from));
                } else {
                    if exact {
                        args.push("--exact".into());
                    }
                    args.extend(names.into_iter().map(String::from));
                }
            }
            out.push(args);
        }
        out
    }

    /// In a traced run (`CARVE_TRACE_DIR` set), the listed doctests, `rustdoc's id<TAB>carve's
    /// id` a line: a doctest process is not a libtest thread, and the runtime picks its own
    /// id from this list by the file and line rustdoc names the doctest's `main` after.
    fn doctests_for_the_shim(&self, req: &RunRequest) -> Option<String> {
        req.env.iter().any(|(k, _)| k == "CARVE_TRACE_DIR").then_some(())?;
        let list = self.doctest_ids.for_the_runtime();
        (!list.is_empty()).then_some(list)
    }

    fn attempt(
        &self,
        req: &RunRequest,
        work: &WorkDir,
        selection: Option<&[TestId]>,
        deadline: Instant,
        number: u32,
    ) -> Result<Attempt, RunnerError> {
        let nextest = matches!(req.command, TestCommand::Cargo { nextest: true, .. });
        let mut arg_lists = match selection {
            None if self.broken.is_empty() && nextest => vec![doc_suite_args(&req.command)],
            None if self.broken.is_empty() => vec![suite_args(&req.command)],
            // Some targets do not compile: name the others.
            None => self.selection_args(req, &self.compiling_targets()),
            Some(ids) => self.selection_args(req, ids),
        };
        if nextest {
            // nextest runs everything but the doctests, which stay with libtest.
            arg_lists.retain(|a| a.iter().any(|x| x == "--doc"));
            if !self.listed.iter().any(|t| split_id(t).1) {
                arg_lists.clear();
            }
        }
        for args in &mut arg_lists {
            let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
            let extra = req.extra_args.iter().cloned();
            args.splice(at..at, extra);
        }
        let command_line = arg_lists.first().map_or_else(|| display(&suite_args(&req.command)), |a| display(a));
        let doctests = self.doctests_for_the_shim(req);
        let steps_: Vec<Step> = arg_lists
            .iter()
            .map(|a| {
                let mut cmd = cargo_command(req, work, a);
                if let Some(list) = &doctests {
                    cmd.env(DOCTESTS_ENV, list);
                }
                Step { cmd, command_line: display(a) }
            })
            .collect();
        let mut reader = LibtestReader::new(&self.ws);
        let limits = Limits::tests(deadline, req.test_timeout);
        let (nextest_results, nextest_ended, nextest_line) = if nextest {
            match self.nextest_part(req, work, selection, deadline, number)? {
                Ok(done) => done,
                Err(startup) => return Ok(startup),
            }
        } else {
            (BTreeMap::new(), None, None)
        };
        let mut ended = if steps_.is_empty() || nextest_ended.as_ref().is_some_and(|e| e.stop != Stop::Exited) {
            Ended::nothing_to_run()
        } else {
            steps::run_steps(steps_, &work.dir, &number.to_string(), limits, &mut reader)
                .map_err(|(l, e)| spawn_error(&l, e))?
        };
        if let Some(n) = nextest_ended {
            ended = merge_ended(n, ended);
        }
        reader.results.extend(nextest_results);
        let command_line = nextest_line.unwrap_or(command_line);
        let units = self.units(selection);
        if !nextest && ended.spawned && ended.stop == Stop::Exited && reader.headers == 0 && !units.is_empty() {
            let err = startup_error(&work.root, &command_line, &ended);
            return Ok(Attempt::failed_to_start(command_line, ended, err));
        }
        if ended.stop != Stop::Exited {
            reader.crash_was_the_kill();
        }
        let running = reader.running.take().map(|(id, since)| (id, since.elapsed()));
        let mut results = std::mem::take(&mut reader.results);
        // A listed test that a binary which ran to its end did not report was filtered out by
        // the user's arguments (e.g. `--skip`): that is a skip, not an error.
        if ended.stop == Stop::Exited && !reader.crashed {
            for unit in &units {
                if !results.contains_key(unit) {
                    let message =
                        "listed, but not run (ignored, or filtered out by the command's arguments)".to_string();
                    results.insert(unit.clone(), TestOutcome::new(TestStatus::Skipped, Some(message)));
                }
            }
        }
        Ok(Attempt {
            command_line,
            collected: Some(units),
            results,
            running,
            session_finished: !reader.crashed,
            collection_errors: if number == 0 { self.broken.clone() } else { BTreeMap::new() },
            ended,
            startup_error: None,
        })
    }
}

/// The variable that hands a traced run's doctest ids to the runtime (see
/// `shims/rust/carve_probe`).
pub const DOCTESTS_ENV: &str = "CARVE_DOCTESTS";

/// `--test-threads=1` unless the command's own test arguments set the thread count (libtest
/// refuses the option twice); with more threads a hang is blamed on no test in particular.
fn serial(test_args: &[String]) -> Option<String> {
    let own = test_args.iter().any(|a| a.starts_with("--test-threads"));
    (!own).then(|| "--test-threads=1".to_string())
}

/// The doctests of a whole-suite run (when nextest runs the rest).
fn doc_suite_args(command: &TestCommand) -> Vec<String> {
    let mut args = suite_args(command);
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.insert(at, "--doc".into());
    args
}

/// Two parts of one attempt (nextest, then the doctests) as one process's end.
fn merge_ended(first: Ended, second: Ended) -> Ended {
    if !second.spawned {
        return first;
    }
    Ended {
        spawned: true,
        stop: second.stop,
        exit_code: if first.exit_code == Some(0) { second.exit_code } else { first.exit_code },
        stdout_tail: format!("{}{}", first.stdout_tail, second.stdout_tail),
        stderr_tail: format!("{}{}", first.stderr_tail, second.stderr_tail),
    }
}

/// A whitespace-free substring of a doctest's name: its item path when it has one.
fn doctest_filter(name: &str) -> &str {
    let item = name.split_once(" - ").map_or(name, |(_, rest)| rest);
    item.split_whitespace().next().or_else(|| name.split_whitespace().next()).unwrap_or(name)
}

struct Quiet;
impl process::Progress for Quiet {
    fn poll(&mut self) -> bool {
        false
    }
}

/// Why cargo ended without running anything.
fn startup_error(root: &Path, command: &str, ended: &Ended) -> RunnerError {
    let tail = ended.tail();
    let lock = ["needs to be updated but --locked", "lock file", "Cargo.lock"].iter().any(|m| tail.contains(m))
        && tail.contains("--locked");
    if lock {
        return RunnerError::MissingDependencies {
            runner: "cargo test",
            root: root.to_path_buf(),
            setup: "cargo generate-lockfile".into(),
            command: command.into(),
            tail: last_lines(&tail, 30),
        };
    }
    let fetch = [
        "failed to download",
        "failed to get `",
        "no matching package named",
        "failed to load source for dependency",
        "attempting to make an HTTP request, but --offline",
    ];
    if fetch.iter().any(|m| tail.contains(m)) {
        return RunnerError::MissingDependencies {
            runner: "cargo test",
            root: root.to_path_buf(),
            setup: "cargo fetch --locked".into(),
            command: command.into(),
            tail: last_lines(&tail, 30),
        };
    }
    let hint = if tail.contains("could not find `Cargo.toml`") {
        "; this is not a Cargo project: run carve on the directory holding Cargo.toml"
    } else if tail.contains("could not compile") {
        "; the project does not compile (the compiler's output is below)"
    } else if tail.contains("unexpected argument") || tail.contains("Unrecognized option") {
        "; cargo or libtest rejected an argument: check `test.args`/`test.test_args` in carve.toml"
    } else {
        ""
    };
    RunnerError::Collection {
        runner: "cargo test",
        root: root.to_path_buf(),
        command: command.into(),
        exit_code: ended.exit_code,
        hint: hint.into(),
        tail: with_first_error(&tail, last_lines(&tail, 60)),
    }
}

/// `last` (the output's last lines) led by the compiler's first error when `last` lacks it:
/// the error comes first and the warnings after it can fill the last lines (itoa's Level 2
/// reference: `could not compile … due to 1 previous error; 7 warnings emitted`, the error
/// itself gone).
fn with_first_error(output: &str, last: String) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let is_error =
        |l: &&str| (l.starts_with("error[") || l.starts_with("error:")) && !l.starts_with("error: could not compile");
    let Some(start) = lines.iter().position(is_error) else { return last };
    if last.lines().any(|l| l == lines[start]) {
        return last;
    }
    let block: Vec<&str> = lines[start..].iter().take_while(|l| !l.trim().is_empty()).take(12).copied().collect();
    format!("{}\n[…]\n{last}", block.join("\n"))
}

fn spawn_error(command: &str, e: std::io::Error) -> RunnerError {
    steps::spawn_error("cargo", "install Rust with rustup (https://rustup.rs) and put `cargo` on PATH", command, e)
}

#[cfg(test)]
mod tests;
