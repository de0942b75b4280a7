//! Init: detect the language and test command of a repository and write `carve.toml` into
//! the output folder (every later stage reads it; flags override it).

use crate::Result;
use crate::error::bail;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::workspace;

/// What `carve init` wrote.
pub struct Initialized {
    pub path: PathBuf,
    pub config: Config,
}

/// Detect the settings of `repo` (with `python` as its interpreter when given) and write
/// them to `<out>/carve.toml`; an existing one is kept unless `force`.
pub fn init(repo: &Path, out: Option<&Path>, python: Option<&Path>, force: bool) -> Result<Initialized> {
    let repo = workspace::repo_dir(repo)?;
    let out = workspace::out_dir(&repo, out)?;
    let path = out.join("carve.toml");
    if path.exists() && !force {
        bail!("{} already exists; pass --force to overwrite it", path.display());
    }
    let mut config = Config::detect(&repo)?;
    if let Some(p) = python {
        config.set_python(p)?;
        config.detected.push(format!("python = {}: from --python", p.display()));
    }
    carve_core::fs::write_atomic(&path, config.to_toml().as_bytes())?;
    Ok(Initialized { path, config })
}
