//! npm's view of a tree's dependencies ([`crate::interface::Dependencies`]): what
//! `package.json` declares and `package-lock.json` (or `npm-shrinkwrap.json`) pins, installed
//! with npm as a user building the commit would (`npm ci` with npm's lockfile, else `npm
//! install`), without install scripts and with the peer-dependency leniency older manifests
//! need. Lockfiles of other package managers (`pnpm-lock.yaml`, `yarn.lock`) are not read:
//! npm resolves the manifest's ranges, as it does for the repository checkout carve is given.

use crate::interface::Dependencies;

/// The fields of `package.json` that decide what npm installs.
const FIELDS: &[&str] = &[
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
    "peerDependenciesMeta",
    "bundleDependencies",
    "bundledDependencies",
    "overrides",
    "workspaces",
];

/// npm's lockfiles, in the order npm prefers them.
const LOCKFILES: &[&str] = &["npm-shrinkwrap.json", "package-lock.json"];

const FLAGS: &[&str] = &["--ignore-scripts", "--legacy-peer-deps", "--no-audit", "--no-fund"];

pub struct Npm;

pub static NPM: Npm = Npm;

/// `value` with every object's keys sorted, so that equal content gives equal bytes.
fn canonical(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            serde_json::Value::Object(keys.into_iter().map(|k| (k.clone(), canonical(&map[k]))).collect())
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Where npm installs a tree's dependencies.
pub(crate) const FOLDER: &str = "node_modules";

impl Dependencies for Npm {
    fn folder(&self) -> &'static str {
        FOLDER
    }

    fn inputs(&self) -> &'static [&'static str] {
        &["package.json", "npm-shrinkwrap.json", "package-lock.json", ".npmrc"]
    }

    fn key(&self, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<Vec<u8>> {
        let manifest = read("package.json")?;
        let mut key = match serde_json::from_slice::<serde_json::Value>(&manifest) {
            Ok(serde_json::Value::Object(map)) => {
                let fields: serde_json::Map<String, serde_json::Value> =
                    FIELDS.iter().filter_map(|f| map.get(*f).map(|v| (f.to_string(), canonical(v)))).collect();
                serde_json::to_vec(&fields).expect("JSON values serialize")
            }
            // Not a manifest npm reads: its bytes, so the install is tried and says why.
            _ => manifest,
        };
        for name in LOCKFILES {
            if let Some(lock) = read(name) {
                key.extend_from_slice(format!("\n{name}\n").as_bytes());
                key.extend_from_slice(&lock);
                break;
            }
        }
        if let Some(rc) = read(".npmrc") {
            key.extend_from_slice(b"\n.npmrc\n");
            key.extend_from_slice(&rc);
        }
        Some(key)
    }

    fn install_command(&self, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<String> {
        let locked = LOCKFILES.iter().any(|l| read(l).is_some());
        let mut cmd = vec!["npm".to_string(), if locked { "ci" } else { "install" }.to_string()];
        cmd.extend(FLAGS.iter().map(|f| f.to_string()));
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn reader(files: &[(&str, &str)]) -> impl Fn(&str) -> Option<Vec<u8>> {
        let files: BTreeMap<String, Vec<u8>> =
            files.iter().map(|(p, t)| (p.to_string(), t.as_bytes().to_vec())).collect();
        move |p: &str| files.get(p).cloned()
    }

    /// Two manifests that differ only in their version, scripts or key order install the
    /// same; one whose devDependencies differ, or with an npm lockfile, does not.
    #[test]
    fn the_key_is_what_npm_installs_from() {
        let a = r#"{"name":"x","version":"1.0.0","scripts":{"test":"vitest"},"devDependencies":{"typescript":"^5.0.0","vitest":"^1.0.0"}}"#;
        let b = r#"{"devDependencies":{"vitest":"^1.0.0","typescript":"^5.0.0"},"name":"x","version":"2.0.0"}"#;
        let c = r#"{"name":"x","devDependencies":{"typescript":"^4.9.0","vitest":"^1.0.0"}}"#;
        let key = |files: &[(&str, &str)]| NPM.key(&reader(files));
        assert_eq!(key(&[("package.json", a)]), key(&[("package.json", b)]));
        assert_ne!(key(&[("package.json", a)]), key(&[("package.json", c)]));
        assert_ne!(key(&[("package.json", a)]), key(&[("package.json", a), ("package-lock.json", "{}")]));
        // Other package managers' lockfiles are not npm's input.
        assert_eq!(key(&[("package.json", a)]), key(&[("package.json", a), ("pnpm-lock.yaml", "x")]));
        assert_eq!(key(&[]), None, "no manifest, no key");
        assert!(key(&[("package.json", "not json")]).is_some());
    }

    #[test]
    fn npm_ci_installs_from_npms_lockfile_and_npm_install_from_the_manifest() {
        let m = ("package.json", "{}");
        assert_eq!(NPM.install_command(&reader(&[m]))[..2], ["npm", "install"]);
        assert_eq!(NPM.install_command(&reader(&[m, ("package-lock.json", "{}")]))[..2], ["npm", "ci"]);
        assert!(NPM.install_command(&reader(&[m])).contains(&"--ignore-scripts".to_string()));
    }
}
