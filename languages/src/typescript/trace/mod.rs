//! The TypeScript/JavaScript tracing shim: probes inserted into the shadow copy's own
//! source files ([`probe`]), a small recorder (`shims/node/carve_trace_runtime.cjs`) and a
//! runner set-up file that switches the current test (`shims/node/carve_trace_vitest.mjs`).
//!
//! [`TypeScriptShim::prepare`] numbers the index's definitions (sorted id order) and the
//! indexed script files (module frames come after the definitions), rewrites every indexed
//! `.ts/.tsx/.js/…` file of the tree (never `node_modules`, never `.d.ts`, never the user's
//! repository; replaced by rename, so a hard link into the user's tree is never written
//! through), writes the probe table (`carve-node-probes.json`: root, node ids, module paths)
//! and the runtime into the shim folder, and returns the run's environment:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `CARVE_NODE_PROBES` | the probe table (number → node id / module path) |
//! | `CARVE_NODE_RUNTIME` | the runtime's file, which the vitest set-up file loads |
//! | `CARVE_TRACE_DIR` | where every realm writes `<pid>-<thread>-<n>.jsonl` |
//! | `CARVE_TRACE_MODE` | `first-hits` (default) or `exact` |
//! | `CARVE_EXTRA_SETUP` | set-up files carve's vitest reporter puts first in `setupFiles` |
//! | `CARVE_EXTRA_SETUP_JEST` | carve's runner puts it first in jest's `setupFilesAfterEnv` |
//! | `CARVE_EXTRA_SETUP_NODE` | carve's runner preloads it (`--require`) under node:test |
//! | `CARVE_EXTRA_SETUP_MOCHA` | carve's runner loads it before the spec files (`--file`) under mocha |
//! | `NODE_OPTIONS` | the caller's, plus `--require carve_trace_child.cjs`: a Node child process a test starts records under that test (`CARVE_CURRENT_TEST`) |
//!
//! Per-test attribution goes through each runner's own hooks, `beforeEach`/`afterEach` in
//! a set-up file, with the id carve's reporter gives the test: vitest's task names
//! (`carve_trace_vitest.mjs`), jest-circus's running test and its describe blocks
//! (`carve_trace_jest.cjs`), node:test's global hooks and the context's `fullName`
//! (`carve_trace_node.cjs`; subtests record into their own bucket while they run), root-level
//! hooks of mocha's active interface and the test's parent suites (`carve_trace_mocha.cjs`).

pub mod probe;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::Language;
use crate::index::DefinitionIndex;
use crate::trace::{TraceRequest, TraceSetup, TraceShim, TraceShimError};
use crate::typescript::runner::setup;
use probe::{FileProbes, Numbered, Skip, probe_file};

/// The runtime's files, as laid out in the install directory.
pub const RUNTIME_FILES: &[(&str, &str)] = &[
    ("carve_trace_runtime.cjs", include_str!("../../../../shims/node/carve_trace_runtime.cjs")),
    ("carve_trace_vitest.mjs", include_str!("../../../../shims/node/carve_trace_vitest.mjs")),
    ("carve_trace_jest.cjs", include_str!("../../../../shims/node/carve_trace_jest.cjs")),
    ("carve_trace_node.cjs", include_str!("../../../../shims/node/carve_trace_node.cjs")),
    ("carve_trace_mocha.cjs", include_str!("../../../../shims/node/carve_trace_mocha.cjs")),
    ("carve_trace_child.cjs", include_str!("../../../../shims/node/carve_trace_child.cjs")),
];

/// Version of the probe table (moves with the trace format's).
pub const PROBE_TABLE_VERSION: u32 = 1;

/// The shim for TypeScript and JavaScript.
pub struct TypeScriptShim;

pub static SHIM: TypeScriptShim = TypeScriptShim;

/// What probing a tree did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Probed {
    /// Files rewritten, sorted.
    pub files: Vec<String>,
    /// Files left as they were, with the reason.
    pub skipped: Vec<(String, String)>,
}

/// The probe table the runtime reads (`CARVE_NODE_PROBES`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProbeTable {
    pub version: u32,
    pub root: String,
    /// `nodes[i]`: node id of probe number `i` (sorted ids).
    pub nodes: Vec<String>,
    /// `modules[k]`: the file of module frame `nodes.len() + k` (`<module>PATH`).
    pub modules: Vec<String>,
}

/// Script files of the index that get probes: indexed TypeScript/JavaScript files outside
/// `node_modules`, declaration files left out.
fn probed_paths(index: &DefinitionIndex) -> Vec<&str> {
    index
        .files
        .iter()
        .filter(|(path, f)| {
            matches!(f.language, Language::TypeScript | Language::JavaScript)
                && !path.split('/').any(|c| c == "node_modules")
                && !path.ends_with(".d.ts")
                && !path.ends_with(".d.mts")
                && !path.ends_with(".d.cts")
        })
        .map(|(p, _)| p.as_str())
        .collect()
}

/// The probe table of `index` for a run in `root`.
pub fn probe_table(index: &DefinitionIndex, root: &Path) -> ProbeTable {
    ProbeTable {
        version: PROBE_TABLE_VERSION,
        root: root.to_string_lossy().into_owned(),
        nodes: index.definitions.keys().cloned().collect(),
        modules: probed_paths(index).into_iter().map(str::to_owned).collect(),
    }
}

/// Rewrites the indexed script files of `tree` (a copy of the indexed repository) with
/// probes. Line numbers stay; files with syntax errors stay as they are.
pub fn probe_tree(index: &DefinitionIndex, tree: &Path) -> Result<Probed, TraceShimError> {
    let number: BTreeMap<&str, usize> = index.definitions.keys().enumerate().map(|(i, id)| (id.as_str(), i)).collect();
    let n = number.len();
    let mut probed = Probed::default();
    for (k, path) in probed_paths(index).into_iter().enumerate() {
        let file = &index.files[path];
        let defs = file
            .definitions
            .iter()
            .filter_map(|id| Some(Numbered { def: index.get(id)?, number: *number.get(id.as_str())? }))
            .collect();
        let spec = FileProbes { language: file.language, path, defs, module: n + k, is_test: file.is_test };
        let full = tree.join(path);
        let source = match std::fs::read_to_string(&full) {
            Ok(s) => s,
            Err(e) => {
                probed.skipped.push((path.to_owned(), format!("cannot read it: {e}")));
                continue;
            }
        };
        match probe_file(&source, &spec) {
            Ok(text) => {
                replace(&full, &text)?;
                probed.files.push(path.to_owned());
            }
            Err(Skip::SyntaxError) => probed.skipped.push((path.to_owned(), "syntax error".into())),
        }
    }
    Ok(probed)
}

/// Writes `text` to a new file renamed over `path` (never through a hard link).
fn replace(path: &Path, text: &str) -> Result<(), TraceShimError> {
    let tmp = path.with_file_name(format!(
        ".{}.carve-probe-{}",
        path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&tmp, text).map_err(io_err("write", &tmp))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(io_err("replace", path))
}

/// Writes the runtime into `dest/node-<hash>/` (idempotent); returns that directory.
pub fn install_runtime(dest: &Path) -> Result<PathBuf, TraceShimError> {
    let mut h = Sha256::new();
    for (name, text) in RUNTIME_FILES {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.update([0]);
    }
    let dir = dest.join(format!("node-{}", &hex::encode(h.finalize())[..16]));
    if RUNTIME_FILES.iter().all(|(name, _)| dir.join(name).is_file()) {
        return Ok(dir);
    }
    let tmp = dest.join(format!(".tmp-node-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io_err("create", &tmp))?;
    for (name, text) in RUNTIME_FILES {
        let p = tmp.join(name);
        std::fs::write(&p, text).map_err(io_err("write", &p))?;
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if !RUNTIME_FILES.iter().all(|(name, _)| dir.join(name).is_file()) {
            return Err(TraceShimError::Setup {
                message: format!("cannot install the Node tracing runtime into {}: rename failed", dir.display()),
            });
        }
    }
    Ok(dir)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

impl TraceShim for TypeScriptShim {
    fn name(&self) -> &'static str {
        "node"
    }

    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError> {
        if same_dir(req.repo, req.tree) {
            return Err(unsupported(format!(
                "the traced tree {} is the repository itself; probes go into a shadow copy only",
                req.tree.display()
            )));
        }
        let probed = probe_tree(req.index, req.tree)?;
        let runtime = install_runtime(req.shim_dir)?;
        let table = probe_table(req.index, req.tree);
        let text = serde_json::to_string(&table).map_err(|e| unsupported(e.to_string()))?;
        let table_path =
            req.shim_dir.join(format!("carve-node-probes-{}.json", &hex::encode(Sha256::digest(&text))[..16]));
        std::fs::write(&table_path, text).map_err(io_err("write", &table_path))?;
        std::fs::create_dir_all(req.trace_dir).map_err(io_err("create", req.trace_dir))?;
        let notes: Vec<String> = probed
            .skipped
            .iter()
            .map(|(path, why)| format!("warning: {path} is not probed ({why}); its code counts as <external>"))
            .collect();
        Ok(TraceSetup {
            env: vec![
                ("CARVE_NODE_PROBES".into(), table_path.display().to_string()),
                ("CARVE_NODE_RUNTIME".into(), runtime.join("carve_trace_runtime.cjs").display().to_string()),
                ("CARVE_TRACE_DIR".into(), req.trace_dir.display().to_string()),
                ("CARVE_TRACE_MODE".into(), req.mode.as_str().into()),
                ("CARVE_EXTRA_SETUP".into(), runtime.join("carve_trace_vitest.mjs").display().to_string()),
                (setup::JEST_ENV.into(), runtime.join("carve_trace_jest.cjs").display().to_string()),
                (setup::NODE_ENV.into(), runtime.join("carve_trace_node.cjs").display().to_string()),
                (setup::MOCHA_ENV.into(), runtime.join("carve_trace_mocha.cjs").display().to_string()),
                ("NODE_OPTIONS".into(), node_options(&runtime.join("carve_trace_child.cjs"))),
            ],
            args: Vec::new(),
            path_entries: Vec::new(),
            native: true,
            notes,
        })
    }
}

/// `$NODE_OPTIONS` with carve's child preload added (quoted: NODE_OPTIONS splits on spaces).
fn node_options(preload: &Path) -> String {
    let own = format!("--require \"{}\"", preload.display().to_string().replace('\\', "\\\\").replace('"', "\\\""));
    match std::env::var("NODE_OPTIONS") {
        Ok(v) if !v.trim().is_empty() => format!("{} {own}", v.trim()),
        _ => own,
    }
}

#[cfg(test)]
mod tests;

/// An I/O error naming what was done to which path.
fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> TraceShimError + 'a {
    move |source| TraceShimError::Setup { message: format!("cannot {action} {}: {source}", path.display()) }
}

/// A project the shim cannot trace, with the shim's reason.
fn unsupported(message: String) -> TraceShimError {
    TraceShimError::Setup { message: format!("cannot trace: {message}") }
}
