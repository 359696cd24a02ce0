//! What one configuration measured, summed over its prompts. Definitions (also in
//! docs/speculate-json.md):
//!
//! - acceptance rate (target units) = Σ accepted candidates / Σ proposed candidates, where a
//!   candidate is a target token produced by translating draft tokens, and accepted means it
//!   was in the longest run agreeing with the target's greedy choices;
//! - acceptance rate (draft units) = Σ draft tokens whose text the accepted candidates carry /
//!   Σ draft tokens drafted;
//! - draft accuracy = Σ draft tokens whose text was committed at their place, by accepted
//!   candidates or by the target's own next token / Σ drafted: how often the draft was right,
//!   whether or not translation let the candidate through;
//! - α̂ = A / (A + R), A accepted candidates, R rounds that ended in a rejection: the estimate
//!   of Leviathan's per-token acceptance probability that the cost model uses;
//! - tokens per pass = committed tokens / target verification passes (rounds), 1..k+1;
//! - m = accepted candidates in one round (histogram index).

use std::collections::BTreeMap;

/// Running sum and count of measured durations.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Acc {
    pub n: u64,
    pub seconds: f64,
}

impl Acc {
    pub fn add(&mut self, seconds: f64) {
        self.n += 1;
        self.seconds += seconds;
    }

    pub fn merge(&mut self, o: &Acc) {
        self.n += o.n;
        self.seconds += o.seconds;
    }

    /// Mean, or None before the first sample.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.seconds / self.n as f64)
    }
}

/// Durations of model passes, by kind and number of positions fed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// Target passes over one position (plain decoding).
    pub target_single: Acc,
    /// Draft passes over one position.
    pub draft_single: Acc,
    /// Draft passes over several positions (the first pass of a round that also ingests
    /// re-synchronised tokens).
    pub draft_multi: Acc,
    /// Target verification passes by number of positions (k_t + 1).
    pub verify: BTreeMap<usize, Acc>,
}

impl PassTimes {
    pub fn merge(&mut self, o: &PassTimes) {
        self.target_single.merge(&o.target_single);
        self.draft_single.merge(&o.draft_single);
        self.draft_multi.merge(&o.draft_multi);
        for (m, a) in &o.verify {
            self.verify.entry(*m).or_default().merge(a);
        }
    }
}

/// Where decoding time went.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct TimeSplit {
    pub draft_s: f64,
    pub translate_s: f64,
    pub resync_s: f64,
    pub verify_s: f64,
    /// Decoding time in total (prefill excluded); what is not in the four parts is bookkeeping.
    pub decode_s: f64,
    pub prefill_s: f64,
}

impl TimeSplit {
    pub fn other_s(&self) -> f64 {
        (self.decode_s - self.draft_s - self.translate_s - self.resync_s - self.verify_s).max(0.0)
    }

    pub fn merge(&mut self, o: &TimeSplit) {
        self.draft_s += o.draft_s;
        self.translate_s += o.translate_s;
        self.resync_s += o.resync_s;
        self.verify_s += o.verify_s;
        self.decode_s += o.decode_s;
        self.prefill_s += o.prefill_s;
    }
}

/// Counts over rounds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Counters {
    /// Target verification passes (a round with no candidate is a plain target step).
    pub rounds: u64,
    /// Rounds in which the draft ran.
    pub drafting_rounds: u64,
    /// Draft tokens drafted, those whose text the accepted candidates carry, and those whose
    /// text was committed at their place by any token.
    pub drafted: u64,
    pub drafted_accepted: u64,
    pub drafted_committed: u64,
    /// Target candidates proposed and accepted.
    pub proposed: u64,
    pub accepted: u64,
    /// Tokens committed by rounds (the first token, from the prompt pass, is not in a round).
    pub committed: u64,
    /// Rounds whose candidates were not all accepted.
    pub rejections: u64,
    /// Drafting rounds whose translation gave no candidate.
    pub empty_rounds: u64,
    /// Rounds by accepted count m.
    pub m_histogram: Vec<u64>,
    /// Rounds by draft length k (mostly of interest for `-k auto`).
    pub k_histogram: Vec<u64>,
    /// Draft positions fed beyond one per pass (re-synchronised tokens).
    pub resync_fed: u64,
}

fn bump(h: &mut Vec<u64>, i: usize, by: u64) {
    if h.len() <= i {
        h.resize(i + 1, 0);
    }
    h[i] += by;
}

impl Counters {
    pub fn round(&mut self, k: usize, proposed: usize, accepted: usize, committed: usize) {
        self.rounds += 1;
        self.proposed += proposed as u64;
        self.accepted += accepted as u64;
        self.committed += committed as u64;
        if accepted < proposed {
            self.rejections += 1;
        }
        bump(&mut self.m_histogram, accepted, 1);
        bump(&mut self.k_histogram, k, 1);
    }

    pub fn merge(&mut self, o: &Counters) {
        self.rounds += o.rounds;
        self.drafting_rounds += o.drafting_rounds;
        self.drafted += o.drafted;
        self.drafted_accepted += o.drafted_accepted;
        self.drafted_committed += o.drafted_committed;
        self.proposed += o.proposed;
        self.accepted += o.accepted;
        self.committed += o.committed;
        self.rejections += o.rejections;
        self.empty_rounds += o.empty_rounds;
        self.resync_fed += o.resync_fed;
        for (i, &v) in o.m_histogram.iter().enumerate() {
            bump(&mut self.m_histogram, i, v);
        }
        for (i, &v) in o.k_histogram.iter().enumerate() {
            bump(&mut self.k_histogram, i, v);
        }
    }

    /// Σ accepted / Σ proposed, in target tokens.
    pub fn acceptance(&self) -> Option<f64> {
        ratio(self.accepted, self.proposed)
    }

    /// Σ draft tokens carried by accepted candidates / Σ drafted.
    pub fn acceptance_draft(&self) -> Option<f64> {
        ratio(self.drafted_accepted, self.drafted)
    }

    /// Σ draft tokens whose text was committed at their place / Σ drafted.
    pub fn draft_accuracy(&self) -> Option<f64> {
        ratio(self.drafted_committed, self.drafted)
    }

    /// A / (A + R): the per-token acceptance probability of the i.i.d. model.
    pub fn alpha_hat(&self) -> Option<f64> {
        ratio(self.accepted, self.accepted + self.rejections)
    }

    /// Committed tokens per target verification pass.
    pub fn tokens_per_pass(&self) -> Option<f64> {
        ratio(self.committed, self.rounds)
    }

    /// Target candidates per draft token (r = k_t / k_d).
    pub fn candidates_per_draft_token(&self) -> Option<f64> {
        ratio(self.proposed, self.drafted)
    }

    /// Mean draft length over rounds.
    pub fn mean_k(&self) -> Option<f64> {
        let total: u64 = self.k_histogram.iter().enumerate().map(|(k, &n)| k as u64 * n).sum();
        ratio(total, self.rounds)
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_their_definitions() {
        let mut c = Counters::default();
        c.round(4, 4, 4, 5); // all accepted + bonus
        c.round(4, 4, 1, 2); // one accepted + correction
        c.round(4, 0, 0, 1); // nothing to verify
        c.drafted = 12;
        c.drafted_accepted = 6;
        c.drafted_committed = 9;
        assert_eq!(c.acceptance(), Some(5.0 / 8.0));
        assert_eq!(c.alpha_hat(), Some(5.0 / 6.0), "one rejection");
        assert_eq!(c.tokens_per_pass(), Some(8.0 / 3.0));
        assert_eq!(c.acceptance_draft(), Some(0.5));
        assert_eq!(c.draft_accuracy(), Some(0.75));
        assert_eq!(c.m_histogram, vec![1, 1, 0, 0, 1]);
        assert_eq!(c.mean_k(), Some(4.0));
        let mut d = Counters::default();
        d.merge(&c);
        d.merge(&c);
        assert_eq!(d.acceptance(), c.acceptance());
        assert_eq!(d.m_histogram, vec![2, 2, 0, 0, 2]);
    }

    #[test]
    fn no_rounds_means_no_rate() {
        let c = Counters::default();
        assert_eq!(c.acceptance(), None);
        assert_eq!(c.tokens_per_pass(), None);
    }

    #[test]
    fn other_time_is_what_the_parts_leave() {
        let t =
            TimeSplit { draft_s: 1.0, translate_s: 0.5, resync_s: 0.25, verify_s: 2.0, decode_s: 4.0, prefill_s: 9.0 };
        assert_eq!(t.other_s(), 0.25);
    }
}
