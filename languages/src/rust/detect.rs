//! Detecting a Rust project's test set-up from its own files, for `carve init`.

use std::path::Path;

use crate::Language;
use crate::runner::{Detection, TestCommand};

/// A Cargo project when the repository root holds `Cargo.toml`: `cargo test`, over every
/// workspace member when the manifest has a `[workspace]` with members; nextest is noted
/// when `cargo nextest` works.
pub fn detect(repo: &Path) -> Option<Detection> {
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).ok()?;
    let mut reasons = vec!["language = rust: found Cargo.toml".to_string()];
    let has_table = |name: &str| manifest.lines().any(|l| l.trim() == format!("[{name}]"));
    let workspace = has_table("workspace") && manifest.lines().any(|l| l.trim_start().starts_with("members"));
    if workspace {
        reasons.push(
            "workspace = true: Cargo.toml has a [workspace] with members, so every member is tested (--workspace)"
                .to_string(),
        );
    } else if !has_table("package") && has_table("workspace") {
        reasons.push("a virtual workspace without members listed: cargo tests its default members".to_string());
    }
    let installed = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    let custom = custom_harness(repo, &manifest);
    let nextest = installed && custom.is_none();
    reasons.push(match (installed, custom) {
        (true, None) => {
            "runner = cargo nextest (cargo-nextest is installed: nextest = true; doctests with cargo test --doc)"
                .to_string()
        }
        (true, Some((file, test))) => format!(
            "runner = cargo test: {file} declares the test `{test}` with `harness = false`, whose own main need not \
             answer cargo-nextest's `--list` (servo/rust-url's `url_wpt` does not, and nextest then runs nothing)"
        ),
        (false, _) => "runner = cargo test (cargo-nextest is not installed)".to_string(),
    });
    let setup = if repo.join("Cargo.lock").is_file() {
        "cargo fetch --locked".to_string()
    } else {
        reasons.push("no Cargo.lock: carve runs cargo with --locked and writes nothing into the tree, so `cargo generate-lockfile` must run first".to_string());
        "cargo generate-lockfile && cargo fetch --locked".to_string()
    };
    let args = match text_table(&manifest).and_then(|m| ci_features(repo, &m, workspace)) {
        Some((args, file, line)) => {
            reasons.push(format!(
                "features = {}: {file} runs `{line}`, so the tests that need those features are built and run as the \
                 project's CI runs them",
                args.join(" ")
            ));
            args
        }
        None => Vec::new(),
    };
    let command = TestCommand::Cargo { args, test_args: Vec::new(), workspace, nextest };
    Some(Detection { language: Language::Rust, command, setup: Some(setup), reasons, manifest: true })
}

fn text_table(text: &str) -> Option<toml::Table> {
    text.parse::<toml::Table>().ok()
}

/// Feature names that ask for a nightly compiler or an unstable API: `--all-features` would
/// not build on the stable toolchain carve sets up.
const UNSTABLE_FEATURES: [&str; 3] = ["nightly", "unstable", "simd"];

/// The feature flags of the `cargo test` (`cargo nextest run`, `cargo hack test`) lines of the
/// repository's CI configuration ([`crate::env::ci_commands`]: `make` targets followed), as cargo
/// arguments, with the file and the line. `--all-features` where a line has it (unless a
/// feature of the root manifest asks for nightly); `cargo hack test --feature-powerset` (or
/// `--each-feature`) tests every feature but its `--exclude-features` (rust-lang/log excludes
/// the `max_level_*` ones, which switch logging off): their union, less those asking for
/// nightly; else the line's `--features`/`-F` list with the most features. A list is taken
/// only for a single package, whose manifest must declare each name (a feature of one
/// workspace member is an error for the others). Lines with `--no-default-features` (a
/// reduced build), a `+nightly`/`+beta` toolchain, `-Z` or a `${{ … }}` expression are not
/// taken; without such a line, `None` (the default features).
fn ci_features(repo: &Path, manifest: &toml::Table, workspace: bool) -> Option<(Vec<String>, String, String)> {
    let declared: Vec<String> = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .map(|t| t.keys().filter(|k| *k != "default").cloned().collect())
        .unwrap_or_default();
    let optional: Vec<String> = manifest
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| {
            t.iter()
                .filter(|(_, v)| v.get("optional").and_then(|o| o.as_bool()) == Some(true))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let asks_nightly = |f: &String| UNSTABLE_FEATURES.iter().any(|u| f.contains(u));
    let mut best: Option<(usize, Vec<String>, String, String)> = None;
    for (file, command) in crate::env::ci_commands(repo) {
        let command = command.as_str();
        let args = match cargo_test_features(command) {
            Some(Features::All) if !declared.iter().any(asks_nightly) => vec!["--all-features".to_string()],
            Some(Features::AllBut(excluded)) if !workspace => {
                let names: Vec<&String> =
                    declared.iter().filter(|f| !excluded.contains(f) && !asks_nightly(f)).collect();
                if names.is_empty() {
                    continue;
                }
                vec!["--features".into(), names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(",")]
            }
            Some(Features::List(names)) if !workspace => {
                let known = |n: &String| declared.contains(n) || optional.contains(n);
                if !names.iter().all(known) {
                    continue;
                }
                vec!["--features".into(), names.join(",")]
            }
            _ => continue,
        };
        let rank = if args[0] == "--all-features" { usize::MAX } else { args[1].split(',').count() };
        if best.as_ref().is_none_or(|(r, ..)| rank > *r) {
            let shown = command.trim().trim_start_matches("- ").trim_start_matches("run:").trim().to_string();
            best = Some((rank, args, file.clone(), shown));
        }
    }
    best.map(|(_, args, file, line)| (args, file, line))
}

/// What one CI command's feature flags ask of cargo's tests (see [`cargo_test_features`]).
#[derive(Debug, PartialEq, Eq)]
enum Features {
    All,
    /// Every feature but these (`cargo hack test --feature-powerset --exclude-features …`).
    AllBut(Vec<String>),
    /// These, sorted.
    List(Vec<String>),
}

/// The feature flags of one shell command when it runs cargo's tests: `--all-features`,
/// `cargo hack`'s powerset or each feature, or a `--features`/`-F` list (`"a b"`, `a,b`,
/// `--features=a`); `None` for another command, one without feature flags, or one not taken
/// (see [`ci_features`]).
fn cargo_test_features(command: &str) -> Option<Features> {
    if command.contains("${{") || command.contains("--no-default-features") || command.contains(" -Z") {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let cargo = words.iter().position(|w| *w == "cargo")?;
    let mut rest = &words[cargo + 1..];
    if let Some(toolchain) = rest.first().and_then(|w| w.strip_prefix('+')) {
        if toolchain.starts_with("nightly") || toolchain.starts_with("beta") {
            return None;
        }
        rest = &rest[1..];
    }
    let hack = rest.starts_with(&["hack", "test"]);
    if !(rest.first() == Some(&"test") || rest.starts_with(&["nextest", "run"]) || hack) {
        return None;
    }
    if rest.contains(&"--all-features") {
        return Some(Features::All);
    }
    let lists = |flags: &[&str]| {
        let mut names: Vec<String> = Vec::new();
        let mut i = 0;
        while i < rest.len() {
            let w = rest[i];
            let value = if let Some(v) = flags.iter().find_map(|f| w.strip_prefix(&format!("{f}="))) {
                Some(v.to_string())
            } else if flags.contains(&w) {
                // A quoted list may span words: `--features "serde std"`.
                let mut v = rest.get(i + 1).map(|s| s.to_string()).unwrap_or_default();
                i += 1;
                for quote in ['"', '\''] {
                    if v.starts_with(quote) && !(v.len() > 1 && v.ends_with(quote)) {
                        while i + 1 < rest.len() && !v.ends_with(quote) {
                            i += 1;
                            v.push(' ');
                            v.push_str(rest[i]);
                        }
                    }
                }
                Some(v)
            } else {
                None
            };
            if let Some(v) = value {
                let v = v.trim_matches(['"', '\'']);
                names.extend(v.split([',', ' ']).filter(|n| !n.is_empty()).map(String::from));
            }
            i += 1;
        }
        names.sort();
        names.dedup();
        names
    };
    if hack && (rest.contains(&"--feature-powerset") || rest.contains(&"--each-feature")) {
        return Some(Features::AllBut(lists(&["--exclude-features", "--skip"])));
    }
    let names = lists(&["--features", "-F"]);
    if names.is_empty() || names.iter().any(|n| n.contains('/') || n.starts_with('$')) {
        return None;
    }
    Some(Features::List(names))
}

/// The first test target with `harness = false` (its manifest's path, its name) in the
/// root manifest or a workspace member's (members by path, or `dir/*`).
fn custom_harness(repo: &Path, root_manifest: &str) -> Option<(String, String)> {
    let parse = |text: &str| text.parse::<toml::Table>().ok();
    let root = parse(root_manifest)?;
    let mut manifests = vec![("Cargo.toml".to_string(), root.clone())];
    let members = root.get("workspace").and_then(|w| w.get("members")).and_then(|m| m.as_array());
    for member in members.into_iter().flatten().filter_map(|m| m.as_str()) {
        let dirs: Vec<String> = match member.strip_suffix("/*") {
            Some(parent) => {
                let mut found: Vec<String> = std::fs::read_dir(repo.join(parent))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter(|e| e.path().join("Cargo.toml").is_file())
                    .map(|e| format!("{parent}/{}", e.file_name().to_string_lossy()))
                    .collect();
                found.sort();
                found
            }
            None => vec![member.to_string()],
        };
        for dir in dirs {
            let path = format!("{dir}/Cargo.toml");
            if let Some(table) = std::fs::read_to_string(repo.join(&path)).ok().as_deref().and_then(parse) {
                manifests.push((path, table));
            }
        }
    }
    manifests.into_iter().find_map(|(path, table)| {
        let tests = table.get("test")?.as_array()?;
        let custom = tests.iter().find(|t| t.get("harness").and_then(|h| h.as_bool()) == Some(false))?;
        let name = custom.get("name").and_then(|n| n.as_str()).unwrap_or("?");
        Some((path, name.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_is_a_workspace_with_a_lock_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rust/runner-cases");
        let det = detect(&root).unwrap();
        assert_eq!(det.language, Language::Rust);
        assert!(matches!(det.command, TestCommand::Cargo { workspace: true, .. }), "{:?}", det.command);
        assert_eq!(det.setup.as_deref(), Some("cargo fetch --locked"));
        assert!(det.reasons.iter().any(|r| r.contains("--workspace")), "{:?}", det.reasons);
    }

    #[test]
    fn a_single_crate_without_lock_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"x\"\nversion = \"0.1.0\"\n").unwrap();
        let det = detect(d.path()).unwrap();
        assert!(matches!(det.command, TestCommand::Cargo { workspace: false, .. }));
        assert!(det.setup.as_deref().unwrap().starts_with("cargo generate-lockfile"));
        let json = serde_json::to_value(&det.command).unwrap();
        assert_eq!(json["runner"], "cargo");
        assert!(detect(&d.path().join("absent")).is_none());
    }

    /// A workspace member with a `harness = false` test (servo/rust-url's `url_wpt`) is run with
    /// `cargo test`, even where cargo-nextest is installed.
    #[test]
    fn a_custom_test_harness_is_found_in_a_workspace_member() {
        let d = tempfile::tempdir().unwrap();
        let root = "[workspace]\nmembers = [\"url\", \"crates/*\"]\n";
        std::fs::write(d.path().join("Cargo.toml"), root).unwrap();
        for dir in ["url", "crates/idna"] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
        }
        let plain = "[package]\nname = \"idna\"\nversion = \"0.1.0\"\n[[test]]\nname = \"unit\"\n";
        std::fs::write(d.path().join("crates/idna/Cargo.toml"), plain).unwrap();
        assert_eq!(custom_harness(d.path(), root), None);
        let url = "[package]\nname = \"url\"\nversion = \"0.1.0\"\n\n[[test]]\nname = \"url_wpt\"\npath = \
                   \"tests/wpt.rs\"\nharness = false\n";
        std::fs::write(d.path().join("url/Cargo.toml"), url).unwrap();
        assert_eq!(custom_harness(d.path(), root), Some(("url/Cargo.toml".to_string(), "url_wpt".to_string())));
        let det = detect(d.path()).unwrap();
        assert!(matches!(det.command, TestCommand::Cargo { nextest: false, .. }), "{:?}", det.command);
        assert!(det.reasons.iter().any(|r| r.starts_with("runner = cargo test")), "{:?}", det.reasons);
    }

    /// rust-lang/log, uuid-rs/uuid, mitsuhiko/similar: the CI tests with `--all-features` or a
    /// feature list, and the default features leave feature-gated tests unbuilt.
    #[test]
    fn the_ci_workflows_feature_flags_are_taken() {
        let list = |names: &[&str]| Some(Features::List(names.iter().map(|n| n.to_string()).collect()));
        assert_eq!(cargo_test_features("cargo test --all-features"), Some(Features::All));
        assert_eq!(cargo_test_features("cargo test --verbose --features \"serde std\""), list(&["serde", "std"]));
        assert_eq!(cargo_test_features("cargo +stable test --features=kv,std"), list(&["kv", "std"]));
        assert_eq!(cargo_test_features("cargo nextest run -F serde"), list(&["serde"]));
        assert_eq!(
            cargo_test_features("cargo hack test --feature-powerset --exclude-features max_level_off,max_level_info"),
            Some(Features::AllBut(vec!["max_level_info".into(), "max_level_off".into()]))
        );
        for not_taken in [
            "cargo test",
            "cargo build --all-features",
            "cargo +nightly test --all-features",
            "cargo test --no-default-features --features std",
            "cargo test --features ${{ matrix.features }}",
            "cargo test -Z minimal-versions --all-features",
        ] {
            assert_eq!(cargo_test_features(not_taken), None, "{not_taken}");
        }
        let d = tempfile::tempdir().unwrap();
        let manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[features]\nstd = []\nkv = [\"std\"]\n\
                        [dependencies]\nserde = { version = \"1\", optional = true }\n";
        std::fs::write(d.path().join("Cargo.toml"), manifest).unwrap();
        std::fs::create_dir_all(d.path().join(".github/workflows")).unwrap();
        let ci = "jobs:\n  test:\n    steps:\n      - run: cargo test --features std\n      - run: cargo test --features \"kv serde\" && cargo doc\n      - run: cargo test --features missing\n";
        std::fs::write(d.path().join(".github/workflows/ci.yml"), ci).unwrap();
        let det = detect(d.path()).unwrap();
        let TestCommand::Cargo { args, .. } = &det.command else { panic!("{:?}", det.command) };
        assert_eq!(args, &["--features", "kv,serde"]);
        let reason = det.reasons.iter().find(|r| r.starts_with("features = ")).unwrap();
        assert!(reason.contains(".github/workflows/ci.yml runs `cargo test --features \"kv serde\"`"), "{reason}");
        // `--all-features` wins, unless a feature asks for nightly.
        std::fs::write(d.path().join(".github/workflows/more.yml"), "- run: cargo test --all-features\n").unwrap();
        let det = detect(d.path()).unwrap();
        assert!(
            matches!(&det.command, TestCommand::Cargo { args, .. } if args == &["--all-features"]),
            "{:?}",
            det.command
        );
        std::fs::write(
            d.path().join("Cargo.toml"),
            format!("{manifest}\n").replace("std = []", "std = []\nnightly = []"),
        )
        .unwrap();
        let det = detect(d.path()).unwrap();
        assert!(
            matches!(&det.command, TestCommand::Cargo { args, .. } if args == &["--features", "kv,serde"]),
            "{:?}",
            det.command
        );
        // rust-lang/log: `cargo hack test --feature-powerset` but the features that switch
        // logging off, and those asking for nightly.
        let hack = "- run: cargo hack test --feature-powerset --exclude-features max_level_off\n";
        std::fs::write(d.path().join(".github/workflows/more.yml"), hack).unwrap();
        std::fs::write(d.path().join(".github/workflows/ci.yml"), "").unwrap();
        let manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[features]\ndefault = [\"std\"]\nstd = []\n\
                        kv = []\nmax_level_off = []\nkv_nightly = []\n";
        std::fs::write(d.path().join("Cargo.toml"), manifest).unwrap();
        let det = detect(d.path()).unwrap();
        assert!(
            matches!(&det.command, TestCommand::Cargo { args, .. } if args == &["--features", "kv,std"]),
            "{:?}",
            det.command
        );
        // mitsuhiko/similar: the workflow runs `make test`; the Makefile's recipe says the rest.
        std::fs::write(d.path().join(".github/workflows/more.yml"), "- run: make test\n").unwrap();
        std::fs::write(d.path().join("Makefile"), "test:\n\t@cargo test\n\t@cargo test --all-features\n").unwrap();
        std::fs::write(d.path().join("Cargo.toml"), manifest.replace("kv_nightly = []\n", "")).unwrap();
        let det = detect(d.path()).unwrap();
        assert!(
            matches!(&det.command, TestCommand::Cargo { args, .. } if args == &["--all-features"]),
            "{:?}",
            det.command
        );
        let reason = det.reasons.iter().find(|r| r.starts_with("features = ")).unwrap();
        assert!(reason.contains("Makefile runs `cargo test --all-features`"), "{reason}");
        std::fs::remove_file(d.path().join("Makefile")).unwrap();
        // Nothing to take: the default features, and no reason about them.
        std::fs::remove_dir_all(d.path().join(".github")).unwrap();
        let det = detect(d.path()).unwrap();
        assert!(matches!(&det.command, TestCommand::Cargo { args, .. } if args.is_empty()));
        assert!(!det.reasons.iter().any(|r| r.starts_with("features = ")), "{:?}", det.reasons);
    }

    /// unicode-rs/unicode-width: a crate whose `scripts/unicode.py` generates its tables was
    /// detected as Python (Python comes first in `Language::ALL`). The root manifest decides;
    /// the loose scripts are still reported, second.
    #[test]
    fn the_root_manifest_outranks_loose_python_scripts() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"w\"\nversion = \"0.1.0\"\n").unwrap();
        std::fs::create_dir(d.path().join("scripts")).unwrap();
        std::fs::write(d.path().join("scripts/unicode.py"), "print('tables')\n").unwrap();
        let found = crate::registry::detect(d.path());
        let langs: Vec<Language> = found.iter().map(|f| f.language).collect();
        assert_eq!(langs, [Language::Rust, Language::Python], "{found:?}");
        assert!(found[0].manifest && !found[1].manifest);
        // A Python manifest beside Cargo.toml (a PyO3 project) keeps both as manifests, in
        // `Language::ALL` order: the user picks with `language` in carve.toml.
        std::fs::write(d.path().join("pyproject.toml"), "[project]\nname = \"w\"\n").unwrap();
        let langs: Vec<Language> = crate::registry::detect(d.path()).iter().map(|f| f.language).collect();
        assert_eq!(langs, [Language::Python, Language::Rust]);
    }
}
