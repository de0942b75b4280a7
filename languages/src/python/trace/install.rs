//! Installs carve's Python tracing shim (`shims/python/`) into a private directory that
//! carve puts first on `PYTHONPATH` for a traced pytest run — never into the user's
//! site-packages — and says how to run pytest with it.
//!
//! The shim's Python files are embedded in this crate ([`SHIM_FILES`]); the native recorder
//! (`carve_shim._native`, built by maturin) is copied in when one is found
//! ([`find_native_extension`]), otherwise the shim uses its pure-Python recorder. An install
//! is a directory `python-<hash>` under the destination, named by the hash of everything in
//! it, written to a temporary name and renamed when complete: installing twice is a no-op
//! and a killed install leaves nothing that could be picked up half-written.
//!
//! Using it (see `docs/trace-format.md` for the files exchanged):
//!
//! ```text
//! let shim = install_python_shim(&cache.join("shim"), find_native_extension().as_deref())?;
//! Command::new(python).args(["-m", "pytest"]).args(shim.pytest_args())
//!     .envs(shim.env(&probe_map, &trace_dir, TraceMode::FirstHits)) ...
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::trace::TraceMode;

/// The shim's files, as they are laid out in the install directory.
pub const SHIM_FILES: &[(&str, &str)] = &[
    ("sitecustomize.py", include_str!("../../../../shims/python/sitecustomize/sitecustomize.py")),
    ("carve_shim/__init__.py", include_str!("../../../../shims/python/python/carve_shim/__init__.py")),
    ("carve_shim/autostart.py", include_str!("../../../../shims/python/python/carve_shim/autostart.py")),
    ("carve_shim/fallback.py", include_str!("../../../../shims/python/python/carve_shim/fallback.py")),
    ("carve_shim/hook.py", include_str!("../../../../shims/python/python/carve_shim/hook.py")),
    ("carve_shim/plugin.py", include_str!("../../../../shims/python/python/carve_shim/plugin.py")),
    ("carve_shim/probemap.py", include_str!("../../../../shims/python/python/carve_shim/probemap.py")),
    ("carve_shim/recorder.py", include_str!("../../../../shims/python/python/carve_shim/recorder.py")),
    ("carve_shim/runtime.py", include_str!("../../../../shims/python/python/carve_shim/runtime.py")),
];

/// Where the native recorder goes inside an install.
pub const NATIVE_NAME: &str = "carve_shim/_native.abi3.so";

/// The pytest plugin carve loads with `-p`.
pub const PLUGIN: &str = "carve_shim.plugin";

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShimError {
    #[error("cannot install the Python shim into {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "cannot read the native shim extension {path}: {source}; rebuild it with `maturin build --release -m shims/python/Cargo.toml -o target/shim` or unset CARVE_SHIM_NATIVE"
    )]
    Native { path: PathBuf, source: std::io::Error },
    #[error("cannot unpack wheel {wheel} with `python3 -m zipfile`: {detail}")]
    Unzip { wheel: PathBuf, detail: String },
    #[error(
        "wheel {wheel} holds no carve_shim/_native extension; rebuild it with `maturin build --release -m shims/python/Cargo.toml`"
    )]
    NoExtensionInWheel { wheel: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ShimError + '_ {
    move |source| ShimError::Io { path: path.to_owned(), source }
}

/// An installed shim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShimInstall {
    /// The directory to put first on `PYTHONPATH` (holds `carve_shim/` and `sitecustomize.py`).
    pub dir: PathBuf,
    /// Whether the native recorder was installed (otherwise the pure-Python one is used).
    pub native: bool,
    /// Private cache for probed bytecode (`CARVE_SHIM_CACHE`), beside the install.
    pub cache_dir: PathBuf,
}

impl ShimInstall {
    /// The `PYTHONPATH` entry (put it first).
    pub fn pythonpath_entry(&self) -> &Path {
        &self.dir
    }

    /// Arguments for pytest: `-p carve_shim.plugin`.
    pub fn pytest_args(&self) -> Vec<String> {
        vec!["-p".to_owned(), PLUGIN.to_owned()]
    }

    pub fn uses_native(&self) -> bool {
        self.native
    }

    /// Environment for a traced run: `PYTHONPATH` (the install first, then the current
    /// process's `PYTHONPATH`), `CARVE_PROBE_MAP`, `CARVE_TRACE_DIR`, `CARVE_TRACE_MODE`,
    /// `CARVE_SHIM_CACHE`, and `CARVE_CURRENT_TEST` emptied (the run is a top-level one).
    pub fn env(&self, probe_map: &Path, trace_dir: &Path, mode: TraceMode) -> Vec<(String, String)> {
        let inherited = std::env::var_os("PYTHONPATH");
        self.env_with_pythonpath(probe_map, trace_dir, mode, inherited.as_deref().and_then(|p| p.to_str()))
    }

    /// [`ShimInstall::env`] with the inherited `PYTHONPATH` given explicitly.
    pub fn env_with_pythonpath(
        &self,
        probe_map: &Path,
        trace_dir: &Path,
        mode: TraceMode,
        inherited_pythonpath: Option<&str>,
    ) -> Vec<(String, String)> {
        let sep = if cfg!(windows) { ";" } else { ":" };
        let mut pythonpath = self.dir.display().to_string();
        if let Some(rest) = inherited_pythonpath.filter(|p| !p.is_empty()) {
            pythonpath.push_str(sep);
            pythonpath.push_str(rest);
        }
        vec![
            ("PYTHONPATH".to_owned(), pythonpath),
            ("CARVE_PROBE_MAP".to_owned(), probe_map.display().to_string()),
            ("CARVE_TRACE_DIR".to_owned(), trace_dir.display().to_string()),
            ("CARVE_TRACE_MODE".to_owned(), mode.as_str().to_owned()),
            ("CARVE_SHIM_CACHE".to_owned(), self.cache_dir.display().to_string()),
            ("CARVE_CURRENT_TEST".to_owned(), String::new()),
        ]
    }
}

/// Writes the shim into `dest/python-<hash>/` (creating `dest`), with the native recorder
/// from `native` (a built extension `.so`, or a maturin wheel) when given. Idempotent.
pub fn install_python_shim(dest: &Path, native: Option<&Path>) -> Result<ShimInstall, ShimError> {
    let native_bytes = match native {
        None => None,
        Some(path) if path.extension().is_some_and(|e| e == "whl") => Some(cached_extension_from_wheel(dest, path)?),
        Some(path) => Some(std::fs::read(path).map_err(|source| ShimError::Native { path: path.to_owned(), source })?),
    };
    let mut hasher = Sha256::new();
    for (name, text) in SHIM_FILES {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    if let Some(bytes) = &native_bytes {
        hasher.update(NATIVE_NAME.as_bytes());
        hasher.update(bytes);
    }
    let hash = hex::encode(hasher.finalize());
    let dir = dest.join(format!("python-{}", &hash[..16]));
    let install = ShimInstall { dir: dir.clone(), native: native_bytes.is_some(), cache_dir: dest.join("code-cache") };
    if dir.join("sitecustomize.py").is_file() {
        return Ok(install);
    }
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    let tmp = dest.join(format!(".tmp-python-{}-{}", &hash[..16], std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
    }
    let written = write_tree(&tmp, native_bytes.as_deref());
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if let Err(source) = std::fs::rename(&tmp, &dir) {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another carve finished the same install first: the content is identical.
        if !dir.join("sitecustomize.py").is_file() {
            return Err(ShimError::Io { path: dir, source });
        }
    }
    Ok(install)
}

fn write_tree(root: &Path, native: Option<&[u8]>) -> Result<(), ShimError> {
    let files = SHIM_FILES.iter().map(|(n, t)| (*n, t.as_bytes())).chain(native.map(|b| (NATIVE_NAME, b)));
    for (name, bytes) in files {
        let path = root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, bytes).map_err(io(&path))?;
    }
    Ok(())
}

/// The `carve_shim/_native*` extension inside a maturin wheel, unpacked with
/// `python3 -m zipfile -e` into a temporary directory.
/// The extension inside `wheel`, unpacked once per wheel content into `dest` (unpacking
/// starts a Python process, which a traced run should not pay for every time).
fn cached_extension_from_wheel(dest: &Path, wheel: &Path) -> Result<Vec<u8>, ShimError> {
    let bytes = std::fs::read(wheel).map_err(|source| ShimError::Native { path: wheel.to_owned(), source })?;
    let cached = dest.join(format!("native-{}.so", &hex::encode(Sha256::digest(&bytes))[..16]));
    if let Ok(so) = std::fs::read(&cached) {
        return Ok(so);
    }
    let so = extension_from_wheel(wheel)?;
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    let tmp = dest.join(format!(".native-{}.tmp", std::process::id()));
    std::fs::write(&tmp, &so).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &cached).map_err(io(&cached))?;
    Ok(so)
}

fn extension_from_wheel(wheel: &Path) -> Result<Vec<u8>, ShimError> {
    let tmp = std::env::temp_dir().join(format!("carve-wheel-{}-{}", std::process::id(), unique()));
    let result = (|| {
        let out = Command::new("python3")
            .args(["-m", "zipfile", "-e"])
            .arg(wheel)
            .arg(&tmp)
            .output()
            .map_err(|e| ShimError::Unzip { wheel: wheel.to_owned(), detail: e.to_string() })?;
        if !out.status.success() {
            let detail = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(ShimError::Unzip { wheel: wheel.to_owned(), detail });
        }
        let pkg = tmp.join("carve_shim");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&pkg)
            .map_err(|_| ShimError::NoExtensionInWheel { wheel: wheel.to_owned() })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with("_native") && (name.ends_with(".so") || name.ends_with(".pyd"))
            })
            .collect();
        found.sort();
        let path = found.into_iter().next().ok_or_else(|| ShimError::NoExtensionInWheel { wheel: wheel.to_owned() })?;
        std::fs::read(&path).map_err(|source| ShimError::Native { path, source })
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// A built native recorder: `$CARVE_SHIM_NATIVE` (a `.so` or a wheel), else the newest
/// `*.so` / `*.whl` in `<dir of the carve executable>/../shim/` or `…/../../shim/` (so
/// `target/shim/`, where `.ci/run` builds it, serves both `target/debug/carve` and the
/// test binaries in `target/debug/deps/`).
pub fn find_native_extension() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CARVE_SHIM_NATIVE").map(PathBuf::from) {
        return path.is_file().then_some(path);
    }
    let exe = std::env::current_exe().ok()?;
    let exe_dir = exe.parent()?;
    [exe_dir.join("../shim"), exe_dir.join("../../shim")].iter().find_map(|d| newest_extension_in(d))
}

/// The newest `*.so` / `*.whl` in `dir` (by modification time, then name).
pub fn newest_extension_in(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "so" | "whl") || !path.is_file() {
            continue;
        }
        let mtime = entry.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
        if best.as_ref().is_none_or(|(t, p)| (mtime, &path) > (*t, p)) {
            best = Some((mtime, path));
        }
    }
    best.map(|(_, p)| p)
}

/// A one-line description for progress output: `python shim at DIR (native recorder)`.
pub fn describe(install: &ShimInstall) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "python shim at {} ({})",
        install.dir.display(),
        if install.native {
            "native recorder"
        } else {
            "pure-Python recorder: slower; build the native one with maturin"
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs_in(dest: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dest).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn install_writes_every_file_and_is_idempotent() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("shim");
        let a = install_python_shim(&dest, None).unwrap();
        assert!(!a.native);
        for (name, text) in SHIM_FILES {
            assert_eq!(std::fs::read_to_string(a.dir.join(name)).unwrap(), *text, "{name}");
        }
        assert!(!a.dir.join(NATIVE_NAME).exists());
        let before = std::fs::metadata(a.dir.join("carve_shim/hook.py")).unwrap().modified().unwrap();
        let b = install_python_shim(&dest, None).unwrap();
        assert_eq!(a, b);
        assert_eq!(std::fs::metadata(b.dir.join("carve_shim/hook.py")).unwrap().modified().unwrap(), before);
        assert_eq!(dirs_in(&dest), vec![a.dir.file_name().unwrap().to_string_lossy().into_owned()]);
    }

    #[test]
    fn native_extension_is_copied_and_changes_the_install() {
        let tmp = tempfile::tempdir().unwrap();
        let so = tmp.path().join("lib_native.so");
        std::fs::write(&so, b"not really an ELF").unwrap();
        let dest = tmp.path().join("shim");
        let plain = install_python_shim(&dest, None).unwrap();
        let native = install_python_shim(&dest, Some(&so)).unwrap();
        assert!(native.native && native.uses_native());
        assert_ne!(plain.dir, native.dir);
        assert_eq!(std::fs::read(native.dir.join(NATIVE_NAME)).unwrap(), b"not really an ELF");
        let missing = install_python_shim(&dest, Some(&tmp.path().join("nope.so")));
        assert!(matches!(missing, Err(ShimError::Native { .. })), "{missing:?}");
    }

    #[test]
    fn env_and_args_name_the_install() {
        let install = ShimInstall { dir: "/s/python-x".into(), native: true, cache_dir: "/s/code-cache".into() };
        assert_eq!(install.pytest_args(), ["-p", "carve_shim.plugin"]);
        let env =
            install.env_with_pythonpath(Path::new("/t/pm.json"), Path::new("/t/trace"), TraceMode::Exact, Some("/u"));
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PYTHONPATH"), Some(if cfg!(windows) { "/s/python-x;/u" } else { "/s/python-x:/u" }));
        assert_eq!(get("CARVE_PROBE_MAP"), Some("/t/pm.json"));
        assert_eq!(get("CARVE_TRACE_DIR"), Some("/t/trace"));
        assert_eq!(get("CARVE_TRACE_MODE"), Some("exact"));
        assert_eq!(get("CARVE_SHIM_CACHE"), Some("/s/code-cache"));
        assert_eq!(get("CARVE_CURRENT_TEST"), Some(""));
        let bare = install.env_with_pythonpath(Path::new("p"), Path::new("t"), TraceMode::FirstHits, None);
        assert_eq!(bare[0].1, "/s/python-x");
        assert_eq!("first-hits".parse::<TraceMode>(), Ok(TraceMode::FirstHits));
        assert!("fast".parse::<TraceMode>().is_err());
    }

    #[test]
    fn newest_extension_prefers_latest() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(newest_extension_in(tmp.path()), None);
        std::fs::write(tmp.path().join("readme.txt"), "x").unwrap();
        std::fs::write(tmp.path().join("a.whl"), "x").unwrap();
        assert_eq!(newest_extension_in(tmp.path()), Some(tmp.path().join("a.whl")));
    }

    #[carve_testutil::needs("python3")]
    fn extension_is_taken_from_a_wheel() {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = tmp.path().join("carve_shim-0.1.0-cp39-abi3-linux_x86_64.whl");
        let script = "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    z.writestr('carve_shim/__init__.py', '')\n    z.writestr('carve_shim/_native.abi3.so', 'ELF!')\n";
        assert!(Command::new("python3").args(["-c", script]).arg(&wheel).status().unwrap().success());
        let install = install_python_shim(&tmp.path().join("shim"), Some(&wheel)).unwrap();
        assert!(install.native);
        assert_eq!(std::fs::read(install.dir.join(NATIVE_NAME)).unwrap(), b"ELF!");
        let empty = tmp.path().join("empty.whl");
        let script = "import sys, zipfile\nzipfile.ZipFile(sys.argv[1], 'w').writestr('carve_shim/__init__.py', '')\n";
        assert!(Command::new("python3").args(["-c", script]).arg(&empty).status().unwrap().success());
        let err = install_python_shim(&tmp.path().join("shim"), Some(&empty)).unwrap_err();
        assert!(matches!(err, ShimError::NoExtensionInWheel { .. }), "{err}");
    }

    /// The shim's own pytest suite (`shims/python/tests`: tracing end to end with the native
    /// and the pure-Python recorder), so `cargo test` covers it.
    #[carve_testutil::needs("pytest")]
    fn shim_pytest_suite() {
        let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shims/python/tests");
        let out = Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(&tests)
            .env_remove("CARVE_PROBE_MAP")
            .env_remove("CARVE_TRACE_DIR")
            .env_remove("PYTEST_ADDOPTS")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "shim tests failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The embedded files form an importable package.
    #[carve_testutil::needs("python3")]
    fn installed_package_imports() {
        let tmp = tempfile::tempdir().unwrap();
        let install = install_python_shim(tmp.path(), None).unwrap();
        let out = Command::new("python3")
            .args([
                "-c",
                "import carve_shim.hook, carve_shim.runtime, carve_shim.autostart, carve_shim.fallback; print('ok')",
            ])
            .env("PYTHONPATH", &install.dir)
            .env_remove("CARVE_PROBE_MAP")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
    }
}
