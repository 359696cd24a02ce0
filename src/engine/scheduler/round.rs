//! One round: every part's work run at once on the compute threads, or, with too few rows to
//! share out, the one part with work run in latency mode (see the scheduler's doc).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::part::Steps;
use super::wait::{help, stalled};
use super::{ADMIT_EVERY_STEPS, Scheduler, turns};
use crate::marian::layers::linear::{COLUMN_SPLIT_MACS, Columns, SPINNING_SPLIT_MACS};
use crate::marian::transformer::Runtime;
use crate::profile::{self, Kind};

/// How long a turn's steps run on, when places are kept for light requests (a server): a
/// request that arrives waits for the round in progress, and a turn of [`turns::TURN_STEPS`]
/// steps over heavy requests' rows (up to MAX_BATCH per step) could take hundreds of
/// milliseconds. Each model on turn takes at least one step.
pub(super) const FAIR_TURN_TIME: std::time::Duration = std::time::Duration::from_millis(10);

/// Rows of heavy requests' chunks a part steps in a round while light requests' chunks are
/// live: the heavy ones take turns (those that sat out longest first), so a round costs a few
/// rows and a one-sentence request moves at close to its idle pace instead of at the pace of a
/// step over MAX_BATCH long chunks. Output does not depend on which rows share a step.
const HEAVY_ROWS_BESIDE_LIGHT: usize = 2;

/// Rows of heavy requests' chunks a part steps in a round while light requests keep coming (one
/// was admitted within [`LIGHT_COMES_FOR`]) but none is live: a light request that arrives
/// waits for the round in progress, which a step over every heavy slot would make 30–40 ms on a
/// loaded 2-vCPU Xeon (42 rows). With no light request about, every slot steps every round, so
/// heavy traffic alone keeps its whole batches.
const HEAVY_ROWS_WHILE_LIGHT_COMES: usize = 4;

/// How long after a light request's chunk was admitted heavy rounds stay short.
const LIGHT_COMES_FOR: std::time::Duration = std::time::Duration::from_secs(1);

impl Scheduler {
    /// Runs one round over the parts (step 5 of the loop in the scheduler's doc).
    pub(super) fn compute(&mut self) {
        let heavy_rows = if self.light_live() {
            HEAVY_ROWS_BESIDE_LIGHT
        } else if self.light_seen.is_some_and(|t| t.elapsed() < LIGHT_COMES_FOR) {
            HEAVY_ROWS_WHILE_LIGHT_COMES
        } else {
            usize::MAX
        };
        let mut rt = Runtime::new(self.kernels, self.opts.arithmetic, self.opts.debug);
        rt.mkl = self.opts.mkl;
        let models = &self.models;
        let on: Vec<bool> = self.lanes.iter().map(|l| l.turn.on).collect();
        let on = &on[..];
        let steps = match (self.taking_turns, self.opts.light_places > 0) {
            (false, _) => Steps::ONE,
            (true, false) => Steps { max: turns::TURN_STEPS, until: None, stop: None },
            (true, true) => {
                Steps { max: turns::TURN_STEPS, until: Some(std::time::Instant::now() + FAIR_TURN_TIME), stop: None }
            }
        };
        // Chunks wait for a place (more work than the batches hold): see `many` below.
        let backlog = self.lanes.iter().any(|l| !l.pending.is_empty());
        self.round_steps = 1;
        let parts = &mut self.parts;
        // Large products are cut by columns over the compute threads, in both modes below: in
        // latency mode for the one part with work, in rounds so that a thread done with its part
        // takes halves of the others' instead of waiting for the round's end.
        if parts.len() > 1 && !self.opts.debug {
            rt.columns = Some(Columns { pool: &self.pool, min_macs: COLUMN_SPLIT_MACS });
        }
        if parts.len() == 1 || parts.iter().filter(|p| p.rows_on(on) > 0).count() <= 1 {
            // Latency mode: too few rows to share out, so the one part with work runs here.
            if let Some(columns) = &mut rt.columns {
                if self.background.is_none() {
                    // The others spin for the halves (below): smaller products are worth cutting.
                    columns.min_macs = SPINNING_SPLIT_MACS;
                }
                let rt = &rt;
                let done = AtomicBool::new(false);
                let step = || {
                    for p in parts.iter_mut() {
                        p.work(rt, models, on, steps, heavy_rows);
                    }
                    done.store(true, Ordering::Release);
                };
                if self.background.is_some() {
                    // A helper could pick up the batch encoded beside the rounds and hold the
                    // round's end for all of it.
                    self.pool.install(step);
                } else {
                    // The others wait for the step's product halves spinning instead of asleep:
                    // a one-row decoder step is a few hundred microseconds, the wake-up of a
                    // parked thread tens, paid on every product.
                    self.pool.install(|| {
                        let stepping = rayon::current_thread_index();
                        rayon::join(step, || help(&done, stepping));
                    });
                }
            } else {
                for p in parts.iter_mut() {
                    p.work(&rt, models, on, steps, heavy_rows);
                }
            }
        } else {
            // A thread done with its part spins taking the others' halves until every part is
            // done (a thread put to sleep is not there when the next half is pushed), except
            // beside a batch encoded in the background, which it could take and so hold the round
            // for (see `help`). A busy thread runs its own halves one after the other: the same
            // sums, the same output.
            let spin = self.background.is_none() && !self.opts.debug;
            // In rounds of one step over whole batches (no light request about, no turns, not on
            // a server), a part that has waited STALLED for another's step steps its own sentences
            // again (see `stalled`).
            let extra = spin && steps.max == 1 && heavy_rows == usize::MAX && self.opts.light_places == 0;
            // Such rounds, while chunks wait for a place, run up to ADMIT_EVERY_STEPS steps (the
            // steps between two admissions): the first part to end its steps (having had rows)
            // sets `stop`, and the others end theirs after the step in progress. See
            // ADMIT_EVERY_STEPS for why.
            let stop = AtomicBool::new(false);
            let many = extra && backlog;
            let round_of = if many { Steps { max: ADMIT_EVERY_STEPS, until: None, stop: Some(&stop) } } else { steps };
            let taken = AtomicUsize::new(1);
            let left = AtomicUsize::new(parts.len());
            let (rt, left, stop, taken) = (&rt, &left, &stop, &taken);
            profile::round();
            let round = profile::enabled().then(std::time::Instant::now);
            self.pool.install(|| {
                parts.par_iter_mut().for_each(|p| {
                    let t = round.map(|_| std::time::Instant::now());
                    let had = p.rows_on(on) > 0;
                    taken.fetch_max(p.work(rt, models, on, round_of, heavy_rows), Ordering::Relaxed);
                    if had {
                        stop.store(true, Ordering::Release);
                    }
                    if let Some(t) = t {
                        p.worked = t.elapsed();
                    }
                    left.fetch_sub(1, Ordering::AcqRel);
                    if spin {
                        let more = extra && p.rows_on(on) > 0;
                        let took = stalled(p, left, more, round.is_some(), |p| {
                            p.work(rt, models, on, Steps::ONE, heavy_rows);
                            p.rows_on(on) > 0
                        });
                        p.worked += took;
                    }
                })
            });
            self.round_steps = taken.load(Ordering::Relaxed);
            if let Some(round) = round {
                let wall = round.elapsed();
                profile::add(Kind::RoundEnd, parts.iter().map(|p| wall.saturating_sub(p.worked)).sum());
            }
        }
    }
}
