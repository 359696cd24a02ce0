//! The scheduler: continuous batching over every model, on THREADS compute threads.
//!
//! Each compute thread owns a *part*: its share of the live sentences of every model (slots),
//! and its own working memory. One round of the loop:
//! 1. takes in new requests (waiting only when there is no work at all);
//! 2. admits queued chunks (while others decode, every [`ADMIT_EVERY_STEPS`] decoder steps unless on a
//!    server), those of the request with the fewest pieces admitted first (fair
//!    queueing by request, see [`Lane::pop`]) and model after model in turn, into the parts with
//!    the least work, at most MAX_BATCH live per model and compute thread and, while others
//!    are decoding, a bounded number of source pieces, so that decoding sentences keep moving;
//! 3. when more models have work than there are compute threads, picks the models that step
//!    this round, two per thread (one on a server): they take turns ([`turns`]), a round each,
//!    in which each steps its sentences up to [`turns::TURN_STEPS`] times, its weights staying
//!    in the caches from step to step;
//! 4. places the round's work on the parts ([`place`]) so that every part has about as much
//!    work this round (a part that encodes a new sentence decodes fewer rows), each model's
//!    work in one part where that balance allows (each part holding some reads its weights);
//! 5. runs every part at once ([`round`]): each thread encodes the chunks it was given and runs
//!    one decoder step over each model's slots in its part (of the models whose turn it is, up to
//!    [`turns::TURN_STEPS`] steps; while chunks wait for a place, up to [`ADMIT_EVERY_STEPS`]
//!    steps, until the first part ends its steps), without barriers inside;
//! 6. hands the finished chunks to their requests (a pivoted sentence's second stage is queued
//!    here).
//!
//! On a server (places kept for light requests) a round is kept short, since a request that
//! arrives waits for the round in progress: heavy requests' chunks are encoded beside the rounds
//! ([`background`]), at most one chunk is encoded in a round, and while light requests come
//! heavy slots step a few rows a round, in turns, and the models' turns end after
//! [`round::FAIR_TURN_TIME`].
//!
//! So with enough work it is split by rows: each thread takes its share of the rows of the
//! models' steps, and its large products are cut in column halves that a thread done with its
//! own share takes instead of waiting for the round's end (on a 2-vCPU AMD EPYC Zen 3, shares
//! placed at equal costs made rounds 5-9% longer than their mean share: source lengths, caches
//! and the machine differ). With too little (after balancing, at most one part has rows: a lone
//! sentence) the step runs in latency mode instead: on the scheduler's compute thread, each
//! large product split by columns over the compute threads (`marian::layers::linear::Products`),
//! the others spinning for the step's length to take their halves at once.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};

use reseam_kernels::Kernels;

use super::jobs::{Jobs, Queued};
use super::{EngineError, EngineOptions, Request};
use crate::marian::Model;
use crate::marian::search::Buffers;
use crate::profile::{self, Kind};
use lane::Lane;

mod background;
mod lane;
mod part;
mod place;
mod pool;
mod round;
mod turns;
mod wait;

use background::Background;
use part::{Part, PartLane};
pub(crate) use pool::pool;

/// Rows a thread should have before a step is split over threads.
pub const SPLIT_ROWS_PER_THREAD: usize = 1;

/// Source pieces encoded per round while sentences are decoding: about the cost of a few decoder
/// steps, so a burst of new sentences delays the others by little.
const ENCODE_PIECES_PER_ROUND: usize = 2048;

/// Source pieces encoded per round, at all times, when places are kept for light requests (a
/// server, which many clients share): one chunk (`max_length_break` − 1 pieces and `</s>`). A
/// round cannot be cut short, so a light request that arrives waits for the round in progress
/// to end: measured on a 2-vCPU Xeon under 64 clients of 20,000 CJK characters, rounds encoding
/// 2,048 pieces took 350–420 ms (3.1 s for the first, when nothing was decoding yet and every
/// waiting chunk was encoded at once), and the light request's latency followed them; one chunk
/// per part of a round costs about 30–45 ms there.
const FAIR_ENCODE_PIECES_PER_ROUND: usize = 128;

/// While sentences are decoding (and models do not take turns, and no places are kept for light
/// requests), new sentences are admitted every this many decoder steps, not every step: encoding
/// streams the encoder's weights through the caches, and between two encodes the decoder steps
/// with its own weights and the sentences' keys and values warm. Measured on the 2-vCPU Zen 4
/// (one model, alternating, 4 runs each): `bench translate`, 64 clients, 2 threads, 883 → 989
/// posts/s, p99 139 → 123 ms; `translate --threads 2`, 3,000 lines, 3.50 → 3.20 s. From 8 to
/// 16 rounds (same machine, pairs alternated): each encode evicts the decoding sentences' keys
/// and values, and the cross-attention's time per row falls from 6.5 µs in the step after an
/// encode to 3.4 µs eight rounds later (tiny, 64 live sentences); tiny `--threads 1` 5.18–5.60
/// → 5.13–5.36 s (4 pairs, each faster), `--threads 2` median 2.99 → 2.87 s (5 of 8 pairs
/// faster), `bench translate` 885–955 → 917–980 posts/s (3 of 4), base-memory `--threads 1`
/// 8.36–9.01 → 7.83–8.62 s (3 of 3). Slots emptied meanwhile wait longer, so the steps hold
/// fewer rows; past 16 the gains were within the machine's noise. A lone sentence on an idle
/// engine is admitted at once (nothing is decoding).
///
/// On two compute threads or more, while chunks wait for a place, the steps between two
/// admissions are one round, not one round each: a round's parts end together, and ending them
/// together after every step cost more than the round's end that the profile measured (1.8–2.8%
/// of the threads' time; where the rest went is not pinned down). On a 2-vCPU AMD
/// EPYC Zen 3 (tiny, saturating, pairs alternated against rounds of one step): `translate
/// --threads 2`, 3,000 lines, 0.874 (8 of 8 pairs faster), 0.968 (8 of 10) and 0.911 (7 of 8)
/// of the time; exact 0.933 (4 of 5); `bench translate`, 64 clients, 0.860 (6 of 6) and 0.877
/// (4 of 6), its latency under load unchanged (p50 138–152 ms both ways). With a busy loop on
/// one of the two cores, 0.887 (4 of 4). With nothing waiting, rounds stay one step, so a
/// sentence done is handed back at once.
const ADMIT_EVERY_STEPS: usize = 16;

/// What encoding one source piece costs, in decoder rows (one sentence's decoder step, output
/// layer included). Measured with `RESEAM_MT_PROFILE=1` on the fixture's held-out set at
/// `--threads 1` (tiny, base-memory and base shapes alike): encoder seconds / pieces encoded
/// against decoder seconds / rows stepped come out at 0.8–1.2, so about one. A round's parts are
/// balanced on rows + pieces to encode.
const ENCODE_COST_PER_PIECE: usize = 1;

pub(crate) struct Scheduler {
    pool: Arc<rayon::ThreadPool>,
    kernels: &'static Kernels,
    opts: EngineOptions,
    lanes: Vec<Lane>,
    models: Vec<Arc<Model>>,
    parts: Vec<Part>,
    jobs: Jobs,
    queue: Vec<Queued>,
    /// The lane admission starts from, so no model is always first.
    turn: usize,
    /// Heavy requests' chunks being encoded beside the rounds (see [`background`]), and the
    /// working memory of the next such batch.
    background: Option<Background>,
    spare: Buffers,
    /// When a light request's chunk was last admitted.
    light_seen: Option<std::time::Instant>,
    /// More models have work than there are compute threads: they take turns this round (set
    /// by [`Scheduler::turns`]; [`Scheduler::admit`], which runs before it, sees the last
    /// round's).
    taking_turns: bool,
    /// Decoder steps since new sentences were last admitted (see [`ADMIT_EVERY_STEPS`]).
    steps_unadmitted: usize,
    /// The steps the last round took (the most of any part's).
    round_steps: usize,
}

impl Scheduler {
    pub fn new(pool: rayon::ThreadPool, kernels: &'static Kernels, opts: &EngineOptions, threads: usize) -> Scheduler {
        Scheduler {
            pool: Arc::new(pool),
            kernels,
            opts: opts.clone(),
            lanes: Vec::new(),
            models: Vec::new(),
            parts: (0..threads.max(1)).map(|_| Part::default()).collect(),
            jobs: Jobs::default(),
            queue: Vec::new(),
            turn: 0,
            background: None,
            spare: Buffers::default(),
            light_seen: None,
            taking_turns: false,
            steps_unadmitted: 0,
            round_steps: 1,
        }
    }

    /// Work to do: live or waiting chunks, and chunks queued since the last round (a pivoted
    /// sentence's second stage, queued when its first ends; it may be the only work left).
    fn busy(&self) -> bool {
        !self.queue.is_empty()
            || self.background.is_some()
            || self.lanes.iter().any(|l| l.live > 0 || !l.pending.is_empty())
    }

    /// [`Scheduler::run`] on a compute thread: the rounds then start and end there, without
    /// waking a compute thread at the start of each round and the scheduler's thread at its end
    /// (a one-sentence round is a few hundred microseconds; each wake-up costs tens).
    pub fn serve(mut self, rx: mpsc::Receiver<Request>) {
        let pool = self.pool.clone();
        pool.install(move || self.run(rx));
    }

    /// Runs until every handle to the engine is gone and the work in flight is done.
    fn run(&mut self, rx: mpsc::Receiver<Request>) {
        let mut open = true;
        loop {
            if !self.busy() {
                if !open {
                    return;
                }
                let _t = profile::time(Kind::Waiting);
                // Idle: wait for work, and give the working memory back after a while.
                let got = match self.opts.release_after {
                    Some(after) => rx.recv_timeout(after),
                    None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(req) => self.jobs.add(req, &mut self.queue, self.opts.max_pieces),
                    Err(RecvTimeoutError::Timeout) => {
                        self.release_memory();
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
            let t = profile::time(Kind::Scheduling);
            while open {
                match rx.try_recv() {
                    Ok(req) => self.jobs.add(req, &mut self.queue, self.opts.max_pieces),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => open = false,
                }
            }
            self.enqueue();
            self.admit();
            self.turns();
            self.balance();
            drop(t);
            self.compute();
            let _t = profile::time(Kind::Scheduling);
            self.collect();
        }
    }

    /// Puts queued chunks into their model's lane.
    fn enqueue(&mut self) {
        for (model, unit) in self.queue.drain(..) {
            let l = match self.models.iter().position(|m| Arc::ptr_eq(m, &model)) {
                Some(l) => l,
                None => {
                    self.models.push(model);
                    self.lanes.push(Lane::default());
                    for p in &mut self.parts {
                        p.lanes.push(PartLane::default());
                    }
                    self.models.len() - 1
                }
            };
            self.lanes[l].push(unit);
        }
    }

    fn admit(&mut self) {
        let decoding = self.lanes.iter().any(|l| l.live > 0);
        // Not on a server, where light requests must come in at once, nor while models take turns
        // (a round is then a turn of many steps).
        if decoding && self.opts.light_places == 0 && !self.taking_turns {
            self.steps_unadmitted += self.round_steps.max(1);
            if self.steps_unadmitted < ADMIT_EVERY_STEPS {
                return;
            }
        }
        self.steps_unadmitted = 0;
        let mut budget = if self.opts.light_places > 0 {
            FAIR_ENCODE_PIECES_PER_ROUND
        } else if decoding {
            ENCODE_PIECES_PER_ROUND
        } else {
            usize::MAX
        };
        // MAX_BATCH counts per compute thread, as a Bergamot worker's batch: every part steps its
        // own rows, so with one cap for all, two threads' products held half the rows and the
        // round's fixed costs (scheduling, its end) weighed twice as much: on a Zen 4, two
        // threads translated 1.59x as fast as one at 64 live sentences, 1.87x at 128.
        let threads = self.parts.len().max(1);
        let max_batch = if self.opts.debug { 1 } else { self.opts.max_batch.max(1) * threads };
        let light_places = self.opts.light_places * threads;
        let n = self.lanes.len();
        // On a server with two compute threads or more, heavy requests' chunks are encoded
        // beside the rounds, a batch at a time (see [`background`]), and not while a light
        // request is live: its rounds then have every thread.
        let aside = self.opts.light_places > 0 && self.parts.len() > 1 && !self.opts.debug;
        let (mut batch, mut batch_lane, mut batch_pieces) = (Vec::new(), None, 0);
        // Else while light requests' chunks are live, heavy chunks wait: encoding one (up to
        // 127 pieces, each about a decoder row) would cost a round many times the few rows it
        // steps then (see HEAVY_ROWS_BESIDE_LIGHT). Light requests have priority: heavy ones
        // move on through their live slots meanwhile, and come in again between light ones.
        let mut light_live = self.light_live();
        for k in 0..n {
            let l = (self.turn + k) % n;
            while self.lanes[l].live < max_batch {
                let room = self.lanes[l].live + light_places.min(max_batch - 1) < max_batch && !light_live;
                let in_round = budget > 0;
                let heavy = room
                    && if aside {
                        self.background.is_none()
                            && batch_lane.is_none_or(|b| b == l)
                            && batch_pieces < background::PIECES_PER_BATCH
                    } else {
                        in_round
                    };
                let Some((unit, light)) = self.lanes[l].pop(heavy, in_round) else { break };
                // A light chunk coming in this round: no heavy ones in the same round.
                if light && self.opts.light_places > 0 {
                    light_live = true;
                    self.light_seen = Some(std::time::Instant::now());
                }
                let Some(opts) = self.jobs.options(&unit.owner).cloned() else {
                    // Its request failed meanwhile.
                    continue;
                };
                self.lanes[l].live += 1;
                if aside && !light {
                    batch_pieces += unit.src.len();
                    batch_lane = Some(l);
                    batch.push((unit, opts, light));
                    continue;
                }
                budget = budget.saturating_sub(unit.src.len());
                let p = (0..self.parts.len()).min_by_key(|&p| self.parts[p].cost()).unwrap_or(0);
                self.parts[p].lanes[l].incoming.push((unit, opts, light));
            }
        }
        if let Some(l) = batch_lane {
            let buf = std::mem::take(&mut self.spare);
            let with = (self.kernels, self.opts.arithmetic);
            self.background = Some(Background::start(&self.pool, with, self.models[l].clone(), batch, buf));
        }
        if n > 0 {
            self.turn = (self.turn + 1) % n;
        }
    }

    /// Whether a light request's chunk is live or coming in (only when places are kept for
    /// them: with `light_places` 0 every request is treated alike).
    fn light_live(&self) -> bool {
        self.opts.light_places > 0
            && self
                .parts
                .iter()
                .flat_map(|p| &p.lanes)
                .any(|l| l.meta.iter().any(|m| m.light) || l.incoming.iter().any(|(_, _, light)| *light))
    }

    fn collect(&mut self) {
        for p in 0..self.parts.len() {
            let part = &mut self.parts[p];
            let mut done = std::mem::take(&mut part.done);
            let mut failed = std::mem::take(&mut part.failed);
            for (owner, out, weights) in done.drain(..) {
                self.jobs.complete(owner, out, weights, &mut self.queue);
            }
            for (owner, err) in failed.drain(..) {
                self.jobs.fail(&owner, err);
            }
            self.parts[p].done = done;
            self.parts[p].failed = failed;
        }
        // Nothing to step while a batch is encoding: wait for it a little (new requests are
        // taken in between).
        let idle = self.parts.iter().all(|p| p.rows() == 0);
        self.take_background(if idle { std::time::Duration::from_millis(1) } else { std::time::Duration::ZERO });
        self.recount();
    }

    /// Puts the batch encoded beside the rounds into the parts (the least loaded first), once
    /// it is ready, waiting at most `wait`.
    fn take_background(&mut self, wait: std::time::Duration) {
        let polled = match &self.background {
            Some(bg) => bg.poll(wait),
            None => return,
        };
        let Some((entered, buf)) = polled else { return };
        let Some(bg) = self.background.take() else { return };
        if let Some(buf) = buf {
            self.spare = buf;
        }
        // The model's lane stays while the batch is out: its chunks count as live.
        let l = self.models.iter().position(|m| Arc::ptr_eq(m, &bg.model));
        for e in entered {
            match (e, l) {
                (Ok((slot, meta)), Some(l)) => {
                    let p = (0..self.parts.len()).min_by_key(|&p| self.parts[p].cost()).unwrap_or(0);
                    self.parts[p].lanes[l].slots.push(slot);
                    self.parts[p].lanes[l].meta.push(meta);
                }
                (Ok((_, meta)), None) => {
                    self.jobs.fail(&meta.owner, EngineError::Internal("a batch's model was dropped".into()))
                }
                (Err((owner, e)), _) => self.jobs.fail(&owner, e),
            }
        }
    }

    /// Live rows per model, from the parts; a model with no work left is forgotten, so that a
    /// model a reload replaced is unmapped once its last sentence is done (the scheduler would
    /// otherwise hold every model it ever ran).
    fn recount(&mut self) {
        let aside = self.background.as_ref().map(|b| (b.model.clone(), b.units()));
        for (l, lane) in self.lanes.iter_mut().enumerate() {
            lane.live = self.parts.iter().map(|p| p.lanes[l].rows()).sum::<usize>()
                + aside.as_ref().filter(|(m, _)| Arc::ptr_eq(m, &self.models[l])).map_or(0, |(_, n)| *n);
        }
        let mut l = 0;
        while l < self.lanes.len() {
            if self.lanes[l].live > 0 || !self.lanes[l].pending.is_empty() {
                l += 1;
                continue;
            }
            self.lanes.remove(l);
            self.models.remove(l);
            for p in &mut self.parts {
                p.lanes.remove(l);
            }
        }
        self.turn = if self.lanes.is_empty() { 0 } else { self.turn % self.lanes.len() };
    }

    /// Which models step this round ([`turns::next`]): [`turns::MODELS_PER_THREAD`] per compute
    /// thread at a time (one on a server), when more models than threads have work.
    fn turns(&mut self) {
        let work: Vec<turns::Work> = (0..self.lanes.len())
            .map(|l| {
                let mut w = turns::Work::default();
                for pl in self.parts.iter().map(|p| &p.lanes[l]) {
                    w.busy |= pl.rows() > 0;
                    w.light |= pl.meta.iter().any(|m| m.light) || pl.incoming.iter().any(|(_, _, light)| *light);
                }
                w
            })
            .collect();
        let mut t: Vec<turns::Turn> = self.lanes.iter().map(|l| l.turn).collect();
        let threads = self.parts.len();
        // On a server a turn's steps end after FAIR_TURN_TIME for the whole part, so a second
        // model in a part would get one step for its turn and wait a whole cycle again.
        let per_thread = if self.opts.light_places > 0 { 1 } else { turns::MODELS_PER_THREAD };
        self.taking_turns = turns::next(&mut t, &work, threads, threads * per_thread);
        for (lane, t) in self.lanes.iter_mut().zip(t) {
            lane.turn = t;
        }
    }

    /// Places the round's work on the parts ([`place::plan`]): a model's sentences in one part
    /// where the balance allows, since each part holding some reads all its weights. Only the
    /// models whose turn it is count: the others' sentences stay where they wait.
    fn balance(&mut self) {
        if self.parts.len() < 2 {
            return;
        }
        let lanes = &self.lanes;
        let mut shares: Vec<Vec<place::Share>> = self
            .parts
            .iter()
            .map(|p| {
                p.lanes
                    .iter()
                    .zip(lanes)
                    .map(|(pl, l)| if l.turn.on { pl.share() } else { place::Share::default() })
                    .collect()
            })
            .collect();
        for m in place::plan(&mut shares, place::WEIGHTS_ROWS) {
            let (from, to) = if m.from < m.to {
                let (a, b) = self.parts.split_at_mut(m.to);
                (&mut a[m.from].lanes[m.lane], &mut b[0].lanes[m.lane])
            } else {
                let (a, b) = self.parts.split_at_mut(m.from);
                (&mut b[0].lanes[m.lane], &mut a[m.to].lanes[m.lane])
            };
            let n = m.slots.unwrap_or(from.slots.len());
            let at = from.slots.len() - n;
            to.slots.extend(from.slots.drain(at..));
            to.meta.extend(from.meta.drain(at..));
            if m.slots.is_none() {
                to.incoming.append(&mut from.incoming);
            }
        }
    }

    /// The engine went idle: every part's working memory goes back to the allocator.
    fn release_memory(&mut self) {
        for p in &mut self.parts {
            p.buf = Buffers::default();
        }
        self.spare = Buffers::default();
    }
}
