//! `reseam speculate`: cross-tokenizer speculative decoding (UAG) of a target model with a
//! draft model, measured against the target alone; without a draft, the same report with the
//! target alone (the baseline) and no configurations.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use reseam::llm::{LoadOptions, Precision};
use reseam::speculate::experiment::{self, Event, Settings};
use reseam::speculate::report::{self, KSetting, Report};
use reseam::speculate::{BaselineTiming, RunOrder, Strategy, Verify, energy};

use super::UsageError;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam speculate --target ~/models/Llama-3.2-1B --prompts prompts.txt\n  \
    reseam speculate --target ~/models/Llama-3.2-1B --draft ~/models/SmolLM2-135M --prompts prompts.txt -k 1,2,4,auto\n  \
    reseam speculate --target T --draft D --prompts p.jsonl --chat --json report.json --plot speedup.svg")]
pub struct Args {
    /// The target model: a Hugging Face checkpoint folder (config.json, *.safetensors,
    /// tokenizer.json or tokenizer.model) of a Llama, Mistral or Qwen2 model.
    #[arg(long, env = "RESEAM_TARGET", value_name = "DIR")]
    target: PathBuf,

    /// The draft model, a checkpoint folder like --target; its tokenizer may differ (tokens
    /// cross as text, see --strategy). Without it the target runs alone.
    #[arg(long, env = "RESEAM_DRAFT", value_name = "DIR")]
    draft: Option<PathBuf>,

    /// Draft lengths to try, comma-separated: tokens the draft proposes per round (e.g. 2, or
    /// 2,4,6). "auto" picks k every round from the running acceptance rate and the measured
    /// pass costs, to maximise the expected speedup; it drafts in every round while drafting
    /// is at least as likely to pay as not, and less often the less likely it is (never when
    /// it cannot: a draft as dear as the target).
    #[arg(short = 'k', long = "k", env = "RESEAM_SPECULATE_K", value_name = "K,...", default_value = "2", value_parser = parse_ks)]
    ks: KList,

    /// How draft tokens become target tokens, comma-separated to compare: none (draft ids
    /// used as target ids; a control across vocabularies), naive (draft text re-encoded
    /// alone), context (re-encoded after the text of the last --prefix committed tokens).
    /// When draft and target share one vocabulary, every strategy takes the ids as they are.
    #[arg(long = "strategy", env = "RESEAM_SPECULATE_STRATEGY", value_name = "S,...", default_value = "context", value_parser = parse_strategies)]
    strategies: StrategyList,

    /// Committed target tokens whose text the context strategy puts before the draft text.
    #[arg(long, env = "RESEAM_SPECULATE_PREFIX", value_name = "P", default_value_t = 5)]
    prefix: usize,

    /// How the target checks candidates: batched (all in one pass; its k+1-row arithmetic may
    /// flip a near-tie, which the report lists with its logit margin) or exact (one pass per
    /// candidate, as plain decoding: output identical to the target alone, slow).
    #[arg(long, env = "RESEAM_SPECULATE_VERIFY", value_name = "MODE", default_value = "batched", value_parser = parse_verify)]
    verify: Verify,

    /// When the target alone is timed for the speedups: paired (again right before each
    /// configuration's run of each prompt, so each speedup is against a baseline measured
    /// seconds apart and a machine whose speed drifts, e.g. a shared VM or one still warming
    /// up, moves both sides alike; about twice the time) or once (before all configurations:
    /// faster, but a configuration that never drafted was reported 1.2x faster than the target
    /// alone timed cold). Both warm the target and the draft up on the first prompt, untimed,
    /// and report every speedup with its 95% interval over the prompts.
    #[arg(long, env = "RESEAM_SPECULATE_BASELINE", value_name = "WHEN", default_value = "paired", value_parser = parse_baseline)]
    baseline: BaselineTiming,

    /// In what order configurations and prompts run: interleaved (each prompt through every
    /// configuration in turn, so a slow stretch of a shared machine falls on all of them alike
    /// and their speedups can be compared) or grouped (each configuration over all prompts
    /// before the next; a stretch of seconds then favours or penalises whole configurations).
    #[arg(long, env = "RESEAM_SPECULATE_ORDER", value_name = "ORDER", default_value = "interleaved", value_parser = parse_order)]
    order: RunOrder,

    /// Text whose tokens, in the draft's tokenizer, make the draft's output layer (FR-Spec): the
    /// draft computes logits only for the --draft-vocab ids most frequent in FILE (one text
    /// per line, e.g. a corpus of the prompts' language) and its end-of-sequence ids, so a
    /// small draft with a large vocabulary (Qwen2.5, Llama 3) passes at a fraction of the
    /// cost. The target still verifies in its whole vocabulary: output is unchanged.
    #[arg(long, env = "RESEAM_SPECULATE_DRAFT_VOCAB_CORPUS", value_name = "FILE")]
    draft_vocab_corpus: Option<PathBuf>,

    /// With --draft-vocab-corpus: how many of the most frequent ids the draft keeps (0: every
    /// id that occurs in the corpus).
    #[arg(long, env = "RESEAM_SPECULATE_DRAFT_VOCAB", value_name = "N", default_value_t = 0)]
    draft_vocab: usize,

    /// Draft tokens the draft's re-synchronisation may look back for a word start to
    /// re-encode the committed text from.
    #[arg(long, env = "RESEAM_SPECULATE_LOOKBEHIND", value_name = "N", default_value_t = 8)]
    lookbehind: usize,

    /// The longest draft -k auto may choose.
    #[arg(long, env = "RESEAM_SPECULATE_K_MAX", value_name = "N", default_value_t = 8)]
    k_max: usize,

    /// Largest logit margin (top-1 minus top-2 of the target alone) at which a batched
    /// divergence counts as a near-tie rather than a bug.
    #[arg(long, env = "RESEAM_SPECULATE_TOLERANCE", value_name = "LOGIT", default_value_t = 1e-3)]
    divergence_tolerance: f32,

    /// With --draft: write one row per configuration as CSV to FILE.
    #[arg(long, env = "RESEAM_CSV", value_name = "FILE")]
    csv: Option<PathBuf>,

    /// With --draft: plot measured and predicted speedup against k, with the break-even line,
    /// as SVG to FILE.
    #[arg(long, env = "RESEAM_PLOT", value_name = "OUT.svg")]
    plot: Option<PathBuf>,

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

    /// Write the report as JSON to FILE ("-": standard output), in the schema of
    /// docs/speculate-json.md: the baseline (per prompt "prompt", "prompt_ids", "output_ids",
    /// "text" and timings) and, with --draft, one run per configuration (acceptance, speedup,
    /// cost model, divergences).
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

#[derive(Clone, Debug)]
struct KList(Vec<KSetting>);

#[derive(Clone, Debug)]
struct StrategyList(Vec<Strategy>);

fn parse_ks(s: &str) -> Result<KList, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let k = match part {
            "auto" => KSetting::Auto,
            n => match n.parse::<usize>() {
                Ok(0) => return Err("k = 0 is the target alone, which always runs as the baseline".into()),
                Ok(k) => KSetting::Fixed(k),
                Err(_) => return Err(format!("{part:?} is not a draft length (give numbers or auto, e.g. 2,4,6)")),
            },
        };
        if !out.contains(&k) {
            out.push(k);
        }
    }
    Ok(KList(out))
}

fn parse_strategies(s: &str) -> Result<StrategyList, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let st: Strategy = part.parse()?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    Ok(StrategyList(out))
}

fn parse_baseline(s: &str) -> Result<BaselineTiming, String> {
    match s {
        "once" => Ok(BaselineTiming::Once),
        "paired" => Ok(BaselineTiming::Paired),
        _ => Err(format!("`{s}` is not a baseline timing: use once or paired")),
    }
}

fn parse_order(s: &str) -> Result<RunOrder, String> {
    match s {
        "interleaved" => Ok(RunOrder::Interleaved),
        "grouped" => Ok(RunOrder::Grouped),
        _ => Err(format!("`{s}` is not an order: use interleaved or grouped")),
    }
}

fn parse_verify(s: &str) -> Result<Verify, String> {
    match s {
        "batched" => Ok(Verify::Batched),
        "exact" => Ok(Verify::Exact),
        _ => Err(format!("{s:?}: use batched or exact")),
    }
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s).ok_or_else(|| format!("{s:?} is not a precision (one of: int8, bf16, f32)"))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.max_new_tokens == 0 {
        return Err(UsageError("--max-new-tokens must be at least 1".into()).into());
    }
    for (flag, dir) in [("--target", Some(&args.target)), ("--draft", args.draft.as_ref())] {
        if let Some(dir) = dir.filter(|d| !d.join("config.json").is_file()) {
            return Err(UsageError(format!(
                "{flag} {}: not a checkpoint folder (no config.json in it)",
                dir.display()
            ))
            .into());
        }
    }
    if args.draft.is_none() {
        for (flag, given) in [("--csv", args.csv.is_some()), ("--plot", args.plot.is_some())] {
            if given {
                return Err(UsageError(format!("{flag} reports a speculative run: give --draft DIR too")).into());
            }
        }
    }
    let opts = experiment::Options {
        target: args.target.clone(),
        draft: args.draft.clone(),
        prompts: args.prompts.clone(),
        load: LoadOptions { precision: args.precision, pack_dir: args.pack_dir.clone(), no_pack: args.no_pack },
        settings: Settings {
            ks: args.ks.0.clone(),
            strategies: args.strategies.0.clone(),
            prefix: args.prefix,
            lookbehind: args.lookbehind,
            k_max_auto: args.k_max,
            verify: args.verify,
            max_new_tokens: args.max_new_tokens,
            chat: args.chat,
            ignore_eos: args.ignore_eos,
            divergence_tolerance: args.divergence_tolerance,
            baseline: args.baseline,
            order: args.order,
            draft_vocab: args
                .draft_vocab_corpus
                .clone()
                .map(|corpus| experiment::DraftVocab { corpus, size: args.draft_vocab }),
        },
    };
    let mut meter = energy::detect();
    let view = RunView::new();
    let result = experiment::run(&opts, meter.as_mut(), &mut |e| view.show(&e));
    view.finish();
    let report = result?;
    for w in &report.warnings {
        eprintln!("reseam: warning: {w}");
    }
    write_reports(&args, &report)?;
    if args.json.as_deref() != Some(Path::new("-")) {
        std::io::stdout().lock().write_all(report::table::to_string(&report).as_bytes())?;
    }
    Ok(())
}

fn write_reports(args: &Args, r: &Report) -> anyhow::Result<()> {
    if let Some(p) = &args.json {
        if p == Path::new("-") {
            std::io::stdout().lock().write_all(report::json::to_string(r).as_bytes())?;
        } else {
            report::json::write(r, p)?;
        }
    }
    if let Some(p) = &args.csv {
        report::csv::write(r, p)?;
    }
    if let Some(p) = &args.plot {
        report::svg::write(r, p)?;
    }
    Ok(())
}

/// Progress of a speculative run: a bar on a terminal, a line per configuration otherwise.
struct RunView {
    bar: Option<indicatif::ProgressBar>,
    stage: std::cell::RefCell<String>,
}

impl RunView {
    fn new() -> RunView {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template("{msg:>18} [{bar:30}] {pos}/{len} {elapsed}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b
        });
        RunView { bar, stage: Default::default() }
    }

    fn show(&self, e: &Event) {
        let (stage, done, total) = match e {
            Event::Packing { model, done, total } => (format!("packing {model}"), *done, *total),
            Event::Run(p) => (p.stage.clone(), p.done, p.total),
        };
        if let Some(b) = &self.bar {
            b.set_message(stage);
            b.set_length(total as u64);
            b.set_position(done as u64);
            return;
        }
        let mut last = self.stage.borrow_mut();
        if *last != stage {
            match e {
                Event::Packing { .. } => eprintln!("reseam: {stage} int8 weights (once per checkpoint)"),
                Event::Run(_) if stage == "done" => eprintln!("reseam: done ({done} prompt runs)"),
                Event::Run(_) => eprintln!("reseam: {stage} ({done}/{total} prompt runs done)"),
            }
            *last = stage;
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
