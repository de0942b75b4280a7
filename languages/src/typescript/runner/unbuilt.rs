//! A test run that stops because a test file loads a file of the project that is not in the
//! tree (`Cannot find module '../index'`): the project builds it before its tests (babel,
//! tsc, a bundler) and the tree carve runs is the repository's sources. That is not a missing
//! dependency (`npm install` would not help); the error says which file and which script
//! makes it.

use std::path::Path;

/// The first module a runner's output says it cannot find that is a path (`./x`, `../x`,
/// `/abs/x`), not a package name.
pub fn missing_relative_module(tail: &str) -> Option<String> {
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

/// The scripts of `root/package.json` that build before the tests: `pretest` (npm and pnpm
/// run it with `test`), else `prepare` or `build`, as `name` and its command.
pub fn build_script(root: &Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let pkg: serde_json::Value = serde_json::from_str(&text).ok()?;
    let scripts = pkg.get("scripts")?.as_object()?;
    for name in ["pretest", "prepare", "build"] {
        if let Some(cmd) = scripts.get(name).and_then(|v| v.as_str()) {
            return Some((name.to_string(), cmd.to_string()));
        }
    }
    None
}

/// The hint for a run that stopped on `spec`, a file of the project the tree lacks.
pub fn hint(root: &Path, spec: &str) -> String {
    let built = match build_script(root) {
        Some((name, cmd)) => format!("package.json's `{name}` script (`{cmd}`) makes it"),
        None => "the project makes it before its tests (no pretest, prepare or build script names how)".into(),
    };
    format!(
        "; a test file loads `{spec}`, a file of the project that is not in the tree: {built}. carve runs the \
         tests on the repository's sources and runs no build step before them, so a repository whose tests load \
         built files cannot be carved yet"
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
        assert!(h.contains("package.json's `pretest` script (`npm run build && npm run lint`) makes it"), "{h}");
        std::fs::write(d.path().join("package.json"), r#"{"scripts": {"test": "npx jake test"}}"#).unwrap();
        assert!(hint(d.path(), "..").contains("no pretest, prepare or build script"));
    }
}
