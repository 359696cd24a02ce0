//! The Cephes-style `exp_ps`/`log_ps` of `sse_mathfun.h`/`avx_mathfun.h`, one lane at a time,
//! and the reductions of Marian's log-softmax built on them: the specification of the vector
//! forms in `ymm.rs` and `zmm.rs`.
//!
//! Marian's SIMD softmax, log-softmax and sigmoid call these polynomials instead of libm, so their
//! last bits differ from `expf`/`logf`. Every step below is one SIMD instruction of the original
//! (separate multiplies and adds, no fused multiply-add: Bergamot's native build targets AVX
//! without FMA), so each lane gives exactly the original's result.

// The literals of avx_mathfun.h verbatim (as doubles), rounded to float as its `_PS256_CONST`
// arrays do.
#[allow(clippy::excessive_precision, clippy::approx_constant)]
pub(crate) mod c {
    pub const EXP_HI: f32 = 88.3762626647949f64 as f32;
    pub const EXP_LO: f32 = -88.3762626647949f64 as f32;
    pub const LOG2EF: f32 = 1.44269504088896341f64 as f32;
    pub const EXP_C1: f32 = 0.693359375f64 as f32;
    pub const EXP_C2: f32 = -2.12194440e-4f64 as f32;
    pub const EXP_P: [f32; 6] = [
        1.9875691500E-4f64 as f32,
        1.3981999507E-3f64 as f32,
        8.3334519073E-3f64 as f32,
        4.1665795894E-2f64 as f32,
        1.6666665459E-1f64 as f32,
        5.0000001201E-1f64 as f32,
    ];
    pub const SQRTHF: f32 = 0.707106781186547524f64 as f32;
    pub const LOG_P: [f32; 9] = [
        7.0376836292E-2f64 as f32,
        -1.1514610310E-1f64 as f32,
        1.1676998740E-1f64 as f32,
        -1.2420140846E-1f64 as f32,
        1.4249322787E-1f64 as f32,
        -1.6668057665E-1f64 as f32,
        2.0000714765E-1f64 as f32,
        -2.4999993993E-1f64 as f32,
        3.3333331174E-1f64 as f32,
    ];
    pub const LOG_Q1: f32 = -2.12194440e-4f64 as f32;
    pub const LOG_Q2: f32 = 0.693359375f64 as f32;
}
use c::*;

/// 1.5·2^23: adding it leaves a float's integer part, rounded to nearest, in the mantissa.
pub(crate) const ROUND: f32 = 12_582_912.0;

/// `_mm_min_ps(x, y)`: `x < y ? x : y` (the second operand when either is NaN).
#[inline]
fn min_ps(x: f32, y: f32) -> f32 {
    if x < y { x } else { y }
}

/// `_mm_max_ps(x, y)`: `x > y ? x : y`.
#[inline]
fn max_ps(x: f32, y: f32) -> f32 {
    if x > y { x } else { y }
}

/// `exp256_ps` / `exp_ps` on one lane.
#[inline]
pub fn exp_ps(x: f32) -> f32 {
    let x = min_ps(x, EXP_HI);
    let mut x = max_ps(x, EXP_LO);
    let mut fx = x * LOG2EF;
    fx += 0.5;
    // floor() without a library call or an int conversion, so the compiler vectorises it
    // (`floorf` is a call without SSE4.1, and Rust's saturating `as` stays scalar): adding and
    // removing 1.5·2^23 rounds to the nearest integer, exactly for |fx| < 2^22 (the clamp keeps
    // |fx| < 130); one step down where that rounded up.
    let t = (fx + ROUND) - ROUND;
    let tmp = if t > fx { t - 1.0 } else { t };
    let mask = if tmp > fx { 1.0 } else { 0.0 };
    fx = tmp - mask;
    let tmp = fx * EXP_C1;
    let z = fx * EXP_C2;
    x -= tmp;
    x -= z;
    let z = x * x;
    let mut y = EXP_P[0];
    for &p in &EXP_P[1..] {
        y *= x;
        y += p;
    }
    y *= z;
    y += x;
    y += 1.0;
    // cvttps2dq, +127, << 23: 2^fx as float bits (fx is an integer in [-127, 128] here). The
    // integer is read from the bits of fx + 1.5·2^23, whose mantissa holds it exactly.
    let n = ((fx + ROUND).to_bits() as i32 - ROUND.to_bits() as i32).wrapping_add(0x7f);
    let pow2n = f32::from_bits((n as u32).wrapping_shl(23));
    y * pow2n
}

/// `log256_ps` / `log_ps` on one lane (NaN for `x <= 0`).
#[inline]
pub fn log_ps(x: f32) -> f32 {
    // NaN counts as invalid too.
    let invalid = x.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater);
    let x = max_ps(x, f32::from_bits(0x0080_0000));
    let imm0 = (x.to_bits() >> 23) as i32;
    let mut x = f32::from_bits((x.to_bits() & !0x7f80_0000) | 0.5f32.to_bits());
    let mut e = (imm0 - 0x7f) as f32;
    e += 1.0;
    let mask = x < SQRTHF;
    let tmp = if mask { x } else { 0.0 };
    x -= 1.0;
    e -= if mask { 1.0 } else { 0.0 };
    x += tmp;
    let z = x * x;
    let mut y = LOG_P[0];
    for &p in &LOG_P[1..] {
        y *= x;
        y += p;
    }
    y *= x;
    y *= z;
    let tmp = e * LOG_Q1;
    y += tmp;
    let tmp = z * 0.5;
    y -= tmp;
    let tmp = e * LOG_Q2;
    x += y;
    x += tmp;
    if invalid { f32::NAN } else { x }
}

/// Marian's SIMD sigmoid: `e / (1 + e)` with `e = exp_ps(x)`.
#[inline]
pub fn sigmoid_ps(x: f32) -> f32 {
    let e = exp_ps(x);
    e / (1.0 + e)
}

/// The two reductions of Marian's `LogSoftmax` over a row of a multiple of 8 values (8 lanes
/// of `float32x8`): the row's maximum, and the sum of `exp_ps(x − max)` with lane `l` summing
/// elements `l, l + 8, ...` in order and the lane sums added left to right. The log-softmax is
/// then `(x − max) − log_ps(sum)`. Returns `(max, sum)`.
///
/// The maximum is Marian's running `m < x ? x : m` from the first element: NaN never wins
/// unless it is first.
///
/// # Panics
/// If the row is empty or its length is not a multiple of 8.
pub fn max_and_exp_sum8(row: &[f32]) -> (f32, f32) {
    assert!(!row.is_empty() && row.len().is_multiple_of(8), "max_and_exp_sum8: {} values", row.len());
    let mut max = row[0];
    for &v in &row[1..] {
        if max < v {
            max = v;
        }
    }
    let mut acc = [0f32; 8];
    for chunk in row.chunks_exact(8) {
        for (a, &v) in acc.iter_mut().zip(chunk) {
            *a += exp_ps(v - max);
        }
    }
    let mut sum = 0f32;
    for a in acc {
        sum += a;
    }
    (max, sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_to_libm_and_exact_at_known_points() {
        assert_eq!(exp_ps(0.0), 1.0);
        // Masked attention scores clamp to exp_lo and give an exact zero.
        assert_eq!(exp_ps(-99_999_999.0), 0.0);
        for i in -800..800 {
            let x = i as f32 * 0.1;
            let (a, b) = (exp_ps(x), x.exp());
            assert!(((a - b) / b).abs() < 4e-7, "exp {x}: {a} vs {b}");
        }
        for i in 1..2000 {
            let x = i as f32 * 0.37;
            let (a, b) = (log_ps(x), x.ln());
            assert!((a - b).abs() < 4e-7 * b.abs().max(1.0), "log {x}: {a} vs {b}");
        }
        assert!(log_ps(0.0).is_nan() && log_ps(-1.0).is_nan());
        assert_eq!(sigmoid_ps(0.0), 0.5);
    }

    /// Bit patterns from `avx_mathfun.h` itself (compiled with gcc for AVX without FMA, as in
    /// Bergamot's native build): input, exp256_ps, log256_ps. The emulation was compared on 160,000
    /// inputs with no difference; these keep it that way.
    #[test]
    fn equals_avx_mathfun_bit_for_bit() {
        let cases: [(u32, u32, u32); 8] = [
            (0xc0c8c2b5, 0x3af715de, 0xffffffff),
            (0x4073d00a, 0x4234864c, 0x3fab33c2),
            (0xc19dd432, 0x3139cd98, 0xffffffff),
            (0xc28ce01f, 0x0ca68d41, 0xffffffff),
            (0xc29cb0a9, 0x06fb1458, 0xffffffff),
            (0x400c1ff5, 0x410ee287, 0x3f489d53),
            (0x40783a63, 0x42416b39, 0x3fad7fe0),
            (0x400df9de, 0x41131405, 0x3f4bf976),
        ];
        for (x, e, l) in cases {
            let x = f32::from_bits(x);
            assert_eq!(exp_ps(x).to_bits(), e, "exp({x})");
            let got = log_ps(x);
            assert!(got.to_bits() == l || (got.is_nan() && f32::from_bits(l).is_nan()), "log({x})");
        }
    }

    /// The floor and the exponent bits without `floorf` and `as i32` give the same bits as with
    /// them, on every 97th float (all signs, magnitudes, NaN and infinities included).
    #[test]
    fn vectorisable_floor_equals_floorf() {
        fn with_floorf(x: f32) -> f32 {
            let x = min_ps(x, EXP_HI);
            let mut x = max_ps(x, EXP_LO);
            let mut fx = x * LOG2EF + 0.5;
            let tmp = fx.floor();
            fx = tmp - if tmp > fx { 1.0 } else { 0.0 };
            x -= fx * EXP_C1;
            x -= fx * EXP_C2;
            let z = x * x;
            let mut y = EXP_P[0];
            for &p in &EXP_P[1..] {
                y = y * x + p;
            }
            y = y * z + x + 1.0;
            y * f32::from_bits(((fx as i32).wrapping_add(0x7f) as u32).wrapping_shl(23))
        }
        for bits in (0..=u32::MAX).step_by(97).chain([0x7f80_0000, 0xff80_0000, 0x7fc0_0000]) {
            let x = f32::from_bits(bits);
            assert_eq!(exp_ps(x).to_bits(), with_floorf(x).to_bits(), "exp_ps({x:e}) [{bits:#x}]");
        }
    }

    #[test]
    fn constants_are_floats() {
        assert_eq!(EXP_HI, 88.37626f32);
        assert_eq!(EXP_C1, 0.6933594f32);
        assert_eq!(SQRTHF, std::f32::consts::FRAC_1_SQRT_2);
    }
}
