//! Percentile bootstrap intervals over tasks (FeatureArc IV-D: 95%, 4,000 resamples).
//!
//! A resample draws as many tasks as there are, with replacement, from the sorted task ids,
//! takes every run of each drawn task (a task drawn twice counts twice), and recomputes the
//! statistic. The interval is the 2.5th and 97.5th percentile of the resampled values
//! (linear interpolation between order statistics, numpy's default); resamples in which a
//! ratio is undefined (nothing counted) are left out of that ratio's interval. The random
//! generator is ChaCha8 seeded with `seed`, so the same inputs and seed give the same
//! interval on every machine.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::metrics::Ratio;

pub const DEFAULT_RESAMPLES: usize = 4000;
pub const DEFAULT_SEED: u64 = 0;
pub const LEVEL: f64 = 0.95;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// A point value with its interval and what it counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub ci: Option<Interval>,
    /// What the ratio counts (numerator, denominator) at the point estimate.
    pub num: f64,
    pub den: f64,
}

/// The `q`-quantile (0..=1) of sorted values, linear interpolation (numpy "linear").
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Bootstrap every ratio `stat` returns. `groups[i]` are the items of task i; `stat` gets
/// one slice per drawn task and returns the same number of ratios every time.
pub fn bootstrap<T>(
    groups: &[Vec<T>],
    resamples: usize,
    seed: u64,
    mut stat: impl FnMut(&[&[T]]) -> Vec<Ratio>,
) -> Vec<Estimate> {
    let all: Vec<&[T]> = groups.iter().map(Vec::as_slice).collect();
    let point = stat(&all);
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); point.len()];
    if !groups.is_empty() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut draw: Vec<&[T]> = Vec::with_capacity(groups.len());
        for _ in 0..resamples {
            draw.clear();
            for _ in 0..groups.len() {
                draw.push(&groups[rng.random_range(0..groups.len())]);
            }
            for (i, r) in stat(&draw).into_iter().enumerate() {
                if let (Some(v), Some(s)) = (r.value(), samples.get_mut(i)) {
                    s.push(v);
                }
            }
        }
    }
    point
        .iter()
        .zip(samples.iter_mut())
        .map(|(p, s)| {
            s.sort_by(f64::total_cmp);
            let tail = (1.0 - LEVEL) / 2.0;
            let ci = match (quantile(s, tail), quantile(s, 1.0 - tail)) {
                (Some(low), Some(high)) if p.value().is_some() => Some(Interval { low, high }),
                _ => None,
            };
            Estimate { value: p.value(), ci, num: p.num, den: p.den }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(tasks: &[&[bool]]) -> Vec<Ratio> {
        let mut r = Ratio::default();
        for t in tasks {
            for x in *t {
                r.den += 1.0;
                r.num += f64::from(u8::from(*x));
            }
        }
        vec![r]
    }

    #[test]
    fn quantile_interpolates_linearly() {
        let v = [0.0, 1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), Some(2.0));
        assert_eq!(quantile(&v, 0.025), Some(0.1));
        assert!((quantile(&v, 0.975).unwrap() - 3.9).abs() < 1e-12);
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn two_tasks_one_pass_one_fail_span_zero_to_one() {
        // Resampling two tasks {pass, fail}: the mean is 0 (p = 1/4), 1/2 (1/2) or 1 (1/4).
        // With 4,000 draws both 0 and 1 occur far more than 2.5% of the time, so the 95%
        // interval is exactly [0, 1]; the point value is 1/2.
        let groups = vec![vec![true], vec![false]];
        let e = bootstrap(&groups, 4000, 7, mean);
        assert_eq!(e[0].value, Some(0.5));
        assert_eq!(e[0].ci, Some(Interval { low: 0.0, high: 1.0 }));
    }

    #[test]
    fn identical_tasks_give_a_degenerate_interval() {
        let groups = vec![vec![true, true]; 5];
        let e = bootstrap(&groups, 500, 1, mean);
        assert_eq!(e[0].ci, Some(Interval { low: 1.0, high: 1.0 }));
    }

    #[test]
    fn same_seed_same_interval_other_seed_other_draws() {
        let groups: Vec<Vec<bool>> = (0..30).map(|i| vec![i % 3 == 0, i % 5 == 0]).collect();
        let a = bootstrap(&groups, 4000, 42, mean);
        let b = bootstrap(&groups, 4000, 42, mean);
        assert_eq!(a, b);
        let draws = |seed| {
            let mut seen = Vec::new();
            bootstrap(&groups, 50, seed, |t: &[&[bool]]| {
                let r = mean(t);
                seen.push(r[0].num);
                r
            });
            seen
        };
        assert_eq!(draws(42), draws(42));
        assert_ne!(draws(42), draws(43), "another seed draws other resamples");
        let ci = a[0].ci.unwrap();
        let v = a[0].value.unwrap();
        assert!(ci.low < v && v < ci.high, "{ci:?} around {v}");
    }

    #[test]
    fn tasks_are_resampled_whole() {
        // Task A has 9 passing runs, task B one failing run: a pooled ratio over runs
        // resampled by task is 9/10 (one of each), 1 (A twice) or 0 (B twice); never a value
        // a resampling of single runs would give, such as 8/10.
        let groups = vec![vec![true; 9], vec![false]];
        let mut seen = std::collections::BTreeSet::new();
        let _ = bootstrap(&groups, 200, 3, |t: &[&[bool]]| {
            let r = mean(t);
            seen.insert((r[0].value().unwrap() * 100.0).round() as i64);
            r
        });
        assert!(seen.iter().all(|v| [0, 90, 100].contains(v)), "{seen:?}");
    }
}
