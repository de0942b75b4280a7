//! The Go build check of a masked tree: `go build ./... && go vet ./...` in every module
//! (directory with a `go.mod`) of the tree, with `GOFLAGS=-mod=mod` so a module without
//! a `go.sum` entry for the standard library still builds. `GOCACHE`/`GOPATH` come from the
//! environment (the user's defaults), so repeated checks reuse the build cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::BuildCheckError;

/// Directories holding a `go.mod`, skipping VCS data, `vendor/`, `testdata/` and
/// `node_modules/`, sorted.
fn module_dirs(root: &Path) -> Result<Vec<PathBuf>, BuildCheckError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("go.mod").is_file() {
            out.push(dir.clone());
        }
        let entries =
            std::fs::read_dir(&dir).map_err(|e| BuildCheckError::Io { path: dir.clone(), message: e.to_string() })?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if path.is_dir()
                && !name.starts_with('.')
                && !matches!(name.as_ref(), "vendor" | "testdata" | "node_modules")
            {
                stack.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn run(dir: &Path, args: &[&str]) -> Result<(), BuildCheckError> {
    let output = Command::new("go")
        .args(args)
        .current_dir(dir)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", std::env::var("GOTOOLCHAIN").unwrap_or_else(|_| "local".into()))
        .output()
        .map_err(|e| BuildCheckError::NotCheckable {
            root: dir.to_path_buf(),
            message: format!(
                "`go` was not found on PATH ({e}); install Go (https://go.dev/dl/) to check masked Go trees"
            ),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stdout));
    Err(BuildCheckError::Failed {
        command: format!("go {}", args.join(" ")),
        root: dir.to_path_buf(),
        detail: String::new(),
        output: text.trim_end().to_string(),
    })
}

/// Run `go build ./... && go vet ./...` in every module under `root`; the first failure is
/// returned with the tool's output.
pub fn build_check(root: &Path) -> Result<(), BuildCheckError> {
    let modules = module_dirs(root)?;
    if modules.is_empty() {
        return Err(BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!("no go.mod under {}; the Go build check needs a module root", root.display()),
        });
    }
    for dir in &modules {
        run(dir, &["build", "./..."])?;
        run(dir, &["vet", "./..."])?;
    }
    Ok(())
}

/// Whether a `go` binary can be run.
pub fn go_available() -> bool {
    Command::new("go").arg("version").output().is_ok_and(|o| o.status.success())
}
