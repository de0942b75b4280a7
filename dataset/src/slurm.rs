//! `carve dataset slurm`: the job-array script that runs one manifest entry per array task
//! (`carve dataset run --index $SLURM_ARRAY_TASK_ID`), and a merge job that runs once every
//! task has ended (`--dependency=afterany`). Both are written to `<out>/slurm/`; `submit`
//! hands them to `sbatch`. The same `--index` runs under a Kubernetes Indexed Job
//! (`JOB_COMPLETION_INDEX`) or GNU parallel (`parallel carve dataset run M --out D --index {}
//! ::: $(seq 0 N-1)`); see `docs/dataset.md`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Context, bail};
use crate::manifest::LoadedManifest;
use crate::{Error, Result};

/// What the scripts run and ask Slurm for.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    /// The dataset's folder (absolute in the scripts: jobs start elsewhere).
    pub out: PathBuf,
    /// The carve binary the jobs run.
    pub carve: PathBuf,
    /// At most this many array tasks at once (`%K`).
    pub max_parallel: Option<usize>,
    pub cpus_per_task: usize,
    /// `--time` of each array task (Slurm's syntax, e.g. `4:00:00`).
    pub time: Option<String>,
    pub partition: Option<String>,
    /// Arguments every `carve dataset run` gets after `--index` (caps, mirrors, levels).
    pub run_args: Vec<String>,
}

/// The two scripts' paths.
#[derive(Debug, Clone)]
pub struct Scripts {
    pub array: PathBuf,
    pub merge: PathBuf,
}

/// A word as one shell argument.
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn header(name: &str, opts: &SlurmOptions, logs: &str) -> String {
    let mut s = format!("#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --output={logs}\n");
    s.push_str(&format!("#SBATCH --cpus-per-task={}\n", opts.cpus_per_task.max(1)));
    if let Some(t) = &opts.time {
        s.push_str(&format!("#SBATCH --time={t}\n"));
    }
    if let Some(p) = &opts.partition {
        s.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    s
}

/// The array script over every entry of `manifest`.
pub fn array_script(manifest: &LoadedManifest, opts: &SlurmOptions) -> String {
    let n = manifest.entries().len();
    let out = opts.out.display().to_string();
    let mut s = header("carve-dataset", opts, &format!("{out}/slurm/logs/%A_%a.out"));
    let cap = opts.max_parallel.map(|k| format!("%{k}")).unwrap_or_default();
    s.push_str(&format!("#SBATCH --array=0-{}{cap}\n", n.saturating_sub(1)));
    s.push_str(&format!("# {n} repositories of {}, one per array task.\n", manifest.path.display()));
    s.push_str("set -euo pipefail\nexport CARVE_PROGRESS=lines\n");
    let mut cmd = vec![
        quote(&opts.carve.display().to_string()),
        "dataset run".into(),
        quote(&manifest.path.display().to_string()),
        "--out".into(),
        quote(&out),
        "--index \"$SLURM_ARRAY_TASK_ID\"".into(),
    ];
    cmd.extend(opts.run_args.iter().map(|a| quote(a)));
    // Exit 1: the repository was recorded as failed, with its reason; the task did its work.
    s.push_str(&format!("{} || [ $? -eq 1 ]\n", cmd.join(" ")));
    s
}

/// The merge script (run after the array).
pub fn merge_script(opts: &SlurmOptions) -> String {
    let out = opts.out.display().to_string();
    let mut s = header("carve-dataset-merge", opts, &format!("{out}/slurm/logs/merge-%j.out"));
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "{} dataset merge {} || [ $? -eq 1 ]\n",
        quote(&opts.carve.display().to_string()),
        quote(&out)
    ));
    s
}

/// Write both scripts to `<out>/slurm/`.
pub fn write(manifest: &LoadedManifest, opts: &SlurmOptions) -> Result<Scripts> {
    let dir = opts.out.join("slurm");
    std::fs::create_dir_all(dir.join("logs")).with_context(|| format!("failed to create {}", dir.display()))?;
    let scripts = Scripts { array: dir.join("array.sbatch"), merge: dir.join("merge.sbatch") };
    crate::layout::write_atomic(&scripts.array, array_script(manifest, opts).as_bytes())?;
    crate::layout::write_atomic(&scripts.merge, merge_script(opts).as_bytes())?;
    Ok(scripts)
}

/// Submit the array, then the merge depending on it; the two job ids.
pub fn submit(scripts: &Scripts) -> Result<(String, String)> {
    let array = sbatch(&scripts.array, None)?;
    let merge = sbatch(&scripts.merge, Some(&array))?;
    Ok((array, merge))
}

fn sbatch(script: &Path, after: Option<&str>) -> Result<String> {
    let mut c = Command::new("sbatch");
    c.arg("--parsable");
    if let Some(id) = after {
        c.arg(format!("--dependency=afterany:{id}"));
    }
    let o = c.arg(script).output().map_err(|e| {
        Error::msg(format!("could not run sbatch ({e}): is Slurm installed here? The script is {}", script.display()))
    })?;
    if !o.status.success() {
        bail!("sbatch {} failed: {}", script.display(), String::from_utf8_lossy(&o.stderr).trim());
    }
    let id = String::from_utf8_lossy(&o.stdout).trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() {
        bail!("sbatch {} printed no job id", script.display());
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_covers_every_entry_and_quotes_paths() {
        let d = tempfile::tempdir().unwrap();
        let c = "0123456789012345678901234567890123456789";
        let text: String =
            (0..3).map(|i| format!("[[repo]]\nname = \"a/r{i}\"\nurl = \"./r{i}\"\ncommit = \"{c}\"\n")).collect();
        let path = d.path().join("m.toml");
        std::fs::write(&path, text).unwrap();
        let m = crate::manifest::load(&path).unwrap();
        let opts = SlurmOptions {
            out: PathBuf::from("/data/my set"),
            carve: PathBuf::from("/usr/bin/carve"),
            max_parallel: Some(2),
            cpus_per_task: 2,
            time: Some("1:00:00".into()),
            partition: None,
            run_args: vec!["--candidates".into(), "5".into()],
        };
        let s = array_script(&m, &opts);
        assert!(s.contains("#SBATCH --array=0-2%2\n"), "{s}");
        assert!(
            s.contains("--out '/data/my set' --index \"$SLURM_ARRAY_TASK_ID\" --candidates 5 || [ $? -eq 1 ]"),
            "{s}"
        );
        assert!(s.contains("#SBATCH --time=1:00:00\n") && !s.contains("--partition"), "{s}");
        assert!(merge_script(&opts).contains("/usr/bin/carve dataset merge '/data/my set'"));
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
