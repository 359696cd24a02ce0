//! `reseam speculate`: greedy decoding of a target model over a prompt file, with decode speed.
//! Without a draft model this is the baseline speculative decoding is measured against.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use reseam::llm::generate::{self, BaselineOptions, BaselineReport, Progress};
use reseam::llm::{LoadOptions, Precision};

use super::UsageError;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The target model: a Hugging Face checkpoint folder (config.json, *.safetensors,
    /// tokenizer.json or tokenizer.model) of a Llama, Mistral or Qwen2 model.
    #[arg(long, env = "RESEAM_TARGET", value_name = "DIR")]
    target: PathBuf,

    /// Prompts: one per line, or JSON Lines with a "prompt" or "instruction" field (pl_alpaca
    /// style; an "input" field is appended). "-" reads standard input.
    #[arg(long, env = "RESEAM_PROMPTS", value_name = "FILE")]
    prompts: PathBuf,

    /// New tokens per prompt at most (fewer if the model ends its answer).
    #[arg(long, env = "RESEAM_MAX_NEW_TOKENS", value_name = "N", default_value_t = 128)]
    max_new_tokens: usize,

    /// Weights: int8 (per-row int8 weights, per-token int8 activations, exact int32 products;
    /// packed once and memory-mapped), bf16 (bf16 weights, f32 arithmetic) or f32 (for
    /// checking against Transformers).
    #[arg(long, env = "RESEAM_PRECISION", value_name = "P", default_value = "int8", value_parser = parse_precision)]
    precision: Precision,

    /// Wrap each prompt as the user turn of the model's chat template, with the assistant turn
    /// opened (as apply_chat_template(add_generation_prompt=True)).
    #[arg(long, env = "RESEAM_CHAT")]
    chat: bool,

    /// Write the results as JSON to FILE ("-": standard output): per prompt "prompt",
    /// "prompt_ids", "output_ids", "text" and timings, plus the totals.
    #[arg(long, env = "RESEAM_JSON", value_name = "FILE")]
    json: Option<PathBuf>,

    /// Do not stop at the model's end-of-sequence tokens (generation_config.json's
    /// eos_token_id): always make --max-new-tokens tokens.
    #[arg(long, env = "RESEAM_IGNORE_EOS")]
    ignore_eos: bool,

    /// Folder for packed int8 weights (default: the user cache, ~/.cache/reseam/packed).
    #[arg(long, env = "RESEAM_PACK_DIR", value_name = "DIR")]
    pack_dir: Option<PathBuf>,

    /// Quantize int8 weights in memory on every run instead of packing them to a file once.
    #[arg(long, env = "RESEAM_NO_PACK")]
    no_pack: bool,
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s).ok_or_else(|| format!("{s:?} is not a precision (one of: int8, bf16, f32)"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.max_new_tokens == 0 {
        return Err(UsageError("--max-new-tokens must be at least 1".into()).into());
    }
    if !args.target.join("config.json").is_file() {
        return Err(UsageError(format!(
            "--target {}: not a checkpoint folder (no config.json in it)",
            args.target.display()
        ))
        .into());
    }
    let opts = BaselineOptions {
        target: args.target.clone(),
        prompts: args.prompts.clone(),
        max_new_tokens: args.max_new_tokens,
        load: LoadOptions { precision: args.precision, pack_dir: args.pack_dir.clone(), no_pack: args.no_pack },
        chat: args.chat,
        ignore_eos: args.ignore_eos,
    };
    let bar = ProgressView::new();
    let report = generate::run_baseline(&opts, &|p| bar.show(p));
    bar.finish();
    let report = report?;
    if let Some(path) = &args.json {
        let json = serde_json::to_vec_pretty(&report).context("serializing the report")?;
        write_atomically(path, &json)?;
    }
    if args.json.as_deref() != Some(Path::new("-")) {
        print_table(&report)?;
    }
    Ok(())
}

fn print_table(r: &BaselineReport) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "target     {} ({})", r.target, r.architecture)?;
    writeln!(out, "precision  {} (int8 kernel: {})", r.precision, r.kernel)?;
    writeln!(
        out,
        "{:>6}  {:>13}  {:>10}  {:>13}  {:>12}  text",
        "prompt", "prompt tokens", "new tokens", "prefill tok/s", "decode tok/s"
    )?;
    for (i, p) in r.prompts.iter().enumerate() {
        let prefill = if p.prefill_seconds > 0.0 { p.prompt_ids.len() as f64 / p.prefill_seconds } else { 0.0 };
        let text: String = p.text.chars().take(40).map(|c| if c.is_control() { ' ' } else { c }).collect();
        writeln!(
            out,
            "{:>6}  {:>13}  {:>10}  {:>13.1}  {:>12.1}  {text}",
            i + 1,
            p.prompt_ids.len(),
            p.output_ids.len(),
            prefill,
            p.decode_tokens_per_second
        )?;
    }
    writeln!(
        out,
        "{:>6}  {:>13}  {:>10}  {:>13.1}  {:>12.1}",
        "all", r.prompt_tokens, r.new_tokens, r.prefill_tokens_per_second, r.decode_tokens_per_second
    )?;
    writeln!(out, "decode: {:.2} tokens/s", r.decode_tokens_per_second)?;
    Ok(())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it into place ("-": stdout).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.write_all(b"\n")?;
        return Ok(());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("writing {}", path.display()))?;
    tmp.write_all(bytes).with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A progress bar on a terminal, plain log lines otherwise.
struct ProgressView {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressView {
    fn new() -> ProgressView {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template("{msg:>8} [{bar:30}] {pos}/{len} {elapsed}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b
        });
        ProgressView { bar }
    }

    fn show(&self, p: Progress) {
        let (label, done, total) = match p {
            Progress::Packing { done, total } => ("packing", done, total),
            Progress::Prompt { index, total } => ("prompts", index, total),
        };
        if let Some(b) = &self.bar {
            b.set_message(label);
            b.set_length(total as u64);
            b.set_position(done as u64);
            return;
        }
        match p {
            Progress::Packing { done: 0, total } => {
                eprintln!("reseam: packing int8 weights ({total} matrices; once per checkpoint)")
            }
            Progress::Packing { done, total } if done == total => eprintln!("reseam: packed"),
            Progress::Prompt { index, total } if index < total => eprintln!("reseam: prompt {}/{total}", index + 1),
            _ => {}
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
