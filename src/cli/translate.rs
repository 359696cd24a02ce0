//! `reseam translate FROM TO`: stdin to stdout, one line (or record) out per line (or record) in.

use std::io::IsTerminal;
use std::path::PathBuf;

use reseam::translate::records::{self, AUTO, Framing};
use reseam::translate::{Service, TranslateOptions};

use super::engine::EngineArgs;

/// Translates text from standard input to standard output, line by line.
///
/// Every input line gives one output line; empty lines stay empty and the spacing around and
/// between sentences is kept. Uses Mozilla's Firefox Translations models (Marian transformers);
/// the output equals Firefox's engine (Bergamot) translating the same sentence.
///
/// Posts that hold line breaks go through as one record each with `--jsonl` or `-z`. With FROM
/// `auto` the language of each line (record) is identified first, among the languages of the
/// installed models (see `reseam detect`).
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  echo 'Hola, mundo.' | reseam translate es en\n  \
    reseam translate --models ./models/es-en es en < input.txt > output.txt\n  \
    reseam translate auto en < posts-in-any-language.txt\n  \
    echo '{\"id\": 1, \"text\": \"Hola.\\nAdiós.\"}' | reseam translate --jsonl es en\n  \
    printf 'Hola.\\nAdiós.\\0Buenos días.\\0' | reseam translate -z es en | tr '\\0' '\\n'")]
pub struct Args {
    /// Source language code, e.g. `es`; `auto` identifies the language of each line (record).
    pub from: String,
    /// Target language code, e.g. `en`.
    pub to: String,

    #[command(flatten)]
    pub engine: EngineArgs,

    /// The model file to use when the folder holds several (by default the int8
    /// `model.*.intgemm.alphas.bin`, as Firefox). A name inside the folder or a path.
    #[arg(long, env = "RESEAM_MODEL", value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Most sentences translated together on each compute thread, as a Bergamot worker's batch
    /// (larger is faster; the output does not change).
    #[arg(long, env = "RESEAM_MT_BATCH", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,

    /// Print every layer's values to stderr in the format of Marian's debug() messages, to
    /// compare with Marian layer by layer.
    #[arg(long, env = "RESEAM_MT_DEBUG", value_parser = clap::builder::BoolishValueParser::new())]
    pub debug: bool,

    /// Leave links, e-mail addresses, emoji and @mentions to the model instead of keeping them
    /// out and putting them back; sentence splitting and spacing stay. For comparing the engine
    /// line for line with other engines.
    #[arg(long, env = "RESEAM_RAW", value_parser = clap::builder::BoolishValueParser::new())]
    pub raw: bool,

    /// Translate each line as one sentence instead of splitting it into sentences first, as
    /// Marian and Bergamot (`ssplit-mode: sentence`) read their input. Lines longer than the
    /// model's limit are still cut.
    #[arg(long, env = "RESEAM_NO_SPLIT", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_split: bool,

    /// Never download: fail if the pair (or its route through English) is not in the models
    /// folder. Without it a missing pair is fetched first, as `reseam fetch FROM-TO` would.
    #[arg(long, env = "RESEAM_OFFLINE", value_parser = clap::builder::BoolishValueParser::new())]
    pub offline: bool,

    /// Read and write JSON Lines: one object per line with a string `text` (one post, which may
    /// hold line breaks as `\n`) and optional `from`, `to` (override FROM and TO) and `id` or any
    /// other fields. Each object comes back as it was, with `translation` added (and `detected`,
    /// `{"language", "confidence"}`, when the source is `auto`); a record that cannot be
    /// translated gets `error` instead, and the run goes on.
    #[arg(long, env = "RESEAM_JSONL", value_parser = clap::builder::BoolishValueParser::new(), conflicts_with = "null_data")]
    pub jsonl: bool,

    /// Read each line (record) as HTML: its text is translated and every tag, attribute, comment
    /// and entity kept byte for byte; `script`, `style`, `code`, `pre`, `translate="no"`, and
    /// links, mentions and hashtags in `<a>` (as Mastodon writes them) are not translated. Block
    /// tags (`p`, `br`, `li`...) end sentences; inline ones (`b`, `em`, `a`, `span`...) do not and
    /// are placed on the translated words, by the decoder's alignment, as Firefox does.
    #[arg(long, env = "RESEAM_HTML", value_parser = clap::builder::BoolishValueParser::new())]
    pub html: bool,

    /// Records are separated by NUL bytes instead of line breaks (as `sort -z` and `xargs -0`),
    /// so that a post may hold line breaks; each translation is written followed by a NUL.
    #[arg(short = 'z', long, env = "RESEAM_NULL_DATA", value_parser = clap::builder::BoolishValueParser::new())]
    pub null_data: bool,

    /// With FROM `auto`: the candidate languages, comma-separated (`es,de,zh-Hant`) [default:
    /// the languages of the models installed in the models folder, or all of Firefox's languages
    /// when none is installed, as `reseam detect`].
    #[arg(long, env = "RESEAM_LANGUAGES", value_name = "LANGS", value_delimiter = ',')]
    pub languages: Vec<String>,

    #[command(flatten)]
    pub source: super::fetch::SourceArgs,
}

pub fn run(args: Args, verbose: bool) -> anyhow::Result<()> {
    let models = args.engine.models_dir();
    let fetch = (!args.offline).then(|| args.source.options(models.clone(), verbose));
    let framing = match (args.jsonl, args.null_data) {
        (true, _) => Framing::Jsonl,
        (_, true) => Framing::Null,
        _ => Framing::Lines,
    };
    let auto = args.from.eq_ignore_ascii_case(AUTO);
    let records = auto || args.html || framing != Framing::Lines;
    // JSON records may ask for `auto` themselves; the detector unpacks its models only when first used.
    let detector = (auto || framing == Framing::Jsonl)
        .then(|| super::detect::detector(&args.languages, Some(models.clone())))
        .transpose()?;
    let opts = TranslateOptions {
        model_file: args.model,
        debug: args.debug,
        max_batch: args.batch as usize,
        raw: args.raw,
        split_sentences: !args.no_split,
        fetch,
        ..args.engine.options(&args.from, &args.to)
    };
    let (from, to) = (opts.from.clone(), opts.to.clone());
    // One engine for every pair this run meets.
    let service = Service::open(opts, detector)?;
    // A missing or bad pair is reported before any input is read.
    let translator = if auto { None } else { Some(service.pair(&from, &to)?) };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    // A person typing or watching: translate and show each line at once.
    let interactive = stdin.is_terminal() || stdout.is_terminal();
    // A progress spinner only where it is seen and harms nothing: on a terminal stderr, while
    // input comes from a file or pipe and output goes elsewhere.
    let bar = (std::io::stderr().is_terminal() && !interactive).then(|| {
        let b = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {pos} lines translated ({per_sec}) {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        b
    });
    let mut progress = |n: usize| {
        if let Some(b) = &bar {
            b.set_position(n as u64);
        }
    };
    let profiling = reseam::profile::init_from_env();
    let result: anyhow::Result<usize> = match translator {
        Some(t) if !records => {
            t.translate_stream(stdin.lock(), stdout.lock(), interactive, &mut progress).map_err(Into::into)
        }
        _ => records::translate_stream(
            &service,
            framing,
            args.html,
            (&from, &to),
            stdin.lock(),
            stdout.lock(),
            interactive,
            &mut progress,
        )
        .map_err(Into::into),
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if profiling {
        eprint!("{}", reseam::profile::report());
    }
    result?;
    Ok(())
}
