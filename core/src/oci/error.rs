//! What can go wrong with an OCI engine, each error naming the command, image or path and
//! what to do about it.

use std::path::PathBuf;
use std::time::Duration;

use super::EngineKind;

/// The installs that make an engine usable on a machine like carve's (no Docker daemon, no
/// registry): named in the errors that find none.
pub const INSTALL_HINT: &str = "install buildah (`apt-get install buildah`; it builds and runs images with \
`--isolation chroot`, no daemon needed), or start a Docker daemon; then make the base images \
with `scripts/base-images` where no registry can be reached";

#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// No engine can both build and run images here.
    #[error("no OCI engine can build and run images here ({}); {INSTALL_HINT}", tried_list(.tried))]
    NoEngine { tried: Vec<(EngineKind, String)> },
    /// `CARVE_OCI_ENGINE` names no engine.
    #[error("CARVE_OCI_ENGINE={value:?} is not an engine: use docker, podman or buildah (or unset it to choose)")]
    UnknownEngine { value: String },
    /// The engine `CARVE_OCI_ENGINE` (or [`super::Engine::probe`]) asked for cannot be used.
    #[error("{kind} cannot build and run images here: {reason}")]
    Unusable { kind: EngineKind, reason: String },
    /// The engine program could not be started at all.
    #[error("failed to start `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    /// A command of the engine exited with failure.
    #[error("`{command}` failed ({status}):\n{output}")]
    Command { command: String, status: String, output: String },
    /// A command of the engine did not finish in time and was killed.
    #[error("`{command}` did not finish in {}s and was killed; raise the timeout if it is only slow:\n{output}", .after.as_secs())]
    Timeout { command: String, after: Duration, output: String },
    /// A build failed, and an image it starts `FROM` is not on this machine.
    #[error(
        "building {tag} failed: its base image(s) {} are not on this machine and could not be pulled; where no \
         registry can be reached, make them with `scripts/base-images` (`{command}`):\n{output}",
        .missing.join(", ")
    )]
    BaseImageMissing { tag: String, missing: Vec<String>, command: String, output: String },
    /// The image to run or inspect is not on this machine.
    #[error("image {image} is not on this machine (build it first, or check its name with `{engine} images`)")]
    ImageMissing { image: String, engine: EngineKind },
    /// The engine's output could not be read as expected.
    #[error("unexpected output of `{command}`: {detail}")]
    Parse { command: String, detail: String },
    /// A path handed to the runtime is not usable as it is.
    #[error("{path}: {problem}")]
    BadPath { path: String, problem: String },
    /// Reading or writing a file on this machine failed.
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

impl OciError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OciError {
        let path = path.into();
        move |source| OciError::Io { path, source }
    }
}

fn tried_list(tried: &[(EngineKind, String)]) -> String {
    tried.iter().map(|(kind, reason)| format!("{kind}: {reason}")).collect::<Vec<_>>().join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_engine_says_what_each_engine_lacks_and_what_to_install() {
        let err = OciError::NoEngine {
            tried: vec![
                (EngineKind::Docker, "no daemon answers".into()),
                (EngineKind::Podman, "not installed".into()),
                (EngineKind::Buildah, "not installed".into()),
            ],
        };
        let text = err.to_string();
        assert!(
            text.starts_with(
                "no OCI engine can build and run images here (docker: no daemon answers; podman: not installed; \
                 buildah: not installed); install buildah (`apt-get install buildah`"
            ),
            "{text}"
        );
        assert!(text.contains("scripts/base-images"), "{text}");
    }
}
