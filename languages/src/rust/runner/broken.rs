//! Targets whose tests do not compile. `cargo test` stops at the first target that fails to
//! build; carve names what failed from cargo's `could not compile` lines, leaves those
//! targets out and lists the rest again, so one broken test file costs only its own tests
//! (they get `error` with the compiler's output), like a Go package that does not build.

use std::collections::BTreeMap;
use std::time::Instant;

use super::libtest::LibtestReader;
use super::targets::{Kind, Workspace};
use super::{cargo_command, display, spawn_error, startup_error};
use crate::runner::steps::{self, Step, WorkDir};
use crate::runner::{RunRequest, RunnerError, TestCommand, TestId};
use carve_core::process::{Ended, Limits, Stop};

/// At most this many rounds of "build, leave out what failed, build again".
const MAX_ROUNDS: usize = 6;

/// What `cargo test -- --list` found: the tests, the targets that did not compile (label →
/// message), and the (first) listing command.
pub(crate) struct Listing {
    pub tests: Vec<TestId>,
    pub broken: BTreeMap<String, String>,
    pub command_line: String,
}

/// List every test `req` covers, leaving out targets that do not compile.
pub(crate) fn list_tests(
    req: &RunRequest,
    work: &WorkDir,
    ws: &Workspace,
    deadline: Instant,
) -> Result<Listing, RunnerError> {
    let TestCommand::Cargo { args: user, workspace, .. } = &req.command else {
        unreachable!("rust::runner called for {}", req.command.runner_name())
    };
    let limits = Limits::new(deadline, req.timeout);
    let mut broken: BTreeMap<String, String> = BTreeMap::new();
    let mut first_line = None;
    for round in 0..MAX_ROUNDS {
        let arg_lists = listing_args(user, *workspace, ws, &broken);
        let mut reader = LibtestReader::new(ws);
        let failed = run_listings(req, work, limits, round, &arg_lists, &mut reader, &mut first_line)?;
        if let Some(h) = reader.unknown_headers.first() {
            return Err(RunnerError::Unparseable {
                command: first_line.unwrap_or_default(),
                detail: format!("no workspace target matches `{h}`"),
                tail: String::new(),
            });
        }
        let Some((line, ended)) = failed else {
            return listed(work, reader.listed, broken, first_line.unwrap_or_default());
        };
        let newly: BTreeMap<String, String> =
            failed_targets(ws, &ended.tail()).into_iter().filter(|(l, _)| !broken.contains_key(l)).collect();
        if newly.is_empty() {
            return Err(startup_error(&work.root, &line, &ended));
        }
        broken.extend(newly);
    }
    Err(RunnerError::Collection {
        runner: "cargo test",
        root: work.root.clone(),
        command: first_line.unwrap_or_default(),
        exit_code: Some(101),
        hint: format!("; still not compiling after leaving out {} targets", broken.len()),
        tail: broken.values().last().cloned().unwrap_or_default(),
    })
}

/// Appends the user's cargo flags and the listing flags after `--` to `args`.
fn with_list_tail(mut args: Vec<String>, user: &[String]) -> Vec<String> {
    args.extend(user.iter().cloned());
    args.extend(["--", "--list", "--format", "terse"].map(String::from));
    args
}

/// The listing commands' arguments of one round: the whole project while nothing is broken,
/// else per package every target that still compiles, named, and its doctests.
fn listing_args(
    user: &[String],
    workspace: bool,
    ws: &Workspace,
    broken: &BTreeMap<String, String>,
) -> Vec<Vec<String>> {
    let mut arg_lists = Vec::new();
    if broken.is_empty() {
        let mut args: Vec<String> = ["test", "--locked", "--no-fail-fast"].map(String::from).to_vec();
        if workspace {
            args.push("--workspace".into());
        }
        arg_lists.push(with_list_tail(args, user));
        return arg_lists;
    }
    // Per package, every target that still compiles, named.
    let packages: Vec<&String> = match (&ws.root_package, workspace) {
        (Some(root), false) => vec![root],
        _ => ws.packages.iter().collect(),
    };
    for package in packages {
        let ok: Vec<_> = ws
            .targets
            .values()
            .filter(|t| t.package == *package && t.tested && !broken.contains_key(&t.label))
            .collect();
        let mut args: Vec<String> =
            ["test", "--locked", "--no-fail-fast", "-p", ws.spec(package)].map(String::from).to_vec();
        args.extend(ok.iter().flat_map(|t| t.cargo_flags()));
        if !ok.is_empty() {
            arg_lists.push(with_list_tail(args.clone(), user));
        }
        if ok.iter().any(|t| t.doctest) {
            let a: Vec<String> =
                ["test", "--locked", "--no-fail-fast", "-p", ws.spec(package), "--doc"].map(String::from).to_vec();
            arg_lists.push(with_list_tail(a, user));
        }
    }
    arg_lists
}

/// Runs one round's listing commands into `reader` until one fails; returns that one's
/// command line and end, or `None` when all succeeded.
fn run_listings(
    req: &RunRequest,
    work: &WorkDir,
    limits: Limits,
    round: usize,
    arg_lists: &[Vec<String>],
    reader: &mut LibtestReader,
    first_line: &mut Option<String>,
) -> Result<Option<(String, Ended)>, RunnerError> {
    for (i, args) in arg_lists.iter().enumerate() {
        let line = display(args);
        first_line.get_or_insert_with(|| line.clone());
        let step = Step { cmd: cargo_command(req, work, args), command_line: line.clone() };
        let tag = format!("list-{round}-{i}");
        let ended =
            steps::run_steps(vec![step], &work.dir, &tag, limits, reader).map_err(|(l, e)| spawn_error(&l, e))?;
        if ended.stop != Stop::Exited {
            return Err(RunnerError::CollectionTimeout {
                runner: "cargo test",
                root: work.root.clone(),
                command: line,
                after: req.timeout,
                tail: ended.tail(),
            });
        }
        if ended.exit_code != Some(0) {
            return Ok(Some((line, ended)));
        }
    }
    Ok(None)
}

/// The listing of a round whose commands all succeeded, or the run's error when nothing
/// compiles (with the compiler's output).
fn listed(
    work: &WorkDir,
    tests: Vec<TestId>,
    broken: BTreeMap<String, String>,
    command_line: String,
) -> Result<Listing, RunnerError> {
    if tests.is_empty() && !broken.is_empty() {
        let tail = broken.values().next().cloned().unwrap_or_default();
        return Err(RunnerError::Collection {
            runner: "cargo test",
            root: work.root.clone(),
            command: command_line,
            exit_code: Some(101),
            hint: "; the project does not compile (the compiler's output is below)".into(),
            tail,
        });
    }
    Ok(Listing { tests, broken, command_line })
}

/// Compiler output lines kept in a broken target's message.
const MESSAGE_LINES: usize = 12;

/// The labels of the targets a failed build names, with the message their tests get.
pub(crate) fn failed_targets(ws: &Workspace, output: &str) -> BTreeMap<String, String> {
    let diagnostics: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| {
            (l.starts_with("error") && !l.starts_with("error: could not compile")) || l.trim_start().starts_with("--> ")
        })
        .collect();
    let mut out = BTreeMap::new();
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix("error: could not compile `") else {
            continue;
        };
        let Some((package, rest)) = rest.split_once('`') else {
            continue;
        };
        let what = rest.trim_start().strip_prefix('(').and_then(|r| r.split_once(')')).map_or("", |(w, _)| w);
        let mut words = what.split_whitespace();
        let kind = words.next().unwrap_or("");
        let name = words.next().map(|n| n.trim_matches('"'));
        let unit_test = what.ends_with(" test");
        let in_package = ws.targets.values().filter(|t| t.package == package);
        let hit: Vec<&str> = in_package
            .filter(|t| match (kind, name) {
                // The library itself: everything in the package links it.
                ("lib", _) if !unit_test => true,
                ("lib", _) => t.kind == Kind::Lib,
                // A binary: integration tests need it built.
                ("bin", Some(n)) if !unit_test => (t.kind == Kind::Bin && t.name == n) || t.kind == Kind::Test,
                ("bin", Some(n)) => t.kind == Kind::Bin && t.name == n,
                ("test", Some(n)) => t.kind == Kind::Test && t.name == n,
                ("example", Some(n)) => t.kind == Kind::Example && t.name == n,
                ("bench", Some(n)) => t.kind == Kind::Bench && t.name == n,
                // A build script, or a form this does not know: the whole package.
                _ => true,
            })
            .map(|t| t.label.as_str())
            .collect();
        let shown = &diagnostics[diagnostics.len().saturating_sub(MESSAGE_LINES)..];
        let message = format!("{}\n{}", line.trim(), shown.join("\n"));
        for label in hit {
            out.insert(label.to_string(), message.trim_end().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"packages":[
      {"id":"a","name":"app","manifest_path":"/w/Cargo.toml","targets":[
        {"name":"app","kind":["lib"],"src_path":"/w/src/lib.rs"},
        {"name":"app","kind":["bin"],"src_path":"/w/src/main.rs"},
        {"name":"one","kind":["test"],"src_path":"/w/tests/one.rs"},
        {"name":"two","kind":["test"],"src_path":"/w/tests/two.rs"}]},
      {"id":"b","name":"helper","manifest_path":"/w/helper/Cargo.toml","targets":[
        {"name":"helper","kind":["lib"],"src_path":"/w/helper/src/lib.rs"}]}],
      "workspace_members":["a","b"],"workspace_root":"/w"}"#;

    fn labels(output: &str) -> Vec<String> {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        failed_targets(&ws, output).into_keys().collect()
    }

    #[test]
    fn what_failed_decides_which_tests_are_lost() {
        let two = "error[E0308]: mismatched types\n  --> tests/two.rs:14:22\n\
                   error: could not compile `app` (test \"two\") due to 1 previous error\n";
        assert_eq!(labels(two), vec!["two"]);
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let message = &failed_targets(&ws, two)["two"];
        assert!(message.contains("tests/two.rs:14:22") && message.contains("mismatched types"), "{message}");
        assert_eq!(labels("error: could not compile `app` (lib test) due to 2 previous errors"), vec!["app"]);
        assert_eq!(
            labels("error: could not compile `app` (lib) due to 1 previous error"),
            vec!["app", "app(bin)", "one", "two"]
        );
        assert_eq!(
            labels("error: could not compile `app` (bin \"app\") due to 1 previous error"),
            vec!["app(bin)", "one", "two"]
        );
        assert_eq!(
            labels("error: could not compile `app` (bin \"app\" test) due to 1 previous error"),
            vec!["app(bin)"]
        );
        assert_eq!(labels("error: could not compile `helper` (build script) due to 1 previous error"), vec!["helper"]);
        assert!(labels("error: linking failed").is_empty());
    }
}
