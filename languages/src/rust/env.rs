//! Rust environments: the crates of `Cargo.lock` fetched with `cargo fetch --locked` into a
//! Cargo home carve owns (`CARGO_HOME={env}/cargo-home`), and test runs given that home with
//! `CARGO_NET_OFFLINE=true`, so a run proves the environment holds every crate. Without a
//! `Cargo.lock` one is generated in the environment and linked into every run tree (carve runs
//! cargo with `--locked`). The toolchain: `rust-toolchain(.toml)`'s channel when installed,
//! else the local stable when it is at least the pinned version (`RUSTUP_TOOLCHAIN`), and the
//! crates' `rust-version` checked against it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use sha2::Digest;

use crate::Language;
use crate::env::{
    Activation, EnvError, EnvPlan, EnvSupport, Failures, Finding, IMAGE_REPO, ImageRecipe, Inventory, Repairs, Step,
    StepDir, Tool, ToolRequirement, version_cmp,
};

pub struct RustEnv;

pub static RUST_ENV: RustEnv = RustEnv;

const INPUTS: &[&str] =
    &["Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml", ".cargo/config.toml", ".cargo/config"];

/// The channel of `rust-toolchain.toml` (`[toolchain] channel`) or of a plain `rust-toolchain`.
fn pinned_channel(repo: &Path) -> Option<(String, &'static str)> {
    if let Ok(text) = std::fs::read_to_string(repo.join("rust-toolchain.toml")) {
        let table: toml::Table = toml::from_str(&text).ok()?;
        let c = table.get("toolchain")?.get("channel")?.as_str()?.to_string();
        return Some((c, "rust-toolchain.toml [toolchain] channel"));
    }
    let text = std::fs::read_to_string(repo.join("rust-toolchain")).ok()?;
    if let Ok(table) = toml::from_str::<toml::Table>(&text)
        && let Some(c) = table.get("toolchain").and_then(|t| t.get("channel")).and_then(|c| c.as_str())
    {
        return Some((c.to_string(), "rust-toolchain [toolchain] channel"));
    }
    Some((text.trim().to_string(), "rust-toolchain")).filter(|(c, _)| !c.is_empty())
}

/// `rust-version` of `[package]` or `[workspace.package]`.
fn rust_version(manifest: &toml::Table) -> Option<String> {
    let from =
        |t: Option<&toml::Value>| t.and_then(|p| p.get("rust-version")).and_then(|v| v.as_str()).map(str::to_string);
    from(manifest.get("package")).or_else(|| from(manifest.get("workspace").and_then(|w| w.get("package"))))
}

/// `rustc`'s version under `toolchain` (`None`: rustup's default), or `None` when it does not run.
fn rustc_version(toolchain: Option<&str>) -> Option<String> {
    let mut cmd = Command::new("rustc");
    cmd.arg("--version").env("RUSTUP_AUTO_INSTALL", "0");
    if let Some(t) = toolchain {
        cmd.env("RUSTUP_TOOLCHAIN", t);
    }
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    out.status.success().then(|| text.split_whitespace().nth(1).unwrap_or("").to_string()).filter(|v| !v.is_empty())
}

impl EnvSupport for RustEnv {
    fn inputs(&self, repo: &Path) -> Vec<String> {
        INPUTS.iter().filter(|f| repo.join(f).is_file()).map(|f| f.to_string()).collect()
    }

    fn detect(&self, repo: &Path) -> Result<EnvPlan, EnvError> {
        let Ok(text) = std::fs::read_to_string(repo.join("Cargo.toml")) else {
            return Err(EnvError::NoMetadata(
                "no Cargo.toml at the repository's root: carve fetches a Rust project's crates from it".into(),
            ));
        };
        let manifest: toml::Table = toml::from_str(&text).map_err(|e| EnvError::BadFile {
            file: "Cargo.toml".into(),
            message: format!("not valid TOML ({})", e.message()),
        })?;
        let mut findings = Vec::new();
        let mut requires = Vec::new();
        if let Some(v) = rust_version(&manifest) {
            findings.push(Finding::new("toolchain", format!("rust >= {v}"), "Cargo.toml rust-version"));
            requires.push(ToolRequirement {
                tool: "rust".into(),
                wanted: Some(format!(">={v}")),
                source: "Cargo.toml rust-version".into(),
            });
        }
        if let Some((channel, source)) = pinned_channel(repo) {
            findings.push(Finding::new("toolchain-pin", channel, source));
        }
        if repo.join("Cargo.lock").is_file() {
            findings.push(Finding::new("install", "cargo fetch --locked", "Cargo.lock"));
        } else {
            findings.push(Finding::new(
                "install",
                "cargo generate-lockfile, then cargo fetch --locked",
                "Cargo.toml (no Cargo.lock committed)",
            ));
        }
        // cargo reads every target of the manifests: the install needs the whole tree.
        Ok(EnvPlan { language: Language::Rust, inputs: self.inputs(repo), whole_source: true, requires, findings })
    }

    fn toolchain(&self, plan: &EnvPlan) -> Result<Vec<Tool>, EnvError> {
        let pin = plan.findings.iter().find(|f| f.what == "toolchain-pin");
        let default = rustc_version(None).ok_or_else(|| EnvError::ToolMissing {
            tool: "rustc".into(),
            why: "build and test the crate".into(),
            hint: "install Rust with rustup (https://rustup.rs)".into(),
        })?;
        let mut chosen: Option<(String, String)> = None; // (RUSTUP_TOOLCHAIN, version)
        if let Some(pin) = pin {
            if let Some(v) = rustc_version(Some(&pin.value)) {
                chosen = Some((pin.value.clone(), v));
            } else if pin.value.starts_with("nightly") || pin.value.starts_with("beta") {
                return Err(EnvError::Unavailable {
                    tool: "Rust".into(),
                    wanted: pin.value.clone(),
                    origin: pin.source.clone(),
                    present: format!("rustc {default} (rustup's default)"),
                    hint: format!("install it with `rustup toolchain install {}`", pin.value),
                });
            } else if pin.value == "stable" || version_cmp(&default, &pin.value) != std::cmp::Ordering::Less {
                chosen = Some(("stable".into(), default.clone()));
            } else {
                return Err(EnvError::Unavailable {
                    tool: "Rust".into(),
                    wanted: pin.value.clone(),
                    origin: pin.source.clone(),
                    present: format!("rustc {default}"),
                    hint: format!("install it with `rustup toolchain install {}`", pin.value),
                });
            }
        }
        let version = chosen.as_ref().map_or(default.clone(), |c| c.1.clone());
        if let Some(req) = plan.requires.iter().find(|r| r.tool == "rust")
            && let Some(min) = req.wanted.as_deref().map(|w| w.trim_start_matches(">="))
            && version_cmp(&version, min) == std::cmp::Ordering::Less
        {
            return Err(EnvError::Unavailable {
                tool: "Rust".into(),
                wanted: format!(">={min}"),
                origin: req.source.clone(),
                present: format!("rustc {version}"),
                hint: format!("install a newer toolchain (`rustup toolchain install {min}`)"),
            });
        }
        let program = chosen.map_or_else(|| "rustup default".to_string(), |c| c.0);
        Ok(vec![Tool { tool: "rust".into(), version, program }])
    }

    fn install_steps(&self, plan: &EnvPlan, tools: &[Tool]) -> Vec<Step> {
        let mut steps = Vec::new();
        let locked = plan.findings.iter().any(|f| f.what == "install" && f.source == "Cargo.lock");
        let with = |s: Step| -> Step {
            let s = s.with_env("CARGO_HOME", "{env}/cargo-home").with_env("RUSTUP_AUTO_INSTALL", "0");
            match tools.first().filter(|t| t.program != "rustup default") {
                Some(t) => s.with_env("RUSTUP_TOOLCHAIN", &t.program),
                None => s,
            }
        };
        if !locked {
            steps.push(with(
                Step::new(
                    &["cargo", "generate-lockfile"],
                    StepDir::Src,
                    "no Cargo.lock committed: one pins what is fetched",
                )
                .needing_source(),
            ));
        }
        steps.push(with(
            Step::new(&["cargo", "fetch", "--locked"], StepDir::Src, "the crates of Cargo.lock").needing_source(),
        ));
        steps
    }

    fn activation(&self, _plan: &EnvPlan, tools: &[Tool]) -> Activation {
        let mut vars = vec![
            ("CARGO_HOME".to_string(), "{env}/cargo-home".to_string()),
            ("CARGO_NET_OFFLINE".to_string(), "true".to_string()),
        ];
        if let Some(t) = tools.first().filter(|t| t.program != "rustup default") {
            vars.push(("RUSTUP_TOOLCHAIN".into(), t.program.clone()));
        }
        Activation { interpreter: None, vars, linked: vec!["Cargo.lock".into()], build: Vec::new() }
    }

    fn repairs(&self, _plan: &EnvPlan, failures: &Failures, _done: &[Step]) -> Repairs {
        let text = format!("{}\n{}", failures.messages.join("\n"), failures.output);
        let mut r = Repairs::default();
        for (needle, what) in [
            ("linker `cc` not found", "a C linker (`cc`): install gcc"),
            ("Could not find openssl", "OpenSSL's headers: install libssl-dev and pkg-config"),
            ("pkg-config command could not be found", "pkg-config: install it"),
            ("Could not find protoc", "protoc: install protobuf-compiler"),
            ("cmake` not found", "cmake: install it"),
        ] {
            if text.contains(needle) {
                r.unresolved.push(format!("the build needs {what}"));
            }
        }
        r
    }

    fn inventory(&self, _plan: &EnvPlan, tools: &[Tool], env: &Path) -> Inventory {
        let lock = std::fs::read(env.join("src/Cargo.lock")).unwrap_or_default();
        let mut packages = BTreeMap::new();
        if let Ok(table) = toml::from_str::<toml::Table>(&String::from_utf8_lossy(&lock)) {
            for p in table.get("package").and_then(|p| p.as_array()).into_iter().flatten() {
                if p.get("source").is_none() {
                    continue; // the workspace's own crates
                }
                if let (Some(n), Some(v)) =
                    (p.get("name").and_then(|x| x.as_str()), p.get("version").and_then(|x| x.as_str()))
                {
                    let key = if packages.contains_key(n) { format!("{n}@{v}") } else { n.to_string() };
                    packages.insert(key, v.to_string());
                }
            }
        }
        let has = !lock.is_empty();
        Inventory {
            packages,
            lockfile: has.then(|| "Cargo.lock".into()),
            lockfile_sha256: has.then(|| hex::encode(sha2::Sha256::digest(&lock))),
            tools: tools.iter().map(|t| (t.tool.clone(), t.version.clone())).collect(),
        }
    }

    fn image(
        &self,
        plan: &EnvPlan,
        tools: &[Tool],
        _steps: &[Step],
        _inventory: &Inventory,
        env: &Path,
    ) -> ImageRecipe {
        let version = tools.first().map_or("1", |t| t.version.as_str());
        let minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
        let mut context_files = BTreeMap::new();
        let locked = plan.inputs.iter().any(|i| i == "Cargo.lock");
        let mut after_source = Vec::new();
        let (mut install, mut linked) = (Vec::new(), Vec::new());
        if !locked {
            // Linked into the source as every local run tree gets it, so the state trees
            // of the runs in the image get it too (a copy into the source alone reached
            // the image's source but not the states: bitflags' 24 tasks failed their
            // re-check with "run `cargo generate-lockfile`").
            context_files.insert(
                "Cargo.lock".to_string(),
                std::fs::read_to_string(env.join("src/Cargo.lock")).unwrap_or_default(),
            );
            install.push(Step::new(
                &["cp", "{env}/Cargo.lock", "{env}/src/Cargo.lock"],
                StepDir::Env,
                "the Cargo.lock carve generated",
            ));
            linked.push("Cargo.lock".to_string());
        }
        // cargo reads every target of the manifests, so the fetch follows the source.
        let fetch = format!("cd {IMAGE_REPO} && cargo fetch --locked");
        after_source.push(
            Step::new(&["sh", "-c", &fetch], StepDir::Env, "the crates of Cargo.lock")
                .with_env("CARGO_HOME", "{env}/cargo-home"),
        );
        ImageRecipe {
            base: format!("rust:{minor}-slim-bookworm"),
            inputs: Vec::new(),
            context_files,
            install,
            after_source,
            env: vec![("CARGO_HOME".into(), "{env}/cargo-home".into()), ("CARGO_NET_OFFLINE".into(), "true".into())],
            linked,
            build: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use carve_testutil::temp_tree as repo;

    #[test]
    fn rust_version_pins_and_the_lockfile() {
        let d = repo(&[
            ("Cargo.toml", "[workspace]\nmembers=['a']\n[workspace.package]\nrust-version = '1.70'\n"),
            ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.80.0\"\n"),
        ]);
        let plan = RUST_ENV.detect(d.path()).unwrap();
        assert_eq!(plan.requires[0].wanted.as_deref(), Some(">=1.70"));
        assert!(plan.findings.iter().any(|f| f.what == "toolchain-pin" && f.value == "1.80.0"));
        let steps = RUST_ENV.install_steps(&plan, &[]);
        assert_eq!(steps.iter().map(|s| s.argv[1].as_str()).collect::<Vec<_>>(), vec!["generate-lockfile", "fetch"]);
        assert_eq!(
            pinned_channel(repo(&[("rust-toolchain", "nightly-2024-01-01\n")]).path()).unwrap().0,
            "nightly-2024-01-01"
        );
        let err = RUST_ENV.detect(repo(&[]).path()).unwrap_err().to_string();
        assert!(err.contains("no Cargo.toml"), "{err}");
    }

    #[carve_testutil::needs("rustc")]
    fn a_rust_version_beyond_the_toolchain_names_both() {
        let plan = EnvPlan {
            language: Language::Rust,
            inputs: vec![],
            whole_source: true,
            requires: vec![ToolRequirement {
                tool: "rust".into(),
                wanted: Some(">=9.0".into()),
                source: "Cargo.toml rust-version".into(),
            }],
            findings: vec![],
        };
        let err = RUST_ENV.toolchain(&plan).unwrap_err().to_string();
        assert!(err.contains(">=9.0") && err.contains("rustc 1."), "{err}");
    }
}
