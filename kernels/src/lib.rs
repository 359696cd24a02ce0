//! int8 matrix products for reseam.
//!
//! One contract, many bodies: [`scalar`] is the specification, written as obvious Rust; every
//! instruction-set file implements the same functions with the same arguments and must equal it
//! bit for bit. [`dispatch`] is the only place that looks at the CPU. [`pack`] owns the one weight
//! layout that every kernel reads.
//!
//! A product computes, for activations `A` (`rows × k`, quantized to unsigned bytes, see
//! [`scalar::quantize`]) and weights `B` (`k × n`, signed bytes, packed as [`PackedB`]):
//!
//! ```text
//! acc[i][j] = Σ_k A[i][k] · B[k][j]               (in one of two arithmetics, see Arithmetic)
//! x         = (float)(acc[i][j] − zero_fix[j]) · scale(i, j) + bias[j]
//! x         = max(x, 0)                             (if relu)
//! out[i][j] = x, or quantize(x, next_scale)         (see Output)
//! ```
//!
//! The float steps are separate multiplies and adds (never fused), in that order, because that is
//! what Marian's `UnquantizeAndAddBiasAndWrite` callback does and results must match it exactly.
//!
//! Entry points: [`dispatch::kernels`] (the process-wide table) with [`Kernels::gemm`] and
//! [`Kernels::quantize`]; [`Kernels::gemm_region`] for one rectangle of a product, and
//! [`Kernels::gemm_columns`] for a slice of columns into an output of their width; and
//! [`Kernels::split`], which cuts a product into [`GemmTask`]s that any thread pool can run (by
//! rows for throughput, by columns for latency), so schedulers never touch raw pointers. Rows
//! of activations in [`pack::AlignedBytes`] with stride `k_padded` are read fastest.

/// Calls `$tile!(R, C)` with `R` and `C` as literals: kernels keep an `R × C` tile of
/// accumulators in registers, which needs both to be constants.
#[allow(unused_macros)]
macro_rules! by_shape {
    ($tile:ident, $r:expr, $c:expr, [$($rr:literal)*], $cs:tt) => {
        match $r {
            $( $rr => by_shape!(@c $tile, $rr, $c, $cs), )*
            // The callers clamp to the listed sizes.
            _ => unreachable!("tile rows out of range"),
        }
    };
    (@c $tile:ident, $rr:literal, $c:expr, [$($cc:literal)*]) => {
        match $c {
            $( $cc => $tile!($rr, $cc), )*
            // The callers clamp to the listed sizes.
            _ => unreachable!("tile columns out of range"),
        }
    };
}

pub mod cephes;
pub mod clock;
mod cpu;
pub mod dispatch;
pub mod expf;
pub mod norm;
pub mod pack;
mod part;
mod peak;
pub mod scalar;
pub mod scan;
pub mod softmax;
pub mod ssru;
pub mod transpose;

#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512_vnni;
#[cfg(target_arch = "x86_64")]
mod avx512bw;
#[cfg(target_arch = "x86_64")]
mod avx_vnni;
#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod marian_lanes;
#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod widen;
#[cfg(target_arch = "x86_64")]
mod ymm;
#[cfg(target_arch = "x86_64")]
mod zmm;

pub use dispatch::{Isa, Kernels};
pub use pack::PackedB;
pub use part::{GemmTask, Split};

/// How the integer products are accumulated. Both exist in the wild and give different results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    /// Each pair of adjacent products `A[2i]·B[2i] + A[2i+1]·B[2i+1]` saturates to int16 before it
    /// is added up in int32: `maddubs`, as intgemm and Firefox compute on SSSE3/AVX2/AVX-512BW.
    Saturating,
    /// Exact int32 sums: VNNI, AVX-VNNI, AMX and ARM64 dot products.
    Exact,
}

impl Arithmetic {
    pub fn name(self) -> &'static str {
        match self {
            Arithmetic::Saturating => "saturating",
            Arithmetic::Exact => "exact",
        }
    }
}

/// Quantized activations: `rows` rows of unsigned bytes (`int8 + 127`), each `stride` bytes apart.
/// Only the first `b.k_padded()` bytes of each row are read; bytes past `k` meet zero weights, so
/// their value does not matter, but they must be initialised (allocate with zeros). Rows that
/// start on 64-byte boundaries ([`pack::AlignedBytes`], stride `k_padded`) are read fastest.
#[derive(Clone, Copy, Debug)]
pub struct QuantizedA<'a> {
    pub data: &'a [u8],
    pub rows: usize,
    pub stride: usize,
}

/// The multiplier that turns an integer accumulator back into a float.
#[derive(Clone, Copy, Debug)]
pub enum Scale<'a> {
    /// One multiplier for the whole product (Marian: `1.0f / (qA · qB)`).
    Uniform(f32),
    /// One multiplier per output column (several Marian weights fused into one product).
    Columns(&'a [f32]),
    /// `rows[i] · cols[j]`, computed in that order (LLMs: a per-token activation scale times a
    /// per-output-row weight scale).
    RowsColumns { rows: &'a [f32], cols: &'a [f32] },
}

/// What happens to the accumulators after the product.
#[derive(Clone, Copy, Debug)]
pub struct Epilogue<'a> {
    /// Subtracted from the int32 accumulator per column before conversion to float. LLMs pass
    /// `127 · colsum` to cancel the +127 shift exactly; Marian passes `None` and cancels it in
    /// float through the bias (its "prepared bias").
    pub zero_fix: Option<&'a [i32]>,
    pub scale: Scale<'a>,
    /// Added after the multiply, per column.
    pub bias: Option<&'a [f32]>,
    /// `x > 0 ? x : 0`, as Marian's ReLU: NaN and −0.0 become +0.0.
    pub relu: bool,
}

/// Where results go. Row `i`, column `j` is element `i · stride + j`.
#[derive(Debug)]
pub enum Output<'a> {
    F32 {
        data: &'a mut [f32],
        stride: usize,
    },
    /// Requantized for the next product with its activation scale, as [`scalar::quantize`] does:
    /// the hidden layer of a feed-forward block never exists in float.
    U8 {
        data: &'a mut [u8],
        stride: usize,
        scale: f32,
    },
}

/// A product's arguments did not fit together. The safe entry points check before any kernel runs.
#[derive(Debug, thiserror::Error)]
pub enum ShapeError {
    #[error("activations have {rows} rows of stride {stride} but {len} bytes (need {need})")]
    Activations { rows: usize, stride: usize, len: usize, need: usize },
    #[error("output holds {len} elements, need {need} for {rows} rows of stride {stride}")]
    Output { rows: usize, stride: usize, len: usize, need: usize },
    #[error("{what} has {len} entries, the product has {need}")]
    Vector { what: &'static str, len: usize, need: usize },
    #[error("activation stride {stride} is shorter than the padded inner dimension {k_padded}")]
    Stride { stride: usize, k_padded: usize },
    #[error(
        "region rows {rows:?} × columns {cols:?} is not inside the {m}×{n} product, or its columns do not start \
         on a multiple of {block} and end on one or at {n}"
    )]
    Region { rows: std::ops::Range<usize>, cols: std::ops::Range<usize>, m: usize, n: usize, block: usize },
}

impl ShapeError {
    /// Never the caller's fault: the engines size every buffer, so a mismatch is their bug.
    pub fn is_usage(&self) -> bool {
        false
    }
}
