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
use crate::image_runs::ImageRuntime;
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
    build_from(&engine, repo, super::image_files(env_dir)?, &record.image.name)
}

/// Build `tag` from the Dockerfile among `files` (carve's files of the build context,
/// repository-relative: `Dockerfile`, `.carve-env/…`) over a shadow copy of `repo`.
fn build_from(engine: &Engine, repo: &Path, files: Vec<(String, Vec<u8>)>, tag: &str) -> Result<ImageInfo> {
    let ctx =
        tempfile::Builder::new().prefix("carve-image-context-").tempdir().context("failed to make a build context")?;
    let root = ctx.path().join("context");
    carve_core::tree::shadow_copy(repo, &root, carve_languages::skip_policy())
        .with_context(|| format!("failed to copy {} into the build context", repo.display()))?;
    for (rel, bytes) in files {
        let to = root.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&to, bytes).with_context(|| format!("failed to write {}", to.display()))?;
    }
    let mut spec = BuildSpec::new(&root, root.join(super::DOCKERFILE), tag.to_string());
    spec.timeout = build_timeout();
    engine
        .build(&spec)
        .map_err(|e| Error::msg(format!("building the image {tag} with {} failed: {e}", engine.kind().name())))
}

/// `--runtime oci` for the task bundle in `bundle_dir`: the image it names (`image_name`),
/// built from the bundle's Dockerfile and `.carve-env/` files over `repo` (the repository
/// at the bundle's commit) when this machine does not have it yet, with the engine found
/// here and this carve to run inside it.
pub fn bundle_runtime(bundle_dir: &Path, repo: &Path, progress: &crate::progress::Progress) -> Result<ImageRuntime> {
    let inst_path = bundle_dir.join("instance.json");
    let text = std::fs::read_to_string(&inst_path)
        .with_context(|| format!("{} is not a task bundle (no instance.json)", bundle_dir.display()))?;
    let inst: carve_formats::instance::Instance = carve_formats::from_str(&text, &inst_path)?;
    let Some(image) = inst.image_name.clone().filter(|n| !n.is_empty()) else {
        bail!(
            "the bundle {} names no environment image (it was made without an environment of `carve env`), \
             so it cannot run in one: make it again after `carve env`, or use --runtime local",
            bundle_dir.display()
        );
    };
    let engine = Engine::detect().map_err(|e| Error::msg(format!("--runtime oci needs an OCI engine: {e}")))?;
    let exists = engine
        .image_exists(&image)
        .map_err(|e| Error::msg(format!("could not ask {} about the image {image}: {e}", engine.kind().name())))?;
    if !exists {
        progress.note(format!("building the image {image} from the Dockerfile of {}", bundle_dir.display()));
        let mut files = Vec::new();
        let dockerfile = bundle_dir.join(super::DOCKERFILE);
        let bytes = std::fs::read(&dockerfile).with_context(|| {
            format!("the bundle {} names the image {image} but has no Dockerfile to build it", bundle_dir.display())
        })?;
        files.push((super::DOCKERFILE.to_string(), bytes));
        let ctx = bundle_dir.join(super::CONTEXT_DIR);
        let mut names: Vec<_> =
            std::fs::read_dir(&ctx).into_iter().flatten().flatten().map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            let bytes = std::fs::read(ctx.join(&name)).with_context(|| format!("failed to read {}", ctx.display()))?;
            files.push((format!("{}/{}", super::CONTEXT_DIR, name.to_string_lossy()), bytes));
        }
        build_from(&engine, repo, files, &image)?;
    }
    Ok(ImageRuntime { engine, image, carve: own_binary()? })
}

/// `carve tasks --runtime oci`: the image of the session's environment, built when this
/// machine does not have it yet, with the engine found here and this carve to run in it.
pub fn session_runtime(session: &crate::Session) -> Result<ImageRuntime> {
    let Some(env) = &session.environment else {
        bail!(
            "--runtime oci runs the tests in the image of the environment `carve env` makes, and {} has none \
             (--no-env, CARVE_ENV=off or an interpreter given by path): drop those, or use --runtime local",
            session.repo.display()
        );
    };
    let engine = Engine::detect().map_err(|e| Error::msg(format!("--runtime oci needs an OCI engine: {e}")))?;
    let image = env.record.image.name.clone();
    let exists = engine
        .image_exists(&image)
        .map_err(|e| Error::msg(format!("could not ask {} about the image {image}: {e}", engine.kind().name())))?;
    if !exists {
        session.progress.note(format!("building the image {image} of the environment {}", env.dir.display()));
        build_from(&engine, &session.repo, super::image_files(&env.dir)?, &image)?;
    }
    Ok(ImageRuntime { engine, image, carve: own_binary()? })
}

/// This carve's binary, to copy into containers. When its file was replaced while this
/// process runs (carve rebuilt during a long dataset run: `current_exe` then names a path
/// that is gone, `… (deleted)`), the running binary is copied once out of `/proc/self/exe`
/// into the temporary folder (`carve-self-<pid>`), so the runs in the image use the same
/// code as the ones here instead of failing.
fn own_binary() -> Result<std::path::PathBuf> {
    static COPY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let exe = std::env::current_exe().context("could not find this carve's own binary to run inside the image")?;
    if exe.is_file() {
        return Ok(exe);
    }
    if let Some(p) = COPY.get() {
        return Ok(p.clone());
    }
    let dest = std::env::temp_dir().join(format!("carve-self-{}", std::process::id()));
    std::fs::copy("/proc/self/exe", &dest).with_context(|| {
        format!("{} is gone (replaced since carve started) and /proc/self/exe could not be copied", exe.display())
    })?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755))?;
    Ok(COPY.get_or_init(|| dest).clone())
}
