//! How sure a speedup is: a 95% bootstrap interval over the prompts' paired timings, the verdict
//! it allows, and the guard for configurations that drafted (almost) nothing.
//!
//! A speedup is one number from one run of a shared, drifting machine: the issue that added this
//! (#50) saw configurations that never drafted reported at 1.20-1.23x because the target alone
//! was timed first, cold. The interval says how much the prompts disagree; a configuration that
//! did the target alone's work plus overhead has a speedup known in advance, so one that differs
//! from it by more than its interval shows that the machine's speed moved, not the method.

use serde::Serialize;

/// Share of rounds at or below which a configuration drafted "almost nothing": `-k auto` that
/// judged drafting not to pay drafts in its first rounds to measure, then now and then to learn.
pub const NEARLY_NO_DRAFTING: f64 = 0.05;

/// Bootstrap resamples per interval: the 2.5% and 97.5% quantiles move by well under 1% of a
/// speedup between seeds at this count, and 2,000 ratios of sums over tens of prompts cost
/// nothing beside one model pass.
pub const RESAMPLES: usize = 2000;

/// The resampling seed: fixed, so the same timings give the same interval on every run.
pub const SEED: u64 = 0x5EED_0050;

/// One prompt decoded by a configuration and by the target alone it is compared with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedPrompt {
    /// Decode tokens (after the first) and decoding seconds of the configuration.
    pub tokens: u64,
    pub seconds: f64,
    /// The same of the target alone.
    pub base_tokens: u64,
    pub base_seconds: f64,
}

impl PairedPrompt {
    /// This prompt's speedup: its decode tokens/s over the target alone's.
    pub fn speedup(&self) -> Option<f64> {
        self.usable().then(|| (self.tokens as f64 / self.seconds) / (self.base_tokens as f64 / self.base_seconds))
    }

    fn usable(&self) -> bool {
        self.tokens > 0 && self.seconds > 0.0 && self.base_tokens > 0 && self.base_seconds > 0.0
    }
}

/// A confidence interval of a speedup.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

impl Interval {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// What a speedup's interval allows one to say against the target alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above 1.
    Faster,
    /// The whole interval is below 1.
    Slower,
    /// The interval contains 1.
    NoMeasurableDifference,
}

impl Verdict {
    pub fn of(ci: &Interval) -> Verdict {
        if ci.low > 1.0 {
            Verdict::Faster
        } else if ci.high < 1.0 {
            Verdict::Slower
        } else {
            Verdict::NoMeasurableDifference
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoMeasurableDifference => "no measurable difference",
        }
    }
}

/// Σ tokens / Σ seconds of the configuration over the same of the target alone, over the
/// prompts `pick` names: the statistic of the reported speedup, over another draw of prompts.
fn ratio_of_sums(prompts: &[PairedPrompt], pick: impl Iterator<Item = usize>) -> f64 {
    let (mut t, mut s, mut bt, mut bs) = (0u64, 0.0, 0u64, 0.0);
    for i in pick {
        let p = &prompts[i];
        t += p.tokens;
        s += p.seconds;
        bt += p.base_tokens;
        bs += p.base_seconds;
    }
    (t as f64 / s) / (bt as f64 / bs)
}

/// SplitMix64: a deterministic stream of well-mixed 64-bit numbers.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply; the bias at n of a few dozen is below 1e-17).
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// The 95% percentile-bootstrap interval of the speedup over prompts: prompts are drawn with
/// replacement, each with its own timing of the target alone (paired), and the speedup is
/// recomputed as the report computes it. None below two prompts with timings: one prompt has no
/// spread to draw from.
pub fn speedup_interval(prompts: &[PairedPrompt]) -> Option<Interval> {
    let usable: Vec<PairedPrompt> = prompts.iter().copied().filter(PairedPrompt::usable).collect();
    let n = usable.len();
    if n < 2 {
        return None;
    }
    let mut rng = SplitMix(SEED);
    let mut draws: Vec<f64> = (0..RESAMPLES).map(|_| ratio_of_sums(&usable, (0..n).map(|_| rng.below(n)))).collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * RESAMPLES as f64).round() as usize).min(RESAMPLES - 1)];
    Some(Interval { low: at(0.025), high: at(0.975) })
}

/// A configuration that drafted in at most [`NEARLY_NO_DRAFTING`] of its rounds, set against the
/// target alone: its work was the target's passes plus the overhead it measured, so its speedup
/// should be the target alone's time for its tokens over that time plus the overhead.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TargetAlone {
    pub drafting_rounds: u64,
    pub rounds: u64,
    /// Decoding time outside the target's passes (drafting, translation, re-sync, choosing k,
    /// bookkeeping) over the decoding time.
    pub overhead_share: f64,
    /// T / (T + overhead), T the target alone's time for this configuration's decode tokens at
    /// the baseline's tokens/s: below 1 by what drafting nothing still cost.
    pub expected_speedup: f64,
    /// The expected speedup lies outside the measured interval: the target's own passes ran at
    /// another speed here than in its baseline (a machine that warmed up, slowed or drifted).
    pub drifted: bool,
}

/// The guard: Some for a configuration that drafted in at most [`NEARLY_NO_DRAFTING`] of its
/// rounds. `verify_s` is its time in target passes, `decode_s` its decoding time, `tokens` its
/// decode tokens and `base_tps` the target alone's decode tokens/s it is compared with.
pub fn target_alone(
    drafting_rounds: u64,
    rounds: u64,
    tokens: u64,
    decode_s: f64,
    verify_s: f64,
    base_tps: Option<f64>,
    ci: Option<&Interval>,
) -> Option<TargetAlone> {
    if rounds == 0 || drafting_rounds as f64 > NEARLY_NO_DRAFTING * rounds as f64 {
        return None;
    }
    let base_tps = base_tps.filter(|&b| b > 0.0)?;
    if decode_s <= 0.0 || tokens == 0 {
        return None;
    }
    let overhead = (decode_s - verify_s).max(0.0);
    let t = tokens as f64 / base_tps;
    let expected_speedup = t / (t + overhead);
    Some(TargetAlone {
        drafting_rounds,
        rounds,
        overhead_share: overhead / decode_s,
        expected_speedup,
        drifted: ci.is_some_and(|ci| !ci.contains(expected_speedup)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(seconds: f64, base_seconds: f64) -> PairedPrompt {
        PairedPrompt { tokens: 10, seconds, base_tokens: 10, base_seconds }
    }

    #[test]
    fn equal_timings_give_a_point_interval_at_their_ratio() {
        let prompts = vec![p(1.0, 2.0); 5];
        let ci = speedup_interval(&prompts).unwrap();
        assert!((ci.low - 2.0).abs() < 1e-12 && (ci.high - 2.0).abs() < 1e-12, "{ci:?}");
        assert_eq!(Verdict::of(&ci), Verdict::Faster);
        assert_eq!(prompts[0].speedup(), Some(2.0));
    }

    #[test]
    fn the_interval_holds_the_speedup_and_widens_with_the_spread() {
        let narrow: Vec<PairedPrompt> = (0..20).map(|i| p(1.0, 1.0 + 0.01 * (i % 3) as f64)).collect();
        let wide: Vec<PairedPrompt> = (0..20).map(|i| p(1.0, 0.7 + 0.3 * (i % 3) as f64)).collect();
        for (prompts, verdict) in [(&narrow, Verdict::Faster), (&wide, Verdict::NoMeasurableDifference)] {
            let ci = speedup_interval(prompts).unwrap();
            let s = ratio_of_sums(prompts, 0..prompts.len());
            assert!(ci.low < s && s < ci.high, "{s} in {ci:?}");
            assert_eq!(Verdict::of(&ci), verdict, "{ci:?}");
        }
        let (n, w) = (speedup_interval(&narrow).unwrap(), speedup_interval(&wide).unwrap());
        assert!(w.high - w.low > 10.0 * (n.high - n.low), "{n:?} {w:?}");
        assert_eq!(speedup_interval(&wide), Some(w), "the same timings give the same interval");
    }

    #[test]
    fn slower_everywhere_is_slower_and_one_prompt_has_no_interval() {
        let prompts: Vec<PairedPrompt> = (0..8).map(|i| p(1.2 + 0.01 * i as f64, 1.0)).collect();
        assert_eq!(Verdict::of(&speedup_interval(&prompts).unwrap()), Verdict::Slower);
        assert_eq!(speedup_interval(&prompts[..1]), None);
        let empty = PairedPrompt { tokens: 0, seconds: 0.0, base_tokens: 0, base_seconds: 0.0 };
        assert_eq!(speedup_interval(&[prompts[0], empty]), None, "a prompt without decode time does not count");
        assert_eq!(empty.speedup(), None);
    }

    #[test]
    fn the_guard_sets_a_configuration_that_hardly_drafted_against_the_target_alone() {
        // 100 tokens at 100 tok/s alone: 1 s; 0.05 s of overhead gives 1/1.05.
        let ci = Interval { low: 0.93, high: 0.97 };
        let g = target_alone(2, 100, 100, 1.05, 1.0, Some(100.0), Some(&ci)).unwrap();
        assert!((g.expected_speedup - 1.0 / 1.05).abs() < 1e-12);
        assert!((g.overhead_share - 0.05 / 1.05).abs() < 1e-12);
        assert!(!g.drifted);
        let fast = Interval { low: 1.15, high: 1.25 };
        assert!(target_alone(2, 100, 100, 0.85, 0.80, Some(100.0), Some(&fast)).unwrap().drifted);
        assert_eq!(target_alone(6, 100, 100, 1.05, 1.0, Some(100.0), Some(&ci)), None, "it drafted in 6%");
        assert!(!target_alone(0, 100, 100, 1.05, 1.0, Some(100.0), None).unwrap().drifted, "no interval, no claim");
    }
}
