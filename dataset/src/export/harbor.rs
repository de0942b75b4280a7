//! Harbor tasks: `<instance_id>/task.toml`, `instruction.md`, `environment/Dockerfile` (with
//! the `mask.patch` it copies), `tests/test.sh` with `tests/test.patch`, and
//! `solution/solve.sh` with `solution/gold.patch`.
//!
//! As Harbor's task format documents it (laude-institute/harbor-docs, "Task Structure"):
//! `tests/` is copied to `/tests` and `solution/` to `/solution` at run time, and the test
//! script writes the reward to `/logs/verifier/reward.txt` (`1` resolved, `0` not).

use serde_json::json;

use super::{Files, Skipped, Task, jsonl};

pub fn files(tasks: &[Task]) -> (Files, Vec<String>, Vec<Skipped>) {
    let mut files = Files::new();
    let mut rows = Vec::new();
    for t in tasks {
        let dir = t.id().to_string();
        files.insert(format!("{dir}/task.toml"), task_toml(t).into_bytes());
        files.insert(format!("{dir}/instruction.md"), t.instance.problem_statement.clone().into_bytes());
        files.insert(format!("{dir}/environment/Dockerfile"), t.dockerfile().into_bytes());
        files.insert(format!("{dir}/environment/mask.patch"), t.instance.carve.mask_patch.clone().into_bytes());
        files.insert(format!("{dir}/tests/test.sh"), test_sh(t).into_bytes());
        files.insert(format!("{dir}/tests/test.patch"), t.instance.test_patch.clone().into_bytes());
        files.insert(format!("{dir}/solution/solve.sh"), SOLVE.as_bytes().to_vec());
        files.insert(format!("{dir}/solution/gold.patch"), t.instance.patch.clone().into_bytes());
        rows.push(json!({
            "instance_id": t.id(), "path": dir, "repo": t.instance.repo, "base_commit": t.instance.base_commit,
            "language": t.instance.carve.language, "level": t.instance.level, "lines": t.instance.lines,
        }));
    }
    files.insert("data/test.jsonl".into(), jsonl(&rows));
    (files, tasks.iter().map(|t| t.id().to_string()).collect(), Vec::new())
}

fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn task_toml(t: &Task) -> String {
    let i = &t.instance;
    format!(
        "version = \"1.0\"\nsource = {source}\n\n[metadata]\ninstance_id = {id}\nrepo = {repo}\nbase_commit = {commit}\n\
         language = {lang}\nlevel = {level}\nlines = {lines}\nfiles = {files}\nfunctions = {functions}\n\
         category = \"programming\"\ntags = [\"carve\", \"feature\", {lang}]\n\n\
         [verifier]\ntimeout_sec = 1800.0\n\n[agent]\ntimeout_sec = 3600.0\n\n\
         [environment]\nbuild_timeout_sec = 1800.0\ncpus = 1\nmemory_mb = 4096\nstorage_mb = 10240\n",
        source = q(&format!("carve dataset export: {}@{}", i.repo, i.base_commit)),
        id = q(&i.instance_id),
        repo = q(&i.repo),
        commit = q(&i.base_commit),
        lang = q(&i.carve.language),
        level = i.level,
        lines = i.lines,
        files = i.files,
        functions = i.functions,
    )
}

/// Add the F2P tests back, run every F2P and P2P test, write the reward.
fn test_sh(t: &Task) -> String {
    format!(
        "#!/bin/bash\nset -uo pipefail\nTESTS=\"${{CARVE_TESTS:-/tests}}\"\nLOGS=\"${{CARVE_LOGS:-/logs/verifier}}\"\n\
         mkdir -p \"$LOGS\"\ncd \"${{CARVE_TESTBED:-/testbed}}\"\n\
         if [ -s \"$TESTS/test.patch\" ]; then git apply --verbose \"$TESTS/test.patch\"; fi\n\
         {cmd}\nrc=$?\nif [ \"$rc\" -eq 0 ]; then echo 1 > \"$LOGS/reward.txt\"; else echo 0 > \"$LOGS/reward.txt\"; fi\nexit \"$rc\"\n",
        cmd = t.eval_all
    )
}

const SOLVE: &str = "#!/bin/bash\nset -euo pipefail\ncd \"${CARVE_TESTBED:-/testbed}\"\n\
git apply --verbose \"${CARVE_SOLUTION:-/solution}/gold.patch\"\n";
