//! The optional external chain reviewer (issue 10; FeatureArc III-B has an LLM review agent
//! here — carve keeps no model in the loop and hands the decision to a command of the user's
//! choosing instead). `carve arc mine --reviewer CMD` runs `sh -c CMD` once per kept chain,
//! with a [`ReviewRequest`] as JSON on its standard input, and reads a [`Verdict`] as JSON from
//! its standard output. A chain the reviewer rejects moves to the discarded candidates with
//! the reviewer's reason; a kept chain carries the verdict. A command that fails, runs out of
//! time or answers something that is not a verdict is an error naming the command and chain.
//!
//! Request (version 1):
//! ```json
//! {"version": 1, "repo": "owner/name", "chain": { …the chain as `arc mine` prints it… },
//!  "stages": [{"index": 0, "commits": ["<40 hex>"], "patch": "<unified diff>", "truncated": false}]}
//! ```
//! Verdict: `{"keep": true, "reason": "why"}` (`reason` optional when keeping).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::HistoryError;
use crate::mine::{Chain, Discarded, MineReport};
use crate::states::git;

pub const REVIEW_VERSION: u32 = 1;
/// A stage's patch is cut at this many bytes (`truncated` says so).
pub const MAX_PATCH_BYTES: usize = 200_000;
/// Git's empty tree (SHA-1 repositories).
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

#[derive(Debug, Clone, Serialize)]
pub struct ReviewStage {
    pub index: usize,
    pub commits: Vec<String>,
    pub patch: String,
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReviewRequest<'a> {
    pub version: u32,
    pub repo: &'a str,
    pub chain: &'a Chain,
    pub stages: Vec<ReviewStage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub keep: bool,
    #[serde(default)]
    pub reason: String,
}

fn stage_patch(repo: &Path, commits: &[String]) -> Result<(String, bool), String> {
    let mut patch = Vec::new();
    for c in commits {
        // Against the first parent; a root commit against the empty tree.
        let parent = format!("{c}^1");
        let base = match git(repo, &["rev-parse", "-q", "--verify", &format!("{parent}^{{commit}}")], None) {
            Ok(_) => parent,
            Err(_) => EMPTY_TREE.to_string(),
        };
        patch.extend(git(repo, &["diff", "--no-renames", base.as_str(), c.as_str()], None)?);
    }
    let truncated = patch.len() > MAX_PATCH_BYTES;
    patch.truncate(MAX_PATCH_BYTES);
    Ok((String::from_utf8_lossy(&patch).into_owned(), truncated))
}

/// Ask `command` about one chain.
pub fn review_chain(
    repo: &Path,
    repo_name: &str,
    chain: &Chain,
    command: &str,
    timeout: Duration,
) -> Result<Verdict, HistoryError> {
    let err = |message: String| HistoryError::Build { chain: chain.chain_id.clone(), message };
    let mut stages = Vec::new();
    for s in &chain.stages {
        let (patch, truncated) = stage_patch(repo, &s.commits).map_err(&err)?;
        stages.push(ReviewStage { index: s.index, commits: s.commits.clone(), patch, truncated });
    }
    let request = ReviewRequest { version: REVIEW_VERSION, repo: repo_name, chain, stages };
    let input = serde_json::to_vec(&request).map_err(|e| err(e.to_string()))?;
    let mut child = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| err(format!("could not start the reviewer `{command}`: {e}")))?;
    // Feed stdin from a thread so a reviewer that answers before reading everything cannot block us.
    let mut stdin = child.stdin.take().ok_or_else(|| err("no stdin for the reviewer".into()))?;
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let status = wait_timeout::ChildExt::wait_timeout(&mut child, timeout)
        .map_err(|e| err(format!("waiting for the reviewer `{command}`: {e}")))?;
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(err(format!("the reviewer `{command}` did not answer within {}s", timeout.as_secs())));
    };
    let _ = writer.join();
    let out = child.wait_with_output().map_err(|e| err(format!("reading the reviewer's answer: {e}")))?;
    if !status.success() {
        return Err(err(format!(
            "the reviewer `{command}` failed ({status}): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    serde_json::from_slice::<Verdict>(&out.stdout).map_err(|e| {
        err(format!(
            "the reviewer `{command}` answered `{}`, not a verdict {{\"keep\": true|false, \"reason\": \"…\"}}: {e}",
            String::from_utf8_lossy(&out.stdout).trim()
        ))
    })
}

/// Review every kept chain of `report`: rejected ones move to the discarded candidates.
pub fn review(repo: &Path, report: &mut MineReport, command: &str, timeout: Duration) -> Result<(), HistoryError> {
    let chains = std::mem::take(&mut report.chains);
    for mut chain in chains {
        let verdict = review_chain(repo, &report.repo, &chain, command, timeout)?;
        if verdict.keep {
            chain.review = Some(verdict);
            report.chains.push(chain);
        } else {
            report.discarded_total += 1;
            report.discarded.insert(
                0,
                Discarded {
                    commits: chain.stages.iter().flat_map(|s| s.commits.clone()).collect(),
                    found_by: chain.found_by.clone(),
                    reason: format!(
                        "rejected by the reviewer: {}",
                        if verdict.reason.is_empty() { "(no reason given)" } else { &verdict.reason }
                    ),
                },
            );
        }
    }
    Ok(())
}
