//! The CPython interpreters on this machine, and the one an environment is made with: the
//! `python3` on `PATH` when it satisfies the project's `requires-python`, else the newest that
//! does, among `python3.N` on `PATH` and pyenv's versions (`$PYENV_ROOT/versions/*`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::env::range::satisfies;
use crate::env::{EnvError, Tool, version_cmp};

/// Prints the interpreter's real path and its version.
const PROBE: &str = "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])";

/// An interpreter found here: its version and real path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub version: String,
    pub program: PathBuf,
}

fn probe(program: &Path) -> Option<Found> {
    let out = Command::new(program).args(["-c", PROBE]).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let exe = PathBuf::from(lines.next()?.trim());
    let version = lines.next()?.trim().to_string();
    exe.is_absolute().then_some(Found { version, program: exe })
}

/// Every interpreter found: the default `python3` first, then the others by version
/// (newest first), one per version.
pub fn found() -> Vec<Found> {
    let mut candidates: Vec<PathBuf> = vec![PathBuf::from("python3")];
    for minor in (6..=15).rev() {
        candidates.push(PathBuf::from(format!("python3.{minor}")));
    }
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    if let Some(root) = pyenv_root
        && let Ok(entries) = std::fs::read_dir(root.join("versions"))
    {
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("bin").join("python3")).collect();
        dirs.sort();
        candidates.extend(dirs.into_iter().filter(|p| p.exists()));
    }
    let mut by_version: BTreeMap<String, Found> = BTreeMap::new();
    let mut default = None;
    for (i, c) in candidates.iter().enumerate() {
        let Some(f) = probe(c) else { continue };
        if i == 0 {
            default = Some(f.clone());
        }
        by_version.entry(f.version.clone()).or_insert(f);
    }
    let mut rest: Vec<Found> = by_version.into_values().filter(|f| Some(f) != default.as_ref()).collect();
    rest.sort_by(|a, b| version_cmp(&b.version, &a.version));
    default.into_iter().chain(rest).filter(|f| !f.version.starts_with("2.")).collect()
}

/// The interpreter for `wanted` (a `requires-python` range, `source` naming where it came
/// from) and an optional pinned `prefer` version (`.python-version`): the pin when present and
/// satisfying, else the default `python3` when it satisfies, else the newest that does.
pub fn choose(found: &[Found], wanted: Option<&str>, source: &str, prefer: Option<&str>) -> Result<Tool, EnvError> {
    let ok = |f: &&Found| wanted.is_none_or(|w| satisfies(&f.version, w));
    let pinned = prefer.and_then(|p| found.iter().filter(ok).find(|f| satisfies(&f.version, p)));
    let Some(pick) = pinned.or_else(|| found.iter().find(ok)) else {
        let present: Vec<String> = found.iter().map(|f| format!("{} ({})", f.version, f.program.display())).collect();
        return Err(EnvError::Unavailable {
            tool: "CPython".into(),
            wanted: wanted.unwrap_or("3").to_string(),
            origin: source.to_string(),
            present: if present.is_empty() { "no python3 at all".into() } else { present.join(", ") },
            hint: "install a CPython in that range (Debian's python3.X package, or `pyenv install X.Y`), \
                   or pass --python with one"
                .into(),
        });
    };
    Ok(Tool { tool: "python".into(), version: pick.version.clone(), program: pick.program.display().to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: &str) -> Found {
        Found { version: v.into(), program: PathBuf::from(format!("/py/{v}/bin/python3")) }
    }

    #[test]
    fn the_default_when_it_fits_else_the_newest_that_does() {
        let here = [f("3.11.7"), f("3.13.0"), f("3.12.1"), f("3.9.18")];
        assert_eq!(choose(&here, Some(">=3.8"), "x", None).unwrap().version, "3.11.7");
        assert_eq!(choose(&here, Some(">=3.12"), "x", None).unwrap().version, "3.13.0");
        assert_eq!(choose(&here, Some(">=3.8"), "x", Some("3.9")).unwrap().version, "3.9.18");
        assert_eq!(choose(&here, None, "x", Some("3.7")).unwrap().version, "3.11.7", "a pin not present is not used");
        let err = choose(&here, Some(">=3.14"), "pyproject.toml [project] requires-python", None).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(">=3.14") && msg.contains("3.13.0") && msg.contains("requires-python"), "{msg}");
    }

    #[carve_testutil::needs("python3")]
    fn the_machines_python3_is_found_first() {
        let all = found();
        assert!(!all.is_empty());
        assert!(all[0].program.is_absolute());
    }
}
