//! Sinusoidal position signals, as Marian's `inits::sinusoidalPositionEmbeddings` computes them
//! (float libm calls, sines in the first half of the vector, cosines in the second).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Writes the signal of position `pos` into `out` (`out.len()` = model dimension).
pub fn sinusoid(pos: usize, out: &mut [f32]) {
    sinusoid_at(pos, &frequencies(out.len()), out);
}

/// Marian's `exp(i · −ln 10000 / (dim/2 − 1))` for `i` in `0..dim/2`, the same for every
/// position: made once per table, not once per position (512 × 128 `expf` calls at every start).
fn frequencies(dim: usize) -> Vec<f32> {
    let timescales = dim as f32 / 2.0;
    let inc = 10000f32.ln() / (timescales - 1.0);
    (0..dim / 2).map(|i| (i as f32 * -inc).exp()).collect()
}

/// [`sinusoid`] with the [`frequencies`] of `out.len()` given.
fn sinusoid_at(pos: usize, freqs: &[f32], out: &mut [f32]) {
    let half = out.len() / 2;
    for (i, f) in freqs.iter().enumerate() {
        let v = pos as f32 * f;
        out[i] = v.sin();
        out[half + i] = v.cos();
    }
}

/// Precomputed signals for the positions a sentence can reach. Every model of one dimension
/// shares one table (a server with 20 models would otherwise hold 20 copies of up to 1 MB).
pub struct PositionTable {
    dim: usize,
    table: Arc<Vec<f32>>,
}

type Tables = Mutex<HashMap<(usize, usize), Weak<Vec<f32>>>>;

impl PositionTable {
    pub fn new(dim: usize, positions: usize) -> PositionTable {
        static TABLES: OnceLock<Tables> = OnceLock::new();
        let mut tables = TABLES.get_or_init(Tables::default).lock().unwrap_or_else(|p| p.into_inner());
        if let Some(table) = tables.get(&(dim, positions)).and_then(Weak::upgrade) {
            return PositionTable { dim, table };
        }
        let mut table = vec![0f32; dim * positions];
        let freqs = frequencies(dim);
        for (p, row) in table.chunks_exact_mut(dim).enumerate() {
            sinusoid_at(p, &freqs, row);
        }
        let table = Arc::new(table);
        tables.retain(|_, t| t.strong_count() > 0);
        tables.insert((dim, positions), Arc::downgrade(&table));
        PositionTable { dim, table }
    }

    /// Adds the signal of `pos` to `x`.
    pub fn add_to(&self, pos: usize, x: &mut [f32]) {
        let start = pos * self.dim;
        if let Some(row) = self.table.get(start..start + self.dim) {
            for (a, b) in x.iter_mut().zip(row) {
                *a += *b;
            }
        } else {
            let mut row = vec![0f32; self.dim];
            sinusoid(pos, &mut row);
            for (a, b) in x.iter_mut().zip(&row) {
                *a += *b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_zero_and_beyond_the_table() {
        let mut v = vec![0f32; 8];
        sinusoid(0, &mut v);
        assert_eq!(v, vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
        let t = PositionTable::new(8, 4);
        let (mut a, mut b) = (vec![0f32; 8], vec![0f32; 8]);
        t.add_to(9, &mut a);
        sinusoid(9, &mut b);
        assert_eq!(a, b);
    }

    /// Marian's formula written out per element, as `inits::sinusoidalPositionEmbeddings` has it.
    #[test]
    fn the_table_is_marians_formula_bit_for_bit() {
        for dim in [8, 256, 512] {
            let t = PositionTable::new(dim, 512);
            let inc = 10000f32.ln() / (dim as f32 / 2.0 - 1.0);
            for pos in [0, 1, 7, 100, 511, 600] {
                let mut got = vec![0f32; dim];
                t.add_to(pos, &mut got);
                for i in 0..dim / 2 {
                    let v = pos as f32 * (i as f32 * -inc).exp();
                    assert_eq!(got[i].to_bits(), v.sin().to_bits(), "dim {dim} pos {pos} sin {i}");
                    assert_eq!(got[dim / 2 + i].to_bits(), v.cos().to_bits(), "dim {dim} pos {pos} cos {i}");
                }
            }
        }
    }

    #[test]
    fn tables_of_one_size_are_shared() {
        let (a, b, c) = (PositionTable::new(16, 32), PositionTable::new(16, 32), PositionTable::new(24, 32));
        assert!(Arc::ptr_eq(&a.table, &b.table));
        assert!(!Arc::ptr_eq(&a.table, &c.table));
        // A table made apart holds the same values.
        let (mut x, mut y) = (vec![0f32; 16], vec![0f32; 16]);
        a.add_to(5, &mut x);
        PositionTable::new(16, 33).add_to(5, &mut y);
        assert_eq!(x, y);
    }
}
