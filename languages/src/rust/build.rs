//! The build check after masking: `cargo check --bins --tests --examples` in the masked
//! tree — the targets `cargo test` builds, each as it builds them (not `--all-targets`:
//! benchmarks are not built by `cargo test`, and many crates' benches need nightly, e.g.
//! servo/rust-smallvec's `#![feature(test)]`, so the original would fail the check too) —
//! with `CARGO_TARGET_DIR` outside the tree so it stays exactly what carve wrote.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::BuildCheckError;

/// The target directory used for `root`: under the system temp dir, one per project — keyed by
/// the root `Cargo.toml` and `Cargo.lock`, not by the tree's path — so the checks of every masked
/// copy of one repository reuse its dependencies' artefacts. Keyed by path, each candidate's
/// temporary tree built every dependency again and left a ~150 MB directory behind (691 of them,
/// 8 GB, after a day's dataset run here). Cargo hashes a workspace member's artefacts by its path
/// relative to the workspace, so copies at different paths overwrite, not accumulate; concurrent
/// checks of one project wait for cargo's lock on the directory.
pub fn target_dir_for(root: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for name in ["Cargo.toml", "Cargo.lock"] {
        hasher.update(name.as_bytes());
        match std::fs::read(root.join(name)) {
            Ok(bytes) => {
                hasher.update((bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update(b"\0missing"),
        }
    }
    std::env::temp_dir().join(format!("carve-cargo-check-{}", &hex::encode(hasher.finalize())[..16]))
}

/// The build check's command after `cargo`.
pub const CHECK: &[&str] = &["check", "--bins", "--tests", "--examples"];

/// Run `cargo check --bins --tests --examples --offline --quiet` in `root` (the masked tree; its own
/// `Cargo.toml` decides the workspace). `Ok` when it builds; otherwise the compiler output.
pub fn build_check(root: &Path) -> Result<(), BuildCheckError> {
    build_check_with(root, &[], &[])
}

/// The flags of the test command `command` that decide what its tests compile, for the build
/// check: `--workspace`, and the feature flags (`--features …`/`-F …`, `--all-features`,
/// `--no-default-features`). bitflags' CI tests with `--features example_generated,serde,std`:
/// checked without them, a masked state whose `serde` module still named a removed type passed
/// the check and then failed to compile under the tests.
pub fn check_flags(command: &crate::runner::TestCommand) -> Vec<String> {
    let crate::runner::TestCommand::Cargo { args, workspace, .. } = command else { return Vec::new() };
    let mut flags: Vec<String> = Vec::new();
    if *workspace {
        flags.push("--workspace".into());
    }
    let mut words = args.iter();
    while let Some(w) = words.next() {
        match w.as_str() {
            "--all-features" | "--no-default-features" => flags.push(w.clone()),
            "--features" | "-F" => {
                flags.push(w.clone());
                flags.extend(words.next().cloned());
            }
            _ if w.starts_with("--features=") => flags.push(w.clone()),
            _ => {}
        }
    }
    flags
}

/// [`build_check`] with extra cargo flags (from [`check_flags`]), named in the failure's
/// command, and the environment's variables `vars` (its `CARGO_HOME`: smol-rs/fastrand's
/// lockfile pins a wasm-only dev-dependency that only the environment's registry holds, so
/// the check with the user's `CARGO_HOME` failed offline on every candidate).
pub fn build_check_with(root: &Path, flags: &[String], vars: &[(String, String)]) -> Result<(), BuildCheckError> {
    if !root.join("Cargo.toml").is_file() {
        return Err(BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!(
                "no Cargo.toml in {}; the masked tree is not a Cargo project, so it cannot be checked",
                root.display()
            ),
        });
    }
    let target = target_dir_for(root);
    let _held = hold_for_check(&target, root);
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(CHECK)
        .args(flags)
        .args(["--offline", "--quiet", "--message-format", "short"])
        .current_dir(root)
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .map_err(|e| BuildCheckError::NotCheckable {
            root: root.to_path_buf(),
            message: format!(
                "cargo was not found or could not start in {}: {e}; install Rust (https://rustup.rs) or put cargo on PATH",
                root.display()
            ),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stderr).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stdout));
    Err(BuildCheckError::Failed {
        command: format!(
            "cargo {}",
            CHECK.iter().copied().chain(flags.iter().map(String::as_str)).collect::<Vec<_>>().join(" ")
        ),
        root: root.to_path_buf(),
        detail: format!(" (exit status {}); the masking left code that does not compile", out.status),
        output,
    })
}

/// Make the shared `target` directory safe for `root`'s check: take an exclusive lock on it (held
/// until the returned file is dropped), then set the modification time of every file of `root`
/// (not under `.git`, not in its top-level `target/`, not through symlinks) to now. Cargo decides freshness by
/// mtimes, and copies of one project share `target`: a masked tree written before another copy
/// was checked would otherwise look older than that copy's artefacts, and cargo would report the
/// other copy's result. Under the lock nothing is built between the touch and this check. `None`
/// (no lock) when the directory or the lock file cannot be made; the check then runs as cargo
/// alone would run it.
fn hold_for_check(target: &Path, root: &Path) -> Option<std::fs::File> {
    std::fs::create_dir_all(target).ok()?;
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target.join(".carve-check.lock"))
        .ok()?;
    lock.lock().ok()?;
    let now = std::time::SystemTime::now();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(|e| match e.file_name().to_str() {
            Some(".git") => e.depth() == 0,
            Some("target") => e.depth() != 1,
            _ => true,
        })
        .build();
    for entry in walk.flatten() {
        if entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(file) = std::fs::File::open(entry.path()) {
                let _ = file.set_modified(now);
            }
        }
    }
    Some(lock)
}

/// The source locations the errors of a failed `cargo check` name, from its short form
/// (`src/x.rs:12:5: error[E0425]: …`, what [`build_check`] asks for) or the human one (an
/// `error…` header, then `  --> src/x.rs:12:5`): (path relative to `root`, 1-based line),
/// in order of appearance, each once. Warnings, notes and locations outside `root` (the
/// registry, the standard library) are left out.
pub fn error_locations(root: &Path, output: &str) -> Vec<(String, u32)> {
    let roots: Vec<PathBuf> =
        [Some(root.to_path_buf()), std::fs::canonicalize(root).ok()].into_iter().flatten().collect();
    let mut out: Vec<(String, u32)> = Vec::new();
    let mut in_error = false;
    for line in output.lines() {
        let trimmed = line.trim_start();
        let location = if let Some(rest) = trimmed.strip_prefix("--> ") {
            if !in_error {
                continue;
            }
            rest.trim()
        } else {
            if line.starts_with("error") {
                in_error = true;
            } else if line.starts_with("warning") {
                in_error = false;
            }
            // Short form: `path:line:col: error…`.
            match line.split_once(": error") {
                Some((loc, _)) if !line.starts_with("error") => loc,
                _ => continue,
            }
        };
        let mut parts = location.rsplitn(3, ':');
        let (Some(_col), Some(row), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let Ok(row) = row.parse::<u32>() else { continue };
        let path = Path::new(path);
        let rel = if path.is_absolute() {
            match roots.iter().find_map(|r| path.strip_prefix(r).ok()) {
                Some(rel) => rel.to_path_buf(),
                None => continue,
            }
        } else {
            path.to_path_buf()
        };
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if rel.starts_with("..") || !root.join(&rel).is_file() {
            continue;
        }
        if !out.contains(&(rel.clone(), row)) {
            out.push((rel, row));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// servo/rust-smallvec: `benches/bench.rs` starts with `#![feature(test)]`, so every
    /// masked state failed `cargo check --all-targets` on stable — as the original does.
    /// The check builds what `cargo test` builds; a broken test file still fails it.
    #[test]
    #[carve_testutil::needs("cargo")]
    fn a_nightly_only_bench_does_not_fail_the_check_but_a_test_does() {
        let d = tempfile::tempdir().unwrap();
        let write = |p: &str, t: &str| {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        };
        write("Cargo.toml", "[package]\nname = \"sv\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[workspace]\n");
        write("Cargo.lock", "version = 3\n\n[[package]]\nname = \"sv\"\nversion = \"0.1.0\"\n");
        write("src/lib.rs", "pub fn one() -> u8 {\n    1\n}\n");
        write(
            "benches/bench.rs",
            "#![feature(test)]\nextern crate test;\n\n#[bench]\nfn b(_: &mut test::Bencher) {}\n",
        );
        write("tests/t.rs", "#[test]\nfn t() {\n    assert_eq!(sv::one(), 1);\n}\n");
        let checked = build_check(d.path());
        let _ = std::fs::remove_dir_all(target_dir_for(d.path()));
        assert!(checked.is_ok(), "{checked:?}");
        write("tests/t.rs", "#[test]\nfn t() {\n    assert_eq!(sv::two(), 2);\n}\n");
        let err = build_check(d.path()).unwrap_err().to_string();
        let _ = std::fs::remove_dir_all(target_dir_for(d.path()));
        assert!(err.contains("cargo check --bins --tests --examples"), "{err}");
    }

    /// Two copies of one project share a target directory. The broken copy is written first,
    /// so its files are older than the good copy's artefacts: by mtimes alone cargo would call
    /// it fresh and pass it. The check must still fail it.
    #[test]
    #[carve_testutil::needs("cargo")]
    fn a_copy_written_before_another_was_checked_is_still_checked_itself() {
        let write = |d: &Path, p: &str, t: &str| {
            let path = d.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        };
        let project = |d: &Path, body: &str| {
            let name = format!("mt{}", std::process::id());
            write(
                d,
                "Cargo.toml",
                &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n"),
            );
            write(d, "Cargo.lock", &format!("version = 3\n\n[[package]]\nname = \"{name}\"\nversion = \"0.1.0\"\n"));
            write(d, "src/lib.rs", body);
        };
        let (broken, good) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        project(broken.path(), "pub fn one() -> u8 {\n    missing()\n}\n");
        std::thread::sleep(std::time::Duration::from_millis(50));
        project(good.path(), "pub fn one() -> u8 {\n    1\n}\n");
        assert_eq!(target_dir_for(broken.path()), target_dir_for(good.path()));
        let target = target_dir_for(good.path());
        let _ = std::fs::remove_dir_all(&target);
        let good_check = build_check(good.path());
        let broken_check = build_check(broken.path());
        let _ = std::fs::remove_dir_all(&target);
        assert!(good_check.is_ok(), "{good_check:?}");
        let err = broken_check.expect_err("the broken copy passed: cargo took the good copy's artefacts as its own");
        assert!(err.to_string().contains("missing"), "{err}");
    }

    /// bitflags: code behind `#[cfg(feature = "serde")]` named a type the mask removed. The
    /// check without the tests' features passed it; with them it fails, naming the flags.
    #[test]
    #[carve_testutil::needs("cargo")]
    fn the_check_builds_the_features_the_tests_build() {
        let d = tempfile::tempdir().unwrap();
        let name = format!("ft{}", std::process::id());
        let write = |p: &str, t: &str| {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        };
        write(
            "Cargo.toml",
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\nextra = []\n\n[workspace]\n"
            ),
        );
        write("Cargo.lock", &format!("version = 3\n\n[[package]]\nname = \"{name}\"\nversion = \"0.1.0\"\n"));
        write("src/lib.rs", "#[cfg(feature = \"extra\")]\npub fn extra() -> u8 {\n    gone()\n}\n");
        let command = crate::runner::TestCommand::Cargo {
            args: vec!["--features".into(), "extra".into(), "--release".into()],
            test_args: vec![],
            workspace: false,
            nextest: true,
        };
        assert_eq!(check_flags(&command), ["--features", "extra"]);
        let plain = build_check(d.path());
        let featured = build_check_with(d.path(), &check_flags(&command), &[]);
        let _ = std::fs::remove_dir_all(target_dir_for(d.path()));
        assert!(plain.is_ok(), "{plain:?}");
        let err = featured.expect_err("the feature's code names a function that is gone").to_string();
        assert!(err.contains("cargo check --bins --tests --examples --features extra"), "{err}");
    }

    #[test]
    fn check_flags_take_features_and_the_workspace_only() {
        let cargo = |args: &[&str], workspace: bool| crate::runner::TestCommand::Cargo {
            args: args.iter().map(|a| a.to_string()).collect(),
            test_args: vec!["--test-threads=1".into()],
            workspace,
            nextest: false,
        };
        assert_eq!(check_flags(&cargo(&["--all-features", "--release"], true)), ["--workspace", "--all-features"]);
        assert_eq!(
            check_flags(&cargo(&["--no-default-features", "-F", "std", "--features=serde"], false)),
            ["--no-default-features", "-F", "std", "--features=serde"]
        );
        assert!(check_flags(&cargo(&[], false)).is_empty());
        let go = crate::runner::TestCommand::GoTest { args: vec!["--features".into()], packages: None };
        assert!(check_flags(&go).is_empty());
    }

    /// Captured from `cargo check --all-targets --message-format short` on a copy of
    /// fixtures/rust/geometry with `convert` renamed and a call misspelt (Rust 1.95).
    const SHORT: &str = "\
src/report.rs:6:20: error[E0432]: unresolved import `crate::units::convert`: no `convert` in `units`
src/shapes.rs:45:46: error[E0599]: no method named `diametre` found for reference `&shapes::Circle` in the current scope
src/shapes.rs:45:46: error[E0599]: no method named `diametre` found for reference `&Circle` in the current scope
src/units.rs:48:20: error[E0425]: cannot find function `convert` in this scope: not found in this scope
src/units.rs:33:4: warning: function `convert_gone` is never used
error: could not compile `geometry` (lib) due to 2 previous errors
error: could not compile `geometry` (lib test) due to 3 previous errors
";

    /// The same build in cargo's human form (abridged: the help text of one error cut).
    const HUMAN: &str = "\
warning: function `convert_gone` is never used
  --> src/units.rs:33:4
   |
error[E0432]: unresolved import `crate::units::convert`
 --> src/report.rs:6:20
  |
6 | use crate::units::{convert, round_to, Unit};
  |                    ^^^^^^^ no `convert` in `units`
  |
  = help: consider importing this module instead:
          std::convert

error[E0599]: no method named `diametre` found for reference `&Circle` in the current scope
  --> src/shapes.rs:45:46
   |
45 |         round_to(std::f64::consts::PI * self.diametre(), 3)
   |                                              ^^^^^^^^
   |
error[E0425]: cannot find function `convert` in this scope
  --> src/units.rs:48:20
   |
48 |         assert_eq!(convert(1.0, Unit::Metre, Unit::Centimetre), 100.0);
   |                    ^^^^^^^ not found in this scope
  --> /home/u/.cargo/registry/src/index.crates.io-1/x-1.0.0/src/lib.rs:3:1
";

    fn fixture_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/geometry")
    }

    #[test]
    fn error_locations_of_the_short_form() {
        let got = error_locations(&fixture_root(), SHORT);
        let want = [("src/report.rs", 6), ("src/shapes.rs", 45), ("src/units.rs", 48)];
        assert_eq!(got, want.map(|(p, l)| (p.to_string(), l)));
    }

    #[test]
    fn error_locations_of_the_human_form_skip_warnings_and_outside_files() {
        let got = error_locations(&fixture_root(), HUMAN);
        let want = [("src/report.rs", 6), ("src/shapes.rs", 45), ("src/units.rs", 48)];
        assert_eq!(got, want.map(|(p, l)| (p.to_string(), l)));
        // Absolute paths inside the root are made relative.
        let root = fixture_root().canonicalize().unwrap();
        let abs = format!("{}/src/lib.rs:16:1: error[E0308]: mismatched types\n", root.display());
        assert_eq!(error_locations(&root, &abs), [("src/lib.rs".to_string(), 16)]);
    }

    #[test]
    fn missing_manifest_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(build_check(dir.path()), Err(BuildCheckError::NotCheckable { .. })));
    }

    #[test]
    fn target_dir_is_outside_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!target_dir_for(dir.path()).starts_with(dir.path()));
    }

    /// Two masked copies of one repository share a target directory (their dependencies are
    /// built once); another project, or the same one with another lockfile, gets its own.
    #[test]
    fn copies_of_one_project_share_a_target_dir_and_other_projects_do_not() {
        let copy = |toml: &str, lock: Option<&str>| {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("Cargo.toml"), toml).unwrap();
            if let Some(lock) = lock {
                std::fs::write(d.path().join("Cargo.lock"), lock).unwrap();
            }
            d
        };
        let toml = "[package]\nname = \"a\"\nversion = \"0.1.0\"\n";
        let (one, two) = (copy(toml, Some("version = 3\n")), copy(toml, Some("version = 3\n")));
        assert_eq!(target_dir_for(one.path()), target_dir_for(two.path()));
        let other = copy(&toml.replace("\"a\"", "\"b\""), Some("version = 3\n"));
        assert_ne!(target_dir_for(one.path()), target_dir_for(other.path()));
        let relocked = copy(toml, Some("version = 4\n"));
        assert_ne!(target_dir_for(one.path()), target_dir_for(relocked.path()));
        let unlocked = copy(toml, None);
        assert_ne!(target_dir_for(one.path()), target_dir_for(unlocked.path()));
    }
}
