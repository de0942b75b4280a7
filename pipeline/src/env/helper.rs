//! The hook for what the rules cannot find: `[env] helper = "CMD"` (or `--env-helper`) is run
//! with `sh -c` when a verification run still fails and the language's repairs have nothing
//! more to try. It reads one JSON object on stdin and writes one on stdout:
//!
//! ```json
//! in:  {"version": 1, "repository": "/path", "language": "python",
//!       "findings": [{"what": …, "value": …, "source": …}],
//!       "tried": ["{env}/venv/bin/python -m pip install …"],
//!       "baseline": {"passed": 3, "failed": 1, …}, "failures": ["…"], "output": "…"}
//! out: {"commands": ["pip install x", …]}  (each run with `sh -c` in {src})
//!   or {"steps": [{"argv": ["…"], "dir": "env"|"src", "why": "…"}]}
//! ```
//!
//! `{env}` and `{src}` in what it returns stand for the environment's folder and its copy of
//! the inputs, as in carve's own steps. carve runs them, verifies by running the suite again,
//! and records them (with `why` = "helper: …") like every other step.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use carve_languages::env::{EnvPlan, Failures, Step, StepDir};

use super::record::BaselineCounts;
use crate::Result;
use crate::error::bail;

#[derive(Deserialize)]
struct HelperStep {
    argv: Vec<String>,
    #[serde(default)]
    dir: Option<StepDir>,
    #[serde(default)]
    why: Option<String>,
}

#[derive(Deserialize, Default)]
struct Answer {
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    steps: Vec<HelperStep>,
}

/// Ask `helper` what to try next.
pub fn ask(
    helper: &str,
    plan: &EnvPlan,
    tried: &[Step],
    counts: &BaselineCounts,
    failures: &Failures,
    timeout: Duration,
) -> Result<Vec<Step>> {
    let input = json!({
        "version": 1,
        "repository": failures.repo,
        "language": plan.language.name(),
        "findings": plan.findings,
        "tried": tried.iter().map(Step::display).collect::<Vec<_>>(),
        "baseline": counts,
        "failures": failures.messages,
        "output": failures.output,
    });
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(helper)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| crate::Error::msg(format!("could not start the env helper `{helper}`: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that does not read its input still gets to answer.
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if child.try_wait()?.is_some() || std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait()?.is_none() {
        let _ = child.kill();
        let _ = child.wait();
        bail!("the env helper `{helper}` did not answer within {}s", timeout.as_secs());
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("the env helper `{helper}` failed ({}); fix it or leave `[env] helper` out", out.status);
    }
    parse(helper, &out.stdout)
}

fn parse(helper: &str, stdout: &[u8]) -> Result<Vec<Step>> {
    let answer: Answer = serde_json::from_slice(stdout).map_err(|e| {
        crate::Error::msg(format!(
            "the env helper `{helper}` did not answer with JSON like {{\"commands\": [\"…\"]}}: {e}"
        ))
    })?;
    let mut steps: Vec<Step> = answer
        .commands
        .into_iter()
        .map(|c| Step::new(&["sh", "-c", &c], StepDir::Src, format!("helper: {c}")))
        .collect();
    for s in answer.steps {
        if s.argv.is_empty() {
            bail!("the env helper `{helper}` returned a step with an empty argv");
        }
        let why = format!("helper: {}", s.why.unwrap_or_else(|| s.argv.join(" ")));
        steps.push(Step {
            argv: s.argv,
            dir: s.dir.unwrap_or(StepDir::Src),
            env: Vec::new(),
            why,
            needs_source: false,
        });
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_commands_or_steps() {
        let steps = parse(
            "h",
            br#"{"commands": ["pip install x"], "steps": [{"argv": ["a", "b"], "dir": "env", "why": "w"}]}"#,
        )
        .unwrap();
        assert_eq!(steps[0].argv, vec!["sh", "-c", "pip install x"]);
        assert_eq!(steps[1].dir, StepDir::Env);
        assert_eq!(steps[1].why, "helper: w");
        let err = parse("h", b"nope").unwrap_err().to_string();
        assert!(err.contains("did not answer with JSON"), "{err}");
    }

    #[test]
    fn the_helper_gets_json_and_its_failure_is_named() {
        let plan = EnvPlan {
            language: carve_languages::Language::Go,
            inputs: vec![],
            whole_source: false,
            requires: vec![],
            findings: vec![],
        };
        let failures = Failures { messages: vec!["boom".into()], output: String::new(), repo: "/r".into() };
        // The helper echoes a command built from what it read.
        let helper = r#"python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"commands": ["echo " + d["failures"][0]]}))'"#;
        let steps = ask(helper, &plan, &[], &BaselineCounts::default(), &failures, Duration::from_secs(30)).unwrap();
        assert_eq!(steps[0].argv[2], "echo boom");
        let err =
            ask("exit 3", &plan, &[], &BaselineCounts::default(), &failures, Duration::from_secs(30)).unwrap_err();
        assert!(err.to_string().contains("failed"), "{err}");
    }
}
