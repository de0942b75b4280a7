//! Which container engine to use: docker, podman or buildah, the first that can really
//! build and run images here. An installed program is not enough: the docker client answers
//! without a daemon, and podman can be installed where its runtime cannot start a container
//! (a sandbox that refuses setrlimit). So each engine is probed by doing what carve needs
//! of it, and `CARVE_OCI_ENGINE` can name the one to use.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::OciError;
use super::process::{self, Invocation};

/// The variable that names the engine to use (`docker`, `podman` or `buildah`).
pub const ENGINE_ENV: &str = "CARVE_OCI_ENGINE";

/// How long one probe command may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// A container engine carve knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Docker,
    Podman,
    Buildah,
}

impl EngineKind {
    /// In the order [`Engine::detect`] tries them.
    pub const ALL: [EngineKind; 3] = [EngineKind::Docker, EngineKind::Podman, EngineKind::Buildah];

    /// The program's name, which is also how `CARVE_OCI_ENGINE` names it.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
            EngineKind::Buildah => "buildah",
        }
    }

    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine that was seen to build and run here. Detect it once and keep it: a probe starts
/// a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Engine {
    kind: EngineKind,
    version: String,
}

impl Engine {
    /// The engine `CARVE_OCI_ENGINE` names (an error if it cannot be used), else the first of
    /// docker, podman and buildah that can build and run images here; when none can, the
    /// error says why for each and what to install.
    pub fn detect() -> Result<Engine, OciError> {
        Engine::detect_from(std::env::var(ENGINE_ENV).ok().as_deref())
    }

    /// What [`Engine::detect`] does when `CARVE_OCI_ENGINE` is `choice` (unset or empty:
    /// `None`, the first engine that works).
    pub fn detect_from(choice: Option<&str>) -> Result<Engine, OciError> {
        if let Some(value) = choice.filter(|v| !v.trim().is_empty()) {
            let kind = EngineKind::from_name(value).ok_or(OciError::UnknownEngine { value: value.to_string() })?;
            return Engine::probe(kind);
        }
        let mut tried = Vec::new();
        for kind in EngineKind::ALL {
            match Engine::probe(kind) {
                Ok(engine) => return Ok(engine),
                Err(OciError::Unusable { reason, .. }) => tried.push((kind, reason)),
                Err(other) => tried.push((kind, other.to_string())),
            }
        }
        Err(OciError::NoEngine { tried })
    }

    /// `kind` if it can build and run images here ([`OciError::Unusable`] says why not).
    pub fn probe(kind: EngineKind) -> Result<Engine, OciError> {
        let unusable = |reason: String| OciError::Unusable { kind, reason };
        let version = version(kind).map_err(unusable)?;
        let engine = Engine { kind, version };
        match kind {
            // A daemon that answers builds and runs; the client alone does neither.
            EngineKind::Docker => {}
            EngineKind::Podman | EngineKind::Buildah => engine.run_probe().map_err(unusable)?,
        }
        Ok(engine)
    }

    pub fn kind(&self) -> EngineKind {
        self.kind
    }

    /// The engine's version (docker's is the daemon's).
    pub fn version(&self) -> &str {
        &self.version
    }

    pub(crate) fn program(&self) -> &'static str {
        self.kind.name()
    }

    /// Run `/…/true` in a container whose root holds only it and the libraries it loads.
    fn run_probe(&self) -> Result<(), String> {
        let root = tempfile::tempdir().map_err(|e| format!("no temporary folder for the probe: {e}"))?;
        probe_root(root.path())?;
        let true_path = which("true").ok_or("no `true` program on PATH to probe with")?;
        let true_path = true_path.display().to_string();
        let root_arg = root.path().display().to_string();
        match self.kind {
            EngineKind::Podman => {
                let args = ["run", "--rm", "--network=none", "--rootfs", &root_arg, &true_path];
                probe_command(self.kind, &args.map(String::from))
            }
            EngineKind::Buildah => {
                let name = super::run::container_name("probe");
                probe_command(self.kind, &["from".into(), "--name".into(), name.clone(), "scratch".into()])?;
                let steps = [
                    vec!["copy".into(), "--quiet".into(), name.clone(), format!("{root_arg}/."), "/".into()],
                    vec!["run".into(), "--isolation".into(), "chroot".into(), name.clone(), "--".into(), true_path],
                ];
                let result = steps.iter().try_for_each(|args| probe_command(self.kind, args));
                let _ = process::run(&Invocation::new("buildah", vec!["rm".into(), name]), PROBE_TIMEOUT);
                result
            }
            EngineKind::Docker => Ok(()),
        }
    }
}

/// The engine's version, or why it does not answer.
fn version(kind: EngineKind) -> Result<String, String> {
    version_of(kind, kind.name())
}

fn version_of(kind: EngineKind, program: &str) -> Result<String, String> {
    let args: Vec<String> = match kind {
        // The server's version: only a running daemon answers it.
        EngineKind::Docker => vec!["version".into(), "--format".into(), "{{.Server.Version}}".into()],
        EngineKind::Podman => vec!["version".into(), "--format".into(), "{{.Client.Version}}".into()],
        EngineKind::Buildah => vec!["--version".into()],
    };
    let inv = Invocation::new(program, args);
    let finished = match process::run(&inv, PROBE_TIMEOUT) {
        Ok(f) => f,
        Err(OciError::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err("not installed".into());
        }
        Err(e) => return Err(e.to_string()),
    };
    if !finished.success() {
        let why = first_line(&finished.stderr).unwrap_or_else(|| finished.status_text());
        return Err(match kind {
            EngineKind::Docker => format!("the client is installed but no daemon answers ({why})"),
            EngineKind::Podman | EngineKind::Buildah => format!("`{}` failed: {why}", inv.display()),
        });
    }
    Ok(parse_version(kind, &finished.stdout))
}

/// `buildah version 1.28.2 (image-spec …)` → `1.28.2`; docker and podman print it alone.
pub(crate) fn parse_version(kind: EngineKind, stdout: &str) -> String {
    let text = stdout.trim();
    match kind {
        EngineKind::Buildah => text.split_whitespace().nth(2).unwrap_or(text).to_string(),
        EngineKind::Docker | EngineKind::Podman => text.to_string(),
    }
}

fn probe_command(kind: EngineKind, args: &[String]) -> Result<(), String> {
    let inv = Invocation::new(kind.name(), args.to_vec());
    let finished = process::run(&inv, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
    if finished.success() {
        return Ok(());
    }
    let why = first_line(&finished.stderr).unwrap_or_else(|| finished.status_text());
    Err(format!("`{}` fails here: {why}", inv.display()))
}

fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(String::from)
}

/// Lay out in `root` this machine's `true` with the shared libraries `ldd` says it loads,
/// each at its own path: the smallest root file system a container can run.
fn probe_root(root: &Path) -> Result<(), String> {
    let program = which("true").ok_or("no `true` program on PATH to probe with")?;
    let ldd = std::process::Command::new("ldd").arg(&program).output().map_err(|e| format!("`ldd` failed: {e}"))?;
    let mut files = vec![program.clone()];
    files.extend(ldd_paths(&String::from_utf8_lossy(&ldd.stdout)));
    for file in files {
        let dest = root.join(file.strip_prefix("/").unwrap_or(&file));
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::copy(&file, &dest).map_err(|e| format!("copying {} for the probe: {e}", file.display()))?;
    }
    Ok(())
}

/// The absolute library paths in `ldd`'s output (the `=> /path` of each line, or the
/// loader's own path), without the kernel's vDSO.
pub(crate) fn ldd_paths(ldd: &str) -> Vec<PathBuf> {
    ldd.lines()
        .filter_map(|line| {
            let line = line.trim();
            let path = match line.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next()?,
                None => line.split_whitespace().next()?,
            };
            path.starts_with('/').then(|| PathBuf::from(path))
        })
        .collect()
}

/// `program` found on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_parse_in_any_case_and_nothing_else_does() {
        assert_eq!(EngineKind::from_name(" Buildah "), Some(EngineKind::Buildah));
        assert_eq!(EngineKind::from_name("podman"), Some(EngineKind::Podman));
        assert_eq!(EngineKind::from_name("containerd"), None);
        assert_eq!(EngineKind::ALL.map(EngineKind::name), ["docker", "podman", "buildah"]);
    }

    #[test]
    fn an_engine_name_that_is_none_of_the_three_is_refused_before_probing() {
        let err = Engine::detect_from(Some("containerd")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CARVE_OCI_ENGINE=\"containerd\" is not an engine: use docker, podman or buildah (or unset it to choose)"
        );
    }

    #[test]
    fn versions_are_read_from_each_engines_output() {
        let buildah = "buildah version 1.28.2 (image-spec 1.1.0-rc2, runtime-spec 1.0.2-dev)\n";
        assert_eq!(parse_version(EngineKind::Buildah, buildah), "1.28.2");
        assert_eq!(parse_version(EngineKind::Docker, "28.2.2\n"), "28.2.2");
    }

    #[test]
    fn ldd_output_gives_the_libraries_and_the_loader() {
        let ldd = "\tlinux-vdso.so.1 (0x00007f16c314d000)\n\
                   \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f16c2f4f000)\n\
                   \t/lib64/ld-linux-x86-64.so.2 (0x00007f16c314f000)\n\
                   \tlibgone.so => not found\n";
        assert_eq!(
            ldd_paths(ldd),
            [PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6"), PathBuf::from("/lib64/ld-linux-x86-64.so.2")]
        );
    }

    #[test]
    fn the_probe_root_holds_true_and_what_it_loads() {
        let root = tempfile::tempdir().unwrap();
        probe_root(root.path()).unwrap();
        let program = which("true").unwrap();
        let ldd = std::process::Command::new("ldd").arg(&program).output().unwrap();
        let libs = ldd_paths(&String::from_utf8_lossy(&ldd.stdout));
        assert!(!libs.is_empty());
        for file in std::iter::once(&program).chain(&libs) {
            assert!(root.path().join(file.strip_prefix("/").unwrap()).is_file(), "{} not copied", file.display());
        }
    }

    #[test]
    fn an_engine_that_is_not_installed_is_unusable_with_that_reason() {
        assert_eq!(version_of(EngineKind::Buildah, "carve-no-such-engine"), Err("not installed".to_string()));
    }

    #[test]
    fn a_docker_client_without_a_daemon_is_unusable_with_the_clients_words() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("docker");
        let script =
            "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n";
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let reason = version_of(EngineKind::Docker, &fake.display().to_string()).unwrap_err();
        assert_eq!(
            reason,
            "the client is installed but no daemon answers \
             (Cannot connect to the Docker daemon at unix:///var/run/docker.sock.)"
        );
    }
}
