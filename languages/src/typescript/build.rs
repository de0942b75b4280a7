//! The build check after masking: `tsc --noEmit -p <tsconfig>` with the project's own
//! TypeScript (`node_modules/.bin/tsc`, run through `npx --no-install` so nothing is
//! downloaded).

use std::path::Path;
use std::process::Command;

use crate::build::BuildCheckError;

/// Type-check the project at `root` (the masked tree) with `tsc --noEmit -p tsconfig.json`.
/// A project without `tsconfig.json` and without TypeScript files (plain JavaScript) passes:
/// there is no type checker to run.
/// The TypeScript compiler comes from `node_modules` of `root` or, when the masked tree
/// has none, of `node_modules_from` (typically the original repository, whose installed
/// packages the masked copy does not carry): it is linked in for the run and removed again.
pub fn build_check_with(root: &Path, node_modules_from: Option<&Path>) -> Result<(), BuildCheckError> {
    let tsconfig = root.join("tsconfig.json");
    if !tsconfig.is_file() {
        // Plain JavaScript has nothing to type-check (its masked files were re-parsed
        // already); TypeScript without a tsconfig cannot be checked the project's way.
        let has_typescript = crate::walk::source_files(root, &[], &[])
            .map(|w| w.files.iter().any(|f| f.language == crate::Language::TypeScript))
            .unwrap_or(true);
        return if has_typescript {
            Err(BuildCheckError::NotCheckable {
                root: root.to_path_buf(),
                message: format!(
                    "{} has no tsconfig.json; carve type-checks TypeScript projects with `tsc --noEmit -p tsconfig.json`",
                    root.display()
                ),
            })
        } else {
            Ok(())
        };
    }
    let local = root.join("node_modules");
    let mut linked = None;
    if !local.join(".bin").join("tsc").exists() {
        let other = node_modules_from.map(|p| p.join("node_modules"));
        match other.filter(|o| o.join(".bin").join("tsc").exists()) {
            Some(o) if !local.exists() => {
                link_dir(&o, &local).map_err(|source| BuildCheckError::Spawn {
                    command: format!("ln -s {} {}", o.display(), local.display()),
                    root: root.to_path_buf(),
                    source,
                })?;
                linked = Some(local.clone());
            }
            _ => {
                return Err(BuildCheckError::NotCheckable {
                    root: root.to_path_buf(),
                    message: format!(
                        "TypeScript is not installed in {}: run `npm ci` (or `npm install`) there so that node_modules/.bin/tsc exists",
                        root.display()
                    ),
                });
            }
        }
    }
    let command = "npx --no-install tsc --noEmit --pretty false -p tsconfig.json".to_string();
    let result = Command::new("npx")
        .args(["--no-install", "tsc", "--noEmit", "--pretty", "false", "-p", "tsconfig.json"])
        .current_dir(root)
        .output();
    if let Some(l) = linked {
        let _ = std::fs::remove_file(&l);
    }
    let out = result.map_err(|source| BuildCheckError::Spawn {
        command: command.clone(),
        root: root.to_path_buf(),
        source,
    })?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Err(BuildCheckError::Failed {
        command,
        root: root.to_path_buf(),
        detail: format!(" (exit status {})", out.status.code().map_or_else(|| "signal".to_string(), |c| c.to_string())),
        output: output.trim_end().to_string(),
    })
}

/// [`build_check_with`] using only `root`'s own `node_modules`.
pub fn build_check(root: &Path) -> Result<(), BuildCheckError> {
    build_check_with(root, None)
}

#[cfg(unix)]
fn link_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(from, to)
}

#[cfg(not(unix))]
fn link_dir(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "symlinks are needed to borrow node_modules"))
}
