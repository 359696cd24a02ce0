//! The cost model of speculative decoding: what a round yields and costs, and where it breaks
//! even. `-k auto` ([`super::auto_k`]) prices every draft length with it.
//!
//! Standard model (Leviathan et al. 2023, §3): with i.i.d. acceptance probability α, draft
//! length k and c = (draft pass time) / (target pass time), a round yields
//! E(α, k) = (1 − α^{k+1}) / (1 − α) tokens and the speedup is S = E / (k·c + 1); it assumes the
//! target verifies k+1 positions in the time of one pass. The measured-cost model replaces the
//! denominator with what a round really took: S = E · T_target / T_round.
//!
//! Break-even acceptance solves S = 1. Under the geometric gain model that is
//! α + α² + … + α^k = T_round/T_target − 1; under the linear model E = 1 + α·k it is
//! α = (T_round/T_target − 1)/k. Above 100% means no acceptance rate can pay for the round:
//! exactly when T_round > (k+1)·T_target.

use std::collections::BTreeMap;

use super::metrics::Acc;

/// Expected committed tokens per round, E(α, k) (k may be fractional: a mean candidate count).
pub fn expected_tokens(alpha: f64, k: f64) -> f64 {
    let a = alpha.clamp(0.0, 1.0);
    if a >= 1.0 - 1e-12 { k + 1.0 } else { (1.0 - a.powf(k + 1.0)) / (1.0 - a) }
}

/// Leviathan's expected walltime improvement S(α, k, c).
pub fn standard_speedup(alpha: f64, k: f64, c: f64) -> f64 {
    expected_tokens(alpha, k) / (k * c + 1.0)
}

/// The acceptance α at which a round costing `round_ratio` target passes breaks even, under the
/// geometric gain model; None when even α = 1 cannot (round_ratio > k+1).
pub fn break_even_geometric(round_ratio: f64, k: f64) -> Option<f64> {
    if round_ratio <= 1.0 {
        return Some(0.0);
    }
    if round_ratio > k + 1.0 || k <= 0.0 {
        return None;
    }
    // E(α, k) rises monotonically from 1 to k+1 on [0, 1]: bisect.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if expected_tokens(mid, k) < round_ratio { lo = mid } else { hi = mid }
    }
    Some(0.5 * (lo + hi))
}

/// The same under the linear gain model E = 1 + α·k.
pub fn break_even_linear(round_ratio: f64, k: f64) -> Option<f64> {
    if k <= 0.0 {
        return None;
    }
    let a = ((round_ratio - 1.0) / k).max(0.0);
    (a <= 1.0).then_some(a)
}

/// The speedup a round of `k_draft` draft passes and `k_target` candidates would give, from
/// measured pass costs (seconds) and α.
pub struct CostInputs<'a> {
    pub target_pass: f64,
    pub draft_pass: f64,
    /// Measured verification pass times by positions.
    pub verify: &'a BTreeMap<usize, Acc>,
    /// Per-round translation, re-sync and bookkeeping time.
    pub overhead: f64,
}

impl CostInputs<'_> {
    /// Verification pass time for `rows` positions: measured, else interpolated linearly between
    /// measured sizes (a pass over one position costs a target pass), else extrapolated from the
    /// largest two, else assumed memory-bound (as one target pass).
    pub fn verify_time(&self, rows: usize) -> f64 {
        let mut pts: Vec<(f64, f64)> = vec![(1.0, self.target_pass)];
        pts.extend(
            self.verify.iter().filter(|(m, a)| **m > 1 && a.n > 0).filter_map(|(m, a)| Some((*m as f64, a.mean()?))),
        );
        if let Some(a) = self.verify.get(&1).and_then(Acc::mean) {
            pts[0].1 = a;
        }
        let x = rows as f64;
        if let Some(&(_, y)) = pts.iter().find(|p| p.0 == x) {
            return y;
        }
        let below = pts.iter().rev().find(|p| p.0 < x).copied();
        let above = pts.iter().find(|p| p.0 > x).copied();
        match (below, above) {
            (Some(a), Some(b)) => a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0),
            (Some(b), None) if pts.len() >= 2 => {
                let a = pts[pts.len() - 2];
                (b.1 + (b.1 - a.1) / (b.0 - a.0) * (x - b.0)).max(b.1)
            }
            (Some(b), None) => b.1,
            _ => self.target_pass,
        }
    }

    /// What a round of `k_draft` draft passes and `k_target` candidates costs.
    pub fn round_time(&self, k_draft: f64, k_target: f64) -> f64 {
        let rows = k_target.round().max(0.0) as usize + 1;
        k_draft * self.draft_pass + self.verify_time(rows) + self.overhead
    }

    pub fn predicted_speedup(&self, alpha: f64, k_draft: f64, k_target: f64) -> f64 {
        expected_tokens(alpha, k_target) * self.target_pass / self.round_time(k_draft, k_target)
    }

    /// The cost model of a measured run of `rounds` rounds with `k_draft` draft passes and
    /// `k_target` candidates on average: each round is charged `k_draft` draft passes, the
    /// overhead, and its own verification pass at the measured cost of that pass's size
    /// (`verify` holds all of them), against plain decoding at its measured time per token
    /// (`per_token`: the pass plus picking the token, which is what the speedup is measured
    /// against).
    ///
    /// Unlike [`CostInputs::predicted_speedup`] (for a k not yet run, at one size), the sizes
    /// are those that occurred: when translation drops or merges candidates they vary from round
    /// to round, and one pass at the mean size missed their cost by up to a fifth on a CPU where
    /// a pass's cost grows with its rows and changes kernel at 5 rows.
    pub fn predicted_speedup_of_rounds(
        &self,
        alpha: f64,
        k_draft: f64,
        k_target: f64,
        rounds: u64,
        per_token: f64,
    ) -> Option<f64> {
        if rounds == 0 {
            return None;
        }
        let verify_per_round = self.verify.values().map(|a| a.seconds).sum::<f64>() / rounds as f64;
        let round = k_draft * self.draft_pass + verify_per_round + self.overhead;
        (round > 0.0).then(|| expected_tokens(alpha, k_target) * per_token / round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds of different sizes are charged what each size cost, not one pass at the mean size:
    /// half the rounds verify 1 position (1 ms), half 5 (2 ms, another kernel), mean 3 positions
    /// would be interpolated from 3 ms at 4 positions.
    #[test]
    fn measured_rounds_are_charged_their_own_verification_sizes() {
        let mut verify = BTreeMap::new();
        verify.insert(1, Acc { n: 10, seconds: 0.010 });
        verify.insert(4, Acc { n: 0, seconds: 0.0 });
        verify.insert(5, Acc { n: 10, seconds: 0.020 });
        let costs = CostInputs { target_pass: 0.001, draft_pass: 0.0002, verify: &verify, overhead: 0.0001 };
        let s = costs.predicted_speedup_of_rounds(0.0, 2.0, 2.0, 20, 0.0012).unwrap();
        // A round: 2 draft passes 0.4 ms + verification 1.5 ms + overhead 0.1 ms = 2 ms; one token.
        assert!((s - 0.0012 / 0.002).abs() < 1e-12, "{s}");
        assert_eq!(costs.predicted_speedup_of_rounds(0.5, 2.0, 2.0, 0, 0.001), None);
    }

    #[test]
    fn expected_tokens_matches_the_closed_form() {
        assert!((expected_tokens(0.5, 2.0) - 1.75).abs() < 1e-12);
        assert_eq!(expected_tokens(1.0, 4.0), 5.0);
        assert_eq!(expected_tokens(0.0, 6.0), 1.0);
    }

    /// The doc's table: break-even α under the standard model for c = 0.28.
    #[test]
    fn break_even_reproduces_the_reference_table() {
        let c = 0.28;
        for (k, want) in [(1, 0.28), (2, 0.40), (3, 0.49), (4, 0.55), (5, 0.60), (6, 0.64), (8, 0.71)] {
            let ratio = 1.0 + k as f64 * c;
            let a = break_even_geometric(ratio, k as f64).unwrap();
            assert!((a - want).abs() < 0.006, "k={k}: {a} vs {want}");
            assert!((standard_speedup(a, k as f64, c) - 1.0).abs() < 1e-9);
        }
        // Linear model at k=2 with the paper's 40%: c = 0.40.
        assert!((break_even_linear(1.8, 2.0).unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn break_even_above_one_is_unreachable() {
        assert_eq!(break_even_geometric(7.5, 6.0), None, "a round dearer than k+1 target passes never pays");
        assert_eq!(break_even_linear(7.5, 6.0), None);
        assert_eq!(break_even_geometric(0.9, 2.0), Some(0.0));
    }

    #[test]
    fn verify_time_interpolates_and_extrapolates() {
        let mut v = BTreeMap::new();
        v.insert(3, Acc { n: 2, seconds: 4.0 }); // 2.0 s at 3 rows
        let c = CostInputs { target_pass: 1.0, draft_pass: 0.1, verify: &v, overhead: 0.0 };
        assert_eq!(c.verify_time(1), 1.0);
        assert_eq!(c.verify_time(2), 1.5);
        assert_eq!(c.verify_time(5), 3.0);
        let empty = BTreeMap::new();
        let c = CostInputs { target_pass: 1.0, draft_pass: 0.1, verify: &empty, overhead: 0.0 };
        assert_eq!(c.verify_time(7), 1.0, "unmeasured: memory-bound");
    }
}
