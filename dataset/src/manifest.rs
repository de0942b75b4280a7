//! The manifest: TOML (`[[repo]]` tables, as `bench/corpus/dataset-*.toml`) or JSONL (one
//! entry per line). Every entry is checked before anything runs; a malformed or duplicate
//! entry is an error that names the file, the entry's number and its name.

use carve_formats::dataset::{Manifest, ManifestEntry, VERSION};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Context, bail};
use crate::{Error, Result};

/// A checked manifest and where it was read from (local `url`s are relative to its folder).
#[derive(Debug, Clone)]
pub struct LoadedManifest {
    pub path: PathBuf,
    pub manifest: Manifest,
}

impl LoadedManifest {
    pub fn entries(&self) -> &[ManifestEntry] {
        &self.manifest.repo
    }

    /// The folder local paths are relative to.
    pub fn base_dir(&self) -> PathBuf {
        self.path.parent().map(Path::to_path_buf).unwrap_or_default()
    }

    /// Digest of the whole manifest (its entries in order, as carve writes them).
    pub fn digest(&self) -> String {
        digest_of(&self.manifest)
    }
}

/// SHA-256 of a value's compact JSON.
pub fn digest_of(v: &impl serde::Serialize) -> String {
    hex::encode(Sha256::digest(serde_json::to_vec(v).unwrap_or_default()))
}

/// Digest of one entry: a result made for another entry (a changed commit, cap or timeout) is
/// not this entry's.
pub fn entry_digest(e: &ManifestEntry) -> String {
    digest_of(e)
}

/// Read and check a manifest. JSONL when the file ends in `.jsonl`/`.json` or its first
/// non-blank character is `{`; TOML otherwise.
pub fn load(path: &Path) -> Result<LoadedManifest> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("failed to read the manifest {}", path.display()))?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let jsonl = ext == "jsonl" || ext == "json" || (ext != "toml" && text.trim_start().starts_with('{'));
    let manifest = if jsonl { parse_jsonl(&text, path)? } else { parse_toml(&text, path)? };
    check(&manifest, path)?;
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(LoadedManifest { path, manifest })
}

/// `manifest.toml, entry 3 (owner/name)`: how errors name an entry (numbered from 1).
fn entry_name(path: &Path, n: usize, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{}, entry {n} ({name})", path.display()),
        None => format!("{}, entry {n}", path.display()),
    }
}

fn parse_toml(text: &str, path: &Path) -> Result<Manifest> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| Error::msg(format!("{} is not valid TOML: {e}", path.display())))?;
    let mut version = VERSION;
    let mut repo = Vec::new();
    for (key, value) in table {
        match key.as_str() {
            "version" => {
                version = value
                    .as_integer()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| Error::msg(format!("{}: `version` is a number", path.display())))?
            }
            "repo" => {
                let Some(items) = value.as_array() else {
                    bail!("{}: `repo` must be a list of tables (`[[repo]]`)", path.display());
                };
                for (i, item) in items.iter().enumerate() {
                    let name = item.get("name").and_then(|n| n.as_str());
                    let entry: ManifestEntry = item.clone().try_into().map_err(|e: toml::de::Error| {
                        Error::msg(format!("{}: {}", entry_name(path, i + 1, name), e.message()))
                    })?;
                    repo.push(entry);
                }
            }
            other => {
                bail!("{}: unknown key `{other}` (a manifest holds `version` and `[[repo]]` tables)", path.display())
            }
        }
    }
    if version != VERSION {
        bail!("{} is manifest version {version}; this carve reads version {VERSION}", path.display());
    }
    Ok(Manifest::new(repo))
}

fn parse_jsonl(text: &str, path: &Path) -> Result<Manifest> {
    let mut repo = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| Error::msg(format!("{}, line {}: not valid JSON: {e}", path.display(), i + 1)))?;
        let name = value.get("name").and_then(|n| n.as_str()).map(str::to_string);
        let entry: ManifestEntry = serde_json::from_value(value).map_err(|e| {
            Error::msg(format!(
                "{}, line {}{}: {e}",
                path.display(),
                i + 1,
                name.map(|n| format!(" ({n})")).unwrap_or_default()
            ))
        })?;
        repo.push(entry);
    }
    Ok(Manifest::new(repo))
}

/// Every entry well-formed, and no repository twice at the same commit.
fn check(m: &Manifest, path: &Path) -> Result<()> {
    if m.repo.is_empty() {
        bail!("{} lists no repository (add `[[repo]]` tables with name, url and commit)", path.display());
    }
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, e) in m.repo.iter().enumerate() {
        let at = entry_name(path, i + 1, Some(&e.name));
        check_entry(e).map_err(|why| Error::msg(format!("{at}: {why}")))?;
        let key = (e.name.to_ascii_lowercase(), e.commit.to_ascii_lowercase());
        if let Some(first) = seen.insert(key, i + 1) {
            bail!("{at}: the same repository and commit as entry {first}; list each once");
        }
    }
    Ok(())
}

fn check_entry(e: &ManifestEntry) -> std::result::Result<(), String> {
    let parts: Vec<&str> = e.name.split('/').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty() || p.chars().any(char::is_whitespace)) {
        return Err(format!("`name` is `owner/name` (for example `psf/requests`), not `{}`", e.name));
    }
    if e.url.trim().is_empty() {
        return Err("`url` is empty: give a git URL or a local path".into());
    }
    let c = &e.commit;
    if !(c.len() == 40 || c.len() == 64) || !c.chars().all(|ch| ch.is_ascii_hexdigit()) {
        return Err(format!(
            "`commit` is a full commit id (40 hexadecimal digits), not `{c}`: pin the exact commit, a branch or tag moves"
        ));
    }
    if let Some(lang) = &e.language {
        let known: Vec<&str> = carve_languages::Language::ALL.iter().map(|l| l.name()).collect();
        if !known.contains(&lang.as_str()) {
            return Err(format!("`language` is one of {}, not `{lang}`", known.join(", ")));
        }
    }
    if e.candidates == Some(0) {
        return Err("`candidates` is at least 1 (leave it out to try every candidate)".into());
    }
    if e.timeout == Some(0) || e.test_timeout == Some(0) {
        return Err("`timeout` and `test_timeout` are seconds, at least 1".into());
    }
    Ok(())
}

/// Which entries a run works on: all, one (`--index N`), or every N-th (`--shard I/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    All,
    Index(usize),
    Shard { index: usize, count: usize },
}

impl Slice {
    /// The positions (0-based) of the manifest's entries in this slice.
    pub fn positions(self, len: usize) -> Result<Vec<usize>> {
        match self {
            Slice::All => Ok((0..len).collect()),
            Slice::Index(i) if i < len => Ok(vec![i]),
            Slice::Index(i) => bail!(
                "--index {i} is past the manifest's last entry ({} entries: indexes 0 to {})",
                len,
                len.saturating_sub(1)
            ),
            Slice::Shard { index, count } => Ok((0..len).filter(|p| p % count == index).collect()),
        }
    }

    /// The slice's name in `slices/<name>.json` and in locks.
    pub fn name(self) -> String {
        match self {
            Slice::All => "all".into(),
            Slice::Index(i) => format!("index-{i}"),
            Slice::Shard { index, count } => format!("shard-{index}-of-{count}"),
        }
    }

    /// `--index N` (`env`: `SLURM_ARRAY_TASK_ID`, else `JOB_COMPLETION_INDEX`).
    pub fn parse_index(arg: &str) -> Result<Slice> {
        Ok(Slice::Index(parse_number(arg, "--index")?))
    }

    /// `--shard I/N` (`I` may be `env`, as for `--index`).
    pub fn parse_shard(arg: &str) -> Result<Slice> {
        let Some((i, n)) = arg.split_once('/') else {
            bail!("--shard takes I/N (this run's part I of N, from 0), not `{arg}`");
        };
        let count: usize = n
            .trim()
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| Error::msg(format!("--shard {arg}: N is a positive number")))?;
        let index = parse_number(i, "--shard")?;
        if index >= count {
            bail!("--shard {arg}: I runs from 0 to {}", count - 1);
        }
        Ok(Slice::Shard { index, count })
    }
}

/// A number, or `env`: the job array's index from the environment.
fn parse_number(arg: &str, flag: &str) -> Result<usize> {
    let arg = arg.trim();
    if arg == "env" {
        for var in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
            if let Ok(v) = std::env::var(var) {
                return v.trim().parse().map_err(|_| Error::msg(format!("{flag} env: {var} is `{v}`, not a number")));
            }
        }
        bail!(
            "{flag} env reads SLURM_ARRAY_TASK_ID (a Slurm job array) or JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); neither is set"
        );
    }
    arg.parse().map_err(|_| Error::msg(format!("{flag} takes a number from 0 (or `env`), not `{arg}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "60cdc649726bf1bc4f1b336050560b336da715ec";
    const C2: &str = "c981f9c7aa91b83cc9bd33a09ecee9e751b06e8d";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn err(name: &str, text: &str) -> String {
        let d = tempfile::tempdir().unwrap();
        load(&write(d.path(), name, text)).unwrap_err().to_string()
    }

    #[test]
    fn toml_and_jsonl_read_the_same_entries() {
        let d = tempfile::tempdir().unwrap();
        let toml = format!(
            "[[repo]]\nname = \"a/b\"\nurl = \"https://github.com/a/b\"\ncommit = \"{C1}\"\nlanguage = \"python\"\n\n\
             [[repo]]\nname = \"c/d\"\nurl = \"../d\"\ncommit = \"{C2}\"\ncandidates = 3\n[repo.env]\npython = \"python3\"\n"
        );
        let jsonl = format!(
            "{{\"name\":\"a/b\",\"url\":\"https://github.com/a/b\",\"commit\":\"{C1}\",\"language\":\"python\"}}\n\n\
             {{\"name\":\"c/d\",\"url\":\"../d\",\"commit\":\"{C2}\",\"candidates\":3,\"env\":{{\"python\":\"python3\"}}}}\n"
        );
        let a = load(&write(d.path(), "m.toml", &toml)).unwrap();
        let b = load(&write(d.path(), "m.jsonl", &jsonl)).unwrap();
        assert_eq!(a.manifest, b.manifest);
        assert_eq!(a.entries().len(), 2);
        assert_eq!(a.entries()[1].candidates, Some(3));
        assert_eq!(a.digest(), b.digest());
        assert_ne!(entry_digest(&a.entries()[0]), entry_digest(&a.entries()[1]));
    }

    #[test]
    fn the_corpus_manifests_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/corpus");
        for lang in ["python", "typescript", "go", "rust"] {
            let m = load(&dir.join(format!("dataset-{lang}.toml"))).unwrap();
            assert!(m.entries().len() >= 8, "{lang}: {}", m.entries().len());
            assert!(m.entries().iter().all(|e| e.language.is_some()));
        }
    }

    #[test]
    fn malformed_entries_are_named() {
        let e = err("m.toml", &format!("[[repo]]\nname = \"a/b\"\nurl = \"u\"\ncomit = \"{C1}\"\n"));
        assert!(e.contains("entry 1 (a/b)") && e.contains("comit"), "{e}");
        let e = err("m.toml", "[[repo]]\nname = \"a/b\"\nurl = \"u\"\ncommit = \"main\"\n");
        assert!(e.contains("entry 1 (a/b)") && e.contains("full commit id"), "{e}");
        let e = err("m.toml", &format!("[[repo]]\nname = \"ab\"\nurl = \"u\"\ncommit = \"{C1}\"\n"));
        assert!(e.contains("owner/name"), "{e}");
        let e =
            err("m.toml", &format!("[[repo]]\nname = \"a/b\"\nurl = \"u\"\ncommit = \"{C1}\"\nlanguage = \"cobol\"\n"));
        assert!(e.contains("`language` is one of"), "{e}");
        let e = err("m.jsonl", "{\"name\":\"a/b\",\"url\":\"u\"}\n");
        assert!(e.contains("line 1 (a/b)") && e.contains("commit"), "{e}");
        let e = err("m.jsonl", "{\"name\":\"a/b\",\n");
        assert!(e.contains("line 1: not valid JSON"), "{e}");
        let e = err("m.toml", "[[repo]\n");
        assert!(e.contains("not valid TOML"), "{e}");
        let e = err("m.toml", "version = 1\n");
        assert!(e.contains("lists no repository"), "{e}");
        let e = err("m.toml", &format!("repos = 1\n[[repo]]\nname = \"a/b\"\nurl = \"u\"\ncommit = \"{C1}\"\n"));
        assert!(e.contains("unknown key `repos`"), "{e}");
    }

    #[test]
    fn duplicate_entries_name_both() {
        let one = format!("[[repo]]\nname = \"a/b\"\nurl = \"u\"\ncommit = \"{C1}\"\n");
        let e = err("m.toml", &format!("{one}\n{}", one.replace("a/b", "A/B")));
        assert!(e.contains("entry 2 (A/B)") && e.contains("as entry 1"), "{e}");
        // The same repository at another commit is another entry.
        let d = tempfile::tempdir().unwrap();
        let two = format!("{one}\n{}", one.replace(C1, C2));
        assert_eq!(load(&write(d.path(), "m.toml", &two)).unwrap().entries().len(), 2);
    }

    #[test]
    fn slices_cover_the_manifest_once() {
        let mut all: Vec<usize> =
            (0..3).flat_map(|i| Slice::Shard { index: i, count: 3 }.positions(10).unwrap()).collect();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(Slice::Index(4).positions(10).unwrap(), vec![4]);
        assert!(Slice::Index(10).positions(10).unwrap_err().to_string().contains("past the manifest's last entry"));
        assert_eq!(Slice::parse_shard("1/4").unwrap(), Slice::Shard { index: 1, count: 4 });
        assert!(Slice::parse_shard("4/4").is_err());
        assert!(Slice::parse_shard("1").is_err());
        assert_eq!(Slice::Shard { index: 1, count: 4 }.name(), "shard-1-of-4");
    }
}
