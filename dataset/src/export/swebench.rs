//! SWE-bench: rows (`data/test.jsonl`, FAIL_TO_PASS/PASS_TO_PASS as JSON-encoded lists) and the
//! SWE-bench 5.0 task repo (`sweb.yaml`, `tasks/<instance_id>/`: `task.yaml`, `tests.json`,
//! `problem_statement.md`, `gold.patch`, `test.patch`, `eval.sh`, `Dockerfile`, and the
//! `mask.patch` the Dockerfile copies from its own folder).
//!
//! Fields and layout follow swebench 5.0.2 (`swebench/task/repo.py`, `task/checks.py`,
//! `harness/utils.py`): `task.yaml` holds `instance_id`, `repo`, `version`, `base_commit`,
//! `split`, `image` (the name the harness derives), `log_parser`, `eval_type` and `datasets`;
//! `eval.sh` brackets the test output with `>>>>> Start/End Test Output` and runs in
//! `/testbed`, where the harness has applied the prediction. FAIL_TO_PASS and PASS_TO_PASS
//! hold the ids SWE-bench's log parser prints (`carve.harness_ids`), the eval script runs the
//! tests by carve's ids.

use serde_json::{Value, json};

use super::parquet::Column;
use super::{Files, Skipped, Task, jsonl, pretty};

/// The dataset name `sweb.yaml` publishes.
pub const DATASET: &str = "carve/dataset";

/// The files of the export, the tasks written, and those left out.
pub fn files(tasks: &[Task]) -> crate::Result<(Files, Vec<String>, Vec<Skipped>)> {
    let mut files = Files::new();
    let mut rows = Vec::new();
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for t in tasks {
        let Some(parser) = carve_languages::harness_log_parser(&t.test) else {
            skipped.push(Skipped {
                instance_id: t.id().to_string(),
                reason: "SWE-bench has no log parser for its runner".into(),
            });
            continue;
        };
        let (f2p, p2p) = match (harness_ids(t, &t.instance.fail_to_pass), harness_ids(t, &t.instance.pass_to_pass)) {
            (Ok(f), Ok(p)) => (f, p),
            (Err(reason), _) | (_, Err(reason)) => {
                skipped.push(Skipped { instance_id: t.id().to_string(), reason });
                continue;
            }
        };
        let dir = format!("tasks/{}", t.id());
        let script = eval_script(t);
        files.insert(format!("{dir}/task.yaml"), task_yaml(t, parser).into_bytes());
        files.insert(format!("{dir}/tests.json"), pretty(&json!({"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})));
        files.insert(format!("{dir}/problem_statement.md"), t.instance.problem_statement.clone().into_bytes());
        files.insert(format!("{dir}/gold.patch"), t.instance.patch.clone().into_bytes());
        files.insert(format!("{dir}/test.patch"), t.instance.test_patch.clone().into_bytes());
        files.insert(format!("{dir}/mask.patch"), t.instance.carve.mask_patch.clone().into_bytes());
        files.insert(format!("{dir}/eval.sh"), script.clone().into_bytes());
        files.insert(format!("{dir}/Dockerfile"), t.dockerfile().into_bytes());
        rows.push(row(t, parser, &script, &f2p, &p2p));
        written.push(t.id().to_string());
    }
    files.insert("sweb.yaml".into(), format!("datasets:\n- {DATASET}\nsplits:\n- test\n").into_bytes());
    files.insert("data/test.jsonl".into(), jsonl(&rows));
    files.insert("data/test.parquet".into(), super::parquet::write(&rows, &COLUMNS)?);
    Ok((files, written, skipped))
}

/// The Parquet columns of a row, in order.
const COLUMNS: [(&str, Column); 19] = [
    ("instance_id", Column::Text),
    ("repo", Column::Text),
    ("base_commit", Column::Text),
    ("patch", Column::Text),
    ("test_patch", Column::Text),
    ("problem_statement", Column::Text),
    ("hints_text", Column::Text),
    ("created_at", Column::Text),
    ("version", Column::Text),
    ("FAIL_TO_PASS", Column::Text),
    ("PASS_TO_PASS", Column::Text),
    ("environment_setup_commit", Column::Text),
    ("image_name", Column::Text),
    ("image", Column::Text),
    ("eval_script", Column::Text),
    ("log_parser", Column::Text),
    ("eval_type", Column::Text),
    ("level", Column::Integer),
    ("language", Column::Text),
];

/// The image name SWE-bench's harness derives for an instance (`checks.expected_image`).
pub fn harness_image(instance_id: &str) -> String {
    format!("swebench/sweb.eval.x86_64.{}:latest", instance_id.to_lowercase()).replace("__", "_1776_")
}

/// `ids` as SWE-bench's log parser names them (`carve.harness_ids` of the task, recorded where
/// it prints them differently: `go test` drops the package), in order, each once; an error
/// when the parser cannot name one of them.
fn harness_ids(t: &Task, ids: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let h = match t.instance.carve.harness_ids.0.iter().find(|(k, _)| k == id) {
            Some((_, Some(h))) => h.clone(),
            Some((_, None)) => return Err(format!("SWE-bench's log parser cannot name its test {id}")),
            None => id.clone(),
        };
        if !out.contains(&h) {
            out.push(h);
        }
    }
    Ok(out)
}

/// One row: SWE-bench's columns, the 5.0 harness's (`image`, `eval_script`, `log_parser`,
/// `eval_type`), and carve's `image_name`, `level` and `language`.
fn row(t: &Task, parser: &str, script: &str, f2p: &[String], p2p: &[String]) -> Value {
    let i = &t.instance;
    let list = |v: &[String]| serde_json::to_string(v).unwrap_or_default();
    json!({
        "instance_id": i.instance_id,
        "repo": i.repo,
        "base_commit": i.base_commit,
        "patch": i.patch,
        "test_patch": i.test_patch,
        "problem_statement": i.problem_statement,
        "hints_text": "",
        "created_at": i.created_at.clone().unwrap_or_default(),
        "version": i.version,
        "FAIL_TO_PASS": list(f2p),
        "PASS_TO_PASS": list(p2p),
        "environment_setup_commit": i.base_commit,
        "image_name": t.image(),
        "image": harness_image(&i.instance_id),
        "eval_script": script,
        "log_parser": parser,
        "eval_type": "pass_and_fail",
        "level": i.level,
        "language": i.carve.language,
    })
}

/// `task.yaml`: the short fields, keys sorted as swebench writes them, strings as JSON
/// strings (valid YAML, no implicit typing).
fn task_yaml(t: &Task, parser: &str) -> String {
    let i = &t.instance;
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let fields = [
        ("base_commit", q(&i.base_commit)),
        ("created_at", q(i.created_at.as_deref().unwrap_or(""))),
        ("datasets", format!("\n- {}", q(DATASET))),
        ("environment_setup_commit", q(&i.base_commit)),
        ("eval_type", q("pass_and_fail")),
        ("image", q(&harness_image(&i.instance_id))),
        ("image_name", q(&t.image())),
        ("instance_id", q(&i.instance_id)),
        ("language", q(&i.carve.language)),
        ("level", i.level.to_string()),
        ("log_parser", q(parser)),
        ("repo", q(&i.repo)),
        ("split", q("test")),
        ("version", q(&i.version)),
    ];
    let sep = |v: &str| if v.starts_with('\n') { "" } else { " " };
    fields.iter().map(|(k, v)| format!("{k}:{}{v}\n", sep(v))).collect()
}

/// `eval.sh`: from `/testbed` (or `$CARVE_TESTBED`, for carve's own checks) with the
/// prediction applied, add the F2P tests back (`test.patch`) and run every F2P and P2P test.
/// It exits with the tests' status; under swebench's harness, which records that status in
/// `SWEBENCH_TEST_EXIT_CODE` just before the end marker, it exits with the same.
pub fn eval_script(t: &Task) -> String {
    let mut s = String::from("#!/bin/bash\nset -uxo pipefail\ncd \"${CARVE_TESTBED:-/testbed}\"\n");
    let test_patch = &t.instance.test_patch;
    if !test_patch.is_empty() {
        s.push_str("git apply --verbose - <<'EOF_CARVE_TEST_PATCH'\n");
        s.push_str(test_patch);
        if !test_patch.ends_with('\n') {
            s.push('\n');
        }
        s.push_str("EOF_CARVE_TEST_PATCH\n");
    }
    s.push_str(": '>>>>> Start Test Output'\n");
    s.push_str(&t.eval_all);
    s.push('\n');
    s.push_str("CARVE_TEST_EXIT_CODE=${SWEBENCH_TEST_EXIT_CODE:-$?}; : '>>>>> End Test Output'\n");
    s.push_str("exit \"$CARVE_TEST_EXIT_CODE\"\n");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_harness_image_name_follows_swebench() {
        assert_eq!(
            super::harness_image("Local__tokens.095d98e0.crit.d1fedd7a.lv1"),
            "swebench/sweb.eval.x86_64.local_1776_tokens.095d98e0.crit.d1fedd7a.lv1:latest"
        );
    }
}
