//! mocha (6 through 11): its command line, and the arguments a project's test script or
//! `test/mocha.opts` gives it.
//!
//! mocha runs from the tree root, so it reads the project's own `.mocharc.*` (and
//! `test/mocha.opts` before mocha 8) itself. It takes one reporter: carve's
//! (`carve_mocha_reporter.cjs`, `--reporter <file>`), which writes the progress stream and
//! runs mocha's own spec reporter for stdout. Selection: the requested files as spec
//! arguments (the configured spec paths are left out of a selected run, but a `.mocharc`
//! `spec` list still adds its files: mocha merges it with the arguments, and the name
//! pattern keeps their tests from running) and one `--grep` pattern over the tests' full
//! titles (mocha joins suite and test titles with spaces, as vitest and jest do). The run
//! ends with `--exit` (a handle a test left open would otherwise keep the process alive
//! after its last test) and, from mocha 8 on, `--no-parallel` (per-test tracing needs one
//! process).

use std::path::Path;

use crate::runner::{RunRequest, TestCommand};

use super::{Job, selection, setup, version};

/// mocha's options that take the next word as their value (mocha 6–11).
const TAKES_VALUE: &[&str] = &[
    "--ui",
    "-u",
    "--require",
    "-r",
    "--timeout",
    "-t",
    "--slow",
    "-s",
    "--grep",
    "-g",
    "--fgrep",
    "-f",
    "--file",
    "--config",
    "--package",
    "--extension",
    "--reporter",
    "-R",
    "--reporter-option",
    "--reporter-options",
    "-O",
    "--spec",
    "--ignore",
    "--exclude",
    "--retries",
    "--jobs",
    "-j",
    "--watch-files",
    "--watch-ignore",
    "--opts",
    "--compilers",
    "--node-option",
    "-n",
    "--global",
    "--globals",
];

/// Options carve drops (with their values): reporters (carve's is the one), watching,
/// selections (carve selects), stopping at the first failure, parallel runs, colours.
const DROPPED: &[&str] = &[
    "--reporter",
    "-R",
    "--reporter-option",
    "--reporter-options",
    "-O",
    "--watch",
    "-w",
    "--watch-files",
    "--watch-ignore",
    "--grep",
    "-g",
    "--fgrep",
    "-f",
    "--invert",
    "-i",
    "--bail",
    "-b",
    "--parallel",
    "-p",
    "--jobs",
    "-j",
    "--color",
    "--colors",
    "-c",
    "--no-color",
    "--no-colors",
];

/// The name of an option word (`--ui=tdd` → `--ui`).
fn option_name(word: &str) -> &str {
    word.split_once('=').map_or(word, |(name, _)| name)
}

/// mocha's arguments as a list of (option with its value, or a spec path): `--ui tdd` is
/// one item, `test/unit` another.
fn items<'a>(words: &[&'a str]) -> Vec<(bool, Vec<&'a str>)> {
    let mut out: Vec<(bool, Vec<&str>)> = Vec::new();
    let mut value_next = false;
    for w in words {
        if value_next {
            if let Some((_, last)) = out.last_mut() {
                last.push(w);
            }
            value_next = false;
        } else if w.starts_with('-') {
            value_next = !w.contains('=') && TAKES_VALUE.contains(w);
            out.push((true, vec![w]));
        } else {
            out.push((false, vec![w]));
        }
    }
    out
}

/// The arguments carve keeps of `words`, the arguments a test script (or `mocha.opts`)
/// gives mocha: options and spec paths, without the [`DROPPED`] options.
pub fn kept_args(words: &[&str]) -> Vec<String> {
    items(words)
        .into_iter()
        .filter(|(option, w)| !(*option && DROPPED.contains(&option_name(w[0]))))
        .flat_map(|(_, w)| w.into_iter().map(str::to_string))
        .collect()
}

/// `args` without its spec paths (positional words and `--spec`): a selected run names its
/// files itself.
pub fn without_specs(args: &[String]) -> Vec<String> {
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    items(&words)
        .into_iter()
        .filter(|(option, w)| *option && option_name(w[0]) != "--spec")
        .flat_map(|(_, w)| w.into_iter().map(str::to_string))
        .collect()
}

/// The words of a test script after its `mocha` (`nyc --reporter=lcov mocha --recursive`,
/// `npx mocha`, `node_modules/.bin/_mocha -u tdd`); `None` when no word runs mocha.
pub fn after_mocha<'a>(words: &[&'a str]) -> Option<Vec<&'a str>> {
    let at = words.iter().position(|w| {
        let name = w.rsplit('/').next().unwrap_or(w);
        name == "mocha" || name == "_mocha"
    })?;
    Some(words[at + 1..].to_vec())
}

/// `test/mocha.opts`'s arguments when the project relies on it but its mocha no longer reads
/// it: mocha 8 dropped the file, so a project still declaring it with mocha ≥ 8 (mde/ejs:
/// `--ui tdd`) gets it from carve. `declared` is the mocha version range of package.json;
/// `None` when there is no such file, a `.mocharc.*` exists (it replaced the file), or the
/// declared mocha reads the file itself.
pub fn opts_args(repo: &Path, declared: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(repo.join("test/mocha.opts")).ok()?;
    let mocharc = [".mocharc.js", ".mocharc.cjs", ".mocharc.yaml", ".mocharc.yml", ".mocharc.json", ".mocharc.jsonc"];
    if mocharc.iter().any(|f| repo.join(f).is_file()) {
        return None;
    }
    let major: u32 = declared
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    if major < 8 {
        return None;
    }
    let words: Vec<&str> =
        text.lines().map(|l| l.split('#').next().unwrap_or("")).flat_map(str::split_whitespace).collect();
    Some(kept_args(&words))
}

/// mocha's arguments for one attempt: the configured ones (without their spec paths when
/// the plan names files), the tracing set-up file (`--file`, loaded before every spec file),
/// carve's reporter, `--exit`, `--no-parallel` (mocha 8+), the plan's `--grep` and files.
pub(super) fn args(
    job: &Job,
    req: &RunRequest,
    plan: Option<&selection::Plan>,
    collect_only: bool,
    args: &mut Vec<String>,
) {
    let configured: Vec<String> = job.args.iter().chain(&req.extra_args).cloned().collect();
    args.extend(if plan.is_some() { without_specs(&configured) } else { configured });
    if let Some(first) = setup::extra(req, setup::MOCHA_ENV) {
        args.extend(["--file".to_string(), first]);
    }
    args.extend(["--reporter".to_string(), job.reporter.display().to_string(), "--exit".into()]);
    if version::installed(&job.dir.root, "mocha").is_none_or(|v| v >= (8, 0, 0)) {
        args.push("--no-parallel".into());
    }
    let pattern = if collect_only { Some(selection::NOTHING.to_string()) } else { plan.and_then(|p| p.name_pattern()) };
    if let Some(p) = pattern {
        args.extend(["--grep".to_string(), p]);
    }
    if let Some(plan) = plan {
        args.extend(plan.files.iter().cloned());
    }
}

/// `npx --no-install mocha <args> --reporter tap [--grep <exact pattern>] <files>`: mocha's
/// TAP reporter prints `ok N <full title>` / `not ok N <full title>`, which SWE-bench's
/// `parse_log_tap` reads (see [`super::harness::parse_log_tap`]).
pub fn eval_words(command: &TestCommand, plan: &selection::Plan) -> Vec<String> {
    let configured = super::spec(command).map(|(_, _, a)| a.to_vec()).unwrap_or_default();
    let mut words: Vec<String> = ["npx", "--no-install", "mocha"].map(String::from).into();
    words.extend(if plan.files.is_empty() { configured } else { without_specs(&configured) });
    words.extend(["--reporter".to_string(), "tap".into(), "--exit".into()]);
    if let Some(pattern) = plan.exact_name_pattern() {
        words.extend(["--grep".to_string(), pattern]);
    }
    words.extend(plan.files.iter().cloned());
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn script_arguments_keep_options_and_specs_and_drop_reporters() {
        let script = "nyc --reporter=cobertura --reporter=text-summary mocha --require @babel/register --reporter dot --recursive";
        let words: Vec<&str> = script.split_whitespace().collect();
        let after = after_mocha(&words).unwrap();
        assert_eq!(kept_args(&after), strings(&["--require", "@babel/register", "--recursive"]));
        let words = ["node_modules/.bin/_mocha", "-u", "tdd", "--timeout=5000", "-R", "spec", "-b", "test/unit"];
        assert_eq!(kept_args(&after_mocha(&words).unwrap()), strings(&["-u", "tdd", "--timeout=5000", "test/unit"]));
        assert_eq!(after_mocha(&["jake", "test"]), None);
        // A spec path never eats an option's value, and a selected run drops the paths.
        let args = strings(&["--require", "test/setup.js", "test/unit", "--spec", "test/more", "--ui=tdd"]);
        assert_eq!(without_specs(&args), strings(&["--require", "test/setup.js", "--ui=tdd"]));
    }

    #[test]
    fn mocha_opts_count_only_where_mocha_stopped_reading_them() {
        let d =
            carve_testutil::temp_tree(&[("test/mocha.opts", "--ui tdd\n--reporter spec  # comment\n--check-leaks\n")]);
        assert_eq!(opts_args(d.path(), "^10.2.0"), Some(strings(&["--ui", "tdd", "--check-leaks"])));
        assert_eq!(opts_args(d.path(), "~6.2.3"), None);
        assert_eq!(opts_args(d.path(), "latest"), None);
        std::fs::write(d.path().join(".mocharc.yml"), "ui: tdd\n").unwrap();
        assert_eq!(opts_args(d.path(), "^10.2.0"), None);
    }
}
