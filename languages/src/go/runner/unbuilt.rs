//! A whole-suite run (the baseline, discovery) whose test packages do not all build or pass
//! `go vet` is an error naming each package and the compiler's or vet's message, with the
//! fix, instead of a run that silently has no tests for them. (A run of selected tests, as
//! in validation, keeps reporting those tests as `error`.)

use std::collections::BTreeMap;
use std::path::Path;

use crate::runner::RunnerError;

/// Whether `go test`'s build output of a package is `go vet`'s: vet's header names the
/// package in brackets (`# [example.com/m/p_test]`).
pub(crate) fn is_vet_failure(message: &str) -> bool {
    message.lines().any(|l| l.starts_with("# [") && l.trim_end().ends_with(']'))
}

/// The error for packages whose tests did not build (`package -> go's output`).
pub(crate) fn test_build_error(root: &Path, command: &str, failed: &BTreeMap<String, String>) -> RunnerError {
    let names: Vec<&str> = failed.keys().map(String::as_str).collect();
    let vet: Vec<&str> = failed.iter().filter(|(_, m)| is_vet_failure(m)).map(|(p, _)| p.as_str()).collect();
    let (noun, verb) = if names.len() == 1 { ("package", "does") } else { ("packages", "do") };
    let mut hint = format!("; the tests of {noun} {} {verb} not build", names.join(", "));
    if !vet.is_empty() {
        hint.push_str(&format!(
            " ({} failed `go vet`, which `go test` runs first: fix what vet reports, or turn that check off for carve's \
             runs with `args = [\"-vet=off\"]` in the [test] table of carve.toml)",
            vet.join(", ")
        ));
    }
    if vet.len() < names.len() {
        hint.push_str(
            "; a package that does not compile must be fixed, or left out with `packages = [...]` in the [test] table \
             of carve.toml",
        );
    }
    let tail = failed.iter().map(|(p, m)| format!("{p}:\n{}", m.trim_end())).collect::<Vec<_>>().join("\n");
    RunnerError::Collection {
        runner: "go test",
        root: root.to_path_buf(),
        command: command.into(),
        exit_code: Some(1),
        hint,
        tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vet_failures_name_the_package_the_message_and_the_fix() {
        let vet = "# example.com/v/greet_test\n# [example.com/v/greet_test]\ngreet/example_test.go:11:13: non-constant format string in call to fmt.Printf\n";
        let compile = "# example.com/v/other [example.com/v/other.test]\nother/x_test.go:3:2: undefined: y\n";
        assert!(is_vet_failure(vet));
        assert!(!is_vet_failure(compile));
        let failed = BTreeMap::from([("example.com/v/greet".to_string(), vet.to_string())]);
        let msg = test_build_error(Path::new("/r"), "go test -list", &failed).to_string();
        assert!(msg.contains("the tests of package example.com/v/greet does not build"), "{msg}");
        assert!(msg.contains("args = [\"-vet=off\"]") && msg.contains("non-constant format string"), "{msg}");
        let failed = BTreeMap::from([
            ("example.com/v/greet".to_string(), vet.to_string()),
            ("example.com/v/other".to_string(), compile.to_string()),
        ]);
        let msg = test_build_error(Path::new("/r"), "go test -list", &failed).to_string();
        assert!(msg.contains("packages example.com/v/greet, example.com/v/other do not build"), "{msg}");
        assert!(msg.contains("undefined: y") && msg.contains("packages = [...]"), "{msg}");
    }
}
