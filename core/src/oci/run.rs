//! Running a command in an image on copies: a fresh working container, the given folders
//! copied in (never mounted: the user's tree cannot be written), the command under a
//! deadline, the results copied out to new paths, and the container removed whatever
//! happened (error, timeout, panic).
//!
//! buildah: `from`, `copy`, `run --isolation chroot`, and `run … tar -cf -` to bring results
//! out (no `mount`, so it needs no root and no `buildah unshare`; the image needs `tar`).
//! docker and podman: `create`, `cp`, `start --attach`, `cp`, `rm --force`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::process::{self, Invocation};
use super::{Engine, EngineKind, OciError, RunOutput, RunSpec, image};

/// How long creating, copying into, copying out of or removing a container may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(600);

/// A container name no other run (of this or another process) has: `carve-<purpose>-…`, so
/// a container left behind by a killed carve is recognisable.
pub(crate) fn container_name(purpose: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("carve-{purpose}-{}-{n}-{nanos:09}", std::process::id())
}

/// A working container, removed when dropped.
struct Container<'a> {
    engine: &'a Engine,
    name: String,
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        let inv = Invocation::new(self.engine.program(), remove_args(self.engine.kind(), &self.name));
        let _ = process::run(&inv, STEP_TIMEOUT);
    }
}

pub(crate) fn run(engine: &Engine, image: &str, spec: &RunSpec) -> Result<RunOutput, OciError> {
    validate(spec)?;
    let kind = engine.kind();
    // The guard first: a create that fails half-way (or times out) leaves nothing either.
    let container = Container { engine, name: container_name("run") };
    step(engine, create_args(kind, &container.name, image, spec)).map_err(|e| missing_image(e, engine, image))?;
    for (host, dest) in &spec.copy_in {
        step(engine, copy_in_args(kind, &container.name, host, dest))?;
    }
    let inv = Invocation::new(engine.program(), exec_args(kind, &container.name, spec));
    let finished = process::run(&inv, spec.timeout)?;
    let mut output = RunOutput {
        exit_code: finished.code,
        timed_out: finished.timed_out,
        stdout: finished.stdout,
        stderr: match kind {
            EngineKind::Buildah => strip_buildah_noise(&finished.stderr),
            EngineKind::Docker | EngineKind::Podman => finished.stderr,
        },
        duration: finished.duration,
        copied_out: Vec::new(),
        missing_out: Vec::new(),
    };
    for (src, host) in &spec.copy_out {
        if copy_out(engine, &container.name, src, host)? {
            output.copied_out.push(host.clone());
        } else {
            output.missing_out.push(src.clone());
        }
    }
    drop(container);
    Ok(output)
}

/// An engine command that must succeed.
fn step(engine: &Engine, args: Vec<String>) -> Result<process::Finished, OciError> {
    let inv = Invocation::new(engine.program(), args);
    let finished = process::run(&inv, STEP_TIMEOUT)?;
    if finished.success() { Ok(finished) } else { Err(finished.error(&inv, STEP_TIMEOUT)) }
}

fn missing_image(err: OciError, engine: &Engine, image: &str) -> OciError {
    match &err {
        OciError::Command { output, .. } if image::is_missing_image_message(output) => {
            OciError::ImageMissing { image: image.to_string(), engine: engine.kind() }
        }
        _ => err,
    }
}

fn validate(spec: &RunSpec) -> Result<(), OciError> {
    let bad = |path: &str, problem: &str| OciError::BadPath { path: path.to_string(), problem: problem.to_string() };
    if spec.command.is_empty() {
        return Err(bad("(command)", "the command to run is empty"));
    }
    for (host, dest) in &spec.copy_in {
        if !host.exists() {
            return Err(bad(&host.display().to_string(), "nothing to copy into the container: it does not exist"));
        }
        container_path(dest).map_err(|p| bad(dest, p))?;
    }
    for (src, host) in &spec.copy_out {
        container_path(src).map_err(|p| bad(src, p))?;
        if host.symlink_metadata().is_ok() {
            return Err(bad(
                &host.display().to_string(),
                "results are never copied over an existing path: remove it or choose a new one",
            ));
        }
    }
    if let Some(dir) = &spec.workdir {
        container_path(dir).map_err(|p| bad(dir, p))?;
    }
    Ok(())
}

/// The parent folder and last name of an absolute container path without `..`.
pub(crate) fn container_path(path: &str) -> Result<(&str, &str), &'static str> {
    if !path.starts_with('/') {
        return Err("a container path must be absolute");
    }
    if path.split('/').any(|c| c == "..") {
        return Err("a container path must not contain `..`");
    }
    let trimmed = path.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((_, "")) | None => Err("a container path must name something below `/`"),
        Some(("", name)) => Ok(("/", name)),
        Some((parent, name)) => Ok((parent, name)),
    }
}

pub(crate) fn create_args(kind: EngineKind, name: &str, image: &str, spec: &RunSpec) -> Vec<String> {
    let mut args: Vec<String> = match kind {
        EngineKind::Buildah => ["from", "--pull=never", "--quiet", "--name", name].map(String::from).to_vec(),
        EngineKind::Docker | EngineKind::Podman => {
            ["create", "--pull=never", "--name", name].map(String::from).to_vec()
        }
    };
    if kind != EngineKind::Buildah {
        push_workdir_env(&mut args, spec, "--workdir");
    }
    args.push(image.to_string());
    if kind != EngineKind::Buildah {
        args.extend(spec.command.iter().cloned());
    }
    args
}

/// The working folder (`flag`: buildah's `--workingdir`, docker's `--workdir`) and the
/// environment of the command.
fn push_workdir_env(args: &mut Vec<String>, spec: &RunSpec, workdir_flag: &str) {
    if let Some(dir) = &spec.workdir {
        args.extend([workdir_flag.to_string(), dir.clone()]);
    }
    for (key, value) in &spec.env {
        args.extend(["--env".to_string(), format!("{key}={value}")]);
    }
}

/// A folder's contents land in `dest` (created); a file becomes `dest`.
pub(crate) fn copy_in_args(kind: EngineKind, name: &str, host: &Path, dest: &str) -> Vec<String> {
    let host = host.display().to_string();
    match kind {
        EngineKind::Buildah => ["copy", "--quiet", name, &host, dest].map(String::from).to_vec(),
        EngineKind::Docker | EngineKind::Podman => {
            let from = if Path::new(&host).is_dir() { format!("{}/.", host.trim_end_matches('/')) } else { host };
            vec!["cp".into(), from, format!("{name}:{dest}")]
        }
    }
}

pub(crate) fn exec_args(kind: EngineKind, name: &str, spec: &RunSpec) -> Vec<String> {
    match kind {
        EngineKind::Buildah => {
            let mut args = ["run", "--isolation", "chroot"].map(String::from).to_vec();
            push_workdir_env(&mut args, spec, "--workingdir");
            args.extend([name.to_string(), "--".to_string()]);
            args.extend(spec.command.iter().cloned());
            args
        }
        EngineKind::Docker | EngineKind::Podman => vec!["start".into(), "--attach".into(), name.to_string()],
    }
}

pub(crate) fn remove_args(kind: EngineKind, name: &str) -> Vec<String> {
    match kind {
        EngineKind::Buildah => vec!["rm".into(), name.to_string()],
        EngineKind::Docker | EngineKind::Podman => vec!["rm".into(), "--force".into(), name.to_string()],
    }
}

/// Copy the container's `src` to the new path `host`; false when `src` does not exist.
fn copy_out(engine: &Engine, name: &str, src: &str, host: &Path) -> Result<bool, OciError> {
    let (parent, base) = container_path(src).map_err(|p| OciError::BadPath { path: src.into(), problem: p.into() })?;
    let host_parent = host.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(host_parent).map_err(OciError::io(host_parent))?;
    // Staged next to `host`, so the last step is a rename on one file system.
    let staging =
        tempfile::Builder::new().prefix(".carve-copy-").tempdir_in(host_parent).map_err(OciError::io(host_parent))?;
    let staged = staging.path().join(base);
    match engine.kind() {
        EngineKind::Buildah => {
            let tar_file = staging.path().join("out.tar");
            if !tar_out(name, parent, base, &tar_file)? {
                return Ok(false);
            }
            let unpack = Invocation::new(
                "tar",
                vec![
                    "-xf".into(),
                    tar_file.display().to_string(),
                    "-C".into(),
                    staging.path().display().to_string(),
                    "--no-same-owner".into(),
                ],
            );
            let finished = process::run(&unpack, STEP_TIMEOUT)?;
            if !finished.success() {
                return Err(finished.error(&unpack, STEP_TIMEOUT));
            }
        }
        EngineKind::Docker | EngineKind::Podman => {
            let args = vec!["cp".into(), format!("{name}:{src}"), staged.display().to_string()];
            let inv = Invocation::new(engine.program(), args);
            let finished = process::run(&inv, STEP_TIMEOUT)?;
            let text = finished.stderr.to_lowercase();
            if !finished.success() && (text.contains("could not find the file") || text.contains("no such file")) {
                return Ok(false);
            }
            if !finished.success() {
                return Err(finished.error(&inv, STEP_TIMEOUT));
            }
        }
    }
    std::fs::rename(&staged, host).map_err(OciError::io(host))?;
    Ok(true)
}

/// `parent/base` of the container as a tar file at `tar_file`; false when it does not exist.
/// `buildah run --isolation chroot` has been seen to exit 0 with none of the command's
/// output on a loaded machine (a tar stream is never empty: it ends with two zero blocks),
/// so an empty stream is asked for again, twice, before it is an error.
fn tar_out(name: &str, parent: &str, base: &str, tar_file: &Path) -> Result<bool, OciError> {
    let inv = Invocation::new("buildah", tar_out_args(name, parent, base));
    for _ in 0..3 {
        let file = std::fs::File::create(tar_file).map_err(OciError::io(tar_file))?;
        let finished = process::run_with_stdout(&inv, STEP_TIMEOUT, Some(file))?;
        if !finished.success() {
            // GNU tar's "Cannot stat: No such file or directory", busybox's "can't stat".
            if finished.stderr.to_lowercase().contains("no such file or directory") {
                return Ok(false);
            }
            return Err(finished.error(&inv, STEP_TIMEOUT));
        }
        if std::fs::metadata(tar_file).map_err(OciError::io(tar_file))?.len() > 0 {
            return Ok(true);
        }
    }
    Err(OciError::Parse {
        command: format!("buildah {}", tar_out_args(name, parent, base).join(" ")),
        detail: format!("an empty tar stream of {parent}/{base} three times (tar exited 0); run again"),
    })
}

/// `buildah run … tar` writing `parent/base` as a tar stream to stdout.
pub(crate) fn tar_out_args(name: &str, parent: &str, base: &str) -> Vec<String> {
    ["run", "--isolation", "chroot", name, "--", "tar", "-C", parent, "-cf", "-", base].map(String::from).to_vec()
}

/// stderr without the lines buildah adds after the command's own (`subprocess exited with
/// status 3`, `Error: exit status 3`), which the command did not print.
pub(crate) fn strip_buildah_noise(stderr: &str) -> String {
    let noise = |line: &str| {
        let line = line.trim_end();
        line.strip_prefix("subprocess exited with status ").is_some_and(|c| c.parse::<i32>().is_ok())
            || line.strip_prefix("subprocess exited on ").is_some_and(|s| !s.contains(' '))
            || line.strip_prefix("Error: exit status ").is_some_and(|c| c.parse::<i32>().is_ok())
    };
    let mut lines: Vec<&str> = stderr.split_inclusive('\n').collect();
    while lines.last().is_some_and(|l| noise(l)) {
        lines.pop();
    }
    lines.concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn spec() -> RunSpec {
        RunSpec {
            copy_in: vec![(PathBuf::from("/home/u/repo"), "/work/repo".into())],
            workdir: Some("/work/repo".into()),
            command: vec!["python".into(), "-m".into(), "pytest".into(), "-q".into()],
            env: BTreeMap::from([("PYTHONHASHSEED".into(), "0".into()), ("CI".into(), "1".into())]),
            timeout: Duration::from_secs(60),
            copy_out: vec![("/work/repo/report.xml".into(), PathBuf::from("/tmp/out/report.xml"))],
        }
    }

    #[test]
    fn buildah_makes_a_working_container_and_runs_in_it_with_chroot_isolation() {
        let spec = spec();
        assert_eq!(
            create_args(EngineKind::Buildah, "carve-run-1", "carve-env/x:1", &spec).join(" "),
            "from --pull=never --quiet --name carve-run-1 carve-env/x:1"
        );
        assert_eq!(
            exec_args(EngineKind::Buildah, "carve-run-1", &spec).join(" "),
            "run --isolation chroot --workingdir /work/repo --env CI=1 --env PYTHONHASHSEED=0 carve-run-1 -- \
             python -m pytest -q"
        );
        assert_eq!(
            copy_in_args(EngineKind::Buildah, "carve-run-1", Path::new("/home/u/repo"), "/work/repo").join(" "),
            "copy --quiet carve-run-1 /home/u/repo /work/repo"
        );
        assert_eq!(remove_args(EngineKind::Buildah, "carve-run-1").join(" "), "rm carve-run-1");
        assert_eq!(
            tar_out_args("carve-run-1", "/work/repo", "report.xml").join(" "),
            "run --isolation chroot carve-run-1 -- tar -C /work/repo -cf - report.xml"
        );
    }

    #[test]
    fn docker_and_podman_create_with_the_command_then_start_attached() {
        let spec = spec();
        for kind in [EngineKind::Docker, EngineKind::Podman] {
            assert_eq!(
                create_args(kind, "carve-run-1", "carve-env/x:1", &spec).join(" "),
                "create --pull=never --name carve-run-1 --workdir /work/repo --env CI=1 --env PYTHONHASHSEED=0 \
                 carve-env/x:1 python -m pytest -q"
            );
            assert_eq!(exec_args(kind, "carve-run-1", &spec).join(" "), "start --attach carve-run-1");
            assert_eq!(remove_args(kind, "carve-run-1").join(" "), "rm --force carve-run-1");
        }
    }

    #[test]
    fn docker_copies_a_folders_contents_and_a_file_as_itself() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let folder = copy_in_args(EngineKind::Docker, "c", dir.path(), "/work/repo");
        assert_eq!(folder, ["cp".to_string(), format!("{}/.", dir.path().display()), "c:/work/repo".into()]);
        let single = copy_in_args(EngineKind::Podman, "c", &file, "/work/f.txt");
        assert_eq!(single, ["cp".to_string(), file.display().to_string(), "c:/work/f.txt".into()]);
    }

    #[test]
    fn container_paths_are_absolute_below_the_root_and_without_dot_dot() {
        assert_eq!(container_path("/work/out/"), Ok(("/work", "out")));
        assert_eq!(container_path("/out"), Ok(("/", "out")));
        assert!(container_path("work/out").is_err());
        assert!(container_path("/").is_err());
        assert!(container_path("/work/../etc").is_err());
    }

    #[test]
    fn a_run_is_refused_before_any_container_when_its_paths_are_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let mut bad = spec();
        bad.copy_in = vec![(dir.path().join("absent"), "/work/repo".into())];
        let err = validate(&bad).unwrap_err().to_string();
        assert!(err.ends_with("absent: nothing to copy into the container: it does not exist"), "{err}");
        let mut bad = spec();
        bad.copy_in.clear();
        bad.copy_out = vec![("/work/out".into(), dir.path().to_path_buf())];
        let err = validate(&bad).unwrap_err().to_string();
        assert!(err.contains("results are never copied over an existing path"), "{err}");
        let mut bad = spec();
        bad.copy_in.clear();
        bad.command.clear();
        assert!(validate(&bad).unwrap_err().to_string().contains("the command to run is empty"));
    }

    #[test]
    fn buildahs_own_closing_lines_are_taken_out_of_the_commands_stderr() {
        let stderr = "E   assert 1 == 2\nsubprocess exited with status 1\nsubprocess exited with status 1\nError: exit status 1\n";
        assert_eq!(strip_buildah_noise(stderr), "E   assert 1 == 2\n");
        assert_eq!(strip_buildah_noise("subprocess exited on killed\n"), "");
        // The command's own words stay, even when they look alike mid-output.
        let own = "Error: exit status 2 is what the test expects\nok\n";
        assert_eq!(strip_buildah_noise(own), own);
    }

    #[test]
    fn container_names_are_unique_and_recognisable() {
        let (a, b) = (container_name("run"), container_name("run"));
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("carve-run-{}-", std::process::id())), "{a}");
    }
}
