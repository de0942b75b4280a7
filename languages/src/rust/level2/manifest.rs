//! The manifests of a Rust Level 2 package: `agent_code/Cargo.toml` (depends on the
//! repository's crate by path, with the crate's non-optional dependencies and its features
//! forwarded), the repository's `Cargo.toml` with `agent_code` as a dev-dependency, and
//! `Cargo.lock` with its entry (cargo resolves offline: the runner runs `--locked`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `agent_code/Cargo.toml` for the repository manifest `root` (parsed).
fn package_manifest(root: &toml::Table, name: &str) -> Result<String, String> {
    let package = root
        .get("package")
        .and_then(|p| p.as_table())
        .ok_or("Cargo.toml at the repository root has no [package]: Level 2 in Rust needs the library crate there")?;
    let pkg_name = package.get("name").and_then(|n| n.as_str()).ok_or("Cargo.toml's [package] has no name")?;
    let edition = match package.get("edition") {
        Some(toml::Value::String(e)) => e.clone(),
        Some(toml::Value::Table(t)) if t.get("workspace").and_then(|w| w.as_bool()) == Some(true) => root
            .get("workspace")
            .and_then(|w| w.get("package"))
            .and_then(|p| p.get("edition"))
            .and_then(|e| e.as_str())
            .ok_or("Cargo.toml inherits its edition from a workspace that sets none")?
            .to_string(),
        _ => "2015".into(),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"{edition}\"\npublish = false\n\n[dependencies]"
    );
    let _ = writeln!(out, "{} = {{ path = \"..\" }}", key(pkg_name));
    let mut optional = std::collections::BTreeSet::new();
    dependencies(root.get("dependencies"), &mut out, &mut optional);
    // Platform-specific dependencies (`[target.'cfg(unix)'.dependencies]`), as they are.
    for (cfg, table) in root.get("target").and_then(|t| t.as_table()).into_iter().flatten() {
        let mut lines = String::new();
        dependencies(table.get("dependencies"), &mut lines, &mut optional);
        if !lines.is_empty() {
            let _ = write!(out, "\n[target.{}.dependencies]\n{lines}", toml::Value::String(cfg.clone()));
        }
    }
    if let Some(features) = root.get("features").and_then(|f| f.as_table()) {
        out.push_str("\n[features]\n");
        let forwarded: Vec<&String> = features.keys().filter(|f| *f != "default" && !optional.contains(*f)).collect();
        if let Some(default) = features.get("default").and_then(|d| d.as_array()) {
            let names: Vec<String> = default
                .iter()
                .filter_map(|v| v.as_str())
                .filter(|v| forwarded.iter().any(|f| f.as_str() == *v))
                .map(|v| format!("\"{v}\""))
                .collect();
            let _ = writeln!(out, "default = [{}]", names.join(", "));
        }
        // A feature turns on the crate's feature and, as the crate's does, the others it
        // names (fastrand's `std = ["alloc"]`: `#[cfg(feature = "alloc")]` in copied code).
        for f in &forwarded {
            let mut on = vec![format!("\"{pkg_name}/{f}\"")];
            let implied = features.get(f.as_str()).and_then(|v| v.as_array()).into_iter().flatten();
            on.extend(
                implied
                    .filter_map(|v| v.as_str())
                    .filter(|v| forwarded.iter().any(|g| g.as_str() == *v))
                    .map(|v| format!("\"{v}\"")),
            );
            let _ = writeln!(out, "{} = [{}]", key(f), on.join(", "));
        }
    }
    Ok(out)
}

/// The non-optional entries of a dependency table, one line each (a `path` made relative to
/// `agent_code/`); the optional ones' names go to `optional`.
fn dependencies(table: Option<&toml::Value>, out: &mut String, optional: &mut std::collections::BTreeSet<String>) {
    for (dep, spec) in table.and_then(|d| d.as_table()).into_iter().flatten() {
        let mut spec = spec.clone();
        if let toml::Value::Table(t) = &mut spec {
            if t.get("optional").and_then(|o| o.as_bool()) == Some(true) {
                optional.insert(dep.clone());
                continue;
            }
            if let Some(toml::Value::String(p)) = t.get_mut("path") {
                *p = format!("../{p}");
            }
        }
        let _ = writeln!(out, "{} = {}", key(dep), inline(&spec));
    }
}

/// The names the crate's code calls its optional dependencies by (`no-panic` as `no_panic`),
/// platform-specific ones too, each with its key in `Cargo.toml` (its feature's name):
/// `agent_code` does not depend on them.
pub(super) fn optional_dependencies(root: &Path) -> std::collections::BTreeMap<String, String> {
    let Some(manifest) =
        std::fs::read_to_string(root.join("Cargo.toml")).ok().and_then(|t| t.parse::<toml::Table>().ok())
    else {
        return Default::default();
    };
    let mut optional = std::collections::BTreeSet::new();
    let targets = manifest.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values());
    for deps in std::iter::once(manifest.get("dependencies")).chain(targets.map(|t| t.get("dependencies"))) {
        dependencies(deps, &mut String::new(), &mut optional);
    }
    optional.into_iter().map(|d| (d.replace('-', "_"), d)).collect()
}

/// A TOML key, quoted when it must be.
fn key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        k.to_string()
    } else {
        format!("{:?}", k)
    }
}

/// A value on one line (tables inline).
fn inline(v: &toml::Value) -> String {
    match v {
        toml::Value::Table(t) => {
            let parts: Vec<String> = t.iter().map(|(k, v)| format!("{} = {}", key(k), inline(v))).collect();
            format!("{{ {} }}", parts.join(", "))
        }
        toml::Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// The repository's `Cargo.toml` with `name` as a path dev-dependency.
fn with_dev_dependency(text: &str, name: &str) -> String {
    let line = format!("{name} = {{ path = \"{name}\" }}");
    if text.lines().any(|l| l.trim() == line) {
        return text.to_string();
    }
    let mut out = String::new();
    let mut added = false;
    for l in text.split_inclusive('\n') {
        out.push_str(l);
        if !added && l.trim() == "[dev-dependencies]" {
            if !l.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&line);
            out.push('\n');
            added = true;
        }
    }
    if !added {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let _ = write!(out, "\n[dev-dependencies]\n{line}\n");
    }
    out
}

/// Write the manifests of the package `name` for the crate in `tree` (see the module doc);
/// returns the files written, relative to `tree`. `env`: the environment's variables cargo
/// runs with (its `CARGO_HOME`, whose registry holds the dev-dependencies the lock file pins:
/// itoa's `criterion` is in no other).
pub fn write_manifest(tree: &Path, name: &str, env: &[(String, String)]) -> Result<Vec<String>, String> {
    let manifest = tree.join("Cargo.toml");
    let text = read(&manifest)?;
    let root: toml::Table = toml::from_str(&text).map_err(|e| format!("cannot parse {}: {e}", manifest.display()))?;
    let own = format!("{name}/Cargo.toml");
    write(&tree.join(&own), &package_manifest(&root, name)?)?;
    write(&manifest, &with_dev_dependency(&text, name))?;
    let mut files = vec!["Cargo.toml".to_string(), own];
    if tree.join("Cargo.lock").is_file() {
        let out = Command::new("cargo")
            .args(["metadata", "--offline", "--format-version", "1"])
            .current_dir(tree)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run cargo metadata in {}: {e}", tree.display()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: Vec<&str> = err.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
            return Err(format!("cargo metadata --offline could not add {name} to Cargo.lock: {}", tail.join(" / ")));
        }
        files.push("Cargo.lock".into());
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dev_dependency_joins_an_existing_table_or_makes_one() {
        let with = with_dev_dependency("[package]\nname = \"a\"\n\n[dev-dependencies]\nx = \"1\"\n", "agent_code");
        assert_eq!(
            with,
            "[package]\nname = \"a\"\n\n[dev-dependencies]\nagent_code = { path = \"agent_code\" }\nx = \"1\"\n"
        );
        let without = with_dev_dependency("[package]\nname = \"a\"", "agent_code");
        assert_eq!(without, "[package]\nname = \"a\"\n\n[dev-dependencies]\nagent_code = { path = \"agent_code\" }\n");
        assert_eq!(with_dev_dependency(&without, "agent_code"), without, "written once");
    }

    #[test]
    fn the_package_manifest_forwards_dependencies_and_features() {
        let root: toml::Table = toml::from_str(
            "[package]\nname = \"my-crate\"\nedition = \"2021\"\n[dependencies]\nfoo = \"1\"\nbar = { path = \"bar\" }\nopt = { version = \"2\", optional = true }\n[target.'cfg(unix)'.dependencies]\nrx = { version = \"1\", features = [\"fs\"] }\n[features]\ndefault = [\"std\"]\nalloc = []\nstd = [\"alloc\", \"opt?/std\"]\nextra = [\"dep:opt\", \"std\"]\n",
        )
        .unwrap();
        insta::assert_snapshot!(package_manifest(&root, "agent_code").unwrap());
    }

    /// A dev-dependency only the environment's `CARGO_HOME` has (a vendored directory its
    /// `config.toml` puts in place of crates.io; itoa's `criterion` in carve's environment):
    /// the lock file takes `agent_code` with the environment's variables, not without them.
    #[test]
    #[cfg_attr(not(unix), ignore)]
    fn the_lock_file_is_updated_with_the_environment_s_registry() {
        let dir = carve_testutil::temp_tree(&[
            (
                "home/vendor/carve-only-dep/Cargo.toml",
                "[package]\nname = \"carve-only-dep\"\nversion = \"1.0.0\"\nedition = \"2021\"\n",
            ),
            ("home/vendor/carve-only-dep/src/lib.rs", ""),
            ("home/vendor/carve-only-dep/.cargo-checksum.json", "{\"files\":{},\"package\":null}"),
            (
                "crate/Cargo.toml",
                "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dev-dependencies]\ncarve-only-dep = \"1\"\n",
            ),
            ("crate/src/lib.rs", ""),
            ("crate/agent_code/src/lib.rs", ""),
        ]);
        let home = dir.path().join("home");
        let config = format!(
            "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"{}\"\n",
            home.join("vendor").display()
        );
        std::fs::write(home.join("config.toml"), config).unwrap();
        let env = vec![("CARGO_HOME".to_string(), home.display().to_string())];
        let tree = dir.path().join("crate");
        let locked = Command::new("cargo")
            .args(["generate-lockfile", "--offline"])
            .current_dir(&tree)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        assert!(locked.status.success(), "{}", String::from_utf8_lossy(&locked.stderr));
        let pristine = [("Cargo.toml", read(&tree.join("Cargo.toml")).unwrap())];
        let err = write_manifest(&tree, "agent_code", &[]).unwrap_err();
        assert!(err.contains("could not add agent_code to Cargo.lock") && err.contains("carve-only-dep"), "{err}");
        std::fs::write(tree.join(pristine[0].0), &pristine[0].1).unwrap();
        let files = write_manifest(&tree, "agent_code", &env).unwrap();
        assert_eq!(files, ["Cargo.lock", "Cargo.toml", "agent_code/Cargo.toml"]);
        assert!(read(&tree.join("Cargo.lock")).unwrap().contains("name = \"agent_code\""));
    }

    #[test]
    fn a_virtual_workspace_has_no_crate_to_depend_on() {
        let root: toml::Table = toml::from_str("[workspace]\nmembers = [\"a\"]\n").unwrap();
        let err = package_manifest(&root, "agent_code").unwrap_err();
        assert!(err.contains("no [package]"), "{err}");
    }
}
