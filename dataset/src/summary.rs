//! The dataset's summary (`summary.json`): yield per repository and language, rejections by
//! reason, the size distribution of tasks beside FeatureBench's means, time per stage and
//! CPU-seconds per validated task.

use carve_formats::dataset::{Distribution, RepoStatus, Summary, SummaryRepo};
use std::collections::BTreeMap;

use crate::merge::Row;

/// FeatureBench's reported means of its tasks (lines, files, functions).
pub const FEATUREBENCH_MEANS: [(&str, f64); 3] = [("lines", 790.0), ("files", 15.7), ("functions", 29.2)];

/// A rejection's reason class: its words before the first `:` (or the first 60 characters),
/// with numbers replaced by `N` so counts group.
pub fn reason_class(reason: &str) -> String {
    let head = reason.split(':').next().unwrap_or(reason).trim();
    let head: String = head.chars().take(60).collect();
    let mut out = String::new();
    let mut in_number = false;
    for c in head.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

pub fn summarize(rows: &[Row], manifest_digest: String) -> Summary {
    let mut s = Summary::new(manifest_digest);
    let mut counts: BTreeMap<String, usize> =
        ["total", "done", "failed", "pending"].iter().map(|k| (k.to_string(), 0)).collect();
    let mut sizes: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut cpu_total = 0.0;
    for row in rows {
        *counts.entry("total".into()).or_default() += 1;
        let mut line = SummaryRepo::new(row.entry.name.clone(), row.entry.commit.clone(), "pending".into());
        let language = row.result.as_ref().and_then(|r| r.language.clone()).or_else(|| row.entry.language.clone());
        line.language = language.clone();
        let lang = s.languages.entry(language.unwrap_or_else(|| "unknown".into())).or_default();
        lang.repositories += 1;
        if let Some(r) = &row.result {
            let status = match r.status {
                RepoStatus::Done => "done",
                RepoStatus::Failed => "failed",
            };
            line.status = status.into();
            *counts.entry(status.into()).or_default() += 1;
            if r.status == RepoStatus::Done {
                lang.done += 1;
            }
            lang.tasks += r.tasks.len();
            line.reason = r.failure.as_ref().map(|f| format!("{}: {}", f.stage, f.reason));
            line.candidates = r.candidates.found;
            line.tasks = r.tasks.len();
            line.rejected = r.rejected.len();
            for rej in &r.rejected {
                *s.rejections.entry(reason_class(&rej.reason)).or_default() += 1;
            }
            if let Some(f) = &r.failure {
                *s.rejections.entry(format!("repository failed in {}", f.stage)).or_default() += 1;
            }
            for t in &r.tasks {
                sizes.entry("lines").or_default().push(t.lines as f64);
                sizes.entry("files").or_default().push(t.files as f64);
                sizes.entry("functions").or_default().push(t.functions as f64);
                if let Some(i) = &t.image {
                    *s.image_recheck.entry("tasks".into()).or_default() += 1;
                    *s.image_recheck.entry("agree".into()).or_default() += usize::from(i.agrees);
                }
            }
            s.tasks += r.tasks.len();
        } else {
            *counts.entry("pending".into()).or_default() += 1;
        }
        if let Some(stats) = &row.stats {
            for st in &stats.stages {
                s.stages.entry(st.stage.clone()).or_default().add(st);
                line.seconds += st.seconds;
                line.cpu_seconds += st.cpu_seconds;
            }
            cpu_total += line.cpu_seconds;
        }
        line.seconds = round(line.seconds);
        line.cpu_seconds = round(line.cpu_seconds);
        s.repos.push(line);
    }
    for total in s.stages.values_mut() {
        total.seconds = round(total.seconds);
        total.cpu_seconds = round(total.cpu_seconds);
    }
    s.repositories = counts;
    for key in ["lines", "files", "functions"] {
        s.sizes.insert(key.to_string(), Distribution::of(sizes.remove(key).unwrap_or_default()));
    }
    s.featurebench_means = FEATUREBENCH_MEANS.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    s.cpu_seconds_per_task = (s.tasks > 0).then(|| round(cpu_total / s.tasks as f64));
    s
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_group_by_their_leading_words() {
        assert_eq!(reason_class("nothing to extract: everything the F2P tests reach"), "nothing to extract");
        assert_eq!(
            reason_class("F2P tests still pass on the masked state after 2 repair rounds"),
            reason_class("F2P tests still pass on the masked state after 3 repair rounds")
        );
        assert_eq!(reason_class("masked+tests: 3 F2P test(s) passed"), "masked+tests");
    }
}
