//! A compute thread's share of the work (its *part*): its share of every model's live
//! sentences, its working memory, and the work it does in a round.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::background::{self, Entering};
use super::{ENCODE_COST_PER_PIECE, place};
use crate::engine::EngineError;
use crate::engine::jobs::Owner;
use crate::marian::Model;
use crate::marian::search::{self, Buffers, Slot};
use crate::marian::transformer::Runtime;
use crate::profile::{self, Kind};

/// The decoder steps a model takes in this round: at most `max`, and no more once `until` has
/// passed or `stop` is set (after the first).
#[derive(Clone, Copy)]
pub(super) struct Steps<'a> {
    pub(super) max: usize,
    pub(super) until: Option<std::time::Instant>,
    /// Set by the first part to end its steps in a round of many (see `Scheduler::compute`).
    pub(super) stop: Option<&'a AtomicBool>,
}

impl Steps<'_> {
    /// One step, as a round takes when nothing ends it early.
    pub(super) const ONE: Steps<'static> = Steps { max: 1, until: None, stop: None };

    /// Whether step `n` (from 0) is not to be taken: every model takes its first.
    fn over(&self, n: usize) -> bool {
        n >= self.max
            || (n > 0
                && (self.until.is_some_and(|t| std::time::Instant::now() >= t)
                    || self.stop.is_some_and(|s| s.load(Ordering::Acquire))))
    }
}

/// One model's share in one part.
#[derive(Default)]
pub(super) struct PartLane {
    pub(super) incoming: Vec<Entering>,
    pub(super) slots: Vec<Slot>,
    /// Beside each slot: its owner, whether its request is light, and the steps it sat out.
    pub(super) meta: Vec<Meta>,
}

#[derive(Clone, Copy)]
pub(super) struct Meta {
    pub(super) owner: Owner,
    pub(super) light: bool,
    pub(super) waited: u32,
}

impl PartLane {
    /// Its live sentences: decoding, or to encode first.
    pub(super) fn rows(&self) -> usize {
        self.slots.len() + self.incoming.len()
    }

    /// This model's work in this part this round, in decoder rows.
    pub(super) fn share(&self) -> place::Share {
        place::Share {
            slots: self.slots.len(),
            encode: self.incoming.iter().map(|(u, ..)| u.src.len() * ENCODE_COST_PER_PIECE).sum(),
        }
    }

    /// Orders the slots for this round's step and returns how many step: the light ones and at
    /// most `heavy_rows` heavy ones, those that sat out longest first.
    pub(super) fn slice(&mut self, heavy_rows: usize) -> usize {
        if self.slots.len() <= heavy_rows {
            return self.slots.len();
        }
        let mut rows: Vec<(Slot, Meta)> = self.slots.drain(..).zip(self.meta.drain(..)).collect();
        rows.sort_by_key(|(_, m)| (!m.light, std::cmp::Reverse(m.waited)));
        let light = rows.iter().take_while(|(_, m)| m.light).count();
        let active = (light + heavy_rows).min(rows.len());
        for (i, (slot, mut m)) in rows.into_iter().enumerate() {
            m.waited = if i < active { 0 } else { m.waited.saturating_add(1) };
            self.slots.push(slot);
            self.meta.push(m);
        }
        active
    }
}

/// One compute thread's share of the work.
#[derive(Default)]
pub(super) struct Part {
    pub(super) buf: Buffers,
    pub(super) lanes: Vec<PartLane>,
    pub(super) done: Vec<(Owner, Vec<u32>, Vec<f32>)>,
    pub(super) failed: Vec<(Owner, EngineError)>,
    /// How long its work took in the last round split by rows (`RESEAM_MT_PROFILE`: the others'
    /// wait for it is the round's end).
    pub(super) worked: std::time::Duration,
    /// The lane that stepped first in the last round of many steps (see [`take_steps`]).
    pub(super) first_lane: usize,
}

impl Part {
    pub(super) fn rows(&self) -> usize {
        self.lanes.iter().map(PartLane::rows).sum()
    }

    /// Rows of the models whose turn it is (`on`, by lane).
    pub(super) fn rows_on(&self, on: &[bool]) -> usize {
        self.lanes.iter().zip(on).filter(|(_, on)| **on).map(|(l, _)| l.rows()).sum()
    }

    /// This round's work in decoder rows: its slots, and the chunks it encodes first.
    pub(super) fn cost(&self) -> usize {
        self.lanes.iter().map(|l| l.share().cost()).sum()
    }

    /// For each model whose turn it is (`on`, by lane), encodes what came in, then runs `steps`
    /// decoder steps over its slots (fewer once they are done; only some of the heavy requests'
    /// ones each step, see [`PartLane::slice`]). The others' sentences wait, those to encode
    /// too: they are encoded in one batch when the model's turn comes. Returns the most steps
    /// a model took. The order of the models' steps: see [`take_steps`].
    pub(super) fn work(
        &mut self,
        rt: &Runtime,
        models: &[Arc<Model>],
        on: &[bool],
        steps: Steps,
        heavy_rows: usize,
    ) -> usize {
        let first = if steps.stop.is_some() {
            self.first_lane = next_first(self.first_lane, self.lanes.len(), |l| on[l] && self.lanes[l].rows() > 0);
            self.first_lane
        } else {
            0
        };
        let Part { buf, lanes, done, failed, .. } = self;
        take_steps(lanes.len(), first, steps, |l| {
            let lane = &mut lanes[l];
            if !on[l] {
                return false;
            }
            let model = &models[l];
            if !lane.incoming.is_empty() {
                let mut entered = Vec::with_capacity(lane.incoming.len());
                background::enter(rt, buf, model, std::mem::take(&mut lane.incoming), &mut entered);
                for e in entered {
                    match e {
                        Ok((slot, meta)) => {
                            lane.slots.push(slot);
                            lane.meta.push(meta);
                        }
                        Err((owner, e)) => failed.push((owner, e)),
                    }
                }
            }
            if lane.slots.is_empty() {
                return false;
            }
            let active = lane.slice(heavy_rows);
            let step = {
                let _t = profile::time(Kind::Decoder);
                profile::rows(Kind::Decoder, active);
                search::step(rt, model, buf, &mut lane.slots[..active])
            };
            if let Err(e) = step {
                let msg = format!("{:#}", anyhow::Error::from(e));
                for m in lane.meta.drain(..) {
                    failed.push((m.owner, EngineError::Internal(msg.clone())));
                }
                lane.slots.clear();
                return true;
            }
            let mut i = 0;
            while i < lane.slots.len() {
                if lane.slots[i].is_done() {
                    let owner = lane.meta.swap_remove(i).owner;
                    let (out, weights) = lane.slots.swap_remove(i).into_parts();
                    done.push((owner, out, weights));
                } else {
                    i += 1;
                }
            }
            true
        })
    }
}

/// Takes a part's decoder steps over its `lanes` (models) in a round, from lane `first` on
/// (cyclically), each lane's steps together so that its model's weights and its sentences' keys
/// and values stay in the caches from one step to the next; returns the most one lane took.
/// `step(l)` encodes lane `l`'s incoming sentences, if any, then takes one decoder step of its
/// slots and returns `true`, or returns `false` when it has none (or is not on turn); every lane
/// is asked at least once, so each encodes what came in.
///
/// In a round of many steps, which ends when the first part ends its own (`steps.stop`), the
/// lane taken last gets fewer steps whenever another part ends first; so such rounds start from
/// the next lane with work each time ([`next_first`]), and the short round goes to each model in
/// turn. (Taking the lanes one step each, in turn, evened the steps within a round but cost the
/// caches: a pivot through two models, 2 threads, 3,000 lines, took 1.06 of the time, 4 of 5
/// alternated pairs slower, on the 2-vCPU Zen 4.)
fn take_steps(lanes: usize, first: usize, steps: Steps, mut step: impl FnMut(usize) -> bool) -> usize {
    let mut taken = 0;
    for l in (0..lanes).map(|i| (first + i) % lanes) {
        let mut n = 0;
        while !steps.over(n) && step(l) {
            n += 1;
        }
        taken = taken.max(n);
    }
    taken
}

/// The lane to start a round of many steps from: the first after `prev` (cyclically, among `lanes`)
/// that `has_work`, else `prev`.
fn next_first(prev: usize, lanes: usize, has_work: impl Fn(usize) -> bool) -> usize {
    (1..=lanes).map(|i| (prev + i) % lanes).find(|&l| has_work(l)).unwrap_or(prev)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::{Steps, next_first, take_steps};

    /// Runs [`take_steps`] from lane `first` over lanes holding `left[l]` steps of work, the
    /// other part ending (setting `stop`) after `stop_after` steps of this one; returns the lanes
    /// in the order they stepped, and the most steps one took.
    fn order(left: &[usize], first: usize, max: usize, stop_after: Option<usize>) -> (Vec<usize>, usize) {
        let stop = AtomicBool::new(false);
        let steps = Steps { max, until: None, stop: stop_after.map(|_| &stop) };
        let mut left = left.to_vec();
        let mut order = Vec::new();
        let taken = take_steps(left.len(), first, steps, |l| {
            if left[l] == 0 {
                return false;
            }
            left[l] -= 1;
            order.push(l);
            if Some(order.len()) == stop_after {
                stop.store(true, Ordering::Release);
            }
            true
        });
        (order, taken)
    }

    #[test]
    fn each_models_steps_are_taken_together() {
        let (o, taken) = order(&[3, 0, 2], 0, 64, None);
        assert_eq!(o, [0, 0, 0, 2, 2]);
        assert_eq!(taken, 3);
        // At most `max` steps each.
        assert_eq!(order(&[5, 4], 0, 2, None).0, [0, 0, 1, 1]);
        // From lane `first` on, cyclically.
        assert_eq!(order(&[2, 1, 2], 1, 64, None).0, [1, 2, 2, 0, 0]);
    }

    #[test]
    fn the_short_end_of_a_round_of_many_steps_goes_to_each_model_in_turn() {
        // The other part ends after this one's fifth step: the lane taken last gets one step
        // (each takes its first), and the lane it is depends on where the round starts.
        let has_work = |l: usize| l != 1;
        let mut first = 0;
        let mut short = Vec::new();
        for _ in 0..4 {
            first = next_first(first, 3, has_work);
            let (o, _) = order(&[10, 0, 10], first, 16, Some(5));
            assert_eq!(o.len(), 6, "{o:?}");
            short.push(*o.last().unwrap());
        }
        assert_eq!(short, [0, 2, 0, 2]);
        // No lane with work: the start stays.
        assert_eq!(next_first(2, 3, |_| false), 2);
        // Every lane takes its first step, whenever the stop comes.
        assert_eq!(order(&[10, 10, 10], 1, 16, Some(1)).0, [1, 2, 0]);
    }
}
