//! The test files a runner would run, for what a killed run never reached: `vitest list
//! --filesOnly --json`, `jest --listTests --json`, and for node:test its documented
//! default patterns (Node 20) over the tree (mocha needs none: see [`list`]).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::runner::RunRequest;
use carve_core::process::{self, Limits, Progress};

use super::{Job, Kind};

/// How long a listing may take at most.
const LIST_TIMEOUT: Duration = Duration::from_secs(120);

struct Quiet;
impl Progress for Quiet {
    fn poll(&mut self) -> bool {
        false
    }
}

/// The test files, relative to the root, sorted; empty when they cannot be listed.
pub(super) fn list(job: &Job, req: &RunRequest, deadline: Instant) -> Vec<String> {
    let root = &job.dir.root;
    let mut files = match job.kind {
        Kind::NodeTest => node_default_files(root, &job.args),
        // mocha loads every spec file before it runs a test, and carve's reporter lists
        // every file's tests then: a killed run has reached every file.
        Kind::Mocha => Vec::new(),
        Kind::Vitest | Kind::Jest => runner_listing(job, req, deadline).unwrap_or_default(),
    };
    files.sort();
    files.dedup();
    files
}

fn runner_listing(job: &Job, req: &RunRequest, deadline: Instant) -> Option<Vec<String>> {
    let root = &job.dir.root;
    let (program, mut args) = job.program(root).ok()?;
    let json = job.dir.dir.join("files.json");
    match job.kind {
        Kind::Vitest => {
            args.extend(["list".to_string(), "--filesOnly".into(), format!("--json={}", json.display())]);
            args.extend(job.args.iter().cloned());
        }
        _ => {
            args.extend(job.args.iter().cloned());
            args.extend(["--listTests".to_string(), "--json".into()]);
        }
    }
    let mut cmd = Command::new(&program);
    cmd.args(&args).current_dir(root).env("NO_COLOR", "1").env("CI", "1");
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    let stdout = job.dir.dir.join("files-stdout.log");
    let limits = Limits::new(deadline.min(Instant::now() + LIST_TIMEOUT), LIST_TIMEOUT);
    let ended = process::supervise(cmd, &stdout, &job.dir.dir.join("files-stderr.log"), limits, &mut Quiet).ok()?;
    if ended.stop != process::Stop::Exited {
        return None;
    }
    let value: serde_json::Value = if job.kind == Kind::Vitest {
        serde_json::from_slice(&std::fs::read(&json).ok()?).ok()?
    } else {
        let text = std::fs::read_to_string(&stdout).ok()?;
        let start = text.find('[')?;
        serde_json::from_str(text[start..].trim()).ok()?
    };
    let paths = value.as_array()?.iter().filter_map(|v| v.as_str().or_else(|| v.get("file").and_then(|f| f.as_str())));
    Some(paths.filter_map(|p| relative(root, p)).collect())
}

fn relative(root: &Path, path: &str) -> Option<String> {
    let rel = Path::new(path).strip_prefix(root).ok()?;
    Some(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
}

/// Node 20's default test files when `node --test` gets no file arguments: `**/*.test.?(c|m)js`,
/// `**/*-test.?(c|m)js`, `**/*_test.?(c|m)js`, `**/test-*.?(c|m)js`, `**/test.?(c|m)js`,
/// `**/test/**/*.?(c|m)js`, outside node_modules. Empty when the command names files itself.
fn node_default_files(root: &Path, args: &[String]) -> Vec<String> {
    if args.iter().any(|a| !a.starts_with('-')) {
        return Vec::new();
    }
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in [
        "**/*.test.{js,cjs,mjs}",
        "**/*-test.{js,cjs,mjs}",
        "**/*_test.{js,cjs,mjs}",
        "**/test-*.{js,cjs,mjs}",
        "**/test.{js,cjs,mjs}",
        "**/test/**/*.{js,cjs,mjs}",
    ] {
        if let Ok(glob) = globset::Glob::new(pattern) {
            builder.add(glob);
        }
    }
    let Ok(set) = builder.build() else {
        return Vec::new();
    };
    ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .hidden(true)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| relative(root, &e.path().to_string_lossy()))
        .filter(|rel| set.is_match(rel) || set.is_match(format!("./{rel}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_default_files_follow_the_documented_patterns() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "a.test.js",
            "lib/b-test.mjs",
            "test/helpers/c.cjs",
            "test.js",
            "src/d.js",
            "node_modules/x/e.test.js",
            "t/f.test.ts",
        ] {
            let p = d.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let root = d.path().canonicalize().unwrap();
        let mut got = node_default_files(&root, &[]);
        got.sort();
        assert_eq!(got, vec!["a.test.js", "lib/b-test.mjs", "test.js", "test/helpers/c.cjs"]);
        assert!(node_default_files(&root, &["a.test.js".to_string()]).is_empty());
    }
}
