//! The only place that looks at the CPU. It picks a kernel per arithmetic once, caches the choice,
//! and checks every product's arguments before a kernel runs.

use std::sync::OnceLock;

use crate::{Arithmetic, Epilogue, Output, PackedB, QuantizedA, Scale, ShapeError, scalar};

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
}

impl std::fmt::Display for Isa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

type GemmFn = fn(&QuantizedA, &PackedB, &Epilogue, &mut Output);
type QuantizeFn = fn(&[f32], f32, &mut [u8]);

/// A table of kernels for one instruction set. Engines call products through it and never name
/// an ISA themselves.
#[derive(Clone, Copy)]
pub struct Kernels {
    isa: Isa,
    exact: GemmFn,
    /// `None` when this ISA cannot reproduce the pair-saturating arithmetic bit for bit.
    saturating: Option<GemmFn>,
    quantize: QuantizeFn,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernels").field("isa", &self.isa).finish()
    }
}

/// `RESEAM_MT_ISA` named an instruction set this build or CPU cannot run.
#[derive(Debug, thiserror::Error)]
pub enum IsaError {
    #[error(
        "RESEAM_MT_ISA={0:?} is not an instruction set (one of: reference, avx2, avx512bw, avxvnni, avx512vnni, amx, neon)"
    )]
    Unknown(String),
    #[error("this CPU cannot run the {0} kernels; unset RESEAM_MT_ISA or pick one of: {1}")]
    Unsupported(Isa, String),
}

impl Kernels {
    /// The scalar reference: the specification, slow, runs everywhere.
    pub fn reference() -> Kernels {
        Kernels {
            isa: Isa::Reference,
            exact: scalar::gemm_exact,
            saturating: Some(scalar::gemm_saturating),
            quantize: scalar::quantize,
        }
    }

    /// Instruction sets this CPU (and OS) can run, best last.
    pub fn available() -> Vec<Isa> {
        vec![Isa::Reference]
    }

    /// The kernels of one instruction set, or an error if the CPU lacks it.
    pub fn for_isa(isa: Isa) -> Result<Kernels, IsaError> {
        match isa {
            Isa::Reference => Ok(Kernels::reference()),
            other => Err(IsaError::Unsupported(
                other,
                Kernels::available().iter().map(|i| i.name()).collect::<Vec<_>>().join(", "),
            )),
        }
    }

    /// The best kernels for this CPU, or the ones `RESEAM_MT_ISA` forces.
    pub fn detect() -> Result<Kernels, IsaError> {
        match std::env::var("RESEAM_MT_ISA") {
            Ok(name) if !name.trim().is_empty() => {
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

    /// Whether these kernels compute `arith` themselves. When they do not, [`Kernels::gemm`] runs
    /// the reference for that arithmetic, so results never change, only speed.
    pub fn serves(&self, arith: Arithmetic) -> bool {
        match arith {
            Arithmetic::Exact => true,
            Arithmetic::Saturating => self.saturating.is_some(),
        }
    }

    /// What Firefox computes on this CPU class: its gemmology dispatch prefers AVX-512 VNNI, then
    /// AVX-512BW, then AVX-VNNI, then AVX2 (exact, saturating, exact, saturating), and is exact on
    /// ARM64.
    pub fn firefox_arithmetic() -> Arithmetic {
        firefox_arithmetic_for(&cpu_features())
    }

    /// Quantizes activations (see [`scalar::quantize`]).
    pub fn quantize(&self, src: &[f32], scale: f32, dst: &mut [u8]) {
        (self.quantize)(src, scale, dst)
    }

    /// `out = epilogue(a · b)` in the given arithmetic, after checking every length.
    pub fn gemm(
        &self,
        arith: Arithmetic,
        a: &QuantizedA,
        b: &PackedB,
        ep: &Epilogue,
        out: &mut Output,
    ) -> Result<(), ShapeError> {
        check(a, b, ep, out)?;
        let f = match arith {
            Arithmetic::Exact => self.exact,
            Arithmetic::Saturating => self.saturating.unwrap_or(scalar::gemm_saturating),
        };
        f(a, b, ep, out);
        Ok(())
    }
}

/// CPU features that decide Firefox's arithmetic.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuFeatures {
    pub avx2: bool,
    pub avx512bw: bool,
    pub avx_vnni: bool,
    pub avx512_vnni: bool,
    pub aarch64: bool,
}

pub fn cpu_features() -> CpuFeatures {
    #[cfg(target_arch = "x86_64")]
    {
        CpuFeatures {
            avx2: std::arch::is_x86_feature_detected!("avx2"),
            avx512bw: std::arch::is_x86_feature_detected!("avx512bw"),
            avx_vnni: std::arch::is_x86_feature_detected!("avxvnni"),
            avx512_vnni: std::arch::is_x86_feature_detected!("avx512vnni"),
            aarch64: false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        CpuFeatures { aarch64: true, ..Default::default() }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        CpuFeatures::default()
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

fn check(a: &QuantizedA, b: &PackedB, ep: &Epilogue, out: &Output) -> Result<(), ShapeError> {
    let (kp, n, rows) = (b.k_padded(), b.n(), a.rows);
    if a.stride < kp {
        return Err(ShapeError::Stride { stride: a.stride, k_padded: kp });
    }
    let need = if rows == 0 { 0 } else { (rows - 1) * a.stride + kp };
    if a.data.len() < need {
        return Err(ShapeError::Activations { rows, stride: a.stride, len: a.data.len(), need });
    }
    let vec = |what: &'static str, len: usize, need: usize| {
        if len < need { Err(ShapeError::Vector { what, len, need }) } else { Ok(()) }
    };
    if let Some(z) = ep.zero_fix {
        vec("zero fix", z.len(), n)?;
    }
    if let Some(bias) = ep.bias {
        vec("bias", bias.len(), n)?;
    }
    match ep.scale {
        Scale::Uniform(_) => {}
        Scale::Columns(c) => vec("column scales", c.len(), n)?,
        Scale::RowsColumns { rows: r, cols } => {
            vec("row scales", r.len(), rows)?;
            vec("column scales", cols.len(), n)?;
        }
    }
    let (len, stride) = match out {
        Output::F32 { data, stride } => (data.len(), *stride),
        Output::U8 { data, stride, .. } => (data.len(), *stride),
    };
    let need = if rows == 0 { 0 } else { (rows - 1) * stride + n };
    if stride < n || len < need {
        return Err(ShapeError::Output { rows, stride, len, need });
    }
    Ok(())
}

static KERNELS: OnceLock<Result<Kernels, String>> = OnceLock::new();

/// The process-wide kernels, chosen once (honouring `RESEAM_MT_ISA`).
pub fn kernels() -> Result<&'static Kernels, &'static str> {
    KERNELS.get_or_init(|| Kernels::detect().map_err(|e| e.to_string())).as_ref().map_err(|e| e.as_str())
}
