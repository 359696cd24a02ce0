//! `reseam translate FROM TO`: stdin to stdout, one line (or record) out per line (or record) in.

use std::io::IsTerminal;
use std::path::PathBuf;

use reseam::translate::records::{self, AUTO, Framing};
use reseam::translate::{ArithmeticChoice, Service, TranslateOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Arith {
    /// What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on
    /// ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW).
    Auto,
    /// Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox
    /// compute with `maddubs`: reproduces Firefox on AVX2 machines.
    Saturating,
    /// Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU.
    Exact,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MklOrders {
    /// What Firefox computes on this CPU: MKL's AMD orders on AMD CPUs with AVX2 (Zen), its
    /// Intel orders elsewhere.
    Auto,
    /// MKL's orders on Intel CPUs (reproduces Firefox on Intel machines).
    Intel,
    /// MKL's orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5).
    Zen,
}

impl MklOrders {
    /// Makes the choice the process's: every translation after this uses it.
    pub fn apply(self) {
        use reseam::marian::layers::attention::Mkl;
        Mkl::set_process(match self {
            MklOrders::Auto => Mkl::of_this_cpu(),
            MklOrders::Intel => Mkl::Intel,
            MklOrders::Zen => Mkl::Zen,
        });
    }
}

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

    /// A model folder, or a folder of `<from>-<to>/` model folders [default: the user data
    /// directory's reseam/models, e.g. ~/.local/share/reseam/models].
    #[arg(long, env = "MODELS_DIR", value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// The model file to use when the folder holds several (by default the int8
    /// `model.*.intgemm.alphas.bin`, as Firefox). A name inside the folder or a path.
    #[arg(long, env = "RESEAM_MODEL", value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Restrict each sentence's output words to the model's lexical shortlist
    /// (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox.
    #[arg(long, env = "RESEAM_SHORTLIST", value_parser = clap::builder::BoolishValueParser::new())]
    pub shortlist: bool,

    /// Integer arithmetic of the int8 products. Firefox's results depend on the CPU: `auto`
    /// matches Firefox on this machine, `exact` gives the same output everywhere.
    #[arg(long, env = "RESEAM_MT_ARITHMETIC", value_enum, default_value_t = Arith::Auto)]
    pub arithmetic: Arith,

    /// Summation orders of the float attention products. Firefox's engine sums them with Intel's
    /// MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties):
    /// `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine.
    #[arg(long, env = "RESEAM_MT_MKL", value_enum, default_value_t = MklOrders::Auto)]
    pub mkl: MklOrders,

    /// Most sentences translated together (larger is faster; the output does not change).
    #[arg(long, env = "RESEAM_MT_BATCH", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,

    /// Compute threads (default: one per physical core). Sentences of all input lines share
    /// them; the output does not change.
    #[arg(long, env = "THREADS", value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,

    /// Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of
    /// another process.
    #[arg(long, env = "PIN_FROM_CORE", value_name = "N")]
    pub pin_from_core: Option<usize>,

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
    pub pack: PackArgs,

    #[command(flatten)]
    pub source: super::fetch::SourceArgs,
}

/// How translation models are loaded (shared by `translate`, `pack` and `bench models`).
#[derive(clap::Args, Debug, Clone)]
pub struct PackArgs {
    /// Read the model files into memory at every start instead of mapping their pack
    /// (`model.reseam`, written on first use next to the model, or in
    /// ~/.cache/reseam/packed when the model folder is read-only).
    #[arg(long, env = "RESEAM_NO_PACK", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_pack: bool,

    /// Keep packs in this folder (one subfolder per model) instead of next to the models.
    #[arg(long, env = "RESEAM_PACK_DIR", value_name = "DIR")]
    pub pack_dir: Option<PathBuf>,
}

pub fn run(args: Args, verbose: bool) -> anyhow::Result<()> {
    args.mkl.apply();
    let models = args.models.unwrap_or_else(reseam::paths::default_models_dir);
    let fetch = (!args.offline).then(|| args.source.options(models.clone(), verbose));
    let framing = match (args.jsonl, args.null_data) {
        (true, _) => Framing::Jsonl,
        (_, true) => Framing::Null,
        _ => Framing::Lines,
    };
    let auto = args.from.eq_ignore_ascii_case(AUTO);
    let records = auto || args.html || framing != Framing::Lines;
    // JSON records may ask for `auto` themselves; lingua reads its models only when first used.
    let detector = (auto || framing == Framing::Jsonl)
        .then(|| super::detect::detector(&args.languages, Some(models.clone())))
        .transpose()?;
    let opts = TranslateOptions {
        models,
        model_file: args.model,
        from: args.from,
        to: args.to,
        shortlist: args.shortlist,
        arithmetic: match args.arithmetic {
            Arith::Auto => ArithmeticChoice::Auto,
            Arith::Saturating => ArithmeticChoice::Saturating,
            Arith::Exact => ArithmeticChoice::Exact,
        },
        debug: args.debug,
        max_batch: args.batch as usize,
        threads: args.threads,
        pin_from_core: args.pin_from_core,
        raw: args.raw,
        split_sentences: !args.no_split,
        fetch,
        no_pack: args.pack.no_pack,
        pack_dir: args.pack.pack_dir,
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
