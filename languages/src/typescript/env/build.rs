//! The project's build, as its own files name it: the part of package.json's `pretest` that
//! builds (npm and pnpm run it before `test`: `npm run build && npm run lint` → `npm run
//! build`; linting checks style, not what the tests load), else the build part of `prepare` /
//! `prepublish` (npm runs them on `npm install`, which carve runs with `--ignore-scripts`),
//! else a CI workflow line that runs a build script of package.json (`npm run build
//! --if-present`), else a task runner's `build` task when the test script runs that runner
//! (`npx jake test`, whose jakefile has `task('build', …)`), else a `build` script no one
//! names. What counts as building: running a script named `build`, `build:*` or `compile`
//! (through npm, pnpm, yarn or npm-run-all), or a compiler or bundler (`tsc` without
//! `--noEmit`, `babel`, `rollup`, `tsup`, `webpack`, `esbuild`, `vite build`, `unbuild`).
//!
//! It is found at detection and used as a repair (see `repairs` of [`super::ScriptEnv`]): only
//! when a verification run stops on a file of the project the tree lacks (`Cannot find module
//! '../index'`) is it run before every test run.

use std::path::Path;

use serde_json::Value;

/// A build command and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The command as a shell runs it (one or more parts joined by `&&`).
    pub command: String,
    pub source: String,
}

/// The build the repository's files name, if any (see the module's doc for the order).
pub fn find(repo: &Path, pkg: &Value) -> Option<Found> {
    let scripts = pkg.get("scripts").and_then(Value::as_object);
    let script = |name: &str| scripts.and_then(|s| s.get(name)).and_then(Value::as_str);
    let has_script = |name: &str| script(name).is_some();
    for name in ["pretest", "prepare", "prepublish"] {
        if let Some(cmd) = script(name)
            && let Some(kept) = building_parts(cmd, &|p| builds(p, &has_script))
        {
            let source = if kept == cmd.trim() {
                format!("package.json scripts.{name}")
            } else {
                format!("package.json scripts.{name} (`{cmd}`), its build part")
            };
            return Some(Found { command: kept, source });
        }
    }
    if let Some(found) = from_ci(repo, &has_script) {
        return Some(found);
    }
    if let Some(found) = task_runner(repo, script("test").unwrap_or_default()) {
        return Some(found);
    }
    script("build").map(|_| Found {
        command: "npm run build".into(),
        source: "package.json scripts.build (nothing else says when it runs)".into(),
    })
}

/// The parts of `cmd` (split at `&&` and `;`) that `keep` says build, joined by ` && `; `None`
/// when none does.
fn building_parts(cmd: &str, keep: &dyn Fn(&str) -> bool) -> Option<String> {
    let kept: Vec<&str> =
        cmd.split("&&").flat_map(|p| p.split(';')).map(str::trim).filter(|p| !p.is_empty() && keep(p)).collect();
    (!kept.is_empty()).then(|| kept.join(" && "))
}

fn is_build_name(name: &str) -> bool {
    name == "build" || name.starts_with("build:") || name == "compile" || name.starts_with("compile:")
}

/// Whether one command runs a build script or a compiler.
fn builds(part: &str, has_script: &dyn Fn(&str) -> bool) -> bool {
    let words: Vec<&str> = part.split_whitespace().collect();
    let words: &[&str] = match words.first() {
        Some(&"npx") => &words[1..],
        _ => &words,
    };
    let script_named = |w: Option<&&str>| w.is_some_and(|n| is_build_name(n) && has_script(n));
    match words {
        ["npm", "run" | "run-script", rest @ ..] => script_named(rest.first()),
        ["pnpm" | "yarn", "run", rest @ ..] => script_named(rest.first()),
        ["pnpm" | "yarn", name, ..] => script_named(Some(name)),
        ["run-s" | "run-p" | "npm-run-all", rest @ ..] => {
            rest.iter().any(|w| is_build_name(w.trim_end_matches('*').trim_end_matches(':')))
        }
        ["tsc", rest @ ..] => !rest.contains(&"--noEmit"),
        ["vite", "build", ..] => true,
        [tool, ..] => ["babel", "rollup", "tsup", "webpack", "esbuild", "unbuild"].contains(tool),
        [] => false,
    }
}

/// A CI workflow's line that runs a build script of package.json.
fn from_ci(repo: &Path, has_script: &dyn Fn(&str) -> bool) -> Option<Found> {
    for file in crate::env::ci_files(repo) {
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else { continue };
        for line in text.lines() {
            let t = line.trim().trim_start_matches("- ").trim();
            let Some(cmd) = t.strip_prefix("run:").map(str::trim) else { continue };
            let cmd = cmd.trim_matches(['\'', '"']);
            let only_scripts = |p: &str| {
                builds(p, has_script) && (p.starts_with("npm ") || p.starts_with("pnpm ") || p.starts_with("yarn "))
            };
            if let Some(kept) = building_parts(cmd, &only_scripts) {
                return Some(Found { command: kept, source: format!("{file}: `{cmd}`") });
            }
        }
    }
    None
}

/// `npx jake build` (or gulp's) when the test script runs jake (or gulp) and its task file
/// defines a `build` task.
fn task_runner(repo: &Path, test: &str) -> Option<Found> {
    let words: Vec<&str> = test.split_whitespace().collect();
    let runner = words.iter().find(|w| ["jake", "gulp"].contains(w))?;
    let files: &[&str] = match *runner {
        "jake" => &["jakefile.js", "Jakefile", "Jakefile.js", "jakefile"],
        _ => &["gulpfile.js", "gulpfile.mjs", "gulpfile.cjs"],
    };
    for f in files {
        let Ok(text) = std::fs::read_to_string(repo.join(f)) else { continue };
        let defines = ["task('build'", "task(\"build\"", "exports.build ", "exports.build="]
            .iter()
            .any(|p| text.replace(' ', "").contains(&p.replace(' ', "")));
        if defines {
            return Some(Found {
                command: format!("npx {runner} build"),
                source: format!("package.json scripts.test (`{test}`) runs {runner}, and {f} defines a `build` task"),
            });
        }
    }
    None
}

/// The program and arguments that run `command`: its words when it is one plain command,
/// else `sh -c command`.
pub fn argv(command: &str) -> Vec<String> {
    let plain = !command.chars().any(|c| "&|;<>$`\"'*?()\\".contains(c));
    if plain {
        command.split_whitespace().map(str::to_string).collect()
    } else {
        vec!["sh".into(), "-c".into(), command.to_string()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use carve_testutil::temp_tree as repo;

    fn found(files: &[(&str, &str)]) -> Option<Found> {
        let d = repo(files);
        let pkg: Value = serde_json::from_str(files.iter().find(|(p, _)| *p == "package.json").unwrap().1).unwrap();
        find(d.path(), &pkg)
    }

    #[test]
    fn pretest_keeps_its_build_part() {
        let f = found(&[(
            "package.json",
            r#"{"scripts": {"build": "run-p build:*", "build:node": "babel src -d .", "lint": "eslint src",
                "pretest": "npm run build && npm run lint", "test": "mocha"}}"#,
        )])
        .unwrap();
        assert_eq!(f.command, "npm run build");
        assert_eq!(f.source, "package.json scripts.pretest (`npm run build && npm run lint`), its build part");
        assert_eq!(argv(&f.command), vec!["npm", "run", "build"]);
        assert_eq!(argv("tsc && node x.js"), vec!["sh", "-c", "tsc && node x.js"]);
    }

    #[test]
    fn prepare_ci_task_runners_and_what_is_not_a_build() {
        let f = found(&[("package.json", r#"{"scripts": {"prepare": "husky install", "compile": "tsc -p ."}}"#)]);
        assert_eq!(f, None, "husky is not a build, and a compile script no one runs is not named");
        let f = found(&[("package.json", r#"{"scripts": {"prepare": "tsc -p tsconfig.build.json"}}"#)]).unwrap();
        assert_eq!(
            (f.command.as_str(), f.source.as_str()),
            ("tsc -p tsconfig.build.json", "package.json scripts.prepare")
        );
        let f = found(&[(
            "package.json",
            r#"{"scripts": {"pretest": "tsc --noEmit", "build": "rollup -c", "test": "vitest"}}"#,
        )])
        .unwrap();
        assert_eq!(f.command, "npm run build", "a type check is not a build: {f:?}");
        let f = found(&[
            ("package.json", r#"{"scripts": {"build": "tsup", "test": "vitest"}}"#),
            (
                ".github/workflows/ci.yml",
                "jobs:\n  t:\n    steps:\n      - run: npm ci\n      - run: npm run build --if-present\n",
            ),
        ])
        .unwrap();
        assert_eq!(f.command, "npm run build --if-present");
        assert_eq!(f.source, ".github/workflows/ci.yml: `npm run build --if-present`");
        let f = found(&[
            ("package.json", r#"{"scripts": {"test": "npx jake test"}}"#),
            ("jakefile.js", "task('build', ['lint', 'compile']);\ntask('test', ['build']);\n"),
        ])
        .unwrap();
        assert_eq!(f.command, "npx jake build");
        assert!(f.source.contains("jakefile.js defines a `build` task"), "{f:?}");
    }
}
