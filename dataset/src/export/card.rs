//! The dataset card of an export: `README.md` with the YAML front matter Hugging Face reads
//! (`configs` → `data_files`), what the export holds, and how to run it.

use super::{ExportFormat, Skipped};

/// The card of an export of `tasks`, listing what was left out and why.
pub fn card(format: ExportFormat, tasks: &[String], skipped: &[Skipped]) -> String {
    let data = match format {
        ExportFormat::Swebench => "data/test.parquet",
        ExportFormat::Featurebench | ExportFormat::Harbor => "data/test.jsonl",
    };
    let (title, how) = match format {
        ExportFormat::Swebench => (
            "SWE-bench",
            "`data/test.parquet` and `data/test.jsonl` hold one SWE-bench row per task (FAIL_TO_PASS and PASS_TO_PASS as JSON-encoded lists). `sweb.yaml` and `tasks/` are a SWE-bench 5.0 task repo: `swebench dataset check .` checks it and `swebench dataset build .` compiles it. Each task's `Dockerfile` builds on the task's environment image (`image_name`, built from the carve bundle's Dockerfile) and copies `mask.patch` from its own folder.",
        ),
        ExportFormat::Featurebench => (
            "FeatureBench",
            "`cases/` follows FeatureBench's case layout (`cases/<owner>__<repo>.<commit8>/<test stem>.<hash8>.lv1/`); `patch` is the *mask* patch and FAIL_TO_PASS/PASS_TO_PASS are test files. `data/test.jsonl` holds the same instances as rows with `patch`, `test_patch`, `level` and `problem_statement`.",
        ),
        ExportFormat::Harbor => (
            "Harbor",
            "Each folder is a Harbor task (`task.toml`, `instruction.md`, `environment/Dockerfile`, `tests/test.sh` writing `/logs/verifier/reward.txt`, `solution/solve.sh`): `harbor run -p <task> -a <agent>`. `data/test.jsonl` lists the tasks.",
        ),
    };
    let mut s = format!(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: {data}\nlicense: other\ntags:\n- code\n- carve\n- {}\npretty_name: carve tasks ({title})\n---\n\n",
        format.name()
    );
    s.push_str(&format!("# carve tasks, {title} layout\n\n"));
    s.push_str(&format!(
        "{} validated task(s) exported by `carve dataset export --format {}`. Every task was carved from a real repository: its feature's code removed, the remaining project still passing its own tests; the gold patch restores the feature.\n\n{how}\n",
        tasks.len(),
        format.name()
    ));
    if !skipped.is_empty() {
        s.push_str("\n## Left out\n\n");
        for k in skipped {
            s.push_str(&format!("- `{}`: {}\n", k.instance_id, k.reason));
        }
    }
    s
}
