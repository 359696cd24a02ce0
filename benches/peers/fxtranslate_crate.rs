//! fxtranslate (the Rust crate, `threads` feature) for benches/peers/run: loads a model folder,
//! translates INPUT in batches of BATCH on THREADS threads (its data-parallel path), then, when
//! LATENCY > 0, translates the first LATENCY lines one at a time (its per-post path) for latency.
//! Prints one JSON object; writes the batch outputs to OUTPUT.
//!
//! usage: peers-fxtranslate MODEL_DIR INPUT THREADS BATCH OUTPUT LATENCY

use std::path::{Path, PathBuf};
use std::time::Instant;

fn one(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 7 {
        return Err("usage: peers-fxtranslate MODEL_DIR INPUT THREADS BATCH OUTPUT LATENCY".into());
    }
    let dir = Path::new(&args[1]);
    let number = |i: usize, what: &str| -> Result<usize, String> {
        args[i].parse().map_err(|_| format!("{what} must be a number, not '{}'", args[i]))
    };
    let (threads, batch, latency) = (number(3, "THREADS")?, number(4, "BATCH")?.max(1), number(6, "LATENCY")?);
    let model = one(dir, "model.", ".intgemm.alphas.bin")
        .ok_or_else(|| format!("no model.*.intgemm.alphas.bin in {}", dir.display()))?;
    let shared = one(dir, "vocab.", ".spm");
    let src = shared
        .clone()
        .or_else(|| one(dir, "srcvocab.", ".spm"))
        .ok_or_else(|| format!("no vocab.*.spm or srcvocab.*.spm in {}", dir.display()))?;
    let trg = shared
        .or_else(|| one(dir, "trgvocab.", ".spm"))
        .ok_or_else(|| format!("no trgvocab.*.spm in {}", dir.display()))?;
    let text = std::fs::read_to_string(&args[2]).map_err(|e| format!("{}: {e}", args[2]))?;
    let lines: Vec<&str> = text.lines().collect();

    let t0 = Instant::now();
    let engine = fxtranslate::engine::Engine::load_mmapped(&model, &src, &trg)?.with_threads(threads);
    let load_s = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let mut out = Vec::with_capacity(lines.len());
    for chunk in lines.chunks(batch) {
        out.extend(engine.translate_batch(chunk));
    }
    let seconds = t1.elapsed().as_secs_f64();
    let mut joined = out.join("\n");
    joined.push('\n');
    std::fs::write(&args[5], joined).map_err(|e| format!("{}: {e}", args[5]))?;

    let mut lat: Vec<f64> = lines
        .iter()
        .take(latency)
        .map(|line| {
            let t = Instant::now();
            std::hint::black_box(engine.translate(line));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    lat.sort_by(f64::total_cmp);
    let ms = |v: f64| {
        if v.is_nan() {
            "null".to_string()
        } else {
            format!("{v:.3}")
        }
    };
    println!(
        "{{\"lines\": {}, \"seconds\": {seconds:.6}, \"load_s\": {load_s:.6}, \"threads\": {threads}, \
         \"batch\": {batch}, \"latency_posts\": {}, \"p50_ms\": {}, \"p99_ms\": {}, \"backend\": \"{}\"}}",
        lines.len(),
        lat.len(),
        ms(percentile(&lat, 0.50)),
        ms(percentile(&lat, 0.99)),
        fxtranslate::gemm::backend(),
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("peers-fxtranslate: {e}");
        std::process::exit(1);
    }
}
