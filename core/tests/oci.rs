//! The OCI runtime for real, with the engine that works here (buildah with `--isolation
//! chroot` on carve's machines): a small image built `FROM debian:bookworm-slim`, commands run
//! in it on a copied folder with results copied out, the user's folder untouched, nothing
//! left behind. Where the base image is missing, `scripts/base-images debian` makes it first
//! (once per run of this file, ≈35 s on an idle machine; skipped when it is there).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use carve_core::oci::{BuildSpec, Engine, EngineKind, ImageInfo, OciError, RunSpec};
use carve_testutil::{needs, tree_snapshot, workspace_root, write_files};

const BASE: &str = "debian:bookworm-slim";

/// The detected engine, with the base image made where this machine cannot pull it.
fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let engine = Engine::detect().unwrap_or_else(|e| panic!("{e}"));
        // docker pulls the official image; buildah and podman here build from local ones.
        if engine.kind() != EngineKind::Docker && !engine.image_exists(BASE).unwrap() {
            let script = workspace_root().join("scripts/base-images");
            let status = Command::new(&script).arg("debian").status().expect("scripts/base-images runs");
            assert!(status.success(), "{} debian failed", script.display());
        }
        engine
    })
}

/// A tag no other test run uses, removed with the image when dropped.
struct TestImage(String);

impl TestImage {
    fn new(what: &str) -> TestImage {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos();
        TestImage(format!("localhost/carve-core-test-{what}:{}-{nanos}", std::process::id()))
    }
}

impl Drop for TestImage {
    fn drop(&mut self) {
        let _ = engine().remove_image(&self.0);
    }
}

/// A small image of this test's own (the build's layers are cached, so it is quick after the
/// first), removed when the returned guard is dropped.
fn small_image() -> TestImage {
    let ctx = tempfile::tempdir().unwrap();
    let image = TestImage::new("small");
    build_small_image(ctx.path(), &image.0);
    image
}

fn build_small_image(ctx: &Path, tag: &str) -> ImageInfo {
    write_files(
        ctx,
        &[
            ("greeting.txt", "hello from the context\n"),
            (
                "env/Dockerfile",
                "FROM debian:bookworm-slim\nCOPY greeting.txt /opt/greeting.txt\nRUN echo \"built as $(id -un)\" > /opt/built.txt\n",
            ),
        ],
    );
    engine().build(&BuildSpec::new(ctx, ctx.join("env/Dockerfile"), tag)).unwrap_or_else(|e| panic!("{e}"))
}

/// Held by the tests that build or run, so that each sees only its own containers in the
/// engine's list.
/// A lock on a file, not a mutex: nextest runs each test in a process of its own.
fn one_run_at_a_time() -> std::fs::File {
    let path = std::env::temp_dir().join("carve-core-oci-tests.lock");
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).unwrap();
    file.lock().unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
    file
}

/// The working containers this process left (named `carve-run-<pid>-…`).
fn leftover_containers() -> Vec<String> {
    let prefix = format!("carve-run-{}-", std::process::id());
    every_container().into_iter().filter(|l| l.starts_with(&prefix)).collect()
}

/// Every container of the engine, by name.
fn every_container() -> Vec<String> {
    let engine = engine();
    let out = match engine.kind() {
        EngineKind::Buildah => Command::new("buildah").args(["containers", "--format", "{{.ContainerName}}"]).output(),
        EngineKind::Docker | EngineKind::Podman => {
            Command::new(engine.kind().name()).args(["ps", "--all", "--format", "{{.Names}}"]).output()
        }
    }
    .expect("the engine lists its containers");
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

#[needs("buildah")]
fn detection_picks_the_first_engine_that_builds_and_runs_and_obeys_carve_oci_engine() {
    let detected = engine();
    let first_usable = EngineKind::ALL.into_iter().find(|k| Engine::probe(*k).is_ok());
    assert_eq!(Some(detected.kind()), first_usable);
    assert!(!detected.version().is_empty());
    // What CARVE_OCI_ENGINE=buildah / =containerd do.
    assert_eq!(Engine::detect_from(Some("buildah")).unwrap().kind(), EngineKind::Buildah);
    let err = Engine::detect_from(Some("containerd")).unwrap_err();
    assert!(matches!(err, OciError::UnknownEngine { .. }), "{err}");
}

#[needs("buildah")]
fn a_built_image_is_described_and_found_and_gone_once_removed() {
    let _serial = one_run_at_a_time();
    let ctx = tempfile::tempdir().unwrap();
    let image = TestImage::new("describe");
    let info = build_small_image(ctx.path(), &image.0);
    assert_eq!(info.tag, image.0);
    assert!(info.id.starts_with("sha256:") && info.id.len() == 71, "{info:?}");
    // debian:bookworm-slim is ~75 MB; the two small layers add little.
    assert!((20_000_000..400_000_000).contains(&info.size_bytes), "{info:?}");
    assert_eq!(engine().image_info(&image.0).unwrap(), info);
    assert!(engine().image_exists(&image.0).unwrap());
    assert!(engine().remove_image(&image.0).unwrap());
    assert!(!engine().image_exists(&image.0).unwrap());
    assert!(!engine().remove_image(&image.0).unwrap(), "a second removal finds nothing");
}

#[needs("buildah")]
fn a_command_runs_on_a_copy_of_the_folder_and_its_results_come_out() {
    let _serial = one_run_at_a_time();
    let image = small_image();
    let user = tempfile::tempdir().unwrap();
    let repo = user.path().join("repo");
    write_files(&repo, &[("src/a.txt", "alpha\n"), ("src/deep/b.txt", "beta\n")]);
    std::os::unix::fs::symlink("src/a.txt", repo.join("link")).unwrap();
    let before = tree_snapshot(&repo);
    let results = user.path().join("results");
    let script = "cat /opt/greeting.txt /opt/built.txt; echo \"$GREETING from $(pwd)\"; \
                  readlink link; cat src/deep/b.txt; echo changed > src/a.txt; \
                  mkdir -p /work/out; wc -c < src/a.txt > /work/out/size; echo to-stderr >&2; exit 3";
    let spec = RunSpec {
        copy_in: vec![(repo.clone(), "/work/repo".into())],
        workdir: Some("/work/repo".into()),
        command: vec!["sh".into(), "-c".into(), script.into()],
        env: [("GREETING".to_string(), "hi".to_string())].into(),
        copy_out: vec![("/work/out".into(), results.join("out")), ("/work/nothing".into(), results.join("nothing"))],
        ..RunSpec::new(Duration::from_secs(120))
    };
    let out = engine().run(&image.0, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((out.exit_code, out.timed_out, out.success()), (Some(3), false, false));
    assert_eq!(out.stdout, "hello from the context\nbuilt as root\nhi from /work/repo\nsrc/a.txt\nbeta\n");
    assert_eq!(out.stderr, "to-stderr\n");
    assert_eq!(out.copied_out, [results.join("out")]);
    assert_eq!(out.missing_out, ["/work/nothing"]);
    assert_eq!(std::fs::read_to_string(results.join("out/size")).unwrap(), "8\n");
    assert!(!results.join("nothing").exists());
    assert_eq!(tree_snapshot(&repo), before, "the user's folder changed");
    assert_eq!(leftover_containers(), Vec::<String>::new());
}

#[needs("buildah")]
fn a_command_past_its_timeout_is_killed_its_results_still_come_out_and_its_container_goes() {
    let _serial = one_run_at_a_time();
    let image = small_image();
    let host = tempfile::tempdir().unwrap();
    // An odd duration, to find the process on this machine if it survived.
    let script = "echo started; echo partial > /tmp/partial; sleep 617.25";
    let spec = RunSpec {
        command: vec!["sh".into(), "-c".into(), script.into()],
        copy_out: vec![("/tmp/partial".into(), host.path().join("partial"))],
        ..RunSpec::new(Duration::from_secs(3))
    };
    let out = engine().run(&image.0, &spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((out.exit_code, out.timed_out, out.stdout.as_str()), (None, true, "started\n"));
    assert!(out.duration < Duration::from_secs(30), "{:?}", out.duration);
    assert_eq!(std::fs::read_to_string(host.path().join("partial")).unwrap(), "partial\n");
    let ps = Command::new("pgrep").args(["-f", "sleep 617.25"]).output().unwrap();
    assert!(ps.stdout.is_empty(), "the command outlived its timeout: {}", String::from_utf8_lossy(&ps.stdout));
    assert_eq!(leftover_containers(), Vec::<String>::new());
}

#[needs("buildah")]
fn a_failed_build_says_why_and_a_missing_base_or_image_is_named() {
    let ctx = tempfile::tempdir().unwrap();
    // The base under a name of this process's own: the build's working container is named
    // after it, so a container it leaves is told from those of builds running beside (the
    // e2e tests build images at the same time).
    let base = format!("localhost/carve-failing-base-{}:1", std::process::id());
    let kind = engine().kind().name();
    let tagged = Command::new(kind).args(["tag", "debian:bookworm-slim", &base]).status().unwrap();
    assert!(tagged.success(), "{kind} tag debian:bookworm-slim {base}");
    write_files(ctx.path(), &[("Dockerfile", &format!("FROM {base}\nRUN echo boom-marker; exit 7\n"))]);
    let _serial = one_run_at_a_time();
    let before = every_container();
    let failing = TestImage::new("failing");
    let err = engine().build(&BuildSpec::new(ctx.path(), ctx.path().join("Dockerfile"), &failing.0)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, OciError::Command { .. }) && text.contains("boom-marker"), "{text}");

    write_files(ctx.path(), &[("Dockerfile", "FROM localhost/carve-no-such-base:1\nRUN true\n")]);
    let err = engine().build(&BuildSpec::new(ctx.path(), ctx.path().join("Dockerfile"), &failing.0)).unwrap_err();
    match &err {
        OciError::BaseImageMissing { missing, .. } => assert_eq!(missing, &["localhost/carve-no-such-base:1"]),
        other => panic!("expected BaseImageMissing, got {other}"),
    }
    assert!(err.to_string().contains("scripts/base-images"), "{err}");

    let err = engine().run(
        "localhost/carve-no-such-image:1",
        &RunSpec { command: vec!["true".into()], ..RunSpec::new(Duration::from_secs(60)) },
    );
    assert!(matches!(err, Err(OciError::ImageMissing { .. })), "{err:?}");
    let _ = Command::new(kind).args(["rmi", &base]).output();
    let stem = format!("carve-failing-base-{}", std::process::id());
    let left: Vec<String> =
        every_container().into_iter().filter(|n| n.contains(&stem) && !before.contains(n)).collect();
    assert_eq!(left, Vec::<String>::new(), "a failed build left a container");
    assert_eq!(leftover_containers(), Vec::<String>::new(), "a failed run left a container");
}

#[needs("buildah")]
fn a_missing_dockerfile_or_context_is_named_before_anything_runs() {
    let ctx = tempfile::tempdir().unwrap();
    let absent: PathBuf = ctx.path().join("Dockerfile");
    let err = engine().build(&BuildSpec::new(ctx.path(), &absent, "localhost/carve-core-test-never:1")).unwrap_err();
    assert!(err.to_string().starts_with(&format!("{}: ", absent.display())), "{err}");
}
