//! `carve dataset run | merge`: parse, call `carve-dataset`, print.

use anyhow::{Result, bail};
use std::fmt::Write as _;

use crate::Status;
use crate::cli::{DatasetCommand, DatasetExportArgs, DatasetRunArgs, DatasetSlurmArgs, Format, RecheckArg};
use crate::output::emit;
use carve_dataset::manifest::Slice;
use carve_dataset::merge::Merged;
use carve_dataset::progress::Reporter;
use carve_dataset::repo::{Recheck, RepoOptions};
use carve_dataset::run::{RunOptions, RunReport};
use carve_formats::dataset::RepoStatus;

pub fn run(command: DatasetCommand) -> Result<Status> {
    match command {
        DatasetCommand::Run(args) => run_manifest(&args),
        DatasetCommand::Merge { out, format } => {
            let merged = carve_dataset::merge::merge(&out)?;
            print_merged(format, &merged)?;
            Ok(if merged.pending.is_empty() { Status::Success } else { Status::ValidationFailed })
        }
        DatasetCommand::Summary { out, format } => {
            let summary = carve_dataset::merge::summary(&out)?;
            if format == Format::Html {
                print!("{}", carve_dataset::summary_html::page(&summary)?);
            } else {
                emit(format, &summary, || summary_text(&summary))?;
            }
            Ok(Status::Success)
        }
        DatasetCommand::Slurm(args) => slurm(&args),
        DatasetCommand::Export(args) => export(&args),
    }
}

fn export(args: &DatasetExportArgs) -> Result<Status> {
    let format: carve_dataset::export::ExportFormat = args.export_format.parse()?;
    let opts = carve_dataset::export::ExportOptions {
        dir: args.dir.clone(),
        format,
        to: args.to.clone(),
        check: args.check,
        base: args.base.clone(),
        mirrors: carve_dataset::source::mirrors(&args.mirrors),
    };
    let report = carve_dataset::export::export(&opts)?;
    emit(args.report, &report, || {
        let mut s =
            format!("{} task(s) exported as {} to {}\n", report.tasks.len(), report.format, report.to.display());
        for k in &report.skipped {
            let _ = writeln!(s, "left out {}: {}", k.instance_id, k.reason);
        }
        for c in &report.checks {
            let what = if c.ok() {
                "gold passes, empty fails".to_string()
            } else {
                format!("gold passes: {}, empty fails: {} {}", c.gold_passes, c.empty_fails, c.note)
            };
            let _ = writeln!(s, "check {}: {what}", c.instance_id);
        }
        s
    })?;
    Ok(if report.all_checks_pass() { Status::Success } else { Status::ValidationFailed })
}

fn slurm(args: &DatasetSlurmArgs) -> Result<Status> {
    let manifest = carve_dataset::manifest::load(&args.manifest)?;
    let mut run_args = Vec::new();
    if let Some(k) = args.candidates {
        run_args.extend(["--candidates".to_string(), k.to_string()]);
    }
    run_args.extend([
        "--protect".to_string(),
        args.protect.protect.to_string(),
        "--max-lines".to_string(),
        args.protect.max_lines.to_string(),
    ]);
    for m in &args.mirrors {
        run_args.extend(["--mirror".to_string(), std::path::absolute(m)?.display().to_string()]);
    }
    match args.recheck {
        RecheckArg::Local => {}
        RecheckArg::Image => run_args.extend(["--recheck".to_string(), "image".to_string()]),
        RecheckArg::Off => run_args.extend(["--recheck".to_string(), "off".to_string()]),
    }
    let carve = match &args.carve {
        Some(c) => std::path::absolute(c)?,
        None => std::env::current_exe()?,
    };
    let opts = carve_dataset::slurm::SlurmOptions {
        out: std::path::absolute(&args.out)?,
        carve,
        max_parallel: args.max_parallel,
        cpus_per_task: args.cpus_per_task,
        time: args.time.clone(),
        partition: args.partition.clone(),
        run_args,
    };
    let scripts = carve_dataset::slurm::write(&manifest, &opts)?;
    let jobs = if args.submit { Some(carve_dataset::slurm::submit(&scripts)?) } else { None };
    let json = serde_json::json!({
        "array": scripts.array, "merge": scripts.merge,
        "array_job": jobs.as_ref().map(|j| &j.0), "merge_job": jobs.as_ref().map(|j| &j.1),
    });
    emit(args.format, &json, || match &jobs {
        Some((a, m)) => format!("submitted array job {a} and merge job {m} ({})\n", scripts.array.display()),
        None => format!(
            "wrote {} and {}; submit with `sbatch`, or again with --submit\n",
            scripts.array.display(),
            scripts.merge.display()
        ),
    })?;
    Ok(Status::Success)
}

fn run_manifest(args: &DatasetRunArgs) -> Result<Status> {
    for l in &args.level {
        if *l != 1 && *l != 2 {
            bail!("--level takes 1 or 2, not {l}");
        }
    }
    let manifest = carve_dataset::manifest::load(&args.manifest)?;
    let slice = match (&args.index, &args.shard) {
        (Some(i), _) => Slice::parse_index(i)?,
        (None, Some(s)) => Slice::parse_shard(s)?,
        (None, None) => Slice::All,
    };
    let opts = RunOptions {
        out: args.out.clone(),
        slice,
        retry_failed: args.retry_failed,
        repo: RepoOptions {
            levels: args.level.clone(),
            candidates: args.candidates,
            protection: args.protect.protect,
            max_lines: args.protect.budget(),
            jobs: args.jobs.map(usize::from),
            recheck: match args.recheck {
                RecheckArg::Local => Recheck::Local,
                RecheckArg::Image => Recheck::Image,
                RecheckArg::Off => Recheck::Off,
            },
            keep_work: args.keep_work,
            mirrors: carve_dataset::source::mirrors(&args.mirrors),
            base_dir: manifest.base_dir(),
        },
    };
    let report = carve_dataset::run::run(&manifest, &opts, &Reporter::new())?;
    // A whole run ends with the dataset; a slice leaves merging to `carve dataset merge`.
    let merged = if slice == Slice::All { Some(carve_dataset::merge::merge(&args.out)?) } else { None };
    print_run(args.format, &report, merged.as_ref())?;
    let failed = report.results.iter().any(|r| r.status == RepoStatus::Failed);
    Ok(if failed { Status::ValidationFailed } else { Status::Success })
}

fn print_run(format: Format, report: &RunReport, merged: Option<&Merged>) -> Result<()> {
    let json = serde_json::json!({
        "slice": report.slice,
        "skipped": report.skipped,
        "summary": merged.map(|m| &m.summary),
    });
    emit(format, &json, || {
        let mut s = String::new();
        for r in &report.results {
            let what = match (&r.status, &r.failure) {
                (RepoStatus::Failed, Some(f)) => format!("failed in {}: {}", f.stage, f.reason),
                _ => format!("{} task(s), {} rejected", r.tasks.len(), r.rejected.len()),
            };
            let _ = writeln!(s, "{} {}: {what}", r.name, &r.commit[..8.min(r.commit.len())]);
        }
        if report.skipped > 0 {
            let _ = writeln!(s, "{} repositor(ies) finished by an earlier run were skipped", report.skipped);
        }
        if let Some(m) = merged {
            s.push_str(&merged_text(m));
        }
        s
    })
}

fn merged_text(m: &Merged) -> String {
    let count = |k: &str| m.summary.repositories.get(k).copied().unwrap_or(0);
    let mut s = format!(
        "dataset: {} task(s) from {} repositories ({} done, {} failed, {} pending); tasks.jsonl, summary.json and summary.html written\n",
        m.tasks,
        count("total"),
        count("done"),
        count("failed"),
        count("pending")
    );
    if !m.pending.is_empty() {
        let _ = writeln!(s, "pending: {}", m.pending.join(", "));
    }
    s
}

/// The summary's numbers as a few lines of text.
fn summary_text(s: &carve_formats::dataset::Summary) -> String {
    let count = |k: &str| s.repositories.get(k).copied().unwrap_or(0);
    let mut t = format!(
        "{} validated task(s) from {} repositories ({} done, {} failed, {} pending)\n",
        s.tasks,
        count("total"),
        count("done"),
        count("failed"),
        count("pending")
    );
    for r in &s.repos {
        let reason = r.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default();
        let _ = writeln!(t, "  {} {}: {} task(s), {} rejected{reason}", r.name, r.status, r.tasks, r.rejected);
    }
    let mut reasons: Vec<(&String, &usize)> = s.rejections.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (why, n) in reasons {
        let _ = writeln!(t, "  rejected {n}: {why}");
    }
    if let Some(n) = s.image_recheck.get("tasks") {
        let agree = s.image_recheck.get("agree").copied().unwrap_or(0);
        let _ = writeln!(
            t,
            "re-checked in their image: {n} task(s), {agree} with every status the same as on the checkout"
        );
    }
    if let Some(c) = s.cpu_seconds_per_task {
        let _ = writeln!(t, "CPU seconds per validated task: {c:.1}");
    }
    t
}

fn print_merged(format: Format, m: &Merged) -> Result<()> {
    emit(format, &m.summary, || merged_text(m))
}
