//! Building the environment's image (`carve env --build-image`): the build context is a
//! shadow copy of the repository (no `.git`, no virtualenv or `node_modules` of its own) with
//! the Dockerfile and carve's `.carve-env/` files added, built with whichever OCI engine is
//! present (`carve_core::oci::Engine::detect`: docker, podman or buildah; `CARVE_OCI_ENGINE`
//! chooses). The repository itself is only read.

use std::path::Path;
use std::time::Duration;

pub use carve_core::oci::ImageInfo;
use carve_core::oci::{BuildSpec, Engine};

use super::record::{EnvStatus, Environment};
use crate::error::bail;
use crate::{Context, Error, Result};

/// How long one image build may take (`CARVE_ENV_BUILD_TIMEOUT` seconds, default one hour).
fn build_timeout() -> Duration {
    let secs = std::env::var("CARVE_ENV_BUILD_TIMEOUT").ok().and_then(|v| v.trim().parse::<u64>().ok());
    Duration::from_secs(secs.unwrap_or(3600))
}

/// Build the image of `record` (made in `env_dir`) from `repo`; its tag is the record's image
/// name. An environment in which no test passes is refused: its image would run nothing.
pub fn build_image(repo: &Path, env_dir: &Path, record: &Environment) -> Result<ImageInfo> {
    if record.status == EnvStatus::Failed {
        bail!(
            "the environment of {} did not verify (no test passes), so no image is built from it; \
             fix the set-up first (carve env --fresh)",
            record.repo
        );
    }
    let engine = Engine::detect()
        .map_err(|e| Error::msg(format!("no OCI engine to build the environment's image with: {e}")))?;
    let ctx =
        tempfile::Builder::new().prefix("carve-image-context-").tempdir().context("failed to make a build context")?;
    let root = ctx.path().join("context");
    carve_core::tree::shadow_copy(repo, &root, carve_languages::skip_policy())
        .with_context(|| format!("failed to copy {} into the build context", repo.display()))?;
    for (rel, bytes) in super::image_files(env_dir)? {
        let to = root.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&to, bytes).with_context(|| format!("failed to write {}", to.display()))?;
    }
    let mut spec = BuildSpec::new(&root, root.join(super::DOCKERFILE), record.image.name.clone());
    spec.timeout = build_timeout();
    engine.build(&spec).map_err(|e| {
        Error::msg(format!("building the image {} with {} failed: {e}", record.image.name, engine.kind().name()))
    })
}
