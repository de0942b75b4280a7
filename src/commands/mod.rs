//! One file per subcommand: parse its arguments, call the pipeline stages it needs, print
//! the report. Nothing in `pipeline/` imports from here.

use anyhow::Result;

use crate::Status;
use crate::cli::{Cli, Command, Common, EdgeMode};
use carve_pipeline::trace::TraceMode;
use carve_pipeline::{Session, SessionOptions};

pub mod arc;
mod audit;
mod baseline;
mod dataset;
mod env;
pub mod eval;
mod extract;
mod index;
mod init;
mod tasks;
mod trace;
mod validate;
mod workspace;

pub fn run(cli: Cli) -> Result<Status> {
    match cli.command {
        Command::Init { common, force } => init::run(&common, force),
        Command::Env { common, env, fresh, repo_name, build_image } => {
            env::run(&common, &env, fresh, repo_name.as_deref(), build_image)
        }
        Command::Index { common } => index::run(&common),
        Command::Baseline { common, tests, fresh } => baseline::run(&common, &tests, fresh),
        Command::Trace { common, edges, tests, fresh } => trace::run(&common, edges, &tests, fresh),
        Command::Audit { common, feature, protect } => {
            audit::run(&common, &feature.f2p, feature.edges, feature.entry_filter.as_deref(), &protect)
        }
        Command::Extract { common, f2p, remove, remove_tests, edges, protect, statement } => {
            extract::run(&common, &f2p, &remove, &remove_tests, edges, &protect, &statement)
        }
        Command::Workspace { bundle, repo, out, format } => workspace::run(&bundle, &repo, &out, format),
        Command::Validate { bundle, repo, format, python, out, runtime } => {
            validate::run(&bundle, &repo, format, python.as_deref(), out.as_deref(), runtime.runtime())
        }
        Command::RunInImage { request, result } => {
            carve_pipeline::image_runs::run_inside(&request, &result)?;
            Ok(Status::Success)
        }
        Command::Tasks {
            common,
            f2p_groups,
            edges,
            level,
            f2p_pass_threshold,
            entry_filter,
            protect,
            p2p_files,
            module_groups,
            candidates,
            statement,
            env,
            no_env,
            runtime,
            ..
        } => {
            let protection = p2p_files.map_or(protect.protect, carve_pipeline::protect::Protection::Sampled);
            let opts = tasks::TaskOptions {
                levels: &level,
                threshold: f2p_pass_threshold,
                entry_filter: entry_filter.as_deref(),
                protection,
                max_lines: protect.budget(),
                kinds: match module_groups {
                    None => carve_pipeline::classify::CandidateKinds::for_policy(protection),
                    Some(crate::cli::ModuleGroups::Off) => carve_pipeline::classify::CandidateKinds::Files,
                    Some(crate::cli::ModuleGroups::Also) => carve_pipeline::classify::CandidateKinds::FilesAndModules,
                    Some(crate::cli::ModuleGroups::Only) => carve_pipeline::classify::CandidateKinds::Modules,
                },
                candidates,
                statement: &statement,
                env: (!no_env).then_some(&env),
                runtime: runtime.runtime(),
            };
            tasks::run(&common, &f2p_groups, edges, &opts)
        }
        Command::Grade(args) => eval::grade(&args),
        Command::Report(args) => eval::report(&args),
        Command::Arc { command } => arc::run(command),
        Command::Dataset { command } => dataset::run(command),
    }
}

/// The session of the repository named by the common arguments.
fn open(common: &Common) -> Result<Session> {
    open_named(common, None)
}

/// [`open`] with `--repo-name owner/name` (commands that write instance ids or statements).
fn open_named(common: &Common, repo_name: Option<&str>) -> Result<Session> {
    let repo_name = repo_name.map(carve_pipeline::identity::parse_repo_name).transpose()?;
    Ok(Session::open(SessionOptions {
        repo: &common.repo,
        out: common.out.as_deref(),
        config: common.config.as_deref(),
        python: common.python.as_deref(),
        timeout: common.timeout,
        test_timeout: common.test_timeout,
        jobs: common.jobs.map(usize::from),
        repo_name,
    })?)
}

/// `--edges`, as the pipeline's trace mode.
fn trace_mode(edges: EdgeMode) -> TraceMode {
    match edges {
        EdgeMode::FirstHits => TraceMode::FirstHits,
        EdgeMode::Exact => TraceMode::Exact,
    }
}
