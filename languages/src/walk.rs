//! Walking a repository for source files: `.gitignore`-aware (via the `ignore` crate), with
//! the directories no project's own source lives in skipped always (VCS data, virtualenvs,
//! installed packages, caches, build output), and include/exclude globs applied to paths
//! relative to the root.

use std::path::Path;
use std::sync::LazyLock;

use carve_core::tree::SkipPolicy;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::Language;
use crate::index::{IndexError, SkippedFile};

/// Directory names never walked into, beyond what no copy holds ([`crate::skip_policy`]:
/// version control, caches, environments, installed dependencies): other virtualenv and
/// install folders, and build outputs (see [`is_skipped_dir`]).
pub const SKIPPED_DIRS: &[&str] = &["venv", "site-packages", "build", "dist"];

/// What no copy holds, installed dependencies included.
static NOT_WALKED: LazyLock<SkipPolicy> = LazyLock::new(|| crate::skip_policy().without_dependencies());

/// A source file found by [`source_files`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub language: Language,
}

#[derive(Debug, Default)]
pub struct Walked {
    /// Sorted by path.
    pub files: Vec<SourceFile>,
    /// Entries the walk could not read.
    pub skipped: Vec<SkippedFile>,
}

fn globset(kind: &'static str, patterns: &[String]) -> Result<GlobSet, IndexError> {
    let mut builder = GlobSetBuilder::new();
    for p in patterns {
        let pattern = p.trim_end_matches('/');
        let glob =
            Glob::new(pattern).map_err(|e| IndexError::BadGlob { kind, pattern: p.clone(), message: e.to_string() })?;
        builder.add(glob);
    }
    builder.build().map_err(|e| IndexError::BadGlob { kind, pattern: patterns.join(", "), message: e.to_string() })
}

/// Whether `rel` or one of its ancestor directories matches.
fn matches_path_or_ancestor(set: &GlobSet, rel: &str) -> bool {
    if set.is_match(rel) {
        return true;
    }
    let mut cur = rel;
    while let Some(i) = cur.rfind('/') {
        cur = &cur[..i];
        if set.is_match(cur) {
            return true;
        }
    }
    false
}

/// Read the repository file `rel` under `root` into `buf` (cleared first). Indexers keep
/// one buffer per worker: a fresh allocation of the file's size per file costs more than
/// the read (the allocator first consolidates the previous tree's freed nodes).
pub fn read_source(root: &Path, rel: &str, buf: &mut Vec<u8>) -> Result<(), IndexError> {
    use std::io::Read as _;
    let read = |buf: &mut Vec<u8>| -> std::io::Result<()> {
        let mut file = std::fs::File::open(root.join(rel))?;
        buf.clear();
        let size = file.metadata().map(|m| m.len() as usize).unwrap_or(0);
        buf.reserve(size);
        file.read_to_end(buf)?;
        Ok(())
    };
    read(buf).map_err(|source| IndexError::Read { path: rel.to_string(), source })
}

/// Reads and parses the repository files `paths` under `root` in parallel, with one
/// parser (`new_parser`) and one read buffer (see [`read_source`]) per worker; the results
/// in `paths` order.
pub(crate) fn parse_files<P, T: Send>(
    root: &Path,
    paths: &[String],
    new_parser: fn() -> P,
    parse: fn(&mut P, &str, &[u8]) -> Result<T, IndexError>,
) -> Vec<Result<T, IndexError>> {
    use rayon::prelude::*;
    paths
        .par_iter()
        .map_init(
            || (new_parser(), Vec::new()),
            |(parser, buf), path| {
                read_source(root, path, buf)?;
                parse(parser, path, buf)
            },
        )
        .collect()
}

/// Whether a directory is a virtualenv, a tagged cache directory, or another tree never
/// walked into. `build` and
/// `dist` are skipped unless they are Python packages themselves (`src/build/__init__.py`
/// is some project's own code; `build/lib/…` is setuptools output).
pub fn is_skipped_dir(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if (name == "build" || name == "dist") && dir.join("__init__.py").is_file() {
        return false;
    }
    SKIPPED_DIRS.contains(&name)
        || NOT_WALKED.skips_dir(dir)
        || name.ends_with(".egg-info")
        // Cache directories tagged per https://bford.info/cachedir/ (cargo's `target/`, …).
        || dir.join("CACHEDIR.TAG").is_file()
}

/// Every file of a language carve knows under `root`, sorted by path.
pub fn source_files(root: &Path, include: &[String], exclude: &[String]) -> Result<Walked, IndexError> {
    if !root.is_dir() {
        return Err(IndexError::RootNotFound(root.to_path_buf()));
    }
    let include = globset("include", include)?;
    let exclude_set = globset("exclude", exclude)?;
    let rel_of = |path: &Path| -> Option<String> {
        let rel = path.strip_prefix(root).ok()?;
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        Some(parts?.join("/"))
    };

    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .parents(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    {
        let exclude_set = exclude_set.clone();
        let root = root.to_path_buf();
        builder.filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if !is_dir || entry.depth() == 0 {
                return true;
            }
            if is_skipped_dir(entry.path()) {
                return false;
            }
            let rel = entry.path().strip_prefix(&root).ok().and_then(|r| r.to_str()).map(|r| r.replace('\\', "/"));
            !rel.is_some_and(|r| exclude_set.is_match(&r))
        });
    }

    let mut out = Walked::default();
    for entry in builder.build() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = match &e {
                    ignore::Error::WithPath { path, .. } => rel_of(path).unwrap_or_else(|| path.display().to_string()),
                    _ => String::new(),
                };
                out.skipped.push(SkippedFile { path, reason: format!("cannot walk: {e}") });
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(language) = Language::from_path(entry.path()) else { continue };
        let Some(rel) = rel_of(entry.path()) else {
            out.skipped.push(SkippedFile {
                path: entry.path().display().to_string(),
                reason: "path is not valid UTF-8".into(),
            });
            continue;
        };
        if matches_path_or_ancestor(&exclude_set, &rel) {
            continue;
        }
        if !include.is_empty() && !matches_path_or_ancestor(&include, &rel) {
            continue;
        }
        out.files.push(SourceFile { path: rel, language });
    }
    out.files.sort();
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, "x = 1\n").unwrap();
    }

    fn paths(w: &Walked) -> Vec<&str> {
        w.files.iter().map(|f| f.path.as_str()).collect()
    }

    #[test]
    fn skips_vendored_and_ignored_trees() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "pkg/__init__.py",
            "pkg/core.py",
            "pkg/__pycache__/core.py",
            ".venv/lib/x.py",
            "venv/lib/x.py",
            "myenv/lib/python3.11/site-packages/dep.py",
            "build/lib/pkg/core.py",
            "dist/x.py",
            ".tox/py/x.py",
            "node_modules/a/x.py",
            "generated/out.py",
            "tests/test_core.py",
            "src/build/__init__.py",
            "README.md",
        ] {
            touch(root, rel);
        }
        fs::write(root.join("myenv/pyvenv.cfg"), "home = /usr\n").unwrap();
        touch(root, "target/debug/gen.py");
        fs::write(root.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
        fs::write(root.join(".gitignore"), "generated/\n").unwrap();
        let w = source_files(root, &[], &[]).unwrap();
        assert_eq!(paths(&w), ["pkg/__init__.py", "pkg/core.py", "src/build/__init__.py", "tests/test_core.py"]);
    }

    #[test]
    fn include_and_exclude_globs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in ["pkg/a.py", "pkg/sub/b.py", "tests/test_a.py", "scripts/s.py"] {
            touch(root, rel);
        }
        let w = source_files(root, &["pkg".into(), "tests/**".into()], &["pkg/sub".into()]).unwrap();
        assert_eq!(paths(&w), ["pkg/a.py", "tests/test_a.py"]);
        let w = source_files(root, &[], &["*/test_*.py".into()]).unwrap();
        assert_eq!(paths(&w), ["pkg/a.py", "pkg/sub/b.py", "scripts/s.py"]);
        assert!(matches!(source_files(root, &["a[".into()], &[]), Err(IndexError::BadGlob { .. })));
        assert!(matches!(source_files(&root.join("nope"), &[], &[]), Err(IndexError::RootNotFound(_))));
    }
}
