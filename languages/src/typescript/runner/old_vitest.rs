//! vitest before 0.10 (projects pin 0.6–0.9): it cannot load a reporter from a file, so carve
//! passes `--config` with a configuration file of its own (`carve_vitest_config.mjs`) that
//! loads the project's configuration with the project's vite and adds carve's reporter
//! object. The JSON report's path is the plain `--outputFile` (`--outputFile.json` came
//! later). Everything else (progress, statuses, set-up files) is as with newer vitest.

use std::path::{Path, PathBuf};

/// carve's configuration file, with `__CARVE_*__` placeholders for the paths.
const TEMPLATE: &str = include_str!("carve_vitest_config.mjs");

/// vitest 0.x's configuration file names, in the order it looks for them from the root up.
const CONFIG_FILES: [&str; 6] = [
    "vitest.config.ts",
    "vitest.config.js",
    "vitest.config.mjs",
    "vite.config.ts",
    "vite.config.js",
    "vite.config.mjs",
];

/// The project's `--config`/`-c` option taken out of `args` (its value, relative to `root`),
/// else the first configuration file vitest would find from `root` upwards.
pub fn take_project_config(root: &Path, args: &mut Vec<String>) -> Option<PathBuf> {
    let mut named = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(v) = a.strip_prefix("--config=").or_else(|| a.strip_prefix("-c=")) {
            named = Some(v.to_string());
            args.remove(i);
        } else if (a == "--config" || a == "-c") && i + 1 < args.len() {
            named = Some(args.remove(i + 1));
            args.remove(i);
        } else {
            i += 1;
        }
    }
    if let Some(v) = named {
        return Some(root.join(v));
    }
    root.ancestors().flat_map(|d| CONFIG_FILES.iter().map(move |f| d.join(f))).find(|p| p.is_file())
}

/// carve's configuration file for a run in `root`: the project's configuration (if any) and
/// carve's reporter at `reporter`.
pub fn config_text(root: &Path, project_config: Option<&Path>, reporter: &Path) -> String {
    let js = |s: Option<&Path>| match s {
        Some(p) => serde_json::to_string(&p.display().to_string()).expect("a string serializes"),
        None => "null".into(),
    };
    TEMPLATE
        .replace("__CARVE_ROOT__", &js(Some(root)))
        .replace("__CARVE_PROJECT_CONFIG__", &js(project_config))
        .replace("__CARVE_REPORTER__", &js(Some(reporter)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_config_is_the_named_one_or_the_first_found_upwards() {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("packages/app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(dir.path().join("vite.config.ts"), "").unwrap();
        let mut args = vec!["--dom".to_string()];
        assert_eq!(take_project_config(&app, &mut args), Some(dir.path().join("vite.config.ts")));
        std::fs::write(app.join("vitest.config.mjs"), "").unwrap();
        assert_eq!(take_project_config(&app, &mut args), Some(app.join("vitest.config.mjs")));
        assert_eq!(args, ["--dom"]);
        let mut args: Vec<String> = ["-c", "cfg/unit.ts", "--dom"].map(String::from).to_vec();
        assert_eq!(take_project_config(&app, &mut args), Some(app.join("cfg/unit.ts")));
        assert_eq!(args, ["--dom"]);
        let mut args = vec!["--config=x.mjs".to_string()];
        assert_eq!(take_project_config(&app, &mut args), Some(app.join("x.mjs")));
        assert!(args.is_empty());
    }

    #[test]
    fn the_config_text_names_the_paths_as_javascript_strings() {
        let text = config_text(Path::new("/r/o\"dd"), None, Path::new("/s/rep.mjs"));
        assert!(text.contains(r#"const ROOT = "/r/o\"dd";"#), "{text}");
        assert!(text.contains("const PROJECT_CONFIG = null;"));
        assert!(text.contains(r#"const REPORTER = "/s/rep.mjs";"#));
        assert!(!text.contains("__CARVE_"));
    }
}
