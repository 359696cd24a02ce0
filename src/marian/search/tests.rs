use super::*;

#[test]
fn limits() {
    assert_eq!(length_limit(17, 2.0), 34);
    assert_eq!(length_limit(3, 1.5), 5);
}

/// Marian's loop as it reads: a running `s > best` from the first candidate.
fn choose_reference(row: &mut [f32], path: f32, ids: Option<&[u32]>, unk: u32) -> (usize, f32) {
    log_softmax(row);
    let unk_col = match ids {
        Some(v) => v.iter().position(|&i| i == unk),
        None => Some(unk as usize),
    };
    let mut best = (usize::MAX, f32::NEG_INFINITY);
    for (j, &lp) in row.iter().enumerate() {
        if Some(j) == unk_col {
            continue;
        }
        let s = path + lp;
        if best.0 == usize::MAX || s > best.1 {
            best = (j, s);
        }
    }
    if best.0 == usize::MAX { (0, path) } else { best }
}

#[test]
fn the_vector_choice_equals_the_running_comparison() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    for case in 0..3000 {
        let n = 1 + rnd(70) as usize;
        // Few distinct values, so ties are common; some infinities and NaNs.
        let mut row: Vec<f32> = (0..n)
            .map(|_| match rnd(if case % 2 == 0 { 40 } else { 4000 }) {
                0 => f32::NAN,
                1 => f32::NEG_INFINITY,
                2 => f32::INFINITY,
                v => (v % 6) as f32 * 0.5 - 1.0,
            })
            .collect();
        let path = [0.0, -3.25, -1e7, f32::NEG_INFINITY][case % 4];
        let unk = rnd(n as u64 + 2) as u32;
        let ids: Vec<u32> = (0..n as u32).map(|i| (i * 3) % (n as u32 + 1)).collect();
        for sl in [None, Some(ids.as_slice())] {
            let mut b = row.clone();
            let want = choose_reference(&mut b, path, sl, unk);
            for k in Kernels::candidates() {
                let got = choose(&k, &row, path, sl, unk);
                assert_eq!(got.0, want.0, "{} case {case}: {row:?} path {path} unk {unk} ids {sl:?}", k.name());
                assert_eq!(got.1.to_bits(), want.1.to_bits(), "{} case {case}", k.name());
            }
        }
        row.reverse();
    }
}

/// Why the raw logits cannot always decide, even though greedy search only needs the pick:
/// the path score takes part in it. Two logits one ulp apart: on a fresh path the larger
/// wins; after a path of −100 both scores `path + ((x − max) − log_sum)` round to one float
/// (its ulp, 2^−17, dwarfs their 2^−23 difference) and the earlier column wins, as in
/// Marian. The raw argmax picks the larger either way, so [`raw_pick`] declines such a row
/// (an earlier logit within its bound of the maximum) on any path, and the sentence takes
/// the full form, replayed if its path score is not known.
#[test]
fn the_path_score_can_change_the_pick() {
    let k = Kernels::reference();
    let (a, b) = (1.0f32, f32::from_bits(1.0f32.to_bits() + 1));
    for row in [vec![a, b, -20.0], vec![a, b, -20.0, -20.0, -20.0, -20.0, -20.0, -20.0]] {
        assert_eq!(choose(&k, &row, 0.0, None, 99).0, 1, "{row:?}");
        let mut r = row.clone();
        assert_eq!(choose_reference(&mut r, -100.0, None, 99).0, 0, "{row:?}");
        assert_eq!(choose(&k, &row, -100.0, None, 99).0, 0, "{row:?}");
        for bound in [0.0, 100.0] {
            assert_eq!(raw_pick(&row, None, bound), None, "{row:?}");
        }
        // Reversed, the maximum comes first and nothing earlier can tie with it.
        let rev: Vec<f32> = row.iter().rev().copied().collect();
        let want = choose(&k, &rev, -100.0, None, 99);
        let (col, bound) = raw_pick(&rev, None, 100.0).unwrap();
        assert_eq!(col, want.0);
        assert!(want.1.abs() <= bound);
    }
}

fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    }
}

/// A row of distinct-looking logits in [−8, 8), with (now and then) copies of its maximum
/// and values a few ulps below it earlier in the row: exact ties and near-ties.
fn random_row(rnd: &mut impl FnMut(u64) -> u64, n: usize, near: bool) -> Vec<f32> {
    let mut row: Vec<f32> = (0..n).map(|_| rnd(1 << 24) as f32 / (1 << 20) as f32 - 8.0).collect();
    if near && n > 1 {
        let (top, &max) = row.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        let j = rnd(top as u64 + 1) as usize;
        if j != top {
            let below = rnd(4) as u32;
            row[j] = if below == 3 { max } else { f32::from_bits(max.to_bits() - 1 - below) };
        }
    }
    row
}

/// Where the raw logits decide, their column is [`choose`]'s and the bound holds the new
/// path score; most rows are decided, and every row whose pick the path changes is not.
#[test]
fn the_raw_pick_is_the_full_choice_where_it_decides() {
    let mut rnd = xorshift(0x2545_F491_4F6C_DD1D);
    let (mut decided, mut declined, mut changed) = (0, 0, 0);
    for case in 0..4000 {
        let n = [1usize, 2, 7, 8, 12, 64, 333, 1024][case % 8];
        let row = random_row(&mut rnd, n, case % 3 != 0);
        let path = -(rnd(400_000) as f32) / 1000.0;
        let bound = if case % 2 == 0 { path.abs() } else { path.abs() * 1.5 + 3.0 };
        let unk = rnd(n as u64 + 2) as u32;
        let ids: Vec<u32> = (0..n as u32).map(|i| (i * 7) % (n as u32 + 3)).collect();
        for sl in [None, Some(ids.as_slice())] {
            let k = Kernels::reference();
            let want = choose(&k, &row, path, sl, unk);
            let first_max = choose(&k, &row, 0.0, sl, unk).0;
            changed += usize::from(want.0 != first_max && row[want.0] != row[first_max]);
            match raw_pick(&row, unk_column(sl, unk), bound) {
                Some((col, b)) => {
                    decided += 1;
                    assert_eq!(col, want.0, "case {case}: {row:?} path {path} unk {unk} ids {sl:?}");
                    assert!(want.1.abs() <= b, "case {case}: {} > {b}", want.1);
                }
                None => declined += 1,
            }
        }
    }
    assert!(decided > 4000 && declined > 1000 && changed > 50, "{decided} {declined} {changed}");
}

/// Rows of a whole sentence through [`Choice`], replaying from the first row when it asks
/// to, give Marian's picks; the near-ties put in after long paths make it replay.
#[test]
fn a_near_tie_after_raw_steps_replays_to_marians_picks() {
    let mut rnd = xorshift(0x9E37_79B9_7F4A_7C15);
    let k = Kernels::reference();
    let (mut replays, mut changed) = (0, 0);
    for sentence in 0..300 {
        let len = 1 + rnd(80) as usize;
        let n = [8usize, 64, 100][sentence % 3];
        let tie_at = rnd(len as u64 * 2) as usize;
        let rows: Vec<Vec<f32>> = (0..len).map(|t| random_row(&mut rnd, n, t == tie_at)).collect();
        let unk = 1u32;
        let mut path = 0f32;
        let mut want = Vec::new();
        for row in &rows {
            let (col, p) = choose(&k, row, path, None, unk);
            changed += usize::from(col != choose(&k, row, 0.0, None, unk).0);
            want.push(col);
            path = p;
        }
        let mut choice = Choice::default();
        let mut got = Vec::new();
        let mut t = 0;
        while t < rows.len() {
            match choice.pick(&k, &rows[t], None, unk) {
                Some(col) => {
                    got.push(col);
                    t += 1;
                }
                None => {
                    assert!(!choice.full, "a replay does not replay");
                    replays += 1;
                    choice = Choice::replaying();
                    got.clear();
                    t = 0;
                }
            }
        }
        assert_eq!(got, want, "sentence {sentence}");
    }
    assert!(replays > 20 && changed > 5, "{replays} replays, {changed} picks changed by the path");
}

#[test]
fn choice_skips_unk_and_keeps_the_first_maximum() {
    let k = Kernels::reference();
    let row = vec![0.0, 5.0, 1.0, 1.0];
    assert_eq!(choose(&k, &row, 0.0, None, 1).0, 2);
    assert_eq!(choose(&k, &row, 0.0, Some(&[0, 7, 1, 9]), 1).0, 1);
}
