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
            assert_eq!(raw_pick(&k, &row, None, bound), None, "{row:?}");
        }
        // Reversed, the maximum comes first and nothing earlier can tie with it.
        let rev: Vec<f32> = row.iter().rev().copied().collect();
        let want = choose(&k, &rev, -100.0, None, 99);
        let (col, bound) = raw_pick(&k, &rev, None, 100.0).unwrap();
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
            let raw = raw_pick(&k, &row, unk_column(sl, unk), bound);
            match raw {
                Some((col, b)) => {
                    decided += 1;
                    assert_eq!(col, want.0, "case {case}: {row:?} path {path} unk {unk} ids {sl:?}");
                    assert!(want.1.abs() <= b, "case {case}: {} > {b}", want.1);
                }
                None => declined += 1,
            }
            for k in Kernels::candidates() {
                let got = raw_pick(&k, &row, unk_column(sl, unk), bound);
                assert_eq!(got.map(|(c, b)| (c, b.to_bits())), raw.map(|(c, b)| (c, b.to_bits())), "{}", k.name());
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
        let (got, r) = picks_with_replays(&rows, |choice, row| choice.pick(&k, row, None, unk));
        replays += r;
        assert_eq!(got, want, "sentence {sentence}");
    }
    assert!(replays > 20 && changed > 5, "{replays} replays, {changed} picks changed by the path");
}

/// The picks of a sentence's rows through one [`Choice`], `pick` making each, starting again
/// from the first row with [`Choice::replaying`] when it gives none; and how many replays.
fn picks_with_replays(
    rows: &[Vec<f32>],
    mut pick: impl FnMut(&mut Choice, &[f32]) -> Option<usize>,
) -> (Vec<usize>, usize) {
    let (mut choice, mut got, mut replays, mut t) = (Choice::default(), Vec::new(), 0, 0);
    while t < rows.len() {
        match pick(&mut choice, &rows[t]) {
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
    (got, replays)
}

#[test]
fn choice_skips_unk_and_keeps_the_first_maximum() {
    let k = Kernels::reference();
    let row = vec![0.0, 5.0, 1.0, 1.0];
    assert_eq!(choose(&k, &row, 0.0, None, 1).0, 2);
    assert_eq!(choose(&k, &row, 0.0, Some(&[0, 7, 1, 9]), 1).0, 1);
}

/// [`raw_pick`] as it was before the scan became a kernel: the maximum and a finiteness probe
/// in one pass, then the first candidate within the bound of it in another. The one-pass form
/// must decide the same rows the same way, with the same bound.
fn raw_pick_two_passes(row: &[f32], unk_col: Option<usize>, path_bound: f32) -> Option<(usize, f32)> {
    const SCALE: f32 = 1.0 / (1u32 << 20) as f32;
    let max_and_probe = |xs: &[f32]| {
        let mut m = f32::NEG_INFINITY;
        let mut z = 0f32;
        for &x in xs {
            m = if x > m { x } else { m };
            z += x * 0.0;
        }
        (m, z)
    };
    let (before, after, unk_x) = match unk_col {
        Some(u) if u < row.len() => (&row[..u], &row[u + 1..], Some(row[u])),
        _ => (row, &row[..0], None),
    };
    let (mb, zb) = max_and_probe(before);
    let (ma, za) = max_and_probe(after);
    let m = if ma > mb { ma } else { mb };
    if !(zb == 0.0 && za == 0.0 && m.is_finite() && unk_x.is_none_or(f32::is_finite)) {
        return None;
    }
    let max = unk_x.map_or(m, |x| x.max(m));
    let lhat = (row.len() as f32).ln() + 1.0;
    let b = path_bound + lhat + 2.0 * (max.abs() + m.abs()) + 1.0;
    if b.is_nan() || b > 65536.0 || row.len() > 1_000_000 {
        return None;
    }
    let t = m - b * SCALE;
    let col = match before.iter().position(|&x| x >= t) {
        Some(j) => j,
        None => before.len() + 1 + after.iter().position(|&x| x >= t)?,
    };
    if row[col] != m {
        return None;
    }
    Some((col, (path_bound + (max - m) + lhat) * (1.0 + SCALE)))
}

/// The one-pass raw pick on every table equals the two-pass form bit for bit: rows with ties
/// and near-ties of the maximum before and after it, `<unk>` anywhere (or holding the
/// maximum), zeros of both signs, NaN and infinities, large logits past the bound's limit.
#[test]
fn the_one_pass_raw_pick_equals_the_two_pass_form() {
    let mut rnd = xorshift(0x51_7CC1_B727_220A);
    let (mut decided, mut searched) = (0, 0);
    for case in 0..3000 {
        let n = [1usize, 2, 5, 15, 16, 17, 31, 33, 64, 100, 1000, 4000][case % 12];
        let mut row = random_row(&mut rnd, n, case % 2 == 0);
        match rnd(12) {
            0 => row[rnd(n as u64) as usize] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][rnd(3) as usize],
            1 => row[rnd(n as u64) as usize] = if rnd(2) == 0 { 0.0 } else { -0.0 },
            2 => row.iter_mut().for_each(|x| *x *= 3000.0),
            3 => {
                // A second copy of the maximum, after it.
                let top = (0..n).fold(0, |b, i| if row[i] > row[b] { i } else { b });
                let j = top + rnd((n - top) as u64) as usize;
                row[j] = row[top];
            }
            _ => {}
        }
        let unk = [None, Some(0), Some(1), Some(rnd(n as u64 + 1) as usize)][case % 4];
        let bound = [0.0, 3.5, 700.0, 70000.0][rnd(4) as usize];
        let want = raw_pick_two_passes(&row, unk, bound);
        decided += usize::from(want.is_some());
        for k in Kernels::candidates() {
            let top = |xs: &[f32]| k.top2(xs);
            let got = raw_pick(&k, &row, unk, bound);
            assert_eq!(
                got.map(|(c, b)| (c, b.to_bits())),
                want.map(|(c, b)| (c, b.to_bits())),
                "{} case {case}: {row:?} unk {unk:?} bound {bound}",
                k.name()
            );
            let (b, a) = match unk {
                Some(u) if u < n => (top(&row[..u]), top(&row[u + 1..])),
                _ => (top(&row), top(&[])),
            };
            searched += usize::from(b.second == b.max || a.second == a.max);
        }
    }
    assert!(decided > 1000 && searched > 100, "{decided} decided, {searched} ties searched");
}

/// A sentence's rows chosen from their tops alone where those decide (gathered in pieces of
/// random widths, as the output layer's slices give them), else from the whole row, replaying
/// when asked: Marian's picks, with most rows decided by the tops and near-ties sent on.
#[test]
fn picks_from_the_tops_are_marians_picks() {
    let mut rnd = xorshift(0xD1B5_4A32_D192_ED03);
    let k = Kernels::reference();
    let (mut from_tops, mut from_rows, mut replays) = (0, 0, 0);
    for sentence in 0..300 {
        let len = 1 + rnd(60) as usize;
        let n = [8usize, 64, 100, 700][sentence % 4];
        let tie_at = rnd(len as u64 * 2) as usize;
        let rows: Vec<Vec<f32>> = (0..len).map(|t| random_row(&mut rnd, n, t == tie_at)).collect();
        let unk = [0u32, 1, 63, n as u32 - 1, n as u32 + 2][sentence % 5];
        let unk_col = unk_column(None, unk);
        let mut path = 0f32;
        let mut want = Vec::new();
        for row in &rows {
            let (col, p) = choose(&k, row, path, None, unk);
            want.push(col);
            path = p;
        }
        let (got, r) = picks_with_replays(&rows, |choice, row| {
            let mut tops = RowTops::default();
            let mut c0 = 0;
            while c0 < n {
                let c1 = (c0 + 1 + rnd(300) as usize).min(n);
                tops.take(&k, &row[c0..c1], c0, unk_col.filter(|&u| u < n));
                c0 = c1;
            }
            if let Some(col) = choice.pick_tops(&tops, n, unk_col) {
                from_tops += 1;
                return Some(col);
            }
            from_rows += 1;
            choice.pick(&k, row, None, unk)
        });
        replays += r;
        assert_eq!(got, want, "sentence {sentence} of {n} columns, unk {unk}");
    }
    assert!(from_tops > 5000 && from_rows > 100 && replays > 20, "{from_tops} {from_rows} {replays}");
}
