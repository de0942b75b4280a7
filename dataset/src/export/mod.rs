//! `carve dataset export DIR --format swebench|featurebench|harbor --to OUT`: the validated
//! tasks of a `carve dataset run` folder in a layout an existing harness reads, with a dataset
//! card (`README.md` with the YAML Hugging Face reads):
//!
//! - [`swebench`]: rows (`data/test.jsonl`, `data/test.parquet`) and the SWE-bench 5.0 task repo (`sweb.yaml`,
//!   `tasks/<instance_id>/{task.yaml, tests.json, problem_statement.md, gold.patch,
//!   test.patch, eval.sh, Dockerfile, mask.patch}`);
//! - [`featurebench`]: FeatureBench's cases (`cases/<owner>__<repo>.<commit8>/<test
//!   stem>.<hash8>.lv1/{instance.json, patch.diff, test_patch.diff, problem_statement.md}`,
//!   `patch` being the *mask* patch and F2P/P2P test files) and rows (`data/test.jsonl`);
//! - [`harbor`]: Harbor tasks (`<instance_id>/{task.toml, instruction.md,
//!   environment/Dockerfile, tests/test.sh, solution/solve.sh}`).
//!
//! The command that runs a task's tests comes from the environment `carve env` recorded for
//! it (its test command) and the language's [`carve_languages::eval_command`]; this crate
//! names no language. With `--check`, [`check`] runs each export's own evaluation script on
//! the masked repository, once with the gold patch (it must pass) and once with none (it must
//! fail). Output is deterministic: exporting twice gives the same bytes.

pub mod card;
pub mod check;
pub mod featurebench;
pub mod harbor;
pub mod parquet;
pub mod patch;
pub mod swebench;
pub mod task;

use std::path::{Path, PathBuf};

use crate::error::{Context, bail};
use crate::layout::{Layout, write_atomic};
use crate::{Error, Result};

pub use task::Task;

/// The layouts `carve dataset export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExportFormat {
    Swebench,
    Featurebench,
    Harbor,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 3] = [ExportFormat::Swebench, ExportFormat::Featurebench, ExportFormat::Harbor];

    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Swebench => "swebench",
            ExportFormat::Featurebench => "featurebench",
            ExportFormat::Harbor => "harbor",
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| Error::msg(format!("unknown export format `{s}` (known: swebench, featurebench, harbor)")))
    }
}

/// What to export, where, and whether to check it.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The `carve dataset run` output folder.
    pub dir: PathBuf,
    pub format: ExportFormat,
    /// The export's folder: absent or empty.
    pub to: PathBuf,
    /// Run every task's evaluation script with the gold patch and with an empty one.
    pub check: bool,
    /// Where local `url`s of the manifest are found (the manifest's folder; default: the
    /// parent of `dir`).
    pub base: Option<PathBuf>,
    pub mirrors: Vec<PathBuf>,
}

/// A task left out of an export, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub instance_id: String,
    pub reason: String,
}

/// What an export wrote (and, with `--check`, what the checks found).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExportReport {
    pub format: &'static str,
    pub to: PathBuf,
    pub tasks: Vec<String>,
    pub skipped: Vec<Skipped>,
    pub checks: Vec<check::CheckResult>,
}

impl ExportReport {
    pub fn all_checks_pass(&self) -> bool {
        self.checks.iter().all(|c| c.ok())
    }
}

/// One export: the files it writes, relative to its folder, sorted by path.
pub type Files = std::collections::BTreeMap<String, Vec<u8>>;

/// Export `opts.dir` (see the module documentation).
pub fn export(opts: &ExportOptions) -> Result<ExportReport> {
    let layout = Layout::new(std::path::absolute(&opts.dir)?);
    if !layout.manifest().is_file() {
        bail!(
            "{} is not a `carve dataset run` output folder (it has no manifest.json): give the folder `carve dataset run MANIFEST --out DIR` wrote",
            opts.dir.display()
        );
    }
    check_empty(&opts.to)?;
    let (tasks, mut skipped) = task::load_all(&layout)?;
    let (files, written, more) = match opts.format {
        ExportFormat::Swebench => swebench::files(&tasks)?,
        ExportFormat::Featurebench => featurebench::files(&tasks),
        ExportFormat::Harbor => harbor::files(&tasks),
    };
    skipped.extend(more);
    skipped.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
    let mut files = files;
    files.insert("README.md".into(), card::card(opts.format, &written, &skipped).into_bytes());
    write_files(&opts.to, &files)?;
    let checks = if opts.check {
        let base = match &opts.base {
            Some(b) => b.clone(),
            None => layout.root.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        let ctx = check::CheckContext { layout: &layout, base, mirrors: opts.mirrors.clone() };
        check::check(&ctx, opts.format, &std::path::absolute(&opts.to)?, &tasks, &written)?
    } else {
        Vec::new()
    };
    Ok(ExportReport { format: opts.format.name(), to: opts.to.clone(), tasks: written, skipped, checks })
}

/// `to` must not exist or be an empty folder: an export never mixes with older files.
fn check_empty(to: &Path) -> Result<()> {
    match std::fs::read_dir(to) {
        Ok(mut rd) => {
            if rd.next().is_some() {
                bail!(
                    "{} is not empty: export into a new or empty folder (an export never mixes with older files)",
                    to.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            bail!("{} is a file: --to takes a folder", to.display())
        }
        Err(e) => Err(Error::from(e)).context(format!("failed to read {}", to.display())),
    }
}

fn write_files(to: &Path, files: &Files) -> Result<()> {
    for (rel, bytes) in files {
        let path = to.join(rel);
        write_atomic(&path, bytes)?;
        if rel.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("failed to make {} executable", path.display()))?;
        }
    }
    Ok(())
}

/// JSON of `value` with two-space indentation and a final newline.
pub(crate) fn pretty(value: &serde_json::Value) -> Vec<u8> {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s.into_bytes()
}

/// One JSON object per line.
pub(crate) fn jsonl(rows: &[serde_json::Value]) -> Vec<u8> {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r).unwrap_or_default());
        s.push('\n');
    }
    s.into_bytes()
}
