//! `carve env`: set up, verify, repair and record the repository's test environment, and
//! print what was found and run.

use anyhow::Result;

use crate::Status;
use crate::cli::{Common, EnvArgs};
use crate::output::emit;
use carve_pipeline::env::record::EnvStatus;

use carve_pipeline::env::image::{self, ImageInfo};
use carve_pipeline::env::{EnvOptions, EnvReport, record_image_size, setup};

/// What `carve env` prints: the set-up, and the image when `--build-image` built one.
#[derive(serde::Serialize)]
struct Printed {
    #[serde(flatten)]
    report: EnvReport,
    image: Option<ImageInfo>,
}

pub fn run(common: &Common, args: &EnvArgs, fresh: bool, repo_name: Option<&str>, build_image: bool) -> Result<Status> {
    let session = super::open_named(common, repo_name)?;
    let opts = options(&session, args, fresh);
    let mut report = setup(&session, &opts)?;
    let image = match (&report.dir, build_image) {
        (Some(dir), true) => {
            let built = image::build_image(&session.repo, dir, &report.environment)?;
            record_image_size(&session, dir, &mut report.environment, built.size_bytes)?;
            Some(built)
        }
        (None, true) => {
            anyhow::bail!("the environment of {} was not kept, so no image is built", session.repo.display())
        }
        _ => None,
    };
    let printed = Printed { report, image };
    emit(common.format, &printed, || {
        let mut s = text(&printed.report);
        if let Some(i) = &printed.image {
            s.push_str(&format!("image built: {} ({}, {} MB)\n", i.tag, i.id, i.size_bytes / 1_000_000));
        }
        s
    })?;
    let report = printed.report;
    Ok(match report.environment.status {
        EnvStatus::Verified => Status::Success,
        EnvStatus::Partial | EnvStatus::Failed => Status::ValidationFailed,
    })
}

/// The options from the flags and `[env]` of carve.toml.
pub fn options(session: &carve_pipeline::Session, args: &EnvArgs, fresh: bool) -> EnvOptions {
    EnvOptions {
        rounds: args.env_rounds,
        helper: args.env_helper.clone().or_else(|| session.config.env.helper.clone()),
        fresh,
    }
}

fn text(r: &EnvReport) -> String {
    let e = &r.environment;
    let mut s = String::new();
    let status = match e.status {
        EnvStatus::Verified => "verified",
        EnvStatus::Partial => "partial: some tests still fail",
        EnvStatus::Failed => "failed",
    };
    s.push_str(&format!("environment of {} at {} ({}): {status}\n", e.repo, e.commit, e.language));
    if let Some(dir) = &r.dir {
        s.push_str(&format!("  folder: {}{}\n", dir.display(), if r.reused { " (made before, reused)" } else { "" }));
    }
    let tools: Vec<String> = e.tools.iter().map(|(k, v)| format!("{k} {v}")).collect();
    s.push_str(&format!("  tools: {}\n", tools.join(", ")));
    s.push_str("found:\n");
    for f in &e.findings {
        s.push_str(&format!("  {:<16} {}  ({})\n", f.what, f.value, f.source));
    }
    s.push_str("installed with:\n");
    for step in &e.install {
        let round = if step.round > 0 { format!(" [repair round {}]", step.round) } else { String::new() };
        s.push_str(&format!("  {}{round}\n    why: {}\n", step.command, step.why));
    }
    s.push_str(&format!("  {} packages pinned", e.packages.packages.len()));
    if let Some(lock) = &e.packages.lockfile {
        s.push_str(&format!(" ({lock})"));
    }
    s.push('\n');
    s.push_str(&format!("tests: {}\n", e.baseline.summary()));
    for (id, msg) in e.baseline.failing.iter().take(20) {
        s.push_str(&format!("  still failing: {id}: {msg}\n"));
    }
    for (file, msg) in &e.baseline.collection_errors {
        s.push_str(&format!("  not collected: {file}: {msg}\n"));
    }
    for u in &e.unresolved {
        s.push_str(&format!("  to do by hand: {u}\n"));
    }
    s.push_str(&format!(
        "image: {} (FROM {}), Dockerfile and environment.json in the output folder\n",
        e.image.name, e.image.base
    ));
    s.push_str(&format!("took {:.1}s\n", r.seconds));
    s
}
