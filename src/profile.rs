//! `RESEAM_MT_PROFILE=1`: time per kind of operation, summed over every thread, printed on
//! stderr at exit.
//!
//! Off, a timer costs one relaxed load. The kinds nest: a product inside a decoder step counts in
//! both `decoder` and its product's kind, so the inner kinds are shares of the outer ones.
//!
//! Beside the times, the bytes the encoder and the decoder stream through ([`read`]): the
//! weights each product multiplies, read whole however few its rows, and the decoder's
//! cross-attention keys and values, per source piece and per decoder row. With many models and
//! few sentences each, a model step's weights are read for a few rows; these figures say how
//! many bytes a token costs. They count what is read, not where from: which of it comes from
//! memory rather than the caches would take hardware counters, which a VM rarely has.
//!
//! And the products' multiply-adds ([`macs`]) by phase, the encoder's and decoder's layers apart
//! from the output layer, with the rate the timing thread saw: at one compute thread, the rate
//! the kernels ran at in the engine, to set beside `bench-gemm`'s peak and its rate over one hot
//! weight matrix (the difference is what the products lose in the engine, outside a hot loop).

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// What a span of time was spent on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Encoder passes (outer).
    Encoder,
    /// Decoder steps with their output layer and choice (outer).
    Decoder,
    /// int8 (or float) products of the encoder and decoder layers.
    Products,
    /// The output layer's product (logits).
    OutputProduct,
    Attention,
    /// Log-softmax of the output rows (only the rows whose choice needs it: see
    /// [`Count`]).
    Softmax,
    LayerNorm,
    Embeddings,
    /// Building a sentence's shortlisted output layer.
    Shortlist,
    /// The greedy choice over a row: from its raw logits (without shortlists, their scan slice
    /// by slice as the output product makes them), or over its log-probabilities.
    Argmax,
    /// The scheduler's own work between steps.
    Scheduling,
    /// The scheduler waiting for requests.
    Waiting,
    /// Compute threads idle at the end of a round, their part done before another's (rounds
    /// split by rows; a round ends when every part is done).
    RoundEnd,
}

const KINDS: [Kind; 13] = [
    Kind::Encoder,
    Kind::Decoder,
    Kind::Products,
    Kind::OutputProduct,
    Kind::Attention,
    Kind::Softmax,
    Kind::LayerNorm,
    Kind::Embeddings,
    Kind::Shortlist,
    Kind::Argmax,
    Kind::Scheduling,
    Kind::Waiting,
    Kind::RoundEnd,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Encoder => "encoder",
            Kind::Decoder => "decoder",
            Kind::Products => "products",
            Kind::OutputProduct => "output product",
            Kind::Attention => "attention",
            Kind::Softmax => "log-softmax",
            Kind::LayerNorm => "layer norm",
            Kind::Embeddings => "embeddings",
            Kind::Shortlist => "shortlist",
            Kind::Argmax => "argmax",
            Kind::Scheduling => "scheduling",
            Kind::Waiting => "waiting",
            Kind::RoundEnd => "round's end",
        }
    }
}

/// What is counted beside the times: how the greedy search chose its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// Rows whose log-softmax was computed (Marian's form).
    FullRows,
    /// Rows chosen from the raw logits, their log-sum skipped.
    RawRows,
    /// Sentences started again with the full form at every step (a near-tie after skipped
    /// log-sums).
    Replays,
}

/// What [`read`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// A product's weights (int8, or float32 for float models): all of them, whatever its rows.
    Weights,
    /// A decoder row's cross-attention keys and values (float32, every layer).
    KeysValues,
}

/// The outer kinds [`read`] and [`rows`] count for: encoder, decoder.
const PHASES: usize = 2;
const NO_PHASE: usize = PHASES;

fn phase_of(kind: Kind) -> Option<usize> {
    match kind {
        Kind::Encoder => Some(0),
        Kind::Decoder => Some(1),
        _ => None,
    }
}

static NANOS: [AtomicU64; KINDS.len()] = [const { AtomicU64::new(0) }; KINDS.len()];
static COUNTS: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];
/// Bytes read, by phase and [`Read`].
static READ: [[AtomicU64; 2]; PHASES] = [const { [const { AtomicU64::new(0) }; 2] }; PHASES];
/// Source pieces encoded and decoder rows stepped, and the batches and model steps they came in.
static ROWS: [AtomicU64; PHASES] = [const { AtomicU64::new(0) }; PHASES];
static STEPS: [AtomicU64; PHASES] = [const { AtomicU64::new(0) }; PHASES];
/// Multiply-adds by phase, of the layers' products ([`Kind::Products`]) and the output layer's
/// ([`Kind::OutputProduct`]); and the layers' product time by phase (the output layer's is all
/// the decoder's).
static MACS: [[AtomicU64; 2]; PHASES] = [const { [const { AtomicU64::new(0) }; 2] }; PHASES];
static PRODUCT_NANOS: [AtomicU64; PHASES] = [const { AtomicU64::new(0) }; PHASES];
static ON: AtomicBool = AtomicBool::new(false);
/// Engines started in this process, and the compute threads they run (the report's last line:
/// one engine serves every language pair of a run).
static ENGINES: AtomicU64 = AtomicU64::new(0);
static COMPUTE_THREADS: AtomicU64 = AtomicU64::new(0);
/// The scheduler's rounds that ran on two compute threads or more (the report's last line: with
/// the model steps, how many steps a round took).
static ROUNDS: AtomicU64 = AtomicU64::new(0);
static INIT: OnceLock<()> = OnceLock::new();

thread_local! {
    /// The outer kind this thread's [`Timer`] is in (encoder or decoder), which [`read`] counts for.
    static PHASE: Cell<usize> = const { Cell::new(NO_PHASE) };
    /// Whether this thread's innermost product timer is the output layer's, which [`macs`]
    /// counts for (the output layer's product goes through the same `gemm` as the layers').
    static IN_OUTPUT: Cell<bool> = const { Cell::new(false) };
}

/// Turns profiling on when `RESEAM_MT_PROFILE` is set to anything but `0` (read once).
pub fn init_from_env() -> bool {
    INIT.get_or_init(|| {
        let on = std::env::var("RESEAM_MT_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0");
        ON.store(on, Ordering::Relaxed);
    });
    enabled()
}

pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Adds the time until the guard is dropped to `kind`.
pub struct Timer(Option<(Kind, Instant)>);

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some((k, t)) = self.0 {
            let nanos = t.elapsed().as_nanos() as u64;
            NANOS[k as usize].fetch_add(nanos, Ordering::Relaxed);
            match k {
                Kind::Products => {
                    if let Some(p) = PRODUCT_NANOS.get(PHASE.get()) {
                        p.fetch_add(nanos, Ordering::Relaxed);
                    }
                }
                Kind::OutputProduct => IN_OUTPUT.set(false),
                _ => {}
            }
            if phase_of(k).is_some() {
                PHASE.set(NO_PHASE);
            }
        }
    }
}

#[inline]
pub fn time(kind: Kind) -> Timer {
    Timer(enabled().then(|| {
        if let Some(p) = phase_of(kind) {
            PHASE.set(p);
        }
        if kind == Kind::OutputProduct {
            IN_OUTPUT.set(true);
        }
        (kind, Instant::now())
    }))
}

/// Counts `bytes` read as `what` in the encoder or decoder this thread is timing (nothing
/// outside them, or when profiling is off).
#[inline]
pub fn read(what: Read, bytes: usize) {
    if enabled() {
        let p = PHASE.get();
        if p < PHASES {
            READ[p][what as usize].fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }
}

/// Counts `n` multiply-adds of a product in the encoder or decoder this thread is timing, as the
/// output layer's inside an output-product timer, else as a layer's.
#[inline]
pub fn macs(n: usize) {
    if enabled() {
        add_macs(n, IN_OUTPUT.get());
    }
}

/// Counts `n` multiply-adds of the output layer's product in the decoder this thread is timing,
/// for a product whose pieces are timed elsewhere (on the pool's threads).
#[inline]
pub fn output_macs(n: usize) {
    if enabled() {
        add_macs(n, true);
    }
}

fn add_macs(n: usize, output: bool) {
    let p = PHASE.get();
    if p < PHASES {
        MACS[p][output as usize].fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Counts one encoder batch of `rows` source pieces or one model's decoder step of `rows` rows
/// (`kind` [`Kind::Encoder`] or [`Kind::Decoder`]).
#[inline]
pub fn rows(kind: Kind, rows: usize) {
    if let (true, Some(p)) = (enabled(), phase_of(kind)) {
        ROWS[p].fetch_add(rows as u64, Ordering::Relaxed);
        STEPS[p].fetch_add(1, Ordering::Relaxed);
    }
}

/// Counts one round of the scheduler on two compute threads or more.
#[inline]
pub fn round() {
    if enabled() {
        ROUNDS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Adds `d` to `kind` (for spans not timed by one guard).
pub fn add(kind: Kind, d: std::time::Duration) {
    if enabled() {
        NANOS[kind as usize].fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }
}

/// Adds one to `what` when profiling is on.
#[inline]
pub fn count(what: Count) {
    if enabled() {
        COUNTS[what as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// The counts so far: full rows, raw rows, replays.
pub fn counts() -> [u64; 3] {
    COUNTS.each_ref().map(|c| c.load(Ordering::Relaxed))
}

/// Counts an engine started with `threads` compute threads (whether profiling is on or not).
pub fn engine_started(threads: usize) {
    ENGINES.fetch_add(1, Ordering::Relaxed);
    COMPUTE_THREADS.fetch_add(threads as u64, Ordering::Relaxed);
}

/// Seconds per kind so far.
pub fn totals() -> Vec<(Kind, f64)> {
    KINDS.iter().map(|&k| (k, NANOS[k as usize].load(Ordering::Relaxed) as f64 * 1e-9)).collect()
}

/// The table printed at exit: each kind's seconds and its share of encoder + decoder time.
pub fn report() -> String {
    let t = totals();
    let compute: f64 = t.iter().filter(|(k, _)| matches!(k, Kind::Encoder | Kind::Decoder)).map(|(_, s)| s).sum();
    let mut out = String::from("reseam profile (seconds summed over threads; % of encoder + decoder):\n");
    for &(k, s) in &t {
        let pct = if compute > 0.0 { format!("{:5.1}%", 100.0 * s / compute) } else { "    -".into() };
        out.push_str(&format!("  {:<15} {:>9.3} s  {pct}\n", k.name(), s));
    }
    // How much of the whole the int8 products take (the layers' and the
    // output layer's, which are timed apart); the closer to 100%, the closer to the machine's limit.
    let products: f64 =
        t.iter().filter(|(k, _)| matches!(k, Kind::Products | Kind::OutputProduct)).map(|(_, s)| s).sum();
    let pct = if compute > 0.0 { format!("{:5.1}%", 100.0 * products / compute) } else { "    -".into() };
    out.push_str(&format!(
        "  all products    {products:>9.3} s  {pct} (layers + output layer; the rest is outside them)\n"
    ));
    let [full, raw, replays] = counts();
    out.push_str(&format!(
        "  output rows: {full} log-softmaxed, {raw} chosen from the raw logits; sentences replayed: {replays}\n"
    ));
    out.push_str(&reads());
    out.push_str(&multiply_adds(t[Kind::OutputProduct as usize].1));
    out.push_str(&format!(
        "  engines started: {}, compute threads: {}, rounds on two threads or more: {}\n",
        ENGINES.load(Ordering::Relaxed),
        COMPUTE_THREADS.load(Ordering::Relaxed),
        ROUNDS.load(Ordering::Relaxed)
    ));
    out
}

/// The report's lines on bytes read per source piece and per decoder row.
fn reads() -> String {
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let gb = |b: u64| b as f64 * 1e-9;
    let per = |b: u64, n: u64| if n > 0 { format!("{:.1} KB", b as f64 * 1e-3 / n as f64) } else { "-".into() };
    let [enc, dec] = [0, 1].map(|p| (load(&READ[p][0]), load(&READ[p][1]), load(&ROWS[p]), load(&STEPS[p])));
    let steps_per = |rows: u64, steps: u64| if steps > 0 { rows as f64 / steps as f64 } else { 0.0 };
    format!(
        "  encoder read {:.2} GB of weights: {} a source piece ({} pieces in {} batches, {:.1} a batch)\n  \
         decoder read {:.2} GB of weights: {} a row ({} rows in {} model steps, {:.1} a step);\n    \
         and {:.2} GB of cross-attention keys and values: {} a row\n",
        gb(enc.0),
        per(enc.0, enc.2),
        enc.2,
        enc.3,
        steps_per(enc.2, enc.3),
        gb(dec.0),
        per(dec.0, dec.2),
        dec.2,
        dec.3,
        steps_per(dec.2, dec.3),
        gb(dec.1),
        per(dec.1, dec.2),
    )
}

/// The report's lines on the products' multiply-adds and their rate by phase; `output_s` is the
/// output layer's product time.
fn multiply_adds(output_s: f64) -> String {
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    let line = |name: &str, macs: f64, s: f64| {
        let rate = if s > 0.0 { format!("{:.1} G/s", macs * 1e-9 / s) } else { "-".into() };
        format!("    {name:<15} {:>7.1} G in {s:.3} s: {rate}\n", macs * 1e-9)
    };
    let mut out = String::from(
        "  int8 multiply-adds, at the rate the thread timing them saw (one compute thread: the kernels'):\n",
    );
    out.push_str(&line("encoder", load(&MACS[0][0]), load(&PRODUCT_NANOS[0]) * 1e-9));
    out.push_str(&line("decoder layers", load(&MACS[1][0]), load(&PRODUCT_NANOS[1]) * 1e-9));
    out.push_str(&line("output layer", load(&MACS[0][1]) + load(&MACS[1][1]), output_s));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_add_only_when_on() {
        let before = totals()[Kind::Shortlist as usize].1;
        ON.store(false, Ordering::Relaxed);
        drop(time(Kind::Shortlist));
        assert_eq!(totals()[Kind::Shortlist as usize].1, before);
        ON.store(true, Ordering::Relaxed);
        {
            let _t = time(Kind::Shortlist);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        ON.store(false, Ordering::Relaxed);
        assert!(totals()[Kind::Shortlist as usize].1 >= before + 0.002);
        let r = report();
        assert!(r.contains("shortlist"), "{r}");
        assert!(r.contains("all products"), "{r}");
    }

    #[test]
    fn reads_and_multiply_adds_count_for_the_phase_being_timed() {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let dec = || (load(&READ[1][0]), load(&READ[1][1]), load(&ROWS[1]), load(&STEPS[1]));
        let enc_weights = || load(&READ[0][0]);
        let macs_now = || [load(&MACS[0][0]), load(&MACS[0][1]), load(&MACS[1][0]), load(&MACS[1][1])];
        // Other tests may count while profiling is on; a distinctive amount tells this one's.
        const BIG: usize = 1 << 40;
        ON.store(true, Ordering::Relaxed);
        let (before, enc_before, macs_before) = (dec(), enc_weights(), macs_now());
        let dec_product_nanos = load(&PRODUCT_NANOS[1]);
        read(Read::Weights, BIG);
        macs(BIG);
        {
            let _t = time(Kind::Decoder);
            rows(Kind::Decoder, 3);
            read(Read::Weights, 3 * BIG);
            read(Read::KeysValues, 5 * BIG);
            {
                let _p = time(Kind::Products);
                macs(2 * BIG);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            {
                // The output layer's product goes through the same call as a layer's.
                let _o = time(Kind::OutputProduct);
                macs(4 * BIG);
            }
            output_macs(8 * BIG);
            macs(16 * BIG);
        }
        read(Read::KeysValues, BIG);
        {
            let _t = time(Kind::Encoder);
            read(Read::Weights, 7 * BIG);
            macs(32 * BIG);
        }
        ON.store(false, Ordering::Relaxed);
        let after = dec();
        let big = BIG as u64;
        // Outside a decoder or encoder timer, nothing is counted; inside, for its phase only.
        assert_eq!((after.0 - before.0) / big, 3);
        assert_eq!((after.1 - before.1) / big, 5);
        assert!(after.2 - before.2 >= 3 && after.3 > before.3);
        assert_eq!((enc_weights() - enc_before) / big, 7);
        let grown: Vec<u64> = macs_now().iter().zip(macs_before).map(|(a, b)| (a - b) / big).collect();
        // Encoder layers, encoder output layer (none), decoder layers, decoder output layer.
        assert_eq!(grown, [32, 0, 2 + 16, 4 + 8]);
        assert!(load(&PRODUCT_NANOS[1]) >= dec_product_nanos + 1_000_000);
        let r = report();
        assert!(r.contains("decoder read") && r.contains("a row"), "{r}");
        assert!(r.contains("cross-attention keys and values"), "{r}");
        assert!(r.contains("int8 multiply-adds") && r.contains("decoder layers"), "{r}");
    }
}
