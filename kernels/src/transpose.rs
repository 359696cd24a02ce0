//! A block of rows transposed and scaled: attention's keys laid out so that one vector holds one
//! dimension of many keys (the products over several query rows run across keys).
//!
//! [`transpose_scaled`] is the specification; every element is one rounded product, so any form
//! that computes `x · scale` once per element gives the same bits.

/// The operands of [`transpose_scaled`]: `rows × cols` of `src` (rows `lds` apart), each
/// multiplied by `scale`, into `cols` rows of `dst` `ldd` apart.
#[derive(Clone, Copy, Debug)]
pub struct Transpose<'a> {
    pub src: &'a [f32],
    pub lds: usize,
    pub rows: usize,
    pub cols: usize,
    pub scale: f32,
    pub ldd: usize,
}

/// `dst[c·ldd + r] = src[r·lds + c] · scale` for every row `r < rows` and column `c < cols`, and
/// `+0` for `rows ≤ r < ldd`: each of the `cols` rows of `dst` is written whole (so that a
/// vector form stores whole registers where `ldd` leaves room for them).
pub fn transpose_scaled(t: &Transpose, dst: &mut [f32]) {
    t.check(dst);
    let Transpose { src, lds, rows, cols, scale, ldd } = *t;
    for c in 0..cols {
        let out = &mut dst[c * ldd..(c + 1) * ldd];
        for (r, o) in out.iter_mut().enumerate() {
            *o = if r < rows { src[r * lds + c] * scale } else { 0.0 };
        }
    }
}

impl Transpose<'_> {
    /// The lengths [`transpose_scaled`] needs (every form reads and writes only inside them).
    ///
    /// # Panics
    /// If a slice is too short or a stride shorter than its row.
    pub fn check(&self, dst: &[f32]) {
        let Transpose { src, lds, rows, cols, ldd, .. } = *self;
        if cols == 0 {
            return;
        }
        assert!(ldd >= rows, "transpose_scaled: ldd {ldd} < rows {rows}");
        assert!(dst.len() >= cols * ldd, "transpose_scaled: dst holds {} of {cols}×{ldd}", dst.len());
        if rows > 0 {
            assert!(lds >= cols, "transpose_scaled: lds {lds} < cols {cols}");
            assert!(src.len() >= (rows - 1) * lds + cols, "transpose_scaled: src holds {} of {rows}×{cols}", src.len());
        }
    }
}

/// The specification as a table entry.
///
/// # Safety
/// None beyond the checked lengths (it checks them).
pub(crate) unsafe fn transpose_scalar(t: &Transpose, dst: &mut [f32]) {
    transpose_scaled(t, dst);
}

/// [`transpose_scaled`] in blocks of 8 rows × 8 columns, each transposed in ymm registers (8
/// loads, 8 multiplies, 24 shuffles, 8 stores where the scalar form makes 64 of each); a block
/// short of rows takes zeros for the missing ones and stores whole registers where `ldd` has
/// room (a masked `vmaskmovps` store is slow on AMD), else through a mask; the columns past the
/// last multiple of 8 and the padding past the blocks one by one.
///
/// # Safety
/// The CPU has AVX2; lengths as [`Transpose::check`] checks them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn transpose_ymm(t: &Transpose, dst: &mut [f32]) {
    use std::arch::x86_64::*;
    let Transpose { src, lds, rows, cols, scale, ldd } = *t;
    const ONES_THEN_ZEROS: [i32; 16] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];
    let s = _mm256_set1_ps(scale);
    let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
    let cols8 = cols / 8 * 8;
    let mut r0 = 0;
    while r0 < rows {
        let live = (rows - r0).min(8);
        // The lanes stored: whole registers while `ldd` has room, the padding zeros included.
        let room = (ldd - r0).min(8);
        // SAFETY: 8 − room ≤ 8, so eight ints are readable from there.
        let mask = unsafe { _mm256_loadu_si256(ONES_THEN_ZEROS.as_ptr().add(8 - room).cast()) };
        let mut c0 = 0;
        while c0 < cols8 {
            let row = |i: usize| {
                if i >= live {
                    return _mm256_setzero_ps();
                }
                // SAFETY: row r0 + i < rows holds columns c0 .. c0 + 8 ≤ cols (checked lengths).
                _mm256_mul_ps(unsafe { _mm256_loadu_ps(sp.add((r0 + i) * lds + c0)) }, s)
            };
            let (a0, a1, a2, a3) = (row(0), row(1), row(2), row(3));
            let (a4, a5, a6, a7) = (row(4), row(5), row(6), row(7));
            let (t0, t1) = (_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
            let (t2, t3) = (_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
            let (t4, t5) = (_mm256_unpacklo_ps(a4, a5), _mm256_unpackhi_ps(a4, a5));
            let (t6, t7) = (_mm256_unpacklo_ps(a6, a7), _mm256_unpackhi_ps(a6, a7));
            let (u0, u1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xee>(t0, t2));
            let (u2, u3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xee>(t1, t3));
            let (u4, u5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xee>(t4, t6));
            let (u6, u7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xee>(t5, t7));
            let out = [
                _mm256_permute2f128_ps::<0x20>(u0, u4),
                _mm256_permute2f128_ps::<0x20>(u1, u5),
                _mm256_permute2f128_ps::<0x20>(u2, u6),
                _mm256_permute2f128_ps::<0x20>(u3, u7),
                _mm256_permute2f128_ps::<0x31>(u0, u4),
                _mm256_permute2f128_ps::<0x31>(u1, u5),
                _mm256_permute2f128_ps::<0x31>(u2, u6),
                _mm256_permute2f128_ps::<0x31>(u3, u7),
            ];
            for (c, v) in out.into_iter().enumerate() {
                let p = (c0 + c) * ldd + r0;
                // SAFETY: row c0 + c < cols of dst holds r0 .. r0 + room ≤ ldd (checked lengths).
                unsafe {
                    if room == 8 { _mm256_storeu_ps(dp.add(p), v) } else { _mm256_maskstore_ps(dp.add(p), mask, v) }
                }
            }
            c0 += 8;
        }
        for r in r0..r0 + live {
            for c in cols8..cols {
                dst[c * ldd + r] = src[r * lds + c] * scale;
            }
        }
        r0 += 8;
    }
    // The padding the blocks did not store: past the last block, and beside the last columns.
    let stored = rows.next_multiple_of(8).min(ldd);
    for c in 0..cols {
        let from = if c < cols8 { stored } else { rows };
        dst[c * ldd + from..(c + 1) * ldd].fill(0.0);
    }
}
