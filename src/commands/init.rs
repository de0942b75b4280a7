//! `carve init`: detect the settings and write carve.toml into the output folder.

use anyhow::Result;
use serde_json::json;

use crate::Status;
use crate::cli::Common;
use crate::output::emit;
use carve_pipeline::init::init;

pub fn run(common: &Common, force: bool) -> Result<Status> {
    let done = init(&common.repo, common.out.as_deref(), common.python.as_deref(), force)?;
    let (path, cfg) = (&done.path, &done.config);
    emit(common.format, &json!({"config": path, "settings": cfg}), || {
        let mut s = format!("wrote {}\n", path.display());
        for d in &cfg.detected {
            s.push_str(&format!("  {d}\n"));
        }
        s
    })?;
    Ok(Status::Success)
}
