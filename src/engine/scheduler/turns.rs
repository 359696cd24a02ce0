//! Which models step in a round when more models have work than there are compute threads.
//!
//! A step reads all of its model's weights, whatever number of rows it steps. With many models
//! and few sentences each (20 directions under 64 clients: ~3 sentences per model), stepping
//! every model every round streams every model's weights from memory each round (20 tiny
//! models: ~80 MB of decoders, above any L3), for ~3 rows each. So models take turns: as many
//! at once as there are compute threads (each on its own thread, see [`super::place`]), each
//! for up to [`TURN_ROUNDS`] rounds. Within a turn the model's weights stay in the caches from
//! one round to the next, and the sentences that came to it while it waited are encoded in one
//! batch and step together. In a closed loop of clients this only moves work in time (every
//! client still has one post in flight): the same sentences are stepped in fewer, denser
//! steps, so posts per second rise and, by Little's law, latency falls with them.
//!
//! Measured on the 2-vCPU Zen 4 (`reseam bench translate`, 20 tiny directions, 64 clients,
//! 2 threads): every model every round 353–378 posts/s, p50 160–167 ms, p99 305–328 ms; two
//! models at a time, turns of 32 rounds 763 posts/s, p50 77 ms, p99 246 ms (of 16 rounds 687;
//! of 64, 695; one model at a time, 597–655; four at a time, 523–600).
//!
//! The models whose turn it is take it together and give it up together, when it is over or
//! when none of them has work left (one that runs out early stays on: what comes to it then
//! is taken at once, and the others' rows may be spread over its thread, see
//! [`super::place`]). Light requests' models go first
//! ([`LIGHT_HEAD_START`]), so a one-post request does not wait for every heavy model's turn;
//! otherwise the model that has waited longest goes next, so every model with work steps
//! within a bounded number of rounds. With no more models with work than threads, every model
//! steps every round, as before.
//!
//! The output does not depend on which round a sentence steps in, so turns only change speed.

/// Rounds a model keeps its turn while it has work: about a sentence's decoder steps (the
/// fixtures' posts average ~24 target pieces), so a turn takes most of the sentences it starts
/// to their end, and the first round's read of the weights from memory is shared by the rest.
pub(super) const TURN_ROUNDS: u32 = 32;

/// What a model with light requests' work counts as having waited already, in rounds: it goes
/// before heavy models that waited less than four turns, and after those that waited longer
/// (so heavy work is never held back for good).
const LIGHT_HEAD_START: u32 = 4 * TURN_ROUNDS;

/// A model's place in the turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Turn {
    /// It steps this round.
    pub on: bool,
    /// Rounds of its turn so far (while on), or rounds waited with work (while off).
    rounds: u32,
}

/// A model's work, as the turns see it.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Work {
    /// Sentences to step or to encode.
    pub busy: bool,
    /// Some of them are light requests'.
    pub light: bool,
}

/// Updates `turns` (one per model, beside `work`) for the next round, `at_once` models
/// stepping at a time.
pub(super) fn next(turns: &mut [Turn], work: &[Work], at_once: usize) {
    let at_once = at_once.max(1);
    if work.iter().filter(|w| w.busy).count() <= at_once {
        for (t, w) in turns.iter_mut().zip(work) {
            *t = Turn { on: w.busy, rounds: 0 };
        }
        return;
    }
    // The models whose turn it is take it together and give it up together: when it is over,
    // or when none of them has work left.
    let over = turns.iter().any(|t| t.on && t.rounds >= TURN_ROUNDS);
    let done = turns.iter().zip(work).all(|(t, w)| !t.on || !w.busy);
    let mut ended = vec![false; turns.len()];
    for (l, (t, w)) in turns.iter_mut().zip(work).enumerate() {
        if t.on && (over || done) {
            *t = Turn::default();
            ended[l] = w.busy;
        } else if !t.on && !w.busy {
            t.rounds = 0;
        }
    }
    let mut on = turns.iter().filter(|t| t.on).count();
    // A model whose turn just ended goes again only when no other model waits.
    for again in [false, true] {
        while on < at_once {
            let next =
                (0..turns.len()).filter(|&l| !turns[l].on && work[l].busy && ended[l] == again).max_by_key(|&l| {
                    (turns[l].rounds + if work[l].light { LIGHT_HEAD_START } else { 0 }, std::cmp::Reverse(l))
                });
            let Some(l) = next else { break };
            turns[l] = Turn { on: true, rounds: 0 };
            on += 1;
        }
    }
    for (t, w) in turns.iter_mut().zip(work) {
        if t.on || w.busy {
            t.rounds = t.rounds.saturating_add(1);
        }
    }
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
    fn as_many_models_as_threads_all_step_every_round() {
        let mut t = vec![Turn::default(); 3];
        let mut w = busy(3);
        w[1].busy = false;
        for _ in 0..100 {
            next(&mut t, &w, 2);
            assert_eq!(on(&t), [0, 2]);
        }
    }

    #[test]
    fn models_take_turns_of_turn_rounds() {
        let mut t = vec![Turn::default(); 5];
        let w = busy(5);
        let mut seen = Vec::new();
        for _ in 0..5 * TURN_ROUNDS as usize {
            next(&mut t, &w, 2);
            assert_eq!(on(&t).len(), 2);
            seen.push(on(&t));
        }
        // Turns last TURN_ROUNDS rounds, and every model has had one.
        let r = TURN_ROUNDS as usize;
        assert_eq!(seen[0], [0, 1]);
        assert_eq!(seen[r - 1], [0, 1]);
        assert_eq!(seen[r], [2, 3]);
        // 4 waited longest, then 0 and 1 alike (the first of them goes).
        assert_eq!(seen[2 * r], [0, 4]);
        for l in 0..5 {
            assert!(seen.iter().any(|s| s.contains(&l)), "model {l} never stepped");
        }
    }

    #[test]
    fn turns_end_together_once_no_model_on_turn_has_work() {
        let mut t = vec![Turn::default(); 4];
        let mut w = busy(4);
        next(&mut t, &w, 2);
        assert_eq!(on(&t), [0, 1]);
        w[0].busy = false;
        next(&mut t, &w, 2);
        assert_eq!(on(&t), [0, 1]);
        w[1].busy = false;
        next(&mut t, &w, 2);
        assert_eq!(on(&t), [2, 3]);
    }

    #[test]
    fn light_work_goes_first_but_heavy_work_is_not_held_back_for_good() {
        let mut t = vec![Turn::default(); 4];
        let mut w = busy(4);
        next(&mut t, &w, 1);
        assert_eq!(on(&t), [0]);
        w[3].light = true;
        for _ in 0..TURN_ROUNDS {
            next(&mut t, &w, 1);
        }
        assert_eq!(on(&t), [3], "the light model's turn comes next");
        // Light work that keeps coming to 2 and 3 in turns does not keep 1 waiting.
        w[2].light = true;
        let mut stepped = false;
        for _ in 0..8 * TURN_ROUNDS {
            next(&mut t, &w, 1);
            stepped |= t[1].on;
        }
        assert!(stepped, "a heavy model waited over eight turns");
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
            let at_once = 1 + rand(4) as usize;
            let mut t = vec![Turn::default(); models];
            let mut w = busy(models);
            let mut waited = vec![0u32; models];
            // Work that comes and goes, or models that always have some.
            let toggles = rand(2) == 0;
            for _ in 0..2000 {
                for m in w.iter_mut() {
                    if toggles && rand(50) == 0 {
                        m.busy = !m.busy;
                    }
                    if rand(50) == 0 {
                        m.light = !m.light;
                    }
                }
                next(&mut t, &w, at_once);
                let stepping = on(&t);
                let with_work = w.iter().filter(|w| w.busy).count();
                if with_work <= at_once {
                    assert!((0..models).all(|l| t[l].on == w[l].busy));
                } else {
                    assert_eq!(stepping.len(), at_once);
                    assert!(stepping.iter().any(|&l| w[l].busy), "no model with work steps");
                }
                for l in 0..models {
                    waited[l] = if t[l].on || !w[l].busy { 0 } else { waited[l] + 1 };
                    // Each model ahead of it (with light work, or waiting longer) has at most a
                    // turn before it.
                    let bound = TURN_ROUNDS * models.div_ceil(at_once) as u32 + LIGHT_HEAD_START;
                    assert!(waited[l] <= bound, "model {l} of {models}, {at_once} at once: waited {}", waited[l]);
                    worst = worst.max(waited[l]);
                }
            }
        }
        // Models did wait (the bound was tested, not idle).
        assert!(worst > 2 * TURN_ROUNDS, "{worst}");
    }
}
