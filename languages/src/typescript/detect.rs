//! Detecting a JavaScript/TypeScript project's test set-up from its `package.json`, for
//! `carve init`: the runner from the `test` script, else from the dependencies (vitest,
//! jest, mocha), else node:test when test files import it; the package manager from the
//! lockfile.

use std::path::Path;

use serde::Deserialize;

use crate::Language;
use crate::runner::{Detection, TestCommand};

pub use crate::runner::PackageManager;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PackageJson {
    #[serde(default)]
    scripts: std::collections::BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    dependencies: std::collections::BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    dev_dependencies: std::collections::BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    package_manager: Option<String>,
}

fn read_package_json(repo: &Path) -> Result<Option<PackageJson>, String> {
    let path = repo.join("package.json");
    let Ok(text) = std::fs::read(&path) else {
        return Ok(None);
    };
    serde_json::from_slice(&text).map(Some).map_err(|e| format!("{} is not valid JSON: {e}", path.display()))
}

/// Does the project at `root` declare any dependency (so it needs `node_modules`)?
pub fn has_dependencies(root: &Path) -> bool {
    read_package_json(root).ok().flatten().is_some_and(|p| !p.dependencies.is_empty() || !p.dev_dependencies.is_empty())
}

/// The project's test set-up, or why it could not be decided (`Err`, naming the setting to
/// fill in). `Ok(None)`: no `package.json`.
pub fn detect_or_explain(repo: &Path) -> Result<Option<Detection>, String> {
    let Some(pkg) = read_package_json(repo)? else {
        return Ok(None);
    };
    let mut reasons = Vec::new();
    let has = |name: &str| pkg.dependencies.contains_key(name) || pkg.dev_dependencies.contains_key(name);
    let ts_why = if repo.join("tsconfig.json").is_file() {
        Some("tsconfig.json")
    } else if has("typescript") {
        Some("a typescript dependency")
    } else if has_typescript_files(repo) {
        Some(".ts files")
    } else {
        None
    };
    let language = if let Some(why) = ts_why {
        reasons.push(format!("language = typescript: found package.json and {why}"));
        Language::TypeScript
    } else {
        reasons.push(
            "language = javascript: found package.json, no tsconfig.json, typescript dependency or .ts files"
                .to_string(),
        );
        Language::JavaScript
    };
    let script = pkg.scripts.get("test").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let from_script = |needle: &str| {
        script
            .split(|c: char| c.is_whitespace() || c == '&' || c == ';' || c == '|')
            .any(|w| w == needle || w.ends_with(&format!("/{needle}")))
    };
    let kind = if from_script("vitest") {
        reasons.push(format!("runner = vitest: the test script is `{script}`"));
        Kind::Vitest
    } else if from_script("jest") {
        reasons.push(format!("runner = jest: the test script is `{script}`"));
        Kind::Jest
    } else if script.contains("node --test") || script.contains("node:test") {
        reasons.push(format!("runner = node-test: the test script is `{script}`"));
        Kind::NodeTest
    } else if from_script("mocha") || from_script("_mocha") {
        reasons.push(format!("runner = mocha: the test script is `{script}`"));
        Kind::Mocha
    } else if has("vitest") {
        reasons.push("runner = vitest: vitest is a dependency in package.json".to_string());
        Kind::Vitest
    } else if has("jest") {
        reasons.push("runner = jest: jest is a dependency in package.json".to_string());
        Kind::Jest
    } else if has("mocha") {
        reasons.push("runner = mocha: mocha is a dependency in package.json".to_string());
        Kind::Mocha
    } else if imports_node_test(repo) {
        reasons.push("runner = node-test: test files import node:test".to_string());
        Kind::NodeTest
    } else {
        return Err(format!(
            "{}: no test runner found (the test script is `{script}`; no vitest, jest or mocha dependency; no file imports node:test): \
             set `[test] runner` to \"vitest\", \"jest\", \"node-test\" or \"mocha\" in carve.toml",
            repo.join("package.json").display()
        ));
    };
    let package_manager = detect_package_manager(repo, &pkg, &mut reasons);
    let needs_install = !pkg.dependencies.is_empty() || !pkg.dev_dependencies.is_empty();
    let setup = needs_install.then(|| package_manager.install_command(repo));
    if needs_install && !repo.join("node_modules").is_dir() && !repo.join(".pnp.cjs").is_file() {
        reasons.push(format!(
            "dependencies are not installed (no node_modules/): run `{}` before running tests",
            package_manager.install_command(repo)
        ));
    }
    let mut args = script_args(&script, kind);
    if !args.is_empty() {
        reasons.push(format!("args = {args:?}: from the test script"));
    }
    if kind == Kind::Mocha && args.is_empty() {
        let declared = [&pkg.dev_dependencies, &pkg.dependencies].iter().find_map(|d| d.get("mocha")?.as_str());
        if let Some(opts) = declared.and_then(|range| super::runner::mocha::opts_args(repo, range)) {
            reasons.push(format!(
                "args = {opts:?}: from test/mocha.opts, which mocha {} no longer reads",
                declared.unwrap_or_default()
            ));
            args = opts;
        }
    }
    let command = match kind {
        Kind::Vitest => TestCommand::Vitest { package_manager, args },
        Kind::Jest => TestCommand::Jest { package_manager, args },
        Kind::NodeTest => TestCommand::NodeTest { package_manager, args },
        Kind::Mocha => TestCommand::Mocha { package_manager, args },
    };
    Ok(Some(Detection { language, command, setup, reasons, manifest: true }))
}

/// The project's test set-up; `None` when there is no `package.json` or no runner could be
/// decided (see [`detect_or_explain`] for why).
pub fn detect(repo: &Path) -> Option<Detection> {
    detect_or_explain(repo).ok().flatten()
}

use super::runner::Kind;

fn detect_package_manager(repo: &Path, pkg: &PackageJson, reasons: &mut Vec<String>) -> PackageManager {
    for (file, pm) in [
        ("pnpm-lock.yaml", PackageManager::Pnpm),
        ("yarn.lock", PackageManager::Yarn),
        ("package-lock.json", PackageManager::Npm),
        ("npm-shrinkwrap.json", PackageManager::Npm),
    ] {
        if repo.join(file).is_file() {
            reasons.push(format!("package manager = {}: found {file}", pm.name()));
            return pm;
        }
    }
    if let Some(field) = &pkg.package_manager {
        for pm in [PackageManager::Pnpm, PackageManager::Yarn, PackageManager::Npm] {
            if field.starts_with(&format!("{}@", pm.name())) {
                reasons.push(format!("package manager = {}: package.json's packageManager is `{field}`", pm.name()));
                return pm;
            }
        }
    }
    reasons.push(
        "package manager = npm: no lockfile (package-lock.json, pnpm-lock.yaml, yarn.lock) and no packageManager field"
            .to_string(),
    );
    PackageManager::Npm
}

/// The arguments the test script gives its runner, when the script is that one command
/// (`vitest run --config x.ts`, `npx jest --selectProjects unit`, `node --test --import tsx`):
/// watch, coverage and reporter flags are dropped (carve picks its own), and so are file
/// and file arguments (carve passes the files). Anything more complex (`&&`, pipes,
/// quotes, environment assignments) gives no arguments.
/// Options of vitest, jest and node that take a value as the next word.
const TAKES_VALUE: &[&str] = &[
    "--config",
    "-c",
    "--project",
    "--selectProjects",
    "--environment",
    "--env",
    "--dir",
    "--root",
    "-r",
    "--pool",
    "--maxWorkers",
    "--shard",
    "--mode",
    "--testTimeout",
    "--testEnvironment",
    "--rootDir",
    "--roots",
    "--reporter",
    "--reporters",
    "--outputFile",
    "--test-reporter",
    "--test-reporter-destination",
    "--import",
    "--require",
    "--experimental-loader",
    "--loader",
];

fn script_args(script: &str, kind: Kind) -> Vec<String> {
    if script.contains(['&', '|', ';', '"', '\'', '`', '$', '>', '<']) {
        return Vec::new();
    }
    let mut words: Vec<&str> = script.split_whitespace().collect();
    if kind == Kind::Mocha {
        return super::runner::mocha::after_mocha(&words)
            .map(|w| super::runner::mocha::kept_args(&w))
            .unwrap_or_default();
    }
    if matches!(words.first(), Some(&"npx") | Some(&"pnpm") | Some(&"yarn")) {
        words.remove(0);
        if words.first() == Some(&"exec") {
            words.remove(0);
        }
    }
    let rest: &[&str] = match (kind, words.as_slice()) {
        (Kind::Vitest, ["vitest", "run" | "--run", rest @ ..]) | (Kind::Vitest, ["vitest", rest @ ..]) => rest,
        (Kind::Jest, ["jest", rest @ ..]) => rest,
        (Kind::NodeTest, ["node", rest @ ..]) if rest.contains(&"--test") => rest,
        _ => return Vec::new(),
    };
    let dropped = |w: &str| {
        w == "--test"
            || w == "run"
            || [
                "--watch",
                "--coverage",
                "--reporter",
                "--reporters",
                "--json",
                "--outputFile",
                "--ci",
                "--silent",
                "--verbose",
                "--test-reporter",
            ]
            .iter()
            .any(|f| w == *f || w.starts_with(&format!("{f}=")) || w.starts_with("--no-watch"))
    };
    // File and directory arguments: carve passes the files itself.
    let path_like = |w: &str| {
        !w.starts_with('-') && (w.contains('/') || w.contains('*') || Language::from_path(Path::new(w)).is_some())
    };
    // A word after a `--flag` (without `=`) is that flag's value: kept or dropped with it,
    // never mistaken for a file argument (`--config vitest.unit.ts`).
    let mut out = Vec::new();
    let mut prev_flag: Option<bool> = None; // Some(kept?) when the previous word was a bare flag
    for w in rest {
        if !w.starts_with('-') {
            if let Some(kept) = prev_flag.take() {
                if kept {
                    out.push(w.to_string());
                }
                continue;
            }
            if !path_like(w) {
                out.push(w.to_string());
            }
            continue;
        }
        let kept = !dropped(w);
        if kept {
            out.push(w.to_string());
        }
        prev_flag = TAKES_VALUE.contains(w).then_some(kept);
    }
    out
}

/// Are there TypeScript sources (not only `.d.ts` declarations) near the top?
fn has_typescript_files(repo: &Path) -> bool {
    ignore::WalkBuilder::new(repo)
        .max_depth(Some(4))
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .filter_map(|e| e.ok())
        .any(|e| {
            let name = e.file_name().to_string_lossy();
            Language::from_path(e.path()) == Some(Language::TypeScript) && !name.ends_with(".d.ts")
        })
}

/// Does a JavaScript/TypeScript file near the top (outside node_modules) import node:test?
fn imports_node_test(repo: &Path) -> bool {
    ignore::WalkBuilder::new(repo)
        .max_depth(Some(4))
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .filter_map(|e| e.ok())
        .filter(|e| {
            crate::Language::from_path(e.path())
                .is_some_and(|l| matches!(l, Language::JavaScript | Language::TypeScript))
        })
        .take(500)
        .any(|e| {
            std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("\"node:test\"") || t.contains("'node:test'"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    use carve_testutil::temp_tree as repo;

    #[test]
    fn the_test_script_decides_and_the_lockfile_names_the_package_manager() {
        let d = repo(&[
            ("package.json", r#"{"scripts":{"test":"vitest run"},"devDependencies":{"vitest":"3","jest":"29"}}"#),
            ("pnpm-lock.yaml", ""),
            ("tsconfig.json", "{}"),
        ]);
        let det = detect(d.path()).unwrap();
        assert_eq!(det.language, Language::TypeScript);
        assert_eq!(det.command, TestCommand::Vitest { package_manager: PackageManager::Pnpm, args: vec![] });
        assert_eq!(det.setup.as_deref(), Some("pnpm install --frozen-lockfile"));
        assert!(det.reasons.iter().any(|r| r.contains("pnpm-lock.yaml")), "{:?}", det.reasons);
        assert!(det.reasons.iter().any(|r| r.contains("`vitest run`")), "{:?}", det.reasons);
        assert!(det.reasons.iter().any(|r| r.contains("not installed")), "{:?}", det.reasons);
    }

    #[test]
    fn mocha_from_the_script_under_nyc_or_from_the_dependency_with_mocha_opts() {
        let pkg = r#"{"scripts":{"test":"nyc --reporter=cobertura mocha --require @babel/register --reporter dot --recursive"},
            "devDependencies":{"mocha":"^6.2.3","nyc":"15"}}"#;
        let det = detect(repo(&[("package.json", pkg)]).path()).unwrap();
        let args = ["--require", "@babel/register", "--recursive"].map(String::from).to_vec();
        assert_eq!(det.command, TestCommand::Mocha { package_manager: PackageManager::Npm, args });
        assert!(det.reasons.iter().any(|r| r.starts_with("runner = mocha: the test script")), "{:?}", det.reasons);
        // mde/ejs: `npx jake test` runs mocha from a jakefile; the dependency decides, and
        // test/mocha.opts (which mocha 10 ignores) gives the interface.
        let d = repo(&[
            (
                "package.json",
                r#"{"scripts":{"test":"npx jake test"},"devDependencies":{"jake":"^12","mocha":"^10.2.0"}}"#,
            ),
            ("test/mocha.opts", "--ui tdd\n--reporter spec\n--check-leaks\n"),
        ]);
        let det = detect(d.path()).unwrap();
        let args = ["--ui", "tdd", "--check-leaks"].map(String::from).to_vec();
        assert_eq!(det.command, TestCommand::Mocha { package_manager: PackageManager::Npm, args });
        assert!(det.reasons.iter().any(|r| r.contains("test/mocha.opts")), "{:?}", det.reasons);
        // nodeca/js-yaml: `npm run lint && mocha` (a chain gives no arguments).
        let d = repo(&[(
            "package.json",
            r#"{"scripts":{"test":"npm run lint && mocha"},"devDependencies":{"mocha":"^8.2.1"}}"#,
        )]);
        assert_eq!(
            detect(d.path()).unwrap().command,
            TestCommand::Mocha { package_manager: PackageManager::Npm, args: vec![] }
        );
    }

    #[test]
    fn dependencies_then_node_test_imports_then_an_error() {
        let d = repo(&[
            ("package.json", r#"{"scripts":{"test":"npm run build && x"},"devDependencies":{"jest":"29"}}"#),
            ("yarn.lock", ""),
        ]);
        let det = detect(d.path()).unwrap();
        assert_eq!(det.language, Language::JavaScript);
        assert_eq!(det.command, TestCommand::Jest { package_manager: PackageManager::Yarn, args: vec![] });
        let d = repo(&[("package.json", r#"{"name":"x"}"#), ("test/a.test.js", "const test = require('node:test');")]);
        let det = detect(d.path()).unwrap();
        assert_eq!(det.command, TestCommand::NodeTest { package_manager: PackageManager::Npm, args: vec![] });
        assert_eq!(det.setup, None);
        let d = repo(&[("package.json", r#"{"scripts":{"test":"tap test/*.js"}}"#)]);
        let err = detect_or_explain(d.path()).unwrap_err();
        assert!(err.contains("`[test] runner`"), "{err}");
        assert!(detect(d.path()).is_none());
        assert_eq!(
            script_args("vitest run --config vitest.unit.ts --coverage", Kind::Vitest),
            vec!["--config", "vitest.unit.ts"]
        );
        assert_eq!(script_args("npx jest --selectProjects unit --ci", Kind::Jest), vec!["--selectProjects", "unit"]);
        assert_eq!(script_args("node --test --import tsx test/", Kind::NodeTest), vec!["--import", "tsx"]);
        assert!(script_args("tsc && vitest run", Kind::Vitest).is_empty());
        assert!(script_args("vitest", Kind::Vitest).is_empty());
        let d = repo(&[("package.json", "{oops")]);
        assert!(detect_or_explain(d.path()).unwrap_err().contains("not valid JSON"));
        assert!(detect_or_explain(repo(&[]).path()).unwrap().is_none());
    }
}
