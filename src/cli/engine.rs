//! The engine's settings: one set of flags (and environment variables), flattened into every
//! subcommand that runs the engine (`translate`, `serve`, `bench translate`, `bench models`),
//! each read into one library type that goes to the engine as it is.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::ValueEnum;

use reseam::translate::{ArithmeticChoice, MklChoice, TranslateOptions};

#[derive(clap::Args, Debug, Clone)]
pub struct EngineArgs {
    /// A model folder, or a folder of `<from>-<to>/` model folders (as `reseam fetch` writes
    /// them) [default: the user data directory's reseam/models, e.g. ~/.local/share/reseam/models].
    #[arg(long, env = "MODELS_DIR", value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Compute threads (default: one per physical core). The sentences of every input line,
    /// request and language pair share them; the output does not change.
    #[arg(long, env = "THREADS", value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,

    /// Pin compute thread i to core N + i (Linux), e.g. to keep a server off the cores of
    /// another process.
    #[arg(long, env = "PIN_FROM_CORE", value_name = "N")]
    pub pin_from_core: Option<usize>,

    /// Integer arithmetic of the int8 products. Firefox's results depend on the CPU: `auto`
    /// matches Firefox on this machine, `exact` gives the same output everywhere.
    #[arg(long, env = "RESEAM_MT_ARITHMETIC", value_enum, default_value_t = ArithmeticChoice::Auto)]
    pub arithmetic: ArithmeticChoice,

    /// Summation orders of the float attention products. Firefox's engine sums them with Intel's
    /// MKL, whose orders differ between Intel and AMD CPUs, so its output does too (at near-ties):
    /// `auto` matches Firefox on this machine, `intel` or `zen` Firefox on such a machine.
    #[arg(long, env = "RESEAM_MT_MKL", value_enum, default_value_t = MklChoice::Auto)]
    pub mkl: MklChoice,

    /// Restrict each sentence's output words to the model's lexical shortlist
    /// (`lex.*.s2t.bin`): faster, slightly different output. Off by default, as in Firefox.
    #[arg(long, env = "RESEAM_SHORTLIST", value_parser = clap::builder::BoolishValueParser::new())]
    pub shortlist: bool,

    #[command(flatten)]
    pub pack: PackArgs,
}

/// The scheduler's batch under the seed's name, MAX_BATCH, for the subcommands that share the
/// engine between many callers (`serve`, `bench translate`); `translate` keeps its own name for
/// the same setting (`--batch`, RESEAM_MT_BATCH).
#[derive(clap::Args, Debug, Clone)]
pub struct BatchArgs {
    /// Most sentences of one model decoded together in one step of one compute thread (with
    /// THREADS threads, up to THREADS times as many are live). Under `serve` an eighth of them
    /// are kept for light requests (a few sentences), which then start at once while heavy ones
    /// fill the rest.
    #[arg(long, env = "MAX_BATCH", value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_batch: u16,
}

/// How translation models are loaded.
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

impl EngineArgs {
    /// The models folder: the flag's, else the default one.
    pub fn models_dir(&self) -> PathBuf {
        self.models.clone().unwrap_or_else(reseam::paths::default_models_dir)
    }

    /// The library's options with these settings (the rest as [`TranslateOptions::new`] sets
    /// them: the caller adds its own).
    pub fn options(&self, from: &str, to: &str) -> TranslateOptions {
        let mut o = TranslateOptions::new(self.models_dir(), from, to);
        o.threads = self.threads;
        o.pin_from_core = self.pin_from_core;
        o.arithmetic = self.arithmetic;
        o.mkl = self.mkl;
        o.shortlist = self.shortlist;
        o.no_pack = self.pack.no_pack;
        o.pack_dir = self.pack.pack_dir.clone();
        o
    }

    /// These settings as flags again, for a child process of this binary (`bench models` runs
    /// its measured phases in one) that must not fall back to the environment's.
    pub fn to_args(&self) -> Vec<OsString> {
        let name = |v: Option<clap::builder::PossibleValue>| v.map(|v| v.get_name().to_string()).unwrap_or_default();
        let mut a: Vec<OsString> = vec!["--models".into(), self.models_dir().into()];
        a.extend(["--threads".into(), self.threads.to_string().into()]);
        if let Some(n) = self.pin_from_core {
            a.extend(["--pin-from-core".into(), n.to_string().into()]);
        }
        a.extend(["--arithmetic".into(), name(self.arithmetic.to_possible_value()).into()]);
        a.extend(["--mkl".into(), name(self.mkl.to_possible_value()).into()]);
        // Switches: off is their absence (the child inherits the environment that left them off).
        if self.shortlist {
            a.push("--shortlist".into());
        }
        if self.pack.no_pack {
            a.push("--no-pack".into());
        }
        if let Some(d) = &self.pack.pack_dir {
            a.extend(["--pack-dir".into(), d.into()]);
        }
        a
    }
}
