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
    let projects = projects(root);
    if projects.is_empty() {
        // Plain JavaScript has nothing to type-check (its masked files were re-parsed
        // already); TypeScript without a tsconfig cannot be checked the project's way.
        let has_typescript = crate::walk::source_files(root, &[], &[])
            .map(|w| w.files.iter().any(|f| f.language == crate::Language::TypeScript))
            .unwrap_or(true);
        return if has_typescript {
            Err(BuildCheckError::NotCheckable {
                root: root.to_path_buf(),
                message: format!(
                    "{} has no tsconfig.json, nor have its packages; carve type-checks TypeScript projects with `tsc --noEmit -p tsconfig.json`",
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
    let result = projects.iter().try_for_each(|project| tsc(root, project));
    if let Some(l) = linked {
        let _ = std::fs::remove_file(&l);
    }
    result
}

/// The TypeScript projects to check, relative to `root`: its `tsconfig.json`, else those of
/// its packages (a monorepo whose root has only a `tsconfig.base.json`, as change-case:
/// `packages/*/tsconfig.json`), up to three folders down, outside `node_modules`, in order.
fn projects(root: &Path) -> Vec<String> {
    if root.join("tsconfig.json").is_file() {
        return vec!["tsconfig.json".into()];
    }
    let mut found: Vec<String> = ignore::WalkBuilder::new(root)
        .max_depth(Some(4))
        .require_git(false)
        .filter_entry(|e| e.file_name() != "node_modules")
        .build()
        .flatten()
        .filter(|e| e.depth() >= 2 && e.file_type().is_some_and(|t| t.is_file()) && e.file_name() == "tsconfig.json")
        .filter_map(|e| e.path().strip_prefix(root).ok().map(|p| p.to_string_lossy().replace('\\', "/")))
        .collect();
    found.sort();
    found
}

/// `tsc --noEmit -p PROJECT` in `root`, with `--composite false --incremental false`: a
/// composite or incremental project (change-case's) otherwise writes its `.tsbuildinfo` even
/// with `--noEmit`, and the checked tree (a state of the task) would no longer be the tree
/// it was. A compiler older than those options (TypeScript < 3.4, `error TS5023`) is run
/// without them.
fn tsc(root: &Path, project: &str) -> Result<(), BuildCheckError> {
    const NO_BUILD_INFO: [&str; 4] = ["--composite", "false", "--incremental", "false"];
    let run = |extra: &[&str]| {
        let mut args = vec!["--no-install", "tsc", "--noEmit", "--pretty", "false"];
        args.extend_from_slice(extra);
        args.extend(["-p", project]);
        (format!("npx {}", args.join(" ")), Command::new("npx").args(&args).current_dir(root).output())
    };
    let (mut command, mut result) = run(&NO_BUILD_INFO);
    if let Ok(out) = &result {
        if !out.status.success() && String::from_utf8_lossy(&out.stdout).contains("error TS5023") {
            (command, result) = run(&[]);
        }
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

/// The source locations `tsc` output names, in order, each once: `--pretty false` lines
/// `src/x.ts(12,5): error TS2304: …` and the pretty form `src/x.ts:12:5 - error TS2304: …`.
/// Paths are made relative to `root` (tsc prints them relative to the directory it ran in,
/// or absolute); continuation lines, errors without a file (`error TS5023: …` on the
/// command line) and files outside `root` or under `node_modules` name nothing carve masks.
pub fn error_locations(root: &Path, output: &str) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = Vec::new();
    for line in output.lines() {
        let Some((path, line_no)) = tsc_location(line) else { continue };
        let path = Path::new(path);
        let rel = if path.is_absolute() { path.strip_prefix(root).ok() } else { Some(path) };
        let Some(rel) = rel.map(|p| p.to_string_lossy().replace('\\', "/")) else { continue };
        let rel = rel.trim_start_matches("./").to_string();
        if rel.starts_with("../") || rel.split('/').any(|c| c == "node_modules") {
            continue;
        }
        if !out.iter().any(|(p, l)| *p == rel && *l == line_no) {
            out.push((rel, line_no));
        }
    }
    out
}

/// `(path, line)` of one tsc diagnostic line, in either output form.
fn tsc_location(line: &str) -> Option<(&str, u32)> {
    if line.starts_with(char::is_whitespace) {
        return None; // a continuation of the previous message
    }
    // `path(line,col): error TSnnnn: …`
    if let Some(at) = line.find("): error TS") {
        let head = &line[..at];
        let open = head.rfind('(')?;
        let (l, _col) = head[open + 1..].split_once(',')?;
        return Some((&head[..open], l.parse().ok()?));
    }
    // `path:line:col - error TSnnnn: …`
    let at = line.find(" - error TS")?;
    let mut parts = line[..at].rsplitn(3, ':');
    let (_col, l, path) = (parts.next()?, parts.next()?, parts.next()?);
    Some((path, l.parse().ok()?))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Real `tsc --noEmit --pretty false` output over a copy of fixtures/typescript/ledger
    /// with `parseCurrency` deleted, `Money.plus` renamed and `Money.valueIn`'s return type
    /// changed (TypeScript 5, multi-line TS2416 included).
    const LEDGER: &str = include_str!("tests/tsc-ledger-broken.txt");

    #[test]
    fn tsc_locations_come_from_every_diagnostic_once() {
        let got = error_locations(Path::new("/work/ledger"), LEDGER);
        let want = [
            ("src/accounts/account.ts", 39),
            ("src/accounts/account.ts", 43),
            ("src/accounts/ledger.ts", 70),
            ("src/index.ts", 2),
            ("src/money/money.ts", 41),
            ("src/money/money.ts", 49),
            ("src/money/money.ts", 50),
            ("src/reports/summary.ts", 22),
            ("tests/money.test.ts", 2),
            ("tests/money.test.ts", 7),
            ("tests/money.test.ts", 13),
        ];
        assert_eq!(got, want.iter().map(|(p, l)| (p.to_string(), *l)).collect::<Vec<_>>());
    }

    #[test]
    fn pretty_and_absolute_paths_are_read_and_outside_files_dropped() {
        let root = Path::new("/r/proj");
        let out = "/r/proj/src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n\
                   src/b.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.\n\
                   node_modules/@types/n/index.d.ts(1,1): error TS2300: Duplicate identifier 'y'.\n\
                   /elsewhere/c.ts(1,1): error TS2304: Cannot find name 'z'.\n\
                   error TS5023: Unknown compiler option 'foo'.\n\
                   \x20 Type 'a' is not assignable to type 'b'.";
        assert_eq!(error_locations(root, out), vec![("src/a.ts".to_string(), 3), ("src/b.ts".to_string(), 12)]);
    }
}
