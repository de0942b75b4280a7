//! FeatureArc's metrics (section IV-D), exactly as the paper defines them, over finished
//! runs. Every metric is a [`Ratio`] so a report can show what it counts:
//!
//! - `m0` — runs whose first stage passes its gate (F2P and P2P), over runs.
//! - `gate` — runs whose chain gate passes on the final workspace, over runs.
//! - `cont` — stages m_1 and later that pass, counted only where every earlier stage of the
//!   run passed, over those stages (pooled over stages).
//! - `stage_f2p` — evaluated stages whose F2P suite passes, over evaluated stages.
//! - `depth` — mean over runs of (stages passed before the first failure) / (chain length).
//! - `survival[k]` — runs of chains with more than k stages whose stages m_0…m_k all pass,
//!   over runs of chains with more than k stages.
//! - `chain_p2p_failure` — runs whose chain-level P2P suite fails, over runs.
//! - `in_chain_regression` — among runs where every stage passed its F2P suite, the share
//!   whose final workspace fails the chain-level F2P suite.
//! - `pure_regression` — among runs whose final workspace passes the chain-level F2P suite,
//!   the share whose chain-level P2P suite fails.
//! - `last_stage_overestimate` (finding 2) — among runs that pass the last stage gate, the
//!   share that fail the chain gate.
//!
//! The within task–stage comparison ([`group_comparison`]): for every task and stage m_k
//! (k ≥ 1), split the runs by whether m_(k-1) passed; keep only groups with both
//! conditions; in each group the F2P pass rate of m_k per condition; then the plain mean of
//! those rates over groups (each group weighs the same).

use serde::Serialize;

/// What the metrics need of one finished run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The chain (task) id: the unit of bootstrap resampling.
    pub task: String,
    pub agent: String,
    /// Stage gate passed (F2P and P2P), per stage in order.
    pub stage_pass: Vec<bool>,
    /// Stage F2P suite passed, per stage.
    pub stage_f2p: Vec<bool>,
    pub chain_f2p: bool,
    pub chain_p2p: bool,
}

impl RunOutcome {
    pub fn chain_gate(&self) -> bool {
        self.chain_f2p && self.chain_p2p
    }

    /// Stages passed before the first failure.
    pub fn prefix(&self) -> usize {
        self.stage_pass.iter().take_while(|p| **p).count()
    }

    /// Where the run first breaks (figure 6a).
    pub fn first_break(&self) -> Break {
        match (self.stage_pass.iter().position(|p| !p), self.chain_gate()) {
            (None, true) => Break::Complete,
            (None, false) => Break::GateFails,
            (Some(_), true) => Break::Recovered,
            (Some(k), false) => Break::Stage(k),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Break {
    /// Every stage and the chain gate pass.
    Complete,
    /// Every stage gate passes, the chain gate fails.
    GateFails,
    /// Some stage failed, yet the chain gate passes.
    Recovered,
    /// First failed stage of a run that did not recover.
    Stage(usize),
}

impl Break {
    pub fn label(self) -> String {
        match self {
            Break::Complete => "complete".into(),
            Break::GateFails => "gate fails".into(),
            Break::Recovered => "recovered".into(),
            Break::Stage(k) => format!("m{k}"),
        }
    }
}

/// `num / den`, undefined when nothing is counted.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Ratio {
    pub num: f64,
    pub den: f64,
}

impl Ratio {
    pub fn value(self) -> Option<f64> {
        (self.den > 0.0).then(|| self.num / self.den)
    }

    fn count(&mut self, hit: bool) {
        self.den += 1.0;
        if hit {
            self.num += 1.0;
        }
    }
}

/// Point values of every metric over a set of runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArcMetrics {
    pub m0: Ratio,
    pub gate: Ratio,
    pub cont: Ratio,
    pub stage_f2p: Ratio,
    pub depth: Ratio,
    pub survival: Vec<Ratio>,
    pub chain_p2p_failure: Ratio,
    pub in_chain_regression: Ratio,
    pub pure_regression: Ratio,
    pub last_stage_overestimate: Ratio,
}

/// The metric names in [`ArcMetrics::values`] order (survival comes last, one per stage).
pub const ARC_METRICS: &[&str] = &[
    "m0",
    "gate",
    "cont",
    "stage_f2p",
    "depth",
    "chain_p2p_failure",
    "in_chain_regression",
    "pure_regression",
    "last_stage_overestimate",
];

impl ArcMetrics {
    /// Every metric as one list: [`ARC_METRICS`] then `survival[0..]`.
    pub fn ratios(&self) -> Vec<Ratio> {
        let mut v = vec![
            self.m0,
            self.gate,
            self.cont,
            self.stage_f2p,
            self.depth,
            self.chain_p2p_failure,
            self.in_chain_regression,
            self.pure_regression,
            self.last_stage_overestimate,
        ];
        v.extend(self.survival.iter().copied());
        v
    }
}

/// The metrics over `runs`; `survival` has `stages` entries (m_0 … m_(stages-1)).
pub fn arc_metrics<'a>(runs: impl IntoIterator<Item = &'a RunOutcome>, stages: usize) -> ArcMetrics {
    let mut m = ArcMetrics { survival: vec![Ratio::default(); stages], ..ArcMetrics::default() };
    for r in runs {
        let n = r.stage_pass.len();
        if n == 0 {
            continue;
        }
        m.m0.count(r.stage_pass[0]);
        m.gate.count(r.chain_gate());
        for k in 1..n {
            if r.stage_pass[..k].iter().all(|p| *p) {
                m.cont.count(r.stage_pass[k]);
            }
        }
        for f in &r.stage_f2p {
            m.stage_f2p.count(*f);
        }
        m.depth.den += 1.0;
        m.depth.num += r.prefix() as f64 / n as f64;
        for (k, s) in m.survival.iter_mut().enumerate() {
            if n > k {
                s.count(r.stage_pass[..=k].iter().all(|p| *p));
            }
        }
        m.chain_p2p_failure.count(!r.chain_p2p);
        if r.stage_f2p.iter().all(|f| *f) {
            m.in_chain_regression.count(!r.chain_f2p);
        }
        if r.chain_f2p {
            m.pure_regression.count(!r.chain_p2p);
        }
        if r.stage_pass[n - 1] {
            m.last_stage_overestimate.count(!r.chain_gate());
        }
    }
    m
}

/// The within task–stage comparison of next-stage F2P success after a passed versus a
/// failed stage, plus the pooled rates (figure 7) for reference.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupComparison {
    /// Groups (task draw, stage) that hold both conditions.
    pub groups: usize,
    /// Mean over those groups of the F2P pass rate after a passed stage.
    pub after_pass: Ratio,
    /// The same after a failed stage.
    pub after_fail: Ratio,
    /// Pooled over all runs and stages m_1…: F2P passes after a passed / failed stage.
    pub pooled_after_pass: Ratio,
    pub pooled_after_fail: Ratio,
}

impl GroupComparison {
    pub fn ratios(&self) -> Vec<Ratio> {
        vec![self.after_pass, self.after_fail, self.pooled_after_pass, self.pooled_after_fail]
    }
}

pub const GROUP_METRICS: &[&str] = &["after_pass", "after_fail", "pooled_after_pass", "pooled_after_fail"];

/// `tasks`: the runs of one task each (one entry per draw in a bootstrap resample, so a task
/// drawn twice is two groups per stage).
pub fn group_comparison(tasks: &[&[RunOutcome]]) -> GroupComparison {
    let mut g = GroupComparison::default();
    for runs in tasks {
        let stages = runs.iter().map(|r| r.stage_pass.len()).max().unwrap_or(0);
        for k in 1..stages {
            let (mut pass, mut fail) = (Ratio::default(), Ratio::default());
            for r in runs.iter().filter(|r| r.stage_pass.len() > k) {
                let (cond, pooled) = if r.stage_pass[k - 1] {
                    (&mut pass, &mut g.pooled_after_pass)
                } else {
                    (&mut fail, &mut g.pooled_after_fail)
                };
                cond.count(r.stage_f2p[k]);
                pooled.count(r.stage_f2p[k]);
            }
            if let (Some(p), Some(f)) = (pass.value(), fail.value()) {
                g.groups += 1;
                g.after_pass.den += 1.0;
                g.after_pass.num += p;
                g.after_fail.den += 1.0;
                g.after_fail.num += f;
            }
        }
    }
    g
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A run of `agent` on `task` from its stage and chain results (the report's tests use
    /// it too).
    pub(crate) fn run(
        task: &str,
        agent: &str,
        pass: &[bool],
        f2p: &[bool],
        chain_f2p: bool,
        chain_p2p: bool,
    ) -> RunOutcome {
        RunOutcome {
            task: task.into(),
            agent: agent.into(),
            stage_pass: pass.to_vec(),
            stage_f2p: f2p.to_vec(),
            chain_f2p,
            chain_p2p,
        }
    }

    const T: bool = true;
    const F: bool = false;

    /// Six runs over three chains, each number worked out by hand below.
    fn synthetic() -> Vec<RunOutcome> {
        vec![
            // r1: 3 stages, all pass, chain gate passes.
            run("A", "x", &[T, T, T], &[T, T, T], T, T),
            // r2: 3 stages, passes m0, fails m1 (F2P fails), passes m2; chain F2P fails, P2P passes.
            run("A", "y", &[T, F, T], &[T, F, T], F, T),
            // r3: 2 stages, fails m0 on P2P only (F2P passes), passes m1; chain F2P passes, P2P fails.
            run("B", "x", &[F, T], &[T, T], T, F),
            // r4: 2 stages, both pass; chain F2P fails (in-chain regression), P2P passes.
            run("B", "y", &[T, T], &[T, T], F, T),
            // r5: 4 stages, m0 m1 pass, m2 fails (F2P fails), m3 fails (F2P passes, P2P fails);
            //     chain F2P fails, P2P fails.
            run("C", "x", &[T, T, F, F], &[T, T, F, T], F, F),
            // r6: 4 stages, fails m0 (F2P fails), rest pass, chain gate passes (recovered).
            run("C", "y", &[F, T, T, T], &[F, T, T, T], T, T),
        ]
    }

    fn r(num: f64, den: f64) -> Ratio {
        Ratio { num, den }
    }

    #[test]
    fn every_metric_on_a_hand_worked_set() {
        let runs = synthetic();
        let m = arc_metrics(&runs, 4);
        // m0: r1 r2 r4 r5 pass the first stage: 4 of 6.
        assert_eq!(m.m0, r(4.0, 6.0));
        // Gate: r1 (T,T), r6 (T,T) pass; r3 has P2P failing: 2 of 6.
        assert_eq!(m.gate, r(2.0, 6.0));
        // Cont: counted stages k>=1 with all earlier passed:
        //   r1: k1 (pass), k2 (pass)               -> 2/2
        //   r2: k1 (fail); k2 excluded (m1 failed) -> 0/1
        //   r3: m0 failed, nothing counted          -> 0/0
        //   r4: k1 (pass)                          -> 1/1
        //   r5: k1 pass, k2 fail, k3 excluded       -> 1/2
        //   r6: m0 failed                           -> 0/0
        // total 4/6.
        assert_eq!(m.cont, r(4.0, 6.0));
        // Stage F2P: passes 3+2+2+2+3+3 = 15 of 3+3+2+2+4+4 = 18 stages.
        assert_eq!(m.stage_f2p, r(15.0, 18.0));
        // Depth: r1 3/3, r2 1/3, r3 0/2, r4 2/2, r5 2/4, r6 0/4 -> sum 1 + 1/3 + 0 + 1 + 0.5 + 0.
        assert_eq!(m.depth.den, 6.0);
        assert!((m.depth.num - (2.0 + 1.0 / 3.0 + 0.5)).abs() < 1e-12);
        assert!((m.depth.value().unwrap() - (17.0 / 6.0) / 6.0).abs() < 1e-12);
        // Survival m0: all 6 runs have > 0 stages; m0 passes in 4 -> 4/6.
        // m1: all 6 have > 1 stage; m0..m1 pass in r1, r4, r5 -> 3/6.
        // m2: r1 r2 r5 r6 have > 2 stages; m0..m2 pass in r1 only -> 1/4.
        // m3: r5 r6 have > 3 stages; none passes m0..m3 -> 0/2.
        assert_eq!(m.survival, vec![r(4.0, 6.0), r(3.0, 6.0), r(1.0, 4.0), r(0.0, 2.0)]);
        // Chain P2P failure: r3, r5 -> 2 of 6.
        assert_eq!(m.chain_p2p_failure, r(2.0, 6.0));
        // In-chain regression: runs with every stage F2P passing: r1, r3, r4 (r2 r5 r6 have a
        // failing stage F2P). Of those, chain F2P fails in r4 -> 1/3.
        assert_eq!(m.in_chain_regression, r(1.0, 3.0));
        // Pure regression: runs with chain F2P passing: r1, r3, r6; chain P2P fails in r3 -> 1/3.
        assert_eq!(m.pure_regression, r(1.0, 3.0));
        // Last stage passed: r1 r2 r3 r4 r6 (r5 fails m3); chain gate fails in r2, r3, r4 -> 3/5.
        assert_eq!(m.last_stage_overestimate, r(3.0, 5.0));
    }

    #[test]
    fn first_break_categories() {
        let runs = synthetic();
        // r3 fails m0 and its chain P2P, so it did not recover: it first breaks at m0.
        let b: Vec<Break> = runs.iter().map(RunOutcome::first_break).collect();
        assert_eq!(
            b,
            vec![
                Break::Complete,
                Break::Stage(1),
                Break::Stage(0),
                Break::GateFails,
                Break::Stage(2),
                Break::Recovered
            ]
        );
    }

    #[test]
    fn within_group_comparison_is_equal_weighted_over_groups_with_both_conditions() {
        let runs = synthetic();
        let by_task: Vec<Vec<RunOutcome>> =
            ["A", "B", "C"].iter().map(|t| runs.iter().filter(|r| r.task == *t).cloned().collect()).collect();
        let slices: Vec<&[RunOutcome]> = by_task.iter().map(Vec::as_slice).collect();
        let g = group_comparison(&slices);
        // Task A, stage 1: r1 (m0 passed, F2P1 T), r2 (m0 passed, F2P1 F): only "after pass" -> dropped.
        // Task A, stage 2: r1 (m1 passed, F2P2 T), r2 (m1 failed, F2P2 T): after pass 1, after fail 1.
        // Task B, stage 1: r3 (m0 failed, F2P1 T), r4 (m0 passed, F2P1 T): after pass 1, after fail 1.
        // Task C, stage 1: r5 (m0 passed, T), r6 (m0 failed, T): 1 and 1.
        // Task C, stage 2: r5 (m1 passed, F2P2 F), r6 (m1 passed, T): only after pass -> dropped.
        // Task C, stage 3: r5 (m2 failed, F2P3 T), r6 (m2 passed, T): 1 and 1.
        // Four groups, every rate 1 (the next test has rates that differ).
        assert_eq!(g.groups, 4);
        assert_eq!(g.after_pass, r(4.0, 4.0));
        assert_eq!(g.after_fail, r(4.0, 4.0));
        // Pooled: after pass: A1 r1 T, A1 r2 F, A2 r1 T, B1 r4 T, C1 r5 T, C2 r5 F, C2 r6 T, C3 r6 T -> 6/8;
        // after fail: A2 r2 T, B1 r3 T, C1 r6 T, C3 r5 T -> 4/4.
        assert_eq!(g.pooled_after_pass, r(6.0, 8.0));
        assert_eq!(g.pooled_after_fail, r(4.0, 4.0));
    }

    #[test]
    fn group_rates_are_averaged_per_group_not_pooled() {
        // One task, stage 1, three runs after a pass (F2P: T, F, F) and one after a fail (T);
        // a second task, stage 1, one run after a pass (T) and one after a fail (F).
        let t1 = vec![
            run("P", "a", &[T, T], &[T, T], T, T),
            run("P", "b", &[T, F], &[T, F], F, T),
            run("P", "c", &[T, F], &[T, F], F, T),
            run("P", "d", &[F, T], &[F, T], T, T),
        ];
        let t2 = vec![run("Q", "a", &[T, T], &[T, T], T, T), run("Q", "b", &[F, F], &[F, F], F, T)];
        let g = group_comparison(&[&t1, &t2]);
        assert_eq!(g.groups, 2);
        // Group P: after pass 1/3, after fail 1/1. Group Q: after pass 1/1, after fail 0/1.
        // Equal-weighted: after pass (1/3 + 1) / 2 = 2/3; after fail (1 + 0) / 2 = 1/2.
        assert!((g.after_pass.value().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(g.after_fail.value(), Some(0.5));
        // Pooled instead: after pass 2/4, after fail 1/2 — different, as it should be.
        assert_eq!(g.pooled_after_pass, r(2.0, 4.0));
        assert_eq!(g.pooled_after_fail, r(1.0, 2.0));
    }

    #[test]
    fn undefined_ratios_stay_undefined() {
        // Every stage fails: Cont. has no stage to count, regression rates have no runs.
        let runs = vec![run("A", "x", &[F, F], &[F, F], F, T)];
        let m = arc_metrics(&runs, 2);
        assert_eq!(m.cont.value(), None);
        assert_eq!(m.in_chain_regression.value(), None);
        assert_eq!(m.pure_regression.value(), None);
        assert_eq!(m.m0.value(), Some(0.0));
    }
}
