//! Requirement lines as pip reads them (requirements files, tox `deps`, `pip install` words):
//! requirements, the project itself (`.`, `-e .[test]`), includes (`-r`), and what carve
//! leaves out (index options, constraints, editable installs of other folders).

use std::collections::BTreeSet;
use std::path::Path;

/// One line's meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Requirement(String),
    /// The project itself, with extras.
    Project {
        extras: Vec<String>,
    },
    /// Something not used, as written.
    Skipped(String),
}

/// A requirement's distribution name, normalized (PEP 503: lower case, runs of `-_.` as `-`);
/// empty for a line that names none (a URL, an option).
pub fn name(req: &str) -> String {
    let req = req.trim();
    if req.starts_with('-') {
        return String::new();
    }
    let end = req.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')).unwrap_or(req.len());
    normalize(&req[..end])
}

pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c == '-' || c == '_' || c == '.' {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out.trim_matches('-').to_string()
}

/// The extras of a project path (`.[a,b]` → `[a, b]`), or `None` when `word` is not the
/// repository root.
pub fn project_extras(word: &str) -> Option<Vec<String>> {
    let word = word.trim().trim_matches(['"', '\'']);
    let (path, extras) = match word.split_once('[') {
        Some((p, rest)) => (p, rest.trim_end_matches(']')),
        None => (word, ""),
    };
    let path = path.trim_end_matches('/');
    matches!(path, "." | "./" | "" | "{toxinidir}" | "${{ github.workspace }}")
        .then(|| extras.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_string).collect())
        .filter(|_| !word.is_empty())
}

/// The lines of `words` from one `pip install` command: options and their values parsed as
/// pip does; `-r` files read relative to `repo`.
pub fn from_words(repo: &Path, words: &[&str], read: &mut BTreeSet<String>) -> Vec<Line> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let next = words.get(i + 1).copied();
        match w {
            "-r" | "--requirement" => {
                if let Some(f) = next {
                    out.extend(read_file(repo, f.trim_start_matches("./"), read));
                }
                i += 2;
                continue;
            }
            "-e" | "--editable" => {
                if let Some(p) = next {
                    out.push(match project_extras(p) {
                        Some(extras) => Line::Project { extras },
                        None => Line::Skipped(format!("-e {p}")),
                    });
                }
                i += 2;
                continue;
            }
            "-c" | "--constraint" | "-i" | "--index-url" | "--extra-index-url" | "-f" | "--find-links" | "--target"
            | "-t" | "--prefix" => {
                out.push(Line::Skipped(format!("{w} {}", next.unwrap_or(""))));
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(f) = w.strip_prefix("-r").filter(|f| !f.is_empty() && !f.starts_with('-')) {
            out.extend(read_file(repo, f.trim_start_matches("./"), read));
        } else if w.starts_with('-') {
            // Flags (`-U`, `--upgrade`, `--pre`, `-q`): not requirements.
        } else if let Some(extras) = project_extras(w) {
            out.push(Line::Project { extras });
        } else if w.contains("://")
            || w.starts_with('/')
            || w.starts_with("..")
            || w.ends_with(".whl")
            || w.ends_with(".tar.gz")
        {
            out.push(Line::Skipped(w.to_string()));
        } else if !name(w).is_empty() {
            out.push(Line::Requirement(w.trim_matches(['"', '\'']).to_string()));
        }
        i += 1;
    }
    out
}

/// The lines of the requirements file `rel` (repository-relative), includes followed
/// (relative to the including file) and recorded in `read`.
pub fn read_file(repo: &Path, rel: &str, read: &mut BTreeSet<String>) -> Vec<Line> {
    let rel = clean(rel);
    if !read.insert(rel.clone()) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(repo.join(&rel)) else {
        read.remove(&rel);
        return vec![Line::Skipped(format!("{rel} (not found)"))];
    };
    let dir = Path::new(&rel).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let mut out = Vec::new();
    let joined = text.replace("\\\n", " ");
    for line in joined.lines() {
        let line = match line.find(" #") {
            Some(i) => &line[..i],
            None => line,
        };
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(inc) = include_of(&words) {
            let path = if dir.is_empty() { inc.to_string() } else { format!("{dir}/{inc}") };
            out.extend(read_file(repo, &path, read));
        } else if words.first().is_some_and(|w| !w.starts_with('-')) && !line.contains("://") {
            // A requirement with markers keeps its spaces (`x; python_version < "3.10"`).
            match project_extras(words[0]) {
                Some(extras) if words.len() == 1 => out.push(Line::Project { extras }),
                _ => out.push(Line::Requirement(line.to_string())),
            }
        } else {
            out.extend(from_words(repo, &words, read));
        }
    }
    out
}

fn include_of<'a>(words: &[&'a str]) -> Option<&'a str> {
    match words {
        ["-r" | "--requirement", f, ..] => Some(f),
        [w, ..] => w.strip_prefix("-r").or_else(|| w.strip_prefix("--requirement=")).filter(|f| !f.is_empty()),
        [] => None,
    }
}

/// `a/../b/./c` → `b/c`.
fn clean(rel: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_normalize() {
        assert_eq!(name("PyYAML>=6"), "pyyaml");
        assert_eq!(name("typing_extensions ; python_version<'3.8'"), "typing-extensions");
        assert_eq!(name("zope.interface[x]"), "zope-interface");
        assert_eq!(name("https://x/y.whl"), "https");
        assert_eq!(name("--upgrade"), "");
    }

    #[test]
    fn pip_words() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("r.txt"), "a\n").unwrap();
        let mut read = BTreeSet::new();
        let lines = from_words(
            d.path(),
            &["-U", "-e", ".[test,dev]", "-r", "r.txt", "pytest>=7", "git+https://x/y"],
            &mut read,
        );
        assert_eq!(
            lines,
            vec![
                Line::Project { extras: vec!["test".into(), "dev".into()] },
                Line::Requirement("a".into()),
                Line::Requirement("pytest>=7".into()),
                Line::Skipped("git+https://x/y".into()),
            ]
        );
        assert_eq!(clean("requirements/../r.txt"), "r.txt");
        assert_eq!(project_extras("'.[tests]'"), Some(vec!["tests".to_string()]));
        assert_eq!(project_extras("pytest"), None);
    }
}
