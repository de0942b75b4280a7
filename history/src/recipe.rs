//! A git repository built from a recipe of commits, so that fixtures with a scripted history
//! are plain files (no repository of ours holds a `.git`).
//!
//! A recipe is TOML: one `[[commit]]` per commit, oldest first, each with a `message`, the
//! files it writes (`[commit.files]`, path → whole new content) and the paths it deletes
//! (`delete = […]`). Authors and dates are fixed, so the commit ids are the same on every
//! machine. Building needs the `git` command.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::HistoryError;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    #[serde(rename = "commit")]
    pub commits: Vec<RecipeCommit>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecipeCommit {
    pub message: String,
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    #[serde(default)]
    pub delete: Vec<String>,
}

impl Recipe {
    pub fn read(path: &Path) -> Result<Recipe, HistoryError> {
        let text = std::fs::read_to_string(path).map_err(HistoryError::io("read recipe", path))?;
        toml::from_str(&text)
            .map_err(|e| HistoryError::Recipe(format!("{} is not a valid recipe: {e}", path.display())))
    }
}

/// Whether the `git` command can run here.
pub fn git_available() -> bool {
    Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn git(dir: &Path, args: &[&str], date: &str) -> Result<String, HistoryError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "carve fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@carve.invalid")
        .env("GIT_COMMITTER_NAME", "carve fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@carve.invalid")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| HistoryError::Recipe(format!("could not run `git {}`: {e}; install git", args.join(" "))))?;
    if !out.status.success() {
        return Err(HistoryError::Recipe(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Build the recipe's repository in `dir` (created; must not exist or be empty). Returns the
/// commit ids, oldest first.
pub fn build(recipe: &Recipe, dir: &Path) -> Result<Vec<String>, HistoryError> {
    std::fs::create_dir_all(dir).map_err(HistoryError::io("create", dir))?;
    let epoch = "2024-01-01T00:00:00+00:00";
    git(dir, &["init", "-q", "-b", "main"], epoch)?;
    let mut ids = Vec::new();
    for (i, c) in recipe.commits.iter().enumerate() {
        for (path, content) in &c.files {
            let p = dir.join(path);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(HistoryError::io("create", parent))?;
            }
            std::fs::write(&p, content).map_err(HistoryError::io("write", &p))?;
        }
        for path in &c.delete {
            let p = dir.join(path);
            std::fs::remove_file(&p).map_err(HistoryError::io("delete", &p))?;
        }
        let date = format!("{} +0000", 1_704_067_200 + i as i64 * 3600);
        git(dir, &["add", "-A"], &date)?;
        git(dir, &["commit", "-q", "--allow-empty", "-m", &c.message], &date)?;
        ids.push(git(dir, &["rev-parse", "HEAD"], &date)?);
    }
    Ok(ids)
}
