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
    /// a model took.
    pub(super) fn work(
        &mut self,
        rt: &Runtime,
        models: &[Arc<Model>],
        on: &[bool],
        steps: Steps,
        heavy_rows: usize,
    ) -> usize {
        let mut taken = 0;
        for (l, lane) in self.lanes.iter_mut().enumerate() {
            if !on[l] {
                continue;
            }
            let model = &models[l];
            if !lane.incoming.is_empty() {
                let mut entered = Vec::with_capacity(lane.incoming.len());
                background::enter(rt, &mut self.buf, model, std::mem::take(&mut lane.incoming), &mut entered);
                for e in entered {
                    match e {
                        Ok((slot, meta)) => {
                            lane.slots.push(slot);
                            lane.meta.push(meta);
                        }
                        Err((owner, e)) => self.failed.push((owner, e)),
                    }
                }
            }
            let mut n = 0;
            while !lane.slots.is_empty() && !steps.over(n) {
                n += 1;
                taken = taken.max(n);
                let active = lane.slice(heavy_rows);
                let step = {
                    let _t = profile::time(Kind::Decoder);
                    profile::rows(Kind::Decoder, active);
                    search::step(rt, model, &mut self.buf, &mut lane.slots[..active])
                };
                if let Err(e) = step {
                    let msg = format!("{:#}", anyhow::Error::from(e));
                    for m in lane.meta.drain(..) {
                        self.failed.push((m.owner, EngineError::Internal(msg.clone())));
                    }
                    lane.slots.clear();
                    break;
                }
                let mut i = 0;
                while i < lane.slots.len() {
                    if lane.slots[i].is_done() {
                        let owner = lane.meta.swap_remove(i).owner;
                        let (out, weights) = lane.slots.swap_remove(i).into_parts();
                        self.done.push((owner, out, weights));
                    } else {
                        i += 1;
                    }
                }
            }
        }
        taken
    }
}
