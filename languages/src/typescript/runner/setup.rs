//! Extra set-up files for jest, node:test and mocha runs (the tracing shim's, named by the
//! request's environment: `CARVE_EXTRA_SETUP_JEST`, `CARVE_EXTRA_SETUP_NODE`,
//! `CARVE_EXTRA_SETUP_MOCHA`; vitest's `CARVE_EXTRA_SETUP` is read by carve's vitest
//! reporter).
//!
//! jest's `--setupFilesAfterEnv` on the command line replaces the configured list, so the
//! project's own files are read from `jest --showConfig` (with the run's arguments) and
//! passed after carve's: carve's file creates the recorder before any of them loads a
//! probed module. node:test gets `--require <file>`, which `node --test` passes on to
//! every test file's process. mocha gets `--file <file>`, which it loads before the spec
//! files, in the same process, whatever `--ui` is active.

use std::path::Path;
use std::process::Command;

use crate::runner::{RunRequest, RunnerError};

pub const JEST_ENV: &str = "CARVE_EXTRA_SETUP_JEST";
pub const NODE_ENV: &str = "CARVE_EXTRA_SETUP_NODE";
pub const MOCHA_ENV: &str = "CARVE_EXTRA_SETUP_MOCHA";

/// The extra set-up file the request's environment names under `var`.
pub fn extra(req: &RunRequest, var: &str) -> Option<String> {
    req.env.iter().rev().find(|(k, _)| k == var).map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
}

/// `setupFilesAfterEnv` of every project `jest --showConfig` prints (first seen first).
pub fn configured_setup_files(show_config: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(show_config.trim()).map_err(|e| format!("its output is not JSON ({e})"))?;
    let configs = value.get("configs").and_then(|c| c.as_array()).ok_or("its output has no `configs` list")?;
    let mut files: Vec<String> = Vec::new();
    for config in configs {
        for f in config.get("setupFilesAfterEnv").and_then(|s| s.as_array()).into_iter().flatten() {
            if let Some(f) = f.as_str().filter(|f| !files.iter().any(|g| g == f)) {
                files.push(f.to_string());
            }
        }
    }
    Ok(files)
}

/// The `--setupFilesAfterEnv` arguments that put `first` before the project's own files.
pub fn jest_args(
    program: &Path,
    pre: &[String],
    args: &[String],
    req: &RunRequest,
    root: &Path,
    first: &str,
) -> Result<Vec<String>, RunnerError> {
    let mut cmd = Command::new(program);
    cmd.args(pre).args(args).arg("--showConfig").current_dir(root).env("CI", "1").env("NO_COLOR", "1");
    for (k, v) in &req.env {
        cmd.env(k, v);
    }
    let shown =
        format!("{} {} --showConfig", program.display(), pre.iter().chain(args).cloned().collect::<Vec<_>>().join(" "));
    let out = cmd.output().map_err(|source| RunnerError::Spawn { command: shown.clone(), source })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let files = configured_setup_files(&text).map_err(|why| RunnerError::Unparseable {
        command: shown,
        detail: format!("cannot read jest's configuration to add carve's set-up file: {why}"),
        tail: String::from_utf8_lossy(&out.stderr).lines().rev().take(10).collect::<Vec<_>>().join("\n"),
    })?;
    let mut out = vec!["--setupFilesAfterEnv".to_string(), first.to_string()];
    out.extend(files.into_iter().filter(|f| f != first));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_files_come_from_every_project_once() {
        let shown = r#"{"configs":[{"rootDir":"/r/a","setupFilesAfterEnv":["/r/a/setup.js","/r/shared.js"]},
            {"rootDir":"/r/b","setupFilesAfterEnv":["/r/shared.js"]},{"rootDir":"/r/c"}],"globalConfig":{},"version":"29.7.0"}"#;
        assert_eq!(configured_setup_files(shown).unwrap(), vec!["/r/a/setup.js", "/r/shared.js"]);
        assert!(configured_setup_files("jest: unknown option").unwrap_err().contains("not JSON"));
        assert!(configured_setup_files("{}").unwrap_err().contains("configs"));
    }
}
