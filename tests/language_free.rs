//! Everything language-specific lives in `languages/`, behind `LanguageSupport`: the code of
//! `src/`, `core/src/`, `pipeline/src/`, `tracer/src/`, `extractor/src/`, `formats/src/`,
//! `history/src/`, `eval/src/` and `dataset/src/` (every workspace member's but `languages/`'s and
//! the test-only crates') must not name a language's runner, grammar, file extension,
//! shim, variant, manifest or doctest id shape. Test code (`#[cfg(test)]`
//! modules, `tests.rs`, `testutil.rs`) and comments may: tests run on fixtures of particular
//! languages.

use std::path::{Path, PathBuf};

/// Tokens that name one language's runner, grammar, extension, shim or implementation.
const FORBIDDEN: &[&str] = &[
    "Language::Python",
    "Language::TypeScript",
    "Language::JavaScript",
    "Language::Go",
    "Language::Rust",
    "TestCommand::",
    "tree_sitter_",
    "pytest",
    "Pytest",
    "go test",
    "cargo test",
    "cargo check",
    "vitest",
    "jest",
    "node:test",
    "tsc ",
    "\".py\"",
    "\".ts\"",
    "\".js\"",
    "\".go\"",
    "\".rs\"",
    "__init__.py",
    "conftest",
    "_test.go",
    "python::",
    "typescript::",
    "go::",
    "rust::",
    "carve_shim",
    "PYTHONPATH",
    "sitecustomize",
    // Manifests and lock files (`LanguageFacts::project_files`, `LanguageSupport::lock_offline`).
    "Cargo.toml",
    "Cargo.lock",
    "go.mod",
    "go.sum",
    "package.json",
    "tsconfig",
    "pyproject.toml",
    "generate-lockfile",
    // Doctests (`LanguageFacts::doctest_mark`, `LanguageSupport::doctests`).
    "::doctest::",
    "rustdoc",
];

/// `(file, token, why)`: the few places that must keep naming a language, and why.
const ALLOWED: &[(&str, &str, &str)] = &[
    // What detection looked for, in the error that says nothing was recognised.
    ("pipeline/src/config.rs", "pytest", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "vitest", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "jest", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "node:test", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "pyproject.toml", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "package.json", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "go.mod", "the error listing the project files detection looks for"),
    ("pipeline/src/config.rs", "Cargo.toml", "the error listing the project files detection looks for"),
    // The caches a FeatureArc run's recorded diffs leave out (carve-core's skip policy, from
    // every language's tree facts, takes its place when the `core` branch lands).
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name != "tests.rs" && name != "testutil.rs" {
                out.push(path);
            }
        }
    }
}

/// The `src/` directories of every workspace member (the root `Cargo.toml`'s
/// `workspace.members`) except `languages/` and the test-only crates: a new crate is guarded
/// from the day it joins the workspace.
fn guarded_sources(root: &Path) -> Vec<PathBuf> {
    let manifest: toml::Table = toml::from_str(&std::fs::read_to_string(root.join("Cargo.toml")).unwrap()).unwrap();
    let members = manifest["workspace"]["members"].as_array().expect("workspace.members");
    members
        .iter()
        .map(|m| m.as_str().unwrap())
        .filter(|m| *m != "languages" && *m != "testutil" && !m.starts_with("testutil/"))
        .map(|m| root.join(m).join("src"))
        .filter(|d| d.is_dir())
        .collect()
}

/// The code lines of a file: up to its first `#[cfg(test)]`, without comment lines.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
}

#[test]
fn crates_outside_languages_name_no_language() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let dirs = guarded_sources(root);
    for dir in
        ["src", "core/src", "pipeline/src", "tracer/src", "extractor/src", "formats/src", "history/src", "eval/src"]
    {
        assert!(dirs.contains(&root.join(dir)), "{dir} is no longer guarded");
    }
    for dir in &dirs {
        rust_files(dir, &mut files);
    }
    files.sort();
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut found = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in code_lines(&text) {
            for token in FORBIDDEN.iter().filter(|t| line.contains(**t)) {
                if !ALLOWED.iter().any(|(f, t, _)| *f == rel && t == token) {
                    found.push(format!("{rel}:{n}: `{token}` in `{}`", line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "language-specific code outside languages/ (move it behind LanguageSupport, see docs/adding-a-language.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_allowed_entry_is_still_needed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, token, why) in ALLOWED {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(code_lines(&text).any(|(_, l)| l.contains(token)), "{file} no longer names `{token}` ({why})");
    }
}

#[test]
fn the_check_sees_a_forbidden_token() {
    let code = "fn f() {\n    // Language::Python in a comment is fine\n    let l = Language::Python;\n}\n#[cfg(test)]\nmod tests { Language::Go }\n";
    let hits: Vec<usize> =
        code_lines(code).filter(|(_, l)| FORBIDDEN.iter().any(|t| l.contains(t))).map(|(n, _)| n).collect();
    assert_eq!(hits, [3]);
}
