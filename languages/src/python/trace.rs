//! Python's tracing shim behind [`TraceShim`]: the shim package installed into a private
//! folder (see [`install`]; never the user's site-packages), the probe map of the repository's
//! non-test Python files beside it, and how to run pytest under it (`-p carve_shim.plugin`,
//! the install first on `PYTHONPATH`).

pub mod install;

use std::path::Path;

pub use install::{SHIM_FILES, ShimError, ShimInstall, find_native_extension, install_python_shim};

use crate::Language;
use crate::index::DefinitionIndex;
use crate::trace::probe_map::ProbeMap;
use crate::trace::{TraceRequest, TraceSetup, TraceShim, TraceShimError};

/// The Python shim.
pub struct PythonShim;

/// The probe map the Python shim reads: every non-test Python file is probed.
pub fn probe_map(index: &DefinitionIndex, tree: &Path) -> ProbeMap {
    ProbeMap::from_index(index, tree, |f| f.language == Language::Python && !f.is_test)
}

impl TraceShim for PythonShim {
    fn name(&self) -> &'static str {
        "Python"
    }

    /// Installs the shim under `shim_dir/shim/` and writes `shim_dir/probe-map.json` (kept
    /// there: users and the benchmark run the shim by hand with it).
    fn prepare(&self, req: &TraceRequest) -> Result<TraceSetup, TraceShimError> {
        let native = find_native_extension();
        let install = install_python_shim(&req.shim_dir.join("shim"), native.as_deref())
            .map_err(|e| TraceShimError::Setup { message: e.to_string() })?;
        let mut notes = Vec::new();
        if !install.native {
            notes.push(
                "warning: the native recorder is not built; tracing with the pure-Python fallback (slower). \
                 Build it with `maturin build --release -m shims/python/Cargo.toml -o target/shim`."
                    .to_string(),
            );
        }
        let probe_map_path = req.shim_dir.join("probe-map.json");
        probe_map(req.index, req.tree)
            .write(&probe_map_path)
            .map_err(|e| TraceShimError::Setup { message: format!("cannot write the probe map: {e}") })?;
        Ok(TraceSetup {
            env: install.env(&probe_map_path, req.trace_dir, req.mode),
            args: install.pytest_args(),
            path_entries: vec![install.pythonpath_entry().to_path_buf()],
            native: install.native,
            notes,
        })
    }

    fn native_available(&self) -> bool {
        find_native_extension().is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::SHIM_FILES;

    /// Every `.py` file of the directories the shim is embedded from, as it is laid out in an
    /// install (`carve_shim/…`, `sitecustomize.py`).
    fn shipped_files() -> BTreeSet<String> {
        let shims = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shims/python");
        let mut out = BTreeSet::new();
        for (dir, prefix) in [(shims.join("python/carve_shim"), "carve_shim/"), (shims.join("sitecustomize"), "")] {
            for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.ends_with(".py") && entry.path().is_file() {
                    out.insert(format!("{prefix}{name}"));
                }
            }
        }
        out
    }

    #[test]
    fn shim_files_list_every_file_of_the_shim_directories() {
        let listed: BTreeSet<String> = SHIM_FILES.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(listed, shipped_files(), "update SHIM_FILES in python/trace/install.rs");
    }
}
