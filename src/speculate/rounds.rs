//! One prompt, decoded greedily: by the target alone (the baseline every configuration is
//! compared with), or speculatively with a draft model.
//!
//! Both paths run the same prompt pass, so the first generated token is computed identically,
//! and both pick tokens with [`top2`]. With [`Verify::Exact`] every target pass after that feeds
//! one position, as the baseline does, so the output equals the baseline bit for bit whatever
//! the draft proposes; a difference is a bug in acceptance, commit or cache trimming.

use super::SpeculateError;
use super::auto_k::{AutoK, RoundObservation};
use super::clock::Clock;
use super::energy::EnergyMeter;
use super::lm::{LanguageModel, Top2, top2};
use super::metrics::{Counters, PassTimes, TimeSplit};
use super::resync::DraftContext;
use super::strategy::{Pair, Strategy, translate};
use super::tokens::{TextTokenizer, Token};

/// How the target checks the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verify {
    /// One pass over all candidates (fast; numerics of a k+1-row pass).
    Batched,
    /// One single-position pass per candidate, stopping at the first disagreement (slow; the
    /// numerics of plain decoding, for proving losslessness).
    Exact,
}

impl Verify {
    pub fn name(self) -> &'static str {
        match self {
            Verify::Batched => "batched",
            Verify::Exact => "exact",
        }
    }
}

/// When the target alone is timed, for the speedups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineTiming {
    /// Once, before all configurations: every speedup is against the same run, which a machine
    /// that warms up or drifts leaves behind (configurations that never drafted read 1.2x).
    Once,
    /// Again before each configuration's run of each prompt: each speedup is against the target
    /// alone timed seconds apart from it, so a machine whose speed drifts (a shared VM) moves
    /// both sides alike. About twice as long; the default.
    Paired,
}

/// In what order the configurations meet the prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOrder {
    /// Each prompt through every configuration in turn, so a slow stretch of a shared machine
    /// falls on all configurations alike instead of on whichever ran then.
    Interleaved,
    /// Each configuration over all prompts before the next one starts.
    Grouped,
}

/// What is generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Tokens to generate at most (the first comes from the prompt pass).
    pub max_new_tokens: usize,
    /// Generation ends after any of these target ids (empty: never).
    pub stop: Vec<u32>,
}

/// How a speculative run works.
#[derive(Clone, Debug)]
pub struct SpecOptions {
    pub decode: DecodeOptions,
    pub verify: Verify,
    pub strategy: Strategy,
    /// Committed target tokens prefixed to the draft text by the `context` strategy (p).
    pub prefix: usize,
    /// Draft tokens the re-sync may look back for a word start.
    pub lookbehind: usize,
}

/// The draft length per round.
pub enum DraftLength<'a> {
    Fixed(usize),
    Auto(&'a mut AutoK),
}

/// One decoded prompt.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// Generated ids (prompt excluded).
    pub ids: Vec<u32>,
    /// For each generated id, the best two entries of the logits row that chose it.
    pub top2: Vec<Top2>,
    pub times: TimeSplit,
    pub passes: PassTimes,
    pub counters: Counters,
    /// Joules spent while decoding (prefill excluded), or why there is no figure.
    pub energy_j: Option<f64>,
    pub energy_error: Option<String>,
}

impl Output {
    fn energy(&mut self, start: Result<f64, String>, end: Result<f64, String>) {
        match (start, end) {
            (Ok(a), Ok(b)) => self.energy_j = Some((b - a).max(0.0)),
            (Err(e), _) | (_, Err(e)) => self.energy_error = Some(e),
        }
    }
}

/// Greedy decoding with the model alone.
pub fn greedy<M: LanguageModel + ?Sized>(
    model: &M,
    prompt: &[u32],
    opts: &DecodeOptions,
    clock: &dyn Clock,
    energy: &mut dyn EnergyMeter,
) -> Result<Output, SpeculateError> {
    let mut out = Output::default();
    if opts.max_new_tokens == 0 {
        return Ok(out);
    }
    let start = clock.now();
    let mut state = model.new_state();
    let logits = model.forward(&mut state, prompt, false).map_err(SpeculateError::model("target"))?;
    let mut next = top2(logits.last());
    let e0 = energy.read();
    let decode_start = clock.now();
    out.times.prefill_s = decode_start - start;
    loop {
        out.ids.push(next.id);
        out.top2.push(next);
        if out.ids.len() >= opts.max_new_tokens || opts.stop.contains(&next.id) {
            break;
        }
        let t = clock.now();
        let logits = model.forward(&mut state, &[next.id], false).map_err(SpeculateError::model("target"))?;
        out.passes.target_single.add(clock.now() - t);
        next = top2(logits.last());
    }
    out.times.decode_s = clock.now() - decode_start;
    out.energy(e0, energy.read());
    Ok(out)
}

/// Speculative greedy decoding; the output equals [`greedy`] on the target.
#[allow(clippy::too_many_arguments)]
pub fn speculative<T, D, TT, DT>(
    target: &T,
    draft: &D,
    pair: &Pair<TT, DT>,
    prompt_target: &[u32],
    prompt_draft: &[u32],
    opts: &SpecOptions,
    k_policy: &mut DraftLength<'_>,
    clock: &dyn Clock,
    energy: &mut dyn EnergyMeter,
) -> Result<Output, SpeculateError>
where
    T: LanguageModel + ?Sized,
    D: LanguageModel + ?Sized,
    TT: TextTokenizer + ?Sized,
    DT: TextTokenizer + ?Sized,
{
    let max_new = opts.decode.max_new_tokens;
    let mut out = Output::default();
    if max_new == 0 {
        return Ok(out);
    }
    let start = clock.now();
    let mut seq = prompt_target.to_vec();
    let n_prompt = seq.len();
    let mut ts = target.new_state();
    let logits = target.forward(&mut ts, prompt_target, false).map_err(SpeculateError::model("target"))?;
    let first = top2(logits.last());
    let mut dctx = DraftContext::new(prompt_draft.to_vec());
    let mut ds = draft.new_state();
    if prompt_draft.len() > 1 {
        draft
            .forward(&mut ds, &prompt_draft[..prompt_draft.len() - 1], false)
            .map_err(SpeculateError::model("draft"))?;
        dctx.fed = prompt_draft.len() - 1;
    }
    let e0 = energy.read();
    let decode_start = clock.now();
    out.times.prefill_s = decode_start - start;

    seq.push(first.id);
    out.ids.push(first.id);
    out.top2.push(first);
    let mut done = opts.decode.stop.contains(&first.id);
    // Whether the draft's last proposals still wait to be counted (each re-sync counts the
    // proposals of the round before it).
    let mut unsynced_proposals = false;
    while !done && out.ids.len() < max_new {
        let cap = max_new - out.ids.len() - 1;
        let round_start = clock.now();
        let k = match k_policy {
            DraftLength::Fixed(k) => (*k).min(cap),
            DraftLength::Auto(a) => a.choose(cap),
        };
        let k = if dctx.ids.is_empty() { 0 } else { k };
        let mut obs = RoundObservation::default();
        let mut cands = Vec::new();
        let mut draft_time = 0.0;
        let mut drafted = Vec::new();
        if k > 0 {
            let t = clock.now();
            let r = dctx
                .resync(pair, &seq[n_prompt..], opts.lookbehind)
                .map_err(SpeculateError::translate("target→draft"))?;
            draft.trim(&mut ds, r.keep);
            out.counters.drafted_committed += r.proposals_committed as u64;
            out.times.resync_s += clock.now() - t;
            let mut proposals = Vec::with_capacity(k);
            for _ in 0..k {
                let pending = dctx.pending().to_vec();
                let t = clock.now();
                let logits = draft.forward(&mut ds, &pending, false).map_err(SpeculateError::model("draft"))?;
                let dt = clock.now() - t;
                draft_time += dt;
                // A pass that catches up on several rounds (after k = 0 rounds, or a re-sync that
                // rewrote draft tokens) is the price of not drafting: `-k auto` must not charge
                // it to drafting, or drafting looks dear because it paused.
                if pending.len() <= 2 {
                    obs.draft_pass_s.push(dt);
                } else {
                    obs.catch_up = true;
                    obs.catch_up_s += dt;
                }
                if pending.len() == 1 {
                    out.passes.draft_single.add(dt);
                } else {
                    out.passes.draft_multi.add(dt);
                    out.counters.resync_fed += pending.len() as u64 - 1;
                }
                dctx.fed = dctx.ids.len();
                let d = draft.output_id(top2(logits.last()).id);
                dctx.ids.push(d);
                proposals.push(d);
                // Nothing useful follows a special token in the same round.
                if pair.draft_eos.contains(&d) || !matches!(pair.draft.token(d), Token::Text(_)) {
                    break;
                }
            }
            out.times.draft_s += draft_time;
            out.counters.drafting_rounds += 1;
            out.counters.drafted += proposals.len() as u64;
            unsynced_proposals = true;
            let t = clock.now();
            cands = translate(opts.strategy, pair, &seq, &proposals, opts.prefix)
                .map_err(SpeculateError::translate("draft→target"))?;
            cands.truncate(cap);
            out.times.translate_s += clock.now() - t;
            if cands.is_empty() {
                out.counters.empty_rounds += 1;
            }
            obs.drafted = proposals.len();
            drafted = proposals;
        }

        // Verification: tops[i] is the target's choice after the committed text plus the first
        // i candidates; candidates are accepted while they equal it.
        let y = *seq.last().unwrap_or(&first.id);
        let t = clock.now();
        let tops: Vec<Top2> = match opts.verify {
            Verify::Batched => {
                let mut rows = Vec::with_capacity(cands.len() + 1);
                rows.push(y);
                rows.extend_from_slice(&cands);
                let before = target.len(&ts);
                let logits = target.forward(&mut ts, &rows, true).map_err(SpeculateError::model("target"))?;
                let tops: Vec<Top2> = (0..rows.len()).map(|i| top2(logits.row(i))).collect();
                let m = cands.iter().zip(&tops).take_while(|(c, g)| **c == g.id).count();
                target.trim(&mut ts, before + m + 1);
                tops[..=m].to_vec()
            }
            Verify::Exact => {
                let mut tops = Vec::with_capacity(cands.len() + 1);
                let mut feed = y;
                loop {
                    let tp = clock.now();
                    let logits = target.forward(&mut ts, &[feed], false).map_err(SpeculateError::model("target"))?;
                    out.passes.verify.entry(1).or_default().add(clock.now() - tp);
                    let g = top2(logits.last());
                    tops.push(g);
                    match cands.get(tops.len() - 1) {
                        Some(&c) if c == g.id => feed = c,
                        _ => break,
                    }
                }
                tops
            }
        };
        let verify_time = clock.now() - t;
        out.times.verify_s += verify_time;
        if opts.verify == Verify::Batched {
            out.passes.verify.entry(cands.len() + 1).or_default().add(verify_time);
        }
        let m = tops.len() - 1;
        let mut committed = 0;
        for g in &tops {
            seq.push(g.id);
            out.ids.push(g.id);
            out.top2.push(*g);
            committed += 1;
            if opts.decode.stop.contains(&g.id) {
                done = true;
                break;
            }
        }
        out.counters.round(k, cands.len(), m, committed);
        out.counters.drafted_accepted += drafted_in_accepted(pair, &drafted, &cands, m) as u64;
        if let DraftLength::Auto(a) = k_policy {
            obs.proposed = cands.len();
            obs.accepted = m;
            obs.verify_rows = cands.len() + 1;
            obs.verify_s = verify_time;
            obs.overhead_s = (clock.now() - round_start - draft_time - verify_time).max(0.0);
            a.observe(&obs);
        }
    }
    out.times.decode_s = clock.now() - decode_start;
    out.energy(e0, energy.read());
    if unsynced_proposals {
        // Count the last round's proposals (not timed: decoding is over).
        let r =
            dctx.resync(pair, &seq[n_prompt..], opts.lookbehind).map_err(SpeculateError::translate("target→draft"))?;
        out.counters.drafted_committed += r.proposals_committed as u64;
    }
    Ok(out)
}

/// Draft tokens whose text the accepted candidates carry (draft-unit acceptance): those within
/// the common prefix of the accepted candidates' text and the drafted text, and a drafted special
/// token if the candidate it became was accepted.
fn drafted_in_accepted<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
    pair: &Pair<TT, DT>,
    drafted: &[u32],
    cands: &[u32],
    m: usize,
) -> usize {
    if m == 0 {
        return 0;
    }
    if pair.identical {
        return drafted.iter().zip(&cands[..m]).take_while(|(a, b)| a == b).count();
    }
    let accepted = super::tokens::bytes_of(pair.target, &cands[..m]);
    let mut at = 0;
    let mut n = 0;
    for (i, &d) in drafted.iter().enumerate() {
        match pair.draft.token(d) {
            Token::Text(b) if !pair.draft_eos.contains(&d) => {
                if accepted.get(at..at + b.len()) != Some(b) {
                    break;
                }
                at += b.len();
                n += 1;
            }
            _ => {
                // A special ends the draft; it counts if its mapped candidate was accepted last.
                if i + 1 == drafted.len() && m == cands.len() && pair.special_to_target(d) == cands.last().copied() {
                    n += 1;
                }
                break;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests;
