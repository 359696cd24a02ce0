//! The only place that matches on the instruction set. It reads the CPU once (`cpu.rs`, with the
//! OS permission AMX needs), fills a table of kernels per arithmetic, caches the process-wide
//! choice; its checked entry points (`calls.rs`) check every product's arguments before a kernel
//! runs.

use std::sync::OnceLock;

use crate::part::PartFn;
pub use crate::peak::PeakLoop;
use crate::{Arithmetic, cpu, scalar};

mod calls;

/// Instruction sets with a kernel of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    Reference,
    Avx2,
    Avx512bw,
    AvxVnni,
    Avx512Vnni,
    Amx,
    Neon,
}

impl Isa {
    pub const ALL: [Isa; 7] =
        [Isa::Reference, Isa::Avx2, Isa::Avx512bw, Isa::AvxVnni, Isa::Avx512Vnni, Isa::Amx, Isa::Neon];

    /// The name used by `RESEAM_MT_ISA` and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Reference => "reference",
            Isa::Avx2 => "avx2",
            Isa::Avx512bw => "avx512bw",
            Isa::AvxVnni => "avxvnni",
            Isa::Avx512Vnni => "avx512vnni",
            Isa::Amx => "amx",
            Isa::Neon => "neon",
        }
    }

    pub fn parse(s: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == s.trim().to_ascii_lowercase())
    }

    /// Whether this CPU and OS can run the ISA's kernels, and if not, why.
    pub fn usable(self) -> Result<(), String> {
        table(self).map(|_| ())
    }
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

type QuantizeFn = unsafe fn(&[f32], f32, &mut [u8]);
type FmaVvFn = unsafe fn(&mut [f32], &[f32], &[f32]);
type FmaSvFn = unsafe fn(&mut [f32], f32, &[f32]);
type BlockScoresFn = unsafe fn(&[f32], usize, &[f32], usize, &mut [f32]);
type WeightedRowsFn = unsafe fn(&[f32], usize, usize, &[f32], &mut [f32], usize, bool);
type SoftmaxFn = unsafe fn(&mut [f32], f32);
type SiluMulFn = unsafe fn(&[f32], &[f32], &mut [f32]);
type AbsmaxFn = unsafe fn(&[f32]) -> f32;
type ExpSum8Fn = unsafe fn(&[f32]) -> (f32, f32);
type RowFn = unsafe fn(&mut [f32]);
/// Rows of the given length in one buffer.
type RowsFn = unsafe fn(&mut [f32], usize);
type AddNormFn = unsafe fn(&mut [f32], &[f32], &[f32], &[f32], &mut Vec<f32>);
type ScanFn = unsafe fn(&[f32]) -> crate::scan::Top2;
type LargestFn = unsafe fn(&[f32]) -> crate::scan::Largest;
type SsruFn = unsafe fn(&mut [f32], &[f32], &[f32], &mut [f32]);
type ChainFn = unsafe fn(&scalar::Chain, &mut [f32]);
type TransposeFn = unsafe fn(&crate::transpose::Transpose, &mut [f32]);
type OneRowFn = unsafe fn(&scalar::RowScores, &mut [f32]);
type ValuesFn = unsafe fn(&scalar::RowValues, &mut [f32]);

/// One arithmetic's kernel in a table.
#[derive(Clone, Copy, Debug)]
struct Path {
    f: PartFn,
    /// Whose kernel it is (the AMX table borrows the AVX-512 VNNI saturating kernel, say).
    by: Isa,
    how: &'static str,
    peak: Option<PeakLoop>,
}

/// A table of kernels for one instruction set. Engines call products through it and never name
/// an ISA themselves.
#[derive(Clone, Copy)]
pub struct Kernels {
    isa: Isa,
    /// Which body of the ISA, when it has more than one (NEON: `i8mm` or `dotprod`).
    variant: &'static str,
    exact: Path,
    /// `None` when this ISA cannot reproduce the pair-saturating arithmetic bit for bit.
    saturating: Option<Path>,
    quantize: QuantizeFn,
    /// The fused multiply-adds of the float side ([`scalar::fma_vv`], [`scalar::fma_sv`]).
    fma: (FmaVvFn, FmaSvFn),
    /// The float attention products of the LLMs ([`scalar::block_scores`], [`scalar::weighted_rows`]).
    attn: (BlockScoresFn, WeightedRowsFn),
    act: (SoftmaxFn, SiluMulFn),
    absmax: AbsmaxFn,
    /// Marian's log-softmax reductions ([`crate::cephes::max_and_exp_sum8`]).
    exp_sum8: ExpSum8Fn,
    /// Marian's softmax of rows ([`crate::softmax::softmax_rows`]), the `expf` it uses over a
    /// slice, and which body that `expf` is (for tests and reports).
    softmax: (RowsFn, RowFn, &'static str),
    /// Marian's residual add and layer norm ([`crate::norm::add_layer_norm`]).
    norm: AddNormFn,
    /// The greedy choice's scans of a row of logits ([`crate::scan::top2`],
    /// [`crate::scan::largest`]).
    scan: (ScanFn, LargestFn),
    /// The decoder's SSRU cell over a row ([`crate::ssru::ssru_row`]).
    ssru: SsruFn,
    /// Marian's attention products over several query rows ([`scalar::chain_products`]).
    chain: ChainFn,
    /// The keys of several query rows' attention transposed ([`crate::transpose::transpose_scaled`]).
    transpose: TransposeFn,
    /// Marian's attention products for one query row in MKL's Intel orders
    /// ([`scalar::carry_scores`], [`scalar::one_row_values`]) and its AMD ones
    /// ([`scalar::zen_carry_scores`], [`scalar::zen_row_values`]).
    one_row: ((OneRowFn, ValuesFn), (OneRowFn, ValuesFn)),
    /// Row and column-block counts that split work without cutting a kernel tile.
    grain: (usize, usize),
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels").field("isa", &self.isa).field("variant", &self.variant).finish()
    }
}

/// `RESEAM_MT_ISA` named an instruction set this build or CPU cannot run.
#[derive(Clone, Debug, thiserror::Error)]
pub enum IsaError {
    #[error(
        "RESEAM_MT_ISA={0:?} is not an instruction set (one of: auto, reference, avx2, avx512bw, avxvnni, avx512vnni, amx, neon)"
    )]
    Unknown(String),
    /// The ISA, then why it cannot run here and which ones can.
    #[error("cannot use the {0} kernels: {1}")]
    Unsupported(Isa, String),
}

impl IsaError {
    /// Never the caller's fault: `RESEAM_MT_ISA` belongs to the process's environment, which a
    /// client of a server cannot change, so the command line exits 1 and a server answers 5xx.
    pub fn is_usage(&self) -> bool {
        false
    }
}

/// The specification's softmax, with libm's `expf`.
const SOFTMAX_LIBM: (RowsFn, RowFn, &str) =
    (crate::softmax::softmax_scalar, crate::softmax::expf_libm, "libm expf, one value at a time");

const REFERENCE_EXACT: Path =
    Path { f: scalar::gemm_exact_part, by: Isa::Reference, how: "scalar reference", peak: None };
const REFERENCE_SATURATING: Path =
    Path { f: scalar::gemm_saturating_part, by: Isa::Reference, how: "scalar reference", peak: None };

impl Kernels {
    /// The scalar reference: the specification, slow, runs everywhere.
    pub fn reference() -> Kernels {
        Kernels {
            isa: Isa::Reference,
            variant: "",
            exact: REFERENCE_EXACT,
            saturating: Some(REFERENCE_SATURATING),
            quantize: quantize_scalar,
            fma: (fma_vv_scalar, fma_sv_scalar),
            attn: (block_scores_scalar, weighted_rows_scalar),
            act: (scalar::softmax_scaled, scalar::silu_mul),
            absmax: scalar::absmax,
            exp_sum8: crate::cephes::max_and_exp_sum8,
            softmax: SOFTMAX_LIBM,
            norm: crate::norm::add_layer_norm_scalar,
            scan: (crate::scan::top2_scalar, crate::scan::largest_scalar),
            ssru: crate::ssru::ssru_scalar,
            chain: scalar::chain_products,
            transpose: crate::transpose::transpose_scalar,
            one_row: (
                (scalar::carry_scores, scalar::one_row_values),
                (scalar::zen_carry_scores, scalar::zen_row_values),
            ),
            grain: (1, 1),
        }
    }

    /// Instruction sets this CPU (and OS) can run, best last.
    pub fn available() -> Vec<Isa> {
        PREFERENCE.into_iter().filter(|i| i.usable().is_ok()).collect()
    }

    /// Every instruction set with whether it runs here, and if not, why (for reports and tests).
    pub fn availability() -> Vec<(Isa, Result<(), String>)> {
        PREFERENCE.into_iter().map(|i| (i, i.usable())).collect()
    }

    /// Every table this CPU can run, including the alternative bodies an ISA has (NEON without
    /// `i8mm`, AMX without its few-rows shortcut), so tests can hold each to the reference.
    pub fn candidates() -> Vec<Kernels> {
        let mut all: Vec<Kernels> = Kernels::available().into_iter().filter_map(|i| table(i).ok()).collect();
        all.extend(alternatives());
        all
    }

    /// The kernels of one instruction set, or an error saying why the CPU cannot run them.
    pub fn for_isa(isa: Isa) -> Result<Kernels, IsaError> {
        table(isa).map_err(|why| {
            let names: Vec<&str> = Kernels::available().iter().map(|i| i.name()).collect();
            IsaError::Unsupported(isa, format!("{why}; unset RESEAM_MT_ISA or pick one of: {}", names.join(", ")))
        })
    }

    /// The best kernels for this CPU, or the ones `RESEAM_MT_ISA` forces.
    pub fn detect() -> Result<Kernels, IsaError> {
        match std::env::var("RESEAM_MT_ISA") {
            Ok(name) if !name.trim().is_empty() && name.trim() != "auto" => {
                let isa = Isa::parse(&name).ok_or_else(|| IsaError::Unknown(name.clone()))?;
                Kernels::for_isa(isa)
            }
            _ => {
                let best = *Kernels::available().last().unwrap_or(&Isa::Reference);
                Kernels::for_isa(best)
            }
        }
    }

    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The ISA name plus the body in use when it has several (`neon/i8mm`).
    pub fn name(&self) -> String {
        if self.variant.is_empty() { self.isa.name().to_string() } else { format!("{}/{}", self.isa, self.variant) }
    }

    /// Whether these kernels compute `arith` themselves. When they do not, [`Kernels::gemm`] runs
    /// the reference for that arithmetic, so results never change, only speed.
    pub fn serves(&self, arith: Arithmetic) -> bool {
        match arith {
            Arithmetic::Exact => true,
            Arithmetic::Saturating => self.saturating.is_some(),
        }
    }

    fn path(&self, arith: Arithmetic) -> Path {
        match arith {
            Arithmetic::Exact => self.exact,
            Arithmetic::Saturating => self.saturating.unwrap_or(REFERENCE_SATURATING),
        }
    }

    /// Whose kernel computes `arith` in this table (the reference when no fast kernel
    /// reproduces it bit for bit).
    pub fn kernel_for(&self, arith: Arithmetic) -> Isa {
        self.path(arith).by
    }

    /// How `arith` is computed, in a few words (`"avx512vnni: vpdpbusd zmm"`).
    pub fn describe_arithmetic(&self, arith: Arithmetic) -> String {
        let p = self.path(arith);
        format!("{} kernel ({})", p.by, p.how)
    }

    /// Which kernel serves which arithmetic, one line each, for `--help` and `--version --verbose`.
    pub fn describe(&self) -> String {
        [Arithmetic::Exact, Arithmetic::Saturating]
            .map(|a| format!("{} arithmetic: {}", a.name(), self.describe_arithmetic(a)))
            .join("\n")
    }

    /// The register-only loop of the product step that computes `arith` here (`None` for the
    /// reference, which has no instruction to measure).
    pub fn peak(&self, arith: Arithmetic) -> Option<PeakLoop> {
        self.path(arith).peak
    }

    /// What Firefox computes on this CPU class: its gemmology dispatch prefers AVX-512 VNNI, then
    /// AVX-512BW, then AVX-VNNI, then AVX2 (exact, saturating, exact, saturating), and is exact on
    /// ARM64.
    pub fn firefox_arithmetic() -> Arithmetic {
        firefox_arithmetic_for(&cpu_features())
    }
}

fn quantize_scalar(src: &[f32], scale: f32, dst: &mut [u8]) {
    scalar::quantize(src, scale, dst)
}

fn fma_vv_scalar(acc: &mut [f32], a: &[f32], b: &[f32]) {
    scalar::fma_vv(acc, a, b)
}

fn fma_sv_scalar(acc: &mut [f32], s: f32, b: &[f32]) {
    scalar::fma_sv(acc, s, b)
}

fn block_scores_scalar(q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &mut [f32]) {
    scalar::block_scores(q, hd, keys, blocks, out)
}

fn weighted_rows_scalar(
    w: &[f32],
    n: usize,
    w_stride: usize,
    rows: &[f32],
    out: &mut [f32],
    d: usize,
    continued: bool,
) {
    scalar::weighted_rows(w, n, w_stride, rows, out, d, continued)
}

/// Worst to best: the process takes the last one it can run.
const PREFERENCE: [Isa; 7] =
    [Isa::Reference, Isa::Avx2, Isa::AvxVnni, Isa::Avx512bw, Isa::Avx512Vnni, Isa::Amx, Isa::Neon];

/// The table for `isa`, or why this CPU and OS cannot run it.
fn table(isa: Isa) -> Result<Kernels, String> {
    let caps = cpu::caps();
    let missing = |what: &str| Err(format!("the CPU lacks {what}"));
    match isa {
        Isa::Reference => Ok(Kernels::reference()),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 | Isa::AvxVnni | Isa::Avx512bw | Isa::Avx512Vnni | Isa::Amx => {
            use crate::{amx, avx_vnni, avx2, avx512_vnni, avx512bw, ymm, zmm};
            let avx2_sat = Path {
                f: avx2::gemm_saturating,
                by: Isa::Avx2,
                how: avx2::SATURATING,
                peak: Some(avx2::PEAK_SATURATING),
            };
            let vnni_sat = Path {
                f: avx512_vnni::gemm_saturating,
                by: Isa::Avx512Vnni,
                how: "vpmaddubsw + vpdpwssd zmm",
                peak: Some(avx512_vnni::PEAK_SATURATING),
            };
            let (exact, saturating, quantize, grain): (Path, Path, QuantizeFn, _) = match isa {
                Isa::Avx2 if caps.avx2 => (
                    Path { f: avx2::gemm_exact, by: isa, how: avx2::EXACT, peak: Some(avx2::PEAK_EXACT) },
                    avx2_sat,
                    ymm::quantize,
                    (16, 1),
                ),
                Isa::Avx2 => return missing("AVX2 and FMA"),
                Isa::AvxVnni if caps.avx_vnni => (
                    Path {
                        f: avx_vnni::gemm_exact,
                        by: isa,
                        how: "vpdpbusd ymm (VEX)",
                        peak: Some(avx_vnni::PEAK_EXACT),
                    },
                    avx2_sat,
                    ymm::quantize,
                    (16, 1),
                ),
                Isa::AvxVnni => return missing("AVX-VNNI"),
                Isa::Avx512bw if caps.avx512bw => (
                    Path { f: avx512bw::gemm_exact, by: isa, how: avx512bw::EXACT, peak: Some(avx512bw::PEAK_EXACT) },
                    Path {
                        f: avx512bw::gemm_saturating,
                        by: isa,
                        how: avx512bw::SATURATING,
                        peak: Some(avx512bw::PEAK_SATURATING),
                    },
                    zmm::quantize,
                    (16, 2),
                ),
                Isa::Avx512bw => return missing("AVX-512F/BW"),
                Isa::Avx512Vnni if caps.avx512_vnni => (
                    Path {
                        f: avx512_vnni::gemm_exact,
                        by: isa,
                        how: "vpdpbusd zmm",
                        peak: Some(avx512_vnni::PEAK_EXACT),
                    },
                    vnni_sat,
                    zmm::quantize,
                    (16, 4),
                ),
                Isa::Avx512Vnni => return missing("AVX-512 VNNI"),
                Isa::Amx => match &caps.amx {
                    Ok(()) => (
                        Path { f: amx::gemm_exact, by: isa, how: amx::EXACT, peak: Some(amx::PEAK_EXACT) },
                        vnni_sat,
                        zmm::quantize,
                        (32, 2),
                    ),
                    Err(why) => return Err(why.clone()),
                },
                // The outer arm lists exactly the x86 ISAs.
                _ => unreachable!("non-x86 ISA in the x86 arm"),
            };
            // Every x86 table needs AVX2 and FMA (see `cpu.rs`), so all take the ymm forms.
            let fma: (FmaVvFn, FmaSvFn) = (ymm::fma_vv, ymm::fma_sv);
            // A key block of 16 positions is one zmm: the AVX-512 tables do twice the work per
            // instruction in attention.
            type Float = (
                (BlockScoresFn, WeightedRowsFn),
                (SoftmaxFn, SiluMulFn),
                AbsmaxFn,
                ExpSum8Fn,
                ChainFn,
                ((OneRowFn, ValuesFn), (OneRowFn, ValuesFn)),
            );
            // glibc's expf on vector lanes where this process's libm is that expf.
            use crate::softmax::{expf_ymm, expf_zmm, softmax_ymm, softmax_zmm};
            let glibc = crate::expf::matches_libm();
            let softmax: (RowsFn, RowFn, &'static str) = match isa {
                Isa::Avx2 | Isa::AvxVnni if glibc => (softmax_ymm::<true>, expf_ymm, "glibc expf on 8 lanes (ymm)"),
                Isa::Avx2 | Isa::AvxVnni => (softmax_ymm::<false>, SOFTMAX_LIBM.1, SOFTMAX_LIBM.2),
                _ if glibc => (softmax_zmm::<true>, expf_zmm, "glibc expf on 16 lanes (zmm)"),
                _ => (softmax_zmm::<false>, SOFTMAX_LIBM.1, SOFTMAX_LIBM.2),
            };
            use crate::scan::{largest_ymm, largest_zmm, top2_ymm, top2_zmm};
            let (norm, scan, ssru): (AddNormFn, (ScanFn, LargestFn), SsruFn) = match isa {
                Isa::Avx2 | Isa::AvxVnni => {
                    (crate::norm::add_layer_norm_ymm, (top2_ymm, largest_ymm), crate::ssru::ssru_ymm)
                }
                _ => (crate::norm::add_layer_norm_zmm, (top2_zmm, largest_zmm), crate::ssru::ssru_zmm),
            };
            let (attn, act, absmax, exp_sum8, chain, one_row): Float = match isa {
                Isa::Avx2 | Isa::AvxVnni => (
                    (ymm::block_scores, ymm::weighted_rows),
                    (ymm::softmax_scaled, ymm::silu_mul),
                    ymm::absmax,
                    ymm::max_and_exp_sum8,
                    ymm::chain_products,
                    ((ymm::carry_scores, ymm::one_row_values), (ymm::zen_carry_scores, ymm::zen_row_values)),
                ),
                _ => (
                    (zmm::block_scores, zmm::weighted_rows),
                    (zmm::softmax_scaled, zmm::silu_mul),
                    zmm::absmax,
                    zmm::max_and_exp_sum8,
                    zmm::chain_products,
                    ((zmm::carry_scores, zmm::one_row_values), (zmm::zen_carry_scores, zmm::zen_row_values)),
                ),
            };
            Ok(Kernels {
                isa,
                variant: "",
                exact,
                saturating: Some(saturating),
                quantize,
                fma,
                attn,
                act,
                absmax,
                exp_sum8,
                softmax,
                norm,
                scan,
                ssru,
                chain,
                transpose: crate::transpose::transpose_ymm,
                one_row,
                grain,
            })
        }
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => {
            use crate::neon;
            if !caps.dotprod {
                return missing("the dotprod extension (ARMv8.2 SDOT)");
            }
            let (f, variant, how): (PartFn, _, _) = if caps.i8mm {
                (neon::gemm_exact_i8mm, "i8mm", "sudot: signed weights × unsigned activations")
            } else {
                (neon::gemm_exact_dotprod, "dotprod", "sdot on activations − 128, + 128 · column sums")
            };
            Ok(Kernels {
                isa,
                variant,
                exact: Path { f, by: isa, how, peak: Some(neon::PEAK_EXACT) },
                // No NEON body reproduces maddubs pair saturation; Firefox is exact on ARM64.
                saturating: None,
                quantize: neon::quantize,
                fma: (neon::fma_vv, neon::fma_sv),
                // Plain Rust compiles to NEON vectors here (NEON is part of the aarch64 baseline).
                attn: (block_scores_scalar, weighted_rows_scalar),
                act: (scalar::softmax_scaled, scalar::silu_mul),
                absmax: scalar::absmax,
                exp_sum8: crate::cephes::max_and_exp_sum8,
                softmax: SOFTMAX_LIBM,
                norm: crate::norm::add_layer_norm_scalar,
                scan: (crate::scan::top2_scalar, crate::scan::largest_scalar),
                ssru: crate::ssru::ssru_scalar,
                chain: scalar::chain_products,
                transpose: crate::transpose::transpose_scalar,
                one_row: (
                    (scalar::carry_scores, scalar::one_row_values),
                    (scalar::zen_carry_scores, scalar::zen_row_values),
                ),
                grain: (16, 1),
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        Isa::Avx2 | Isa::AvxVnni | Isa::Avx512bw | Isa::Avx512Vnni | Isa::Amx => Err("not an x86-64 build".into()),
        #[cfg(not(target_arch = "aarch64"))]
        Isa::Neon => Err("not an aarch64 build".into()),
    }
}

/// Alternative bodies of the ISAs this CPU runs (see [`Kernels::candidates`]).
fn alternatives() -> Vec<Kernels> {
    #[allow(unused_mut)]
    let mut alt = Vec::new();
    #[cfg(target_arch = "x86_64")]
    if let Ok(mut k) = table(Isa::Amx) {
        k.variant = "tiles-only";
        k.exact.f = crate::amx::gemm_exact_tiles_only;
        k.exact.how = "tdpbusd tiles for every row count";
        alt.push(k);
    }
    #[cfg(target_arch = "aarch64")]
    if let Ok(mut k) = table(Isa::Neon)
        && k.variant == "i8mm"
    {
        k.variant = "dotprod";
        k.exact.f = crate::neon::gemm_exact_dotprod;
        k.exact.how = "sdot on activations − 128, + 128 · column sums";
        alt.push(k);
    }
    alt
}

/// CPU features that decide Firefox's arithmetic.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuFeatures {
    /// An AMD CPU ("AuthenticAMD"): MKL, and so Bergamot's attention, sums in its Zen orders there.
    pub amd: bool,
    pub avx2: bool,
    pub avx512bw: bool,
    pub avx_vnni: bool,
    pub avx512_vnni: bool,
    pub aarch64: bool,
}

pub fn cpu_features() -> CpuFeatures {
    let c = cpu::caps();
    CpuFeatures {
        amd: c.amd,
        avx2: c.avx2,
        avx512bw: c.avx512bw,
        avx_vnni: c.avx_vnni,
        avx512_vnni: c.avx512_vnni,
        aarch64: cfg!(target_arch = "aarch64"),
    }
}

pub fn firefox_arithmetic_for(f: &CpuFeatures) -> Arithmetic {
    if f.aarch64 || f.avx512_vnni {
        Arithmetic::Exact
    } else if f.avx512bw {
        Arithmetic::Saturating
    } else if f.avx_vnni {
        Arithmetic::Exact
    } else {
        Arithmetic::Saturating
    }
}

static KERNELS: OnceLock<Result<Kernels, IsaError>> = OnceLock::new();

/// The process-wide kernels, chosen once (honouring `RESEAM_MT_ISA`).
pub fn kernels() -> Result<&'static Kernels, IsaError> {
    KERNELS.get_or_init(Kernels::detect).as_ref().map_err(IsaError::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_names_round_trip() {
        for isa in Isa::ALL {
            assert_eq!(Isa::parse(isa.name()), Some(isa));
            assert_eq!(Isa::parse(&format!(" {} ", isa.name().to_uppercase())), Some(isa));
        }
        assert_eq!(Isa::parse("sse9"), None);
    }

    #[test]
    fn unusable_isa_is_refused_with_the_reason() {
        for (isa, usable) in Kernels::availability() {
            match (Kernels::for_isa(isa), usable) {
                (Ok(k), Ok(())) => assert_eq!(k.isa(), isa),
                (Err(e), Err(why)) => assert!(e.to_string().contains(&why), "{e}"),
                (k, u) => panic!("{isa}: table {k:?} but usable {u:?}"),
            }
        }
        #[cfg(target_arch = "x86_64")]
        assert!(Kernels::for_isa(Isa::Neon).unwrap_err().to_string().contains("not an aarch64 build"));
    }

    #[test]
    fn firefox_arithmetic_follows_its_dispatch_order() {
        let f = |avx2, avx512bw, avx_vnni, avx512_vnni| {
            firefox_arithmetic_for(&CpuFeatures { amd: false, avx2, avx512bw, avx_vnni, avx512_vnni, aarch64: false })
        };
        assert_eq!(f(true, false, false, false), Arithmetic::Saturating);
        assert_eq!(f(true, false, true, false), Arithmetic::Exact);
        assert_eq!(f(true, true, true, false), Arithmetic::Saturating);
        assert_eq!(f(true, true, true, true), Arithmetic::Exact);
        assert_eq!(firefox_arithmetic_for(&CpuFeatures { aarch64: true, ..Default::default() }), Arithmetic::Exact);
    }

    #[test]
    fn every_table_says_who_serves_each_arithmetic() {
        for k in Kernels::candidates() {
            let d = k.describe();
            assert!(d.contains("exact arithmetic: ") && d.contains("saturating arithmetic: "), "{d}");
            if k.isa() != Isa::Reference {
                assert!(k.peak(Arithmetic::Exact).is_some(), "{}", k.name());
            }
        }
    }
}
