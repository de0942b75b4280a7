//! The OCI runtime: build an image from a Dockerfile and run a command in it, with whichever
//! engine works here (docker, podman or buildah; see [`Engine::detect`]).
//!
//! ```no_run
//! use carve_core::oci::{BuildSpec, Engine, RunSpec};
//! use std::time::Duration;
//!
//! let engine = Engine::detect()?; // once per process: it starts a probe container
//! let image = engine.build(&BuildSpec::new("env", "env/Dockerfile", "carve-env/demo:0a1b2c"))?;
//! let spec = RunSpec {
//!     copy_in: vec![("/home/me/demo".into(), "/work/repo".into())],
//!     workdir: Some("/work/repo".into()),
//!     command: vec!["python".into(), "-m".into(), "pytest".into(), "--junitxml=/work/report.xml".into()],
//!     copy_out: vec![("/work/report.xml".into(), "/tmp/carve-run/report.xml".into())],
//!     ..RunSpec::new(Duration::from_secs(1800))
//! };
//! let out = engine.run(&image.tag, &spec)?;
//! println!("exit {:?}, results at {:?}, missing {:?}", out.exit_code, out.copied_out, out.missing_out);
//! # Ok::<(), carve_core::oci::OciError>(())
//! ```
//!
//! What is language-specific (which base image, which install steps) is the caller's: this
//! module builds what it is given, and tags are the caller's too (make them deterministic,
//! e.g. from the repository, commit and Dockerfile hash). Where no registry can be reached,
//! the base images are made locally under their official names by `scripts/base-images`;
//! a build whose base image is missing says so ([`OciError::BaseImageMissing`]).

mod engine;
mod error;
mod image;
mod process;
mod run;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

pub use engine::{ENGINE_ENV, Engine, EngineKind};
pub use error::{INSTALL_HINT, OciError};
pub use image::dockerfile_bases;

/// How long a build may take unless the caller says otherwise.
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(3600);

/// What to build: `dockerfile` (anywhere) with `context_dir` as its context, tagged `tag`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildSpec {
    pub context_dir: PathBuf,
    pub dockerfile: PathBuf,
    pub tag: String,
    /// `--build-arg KEY=VALUE` for each entry, in key order.
    pub build_args: BTreeMap<String, String>,
    pub timeout: Duration,
}

impl BuildSpec {
    /// No build arguments, [`DEFAULT_BUILD_TIMEOUT`].
    pub fn new(context_dir: impl Into<PathBuf>, dockerfile: impl Into<PathBuf>, tag: impl Into<String>) -> Self {
        BuildSpec {
            context_dir: context_dir.into(),
            dockerfile: dockerfile.into(),
            tag: tag.into(),
            build_args: BTreeMap::new(),
            timeout: DEFAULT_BUILD_TIMEOUT,
        }
    }
}

/// An image on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImageInfo {
    /// The name it was asked for by.
    pub tag: String,
    /// The image (config) id, `sha256:…`.
    pub id: String,
    /// The manifest's digest, where the engine knows one (buildah and podman do for local
    /// images; docker only for pushed or pulled ones).
    pub digest: Option<String>,
    /// The size of its layers, uncompressed.
    pub size_bytes: u64,
}

/// What to run in an image, on what, and what to bring back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    /// Host path → absolute container path. A folder's contents land in the container path
    /// (created); a file becomes it (with docker and podman its folder must exist in the
    /// image). Copied, never mounted: nothing in the container can write to the host path.
    pub copy_in: Vec<(PathBuf, String)>,
    /// The command's working folder (default: the image's).
    pub workdir: Option<String>,
    /// The program and its arguments (no shell unless it is one: `["sh", "-c", "…"]`).
    pub command: Vec<String>,
    /// Added to the image's environment.
    pub env: BTreeMap<String, String>,
    /// The command is killed (with everything it started) after this long.
    pub timeout: Duration,
    /// Absolute container path → new host path (its folder is created; an existing path is an
    /// error, never overwritten). Copied after the command ends, also after a timeout.
    pub copy_out: Vec<(String, PathBuf)>,
}

impl RunSpec {
    /// Nothing copied, no command yet, the image's working folder and environment.
    pub fn new(timeout: Duration) -> Self {
        RunSpec {
            copy_in: Vec::new(),
            workdir: None,
            command: Vec::new(),
            env: BTreeMap::new(),
            timeout,
            copy_out: Vec::new(),
        }
    }
}

/// How a command in a container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput {
    /// The command's exit code; `None` when it was killed (see `timed_out`).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The command's output (the last 16 MiB of each stream).
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
    /// The host paths results were copied to, in `copy_out`'s order.
    pub copied_out: Vec<PathBuf>,
    /// The container paths of `copy_out` that did not exist when the command ended.
    pub missing_out: Vec<String>,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

impl Engine {
    /// Build `spec.dockerfile` as `spec.tag`. A failure carries the build's output; one
    /// whose base image is not here is [`OciError::BaseImageMissing`].
    pub fn build(&self, spec: &BuildSpec) -> Result<ImageInfo, OciError> {
        image::build(self, spec)
    }

    /// Run `spec.command` in a fresh container of `image`, on copies of `spec.copy_in`,
    /// bringing back `spec.copy_out`. The container is removed in every case. A command
    /// that fails or times out is an `Ok` with its exit code; an `Err` means the run itself
    /// could not be done (no such image, a copy failed, the engine failed).
    pub fn run(&self, image: &str, spec: &RunSpec) -> Result<RunOutput, OciError> {
        run::run(self, image, spec)
    }

    /// What `image` is, or [`OciError::ImageMissing`].
    pub fn image_info(&self, image: &str) -> Result<ImageInfo, OciError> {
        image::info(self, image)
    }

    pub fn image_exists(&self, image: &str) -> Result<bool, OciError> {
        image::exists(self, image)
    }

    /// Remove `image`; false when there was none.
    pub fn remove_image(&self, image: &str) -> Result<bool, OciError> {
        image::remove(self, image)
    }
}
