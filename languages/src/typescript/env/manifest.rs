//! What a JavaScript/TypeScript repository's install reads: `package.json` (with
//! `packageManager`, `engines`, `workspaces`), the lockfile, the workspace packages'
//! manifests, the package managers' settings (`.npmrc`, `.yarnrc.yml` and the files it points
//! to, `pnpm-workspace.yaml`) and patches; and which package manager and version installs it.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::env::{EnvError, Finding};

/// Files of the root the install reads when present.
const ROOT_FILES: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    ".pnpmfile.cjs",
    "yarn.lock",
    ".yarnrc.yml",
    ".yarnrc",
    ".npmrc",
    ".nvmrc",
    ".node-version",
];

/// Folders whose every file the install may read (yarn's releases, plugins and patches,
/// patch-package's and pnpm's patches).
const INPUT_DIRS: &[&str] = &[".yarn/releases", ".yarn/plugins", ".yarn/patches", "patches"];

/// The package manager that installs the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manager {
    /// `npm`, `pnpm`, `yarn` (1) or `yarn-berry` (2+).
    pub kind: &'static str,
    /// The version asked for (`packageManager`), or the one carve picks for the lockfile.
    pub version: Option<String>,
    /// Whether `packageManager` named it (corepack then reads the version from there).
    pub declared: bool,
    pub lockfile: Option<&'static str>,
}

/// The workspace packages' folders (`workspaces` of package.json or `packages` of
/// pnpm-workspace.yaml), relative, sorted.
pub fn workspace_dirs(repo: &Path, pkg: &Value) -> Vec<String> {
    let mut globs: Vec<String> = match pkg.get("workspaces") {
        Some(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        Some(Value::Object(o)) => o
            .get("packages")
            .and_then(|p| p.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    if let Ok(text) = std::fs::read_to_string(repo.join("pnpm-workspace.yaml")) {
        let mut in_packages = false;
        for line in text.lines() {
            let t = line.trim();
            if !line.starts_with([' ', '\t', '-']) {
                in_packages = t.starts_with("packages:");
                continue;
            }
            if in_packages && let Some(item) = t.strip_prefix('-') {
                globs.push(item.trim().trim_matches(['\'', '"']).to_string());
            }
        }
    }
    let mut builder = globset::GlobSetBuilder::new();
    let mut any = false;
    for g in globs.iter().filter(|g| !g.starts_with('!')) {
        let g = g.trim_start_matches("./").trim_end_matches('/');
        if let Ok(glob) = globset::Glob::new(&format!("{g}/package.json")) {
            builder.add(glob);
            any = true;
        }
    }
    if !any {
        return Vec::new();
    }
    let Ok(set) = builder.build() else { return Vec::new() };
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for e in ignore::WalkBuilder::new(repo)
        .max_depth(Some(5))
        .hidden(false)
        .filter_entry(|e| e.file_name() != "node_modules" && e.file_name() != ".git")
        .build()
        .flatten()
    {
        if e.file_name() != "package.json" || e.depth() < 2 {
            continue;
        }
        let Ok(rel) = e.path().strip_prefix(repo) else { continue };
        if set.is_match(rel)
            && let Some(dir) = rel.parent()
        {
            dirs.insert(dir.to_string_lossy().replace('\\', "/"));
        }
    }
    dirs.into_iter().collect()
}

/// Every file the install reads (relative, sorted).
pub fn inputs(repo: &Path) -> Vec<String> {
    let mut out: BTreeSet<String> =
        ROOT_FILES.iter().filter(|f| repo.join(f).is_file()).map(|f| f.to_string()).collect();
    let pkg = read_package(repo).ok().flatten().unwrap_or(Value::Null);
    for dir in workspace_dirs(repo, &pkg) {
        out.insert(format!("{dir}/package.json"));
    }
    for dir in INPUT_DIRS {
        for e in ignore::WalkBuilder::new(repo.join(dir)).hidden(false).build().flatten() {
            if e.file_type().is_some_and(|t| t.is_file())
                && let Ok(rel) = e.path().strip_prefix(repo)
            {
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.into_iter().collect()
}

pub fn read_package(repo: &Path) -> Result<Option<Value>, EnvError> {
    let Ok(bytes) = std::fs::read(repo.join("package.json")) else { return Ok(None) };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| EnvError::BadFile { file: "package.json".into(), message: format!("not valid JSON ({e})") })
}

/// The package manager: `packageManager` first (a repository may commit several lockfiles;
/// its CI uses the declared one), then the lockfile, else npm. Each decision is a finding.
pub fn manager(repo: &Path, pkg: &Value, findings: &mut Vec<Finding>) -> Manager {
    let lockfile = ["pnpm-lock.yaml", "yarn.lock", "package-lock.json", "npm-shrinkwrap.json"]
        .into_iter()
        .find(|f| repo.join(f).is_file());
    let berry = repo.join(".yarnrc.yml").is_file()
        || std::fs::read_to_string(repo.join("yarn.lock")).is_ok_and(|t| t.contains("__metadata:"));
    if let Some(field) = pkg.get("packageManager").and_then(|v| v.as_str()) {
        let (name, version) = field.split_once('@').unwrap_or((field, ""));
        let version = version.split('+').next().unwrap_or("").to_string();
        let kind = match name {
            "pnpm" => "pnpm",
            "yarn" if version.starts_with('1') => "yarn",
            "yarn" => "yarn-berry",
            _ => "npm",
        };
        let lockfile = match kind {
            "pnpm" => Some("pnpm-lock.yaml"),
            "yarn" | "yarn-berry" => Some("yarn.lock"),
            _ => ["package-lock.json", "npm-shrinkwrap.json"].into_iter().find(|f| repo.join(f).is_file()),
        }
        .filter(|f| repo.join(f).is_file());
        findings.push(Finding::new("package-manager", format!("{name} {version}"), "package.json packageManager"));
        return Manager { kind, version: Some(version).filter(|v| !v.is_empty()), declared: true, lockfile };
    }
    let (kind, version) = match lockfile {
        Some("pnpm-lock.yaml") => ("pnpm", Some(pnpm_for_lockfile(repo))),
        Some("yarn.lock") if berry => ("yarn-berry", Some("4".to_string())),
        Some("yarn.lock") => ("yarn", Some("1".to_string())),
        _ => ("npm", None),
    };
    let why = match lockfile {
        Some(f) => format!("{f} (no packageManager field)"),
        None => "no lockfile and no packageManager field: npm resolves package.json's ranges".into(),
    };
    let shown = match &version {
        Some(v) => format!("{} {v}", kind.trim_end_matches("-berry")),
        None => kind.to_string(),
    };
    findings.push(Finding::new("package-manager", shown, why));
    Manager { kind, version, declared: false, lockfile }
}

/// The pnpm major that reads a lockfile: `lockfileVersion: '9.0'` → 9, 6.x → 8, 5.x → 7.
fn pnpm_for_lockfile(repo: &Path) -> String {
    let text = std::fs::read_to_string(repo.join("pnpm-lock.yaml")).unwrap_or_default();
    let v = text
        .lines()
        .find_map(|l| l.strip_prefix("lockfileVersion:"))
        .map(|v| v.trim().trim_matches(['\'', '"']).to_string())
        .unwrap_or_default();
    match v.split('.').next().unwrap_or("") {
        "5" => "7",
        "6" => "8",
        _ => "9",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    use carve_testutil::temp_tree as repo;

    #[test]
    fn package_manager_field_wins_over_the_lockfile_found() {
        let d = repo(&[
            ("package.json", r#"{"packageManager":"pnpm@10.14.0-0+sha512.abc"}"#),
            ("package-lock.json", "{}"),
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
        ]);
        let pkg = read_package(d.path()).unwrap().unwrap();
        let mut f = Vec::new();
        let m = manager(d.path(), &pkg, &mut f);
        assert_eq!(
            m,
            Manager {
                kind: "pnpm",
                version: Some("10.14.0-0".into()),
                declared: true,
                lockfile: Some("pnpm-lock.yaml")
            }
        );
        assert_eq!(f[0].source, "package.json packageManager");
    }

    #[test]
    fn lockfiles_decide_without_the_field() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, Option<&'a str>);
        let cases: [Case; 4] = [
            (&[("yarn.lock", "# yarn lockfile v1\n")], "yarn", Some("1")),
            (&[("yarn.lock", "__metadata:\n  version: 8\n")], "yarn-berry", Some("4")),
            (&[("pnpm-lock.yaml", "lockfileVersion: 5.4\n")], "pnpm", Some("7")),
            (&[], "npm", None),
        ];
        for (files, kind, version) in cases {
            let mut all = vec![("package.json", "{}")];
            all.extend_from_slice(files);
            let d = repo(&all);
            let m = manager(d.path(), &serde_json::json!({}), &mut Vec::new());
            assert_eq!((m.kind, m.version.as_deref()), (kind, version), "{files:?}");
        }
    }

    #[test]
    fn workspace_manifests_and_yarn_releases_are_inputs() {
        let d = repo(&[
            ("package.json", r#"{"workspaces":["packages/*"]}"#),
            ("packages/a/package.json", "{}"),
            ("packages/a/node_modules/x/package.json", "{}"),
            ("packages/b/src/x.ts", ""),
            (".yarn/releases/yarn-4.4.1.cjs", ""),
            (".yarnrc.yml", "yarnPath: .yarn/releases/yarn-4.4.1.cjs\n"),
        ]);
        assert_eq!(
            inputs(d.path()),
            vec![".yarn/releases/yarn-4.4.1.cjs", ".yarnrc.yml", "package.json", "packages/a/package.json"]
        );
        let d = repo(&[
            ("package.json", "{}"),
            ("pnpm-workspace.yaml", "packages:\n  - 'libs/*'\nonlyBuilt:\n  - x\n"),
            ("libs/l/package.json", "{}"),
        ]);
        assert_eq!(workspace_dirs(d.path(), &serde_json::json!({})), vec!["libs/l"]);
    }
}
