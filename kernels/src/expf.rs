//! glibc's `expf` on any number of lanes, bit for bit.
//!
//! Marian's softmax calls libm's `expf` on rows whose length is not a multiple of 4 (most rows of
//! attention: a source has any number of tokens). glibc (2.27 on) computes it as a fixed sequence
//! of double operations and a 32-entry table of 2^(i/32) (`sysdeps/ieee754/flt-32/e_expf.c`, from
//! ARM's optimized-routines), so the same sequence on vector lanes gives the same bits. On x86-64
//! an ifunc runs `__expf_fma` (that file compiled with `-mfma -mavx2`) on every CPU with FMA and
//! AVX2, which is every CPU our vector tables run on; [`lane`] is that body as read from the
//! machine code of Debian 12's libm 2.36: the compiler fused `InvLn2N·x + SHIFT`, `InvLn2N·x − kd`
//! and the three polynomial steps into FMAs, which `mul_add` states here.
//!
//! [`lane`] is plain code with no branch, so a loop of it vectorizes where it is compiled with
//! AVX2 or AVX-512 (the table read becomes a gather); Rust never fuses operations on its own, so
//! every build of it computes the same bits. [`matches_libm`] checks at run time that this
//! process's libm is the one described here before a table uses it (another libc, or a glibc
//! built otherwise, keeps libm's `expf`).

use std::sync::OnceLock;

/// `__exp2f_data.tab`: `tab[i] = bits(2^(i/32)) − (i << 47)`, so adding `k << 47` for `k ≡ i`
/// (mod 32) gives the bits of 2^(k/32).
const TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];
/// `invln2_scaled`: 32/ln 2.
const INV_LN2_N: f64 = f64::from_bits(0x40471547652b82fe);
/// `shift`, 1.5·2^52: adding it leaves round-to-nearest(z) in the low mantissa bits.
const SHIFT: f64 = f64::from_bits(0x4338000000000000);
/// `poly_scaled`: the cubic of 2^(r/32) − 1, highest power first.
const C: [f64; 3] =
    [f64::from_bits(0x3ebc6af84b912394), f64::from_bits(0x3f2ebfce50fac4f3), f64::from_bits(0x3f962e42ff0c52d6)];
/// Above this, `__math_oflowf`: +∞ (0x1.62e42ep6, ln 2^128).
const OVERFLOW: f32 = f32::from_bits(0x42b17217);
/// Below this, `__math_uflowf`: +0 (−0x1.9fe368p6, ln 2^−150).
const UNDERFLOW: f32 = f32::from_bits(0xc2cff1b4);
/// Below this (and not below [`UNDERFLOW`]), `__math_may_uflowf`: 0x1.4p-75f², which rounds
/// to the least subnormal (−0x1.9d1d9ep6, ln 2^−149).
const MAY_UNDERFLOW: f32 = f32::from_bits(0xc2ce8ecf);

/// glibc's `expf(x)` (its FMA build), one lane, as a branch-free sequence.
#[inline(always)]
pub fn lane(x: f32) -> f32 {
    let main = main_path(x);
    // glibc branches to these when |x| ≥ 88 or x is NaN; the main result is right in between.
    let abstop = (x.to_bits() >> 20) & 0x7ff;
    if x.to_bits() == f32::NEG_INFINITY.to_bits() {
        0.0
    } else if abstop >= 0x7f8 {
        x + x
    } else if x > OVERFLOW {
        f32::INFINITY
    } else if x < UNDERFLOW {
        0.0
    } else if x < MAY_UNDERFLOW {
        f32::from_bits(1)
    } else {
        main
    }
}

/// Below this, `|x|`'s bits (88.0) take glibc's main path alone (its `abstop < top12(88)`).
const MAIN_BELOW: u32 = 0x42b0_0000;

/// [`lane`] on 16 values: where none of them is a special case (`|x| < 88`, glibc's own test,
/// below every threshold of [`lane`]), the main path alone, which is then [`lane`]'s result;
/// else [`lane`] on each. The softmax's exponentials are of `x − max` over a row of attention
/// scores, which lie less than 88 below their row's largest but in odd rows, so the five
/// selections of [`lane`] per value (a third of its instructions) become one test per 16.
#[inline(always)]
pub fn lanes16(x: &mut [f32; 16]) {
    let mut special = false;
    let mut y = [0f32; 16];
    for (y, &x) in y.iter_mut().zip(x.iter()) {
        *y = main_path(x);
        special |= (x.to_bits() & 0x7fff_ffff) >= MAIN_BELOW;
    }
    if special {
        for v in x.iter_mut() {
            *v = lane(*v);
        }
    } else {
        *x = y;
    }
}

/// glibc's main path: right for every `x` but the special cases of [`lane`].
#[inline(always)]
fn main_path(x: f32) -> f32 {
    let xd = x as f64;
    // x·N/ln2 = k + r with k an integer and |r| ≤ 1/2.
    let z = INV_LN2_N.mul_add(xd, SHIFT);
    let ki = z.to_bits();
    let kd = z - SHIFT;
    let r = INV_LN2_N.mul_add(xd, -kd);
    // 2^(k/32) from the table and k's bits.
    let s = f64::from_bits(TAB[(ki & 31) as usize].wrapping_add(ki << 47));
    let p = C[0].mul_add(r, C[1]);
    let r2 = r * r;
    let y = C[2].mul_add(r, 1.0);
    (p.mul_add(r2, y) * s) as f32
}

/// [`lane`] over a slice, in place: [`lanes16`] on each 16 values, [`lane`] on the rest (simple
/// loops, so they vectorize at the width they are compiled for).
#[inline(always)]
pub fn in_place(x: &mut [f32]) {
    let mut chunks = x.chunks_exact_mut(16);
    for c in &mut chunks {
        lanes16(c.try_into().expect("16 values"));
    }
    for v in chunks.into_remainder() {
        *v = lane(*v);
    }
}

/// Whether this process's libm `expf` is [`lane`]: compared on every special value, on the
/// values that tell glibc's FMA build from its other one, and on a spread of ordinary ones
/// (every 16,411th float, about 260,000), once per process. Tables use [`lane`] in place of
/// libm only when it is.
pub fn matches_libm() -> bool {
    static SAME: OnceLock<bool> = OnceLock::new();
    *SAME.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has FMA (checked on the line above).
            return unsafe { compare_fma() };
        }
        compare()
    })
}

/// [`compare`] compiled with FMA: there `mul_add` is one instruction; in baseline code it is a
/// call to a software fma (the same bits), which made the comparison about a quarter of a
/// one-line `translate`'s start-up.
///
/// # Safety
/// The CPU has FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn compare_fma() -> bool {
    compare()
}

/// The comparison of [`matches_libm`].
#[inline(always)]
fn compare() -> bool {
    let edges = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        OVERFLOW,
        UNDERFLOW,
        MAY_UNDERFLOW,
        88.0,
        -88.0,
        // The only floats in [−88, 88.72] where glibc's build without FMA (`__expf_sse2`)
        // gives other bits than this one (found by trying every float): without them the
        // spread below would take one for the other.
        f32::from_bits(0xc27c65d9),
        f32::from_bits(0x4202422f),
    ];
    let same = |x: f32| {
        let (a, b) = (lane(x), x.exp());
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    };
    // Plain loops, not iterator adapters: a generic adapter's body is compiled apart, without
    // the caller's FMA.
    for x in edges {
        if !same(x) {
            return false;
        }
    }
    for i in 0..=u32::MAX / 16411 {
        if !same(f32::from_bits(i.wrapping_mul(16411))) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_two_to_the_i_over_32() {
        for (i, &t) in TAB.iter().enumerate() {
            let v = f64::from_bits(t + ((i as u64) << 47));
            assert!((v - (i as f64 / 32.0).exp2()).abs() <= f64::EPSILON, "entry {i}: {v}");
        }
    }

    #[test]
    fn edges() {
        assert_eq!(lane(0.0), 1.0);
        assert_eq!(lane(f32::NEG_INFINITY), 0.0);
        assert_eq!(lane(f32::INFINITY), f32::INFINITY);
        assert!(lane(f32::NAN).is_nan());
        assert_eq!(lane(-150.0), 0.0);
        assert_eq!(lane(-103.5), f32::from_bits(1));
        assert_eq!(lane(100.0), f32::INFINITY);
    }
}
