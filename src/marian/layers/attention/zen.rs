//! MKL's Zen (AMD) summation orders for the two attention products, and which of Intel's and
//! Zen's the process reproduces ([`Mkl`]); the parent module documents both and computes them.

use super::fma;

/// Whose summation orders the two products reproduce: MKL's on Intel CPUs or on AMD ones. MKL
/// picks its code path by the CPU ([`Mkl::of_this_cpu`]), so Bergamot's output depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mkl {
    /// MKL's Intel code paths (measured with AVX-512, on a Sapphire Rapids Xeon).
    Intel,
    /// MKL's generic code path with its Zen kernels, taken on AMD CPUs with AVX2 (Zen 1 to 5).
    Zen,
}

impl From<Mkl> for reseam_kernels::scalar::MklOrder {
    /// The kernels' name for the same orders.
    fn from(m: Mkl) -> Self {
        match m {
            Mkl::Intel => Self::Intel,
            Mkl::Zen => Self::Zen,
        }
    }
}

/// The environment variable that overrides [`Mkl::of_this_cpu`]: `intel`, `zen` or `auto`.
pub const MKL_VAR: &str = "RESEAM_MT_MKL";

/// The process's orders: 0 not yet chosen, else 1 + the variant.
static PROCESS_MKL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

thread_local! {
    static FORCED_MKL: std::cell::Cell<Option<Mkl>> = const { std::cell::Cell::new(None) };
}

impl Mkl {
    pub fn name(self) -> &'static str {
        match self {
            Mkl::Intel => "intel",
            Mkl::Zen => "zen",
        }
    }

    /// `intel`, `zen`, or `auto` / empty (`None`: the orders of this CPU).
    pub fn parse(value: &str) -> Result<Option<Mkl>, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(None),
            "intel" => Ok(Some(Mkl::Intel)),
            "zen" | "amd" => Ok(Some(Mkl::Zen)),
            _ => Err(format!("{MKL_VAR}={value:?} is not one of intel, zen, auto")),
        }
    }

    /// The path MKL takes here. `mkl_serv_cpuiszen` (MKL 2020.3, in the bergamot 0.4.5 wheel) is
    /// true on a CPU whose vendor is "AuthenticAMD" and which has AVX2, and then
    /// `mkl_serv_cpu_detect` reports the generic code path whatever the instruction sets (it does
    /// not tell Zen 3 from Zen 4); every other CPU here gets the Intel orders. (AMD CPUs without
    /// AVX2, before Zen, take the generic path without the Zen kernels: not measured.) The CPU is
    /// read by the kernels' dispatch, whose AVX2 includes FMA, which every AMD CPU with AVX2 has.
    pub fn of_this_cpu() -> Mkl {
        let cpu = reseam_kernels::dispatch::cpu_features();
        if cpu.amd && cpu.avx2 { Mkl::Zen } else { Mkl::Intel }
    }

    /// [`MKL_VAR`] if set (and not `auto`), else [`Mkl::of_this_cpu`]; an error names a bad value.
    pub fn from_env() -> Result<Mkl, String> {
        let forced = match std::env::var(MKL_VAR) {
            Ok(v) => Mkl::parse(&v)?,
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(v)) => {
                return Err(format!("{MKL_VAR}={v:?} is not one of intel, zen, auto"));
            }
        };
        Ok(forced.unwrap_or_else(Mkl::of_this_cpu))
    }

    /// The orders a runtime or engine made on this thread reproduces (they hand them to
    /// [`super::attend`]): the one [`Mkl::forced`] set, else the
    /// process's ([`Mkl::set_process`], or [`Mkl::from_env`] read once; `translate` and `serve`
    /// refuse a bad value before any translation, so here one falls back to this CPU's).
    pub fn current() -> Mkl {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(m) = FORCED_MKL.get() {
            return m;
        }
        match PROCESS_MKL.load(Relaxed) {
            1 => Mkl::Intel,
            2 => Mkl::Zen,
            _ => {
                let m = Mkl::from_env().unwrap_or_else(|_| Mkl::of_this_cpu());
                Mkl::set_process(m);
                m
            }
        }
    }

    /// Sets the orders of every thread that has none [`Mkl::forced`] (the command line's choice).
    pub fn set_process(m: Mkl) {
        PROCESS_MKL.store(1 + m as u8, std::sync::atomic::Ordering::Relaxed);
    }

    /// Runs `f` with these orders for the runtimes and engines it makes on this thread (for
    /// comparing with references made on another CPU in one process).
    pub fn forced<R>(self, f: impl FnOnce() -> R) -> R {
        let before = FORCED_MKL.replace(Some(self));
        let r = f();
        FORCED_MKL.set(before);
        r
    }
}

/// MKL's Zen orders (see the module's documentation): `L` lanes over whole chunks of `L`
/// elements from `start`, leaving at least `reserve` elements out, lane 0 starting from `init`;
/// the lanes halved (`l + l+L/2`, ...), then the elements past the chunks added one by one.
/// Every product is rounded before it is added: these kernels do not fuse.
fn zen_lanes<const L: usize>(q: &[f32], k: &[f32], start: usize, reserve: usize, init: f32) -> f32 {
    let end = start + q.len().saturating_sub(start + reserve) / L * L;
    let mut v = [0f32; L];
    v[0] = init;
    // Whole chunks as arrays: no index to check per element, so each chunk is a few vector
    // multiplies and adds.
    let (qc, kc) = if end > start { (&q[start..end], &k[start..end]) } else { (&[][..], &[][..]) };
    for (a, b) in qc.chunks_exact(L).zip(kc.chunks_exact(L)) {
        let (a, b): (&[f32; L], &[f32; L]) = (a.try_into().expect("a chunk"), b.try_into().expect("a chunk"));
        for ((lane, &x), &y) in v.iter_mut().zip(a).zip(b) {
            *lane += x * y;
        }
    }
    let mut h = L / 2;
    while h > 0 {
        for i in 0..h {
            v[i] += v[i + h];
        }
        h /= 2;
    }
    let mut s = v[0];
    for t in end..q.len() {
        s += q[t] * k[t];
    }
    s
}

/// The first (up to) four products added in turn: where the Zen kernels of one query row start.
fn zen_prefix(q: &[f32], k: &[f32]) -> f32 {
    let mut s = q[0] * k[0];
    for t in 1..q.len().min(4) {
        s += q[t] * k[t];
    }
    s
}

/// Whether the Zen kernels compute `Q·Kᵀ` of `m` queries by `n` keys as plain fma chains (the
/// encoder's sentences of 12 positions or more).
pub(super) fn zen_chains(m: usize, n: usize) -> bool {
    m >= 4 && n >= 12
}

/// Whether the Zen kernels compute `weights·V` of `m` query rows as plain fma chains; fewer rows
/// add the rounded products in turn.
pub(super) fn zen_fused_values(m: usize) -> bool {
    m >= 4
}

/// One element of `scale · Q·Kᵀ` in MKL's Zen orders, for `m` queries by `n` keys. The plain
/// chains take the keys scaled (MKL scales them as it packs them), the others scale the sum.
pub(super) fn qk_zen(m: usize, n: usize, j: usize, q: &[f32], k: &[f32], scale: f32) -> f32 {
    if zen_chains(m, n) {
        let mut acc = 0f32;
        for (&x, &y) in q.iter().zip(k) {
            acc = fma(x, y * scale, acc);
        }
        return acc;
    }
    scale * qk_zen_sum(m, n, j, q, k)
}

/// [`qk_zen`] before scaling, outside the plain chains.
fn qk_zen_sum(m: usize, n: usize, j: usize, q: &[f32], k: &[f32]) -> f32 {
    let blocks = n / 4 * 4;
    if m == 1 {
        let s = zen_prefix(q, k);
        if j < blocks {
            zen_lanes::<4>(q, k, 4, 0, s)
        } else if (j - blocks).is_multiple_of(2) {
            zen_lanes::<8>(q, k, 4, 4, s)
        } else {
            zen_lanes::<4>(q, k, 4, 4, s)
        }
    } else if j < blocks {
        zen_lanes::<4>(q, k, 0, 0, 0.0)
    } else {
        zen_lanes::<8>(q, k, 0, 0, 0.0)
    }
}

/// One element of `weights·V` in MKL's Zen orders for fewer than four query rows: the products,
/// rounded, added in turn.
pub(super) fn wv_zen_unfused(w: &[f32], v: impl Fn(usize) -> f32) -> f32 {
    let mut c = 0f32;
    for (j, &wj) in w.iter().enumerate() {
        c += wj * v(j);
    }
    c
}
