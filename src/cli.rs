//! Command-line interface (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "carve",
    version,
    about = "Carve a feature out of a repository and turn it into an executable coding task"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    /// A self-contained HTML page (`carve audit`, `carve report`, `carve arc report`).
    Html,
}

/// `--runtime`: where test runs happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RuntimeArg {
    /// On this machine, with the environment `carve env` made here (or the tools on PATH).
    #[default]
    Local,
    /// Inside the environment's OCI image that the bundle names (built from its Dockerfile
    /// when missing) with docker, podman or buildah; the repository is copied in.
    Oci,
}

impl RuntimeArg {
    pub fn runtime(self) -> carve_pipeline::image_runs::Runtime {
        match self {
            RuntimeArg::Local => carve_pipeline::image_runs::Runtime::Local,
            RuntimeArg::Oci => carve_pipeline::image_runs::Runtime::Oci,
        }
    }
}

/// `carve tasks --module-groups[=also|only|off]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModuleGroups {
    /// One candidate per test file only.
    Off,
    /// The module groups after the candidates of one test file each.
    Also,
    /// Only the module groups.
    Only,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum EdgeMode {
    /// Callers captured on the first hits of each callee per test (cheap).
    #[default]
    FirstHits,
    /// Every call's caller (for audits; slower).
    Exact,
}

#[derive(Debug, Args, Clone)]
pub struct Common {
    /// The repository (its working tree is never modified).
    pub repo: PathBuf,
    /// Where results go. Default: a per-repository folder under the user's cache directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Configuration file (default: <repo>/carve.toml if present, else <out>/carve.toml, else detected).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format of the report.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Python interpreter to run the tests with (overrides carve.toml).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Timeout for a whole test run, in seconds (overrides carve.toml).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// A test making no progress for this many seconds is killed as hung; a test process gets at least 60 s to start and collect (overrides carve.toml).
    #[arg(long)]
    pub test_timeout: Option<u64>,
    /// Test runs carve may run at once (the untraced and the traced run of a cold start, the
    /// states of a task). Default: `CARVE_JOBS`, else 2 on a machine with two or more cores.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

#[derive(Debug, Args, Clone)]
pub struct FeatureArgs {
    /// F2P tests of the feature: test ids or test files; repeatable, or several after one flag.
    #[arg(long, num_args = 1.., required = true)]
    pub f2p: Vec<String>,
    /// How callers are captured while tracing.
    #[arg(long, value_enum, default_value_t)]
    pub edges: EdgeMode,
    /// An external command that filters entry-point candidates (JSON on stdin, JSON list on stdout).
    #[arg(long)]
    pub entry_filter: Option<String>,
}

/// How much a feature may take: the protection policy and the line budget (`tasks`,
/// `audit`, `extract`).
#[derive(Debug, Args, Clone)]
pub struct ProtectArgs {
    /// Which passing tests protect what they run. `all`: every other passing test (the
    /// smallest, safest tasks). `sampled:N` (FeatureBench's choice): the tests of at most N test
    /// files that run none of the feature's entry points (the one most files run gives way
    /// while none qualifies) are the P2P tests, those running the most of the feature's
    /// reached code first (ties by path); other tests that fail on the masked state are
    /// reported as `broken_tests`. `feature`: no test
    /// protects; everything the F2P tests reach that loading or building does not need is
    /// extracted, and `carve tasks` makes every test that then fails F2P and every test that
    /// still passes P2P (a test that fails only because its fixtures need extracted code
    /// keeps that code instead). Import/collection-time code and what the build needs
    /// always stay.
    #[arg(long, value_name = "POLICY", default_value = "all", value_parser = parse_protection)]
    pub protect: carve_pipeline::protect::Protection,
    /// The line budget of one feature, counted over whole definitions (FeatureBench draws
    /// 3,000-5,000): what does not fit stays whole and is listed in the audit
    /// (`over_budget`). 0: no budget.
    #[arg(long, value_name = "N", default_value_t = carve_pipeline::protect::DEFAULT_MAX_LINES)]
    pub max_lines: usize,
}

impl ProtectArgs {
    /// `--max-lines` for the pipeline (`None`: no budget).
    pub fn budget(&self) -> Option<usize> {
        (self.max_lines > 0).then_some(self.max_lines)
    }
}

fn parse_protection(s: &str) -> Result<carve_pipeline::protect::Protection, String> {
    s.parse()
}

/// How tasks name the repository and describe the feature (commands that write statements).
#[derive(Debug, Args, Clone, Default)]
pub struct StatementArgs {
    /// `owner/name` for instance ids and statements (default: from the `origin` remote URL,
    /// else `local/<folder name>`).
    #[arg(long)]
    pub repo_name: Option<String>,
    /// A command that writes the feature description: the statement's facts as JSON on its
    /// stdin, Markdown on its stdout (e.g. a script that asks a model). A failing command is an error.
    #[arg(long)]
    pub describe: Option<String>,
}

/// How the environment is set up (`carve env`, and the same step of `carve tasks`).
#[derive(Debug, Args, Clone)]
pub struct EnvArgs {
    /// A command that proposes set-up commands when carve's rules find nothing more to try
    /// (JSON on stdin, JSON on stdout; overrides `[env] helper` in carve.toml).
    #[arg(long)]
    pub env_helper: Option<String>,
    /// Repair rounds after the first verification run.
    #[arg(long, default_value_t = 3)]
    pub env_rounds: u32,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Detect the language and test command, and write carve.toml into the output folder.
    Init {
        #[command(flatten)]
        common: Common,
        /// Overwrite an existing carve.toml in the output folder.
        #[arg(long)]
        force: bool,
    },
    /// Set up the repository's tests from its own metadata in an environment carve owns
    /// (under the cache, never in the repository), verify it by running the suite, repair
    /// from what fails, and record environment.json and a Dockerfile. Later commands on the
    /// same repository use it without being told.
    Env {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        env: EnvArgs,
        /// Make it again even when one is recorded for these install inputs.
        #[arg(long)]
        fresh: bool,
        /// `owner/name` of the repository, for the environment's folder and image name
        /// (default: from the `origin` remote URL, else `local/<folder name>`).
        #[arg(long)]
        repo_name: Option<String>,
        /// Then build the environment's image (its name is image_name) with the OCI engine
        /// present (docker, podman or buildah; CARVE_OCI_ENGINE chooses).
        #[arg(long)]
        build_image: bool,
    },
    /// Print the definition index of the repository.
    Index {
        #[command(flatten)]
        common: Common,
    },
    /// Run the whole suite twice and record one status per test; flaky tests are marked.
    Baseline {
        #[command(flatten)]
        common: Common,
        /// Run only these tests (ids); every requested id gets a status.
        #[arg(long, num_args = 1..)]
        tests: Vec<String>,
        /// Ignore a cached baseline.
        #[arg(long)]
        fresh: bool,
    },
    /// Run the passing tests under the tracing shim and write the trace.
    Trace {
        #[command(flatten)]
        common: Common,
        #[arg(long, value_enum, default_value_t)]
        edges: EdgeMode,
        /// Trace only these tests (ids or files).
        #[arg(long, num_args = 1..)]
        tests: Vec<String>,
        /// Ignore a cached trace of the same tree.
        #[arg(long)]
        fresh: bool,
    },
    /// Classify what carving a feature would extract and what must remain, with reasons.
    Audit {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        feature: FeatureArgs,
        #[command(flatten)]
        protect: ProtectArgs,
    },
    /// Write the masked state, contract, problem statement and patches for a feature
    /// (from its F2P tests, or for explicit node ids with --remove).
    Extract {
        #[command(flatten)]
        common: Common,
        /// F2P tests of the feature (classification decides what to remove).
        #[arg(long, num_args = 1..)]
        f2p: Vec<String>,
        /// Remove exactly these node ids instead of classifying.
        #[arg(long, num_args = 1..)]
        remove: Vec<String>,
        /// Test ids or test files to remove with the feature.
        #[arg(long, num_args = 1..)]
        remove_tests: Vec<String>,
        #[arg(long, value_enum, default_value_t)]
        edges: EdgeMode,
        #[command(flatten)]
        protect: ProtectArgs,
        #[command(flatten)]
        statement: StatementArgs,
    },
    /// Re-run the validation of a task bundle (baseline, masked, restored, level 2).
    Validate {
        /// The task bundle directory (with instance.json).
        bundle: PathBuf,
        /// The repository the bundle was made from.
        #[arg(long)]
        repo: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        #[arg(long)]
        python: Option<PathBuf>,
        /// Where to put scratch copies (default: a temporary folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where the tests run: here, or inside the image the bundle names.
        #[arg(long, value_enum, default_value_t)]
        runtime: RuntimeArg,
    },
    /// Run tests inside an environment's image (what `--runtime oci` starts in the container).
    #[command(hide = true)]
    RunInImage { request: PathBuf, result: PathBuf },
    /// Everything: one traced run for the whole repository, candidate features (test files
    /// or --f2p groups), and one validated bundle per task plus tasks.jsonl.
    Tasks {
        #[command(flatten)]
        common: Common,
        /// Feature groups: each --f2p flag is one candidate (default: one per test file).
        #[arg(long, num_args = 1.., action = clap::ArgAction::Append)]
        f2p: Vec<String>,
        /// `--f2p` grouped by occurrence (filled from the matches by `Cli::parse_grouped`).
        #[arg(skip)]
        f2p_groups: Vec<Vec<String>>,
        #[arg(long, value_enum, default_value_t)]
        edges: EdgeMode,
        /// Levels to emit.
        #[arg(long, num_args = 1.., default_values_t = vec![1u8, 2u8])]
        level: Vec<u8>,
        /// Largest share of F2P tests allowed to pass on the masked state (0 = none may pass).
        #[arg(long, default_value_t = 0.0)]
        f2p_pass_threshold: f64,
        /// An external command that filters entry-point candidates (JSON on stdin, JSON list on stdout).
        #[arg(long)]
        entry_filter: Option<String>,
        #[command(flatten)]
        protect: ProtectArgs,
        /// The former name of `--protect sampled:N`.
        #[arg(long, value_name = "N", hide = true, conflicts_with = "protect")]
        p2p_files: Option<usize>,
        /// Also try, after the candidates of one test file each, one candidate per group of
        /// two or more test files that test the same module (a source file holding the most,
        /// or nearly the most, of the definitions their tests call) or the same package (a
        /// folder below the whole library), so that a feature can span test files and modules;
        /// a group whose task one of the others gives already is dropped as a duplicate;
        /// `--module-groups=only`: only those; `=off`: none. Default: `also` under
        /// `--protect sampled:N` and `feature` (feature-sized tasks), `off` under `all`.
        #[arg(long, value_enum, num_args = 0..=1, require_equals = true, default_missing_value = "also")]
        module_groups: Option<ModuleGroups>,
        /// Try only the K candidates that would extract the most: every candidate is
        /// classified first (no test runs) and they are tried in order of how many
        /// definitions they extract, most first (ties in candidate order); the others are
        /// listed as `skipped` in the report. Default: every candidate, in order.
        #[arg(long, value_name = "K")]
        candidates: Option<usize>,
        #[command(flatten)]
        statement: StatementArgs,
        #[command(flatten)]
        env: EnvArgs,
        /// Do not set up an environment first (use the interpreter and installed
        /// dependencies as found; also `CARVE_ENV=off`).
        #[arg(long)]
        no_env: bool,
        /// Where the validation of each candidate runs: here, or inside the environment's
        /// image (built when missing; the baseline and the trace always run here).
        #[arg(long, value_enum, default_value_t)]
        runtime: RuntimeArg,
    },
    /// Write the agent's workspace of a task bundle: the masked state as a fresh git
    /// repository with one commit, without history, caches or build outputs.
    Workspace {
        /// The task bundle directory (with instance.json).
        bundle: PathBuf,
        /// The repository the bundle was made from (never modified).
        #[arg(long)]
        repo: PathBuf,
        /// The workspace directory to create (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Grade solution patches on Level 1/2 task bundles: resolved, passed rate, per-test statuses.
    Grade(crate::commands::eval::GradeArgs),
    /// Resolved and passed rate per model and level, with 95% bootstrap intervals, from
    /// `carve grade` results.
    Report(crate::commands::eval::ReportArgs),
    /// FeatureArc: chains mined from git history (analyze, mine, build, validate), agents run
    /// through them (run) and the metrics (report).
    Arc {
        #[command(subcommand)]
        command: crate::commands::arc::ArcCommand,
    },
    /// Many repositories to a dataset: run a manifest (or one slice of it), merge the slices,
    /// write a Slurm job array, export to SWE-bench, FeatureBench and Harbor.
    Dataset {
        #[command(subcommand)]
        command: DatasetCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// For every repository of the manifest (or of one slice of it): check out the commit, set
    /// up its environment, baseline, trace once, try every candidate feature, validate, write
    /// bundles and check each again. Resumable: a run killed and started again redoes nothing
    /// finished. A whole run ends by merging the dataset (`carve dataset merge`).
    Run(DatasetRunArgs),
    /// Assemble the results of every slice in an output folder: tasks.jsonl, summary.json and
    /// summary.html.
    Merge {
        /// The output folder of `carve dataset run`.
        out: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// The summary of an output folder as it is now (read only; slices may still be running):
    /// yield per repository and language, rejections by reason, task sizes, time per stage.
    /// `--format html` prints the self-contained page with charts.
    Summary {
        /// The output folder of `carve dataset run`.
        out: PathBuf,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Write the Slurm job array that runs one manifest entry per task (`--index
    /// $SLURM_ARRAY_TASK_ID`) and a merge job after it, to `<out>/slurm/`; `--submit` submits both.
    Slurm(DatasetSlurmArgs),
    /// Export the validated tasks of an output folder for an existing harness: SWE-bench rows
    /// and its 5.0 task repo, FeatureBench cases, or Harbor tasks, with a dataset card.
    /// `--check` runs each task's own evaluation script with the gold patch (it must pass) and
    /// an empty one (it must fail).
    Export(DatasetExportArgs),
}

#[derive(Debug, Args, Clone)]
pub struct DatasetExportArgs {
    /// The output folder of `carve dataset run`.
    pub dir: PathBuf,
    /// swebench, featurebench or harbor.
    #[arg(long = "format", value_name = "FORMAT")]
    pub export_format: String,
    /// The export's folder (absent or empty).
    #[arg(long)]
    pub to: PathBuf,
    /// Run every task's evaluation script with the gold patch and with an empty patch.
    #[arg(long)]
    pub check: bool,
    /// The folder local `url`s of the manifest are relative to (default: DIR's parent).
    #[arg(long)]
    pub base: Option<PathBuf>,
    /// A folder of git mirrors for the checks' checkouts (repeatable).
    #[arg(long = "mirror")]
    pub mirrors: Vec<PathBuf>,
    /// How to print the report.
    #[arg(long = "report", value_enum, default_value_t)]
    pub report: Format,
}

#[derive(Debug, Args, Clone)]
pub struct DatasetSlurmArgs {
    /// The manifest (as for `carve dataset run`).
    pub manifest: PathBuf,
    /// The dataset's folder (on storage every node sees).
    #[arg(long)]
    pub out: PathBuf,
    /// At most K array tasks at once (`--array=0-N%K`).
    #[arg(long, value_name = "K")]
    pub max_parallel: Option<usize>,
    /// CPUs each array task asks for.
    #[arg(long, default_value_t = 2)]
    pub cpus_per_task: usize,
    /// Each task's time limit, in Slurm's syntax (`4:00:00`).
    #[arg(long)]
    pub time: Option<String>,
    #[arg(long)]
    pub partition: Option<String>,
    /// The carve binary the jobs run (default: this one).
    #[arg(long)]
    pub carve: Option<PathBuf>,
    /// Try at most K candidates per repository (passed to every `carve dataset run`).
    #[arg(long, value_name = "K")]
    pub candidates: Option<usize>,
    #[command(flatten)]
    pub protect: ProtectArgs,
    /// Git mirrors (passed to every `carve dataset run`).
    #[arg(long = "mirror", value_name = "DIR")]
    pub mirrors: Vec<PathBuf>,
    /// How each bundle is checked again (passed to every `carve dataset run`: its `--recheck`).
    #[arg(long, value_enum, default_value_t)]
    pub recheck: RecheckArg,
    /// Submit with sbatch after writing.
    #[arg(long)]
    pub submit: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args, Clone)]
pub struct DatasetRunArgs {
    /// The manifest: TOML (`[[repo]]` tables with name, url, commit) or JSONL (one per line).
    pub manifest: PathBuf,
    /// The dataset's folder (content-addressed by repository and commit; safe to resume).
    #[arg(long)]
    pub out: PathBuf,
    /// Run only entry N of the manifest (from 0); `env` reads SLURM_ARRAY_TASK_ID, else
    /// JOB_COMPLETION_INDEX (a Kubernetes Indexed Job).
    #[arg(long, value_name = "N|env", conflicts_with = "shard")]
    pub index: Option<String>,
    /// Run part I of N: the entries at positions p with p % N == I (I may be `env`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// A folder of git mirrors: DIR/<owner>+<name> (a repository, or one in its `repo/`) or
    /// DIR/<owner>+<name>.git; repeatable; CARVE_GIT_MIRRORS adds more (`:`-separated).
    #[arg(long = "mirror", value_name = "DIR")]
    pub mirrors: Vec<PathBuf>,
    /// Levels to emit.
    #[arg(long, num_args = 1.., default_values_t = vec![1u8])]
    pub level: Vec<u8>,
    /// Try at most K candidates per repository, the biggest first (a manifest entry's own
    /// `candidates` wins). Default: every candidate.
    #[arg(long, value_name = "K")]
    pub candidates: Option<usize>,
    #[command(flatten)]
    pub protect: ProtectArgs,
    /// Test runs carve may run at once (see `carve tasks --jobs`).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Run again the repositories an earlier run recorded as failed.
    #[arg(long)]
    pub retry_failed: bool,
    /// How each bundle is checked again: `local` runs `carve validate` on the checkout;
    /// `image` also runs it inside the bundle's image (`--runtime oci`) and records whether
    /// every test's status there is the same; `off` skips it (the dataset records that per task).
    #[arg(long, value_enum, default_value_t)]
    pub recheck: RecheckArg,
    /// Keep each finished repository's work folder (checkout, caches).
    #[arg(long)]
    pub keep_work: bool,
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RecheckArg {
    #[default]
    Local,
    #[value(alias = "oci")]
    Image,
    Off,
}

impl Cli {
    /// Parse the command line, keeping each `tasks --f2p …` occurrence as its own group
    /// (clap's derive flattens repeated flags).
    pub fn try_parse_grouped() -> Result<Cli, clap::Error> {
        Cli::try_parse_grouped_from(std::env::args_os())
    }

    pub fn try_parse_grouped_from<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches};
        let matches = Cli::command().try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        if let (Command::Tasks { f2p_groups, .. }, Some(("tasks", sub))) = (&mut cli.command, matches.subcommand()) {
            if let Some(occurrences) = sub.get_occurrences::<String>("f2p") {
                *f2p_groups = occurrences.map(|o| o.cloned().collect()).collect();
            }
        }
        Ok(cli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tasks_f2p_flag_is_one_group() {
        let cli = Cli::try_parse_grouped_from(["carve", "tasks", "repo", "--f2p", "a.py", "b.py::t", "--f2p", "c.py"])
            .unwrap();
        let Command::Tasks { f2p_groups, .. } = cli.command else { panic!("not tasks") };
        assert_eq!(f2p_groups, vec![vec!["a.py".to_string(), "b.py::t".to_string()], vec!["c.py".to_string()]]);
    }

    #[test]
    fn module_groups_take_an_optional_value() {
        let groups = |args: &[&str]| match Cli::try_parse_grouped_from(args).unwrap().command {
            Command::Tasks { module_groups, .. } => module_groups,
            _ => panic!("not tasks"),
        };
        assert_eq!(groups(&["carve", "tasks", "repo"]), None);
        assert_eq!(groups(&["carve", "tasks", "--module-groups", "repo"]), Some(ModuleGroups::Also));
        assert_eq!(groups(&["carve", "tasks", "repo", "--module-groups=only"]), Some(ModuleGroups::Only));
        assert_eq!(groups(&["carve", "tasks", "repo", "--module-groups=off"]), Some(ModuleGroups::Off));
    }

    #[test]
    fn audit_requires_f2p() {
        assert!(Cli::try_parse_grouped_from(["carve", "audit", "repo"]).is_err());
    }
}
