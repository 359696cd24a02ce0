//! Makes `src/detect/ngrams.bin`, the n-gram models of language identification, from lingua-rs's
//! model crates (`lingua-<language>-language-model-1.3.0/models/ngrams.fst`, Apache-2.0), and
//! measures a models file on the labelled texts. Run by hand:
//!
//! ```text
//! cargo run --release --example lid_models -- build ~/.cargo/registry/src/index.crates.io-*/ \
//!     src/detect/ngrams.bin.zst 12 all,6000,30000,30000,30000
//! cargo run --release --example lid_models -- eval src/detect/ngrams.bin.zst ~/.cargo/registry/src/index.crates.io-*/
//! ```
//!
//! `build REGISTRY OUT SCALE KEEP`: per language and n-gram length, the KEEP n-grams that weigh
//! most on the scores (`all` keeps every one): ranked by the probability of the whole n-gram (the
//! product of its conditional probabilities down its prefixes) times how far its value lies from
//! the value scoring falls back to without it (its prefix's), unigrams by probability alone. Each
//! `ln p` is stored as round(-ln p · SCALE) (SCALE 0 keeps lingua's f64 values: with KEEP
//! `all,all,all,all,all` the full models, to check the scoring against lingua). OUT ending in
//! `.zst` is zstd-compressed (level 19: 16.2 MB of maps become 8.7 MB).
//! `compare FILE REGISTRY` (with `--features lingua-reference`): the lingua crate's confidences
//! against ours, text by text, on the texts of `eval`.
//! `eval FILE [REGISTRY]`: accuracy among the 51 languages on tests/data/langid (texts of 20+
//! characters and shorter ones) and, given the registry, on 100 more sentences per language from
//! lingua's test files that tests/data/langid does not hold (held out from every choice made here).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fst::{IntoStreamer, Streamer};
use reseam::detect::{Detector, FIREFOX_LANGUAGES, Models, model_languages};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["build", registry, out, scale, keep] => build(Path::new(registry), Path::new(out), scale.parse()?, keep),
        ["eval", file] => eval(Path::new(file), None),
        #[cfg(feature = "lingua-reference")]
        ["compare", file, registry] => compare(Path::new(file), Path::new(registry)),
        ["eval", file, registry] => eval(Path::new(file), Some(Path::new(registry))),
        _ => {
            Err("usage: lid_models build REGISTRY OUT SCALE KEEP | eval FILE [REGISTRY] | compare FILE REGISTRY".into())
        }
    }
}

fn model_dir(registry: &Path, name: &str) -> PathBuf {
    registry.join(format!("lingua-{}-language-model-1.3.0", name.to_lowercase()))
}

fn build(registry: &Path, out: &Path, scale: f32, keep: &str) -> Result<(), Error> {
    let keep: Vec<Option<usize>> =
        keep.split(',').map(|k| if k == "all" { Ok(None) } else { k.parse().map(Some) }).collect::<Result<_, _>>()?;
    if keep.len() != 5 {
        return Err("KEEP: five counts, for n-grams of 1 to 5 characters".into());
    }
    let mut file = reseam_magic();
    file.extend(scale.to_le_bytes());
    let languages = model_languages();
    file.push(languages.len() as u8);
    let mut total = 0;
    for (name, _, iso3) in &languages {
        let path = model_dir(registry, name).join("models/ngrams.fst");
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let full = fst::Map::new(bytes)?;
        let map = if scale == 0.0 && keep.iter().all(Option::is_none) {
            full.as_fst().as_bytes().to_vec()
        } else {
            pruned(&full, scale, &keep)?
        };
        file.extend(iso3.as_bytes());
        file.extend((map.len() as u32).to_le_bytes());
        file.extend(&map);
        total += map.len();
        eprintln!("{name}: {} bytes", map.len());
    }
    let packed = out.extension().is_some_and(|x| x == "zst");
    let file = if packed { zstd::encode_all(&file[..], 19)? } else { file };
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &file)?;
    std::fs::rename(&tmp, out)?;
    eprintln!("{}: {} bytes ({} of maps)", out.display(), file.len(), total);
    Ok(())
}

fn reseam_magic() -> Vec<u8> {
    b"RSLID1\n".to_vec()
}

/// The most frequent n-grams of each length, their values quantized (or kept as f64 bits).
fn pruned(full: &fst::Map<Vec<u8>>, scale: f32, keep: &[Option<usize>]) -> Result<Vec<u8>, Error> {
    let ln = |v: u64| f64::from_bits(v);
    // (length, joint log probability, key, conditional log probability)
    let mut by_length: Vec<Vec<(f64, Vec<u8>, f64)>> = vec![Vec::new(); 5];
    let mut stream = full.into_stream();
    while let Some((key, value)) = stream.next() {
        let Ok(text) = std::str::from_utf8(key) else { continue };
        let ends: Vec<usize> = text.char_indices().map(|(i, _)| i).skip(1).chain([text.len()]).collect();
        let n = ends.len();
        if !(1..=5).contains(&n) {
            continue;
        }
        // Every prefix of an n-gram lingua counted was counted too; one missing leaves it out.
        let joint: Option<f64> = ends.iter().map(|&e| full.get(&text[..e]).map(ln)).sum();
        let Some(joint) = joint else { continue };
        // What scoring falls back to without this n-gram: its prefix's value (none for a unigram).
        let fallback = if n > 1 { full.get(&text[..ends[n - 2]]).map(ln) } else { None };
        // How much scoring would change without it: its probability times how far its value is
        // from the fallback's (Stolcke's pruning, in spirit); unigrams by probability alone.
        let rank = match fallback {
            Some(f) => joint + ((ln(value) - f).abs() + 1e-3).ln(),
            None => joint,
        };
        by_length[n - 1].push((rank, key.to_vec(), ln(value)));
    }
    let mut kept: Vec<(Vec<u8>, u64)> = Vec::new();
    for (n, mut grams) in by_length.into_iter().enumerate() {
        grams.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        if let Some(k) = keep[n] {
            grams.truncate(k);
        }
        for (_, key, lnp) in grams {
            let value =
                if scale == 0.0 { lnp.to_bits() } else { (-lnp * scale as f64).round().clamp(0.0, 65535.0) as u64 };
            kept.push((key, value));
        }
    }
    kept.sort();
    let mut builder = fst::MapBuilder::memory();
    builder.extend_iter(kept)?;
    Ok(builder.into_inner()?)
}

/// A models file, unpacked first when it is zstd-compressed (`.zst`).
fn read_models(file: &Path) -> Result<Arc<Models>, Error> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let bytes = if file.extension().is_some_and(|x| x == "zst") { zstd::decode_all(&bytes[..])? } else { bytes };
    Ok(Arc::new(Models::parse(&bytes)?))
}

fn candidates() -> Vec<&'static str> {
    FIREFOX_LANGUAGES.iter().copied().filter(|t| !["kn", "ml"].contains(t)).collect()
}

/// (language tag, text) of tests/data/langid.
fn labelled() -> Result<Vec<(String, String)>, Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/langid");
    let mut out = Vec::new();
    for tag in candidates() {
        let path = dir.join(format!("{tag}.txt"));
        if !path.exists() {
            continue; // zh-Hant: no labelled texts
        }
        let text = std::fs::read_to_string(&path)?;
        out.extend(text.lines().filter(|l| !l.trim().is_empty()).map(|l| (tag.to_string(), l.to_string())));
    }
    Ok(out)
}

fn held_out(registry: &Path, labelled: &[(String, String)]) -> Result<Vec<(String, String)>, Error> {
    let seen: HashSet<&str> = labelled.iter().map(|(_, t)| t.as_str()).collect();
    let names = model_languages();
    let mut out = Vec::new();
    for tag in candidates() {
        let primary = tag.split('-').next().unwrap_or(tag);
        let Some((name, _, _)) = names.iter().find(|(_, iso1, _)| *iso1 == primary) else { continue };
        if tag == "zh-Hant" {
            continue; // lingua's Chinese sentences are in simplified characters
        }
        let path = model_dir(registry, name).join("testdata/sentences.txt");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let rows = text.lines().filter(|l| !l.trim().is_empty() && !seen.contains(l)).skip(200).take(100);
        out.extend(rows.map(|l| (tag.to_string(), l.to_string())));
    }
    Ok(out)
}

fn eval(file: &Path, registry: Option<&Path>) -> Result<(), Error> {
    let detector = Detector::with_models(&candidates(), read_models(file)?)?;
    let labelled = labelled()?;
    let (mut long, mut long_right, mut short, mut short_right) = (0, 0, 0, 0);
    let mut times = Vec::new();
    // Per language: texts of 20+ characters, right, and what the wrong answers were.
    let mut table: BTreeMap<&str, (usize, usize, BTreeMap<String, usize>)> = BTreeMap::new();
    detector.detect("warm up: the models are unpacked by the first detection");
    let started = std::time::Instant::now();
    for (tag, text) in &labelled {
        // CPU time of this thread, not wall time: the machine may be shared.
        let t = thread_cpu_seconds();
        let found = detector.detect(text).language;
        times.push(thread_cpu_seconds() - t);
        let right = found == *tag;
        if text.chars().count() >= 20 {
            let row = table.entry(tag).or_default();
            row.0 += 1;
            row.1 += right as usize;
            if !right {
                *row.2.entry(found).or_default() += 1;
            }
            (long, long_right) = (long + 1, long_right + right as usize);
        } else {
            (short, short_right) = (short + 1, short_right + right as usize);
        }
    }
    if std::env::var("LID_SLOWEST").is_ok() {
        let mut order: Vec<usize> = (0..times.len()).collect();
        order.sort_by(|&a, &b| times[b].total_cmp(&times[a]));
        for &i in order.iter().take(8) {
            println!("{:.3} ms {:?}", times[i] * 1e3, labelled[i]);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}: labelled {:.1}% of {long} (20+ chars), {:.1}% of {short} shorter; CPU time per text: mean {:.3} ms \
         (wall {:.3} ms), p50 {:.3} ms, p99 {:.3} ms",
        file.display(),
        100.0 * long_right as f64 / long as f64,
        100.0 * short_right as f64 / short as f64,
        times.iter().sum::<f64>() * 1e3 / times.len() as f64,
        started.elapsed().as_secs_f64() * 1e3 / labelled.len() as f64,
        times[times.len() / 2] * 1e3,
        times[times.len() * 99 / 100] * 1e3,
    );
    // The README's table, six languages a row, and the confusions.
    let cells: Vec<String> =
        table.iter().map(|(l, (n, r, _))| format!("| {l} | {:.0}% ", 100.0 * *r as f64 / *n as f64)).collect();
    println!("{}|", "| lang | ≥20 chars ".repeat(6));
    println!("{}|", "| --- | ---: ".repeat(6));
    for row in cells.chunks(6) {
        println!("{}{}|", row.concat(), "|  |  ".repeat(6 - row.len()));
    }
    for (l, (n, r, wrong)) in &table {
        if r < n {
            let wrong: Vec<String> = wrong.iter().map(|(w, c)| format!("{w} ×{c}")).collect();
            println!("{l}: {r}/{n}, taken for {}", wrong.join(", "));
        }
    }
    if let Some(registry) = registry {
        let rows = held_out(registry, &labelled)?;
        let right = rows.iter().filter(|(tag, text)| detector.detect(text).language == *tag).count();
        println!("held out: {:.1}% of {}", 100.0 * right as f64 / rows.len().max(1) as f64, rows.len());
    }
    Ok(())
}

/// lingua's own confidence values against ours among the 51 languages, text by text (with the
/// full models, `build REGISTRY FILE 0 all,all,all,all,all`: the same first language everywhere).
#[cfg(feature = "lingua-reference")]
fn compare(file: &Path, registry: &Path) -> Result<(), Error> {
    use lingua::{IsoCode639_1, Language, LanguageDetectorBuilder};
    use std::str::FromStr;
    let models = read_models(file)?;
    let tags = candidates();
    let detector = Detector::with_models(&tags, models)?;
    let languages: Vec<Language> = model_languages()
        .iter()
        .map(|(_, iso1, _)| Language::from_iso_code_639_1(&IsoCode639_1::from_str(iso1).unwrap()))
        .collect();
    let lingua = LanguageDetectorBuilder::from_languages(&languages).build();
    let mut texts = labelled()?;
    texts.extend(held_out(registry, &texts.clone())?);
    let (mut same, mut max_diff) = (0, 0f64);
    for (_, text) in &texts {
        let ours = detector.scores(text);
        let theirs = lingua.compute_language_confidence_values(reseam::text::prose(text));
        let theirs: Vec<(String, f64)> = theirs.iter().map(|(l, c)| (l.iso_code_639_1().to_string(), *c)).collect();
        if ours[0].0 == theirs[0].0 && (ours[0].1 > 0.0) == (theirs[0].1 > 0.0) {
            same += 1;
        } else {
            println!("differs: {text:?}: ours {:?}, lingua {:?}", &ours[..2], &theirs[..2]);
        }
        for (l, c) in &ours {
            let t = theirs.iter().find(|(tl, _)| tl == l).map_or(0.0, |x| x.1);
            max_diff = max_diff.max((c - t).abs());
        }
    }
    println!("same first language on {same} of {} texts; largest confidence difference {max_diff:e}", texts.len());
    Ok(())
}

fn thread_cpu_seconds() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
