//! Images: building one from a Dockerfile, reading what an image is (id, digest, size),
//! whether it is here, removing it. Arguments are built by pure functions, tested below.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::process::{self, Invocation};
use super::{BuildSpec, Engine, EngineKind, ImageInfo, OciError};

/// How long inspecting or removing an image may take.
const QUICK: Duration = Duration::from_secs(120);

pub(crate) fn build(engine: &Engine, spec: &BuildSpec) -> Result<ImageInfo, OciError> {
    let dockerfile = std::fs::read_to_string(&spec.dockerfile).map_err(OciError::io(&spec.dockerfile))?;
    if !spec.context_dir.is_dir() {
        return Err(OciError::BadPath {
            path: spec.context_dir.display().to_string(),
            problem: "the build context is not a folder".into(),
        });
    }
    let inv = Invocation::new(engine.program(), build_args(engine.kind(), spec));
    let finished = again_after_layer_races(|| process::run(&inv, spec.timeout))?;
    if !finished.success() {
        if !finished.timed_out {
            let missing = missing_bases(engine, &dockerfile);
            if !missing.is_empty() {
                return Err(OciError::BaseImageMissing {
                    tag: spec.tag.clone(),
                    missing,
                    command: inv.display(),
                    output: finished.output_tail(20),
                });
            }
        }
        return Err(finished.error(&inv, spec.timeout));
    }
    info(engine, &spec.tag)
}

/// What buildah says when a layer its build cache listed was removed before it looked the
/// layer up or committed onto it: another build's or an `rmi`'s doing, on the same storage
/// (buildah issue 5674, fixed upstream in 1.43; Debian's buildah still has it). It was seen
/// in carve's CI, where one test removes its image while another builds from the same cached
/// layers. Nothing is wrong with the build, so it is made again.
const LAYER_RACE: &str = "layer not known";

/// How many times a build is made in all when each failure is [`LAYER_RACE`].
const BUILD_ATTEMPTS: usize = 3;

/// `attempt`'s result, made again (up to [`BUILD_ATTEMPTS`] in all) while it failed on
/// [`LAYER_RACE`]: the cache it read changed under it, and the next build reads it afresh.
fn again_after_layer_races(
    mut attempt: impl FnMut() -> Result<process::Finished, OciError>,
) -> Result<process::Finished, OciError> {
    let mut finished = attempt()?;
    for _ in 1..BUILD_ATTEMPTS {
        let raced = !finished.success() && !finished.timed_out && finished.stderr.contains(LAYER_RACE);
        if !raced {
            break;
        }
        finished = attempt()?;
    }
    Ok(finished)
}

/// The base images `dockerfile` names that are not on this machine.
fn missing_bases(engine: &Engine, dockerfile: &str) -> Vec<String> {
    dockerfile_bases(dockerfile).into_iter().filter(|b| !matches!(exists(engine, b), Ok(true))).collect()
}

pub(crate) fn build_args(kind: EngineKind, spec: &BuildSpec) -> Vec<String> {
    // A failed build leaves no working container behind.
    let mut args = vec!["build".to_string(), "--force-rm".to_string()];
    if kind == EngineKind::Buildah {
        // No OCI runtime is needed for RUN steps, and each step's layer is kept for the next
        // build (docker and podman keep them by default).
        args.extend(["--isolation", "chroot", "--layers"].map(String::from));
    }
    args.extend(["--file".to_string(), spec.dockerfile.display().to_string()]);
    args.extend(["--tag".to_string(), spec.tag.clone()]);
    for (key, value) in &spec.build_args {
        args.extend(["--build-arg".to_string(), format!("{key}={value}")]);
    }
    args.push(spec.context_dir.display().to_string());
    args
}

pub(crate) fn info(engine: &Engine, image: &str) -> Result<ImageInfo, OciError> {
    let inv = Invocation::new(engine.program(), inspect_args(engine.kind(), image));
    let finished = process::run(&inv, QUICK)?;
    if !finished.success() {
        if is_missing_image_message(&finished.stderr) {
            return Err(OciError::ImageMissing { image: image.to_string(), engine: engine.kind() });
        }
        return Err(finished.error(&inv, QUICK));
    }
    parse_info(engine.kind(), image, &finished.stdout)
        .map_err(|detail| OciError::Parse { command: inv.display(), detail })
}

pub(crate) fn exists(engine: &Engine, image: &str) -> Result<bool, OciError> {
    match info(engine, image) {
        Ok(_) => Ok(true),
        Err(OciError::ImageMissing { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

pub(crate) fn remove(engine: &Engine, image: &str) -> Result<bool, OciError> {
    let inv = Invocation::new(engine.program(), vec!["rmi".into(), image.to_string()]);
    let finished = process::run(&inv, QUICK)?;
    if finished.success() {
        return Ok(true);
    }
    if is_missing_image_message(&finished.stderr) {
        return Ok(false);
    }
    Err(finished.error(&inv, QUICK))
}

pub(crate) fn inspect_args(kind: EngineKind, image: &str) -> Vec<String> {
    match kind {
        EngineKind::Buildah => vec!["inspect".into(), "--type".into(), "image".into(), image.to_string()],
        EngineKind::Docker | EngineKind::Podman => vec!["image".into(), "inspect".into(), image.to_string()],
    }
}

/// What the engines say when an image is not there.
pub(crate) fn is_missing_image_message(stderr: &str) -> bool {
    let text = stderr.to_lowercase();
    ["image not known", "no such image", "failed to find image", "unable to find image"]
        .iter()
        .any(|m| text.contains(m))
}

/// [`ImageInfo`] from `inspect`'s JSON: buildah's object (the image id, the manifest's
/// digest, and the manifest's layers, whose sizes add up to the image's), or docker's and
/// podman's array of one image (`Id`, `Size`, podman's `Digest` or docker's `RepoDigests`).
pub(crate) fn parse_info(kind: EngineKind, tag: &str, json: &str) -> Result<ImageInfo, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
    match kind {
        EngineKind::Buildah => {
            let id = text(&value, "FromImageID").ok_or("no FromImageID")?;
            let digest = text(&value, "FromImageDigest");
            let manifest: Value = serde_json::from_str(&text(&value, "Manifest").ok_or("no Manifest")?)
                .map_err(|e| format!("the manifest is not JSON: {e}"))?;
            let layers = manifest.get("layers").and_then(Value::as_array).ok_or("the manifest lists no layers")?;
            let size_bytes = layers.iter().filter_map(|l| l.get("size").and_then(Value::as_u64)).sum();
            Ok(ImageInfo { tag: tag.to_string(), id: prefixed(&id), digest, size_bytes })
        }
        EngineKind::Docker | EngineKind::Podman => {
            let image = value.as_array().and_then(|a| a.first()).ok_or("no image in the answer")?;
            let id = text(image, "Id").ok_or("no Id")?;
            let size_bytes = image.get("Size").and_then(Value::as_u64).ok_or("no Size")?;
            let repo_digest = image
                .get("RepoDigests")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .and_then(|d| d.rsplit_once('@'))
                .map(|(_, d)| d.to_string());
            let digest = text(image, "Digest").or(repo_digest);
            Ok(ImageInfo { tag: tag.to_string(), id: prefixed(&id), digest, size_bytes })
        }
    }
}

/// Image ids with their algorithm, as docker prints them (`sha256:…`).
fn prefixed(id: &str) -> String {
    if id.contains(':') { id.to_string() } else { format!("sha256:{id}") }
}

/// The images a Dockerfile builds `FROM`, in order, without `scratch`, the names of its own
/// earlier stages, and names built from `ARG`s (`$…`, known only at build time).
pub fn dockerfile_bases(dockerfile: &str) -> Vec<String> {
    let mut stages = BTreeSet::new();
    let mut bases: Vec<String> = Vec::new();
    for line in logical_lines(dockerfile) {
        let mut words = line.split_whitespace();
        if !words.next().is_some_and(|w| w.eq_ignore_ascii_case("FROM")) {
            continue;
        }
        let rest: Vec<&str> = words.filter(|w| !w.starts_with("--")).collect();
        let Some(image) = rest.first() else { continue };
        // A stage named before this line, not an image.
        let earlier_stage = stages.contains(&image.to_lowercase());
        if let [_, keyword, name, ..] = rest.as_slice() {
            if keyword.eq_ignore_ascii_case("AS") {
                stages.insert(name.to_lowercase());
            }
        }
        if image.eq_ignore_ascii_case("scratch") || image.contains('$') || earlier_stage {
            continue;
        }
        if !bases.iter().any(|b| b == image) {
            bases.push((*image).to_string());
        }
    }
    bases
}

/// The Dockerfile's instructions, with `\`-continued lines joined and comments left out.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if current.is_empty() && (line.starts_with('#') || line.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ended(code: i32, stderr: &str) -> process::Finished {
        let (stdout, duration) = (String::new(), Duration::ZERO);
        process::Finished { code: Some(code), timed_out: false, stdout, stderr: stderr.to_string(), duration }
    }

    /// The builds [`again_after_layer_races`] makes when the engine answers `answers` in turn.
    fn builds_made(answers: &[(i32, &str)]) -> (usize, Option<i32>) {
        let mut made = 0;
        let last = again_after_layer_races(|| {
            made += 1;
            let (code, stderr) = answers[made - 1];
            Ok(ended(code, stderr))
        })
        .unwrap();
        (made, last.code)
    }

    #[test]
    fn a_build_that_lost_a_cached_layer_to_another_build_is_made_again() {
        let race =
            "Error: checking if cached image exists from a previous build: getting top layer info: layer not known";
        assert_eq!(builds_made(&[(125, race), (0, "")]), (2, Some(0)));
        // It gives up after three builds, with the last one's failure.
        assert_eq!(builds_made(&[(125, race), (125, race), (125, race)]), (3, Some(125)));
        // Any other failure, and a success, are the answer at once.
        assert_eq!(builds_made(&[(1, "Error: building at STEP \"RUN make\": exit status 2")]), (1, Some(1)));
        assert_eq!(builds_made(&[(0, "")]), (1, Some(0)));
    }

    fn spec() -> BuildSpec {
        let mut spec = BuildSpec::new("/ctx", "/ctx/env/Dockerfile", "carve-env/demo:abc123");
        spec.build_args.insert("PIP_INDEX".into(), "x".into());
        spec.build_args.insert("A".into(), "1".into());
        spec
    }

    #[test]
    fn buildah_builds_with_chroot_isolation_and_kept_layers() {
        let args = build_args(EngineKind::Buildah, &spec());
        assert_eq!(
            args.join(" "),
            "build --force-rm --isolation chroot --layers --file /ctx/env/Dockerfile --tag carve-env/demo:abc123 \
             --build-arg A=1 --build-arg PIP_INDEX=x /ctx"
        );
    }

    #[test]
    fn docker_and_podman_build_with_the_same_arguments() {
        let docker = build_args(EngineKind::Docker, &spec());
        assert_eq!(docker, build_args(EngineKind::Podman, &spec()));
        assert_eq!(docker[..6].join(" "), "build --force-rm --file /ctx/env/Dockerfile --tag carve-env/demo:abc123");
        assert_eq!(docker.last().map(String::as_str), Some("/ctx"));
        assert_eq!(BuildSpec::new("/c", "/c/D", "t").context_dir, PathBuf::from("/c"));
    }

    #[test]
    fn inspect_differs_between_buildah_and_the_others() {
        assert_eq!(inspect_args(EngineKind::Buildah, "t").join(" "), "inspect --type image t");
        assert_eq!(inspect_args(EngineKind::Docker, "t").join(" "), "image inspect t");
        assert_eq!(inspect_args(EngineKind::Podman, "t").join(" "), "image inspect t");
    }

    #[test]
    fn buildah_inspect_gives_id_digest_and_the_layers_size() {
        let manifest = r#"{"schemaVersion":2,"layers":[{"size":1000},{"size":234}]}"#;
        let json = serde_json::json!({
            "FromImageID": "6958875549ebc693",
            "FromImageDigest": "sha256:dee0ec50",
            "Manifest": manifest,
        });
        let info = parse_info(EngineKind::Buildah, "debian:bookworm-slim", &json.to_string()).unwrap();
        assert_eq!(
            info,
            ImageInfo {
                tag: "debian:bookworm-slim".into(),
                id: "sha256:6958875549ebc693".into(),
                digest: Some("sha256:dee0ec50".into()),
                size_bytes: 1234,
            }
        );
    }

    #[test]
    fn docker_inspect_takes_the_digest_from_repo_digests_and_podman_from_digest() {
        let docker = r#"[{"Id":"sha256:aa","Size":77,"RepoDigests":["debian@sha256:bb"]}]"#;
        let info = parse_info(EngineKind::Docker, "t", docker).unwrap();
        assert_eq!((info.id.as_str(), info.digest.as_deref(), info.size_bytes), ("sha256:aa", Some("sha256:bb"), 77));
        let podman = r#"[{"Id":"cc","Size":5,"Digest":"sha256:dd","RepoDigests":[]}]"#;
        let info = parse_info(EngineKind::Podman, "t", podman).unwrap();
        assert_eq!((info.id.as_str(), info.digest.as_deref()), ("sha256:cc", Some("sha256:dd")));
        let local = r#"[{"Id":"sha256:ee","Size":5,"RepoDigests":[]}]"#;
        assert_eq!(parse_info(EngineKind::Docker, "t", local).unwrap().digest, None);
    }

    #[test]
    fn unreadable_inspect_output_says_what_is_missing() {
        assert_eq!(parse_info(EngineKind::Docker, "t", "[]").unwrap_err(), "no image in the answer");
        assert_eq!(parse_info(EngineKind::Buildah, "t", "{}").unwrap_err(), "no FromImageID");
        assert!(parse_info(EngineKind::Podman, "t", "Error").unwrap_err().starts_with("not JSON"));
    }

    #[test]
    fn missing_image_messages_of_each_engine_are_recognised() {
        assert!(is_missing_image_message("Error: debian:nope: image not known"));
        assert!(is_missing_image_message("Error: No such image: debian:nope"));
        assert!(is_missing_image_message("Error: failed to find image x"));
        assert!(!is_missing_image_message("Error: permission denied"));
    }

    #[test]
    fn bases_are_the_images_named_by_from_but_not_stages_scratch_or_args() {
        let dockerfile = "# syntax=docker/dockerfile:1\n\
            ARG PY=3.11\n\
            FROM --platform=linux/amd64 python:3.11-slim-bookworm AS deps\n\
            RUN pip install \\\n    pytest\n\
            from golang:1.26-bookworm as Build\n\
            FROM deps\n\
            FROM build AS final\n\
            FROM python:${PY}-slim\n\
            FROM scratch\n\
            FROM python:3.11-slim-bookworm\n";
        assert_eq!(dockerfile_bases(dockerfile), ["python:3.11-slim-bookworm", "golang:1.26-bookworm"]);
    }

    #[test]
    fn continued_lines_are_one_instruction() {
        assert_eq!(logical_lines("RUN a \\\n  b\n# c\n\nFROM x"), ["RUN a  b", "FROM x"]);
    }
}
