//! Which compute thread (part) steps which model's sentences in a round.
//!
//! A part that holds any of a model's sentences reads that model's weights once in the round,
//! whatever number of rows it steps: every int8 weight is one multiply-add per row, so for a
//! few rows the product is bound by the stream of its weights, not by the arithmetic. With one
//! model every part reads it and the rows are only shared out evenly. With many models and
//! few sentences each (20 directions, 64 clients: ~3 sentences per model), sharing every
//! model's rows between both threads read every model twice per round: a round then costs
//! about its weights' stream twice over. So a model's rows are kept in one part unless the
//! balance of the round is worth reading its weights once more: the load of a part counts
//! [`WEIGHTS_ROWS`] per model it holds, and rows move only where that lowers the round's
//! longest part. The output does not depend on which rows share a step, so placement only
//! changes speed.

/// What reading one model's weights costs a part, in decoder rows (one sentence's step). Each
/// weight byte is one multiply-add per row, so this is the product's multiply-add rate over
/// the memory's byte rate for a stream of weights no cache holds: on the 2-vCPU Zen 4, about
/// 200 G multiply-adds per second per core (`reseam bench-gemm`) over 15–20 GB/s.
pub(super) const WEIGHTS_ROWS: usize = 12;

/// One model's work in one part: decoder rows to step, and source pieces to encode first (in
/// decoder rows, see `ENCODE_COST_PER_PIECE`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Share {
    pub slots: usize,
    pub encode: usize,
}

impl Share {
    pub fn cost(&self) -> usize {
        self.slots + self.encode
    }
}

/// A change of place: all of a model's work in part `from` (`slots: None`), or that many of its
/// decoding sentences, go to part `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Move {
    pub lane: usize,
    pub from: usize,
    pub to: usize,
    pub slots: Option<usize>,
}

/// A part's load: its rows and pieces, and [`WEIGHTS_ROWS`] for every model it holds.
fn load(part: &[Share], w: usize) -> usize {
    part.iter().filter(|s| s.cost() > 0).map(|s| s.cost() + w).sum()
}

/// The moves that place a round's work (`shares[part][lane]`, updated to the result), `w` the
/// cost of a model's weights in rows:
/// 1. every model whose work fits in a fair share of the round goes whole to one part, the
///    largest first to the least loaded part (ties: the part that holds most of it already, so
///    that work does not move without need), over the loads of the models left where they are;
/// 2. then single sentences move from the most to the least loaded part while that lowers the
///    higher of the two (those of a model the receiving part holds first: they add no weights).
pub(super) fn plan(shares: &mut [Vec<Share>], w: usize) -> Vec<Move> {
    if shares.len() < 2 {
        return Vec::new();
    }
    let before = shares.to_vec();
    let mut moves = gather(shares, w);
    spread(shares, w, &mut moves);
    // Placing whole models largest first is a heuristic: where the round was better balanced as
    // it stood, only sentences move (which never makes the longest part longer).
    let longest = |s: &[Vec<Share>]| s.iter().map(|p| load(p, w)).max().unwrap_or(0);
    if longest(shares) > longest(&before) {
        shares.clone_from_slice(&before);
        moves.clear();
        spread(shares, w, &mut moves);
    }
    moves
}

/// Step 1 of [`plan`].
fn gather(shares: &mut [Vec<Share>], w: usize) -> Vec<Move> {
    let mut moves = Vec::new();
    let parts = shares.len();
    let lanes = shares.first().map_or(0, Vec::len);
    let total = |l: usize, shares: &[Vec<Share>]| shares.iter().map(|p| p[l].cost()).sum::<usize>();
    let with_work: Vec<usize> = (0..lanes).filter(|&l| total(l, shares) > 0).collect();
    // A fair share: the round's work with every model's weights read once, over the parts. A
    // model above it is shared out anyway, so it stays where it is (moving it whole each round
    // only to split it again would be churn).
    let fair = with_work.iter().map(|&l| total(l, shares) + w).sum::<usize>().div_ceil(parts);
    let (whole, stay): (Vec<usize>, Vec<usize>) = with_work.iter().partition(|&&l| total(l, shares) <= fair);
    if whole.len() >= 2 || (whole.len() == 1 && !stay.is_empty()) {
        let mut loads: Vec<usize> = (0..parts)
            .map(|p| stay.iter().map(|&l| shares[p][l]).filter(|s| s.cost() > 0).map(|s| s.cost() + w).sum())
            .collect();
        let mut order = whole;
        order.sort_by_key(|&l| std::cmp::Reverse(total(l, shares)));
        for l in order {
            let holder = (0..parts).max_by_key(|&p| (shares[p][l].cost(), std::cmp::Reverse(p))).unwrap_or(0);
            let to = (0..parts).min_by_key(|&p| (loads[p], p != holder, p)).unwrap_or(0);
            for from in 0..parts {
                if from != to && shares[from][l].cost() > 0 {
                    let s = std::mem::take(&mut shares[from][l]);
                    shares[to][l].slots += s.slots;
                    shares[to][l].encode += s.encode;
                    moves.push(Move { lane: l, from, to, slots: None });
                }
            }
            loads[to] += total(l, shares) + w;
        }
    }
    moves
}

/// Step 2 of [`plan`].
fn spread(shares: &mut [Vec<Share>], w: usize, moves: &mut Vec<Move>) {
    let parts = shares.len();
    let lanes = shares.first().map_or(0, Vec::len);
    // Bounded: every move lowers the most loaded part below its load, and there are so many
    // sentences to move.
    let budget = shares.iter().flatten().map(|s| s.slots).sum::<usize>() * parts;
    for _ in 0..budget {
        let loads: Vec<usize> = shares.iter().map(|p| load(p, w)).collect();
        let hi = (0..parts).max_by_key(|&p| (loads[p], std::cmp::Reverse(p))).unwrap_or(0);
        let lo = (0..parts).min_by_key(|&p| (loads[p], p)).unwrap_or(0);
        if hi == lo {
            break;
        }
        // A model the receiving part holds already, else the one with the most sentences here.
        let Some(l) = (0..lanes)
            .filter(|&l| shares[hi][l].slots > 0)
            .max_by_key(|&l| (shares[lo][l].cost() > 0, shares[hi][l].slots, std::cmp::Reverse(l)))
        else {
            break;
        };
        let gives = if shares[hi][l].cost() == 1 { 1 + w } else { 1 };
        let takes = if shares[lo][l].cost() == 0 { 1 + w } else { 1 };
        if (loads[hi] - gives).max(loads[lo] + takes) >= loads[hi] {
            break;
        }
        shares[hi][l].slots -= 1;
        shares[lo][l].slots += 1;
        match moves.last_mut() {
            Some(m) if m.lane == l && m.from == hi && m.to == lo && m.slots.is_some() => {
                m.slots = m.slots.map(|n| n + 1);
            }
            _ => moves.push(Move { lane: l, from: hi, to: lo, slots: Some(1) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(rows: &[&[usize]]) -> Vec<Vec<Share>> {
        rows.iter().map(|p| p.iter().map(|&slots| Share { slots, encode: 0 }).collect()).collect()
    }

    fn slots(s: &[Vec<Share>]) -> Vec<Vec<usize>> {
        s.iter().map(|p| p.iter().map(|s| s.slots).collect()).collect()
    }

    #[test]
    fn one_model_is_shared_out_row_by_row() {
        let mut s = shares(&[&[40], &[0]]);
        plan(&mut s, 12);
        assert_eq!(slots(&s), [[20], [20]]);
        let mut s = shares(&[&[5], &[0]]);
        plan(&mut s, 12);
        assert_eq!(slots(&s), [[3], [2]]);
        // One sentence cannot be shared: it stays, and the step runs in latency mode.
        let mut s = shares(&[&[0], &[1]]);
        assert!(plan(&mut s, 12).is_empty());
    }

    #[test]
    fn many_small_models_each_go_whole_to_one_part() {
        // 20 models of 3 sentences, each split over both parts as admission left them.
        let mut s = shares(&[&[2; 20], &[1; 20]]);
        let moves = plan(&mut s, 12);
        for l in 0..20 {
            assert!(s[0][l].slots == 0 || s[1][l].slots == 0, "model {l} read by both parts: {:?}", slots(&s));
            assert_eq!(s[0][l].slots + s[1][l].slots, 3, "model {l} lost sentences");
        }
        let loads: Vec<usize> = s.iter().map(|p| load(p, 12)).collect();
        assert_eq!(loads, [150, 150]);
        assert!(moves.iter().all(|m| m.slots.is_none()));
    }

    #[test]
    fn work_moves_only_where_it_pays_for_the_weights() {
        // Two models in place, 11 rows apart: one more read of a model's weights (12 rows)
        // would cost more than the balance gains.
        let mut s = shares(&[&[30, 0], &[0, 19]]);
        assert!(plan(&mut s, 12).is_empty());
        // 40 rows apart: rows move, of one model only.
        let mut s = shares(&[&[60, 0], &[0, 20]]);
        plan(&mut s, 12);
        assert_eq!(slots(&s), [[46, 0], [14, 20]]);
        // Without a cost for the weights, the balance is to the row.
        let mut s = shares(&[&[60, 0], &[0, 20]]);
        plan(&mut s, 0);
        assert_eq!(slots(&s), [[40, 0], [20, 20]]);
    }

    #[test]
    fn a_large_model_stays_shared_and_small_ones_fill_around_it() {
        // A model of 100 sentences over both parts, three small ones split.
        let mut s = shares(&[&[50, 2, 1, 3], &[50, 2, 3, 1]]);
        let moves = plan(&mut s, 12);
        assert!(moves.iter().all(|m| m.lane != 0 || m.slots.is_some()), "the large model is not gathered: {moves:?}");
        for l in 1..4 {
            assert!(s[0][l].slots == 0 || s[1][l].slots == 0, "model {l} split: {:?}", slots(&s));
        }
        let loads: Vec<usize> = s.iter().map(|p| load(p, 12)).collect();
        assert!(loads[0].abs_diff(loads[1]) <= 1 + 12, "{loads:?}");
        let total: usize = s.iter().flatten().map(|s| s.slots).sum();
        assert_eq!(total, 112);
    }

    #[test]
    fn every_plan_keeps_the_work_and_never_raises_the_longest_part() {
        let mut seed = 0x2545f491u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..2000 {
            let (parts, lanes) = (2 + next(3), 1 + next(24));
            let mut s: Vec<Vec<Share>> = (0..parts)
                .map(|_| (0..lanes).map(|_| Share { slots: next(3) * next(20), encode: next(2) * next(60) }).collect())
                .collect();
            let before = s.clone();
            let longest = s.iter().map(|p| load(p, 12)).max();
            let moves = plan(&mut s, 12);
            for l in 0..lanes {
                let sum = |s: &[Vec<Share>]| {
                    s.iter().map(|p| (p[l].slots, p[l].encode)).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
                };
                assert_eq!(sum(&s), sum(&before), "model {l}'s work changed");
            }
            assert!(s.iter().map(|p| load(p, 12)).max() <= longest, "{before:?} -> {s:?}");
            // The moves, replayed on the input, give the result.
            let mut replay = before.clone();
            for m in &moves {
                match m.slots {
                    None => {
                        let x = std::mem::take(&mut replay[m.from][m.lane]);
                        replay[m.to][m.lane].slots += x.slots;
                        replay[m.to][m.lane].encode += x.encode;
                    }
                    Some(n) => {
                        replay[m.from][m.lane].slots -= n;
                        replay[m.to][m.lane].slots += n;
                    }
                }
            }
            assert_eq!(replay, s);
        }
    }
}
