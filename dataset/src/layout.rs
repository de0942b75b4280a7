//! Where everything of a dataset lives under the output folder, content-addressed by
//! repository and commit (see the crate documentation), and how a finished repository's
//! folder is put into place: built under a temporary name beside it, then renamed.

use carve_formats::dataset::{ManifestEntry, RepoResult};
use std::path::{Path, PathBuf};

use crate::Result;
use crate::error::Context;

/// The output folder of a dataset.
#[derive(Debug, Clone)]
pub struct Layout {
    pub root: PathBuf,
}

/// `owner+name` of `owner/name` (a GitLab group path `g/sub/name` gives `g+sub+name`).
pub fn repo_dir_name(name: &str) -> String {
    name.replace('/', "+")
}

impl Layout {
    pub fn new(root: PathBuf) -> Layout {
        Layout { root }
    }

    pub fn lock(&self) -> PathBuf {
        self.root.join(".lock")
    }

    pub fn manifest(&self) -> PathBuf {
        self.root.join("manifest.json")
    }

    /// The protection policy and line budget every repository of the folder was carved with.
    pub fn policy(&self) -> PathBuf {
        self.root.join("policy.json")
    }

    /// `repos/<owner>+<name>/<commit>`: a finished repository.
    pub fn repo(&self, e: &ManifestEntry) -> PathBuf {
        self.root.join("repos").join(repo_dir_name(&e.name)).join(&e.commit)
    }

    pub fn result(&self, e: &ManifestEntry) -> PathBuf {
        self.repo(e).join("result.json")
    }

    /// `work/<owner>+<name>@<commit>`: a repository being worked on.
    pub fn work(&self, e: &ManifestEntry) -> PathBuf {
        self.root.join("work").join(format!("{}@{}", repo_dir_name(&e.name), e.commit))
    }

    /// The lock of one repository being worked on.
    pub fn repo_lock(&self, e: &ManifestEntry) -> PathBuf {
        self.root.join("work").join(format!("{}@{}.lock", repo_dir_name(&e.name), e.commit))
    }

    pub fn slices(&self) -> PathBuf {
        self.root.join("slices")
    }

    pub fn slice_lock(&self, slice: &str) -> PathBuf {
        self.slices().join(format!("{slice}.lock"))
    }

    pub fn tasks_jsonl(&self) -> PathBuf {
        self.root.join("tasks.jsonl")
    }

    pub fn summary_json(&self) -> PathBuf {
        self.root.join("summary.json")
    }

    pub fn summary_html(&self) -> PathBuf {
        self.root.join("summary.html")
    }

    /// The finished result of `e`, when one exists for this very entry (same digest).
    pub fn finished(&self, e: &ManifestEntry) -> Option<RepoResult> {
        let path = self.result(e);
        let r: RepoResult = carve_formats::read(&path).ok()?;
        (r.entry_digest == crate::manifest::entry_digest(e)).then_some(r)
    }
}

/// Write `bytes` to `path` through a temporary sibling and a rename (parents created).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
    }
    carve_core::fs::write_atomic(path, bytes).with_context(|| format!("failed to write {}", path.display()))
}

/// Put the complete folder `staged` at `dest` (same parent) in one rename; an older `dest` is
/// moved aside first and removed after.
pub fn put_in_place(staged: &Path, dest: &Path) -> Result<()> {
    carve_core::fs::replace_dir(staged, dest).with_context(|| format!("failed to move {} into place", dest.display()))
}

/// Remove what a killed run left under temporary names in `dir` (`.<name>.partial…`).
pub fn clear_partials(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && (name.contains(".partial") || name.contains(".tmp-")) {
            let p = entry.path();
            let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        }
    }
}

/// Every file under `dir`, relative, sorted (for listings and comparisons).
pub fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}
