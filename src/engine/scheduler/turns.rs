//! Which models step in a round when more models have work than there are compute threads.
//!
//! A step reads all of its model's weights, whatever number of rows it steps. With many models
//! and few sentences each (20 directions under 64 clients: ~3 sentences per model), stepping
//! every model every round streams every model's weights from memory each round (20 tiny
//! models: ~80 MB of decoders, above any L3), for ~3 rows each, and ends every step of a few
//! hundred microseconds at the round's barrier. So models take turns: [`MODELS_PER_THREAD`] per
//! compute thread at once (each model whole on one thread where the balance allows, see
//! [`super::place`]), and a turn is one round in which each model on turn encodes the sentences
//! that came to it while it waited, in one batch, then steps them up to [`TURN_STEPS`] times
//! (until they are done), its weights staying in the caches from one step to the next and no
//! barrier between the steps. In a closed loop of clients this only moves work in time (every
//! client still has one post in flight): the same sentences are stepped in fewer, denser
//! steps, so posts per second rise and, by Little's law, latency falls with them.
//!
//! Measured on the 2-vCPU Zen 4 (`reseam bench translate`, 20 tiny directions, 3,000 posts, 64
//! clients, 2 threads, exact, runs alternated): every model one step every round 680–687
//! posts/s, p99 288–309 ms; turns of one round of up to 64 steps 798–859 posts/s, p99 155–168
//! ms (up to 32 steps 794–839, p99 218–234 ms; 128, 686 in one run). Before turns (every model
//! every round): 351–375 posts/s, p99 308–329 ms. Those were one model per thread at once; two
//! per thread: see [`MODELS_PER_THREAD`].
//!
//! The models with work that stepped least recently go next, light requests' first
//! ([`LIGHT_HEAD_START`]: a one-post request does not wait for every heavy model's turn), so
//! every model with work steps within a bounded number of rounds. With no more models with work than
//! threads there are no turns: every model steps once every round, as before, so that new
//! sentences join the running steps at once (continuous batching).
//!
//! The output does not depend on which round a sentence steps in, so turns only change speed.

use std::cmp::Reverse;

/// Decoder steps a model takes in its turn (fewer once its sentences are done): about the
/// length of the longest of a model's few sentences (the fixtures' posts average ~24 target
/// pieces), so a turn takes most of the sentences it starts to their end. Measured above.
pub(super) const TURN_STEPS: usize = 64;

/// Models on turn per compute thread. A turn runs its sentences to their end (5 to 64 steps), so
/// with one model per thread the round waits for the longer of two unlike turns, idle on the
/// other thread; with two per thread the placement pairs them (largest first to the least
/// loaded) and the threads end closer together. Measured on the 2-vCPU Zen 4 (`bench translate`,
/// 20 tiny directions, 3,000 posts, 64 clients, 2 threads, exact, three alternated runs each):
/// one per thread 906–943 posts/s, p99 130–152 ms; two 981–1,039, p99 116–130; three 944–1,024;
/// four 1,001–1,030. One thread (1,500 posts) is unchanged: 515–542 against 540–541; so are three
/// directions, whose models now all step in a round, each its turn (1,031–1,063 against
/// 1,035–1,070). Not on a server: there a round's steps end after `FAIR_TURN_TIME` for the whole
/// part, so the second model of a part got one step for its turn and then waited a whole cycle
/// again (`benches/serve/run 20 5000 64`: p99 735–790 ms against 492–527 with one per thread).
pub(super) const MODELS_PER_THREAD: usize = 2;

/// What a model with light requests' work counts as having waited already, in rounds: it goes
/// before heavy models that waited up to four rounds longer, and after those that waited longer
/// still (so heavy work is never held back for good).
const LIGHT_HEAD_START: u32 = 4;

/// A model's place in the turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Turn {
    /// It steps this round.
    pub on: bool,
    /// Rounds since it last stepped.
    age: u32,
    /// Rounds it stepped in: of models that stepped equally recently, the one that stepped
    /// less goes first.
    stepped: u64,
}

/// A model's work, as the turns see it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Work {
    /// Sentences to step or to encode.
    pub busy: bool,
    /// Some of them are light requests'.
    pub light: bool,
}

/// Updates `turns` (one per model, beside `work`) for the next round on `threads` compute
/// threads, `at_once` models stepping at a time when they take turns (the engine passes
/// [`MODELS_PER_THREAD`] × `threads`). Returns whether the models take turns this round: when
/// more models have work than there are threads. Then each model on turn takes up to
/// [`TURN_STEPS`] steps; else every model with work is on and takes one.
pub(super) fn next(turns: &mut [Turn], work: &[Work], threads: usize, at_once: usize) -> bool {
    let at_once = at_once.max(1);
    let taking = work.iter().filter(|w| w.busy).count() > threads.max(1);
    for (t, w) in turns.iter_mut().zip(work) {
        t.on = !taking && w.busy;
    }
    if taking {
        // The models with work that stepped least recently, light requests' first.
        for _ in 0..at_once {
            let next = (0..turns.len()).filter(|&l| !turns[l].on && work[l].busy).max_by_key(|&l| {
                let t = &turns[l];
                (t.age + if work[l].light { LIGHT_HEAD_START } else { 0 }, Reverse(t.stepped), Reverse(l))
            });
            let Some(l) = next else { break };
            turns[l].on = true;
        }
    }
    for t in turns.iter_mut() {
        t.age = if t.on { 0 } else { t.age.saturating_add(1) };
        t.stepped += u64::from(t.on);
    }
    taking
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(n: usize) -> Vec<Work> {
        vec![Work { busy: true, light: false }; n]
    }

    fn on(turns: &[Turn]) -> Vec<usize> {
        (0..turns.len()).filter(|&l| turns[l].on).collect()
    }

    #[test]
    fn as_many_models_as_threads_all_step_every_round_without_turns() {
        let mut t = vec![Turn::default(); 3];
        let mut w = busy(3);
        w[1].busy = false;
        for _ in 0..100 {
            assert!(!next(&mut t, &w, 2, 4));
            assert_eq!(on(&t), [0, 2]);
        }
    }

    #[test]
    fn more_models_than_threads_take_turns_several_per_thread() {
        let mut t = vec![Turn::default(); 5];
        let mut w = busy(5);
        assert!(next(&mut t, &w, 2, 4));
        assert_eq!(on(&t), [0, 1, 2, 3]);
        assert!(next(&mut t, &w, 2, 4));
        assert_eq!(on(&t), [0, 1, 2, 4], "4 waited; then the first of those that stepped alike");
        // Three models with work on two threads: turns (each runs its sentences on), all three on.
        w[0].busy = false;
        w[1].busy = false;
        assert!(next(&mut t, &w, 2, 4));
        assert_eq!(on(&t), [2, 3, 4]);
    }

    #[test]
    fn models_take_turns_in_order_of_waiting() {
        let mut t = vec![Turn::default(); 5];
        let w = busy(5);
        let seen: Vec<Vec<usize>> = (0..5)
            .map(|_| {
                assert!(next(&mut t, &w, 2, 2));
                on(&t)
            })
            .collect();
        // Then 4 waited longest, and 0 and 1 alike (the first of them goes).
        assert_eq!(seen, [vec![0, 1], vec![2, 3], vec![0, 4], vec![1, 2], vec![3, 4]]);
    }

    #[test]
    fn the_model_that_stepped_least_recently_goes_next() {
        let mut t = vec![Turn::default(); 3];
        let mut w = busy(3);
        let mut round = |w: &[Work]| {
            next(&mut t, w, 2, 2);
            on(&t)
        };
        assert_eq!(round(&w), [0, 1]);
        assert_eq!(round(&w), [0, 2], "2 waited; then 0 and 1 alike, the first of them");
        assert_eq!(round(&w), [1, 2], "1 waited; then 2, which stepped less than 0");
        assert_eq!(round(&w), [0, 1]);
        // 0 has had no work for a while; when it has some again, it goes first.
        w[0].busy = false;
        assert_eq!(round(&w), [1, 2], "no turns: every model with work steps");
        assert_eq!(round(&w), [1, 2]);
        w[0].busy = true;
        assert_eq!(round(&w), [0, 2], "0 first; then 2, which stepped less than 1");
        assert_eq!(round(&w), [0, 1], "1 waited; then 0, which stepped less than 2");
    }

    #[test]
    fn light_work_goes_first_but_heavy_work_is_not_held_back_for_good() {
        let mut t = vec![Turn::default(); 4];
        let mut w = busy(4);
        next(&mut t, &w, 1, 1);
        assert_eq!(on(&t), [0]);
        w[3].light = true;
        next(&mut t, &w, 1, 1);
        assert_eq!(on(&t), [3], "the light model's turn comes next");
        // Light work that keeps coming to 2 and 3 does not keep 1 waiting.
        w[2].light = true;
        let mut stepped = false;
        for _ in 0..8 {
            next(&mut t, &w, 1, 1);
            stepped |= t[1].on;
        }
        assert!(stepped, "a heavy model waited eight rounds");
    }

    #[test]
    fn random_rounds_never_starve_a_model() {
        // A simple generator: the test needs spread, not quality.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut worst = 0;
        for _ in 0..200 {
            let models = 1 + rand(24) as usize;
            let threads = 1 + rand(4) as usize;
            let at_once = threads * (1 + rand(3) as usize);
            let mut t = vec![Turn::default(); models];
            let mut w = busy(models);
            let mut waited = vec![0u32; models];
            // Work that comes and goes, or models that always have some.
            let toggles = rand(2) == 0;
            for _ in 0..2000 {
                for m in w.iter_mut() {
                    if toggles && rand(20) == 0 {
                        m.busy = !m.busy;
                    }
                    if rand(20) == 0 {
                        m.light = !m.light;
                    }
                }
                let turns = next(&mut t, &w, threads, at_once);
                let with_work = w.iter().filter(|w| w.busy).count();
                assert_eq!(turns, with_work > threads);
                if turns {
                    assert_eq!(on(&t).len(), at_once.min(with_work));
                }
                for l in 0..models {
                    assert!(!t[l].on || w[l].busy, "model {l} on without work");
                    waited[l] = if t[l].on || !w[l].busy { 0 } else { waited[l] + 1 };
                    // Each model ahead of it (with light work, or waiting longer) has at most a
                    // turn before it.
                    let bound = models.div_ceil(at_once) as u32 + LIGHT_HEAD_START;
                    assert!(waited[l] <= bound, "model {l} of {models}, {at_once} at once: waited {}", waited[l]);
                    worst = worst.max(waited[l]);
                }
            }
        }
        // Models did wait (the bound was tested, not idle).
        assert!(worst > 4, "{worst}");
    }
}
