//! Test environments as data (`carve env`): what a repository's own files say about installing
//! what its tests need ([`EnvPlan`]: findings with their sources, the toolchain it asks for,
//! the install steps), how a test run uses an installed environment ([`Activation`]), what a
//! failed verification run says to install next ([`Repairs`]), the exact installed set
//! ([`Inventory`]) and the image recipe the Dockerfile is written from ([`ImageRecipe`]).
//! Language-free: each language implements [`EnvSupport`] in its `env/` folder; the pipeline's
//! `env` stage runs the steps, verifies, repairs and records, and never looks inside them.
//!
//! Paths in steps and activations are templates: [`ENV`] stands for the environment's own
//! folder (carve's cache locally, [`IMAGE_ENV`] in an image) and [`SRC`] for the copy of the
//! repository's install inputs inside it (`<env>/src`), so the same plan runs here and in a
//! Dockerfile.

pub mod exec;
pub mod range;
pub mod shell;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The environment's folder in a step or an activation.
pub const ENV: &str = "{env}";
/// The copy of the repository's install inputs (`{env}/src`).
pub const SRC: &str = "{src}";
/// Where an image keeps the environment (`{env}`).
pub const IMAGE_ENV: &str = "/opt/carve-env";
/// Where an image keeps the repository's source (the working directory of test runs).
pub const IMAGE_REPO: &str = "/work/repo";

/// A file the install made that the repository does not hold: [`EnvSupport::generated`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Where the project's code finds it, relative to the source (and to every run tree).
    pub path: String,
    /// Where the build left it, relative to the source, when it is placed by a copy (a
    /// compiled extension module under `build/lib.*/`, which an in-place build would have
    /// put beside the package's sources); `None`: the install wrote it at `path`.
    pub built_at: Option<String>,
}

/// One thing found in the repository's files (or decided for it), and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Finding {
    /// What kind of fact: `interpreter`, `toolchain`, `package-manager`, `install`, `plugin`,
    /// `note` (something found and not used, and why).
    pub what: String,
    pub value: String,
    /// Where it came from: a file and the part of it (`pyproject.toml [project.optional-dependencies] test`),
    /// or `carve` for a decision of carve's own, with its reason.
    pub source: String,
}

impl Finding {
    pub fn new(what: &str, value: impl Into<String>, source: impl Into<String>) -> Finding {
        Finding { what: what.to_string(), value: value.into(), source: source.into() }
    }
}

/// A tool the environment needs and the version range the repository asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRequirement {
    /// `python`, `node`, `go`, `rust`, `npm`, `pnpm`, `yarn`.
    pub tool: String,
    /// The range as the repository writes it (`>=3.9`, `1.22`, `^20`), `None` for any.
    pub wanted: Option<String>,
    pub source: String,
}

/// The tool chosen for a requirement: what is present here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tool {
    pub tool: String,
    /// The version present (`3.11.7`, `go1.26.8`).
    pub version: String,
    /// The program, as found on this machine (not recorded in images).
    pub program: String,
}

/// Where a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepDir {
    /// The environment's folder ([`ENV`]).
    Env,
    /// The copy of the install inputs ([`SRC`]).
    Src,
}

/// One install command: a program and its arguments (templates), where it runs, the extra
/// variables it gets, and why carve runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub argv: Vec<String>,
    pub dir: StepDir,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, String)>,
    /// How it was found: the finding(s) it installs, or the repair that asked for it.
    pub why: String,
    /// Whether it needs the whole source (a project install) rather than the install inputs
    /// alone; in an image it runs after the source is copied in.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_source: bool,
}

impl Step {
    pub fn new(argv: &[&str], dir: StepDir, why: impl Into<String>) -> Step {
        Step {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            dir,
            env: Vec::new(),
            why: why.into(),
            needs_source: false,
        }
    }

    pub fn with_env(mut self, key: &str, value: &str) -> Step {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    pub fn needing_source(mut self) -> Step {
        self.needs_source = true;
        self
    }

    /// The command line as a shell would run it, templates as written.
    pub fn display(&self) -> String {
        let mut words: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={}", shell::quote(v))).collect();
        words.extend(self.argv.iter().map(|w| shell::quote(w)));
        words.join(" ")
    }
}

/// How test runs use an installed environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activation {
    /// The interpreter the tests run with (template), for runners that take one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
    /// Variables every test run gets (templates; `PATH` is prepended to, never replaced).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<(String, String)>,
    /// Folders of `{src}` put into every tree a test run uses, when the tree has none of
    /// its own (`node_modules`, a generated `Cargo.lock`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<String>,
    /// The project's build (a program and its arguments), run in every tree a test run uses
    /// before its tests, when the tests load files it makes from the sources (`npm run
    /// build` writing `lib/`): each state — masked, restored — is built from its own sources,
    /// so a masked source is masked in what the tests load too. Empty: no build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
}

impl Activation {
    /// The interpreter with `{env}` replaced by `env`.
    pub fn interpreter_in(&self, env: &Path) -> Option<std::path::PathBuf> {
        self.interpreter.as_ref().map(|t| std::path::PathBuf::from(expand(t, env)))
    }

    /// The variables with `{env}` replaced by `env`; `PATH` entries go before `path`.
    pub fn vars_in(&self, env: &Path, path: Option<&str>) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(k, v)| {
                let v = expand(v, env);
                match (k.as_str(), path) {
                    ("PATH", Some(p)) if !p.is_empty() => (k.clone(), format!("{v}:{p}")),
                    _ => (k.clone(), v),
                }
            })
            .collect()
    }
}

/// `template` with [`ENV`] and [`SRC`] replaced for the environment at `env`.
pub fn expand(template: &str, env: &Path) -> String {
    let env = env.display().to_string();
    template.replace(SRC, &format!("{env}/src")).replace(ENV, &env)
}

/// What a repository's files say about installing its tests, for one language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvPlan {
    pub language: crate::Language,
    /// Every file the plan was made from (repository-relative, sorted): their bytes key the
    /// environment, and they are copied into `{src}` before the install.
    pub inputs: Vec<String>,
    /// Whether the install needs the whole source (the project itself is installed), not
    /// only [`inputs`](Self::inputs).
    pub whole_source: bool,
    pub requires: Vec<ToolRequirement>,
    pub findings: Vec<Finding>,
}

/// One round's repairs: steps to run, the project's build to run before the tests (see
/// [`Activation::build`]), and what no step can fix (a missing system tool).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repairs {
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<ProjectBuild>,
    pub unresolved: Vec<String>,
}

/// The project's build, found in its own files, and why carve runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectBuild {
    pub argv: Vec<String>,
    pub why: String,
}

/// What a verification run showed, for [`EnvSupport::repairs`].
#[derive(Debug, Clone, Default)]
pub struct Failures {
    /// Messages of tests that did not pass, and of files that could not be collected.
    pub messages: Vec<String>,
    /// The runner's output tails (or the error of a run that could not start).
    pub output: String,
    /// The repository (read only): what it provides itself is never installed as a repair.
    pub repo: std::path::PathBuf,
}

/// The exact installed set: packages and versions, the lockfile it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    /// Package name → version, as the package manager reports it.
    pub packages: BTreeMap<String, String>,
    /// The lockfile the set is pinned by (`package-lock.json`, `go.sum`, `Cargo.lock`,
    /// `requirements.lock` written by carve), and its SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockfile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockfile_sha256: Option<String>,
    /// Versions of the tools the install used (`pip`, `npm`, `pnpm` …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, String>,
}

/// What the Dockerfile is written from: a base image, files copied before the install, the
/// install steps, then the source, then steps that need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRecipe {
    /// The official image (`python:3.11-slim-bookworm`).
    pub base: String,
    /// Install inputs copied from the repository before the install (repository-relative).
    pub inputs: Vec<String>,
    /// Files carve writes into the build context (`.carve-env/<name>`): a pinned set the
    /// repository does not hold (a `requirements.lock`, a generated lockfile).
    pub context_files: BTreeMap<String, String>,
    /// The dependency layer: steps over the inputs (templates as in [`Step`]).
    pub install: Vec<Step>,
    /// Steps after the source is copied in (the project's own install).
    pub after_source: Vec<Step>,
    /// Variables of the final image (templates), e.g. the activation's.
    pub env: Vec<(String, String)>,
    /// Folders of `{src}` the repository's copy gets as links (the activation's `linked`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked: Vec<String>,
    /// The project's build (the activation's `build`), run last in the repository's copy so
    /// that the image's source holds what it makes; runs in the image build again in their
    /// own trees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub build: Vec<String>,
}

/// A set-up error a language reports: what is missing or wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// Nothing in the repository says how to install it.
    #[error("{0}")]
    NoMetadata(String),
    /// A file that could not be read or parsed.
    #[error("{file}: {message}")]
    BadFile { file: String, message: String },
    /// The interpreter or toolchain version asked for is not on this machine.
    #[error("{tool} {wanted} is needed ({origin}), but this machine has {present}; {hint}")]
    Unavailable { tool: String, wanted: String, origin: String, present: String, hint: String },
    /// A tool the install needs is missing.
    #[error("`{tool}` is needed to {why} and was not found: {hint}")]
    ToolMissing { tool: String, why: String, hint: String },
}

/// A language's environment set-up. Every method but [`detect`](Self::detect) is given the
/// plan it made.
pub trait EnvSupport: Sync {
    /// The files of `repo` (relative) a plan would be made from, cheaply (no parsing): their
    /// bytes key the environment, so later commands find it without planning again.
    fn inputs(&self, repo: &Path) -> Vec<String>;
    /// What the repository's files say; [`EnvError::NoMetadata`] (naming what was looked
    /// for) when there is nothing to read.
    fn detect(&self, repo: &Path) -> Result<EnvPlan, EnvError>;
    /// The tools to install with, present on this machine, chosen for the plan's
    /// requirements; an error names what is needed and what is present.
    fn toolchain(&self, plan: &EnvPlan) -> Result<Vec<Tool>, EnvError>;
    /// The install steps, in order.
    fn install_steps(&self, plan: &EnvPlan, tools: &[Tool]) -> Vec<Step>;
    /// How test runs use the environment.
    fn activation(&self, plan: &EnvPlan, tools: &[Tool]) -> Activation;
    /// What to install after a verification run that did not pass, given the steps already
    /// run (a repair is never repeated).
    fn repairs(&self, plan: &EnvPlan, failures: &Failures, done: &[Step]) -> Repairs;
    /// The installed set of the environment at `env`.
    fn inventory(&self, plan: &EnvPlan, tools: &[Tool], env: &Path) -> Inventory;
    /// The image recipe that rebuilds the environment (at `env`) from the official base image.
    fn image(&self, plan: &EnvPlan, tools: &[Tool], steps: &[Step], inventory: &Inventory, env: &Path) -> ImageRecipe;
    /// Another way to run `step` after it failed with `output` (npm's peer-dependency
    /// conflict → `--legacy-peer-deps`, yarn's engines check → `--ignore-engines`), tried once;
    /// `None`: the failure stands. Default: none.
    fn retry(&self, _plan: &EnvPlan, _step: &Step, _output: &str) -> Option<Step> {
        None
    }
    /// Files the install made that the repository does not hold and its code imports (a
    /// version file setuptools-scm or hatch-vcs writes at build time, a compiled extension
    /// module the build left under `build/`), linked into every run tree like
    /// [`Activation::linked`]. Called after the install. Default: none.
    fn generated(&self, _plan: &EnvPlan, _env: &Path, _repo: &Path) -> Vec<GeneratedFile> {
        Vec::new()
    }
    /// What the repository brings itself that makes an environment of carve's unnecessary
    /// (its own virtualenv, its own `node_modules`), said as a reason; `None`: nothing.
    fn provided(&self, _repo: &Path) -> Option<String> {
        None
    }
    /// How long one install step may take.
    fn step_timeout(&self) -> Duration {
        Duration::from_secs(20 * 60)
    }
}

/// The shell commands of the repository's CI configuration, each with the file it was read
/// from: every line of the [`ci_files`] split at `&&` and `;`, and where one runs `make
/// [TARGET…]` in the repository's root, the recipe lines of those targets (the first target
/// when none is named) and of their prerequisites in the root `Makefile`, with make's `@`,
/// `-` and `+` prefixes dropped. mitsuhiko/similar's workflow runs `make test`, whose recipe
/// is `cargo test --all-features`. A line that runs a script (`ci/run.sh`) is not followed: such
/// scripts build their commands from variables carve would have to evaluate.
pub fn ci_commands(repo: &Path) -> Vec<(String, String)> {
    let makefile = ["Makefile", "makefile", "GNUmakefile"]
        .into_iter()
        .find_map(|name| Some((name, std::fs::read_to_string(repo.join(name)).ok()?)));
    let mut out = Vec::new();
    for file in ci_files(repo) {
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else { continue };
        for line in text.lines() {
            for command in line.split("&&").flat_map(|c| c.split(';')) {
                out.push((file.clone(), command.to_string()));
                let (Some(targets), Some((name, text))) = (make_targets(command), makefile.as_ref()) else { continue };
                for recipe in make_recipes(text, &targets) {
                    out.push((name.to_string(), recipe));
                }
            }
        }
    }
    out
}

/// The targets of a `make` command run in the repository's root (`make`, `make test lint`,
/// `run: make test`), `Some(vec![])` for make's default target; `None` for another command or
/// one run elsewhere (`make -C dir`, `make -f other.mk`).
fn make_targets(command: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "make" || *w == "gmake")?;
    if words[..at].iter().any(|w| !matches!(*w, "-" | "run:" | "-run:")) {
        return None;
    }
    let rest = &words[at + 1..];
    if rest
        .iter()
        .any(|w| w.starts_with("-C") || w.starts_with("-f") || w.starts_with("--directory") || w.starts_with("--file"))
    {
        return None;
    }
    Some(rest.iter().filter(|w| !w.starts_with('-') && !w.contains('=')).map(|w| w.to_string()).collect())
}

/// The recipe lines of `targets` (make's first target when empty) and, depth first, of their
/// prerequisites, each target once, in a Makefile's text.
fn make_recipes(text: &str, targets: &[String]) -> Vec<String> {
    let mut rules: Vec<(Vec<String>, Vec<String>, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            if let Some((_, _, lines)) = rules.last_mut() {
                lines.push(recipe.trim_start_matches(['@', '-', '+']).trim().to_string());
            }
            continue;
        }
        let head = line.split('#').next().unwrap_or("");
        match head.split_once(':') {
            Some((names, deps)) if !names.contains('=') && !deps.starts_with('=') && !head.starts_with([' ', '\t']) => {
                let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
                rules.push((words(names), words(deps.split(';').next().unwrap_or("")), Vec::new()));
            }
            _ if !head.trim().is_empty() => rules.push((Vec::new(), Vec::new(), Vec::new())),
            _ => {}
        }
    }
    let mut wanted: Vec<String> = targets.to_vec();
    if wanted.is_empty() {
        let first = rules.iter().flat_map(|(names, ..)| names).find(|n| !n.starts_with('.'));
        wanted.extend(first.cloned());
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    while let Some(target) = wanted.pop() {
        if !seen.insert(target.clone()) {
            continue;
        }
        let Some((_, deps, lines)) = rules.iter().find(|(names, ..)| names.contains(&target)) else { continue };
        out.extend(lines.iter().filter(|l| !l.is_empty()).cloned());
        wanted.extend(deps.iter().rev().cloned());
    }
    out
}

/// Compare dotted version numbers (`3.9` < `3.11`, `1.22.0` = `1.22`).
/// A repository's CI configuration files, as repository-relative paths: its
/// `.github/workflows/*.yml` (and `*.yaml`) sorted by name, then `.gitlab-ci.yml` and
/// `.travis.yml` (listed whether or not they exist: readers skip what is missing). The
/// languages read their install and test lines from these as a last source.
pub fn ci_files(repo: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo.join(".github/workflows"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| format!(".github/workflows/{}", e.file_name().to_string_lossy()))
        .filter(|f| f.ends_with(".yml") || f.ends_with(".yaml"))
        .collect();
    files.sort();
    files.extend([".gitlab-ci.yml", ".travis.yml"].iter().map(|s| s.to_string()));
    files
}

pub fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |s: &str| -> Vec<u64> {
        s.trim().trim_start_matches(['v', 'V']).split(['.', '-', '+']).map_while(|p| p.parse::<u64>().ok()).collect()
    };
    let (mut pa, mut pb) = (parts(a), parts(b));
    let n = pa.len().max(pb.len());
    pa.resize(n, 0);
    pb.resize(n, 0);
    pa.cmp(&pb)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mitsuhiko/similar: the workflow runs `make test`; the Makefile's recipe is what runs.
    #[test]
    fn ci_commands_follow_make_targets_into_the_makefile() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".github/workflows")).unwrap();
        std::fs::write(
            d.path().join(".github/workflows/tests.yml"),
            "jobs:\n  t:\n    steps:\n      - name: Test\n        run: make test\n      - run: make -C docs html\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join("Makefile"),
            "all: test\n\nbuild:\n\t@cargo build --all-features\n\ntest: lint # the CI's\n\t@cargo test\n\t-cargo test --all-features\n\nlint:\n\t@cargo clippy\n\nX := 1\n",
        )
        .unwrap();
        let commands = ci_commands(d.path());
        let from_make: Vec<&str> = commands.iter().filter(|(f, _)| f == "Makefile").map(|(_, c)| c.as_str()).collect();
        assert_eq!(from_make, ["cargo test", "cargo test --all-features", "cargo clippy"]);
        assert!(commands.iter().any(|(f, c)| f == ".github/workflows/tests.yml" && c.contains("make test")));
        assert_eq!(make_targets("make"), Some(vec![]));
        assert_eq!(make_recipes("all: test\ntest:\n\tcargo test\n", &[]), ["cargo test"]);
        assert_eq!(make_targets("make -C docs html"), None);
        assert_eq!(make_targets("cargo make test"), None);
    }

    #[test]
    fn versions_compare_numerically() {
        use std::cmp::Ordering::*;
        assert_eq!(version_cmp("3.9", "3.11"), Less);
        assert_eq!(version_cmp("1.22.0", "1.22"), Equal);
        assert_eq!(version_cmp("go1.26.8", "1.26"), Less, "a prefix that is not a number stops the parse");
        assert_eq!(version_cmp("v20.1", "20"), Greater);
    }

    #[test]
    fn templates_expand_and_path_is_prepended() {
        let a = Activation {
            interpreter: Some("{env}/venv/bin/python".into()),
            vars: vec![("PATH".into(), "{env}/bin".into()), ("X".into(), "{src}/y".into())],
            linked: vec![],
            build: vec![],
        };
        let env = Path::new("/c/e");
        assert_eq!(a.interpreter_in(env).unwrap(), Path::new("/c/e/venv/bin/python"));
        assert_eq!(
            a.vars_in(env, Some("/usr/bin")),
            vec![("PATH".to_string(), "/c/e/bin:/usr/bin".to_string()), ("X".to_string(), "/c/e/src/y".to_string())]
        );
        let s = Step::new(&["pip", "install", "a b"], StepDir::Src, "x").with_env("K", "v");
        assert_eq!(s.display(), "K=v pip install 'a b'");
    }
}
