//! The test targets of a Cargo workspace (from `cargo metadata --no-deps`) and the names
//! carve gives them in test ids: a library is its crate name (`runner_cases`), every other
//! target its own name (`one` for `tests/one.rs`, a binary's name), with `(bin)`, `(test)`
//! … appended only when two targets would otherwise share a name (a package `foo` with a
//! library and a binary both called `foo`). Also: which target a `Running …`/`Doc-tests …`
//! header of `cargo test` belongs to, and the cargo flags that select a target.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Lib,
    Bin,
    Test,
    Bench,
    Example,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Lib => "lib",
            Kind::Bin => "bin",
            Kind::Test => "test",
            Kind::Bench => "bench",
            Kind::Example => "example",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub package: String,
    pub name: String,
    pub kind: Kind,
    /// The source file relative to the package directory, `/`-separated (`tests/one.rs`).
    pub src: String,
    /// The name carve's ids start with.
    pub label: String,
    /// `cargo test` runs it without naming it (`test = true`, the default for libraries,
    /// binaries and tests).
    pub tested: bool,
    /// A library whose doctests `cargo test` runs.
    pub doctest: bool,
}

impl Target {
    /// The crate name rustc gives the target (`-` → `_`), which names its test binary.
    pub fn crate_name(&self) -> String {
        self.name.replace('-', "_")
    }

    /// The `cargo test` flags that select this target's test binary.
    pub fn cargo_flags(&self) -> Vec<String> {
        match self.kind {
            Kind::Lib => vec!["--lib".into()],
            Kind::Bin => vec!["--bin".into(), self.name.clone()],
            Kind::Test => vec!["--test".into(), self.name.clone()],
            Kind::Bench => vec!["--bench".into(), self.name.clone()],
            Kind::Example => vec!["--example".into(), self.name.clone()],
        }
    }
}

/// The workspace members' targets, by label.
#[derive(Debug, Default)]
pub(crate) struct Workspace {
    pub targets: BTreeMap<String, Target>,
    /// The package whose manifest is at the workspace root (none in a virtual workspace).
    pub root_package: Option<String>,
    /// Every member package.
    pub packages: BTreeSet<String>,
    /// The `-p` argument of a member whose name `Cargo.lock` also gives a dependency (a
    /// dev-dependency that pulls the crate itself from crates.io: dtolnay/itoa through
    /// criterion): its package id, which names its path. Others go by their name.
    specs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
    #[serde(default)]
    workspace_root: String,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    manifest_path: String,
    targets: Vec<MetaTarget>,
}

#[derive(Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
    src_path: String,
    #[serde(default = "yes")]
    test: bool,
    #[serde(default)]
    doctest: bool,
}

fn yes() -> bool {
    true
}

impl Workspace {
    /// From the JSON of `cargo metadata --no-deps --format-version 1`.
    pub fn from_metadata(json: &[u8]) -> Result<Workspace, serde_json::Error> {
        let meta: Metadata = serde_json::from_slice(json)?;
        let members: BTreeSet<&str> = meta.workspace_members.iter().map(String::as_str).collect();
        let mut raw = Vec::new();
        let mut root_package = None;
        let mut packages = BTreeSet::new();
        let mut specs = BTreeMap::new();
        let locked = std::fs::read_to_string(Path::new(&meta.workspace_root).join("Cargo.lock")).unwrap_or_default();
        let locked = locked_names(&locked);
        for p in meta.packages.iter().filter(|p| members.contains(p.id.as_str())) {
            let dir = Path::new(&p.manifest_path).parent().unwrap_or(Path::new(""));
            packages.insert(p.name.clone());
            if locked.get(p.name.as_str()).is_some_and(|n| *n > 1) {
                specs.insert(p.name.clone(), p.id.clone());
            }
            if !meta.workspace_root.is_empty() && dir == Path::new(&meta.workspace_root) {
                root_package = Some(p.name.clone());
            }
            for t in &p.targets {
                let kind = match t.kind.first().map(String::as_str) {
                    Some("lib" | "rlib" | "dylib" | "cdylib" | "staticlib" | "proc-macro") => Kind::Lib,
                    Some("bin") => Kind::Bin,
                    Some("test") => Kind::Test,
                    Some("bench") => Kind::Bench,
                    Some("example") => Kind::Example,
                    _ => continue,
                };
                let src = Path::new(&t.src_path).strip_prefix(dir).unwrap_or(Path::new(&t.src_path));
                let src = src.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                let name = if kind == Kind::Lib { t.name.replace('-', "_") } else { t.name.clone() };
                raw.push(Target {
                    package: p.name.clone(),
                    name: t.name.clone(),
                    kind,
                    src,
                    label: name,
                    tested: t.test,
                    doctest: kind == Kind::Lib && t.doctest,
                });
            }
        }
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for t in &raw {
            *count.entry(t.label.clone()).or_default() += 1;
        }
        let mut targets = BTreeMap::new();
        for mut t in raw {
            if count[&t.label] > 1 && t.kind != Kind::Lib {
                t.label = format!("{}({})", t.label, t.kind.suffix());
            }
            // Two packages' libraries, or two `(test)` targets, of one name: the package decides.
            let label =
                if targets.contains_key(&t.label) { format!("{}({})", t.label, t.package) } else { t.label.clone() };
            t.label = label.clone();
            targets.insert(label, t);
        }
        Ok(Workspace { targets, root_package, packages, specs })
    }

    /// What `cargo test -p` is given for member `package`: its name, or its package id when
    /// the name alone is ambiguous.
    pub fn spec<'a>(&'a self, package: &'a str) -> &'a str {
        self.specs.get(package).map_or(package, String::as_str)
    }

    /// The target of a `Running <src> (<exe>)` header (`unittests ` before `<src>` for
    /// lib and bin targets).
    pub fn for_running(&self, header: &str) -> Option<&Target> {
        let (src, exe) = match header.rsplit_once(" (") {
            Some((src, exe)) => (src.trim(), exe.trim_end_matches(')')),
            None => ("", header.trim()),
        };
        let (unit, src) = match src.strip_prefix("unittests ") {
            Some(s) => (true, s.trim()),
            None => (false, src),
        };
        let stem = Path::new(exe).file_name()?.to_string_lossy().into_owned();
        let crate_name = stem.rsplit_once('-').map_or(stem.as_str(), |(n, _)| n).to_string();
        let src = src.replace('\\', "/");
        let candidates: Vec<&Target> = self
            .targets
            .values()
            .filter(|t| t.crate_name() == crate_name)
            .filter(|t| src.is_empty() || matches!(t.kind, Kind::Lib | Kind::Bin) == unit)
            .collect();
        candidates.iter().find(|t| !src.is_empty() && t.src == src).or(candidates.first()).copied()
    }

    /// The library target whose doctests a `Doc-tests <crate>` header announces.
    pub fn for_doctests(&self, crate_name: &str) -> Option<&Target> {
        self.targets.values().find(|t| t.kind == Kind::Lib && t.crate_name() == crate_name.trim())
    }
}

/// How many `[[package]]` entries of each name a `Cargo.lock` holds.
fn locked_names(lock: &str) -> BTreeMap<&str, usize> {
    let mut out = BTreeMap::new();
    let mut in_package = false;
    for line in lock.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[[package]]";
        } else if let Some(name) = line.strip_prefix("name = ").filter(|_| in_package) {
            *out.entry(name.trim_matches('"')).or_default() += 1;
            in_package = false;
        }
    }
    out
}

/// A carve Rust id split into its target label, whether it is a doctest, and the name
/// libtest knows the test by (empty for a whole target).
pub(crate) fn split_id(id: &str) -> (&str, bool, &str) {
    let (label, rest) = id.split_once("::").unwrap_or((id, ""));
    match rest.strip_prefix("doctest::") {
        Some(name) => (label, true, name),
        None if rest == "doctest" => (label, true, ""),
        None => (label, false, rest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#"{"packages":[
      {"id":"a#1","name":"foo","manifest_path":"/w/Cargo.toml","targets":[
        {"name":"foo","kind":["lib"],"src_path":"/w/src/lib.rs","test":true,"doctest":true},
        {"name":"foo","kind":["bin"],"src_path":"/w/src/main.rs","test":true},
        {"name":"one","kind":["test"],"src_path":"/w/tests/one.rs","test":true},
        {"name":"build-script-build","kind":["custom-build"],"src_path":"/w/build.rs","test":false}]},
      {"id":"b#1","name":"my-helper","manifest_path":"/w/helper/Cargo.toml","targets":[
        {"name":"my-helper","kind":["lib"],"src_path":"/w/helper/src/lib.rs","test":true},
        {"name":"one","kind":["test"],"src_path":"/w/helper/tests/one.rs","test":true}]},
      {"id":"dep#1","name":"dep","manifest_path":"/r/dep/Cargo.toml","targets":[
        {"name":"dep","kind":["lib"],"src_path":"/r/dep/src/lib.rs"}]}],
      "workspace_members":["a#1","b#1"],"workspace_root":"/w"}"#;

    #[test]
    fn lock_entries_are_counted_by_name() {
        let lock = "version = 4\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.18\"\ndependencies = [\n \"criterion\",\n]\n\n[[package]]\nname = \"itoa\"\nversion = \"1.0.19\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"criterion\"\nversion = \"0.8.0\"\n\n[metadata]\nname = \"not a package\"\n";
        assert_eq!(locked_names(lock), BTreeMap::from([("criterion", 1), ("itoa", 2)]));
        // Without a lock (or with one name once) a member goes by its name.
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        assert_eq!(ws.spec("foo"), "foo");
    }

    #[test]
    fn labels_are_unique_and_plain_when_they_can_be() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let labels: Vec<&str> = ws.targets.keys().map(String::as_str).collect();
        assert_eq!(labels, vec!["foo", "foo(bin)", "my_helper", "one(test)", "one(test)(my-helper)"]);
        assert_eq!(ws.targets["foo(bin)"].cargo_flags(), vec!["--bin", "foo"]);
        assert_eq!(ws.targets["one(test)"].src, "tests/one.rs");
        assert_eq!(ws.root_package.as_deref(), Some("foo"));
        assert!(ws.targets["foo"].doctest && !ws.targets["my_helper"].doctest);
    }

    #[test]
    fn headers_name_their_targets() {
        let ws = Workspace::from_metadata(META.as_bytes()).unwrap();
        let label = |h: &str| ws.for_running(h).map(|t| t.label.clone());
        assert_eq!(label("unittests src/lib.rs (target/debug/deps/foo-0123abcd)").as_deref(), Some("foo"));
        assert_eq!(label("unittests src/main.rs (/t/debug/deps/foo-99)").as_deref(), Some("foo(bin)"));
        assert_eq!(label("unittests src/lib.rs (/t/debug/deps/my_helper-1)").as_deref(), Some("my_helper"));
        assert_eq!(label("tests/one.rs (/t/debug/deps/one-5)").as_deref(), Some("one(test)"));
        assert_eq!(label("unittests src/lib.rs (/t/debug/deps/absent-5)"), None);
        assert_eq!(ws.for_doctests("my_helper").map(|t| t.package.as_str()), Some("my-helper"));
    }

    #[test]
    fn ids_split_into_target_and_name() {
        assert_eq!(split_id("foo::tests::adds"), ("foo", false, "tests::adds"));
        assert_eq!(split_id("foo::doctest::src/lib.rs - add (line 8)"), ("foo", true, "src/lib.rs - add (line 8)"));
        assert_eq!(split_id("one"), ("one", false, ""));
    }
}
