//! Percentiles of a set of samples. Nearest-rank on the sorted samples:
//! with few runs p99 is the slowest, which is what we want to see.

use serde::Serialize;
use std::time::Duration;

#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
}

impl Stats {
    /// From samples in any unit (the caller says which).
    pub fn of(mut v: Vec<f64>) -> Stats {
        if v.is_empty() {
            return Stats::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Stats {
            n: v.len(),
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            mean: v.iter().sum::<f64>() / v.len() as f64,
        }
    }

    /// From durations, in milliseconds.
    pub fn ms(v: &[Duration]) -> Stats {
        Stats::of(v.iter().map(|d| d.as_secs_f64() * 1e3).collect())
    }

    /// A single figure (throughput, memory): every percentile is it.
    pub fn one(x: f64) -> Stats {
        Stats {
            n: 1,
            p50: x,
            p90: x,
            p99: x,
            mean: x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let s = Stats::of((1..=100).map(f64::from).collect());
        assert_eq!((s.p50, s.p90, s.p99), (50.0, 90.0, 99.0));
        let s = Stats::of(vec![3.0, 1.0, 2.0]);
        assert_eq!((s.p50, s.p90, s.p99), (2.0, 3.0, 3.0));
        assert_eq!(Stats::of(vec![]).n, 0);
    }
}
