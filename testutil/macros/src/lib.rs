//! `#[needs("tool", …)]`: a `#[test]` that runs only where its tools are present. Where one
//! is missing the test is marked `#[ignore = "needs …"]`, so `cargo test` lists it as
//! *ignored* with the reason, never as passed. In CI (`CI` set), where every toolchain must
//! be installed, the test is not ignored but fails at once, naming what is missing.
//!
//! A requirement is a program (`go`, `cargo`, `node`, `npx`; run with `--version`, Go with
//! `version`), `pytest` (`$CARVE_TEST_PYTHON`, else `python3`, can `import pytest`), `hypothesis`
//! (the same interpreter can `import hypothesis`),
//! `cargo-nextest`, `user-namespaces` (a kernel feature, not a tool: a test lacking only it is
//! ignored in CI too), or a path with a `/` relative to the workspace root that must exist
//! (installed fixture dependencies such as `fixtures/typescript/ledger/node_modules`).
//! Tools are looked for when the test is compiled; the crate's build script makes a change
//! of `PATH` or `CI` recompile the tests.

use proc_macro::{Delimiter, Group, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use std::process::Command;

#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let requirements = match parse_requirements(attr) {
        Ok(r) => r,
        Err(msg) => return format!("::core::compile_error!({msg:?});").parse().unwrap_or_default(),
    };
    let missing: Vec<String> = requirements.iter().filter_map(|r| unmet(r)).collect();
    // A kernel feature is not a tool CI installs: where it is missing the test is ignored.
    let capability_only =
        !missing.is_empty() && requirements.iter().filter(|r| unmet(r).is_some()).all(|r| is_capability(r));
    let ci = std::env::var_os("CI").is_some() && !capability_only;
    let mut out: TokenStream = "#[test]".parse().unwrap_or_default();
    match decide(&missing, ci) {
        Decision::Run => out.extend(item),
        Decision::Ignore(reason) => {
            out.extend(format!("#[ignore = {reason:?}]").parse::<TokenStream>().unwrap_or_default());
            out.extend(item);
        }
        Decision::Fail(message) => out.extend(prepend_panic(item, &message)),
    }
    out
}

/// What becomes of a test, given what it lacks.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    Run,
    Ignore(String),
    Fail(String),
}

fn decide(missing: &[String], ci: bool) -> Decision {
    if missing.is_empty() {
        return Decision::Run;
    }
    let what = missing.join("; ");
    if ci { Decision::Fail(format!("required in CI: {what}")) } else { Decision::Ignore(format!("needs {what}")) }
}

fn parse_requirements(attr: TokenStream) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    // A literal passed through a `macro_rules!` fragment arrives wrapped in an invisible group.
    let flat = attr.into_iter().flat_map(|tree| match tree {
        TokenTree::Group(g) if g.delimiter() == Delimiter::None => g.stream().into_iter().collect(),
        other => vec![other],
    });
    for tree in flat {
        match tree {
            TokenTree::Punct(p) if p.as_char() == ',' => {}
            TokenTree::Literal(lit) => {
                let text = lit.to_string();
                let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else {
                    return Err(format!("#[needs]: expected string literals, got {text}"));
                };
                out.push(inner.to_string());
            }
            other => return Err(format!("#[needs]: expected string literals, got {other}")),
        }
    }
    if out.is_empty() {
        return Err("#[needs]: name at least one tool, e.g. #[needs(\"go\")]".into());
    }
    Ok(out)
}

/// Requirements on the machine's kernel rather than on installed tools.
const CAPABILITIES: &[&str] = &["user-namespaces"];

fn is_capability(requirement: &str) -> bool {
    CAPABILITIES.contains(&requirement)
}

/// Why `requirement` is not met here, or `None` when it is.
fn unmet(requirement: &str) -> Option<String> {
    if requirement == "user-namespaces" {
        // What carve-eval's sandbox runs: nested user, mount and PID namespaces.
        let outer = ["--user", "--map-root-user", "--mount", "--propagation", "private"];
        let inner = ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "true"];
        let ok = Command::new("unshare").args(outer).args(inner).output().is_ok_and(|o| o.status.success());
        return (!ok).then(|| "user namespaces (`unshare --user --mount --pid` did not run)".to_string());
    }
    if requirement.contains('/') {
        let root = workspace_root();
        return (!root.join(requirement).exists()).then(|| format!("{requirement} (run scripts/setup)"));
    }
    let (program, args): (String, Vec<&str>) = match requirement {
        "pytest" | "hypothesis" => {
            let python = std::env::var("CARVE_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
            (python, vec!["-c", if requirement == "pytest" { "import pytest" } else { "import hypothesis" }])
        }
        "go" => ("go".into(), vec!["version"]),
        "cargo-nextest" => ("cargo".into(), vec!["nextest", "--version"]),
        other => (other.into(), vec!["--version"]),
    };
    let runs = Command::new(&program).args(&args).output().is_ok_and(|o| o.status.success());
    (!runs).then(|| format!("`{requirement}` (`{program} {}` did not run)", args.join(" ")))
}

/// The folder with the workspace's `Cargo.lock` above the crate being compiled.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into()));
    manifest.ancestors().find(|d| d.join("Cargo.lock").is_file()).map(Path::to_path_buf).unwrap_or(manifest)
}

/// The function `item` with `panic!(message)` as the first statement of its body.
fn prepend_panic(item: TokenStream, message: &str) -> TokenStream {
    let mut trees: Vec<TokenTree> = item.into_iter().collect();
    let body = trees.iter().rposition(|t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace));
    if let Some(pos) = body {
        if let TokenTree::Group(body) = &trees[pos] {
            let mut stream: TokenStream = format!("::core::panic!({message:?});").parse().unwrap_or_default();
            stream.extend(body.stream());
            let mut group = Group::new(Delimiter::Brace, stream);
            group.set_span(body.span());
            trees[pos] = TokenTree::Group(group);
        }
    }
    trees.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_with_everything_runs() {
        assert_eq!(decide(&[], false), Decision::Run);
        assert_eq!(decide(&[], true), Decision::Run);
    }

    #[test]
    fn a_missing_tool_ignores_the_test_with_the_reason_and_fails_it_in_ci() {
        let missing = vec!["`go` (`go version` did not run)".to_string()];
        assert_eq!(decide(&missing, false), Decision::Ignore("needs `go` (`go version` did not run)".into()));
        assert_eq!(decide(&missing, true), Decision::Fail("required in CI: `go` (`go version` did not run)".into()));
    }

    #[test]
    fn requirements_are_checked_for_real() {
        assert_eq!(unmet("cargo"), None, "cargo runs the tests, so it is present");
        let absent = unmet("carve-testutil-no-such-program").expect("no such program");
        assert!(absent.contains("carve-testutil-no-such-program --version"), "{absent}");
        assert_eq!(unmet("testutil/macros/src/lib.rs"), None, "paths are relative to the workspace root");
        assert!(unmet("fixtures/no/such/dir").is_some_and(|m| m.contains("scripts/setup")));
    }
}
