//! The evaluation command of an exported task (see `LanguageSupport::eval_command`): the
//! project's installed vitest or jest, through `npx --no-install` (which finds
//! `node_modules/.bin` from the tree up and never fetches a runner the environment lacks),
//! with the verbose output SWE-bench's log parsers read (`parse_log_vitest` reads vitest's
//! `--reporter=verbose`, built in since vitest 0.x, so no reporter file is needed;
//! `parse_log_jest` jest's `--verbose`), the tests' files and one anchored name pattern
//! (`-t`) that matches exactly their names ([`selection::Plan::exact_name_pattern`]).
//!
//! vitest's file arguments are filters (substrings of a path), jest's are exact with
//! `--runTestsByPath`; a test elsewhere that a filter and the name pattern both match runs
//! too. jest runs with `--ci`, so a missing snapshot fails instead of being written.
//! node:test has no evaluation command: SWE-bench has no parser for its output, and its name
//! patterns match each test's own name, so they cannot name exactly a nested test. mocha's
//! runs with its TAP reporter, which SWE-bench's `parse_log_tap` reads, and the same exact
//! pattern as `--grep` (see [`super::mocha::eval_words`]).

use super::{Kind, selection};
use crate::runner::TestCommand;

/// SWE-bench's log parser of the runner's output (its `PARSER_REGISTRY` key).
pub fn harness_log_parser(command: &TestCommand) -> Option<&'static str> {
    match super::spec(command)?.0 {
        Kind::Vitest => Some("parse_log_vitest"),
        Kind::Jest => Some("parse_log_jest"),
        Kind::Mocha => Some("parse_log_tap"),
        Kind::NodeTest => None,
    }
}

/// `npx --no-install vitest run <args> --reporter=verbose [-t <pattern>] <files>`, or
/// `npx --no-install jest --ci --verbose <args> [-t <pattern>] [--runTestsByPath <files>]`;
/// with no tests, the runner over the whole suite. `None`: node:test, or an id that is not
/// `path > …` under the root.
pub fn eval_command(command: &TestCommand, tests: &[String]) -> Option<String> {
    let (kind, _, args) = super::spec(command)?;
    let plan = selection::Plan::of(tests, |_| true);
    if plan.entries.len() != tests.len() {
        return None;
    }
    if kind == Kind::Mocha {
        return Some(crate::env::shell::join(&super::mocha::eval_words(command, &plan)));
    }
    let mut words: Vec<String> = ["npx", "--no-install"].map(String::from).into();
    match kind {
        Kind::Vitest => {
            words.extend(["vitest".into(), "run".into()]);
            words.extend(args.iter().cloned());
            words.push("--reporter=verbose".into());
        }
        Kind::Jest => {
            words.extend(["jest", "--ci", "--verbose"].map(String::from));
            words.extend(args.iter().cloned());
        }
        Kind::NodeTest | Kind::Mocha => return None,
    }
    if let Some(pattern) = plan.exact_name_pattern() {
        words.extend(["-t".to_string(), pattern]);
    }
    if kind == Kind::Jest && !plan.files.is_empty() {
        words.push("--runTestsByPath".into());
    }
    words.extend(plan.files.iter().cloned());
    Some(crate::env::shell::join(&words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(runner: &str, args: &[&str]) -> TestCommand {
        let (package_manager, args) = (super::super::PackageManager::Npm, args.iter().map(|s| s.to_string()).collect());
        match runner {
            "vitest" => TestCommand::Vitest { package_manager, args },
            "jest" => TestCommand::Jest { package_manager, args },
            "mocha" => TestCommand::Mocha { package_manager, args },
            _ => TestCommand::NodeTest { package_manager, args },
        }
    }

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn vitest_runs_exactly_the_named_tests_verbosely() {
        let vitest = command("vitest", &["--config", "vitest.unit.ts"]);
        let tests = ids(&["tests/b.test.ts > Money > adds (cents)", "tests/a.test.ts > adds", "tests/b.test.ts > x's"]);
        assert_eq!(
            eval_command(&vitest, &tests).unwrap(),
            r"npx --no-install vitest run --config vitest.unit.ts --reporter=verbose -t '^ ?(?:Money adds \(cents\)|adds|x'\''s)$' tests/a.test.ts tests/b.test.ts"
        );
        assert_eq!(
            eval_command(&vitest, &[]).unwrap(),
            "npx --no-install vitest run --config vitest.unit.ts --reporter=verbose"
        );
        assert_eq!(harness_log_parser(&vitest), Some("parse_log_vitest"));
    }

    #[test]
    fn jest_runs_exactly_the_named_tests_by_path_in_ci_mode() {
        let jest = command("jest", &[]);
        assert_eq!(
            eval_command(&jest, &ids(&["src/__tests__/d.test.js > divide > by zero"])).unwrap(),
            "npx --no-install jest --ci --verbose -t '^ ?(?:divide by zero)$' --runTestsByPath src/__tests__/d.test.js"
        );
        assert_eq!(eval_command(&jest, &[]).unwrap(), "npx --no-install jest --ci --verbose");
        assert_eq!(harness_log_parser(&jest), Some("parse_log_jest"));
    }

    #[test]
    fn mocha_runs_exactly_the_named_tests_with_its_tap_reporter() {
        let mocha = command("mocha", &["--require", "@babel/register", "--recursive", "test/unit"]);
        assert_eq!(
            eval_command(&mocha, &ids(&["test/a.js > area > of a circle (r = 1)", "test/b.js > top"])).unwrap(),
            r"npx --no-install mocha --require @babel/register --recursive --reporter tap --exit --grep '^ ?(?:area of a circle \(r = 1\)|top)$' test/a.js test/b.js"
        );
        // The whole suite keeps the script's spec paths.
        assert_eq!(
            eval_command(&mocha, &[]).unwrap(),
            "npx --no-install mocha --require @babel/register --recursive test/unit --reporter tap --exit"
        );
        assert_eq!(harness_log_parser(&mocha), Some("parse_log_tap"));
    }

    #[test]
    fn whole_files_run_whole_and_odd_ids_or_node_test_have_no_command() {
        let vitest = command("vitest", &[]);
        assert_eq!(
            eval_command(&vitest, &ids(&["t/a.test.ts", "t/b.test.ts > x"])).unwrap(),
            "npx --no-install vitest run --reporter=verbose t/a.test.ts t/b.test.ts"
        );
        assert_eq!(eval_command(&vitest, &ids(&["../up.test.ts > x"])), None);
        assert_eq!(eval_command(&vitest, &ids(&["--evil > x"])), None);
        let node = command("node", &[]);
        assert_eq!(eval_command(&node, &ids(&["t/a.test.mjs > x"])), None);
        assert_eq!(harness_log_parser(&node), None);
    }
}
