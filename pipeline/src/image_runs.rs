//! Test runs inside the environment's OCI image (`--runtime oci`): the same runner code as a
//! local run, run by carve itself inside a fresh container of the image.
//!
//! On the host ([`ImageRuntime::run`]): the tree of the state (a shadow copy, never the user's
//! tree), this carve binary and the request (runner, tests, timeouts; no host path) are copied
//! into a new container of the image with `carve_core::oci::Engine::run`; there
//! `carve run-in-image` ([`run_inside`]) runs the tests through `carve_languages::run_tests`
//! exactly as a local run does (supervision, reruns of hung tests, the runner's own reports)
//! and writes the [`RunResult`] as JSON, which is copied out and read back. The container is
//! removed in every case. What the tests run with is the image's own: its `ENV` (the
//! environment's `PATH`, module caches, `GOPROXY=off`), its interpreter (found by name on
//! that `PATH`), and the folders its Dockerfile links into the source (`node_modules`),
//! linked into the state's tree the same way. carve's binary needs the image's C library to
//! be at least as new as the one it was built against (the official bookworm images are).

use std::path::{Path, PathBuf};
use std::time::Duration;

use carve_core::oci::{Engine, RunSpec};
use carve_languages::env::{IMAGE_ENV, IMAGE_REPO};
use carve_languages::runner::{RunRequest, RunResult, RunnerError, TestCommand};
use serde::{Deserialize, Serialize};

use crate::runs::{RunExtras, RunFailed};
use crate::{Context, Result, TestId};

/// Where the state's tree goes in the container (the runner's root).
pub const STATE_DIR: &str = "/work/state";
/// The runner's scratch folder in the container.
const SCRATCH_DIR: &str = "/work/scratch";
/// carve's own binary in the container.
const CARVE_IN_IMAGE: &str = "/work/.carve/carve";
const REQUEST_IN_IMAGE: &str = "/work/.carve/request.json";
const RESULT_IN_IMAGE: &str = "/work/.carve/result.json";
/// Time for the container's creation and copies, beyond the run's own limit.
const CONTAINER_MARGIN: Duration = Duration::from_secs(600);

/// Where test runs happen: on this machine, or inside the environment's OCI image.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Runtime {
    #[default]
    Local,
    Oci,
}

/// The image test runs use, with the engine that runs it and the carve binary copied in.
#[derive(Debug, Clone)]
pub struct ImageRuntime {
    pub engine: Engine,
    pub image: String,
    /// This carve (`std::env::current_exe`), run inside the container.
    pub carve: PathBuf,
}

/// What a run inside the image is asked to do: a [`RunRequest`] without its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InsideRequest {
    pub command: TestCommand,
    pub tests: Option<Vec<TestId>>,
    pub env: Vec<(String, String)>,
    pub extra_args: Vec<String>,
    pub timeout_secs: u64,
    pub test_timeout_secs: u64,
    /// The project's build, run in the state's tree before its tests (see
    /// `RunRequest::build`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
}

/// What a run inside the image gives back: the result, or the run's error as a local run
/// words it (and the output tail when the tests could not be collected).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InsideOutcome {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<RunResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_tail: Option<String>,
}

impl ImageRuntime {
    /// Run `tests` of `tree` with `command` inside the image, after the project's `build`
    /// (none: empty) in the container's copy of the tree; what the runner keeps on the host
    /// (the request, the result) goes under `scratch`.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        command: &TestCommand,
        build: &[String],
        limits: (Duration, Duration),
        tree: &Path,
        tests: Option<&[TestId]>,
        extras: &RunExtras,
        scratch: &Path,
    ) -> Result<RunResult, RunFailed> {
        let failed = |message: String| RunFailed { message, collection_tail: None };
        if let Some(p) = extras.pythonpath.first() {
            return Err(failed(format!(
                "{} is a folder of this machine: a run inside the image {} cannot use it",
                p.display(),
                self.image
            )));
        }
        let request = InsideRequest {
            command: command_in_image(command),
            tests: tests.map(<[TestId]>::to_vec),
            env: extras.env.clone(),
            extra_args: extras.args.clone(),
            timeout_secs: limits.0.as_secs(),
            test_timeout_secs: limits.1.as_secs(),
            build: build.to_vec(),
        };
        std::fs::create_dir_all(scratch).map_err(|e| failed(format!("could not create {}: {e}", scratch.display())))?;
        let host = tempfile::Builder::new()
            .prefix("oci-run-")
            .tempdir_in(scratch)
            .map_err(|e| failed(format!("could not make a folder in {}: {e}", scratch.display())))?;
        let request_file = host.path().join("request.json");
        let json = serde_json::to_vec_pretty(&request).unwrap_or_default();
        std::fs::write(&request_file, json)
            .map_err(|e| failed(format!("could not write {}: {e}", request_file.display())))?;
        let result_file = host.path().join("result.json");
        let mut spec = RunSpec::new(limits.0 + CONTAINER_MARGIN);
        spec.copy_in = vec![
            (tree.to_path_buf(), STATE_DIR.into()),
            (self.carve.clone(), CARVE_IN_IMAGE.into()),
            (request_file, REQUEST_IN_IMAGE.into()),
        ];
        spec.workdir = Some(STATE_DIR.into());
        spec.command = [CARVE_IN_IMAGE, "run-in-image", REQUEST_IN_IMAGE, RESULT_IN_IMAGE].map(String::from).to_vec();
        spec.env.insert("CARVE_NO_PROGRESS".into(), "1".into());
        spec.copy_out = vec![(RESULT_IN_IMAGE.into(), result_file.clone())];
        let engine = self.engine.kind().name();
        let out = self
            .engine
            .run(&self.image, &spec)
            .map_err(|e| failed(format!("could not run the tests in the image {} with {engine}: {e}", self.image)))?;
        if !out.missing_out.is_empty() {
            let tail =
                |s: &str| s.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
            return Err(failed(format!(
                "carve inside the image {} gave no result (exit code {:?}{}); its output:\n{}\n{}",
                self.image,
                out.exit_code,
                if out.timed_out { ", killed after its time limit" } else { "" },
                tail(&out.stdout),
                tail(&out.stderr)
            )));
        }
        let text = std::fs::read_to_string(&result_file)
            .map_err(|e| failed(format!("could not read {}: {e}", result_file.display())))?;
        let outcome: InsideOutcome = serde_json::from_str(&text)
            .map_err(|e| failed(format!("the result of the run in the image {} is not readable: {e}", self.image)))?;
        match (outcome.result, outcome.error) {
            (Some(result), None) => Ok(result),
            (_, Some(message)) => Err(RunFailed { message, collection_tail: outcome.collection_tail }),
            (None, None) => Err(failed(format!("the run in the image {} reported nothing", self.image))),
        }
    }
}

/// The command as it runs in the image: an interpreter named by this machine's path is
/// named by its file name alone, found on the image's `PATH` (the environment's first).
pub fn command_in_image(command: &TestCommand) -> TestCommand {
    let mut command = command.clone();
    let name = command.interpreter().and_then(Path::file_name).map(PathBuf::from);
    if let Some(name) = name {
        command.set_interpreter(&name);
    }
    command
}

/// `carve run-in-image REQUEST RESULT`, inside the container: run the request on
/// [`STATE_DIR`] and write an [`InsideOutcome`] to `result`.
pub fn run_inside(request: &Path, result: &Path) -> Result<()> {
    let text = std::fs::read_to_string(request).with_context(|| format!("failed to read {}", request.display()))?;
    let req: InsideRequest =
        serde_json::from_str(&text).with_context(|| format!("{} is not a run request", request.display()))?;
    let root = Path::new(STATE_DIR);
    link_image_environment(Path::new(IMAGE_REPO), root)?;
    let run = RunRequest {
        root: root.to_path_buf(),
        // cargo-nextest, where carve uses it here, is in no official image: see `runnable_here`.
        command: req.command.runnable_here(),
        tests: req.tests,
        env: req.env,
        pythonpath_prepend: Vec::new(),
        extra_args: req.extra_args,
        timeout: Duration::from_secs(req.timeout_secs),
        test_timeout: Duration::from_secs(req.test_timeout_secs),
        scratch: PathBuf::from(SCRATCH_DIR),
        build: req.build,
    };
    let outcome = match carve_languages::run_tests(&run) {
        Ok(r) => InsideOutcome { result: Some(r), ..InsideOutcome::default() },
        Err(e) => {
            let collection_tail = match &e {
                RunnerError::Collection { tail, .. } => Some(tail.clone()),
                _ => None,
            };
            InsideOutcome { result: None, error: Some(e.to_string()), collection_tail }
        }
    };
    let json = serde_json::to_vec(&outcome)?;
    std::fs::write(result, json).with_context(|| format!("failed to write {}", result.display()))?;
    Ok(())
}

/// The links the image's Dockerfile made in its copy of the source to the environment's
/// folders (`node_modules` → `/opt/carve-env/src/node_modules`), made in `state` too where it
/// has nothing of that name: the state's tree uses the image's environment as the source
/// does.
fn link_image_environment(source: &Path, state: &Path) -> Result<()> {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(source.join(&rel)) else { continue };
        for entry in entries.flatten() {
            let rel = rel.join(entry.file_name());
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            if meta.is_dir() {
                stack.push(rel);
                continue;
            }
            if !meta.file_type().is_symlink() {
                continue;
            }
            let Ok(target) = std::fs::read_link(entry.path()) else { continue };
            let dest = state.join(&rel);
            if !target.starts_with(IMAGE_ENV) || dest.symlink_metadata().is_ok() {
                continue;
            }
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("failed to create {}", parent.display()))?;
            }
            std::os::unix::fs::symlink(&target, &dest)
                .with_context(|| format!("failed to link {} to {}", dest.display(), target.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_of_this_machine_is_named_by_its_file_name_in_the_image() {
        let local = TestCommand::pytest("/root/.cache/carve/envs/x/venv/bin/python", vec!["-q".into()]);
        assert_eq!(command_in_image(&local), TestCommand::pytest("python", vec!["-q".into()]));
        let go = TestCommand::GoTest { args: vec![], packages: None };
        assert_eq!(command_in_image(&go), go);
    }

    #[test]
    fn links_into_the_environment_are_carried_into_the_state_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let (source, state) = (dir.path().join("repo"), dir.path().join("state"));
        std::fs::create_dir_all(source.join("web")).unwrap();
        std::fs::create_dir_all(state.join("kept")).unwrap();
        let env_target = format!("{IMAGE_ENV}/src/web/node_modules");
        std::os::unix::fs::symlink(&env_target, source.join("web/node_modules")).unwrap();
        std::os::unix::fs::symlink(format!("{IMAGE_ENV}/src/kept"), source.join("kept")).unwrap();
        std::os::unix::fs::symlink("elsewhere", source.join("own-link")).unwrap();
        link_image_environment(&source, &state).unwrap();
        assert_eq!(std::fs::read_link(state.join("web/node_modules")).unwrap(), PathBuf::from(env_target));
        assert!(state.join("kept").is_dir() && !state.join("kept").is_symlink(), "the state's own folder stays");
        assert!(state.join("own-link").symlink_metadata().is_err(), "a link of the source's own is not the image's");
    }

    #[test]
    fn a_request_reads_back_as_written() {
        let req = InsideRequest {
            command: TestCommand::GoTest { args: vec![], packages: None },
            tests: Some(vec!["example.com/m/TestA".into()]),
            env: vec![("K".into(), "V".into())],
            extra_args: vec![],
            timeout_secs: 60,
            test_timeout_secs: 5,
            build: vec!["npm".into(), "run".into(), "build".into()],
        };
        let back: InsideRequest = serde_json::from_str(&serde_json::to_string(&req).unwrap()).unwrap();
        assert_eq!(back, req);
    }
}
