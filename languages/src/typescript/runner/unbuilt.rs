//! A test run that stops because a test file loads a file of the project that is not in the
//! tree (`Cannot find module '../index'`): the project builds it before its tests (babel,
//! tsc, a bundler) and the tree carve runs is the repository's sources. That is not a missing
//! dependency (`npm install` would not help); the error says which file and which build
//! makes it (see `typescript::env::build`).

use std::path::Path;

/// What [`hint`] says a test file loads, before the file's name.
const LOADS: &str = "a test file loads `";

/// The first module a runner's output says it cannot find that is a path (`./x`, `../x`,
/// `/abs/x`), not a package name; or the one a run's error names through [`hint`] (its output
/// tail may be the stack trace alone).
pub fn missing_relative_module(tail: &str) -> Option<String> {
    if let Some(rest) = tail.split(LOADS).nth(1)
        && let Some((spec, _)) = rest.split_once("`, a file of the project")
    {
        return Some(spec.to_string());
    }
    for line in tail.lines() {
        for (start, end) in [("Cannot find module '", '\''), ("Cannot find module \"", '"')] {
            let Some(rest) = line.split(start).nth(1) else { continue };
            let spec: String = rest.chars().take_while(|c| *c != end).collect();
            if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." || spec.starts_with('/')
            {
                return Some(spec);
            }
        }
    }
    None
}

/// The hint for a run that stopped on `spec`, a file of the project the tree lacks.
pub fn hint(root: &Path, spec: &str) -> String {
    let pkg = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .unwrap_or_default();
    let built = match crate::typescript::env::build::find(root, &pkg) {
        Some(b) => format!("`{}` ({}) makes it", b.command, b.source),
        None => "the project makes it before its tests, and none of package.json's scripts, its CI workflows or its task runner names how".into(),
    };
    format!(
        "; {LOADS}{spec}`, a file of the project that is not in the tree: {built}. `carve env` runs that \
         build before every test run when its verification run stops on such a file; a tree of your own must be built first"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_module_is_told_from_a_package() {
        let tail = "Error: Cannot find module 'lru-cache'\nError: Cannot find module '../index'\nRequire stack:";
        assert_eq!(missing_relative_module(tail).as_deref(), Some("../index"));
        assert_eq!(missing_relative_module("Error: Cannot find module 'lodash/fp'"), None);
        assert_eq!(
            missing_relative_module("Cannot find module \"./lib/cjs/ejs.js\" from"),
            Some("./lib/cjs/ejs.js".into())
        );
    }

    #[test]
    fn the_hint_names_the_script_that_builds() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("package.json"),
            r#"{"scripts": {"build": "babel src -d .", "pretest": "npm run build && npm run lint", "test": "mocha"}}"#,
        )
        .unwrap();
        let h = hint(d.path(), "../index");
        assert!(h.contains("`../index`"), "{h}");
        let error = format!("mocha could not collect the tests{h}\n--- output tail ---\n  code: 'MODULE_NOT_FOUND',");
        assert_eq!(missing_relative_module(&error).as_deref(), Some("../index"), "the hint names it");
        assert!(
            h.contains("`npm run build` (package.json scripts.pretest (`npm run build && npm run lint`), its build part) makes it"),
            "{h}"
        );
        std::fs::write(d.path().join("package.json"), r#"{"scripts": {"test": "npx jake test"}}"#).unwrap();
        assert!(hint(d.path(), "..").contains("none of package.json's scripts"));
    }
}
