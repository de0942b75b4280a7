//! The Rust tracing shim: probes inserted with tree-sitter into the shadow copy's own `.rs`
//! files (see [`probes`]; never `target/`, build scripts, the registry or the user's tree),
//! line numbers unchanged, and the runtime crate of `shims/rust/carve_probe/` written into
//! the shim folder with a generated `src/table.rs` and added to every probed package's
//! `Cargo.toml` as a path dependency (`Cargo.lock` gains its entry through `cargo metadata
//! --offline`, so the runner's `--locked` holds). Each probed file must still parse with
//! `syn` (rustc's grammar, as proc macros see it) when the original does; a file that would
//! not is left unprobed with a note.
//!
//! Skipped packages, with a note: proc-macro crates (their code runs inside rustc).
//! `#![no_std]` crates are probed: their test binaries link std, and the runtime is a
//! dependency, not their code. The probes name the runtime `carve_probe::…` (the extern
//! prelude), which edition 2015 resolves too, where `::carve_probe` would not.
//!
//! The traced run is the project's usual one (`cargo test --test-threads=1` or nextest,
//! one process per test) with `CARVE_TRACE_DIR` and `CARVE_TRACE_MODE`; the runtime takes
//! the test id from libtest's thread name and the test binary's name (see the runtime's
//! doc). Node numbers are the positions of the index's Rust functions and methods with a
//! body in sorted id order.

pub mod constfns;
pub mod probes;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::runner::targets::{Kind, Workspace};
use crate::Language;
use crate::index::{DefinitionIndex, DefinitionKind, FileIndex};
use crate::trace::{TraceRequest, TraceSetup, TraceShim, TraceShimError};
use probes::FilePlan;

/// The runtime's fixed part.
pub const RUNTIME_LIB: &str = include_str!("../../../../shims/rust/carve_probe/src/lib.rs");
pub const RUNTIME_MANIFEST: &str = include_str!("../../../../shims/rust/carve_probe/Cargo.toml");

/// Where the runtime crate goes under the shim folder.
pub const RUNTIME_DIR: &str = "rust-probe";

/// The Rust shim.
pub struct RustTraceShim;

pub static SHIM: RustTraceShim = RustTraceShim;

impl TraceShim for RustTraceShim {
    fn name(&self) -> &'static str {
        "Rust"
    }

    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError> {
        let runtime = req.shim_dir.join(RUNTIME_DIR);
        let report = instrument(req.index, req.tree, &runtime, req.env)?;
        let mut notes = report.notes;
        if report.probes == 0 {
            notes.push(format!(
                "warning: no Rust function of {} was probed (no indexed Rust sources outside target/?)",
                req.repo.display()
            ));
        }
        std::fs::create_dir_all(req.trace_dir).map_err(io(req.trace_dir))?;
        let mut env = vec![
            ("CARVE_TRACE_DIR".into(), req.trace_dir.display().to_string()),
            ("CARVE_TRACE_MODE".into(), req.mode.as_str().into()),
        ];
        match doctest_linker(req.repo, &runtime)? {
            Ok(flags) => env.push((ENCODED_RUSTDOCFLAGS.into(), flags)),
            Err(why) => notes.push(why),
        }
        Ok(TraceSetup { env, args: Vec::new(), path_entries: Vec::new(), native: true, notes })
    }

    fn native_available(&self) -> bool {
        true
    }
}

/// cargo's variable for rustdoc's flags (`\x1f`-separated; it outranks `RUSTDOCFLAGS`).
const ENCODED_RUSTDOCFLAGS: &str = "CARGO_ENCODED_RUSTDOCFLAGS";

/// The linker wrapper of doctests, in the runtime's folder.
pub const DOCTEST_LINKER: &str = "carve-doctest-link";

/// The wrapper: rustdoc compiles each doctest with `UNSTABLE_RUSTDOC_TEST_PATH` and
/// `UNSTABLE_RUSTDOC_TEST_LINE` set (they name the example) and rustc runs the linker with
/// that environment; the wrapper notes them beside the binary (`<binary>.carve-doctest`),
/// where the runtime looks when the example writes its own `fn main` (rustdoc's
/// `_doctest_main_…` frame, which names the others, is missing then), and runs the real
/// linker (`CARVE_DOCTEST_LINKER`, default `cc`, rustc's default on Unix).
const DOCTEST_LINKER_SCRIPT: &str = r#"#!/bin/sh
# Written by carve for one traced run: notes which doctest rustdoc is linking, then links.
if [ -n "$UNSTABLE_RUSTDOC_TEST_PATH" ]; then
    out=
    prev=
    for a in "$@"; do
        if [ "$prev" = "-o" ]; then out=$a; fi
        prev=$a
    done
    if [ -n "$out" ]; then
        printf '%s\t%s\n' "$UNSTABLE_RUSTDOC_TEST_PATH" "$UNSTABLE_RUSTDOC_TEST_LINE" >"$out.carve-doctest" 2>/dev/null
    fi
fi
exec "${CARVE_DOCTEST_LINKER:-cc}" "$@"
"#;

/// rustdoc's flags for the traced run, `CARGO_ENCODED_RUSTDOCFLAGS`: the user's
/// (`CARGO_ENCODED_RUSTDOCFLAGS`, else `RUSTDOCFLAGS`) and `-C linker=<the wrapper>`, which
/// rustdoc passes on to every doctest's compilation. `Err(note)` when carve leaves the
/// doctests' linking alone: not on Unix, or the project sets `rustdocflags` in a cargo
/// config file, which any flags from the environment would replace; doctests with their
/// own `fn main` are then not attributed.
fn doctest_linker(repo: &Path, runtime: &Path) -> Result<Result<String, String>, TraceShimError> {
    let skipped = |why: &str| Ok(Err(format!("note: doctests that write their own `fn main` are not traced: {why}")));
    if !cfg!(unix) {
        return skipped("their linker wrapper is a shell script");
    }
    for config in [".cargo/config.toml", ".cargo/config"] {
        if std::fs::read_to_string(repo.join(config)).is_ok_and(|t| t.contains("rustdocflags")) {
            return skipped(&format!("{config} sets rustdocflags, which carve's would replace"));
        }
    }
    let script = runtime.join(DOCTEST_LINKER);
    std::fs::create_dir_all(runtime).map_err(io(runtime))?;
    if std::fs::read_to_string(&script).ok().as_deref() != Some(DOCTEST_LINKER_SCRIPT) {
        std::fs::write(&script, DOCTEST_LINKER_SCRIPT).map_err(io(&script))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).map_err(io(&script))?;
    }
    let script = std::path::absolute(&script).unwrap_or(script);
    let mut flags: Vec<String> = match std::env::var(ENCODED_RUSTDOCFLAGS) {
        Ok(v) if !v.is_empty() => v.split('\x1f').map(str::to_string).collect(),
        _ => std::env::var("RUSTDOCFLAGS").unwrap_or_default().split_whitespace().map(str::to_string).collect(),
    };
    flags.extend(["-C".to_string(), format!("linker={}", script.display())]);
    Ok(Ok(flags.join("\x1f")))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TraceShimError + '_ {
    move |source| TraceShimError::Io { path: path.to_path_buf(), source }
}

/// What [`instrument`] did.
#[derive(Debug, Default)]
pub struct Instrumented {
    /// Files rewritten (repository-relative).
    pub files: Vec<String>,
    /// Manifests that gained the runtime dependency (repository-relative).
    pub manifests: Vec<String>,
    pub probes: usize,
    pub notes: Vec<String>,
}

/// A package of the copy: its directory (repository-relative, `""` at the root) and why it
/// is not probed, if it is not.
#[derive(Debug, Clone)]
struct Package {
    dir: String,
    skip: Option<String>,
}

/// Whether a repository-relative `.rs` file is one of the project's own crate sources that
/// can carry probes: not under `target/` or a hidden directory, not a package's build script.
pub fn is_probed_path(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let dirs = &parts[..parts.len() - 1];
    !dirs.iter().any(|p| *p == "target" || p.starts_with('.')) && parts.last() != Some(&"build.rs")
}

/// The `[package]` manifest nearest above `path` (a directory relative to `tree`).
fn package_of(tree: &Path, path: &str, cache: &mut BTreeMap<String, Option<Package>>) -> Option<Package> {
    let mut dir = path.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
    loop {
        if let Some(p) = cache.get(&dir) {
            if p.is_some() {
                return p.clone();
            }
        } else {
            let manifest = tree.join(&dir).join("Cargo.toml");
            let found = std::fs::read_to_string(&manifest).ok().filter(|t| has_table(t, "package")).map(|text| {
                let skip = if text.lines().any(|l| {
                    let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
                    l == "proc-macro=true" || l == "proc_macro=true"
                }) {
                    Some("a proc-macro crate (its code runs inside rustc)".to_string())
                } else {
                    None
                };
                Package { dir: dir.clone(), skip }
            });
            cache.insert(dir.clone(), found.clone());
            if found.is_some() {
                return found;
            }
        }
        if dir.is_empty() {
            return None;
        }
        dir = dir.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
    }
}

fn has_table(manifest: &str, name: &str) -> bool {
    manifest.lines().any(|l| l.trim() == format!("[{name}]"))
}

/// `manifest` with `carve_probe = { path = … }` in its `[dependencies]` (a new table at the
/// end when it has none), every line of the original kept.
pub fn add_dependency(manifest: &str, runtime: &Path) -> String {
    let dep = format!("carve_probe = {{ path = {:?} }}", runtime.display().to_string());
    let mut out = String::with_capacity(manifest.len() + dep.len() + 20);
    let mut added = false;
    for line in manifest.split_inclusive('\n') {
        out.push_str(line);
        if !added && line.trim() == "[dependencies]" {
            if !line.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&dep);
            out.push('\n');
            added = true;
        }
    }
    if !added {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        let _ = write!(out, "\n[dependencies]\n{dep}\n");
    }
    out
}

/// Inserts the probes into the Rust files of `tree` (a copy of the indexed repository),
/// writes the runtime crate into `runtime` and makes the probed packages depend on it.
pub fn instrument(
    index: &DefinitionIndex,
    tree: &Path,
    runtime: &Path,
    env: &[(String, String)],
) -> Result<Instrumented, TraceShimError> {
    let mut report = Instrumented::default();
    let mut packages = BTreeMap::new();
    let mut files: Vec<(&FileIndex, Package)> = Vec::new();
    let mut skipped: BTreeMap<String, String> = BTreeMap::new();
    for f in index.files.values() {
        if f.language != Language::Rust || !f.path.ends_with(".rs") || !is_probed_path(&f.path) {
            continue;
        }
        let Some(package) = package_of(tree, &f.path, &mut packages) else { continue };
        if let Some(why) = &package.skip {
            skipped.insert(package.dir.clone(), why.clone());
            continue;
        }
        files.push((f, package));
    }
    for (dir, why) in skipped {
        let name = if dir.is_empty() { "the root package".to_string() } else { format!("the package in {dir}/") };
        report.notes.push(format!("note: {name} is not traced: {why}"));
    }
    let file_numbers: HashMap<&str, u32> =
        files.iter().enumerate().map(|(i, (f, _))| (f.path.as_str(), i as u32)).collect();
    let numbered: Vec<&crate::index::Definition> = index
        .definitions
        .values()
        .filter(|d| d.language == Language::Rust && matches!(d.kind, DefinitionKind::Function | DefinitionKind::Method))
        .filter(|d| d.body.is_some() && file_numbers.contains_key(d.path.as_str()))
        .collect();
    let nodes: Vec<String> = numbered.iter().map(|d| d.id.clone()).collect();
    let mut bodies: HashMap<&str, HashMap<usize, (u32, bool)>> = HashMap::new();
    for (n, d) in numbered.iter().enumerate() {
        let file_test = index.files.get(&d.path).is_some_and(|f| f.is_test);
        if let Some(body) = d.body {
            bodies.entry(d.path.as_str()).or_default().insert(body.start_byte, (n as u32, d.is_test || file_test));
        }
    }
    let keep_const = kept_const_fns(index, tree);
    let empty = HashMap::new();
    let results: Vec<(&str, &Package, Result<probes::Probed, String>)> = files
        .par_iter()
        .map_init(probes::new_parser, |parser, (f, package)| {
            let abs = tree.join(&f.path);
            let result = (|| {
                let bytes = std::fs::read(&abs).map_err(|e| format!("cannot read {}: {e}", abs.display()))?;
                if hex::encode(Sha256::digest(&bytes)) != f.sha256 {
                    return Err("it changed since it was indexed".to_string());
                }
                let src = String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
                let plan = FilePlan {
                    bodies: bodies.get(f.path.as_str()).unwrap_or(&empty),
                    file: file_numbers[f.path.as_str()],
                    keep_const: &keep_const,
                };
                let probed =
                    probes::probe_file(parser, &src, &plan).map_err(|line| format!("syntax error at line {line}"))?;
                if let Some(text) = &probed.text {
                    check_parses(&src, text)?;
                }
                Ok(probed)
            })();
            (f.path.as_str(), package, result)
        })
        .collect();
    let mut probed_packages: BTreeMap<String, ()> = BTreeMap::new();
    for (path, package, result) in results {
        let probed = match result {
            Ok(p) => p,
            Err(why) => {
                report.notes.push(format!("warning: {path} is not traced: {why}"));
                continue;
            }
        };
        if let Some(text) = &probed.text {
            let abs = tree.join(path);
            std::fs::write(&abs, text).map_err(io(&abs))?;
            report.files.push(path.to_string());
            probed_packages.insert(package.dir.clone(), ());
        }
        report.probes += probed.probes;
    }
    let runtime = std::path::absolute(runtime).unwrap_or_else(|_| runtime.to_path_buf());
    report.manifests = depend_on_runtime(tree, probed_packages.keys(), &runtime)?;
    let file_list: Vec<&str> = files.iter().map(|(f, _)| f.path.as_str()).collect();
    write_runtime(&runtime, &nodes, &file_list, &[], tree)?;
    if !report.manifests.is_empty() {
        // The lock file gains carve_probe; the workspace's targets give the labels.
        let ws = metadata(tree, env)?;
        write_runtime(&runtime, &nodes, &file_list, &labels(&ws), tree)?;
    }
    report.notes.sort();
    Ok(report)
}

/// The `const fn`s of the tree that stay `const` when probed ([`constfns`]): read from every
/// indexed Rust file of the copy (tests and examples too: they compile against it).
fn kept_const_fns(index: &DefinitionIndex, tree: &Path) -> HashSet<String> {
    let rust: Vec<&FileIndex> = index.files.values().filter(|f| f.language == Language::Rust).collect();
    let uses: Vec<constfns::ConstUses> = rust
        .par_iter()
        .map_init(probes::new_parser, |parser, f| {
            let bytes = std::fs::read(tree.join(&f.path)).ok()?;
            constfns::const_uses(parser, &String::from_utf8_lossy(&bytes))
        })
        .flatten()
        .collect();
    constfns::kept_const(&uses)
}

/// Make the manifests of the packages in `dirs` depend on the runtime crate; their paths.
fn depend_on_runtime<'a>(
    tree: &Path,
    dirs: impl Iterator<Item = &'a String>,
    runtime: &Path,
) -> Result<Vec<String>, TraceShimError> {
    let mut manifests = Vec::new();
    for dir in dirs {
        let rel = if dir.is_empty() { "Cargo.toml".to_string() } else { format!("{dir}/Cargo.toml") };
        let abs = tree.join(&rel);
        let text = std::fs::read_to_string(&abs).map_err(io(&abs))?;
        std::fs::write(&abs, add_dependency(&text, runtime)).map_err(io(&abs))?;
        manifests.push(rel);
    }
    Ok(manifests)
}

/// `probed` parses as a Rust file (syn: rustc's grammar) whenever `original` does.
fn check_parses(original: &str, probed: &str) -> Result<(), String> {
    if let Err(e) = syn::parse_file(probed) {
        if syn::parse_file(original).is_ok() {
            return Err(format!("the probed file would not parse as Rust (syn: {e}); please report this file"));
        }
    }
    Ok(())
}

/// `(crate name of the test binary, label)` of every target, libraries first.
fn labels(ws: &Workspace) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> =
        ws.targets.values().map(|t| (t.crate_name(), t.label.clone(), t.kind == Kind::Lib)).collect();
    out.sort_by(|a, b| (!a.2, &a.0, &a.1).cmp(&(!b.2, &b.0, &b.1)));
    out
}

/// `cargo metadata` in the copy (resolving offline first) with the environment's variables
/// `env`: writes the runtime's entry into `Cargo.lock` and returns the workspace's targets.
fn metadata(tree: &Path, env: &[(String, String)]) -> Result<Workspace, TraceShimError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    unshare_lock(tree)?;
    let mut last = String::new();
    for offline in [true, false] {
        let mut cmd = Command::new(&cargo);
        cmd.args(["metadata", "--format-version", "1"]).current_dir(tree);
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        if offline {
            cmd.arg("--offline");
        }
        let out = cmd.output().map_err(|e| TraceShimError::Setup {
            message: format!("cannot run cargo metadata in {}: {e}; put cargo on PATH", tree.display()),
        })?;
        if out.status.success() {
            return Workspace::from_metadata(&out.stdout).map_err(|e| TraceShimError::Setup {
                message: format!("cannot read the output of cargo metadata in {}: {e}", tree.display()),
            });
        }
        last = String::from_utf8_lossy(&out.stderr).into_owned();
    }
    Err(TraceShimError::Setup {
        message: format!(
            "cargo metadata failed in the probed copy {} after adding carve's runtime crate: {}",
            tree.display(),
            last.trim()
        ),
    })
}

/// Make the copy's `Cargo.lock` a file of its own: an environment's lock file is linked into
/// the copy (a hard link), and cargo rewrites the lock in place when it adds the runtime.
fn unshare_lock(tree: &Path) -> Result<(), TraceShimError> {
    let lock = tree.join("Cargo.lock");
    let Ok(meta) = std::fs::symlink_metadata(&lock) else { return Ok(()) };
    if meta.file_type().is_symlink() || std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        let text = std::fs::read(&lock).map_err(io(&lock))?;
        std::fs::remove_file(&lock).map_err(io(&lock))?;
        std::fs::write(&lock, text).map_err(io(&lock))?;
    }
    Ok(())
}

/// The runtime crate with its table.
fn write_runtime(
    dir: &Path,
    nodes: &[String],
    files: &[&str],
    labels: &[(String, String, bool)],
    tree: &Path,
) -> Result<(), TraceShimError> {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).map_err(io(&src))?;
    let root = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
    let table = render_table(nodes, files, labels, &root);
    for (path, text) in [
        (dir.join("Cargo.toml"), RUNTIME_MANIFEST.to_string()),
        (src.join("lib.rs"), RUNTIME_LIB.to_string()),
        (src.join("table.rs"), table),
    ] {
        // Unchanged files keep their mtime, so cargo does not rebuild the runtime.
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(&path, text).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// The generated `table.rs`.
pub fn render_table(nodes: &[String], files: &[&str], labels: &[(String, String, bool)], root: &PathBuf) -> String {
    let mut out = String::from("// Generated by carve for one traced run. Do not edit.\n\n");
    out.push_str("pub static NODES: &[&str] = &[\n");
    for n in nodes {
        let _ = writeln!(out, "    {n:?},");
    }
    out.push_str("];\n\npub static FILES: &[&str] = &[\n");
    for f in files {
        let _ = writeln!(out, "    {f:?},");
    }
    out.push_str("];\n\npub static LABELS: &[(&str, &str)] = &[\n");
    for (c, l, _) in labels {
        let _ = writeln!(out, "    ({c:?}, {l:?}),");
    }
    out.push_str("];\n\npub static LIBS: &[&str] = &[\n");
    for (_, l, lib) in labels {
        if *lib {
            let _ = writeln!(out, "    {l:?},");
        }
    }
    let _ = writeln!(out, "];\n\npub static ROOT: &str = {:?};", root.display().to_string());
    out
}
