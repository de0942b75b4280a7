//! The installed version of a JavaScript test runner, so carve passes only flags that
//! version knows (vitest's CLI rejects unknown options: `--no-cache` before vitest 1.3 stops
//! the run with "CACError: Unknown option `--cache`").

use std::path::Path;

/// `major.minor.patch` of `package` as installed for `root`: its `package.json` in the
/// first `node_modules/<package>` found from `root` upwards (Node's own lookup). `None`
/// under Yarn Plug'n'Play or when the version is unreadable: callers assume a current one.
pub fn installed(root: &Path, package: &str) -> Option<(u32, u32, u32)> {
    let mut dir = Some(root);
    while let Some(d) = dir {
        let manifest = d.join("node_modules").join(package).join("package.json");
        if let Ok(text) = std::fs::read(&manifest) {
            let value: serde_json::Value = serde_json::from_slice(&text).ok()?;
            return parse(value.get("version")?.as_str()?);
        }
        dir = d.parent();
    }
    None
}

/// `1.2.3`, `3.0.0-beta.1` -> `(1, 2, 3)`, `(3, 0, 0)`.
pub fn parse(version: &str) -> Option<(u32, u32, u32)> {
    let core = version.trim().trim_start_matches('v').split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next().flatten().unwrap_or(0), parts.next().flatten().unwrap_or(0)))
}

/// vitest's `--cache` option (and so `--no-cache`) exists from 1.3 on; before, the results
/// cache cannot be switched off from the command line.
pub fn vitest_knows_no_cache(version: Option<(u32, u32, u32)>) -> bool {
    version.is_none_or(|v| v >= (1, 3, 0))
}

/// vitest loads reporter files (carve's progress reporter) from 0.10 on; before, carve runs
/// it through a configuration file of its own ([`super::old_vitest`]).
pub fn vitest_loads_reporter_files(version: Option<(u32, u32, u32)>) -> bool {
    version.is_none_or(|v| v >= (0, 10, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_decide_the_cache_flag() {
        assert_eq!(parse("1.2.3"), Some((1, 2, 3)));
        assert_eq!(parse("3.0.0-beta.1"), Some((3, 0, 0)));
        assert_eq!(parse("0.6"), Some((0, 6, 0)));
        assert_eq!(parse("next"), None);
        assert!(!vitest_knows_no_cache(Some((0, 6, 3))));
        assert!(!vitest_knows_no_cache(Some((1, 1, 3))));
        assert!(vitest_knows_no_cache(Some((1, 3, 0))));
        assert!(vitest_knows_no_cache(Some((2, 1, 9))));
        assert!(vitest_knows_no_cache(None));
        assert!(!vitest_loads_reporter_files(Some((0, 8, 5))));
        assert!(vitest_loads_reporter_files(Some((0, 10, 0))) && vitest_loads_reporter_files(None));
    }

    #[test]
    fn installed_reads_the_nearest_node_modules_upwards() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("node_modules/vitest");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("package.json"), r#"{"name":"vitest","version":"1.1.3"}"#).unwrap();
        let nested = dir.path().join("packages/app");
        std::fs::create_dir_all(&nested).unwrap();
        assert_eq!(installed(&nested, "vitest"), Some((1, 1, 3)));
        assert_eq!(installed(&nested, "jest"), None);
    }
}
