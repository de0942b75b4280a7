//! `carve arc …`: FeatureArc commands. Parses arguments, calls `carve-history`, prints.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::Status;
use crate::cli::Format;
use crate::output::emit;

#[derive(Debug, Subcommand)]
pub enum ArcCommand {
    /// Run an agent command through a chain bundle under L4 (or with L1–L3 feedback):
    /// one persistent workspace, a hidden gate after each stage, the chain gate at the end.
    Run(super::eval::ArcRunArgs),
    /// The FeatureArc metrics (m0, Gate, Cont., stage F2P, Depth, survival, regressions)
    /// with 95% bootstrap intervals over tasks, from `carve arc run` results.
    Report(super::eval::ArcReportArgs),
    /// Per first-parent commit of a range: definitions added / modified / removed / renamed,
    /// tests added or modified, import changes; with the analysis speed.
    Analyze {
        /// The repository (a checkout or a bare git directory; never modified).
        repo: PathBuf,
        /// `A..B` (commits after A up to B), or `B`; default HEAD's whole first-parent line.
        #[arg(long, default_value = "")]
        range: String,
        /// Analyse at most the newest N commits of the range.
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Mine same-feature chains (2–10 stages) with their evidence; discarded candidates with reasons.
    Mine {
        repo: PathBuf,
        #[arg(long, default_value = "")]
        range: String,
        /// `owner/name` used in chain ids (default: local/<directory name>).
        #[arg(long)]
        name: Option<String>,
        /// An external reviewer run by `sh -c` per kept chain: the chain and its stage patches
        /// as JSON on stdin, `{"keep": bool, "reason": "…"}` on stdout (history/src/review.rs).
        #[arg(long)]
        reviewer: Option<String>,
        /// Seconds the reviewer has per chain.
        #[arg(long, default_value_t = 600)]
        reviewer_timeout: u64,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Build the chain bundle of one mined chain: reference states S0…Sn, per-stage F2P/P2P
    /// tests (run twice), specs, contracts, and the chain suite (docs/formats.md, "Chain bundle").
    Build {
        repo: PathBuf,
        /// The chain id (or a unique prefix) as `carve arc mine` prints it.
        #[arg(long)]
        chain: String,
        /// The bundle goes to <out>/<chain id>/.
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value = "")]
        range: String,
        #[arg(long)]
        name: Option<String>,
        /// Take the chain from this `carve arc mine --format json` report instead of mining again.
        #[arg(long)]
        mined: Option<PathBuf>,
        /// carve.toml to use (default: <repo>/carve.toml, else detected from the repository's files).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Python interpreter to run the tests with (overrides the configuration).
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Re-check a chain bundle: every stage gate with the gold patches, and the chain gate.
    Validate {
        bundle: PathBuf,
        /// The repository the bundle was built from.
        #[arg(long)]
        repo: PathBuf,
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Build a git repository from a recipe of commits (fixtures with a scripted history).
    Recipe {
        /// The recipe (TOML, `[[commit]]` entries).
        recipe: PathBuf,
        /// The directory to create the repository in (must not exist).
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn run(cmd: ArcCommand) -> Result<Status> {
    match cmd {
        ArcCommand::Run(args) => super::eval::arc_run(&args),
        ArcCommand::Report(args) => super::eval::arc_report(&args),
        ArcCommand::Analyze { repo, range, limit, format } => analyze(&repo, &range, limit, format),
        ArcCommand::Mine { repo, range, name, reviewer, reviewer_timeout, format } => {
            let reviewer = reviewer.map(|c| (c, std::time::Duration::from_secs(reviewer_timeout)));
            mine(&repo, &range, name, reviewer, format)
        }
        ArcCommand::Build { repo, chain, out, range, name, mined, config, python, format } => {
            build(&repo, &chain, &out, &range, name, mined.as_deref(), config.as_deref(), python.as_deref(), format)
        }
        ArcCommand::Validate { bundle, repo, python, format } => validate(&bundle, &repo, python.as_deref(), format),
        ArcCommand::Recipe { recipe, out } => {
            anyhow::ensure!(!out.exists(), "{} exists; pick a new directory for the repository", out.display());
            let r = carve_history::recipe::Recipe::read(&recipe)?;
            let ids = carve_history::recipe::build(&r, &out)?;
            println!("{}: {} commits, HEAD {}", out.display(), ids.len(), ids.last().map_or("-", |s| s.as_str()));
            Ok(Status::Success)
        }
    }
}

fn analyze(repo: &Path, range: &str, limit: Option<usize>, format: Format) -> Result<Status> {
    let git = carve_history::git::Repo::open(repo)?;
    let history = carve_history::analyze(&git, range, limit)
        .with_context(|| format!("analysing the history of {}", repo.display()))?;
    emit(format, &history, || {
        let mut s = String::new();
        for c in &history.commits {
            let d = &c.definitions;
            let _ = writeln!(
                s,
                "{} {:<50} +{} ~{} -{} ren{} tests +{} ~{} files {}",
                c.short(),
                c.summary.chars().take(50).collect::<String>(),
                d.added.len(),
                d.modified.len(),
                d.removed.len(),
                d.renamed.len(),
                c.tests.added.len(),
                c.tests.modified.len(),
                c.files.len()
            );
        }
        let st = &history.stats;
        let _ = writeln!(
            s,
            "{} commits in {:.2}s ({:.1} commits/s); {} files indexed ({} in the start tree); {} import edges at the end",
            st.commits,
            st.seconds,
            st.commits_per_second,
            st.files_indexed,
            st.files_in_start_tree,
            history.import_edges
        );
        s
    })?;
    Ok(Status::Success)
}

fn repo_name(repo: &Path, name: Option<String>) -> String {
    name.unwrap_or_else(|| {
        let dir = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
        let base = dir.file_name().map(|n| n.to_string_lossy().trim_end_matches(".git").to_string());
        format!("local/{}", base.unwrap_or_else(|| "repo".into()))
    })
}

fn mine(
    repo: &Path,
    range: &str,
    name: Option<String>,
    reviewer: Option<(String, std::time::Duration)>,
    format: Format,
) -> Result<Status> {
    let opts = carve_history::MineOptions { repo_name: repo_name(repo, name), ..Default::default() };
    let (_, mut report) =
        carve_history::mine(repo, range, &opts).with_context(|| format!("mining the history of {}", repo.display()))?;
    if let Some((command, timeout)) = reviewer {
        carve_history::review::review(repo, &mut report, &command, timeout)?;
    }
    emit(format, &report, || {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} commits ({} sweeping, left out), {} evidence edges, {} candidates, {} chains kept, {} discarded (analysis {:.2}s, mining {:.2}s)",
            report.repo,
            report.commits,
            report.sweeping.len(),
            report.edges,
            report.candidates,
            report.chains.len(),
            report.discarded_total,
            report.analysis_seconds,
            report.mining_seconds
        );
        for c in &report.chains {
            let _ = writeln!(
                s,
                "\n{}  ({} stages, score {}, by {}, shared files {:.0}%)",
                c.chain_id,
                c.stages.len(),
                c.score,
                c.found_by,
                c.shared_file_share * 100.0
            );
            if let Some(v) = &c.review {
                let _ = writeln!(
                    s,
                    "  reviewer: kept{}",
                    if v.reason.is_empty() { String::new() } else { format!(" ({})", v.reason) }
                );
            }
            for st in &c.stages {
                let _ = writeln!(
                    s,
                    "  {} {} {}  ({} files, {} lines, tests +{} ~{})",
                    st.index,
                    &st.commits[0][..8],
                    st.title,
                    st.files.len(),
                    st.lines,
                    st.tests_added.len(),
                    st.tests_modified.len()
                );
                for e in st.evidence.iter().filter(|e| e.kind.builds_on()).take(4) {
                    let _ = writeln!(s, "      {:?}: {}", e.kind, e.detail);
                }
            }
        }
        if !report.discarded.is_empty() {
            let _ =
                writeln!(s, "\ndiscarded (first {} of {}):", report.discarded.len().min(20), report.discarded_total);
            for d in report.discarded.iter().take(20) {
                let ids: Vec<&str> = d.commits.iter().map(|c| &c[..8]).collect();
                let _ = writeln!(s, "  {}: {}", ids.join(" → "), d.reason);
            }
        }
        s
    })?;
    Ok(Status::Success)
}

#[allow(clippy::too_many_arguments)]
fn build(
    repo: &Path,
    chain_id: &str,
    out: &Path,
    range: &str,
    name: Option<String>,
    mined: Option<&Path>,
    config: Option<&Path>,
    python: Option<&Path>,
    format: Format,
) -> Result<Status> {
    let opts = carve_history::MineOptions { repo_name: repo_name(repo, name), ..Default::default() };
    let report = match mined {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            serde_json::from_str::<carve_history::MineReport>(&text).with_context(|| {
                format!("{} is not a `carve arc mine --format json` report; write one with that command", p.display())
            })?
        }
        None => carve_history::mine(repo, range, &opts)?.1,
    };
    let matches: Vec<&carve_history::Chain> =
        report.chains.iter().filter(|c| c.chain_id == chain_id || c.chain_id.starts_with(chain_id)).collect();
    let chain = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(carve_history::HistoryError::NoSuchChain {
                id: chain_id.into(),
                repo: repo.display().to_string(),
            }
            .into());
        }
        many => anyhow::bail!(
            "`{chain_id}` matches {} chains ({}); give more of the id",
            many.len(),
            many.iter().map(|c| c.chain_id.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    let mut cfg = match carve_pipeline::config::find(repo, config) {
        Some(p) => carve_pipeline::config::Config::read(&p)?,
        None => carve_pipeline::config::Config::detect(repo)
            .with_context(|| format!("{} has no working tree to detect from: pass --config", repo.display()))?,
    };
    if let Some(p) = python {
        cfg.set_python(p)?;
    }
    let bcfg = carve_history::bundle::BuildConfig {
        language: cfg.language,
        test: cfg.test.clone(),
        run_timeout: std::time::Duration::from_secs(cfg.timeouts.run),
        test_timeout: std::time::Duration::from_secs(cfg.timeouts.test),
        carve_toml: cfg.to_toml(),
        repo_name: opts.repo_name.clone(),
    };
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let outcome = carve_history::bundle::build_traced(repo, chain, &bcfg, out)?;
    emit(format, &outcome.chain, || build_report(&outcome))?;
    Ok(Status::Success)
}

/// What `carve arc build` prints: the bundle, each stage's tests and call dependency, the chain gate.
fn build_report(outcome: &carve_history::bundle::BuildOutcome) -> String {
    let mut s = format!("{}\n", outcome.dir.display());
    for (st, sel) in outcome.chain.stages.iter().zip(&outcome.selections) {
        let _ = writeln!(
            s,
            "  stage {} {}: F2P {} P2P {} (excluded: flaky {}, collateral {}, failing after {}){}",
            st.index,
            &st.commits[0][..8],
            st.f2p.len(),
            st.p2p.len(),
            sel.flaky.len(),
            sel.collateral.len(),
            sel.failing_after.len(),
            match outcome.unnamed_identifiers.get(st.index) {
                Some(u) if !u.is_empty() => format!("; spec does not name {}", u.join(", ")),
                _ => String::new(),
            }
        );
        match &st.call_dependency {
            Some(c) if c.traced => {
                let _ = writeln!(
                    s,
                    "    calls earlier stages' code: {}",
                    if c.earlier.is_empty() {
                        "none (not verified)".to_string()
                    } else {
                        c.earlier
                            .iter()
                            .map(|d| format!("{} (stage {})", d.definition, d.stage))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                );
            }
            Some(c) => {
                let _ = writeln!(s, "    call dependency not traced: {}", c.reason.as_deref().unwrap_or(""));
            }
            None => {}
        }
    }
    let _ = writeln!(s, "  chain gate: F2P {} P2P {}", outcome.chain.chain.f2p.len(), outcome.chain.chain.p2p.len());
    s
}

fn validate(bundle: &Path, repo: &Path, python: Option<&Path>, format: Format) -> Result<Status> {
    let mut cfg = carve_pipeline::config::Config::read(&bundle.join("carve.toml"))?;
    if let Some(p) = python {
        cfg.set_python(p)?;
    }
    let timeouts =
        (std::time::Duration::from_secs(cfg.timeouts.run), std::time::Duration::from_secs(cfg.timeouts.test));
    let checks = carve_history::bundle::validate(bundle, repo, &cfg.test, timeouts)?;
    let ok = checks.iter().all(|c| c.passed);
    emit(format, &checks, || {
        let mut s = String::new();
        for c in &checks {
            let _ = writeln!(s, "{}: {}", c.gate, if c.passed { "passed" } else { "FAILED" });
            for p in &c.problems {
                let _ = writeln!(s, "  {p}");
            }
        }
        s
    })?;
    Ok(if ok { Status::Success } else { Status::ValidationFailed })
}
