//! Reports over results files: `carve arc report` ([`arc_report`]) and `carve report`
//! ([`grade_report`]) — every metric with its 95% bootstrap interval over tasks.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::Error;
use crate::bootstrap::{Estimate, bootstrap};
use crate::metrics::{self, ARC_METRICS, ArcMetrics, Ratio, RunOutcome, arc_metrics, group_comparison};
use crate::results::{ArcRun, GradedInstance, read_arc_run, read_grade_run};

pub const REPORT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap { resamples: crate::bootstrap::DEFAULT_RESAMPLES, seed: crate::bootstrap::DEFAULT_SEED }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Excluded {
    pub path: PathBuf,
    pub reason: String,
}

/// The IV-D metrics of one agent (or of all runs, `agent = "all"`).
#[derive(Debug, Clone, Serialize)]
pub struct AgentSummary {
    pub agent: String,
    pub runs: usize,
    pub tasks: usize,
    pub m0: Estimate,
    pub gate: Estimate,
    pub cont: Estimate,
    pub stage_f2p: Estimate,
    pub depth: Estimate,
    pub chain_p2p_failure: Estimate,
    pub in_chain_regression: Estimate,
    pub pure_regression: Estimate,
    pub last_stage_overestimate: Estimate,
    /// Survival at m_0, m_1, …
    pub survival: Vec<Estimate>,
    /// Where runs first break (figure 6a): `complete`, `gate fails`, `recovered`, `m<k>`.
    pub first_break: BTreeMap<String, usize>,
    /// Chain gate pass rate by number of stages (figure 5b).
    pub gate_by_length: BTreeMap<usize, Estimate>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    /// Task–stage groups holding runs after a passed and after a failed previous stage.
    pub groups: usize,
    /// Equal-weighted mean over those groups of next-stage F2P success after a passed stage.
    pub after_pass: Estimate,
    pub after_fail: Estimate,
    /// Pooled over all runs (figure 7), for reference.
    pub pooled_after_pass: Estimate,
    pub pooled_after_fail: Estimate,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArcReport {
    pub version: u32,
    pub kind: String,
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
    pub agents: Vec<AgentSummary>,
    pub all: AgentSummary,
    pub group_comparison: GroupSummary,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
}

pub fn outcome(run: &ArcRun) -> Option<RunOutcome> {
    let chain = run.chain_gate.as_ref()?;
    if !run.complete() {
        return None;
    }
    Some(RunOutcome {
        task: run.chain_id.clone(),
        agent: run.agent.clone(),
        stage_pass: run.stages.iter().map(|s| s.gate.passed).collect(),
        stage_f2p: run.stages.iter().map(|s| s.gate.f2p_passed).collect(),
        chain_f2p: chain.f2p_passed,
        chain_p2p: chain.p2p_passed,
    })
}

/// Runs grouped by task, tasks sorted.
fn by_task(runs: &[&RunOutcome]) -> Vec<Vec<RunOutcome>> {
    let mut m: BTreeMap<&str, Vec<RunOutcome>> = BTreeMap::new();
    for r in runs {
        m.entry(&r.task).or_default().push((*r).clone());
    }
    m.into_values().collect()
}

fn summary(agent: &str, runs: &[&RunOutcome], stages: usize, b: Bootstrap) -> AgentSummary {
    let groups = by_task(runs);
    let est = bootstrap(&groups, b.resamples, b.seed, |draw| {
        arc_metrics(draw.iter().flat_map(|t| t.iter()), stages).ratios()
    });
    let get = |name: &str| est[ARC_METRICS.iter().position(|m| *m == name).unwrap_or(0)];
    let mut first_break = BTreeMap::new();
    for r in runs {
        *first_break.entry(r.first_break().label()).or_insert(0) += 1;
    }
    let mut gate_by_length = BTreeMap::new();
    let lengths: std::collections::BTreeSet<usize> = runs.iter().map(|r| r.stage_pass.len()).collect();
    for n in lengths {
        let sub: Vec<&RunOutcome> = runs.iter().copied().filter(|r| r.stage_pass.len() == n).collect();
        let g = by_task(&sub);
        let e =
            bootstrap(&g, b.resamples, b.seed, |draw| vec![arc_metrics(draw.iter().flat_map(|t| t.iter()), n).gate]);
        gate_by_length.insert(n, e[0]);
    }
    AgentSummary {
        agent: agent.to_string(),
        runs: runs.len(),
        tasks: groups.len(),
        m0: get("m0"),
        gate: get("gate"),
        cont: get("cont"),
        stage_f2p: get("stage_f2p"),
        depth: get("depth"),
        chain_p2p_failure: get("chain_p2p_failure"),
        in_chain_regression: get("in_chain_regression"),
        pure_regression: get("pure_regression"),
        last_stage_overestimate: get("last_stage_overestimate"),
        survival: est[ARC_METRICS.len()..].to_vec(),
        first_break,
        gate_by_length,
    }
}

/// The report over finished runs (the point values are [`metrics::arc_metrics`]'s).
pub fn arc_report_from(runs: &[RunOutcome], excluded: Vec<Excluded>, b: Bootstrap) -> ArcReport {
    let stages = runs.iter().map(|r| r.stage_pass.len()).max().unwrap_or(0);
    let mut agents: BTreeMap<&str, Vec<&RunOutcome>> = BTreeMap::new();
    for r in runs {
        agents.entry(&r.agent).or_default().push(r);
    }
    let all: Vec<&RunOutcome> = runs.iter().collect();
    let groups = by_task(&all);
    let g = bootstrap(&groups, b.resamples, b.seed, |draw| group_comparison(draw).ratios());
    let point = group_comparison(&groups.iter().map(Vec::as_slice).collect::<Vec<_>>());
    ArcReport {
        version: REPORT_VERSION,
        kind: "arc-report".into(),
        resamples: b.resamples,
        seed: b.seed,
        level: crate::bootstrap::LEVEL,
        agents: agents.iter().map(|(a, r)| summary(a, r, stages, b)).collect(),
        all: summary("all", &all, stages, b),
        group_comparison: GroupSummary {
            groups: point.groups,
            after_pass: g[0],
            after_fail: g[1],
            pooled_after_pass: g[2],
            pooled_after_fail: g[3],
        },
        excluded,
    }
}

/// `carve arc report RESULTS…`: results files or folders holding `run.json` files.
pub fn arc_report(paths: &[PathBuf], b: Bootstrap) -> Result<ArcReport, Error> {
    let files = crate::results::collect_files(paths, crate::arc_run::RUN_FILE)?;
    if files.is_empty() {
        return Err(Error::Usage(format!(
            "no {} found in {}",
            crate::arc_run::RUN_FILE,
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    let mut runs = Vec::new();
    let mut excluded = Vec::new();
    for f in files {
        let run = read_arc_run(&f)?;
        match outcome(&run) {
            Some(o) => runs.push(o),
            None => excluded.push(Excluded {
                path: f,
                reason: format!(
                    "unfinished: {} of {} stages{}; resume it with `carve arc run`",
                    run.stages.len(),
                    run.stage_count,
                    if run.chain_gate.is_none() { ", no chain gate" } else { "" }
                ),
            }),
        }
    }
    Ok(arc_report_from(&runs, excluded, b))
}

/// Only for the metrics' point values, without intervals (tests, quick looks).
pub fn point_metrics(runs: &[RunOutcome]) -> ArcMetrics {
    let stages = runs.iter().map(|r| r.stage_pass.len()).max().unwrap_or(0);
    metrics::arc_metrics(runs, stages)
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelSummary {
    pub model: String,
    /// `None`: every level together.
    pub level: Option<u8>,
    pub instances: usize,
    pub resolved_rate: Estimate,
    pub passed_rate: Estimate,
    /// Patches refused (they touch hidden test files) or that did not apply.
    pub patch_problems: usize,
    /// Instances whose tests could not run.
    pub errors: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct GradeReport {
    pub version: u32,
    pub kind: String,
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
    pub models: Vec<ModelSummary>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn model_summary(model: &str, level: Option<u8>, items: &[&GradedInstance], b: Bootstrap) -> ModelSummary {
    let mut m: BTreeMap<&str, Vec<&GradedInstance>> = BTreeMap::new();
    for i in items {
        m.entry(&i.instance_id).or_default().push(i);
    }
    let groups: Vec<Vec<&GradedInstance>> = m.into_values().collect();
    let est = bootstrap(&groups, b.resamples, b.seed, |draw| {
        let (mut resolved, mut passed) = (Ratio::default(), Ratio::default());
        for i in draw.iter().flat_map(|t| t.iter()) {
            resolved.den += 1.0;
            resolved.num += f64::from(u8::from(i.resolved));
            passed.den += 1.0;
            passed.num += i.passed_rate;
        }
        vec![resolved, passed]
    });
    ModelSummary {
        model: model.to_string(),
        level,
        instances: items.len(),
        resolved_rate: est[0],
        passed_rate: est[1],
        patch_problems: items.iter().filter(|i| i.patch_problem.is_some()).count(),
        errors: items.iter().filter(|i| i.error.is_some()).count(),
    }
}

pub fn grade_report_from(instances: &[GradedInstance], notes: Vec<String>, b: Bootstrap) -> GradeReport {
    let mut by_model: BTreeMap<&str, Vec<&GradedInstance>> = BTreeMap::new();
    for i in instances {
        by_model.entry(&i.model).or_default().push(i);
    }
    let mut models = Vec::new();
    for (model, items) in &by_model {
        let levels: std::collections::BTreeSet<u8> = items.iter().map(|i| i.level).collect();
        for l in &levels {
            let sub: Vec<&GradedInstance> = items.iter().copied().filter(|i| i.level == *l).collect();
            models.push(model_summary(model, Some(*l), &sub, b));
        }
        if levels.len() > 1 {
            models.push(model_summary(model, None, items, b));
        }
    }
    GradeReport {
        version: REPORT_VERSION,
        kind: "grade-report".into(),
        resamples: b.resamples,
        seed: b.seed,
        level: crate::bootstrap::LEVEL,
        models,
        notes,
    }
}

/// `carve report RESULTS…`: grading results files or folders holding `grade.json`. An
/// instance graded twice for one model counts once (the file later in path order wins).
pub fn grade_report(paths: &[PathBuf], b: Bootstrap) -> Result<GradeReport, Error> {
    let files = crate::results::collect_files(paths, crate::grade::GRADE_FILE)?;
    if files.is_empty() {
        return Err(Error::Usage(format!("no {} found in the given paths", crate::grade::GRADE_FILE)));
    }
    let mut latest: BTreeMap<(String, String), (GradedInstance, PathBuf)> = BTreeMap::new();
    let mut notes = Vec::new();
    for f in &files {
        for i in read_grade_run(f)?.instances {
            let key = (i.model.clone(), i.instance_id.clone());
            if let Some((_, earlier)) = latest.insert(key, (i.clone(), f.clone())) {
                notes.push(format!(
                    "{} of model {} is graded in {} and {}; the latter counts",
                    i.instance_id,
                    i.model,
                    earlier.display(),
                    f.display()
                ));
            }
        }
    }
    let instances: Vec<GradedInstance> = latest.into_values().map(|(i, _)| i).collect();
    Ok(grade_report_from(&instances, notes, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::Interval;

    fn inst(id: &str, model: &str, level: u8, resolved: bool, passed_rate: f64) -> GradedInstance {
        let mut g = GradedInstance::new(id.into(), level, model.into(), &[], &[]);
        g.resolved = resolved;
        g.passed_rate = passed_rate;
        g.applied = true;
        g
    }

    #[test]
    fn resolved_and_passed_rate_per_model_and_level() {
        // Model a, level 1: resolved 1 of 4; passed rates 1, 0.5, 0.25, 0 -> mean 0.4375.
        // Model a, level 2: one instance, unresolved, passed 0.5.
        // Model b, level 1: 2 of 2 resolved, passed 1 and 1.
        let items = vec![
            inst("t1.lv1", "a", 1, true, 1.0),
            inst("t2.lv1", "a", 1, false, 0.5),
            inst("t3.lv1", "a", 1, false, 0.25),
            inst("t4.lv1", "a", 1, false, 0.0),
            inst("t1.lv2", "a", 2, false, 0.5),
            inst("t1.lv1", "b", 1, true, 1.0),
            inst("t2.lv1", "b", 1, true, 1.0),
        ];
        let r = grade_report_from(&items, vec![], Bootstrap::default());
        let row = |m: &str, l: Option<u8>| r.models.iter().find(|s| s.model == m && s.level == l).unwrap();
        assert_eq!(row("a", Some(1)).resolved_rate.value, Some(0.25));
        assert_eq!(row("a", Some(1)).passed_rate.value, Some(0.4375));
        assert_eq!(row("a", Some(2)).resolved_rate.value, Some(0.0));
        assert_eq!(row("a", Some(2)).passed_rate.value, Some(0.5));
        // Both levels of a: resolved 1/5, passed (1.75 + 0.5) / 5 = 0.45.
        assert_eq!(row("a", None).resolved_rate.value, Some(0.2));
        assert!((row("a", None).passed_rate.value.unwrap() - 0.45).abs() < 1e-12);
        assert_eq!(row("b", Some(1)).resolved_rate.value, Some(1.0));
        assert_eq!(row("b", Some(1)).resolved_rate.ci, Some(Interval { low: 1.0, high: 1.0 }));
        assert!(r.models.iter().all(|s| s.model != "b" || s.level.is_some()), "one level: no all-levels row");
        let ci = row("a", Some(1)).passed_rate.ci.unwrap();
        assert!(ci.low >= 0.0 && ci.low < 0.4375 && ci.high > 0.4375 && ci.high <= 1.0, "{ci:?}");
    }

    #[test]
    fn arc_report_matches_point_metrics_and_is_reproducible() {
        use crate::metrics::tests::run;
        let t = true;
        let f = false;
        let runs = vec![
            run("A", "x", &[t, t], &[t, t], t, t),
            run("A", "y", &[f, t], &[f, t], f, t),
            run("B", "x", &[t, f, f], &[t, f, t], f, f),
            run("B", "y", &[t, t, t], &[t, t, t], t, t),
        ];
        let b = Bootstrap { resamples: 1000, seed: 9 };
        let r1 = arc_report_from(&runs, vec![], b);
        let r2 = arc_report_from(&runs, vec![], b);
        assert_eq!(serde_json::to_string(&r1).unwrap(), serde_json::to_string(&r2).unwrap());
        let x = r1.agents.iter().find(|a| a.agent == "x").unwrap();
        // Agent x: m0 2/2, gate 1/2, cont: A k1 pass, B k1 fail (k2 excluded) -> 1/2.
        assert_eq!((x.m0.value, x.gate.value, x.cont.value), (Some(1.0), Some(0.5), Some(0.5)));
        // Survival of x: m0 2/2, m1 1/2, m2 (only B has 3 stages) 0/1.
        let s: Vec<Option<f64>> = x.survival.iter().map(|e| e.value).collect();
        assert_eq!(s, vec![Some(1.0), Some(0.5), Some(0.0)]);
        assert_eq!(r1.all.runs, 4);
        assert_eq!(r1.all.tasks, 2);
        // Groups: A stage 1 (x after pass F2P T; y after fail T) and B stages 1, 2 (x after
        // pass F, y after pass T at stage 1 -> one condition only; stage 2: x after fail T,
        // y after pass T). Two groups: after pass (1 + 1) / 2, after fail (1 + 1) / 2.
        assert_eq!(r1.group_comparison.groups, 2);
        assert_eq!(r1.group_comparison.after_pass.value, Some(1.0));
        assert_eq!(r1.first_break_total(), 4);
    }

    impl ArcReport {
        fn first_break_total(&self) -> usize {
            self.all.first_break.values().sum()
        }
    }
}
