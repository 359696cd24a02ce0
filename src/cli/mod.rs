//! The command line: one file per subcommand holding its clap arguments and output formatting.
//! The work itself is done by library calls that tests and the server make too.

mod bench;
mod bench_gemm;
mod detect;
mod engine;
mod fetch;
mod generate;
mod health;
mod pack;
mod serve;
mod speculate;
mod translate;
mod version;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Firefox Translations models on a from-scratch int8 CPU engine, and cross-tokenizer
/// speculative decoding of LLMs.
#[derive(Parser, Debug)]
#[command(
    name = "reseam",
    disable_version_flag = true,
    arg_required_else_help = true,
    after_help = "Examples:\n  \
    reseam fetch es,de                            models for es-en, en-es, de-en, en-de\n  \
    echo 'Hola, mundo.' | reseam translate es en\n  \
    reseam serve --port 8080                      the HTTP server (see reseam-serve(1))\n  \
    reseam --version --verbose                    the CPU and the kernels in use\n\n\
    Every flag has an environment variable, shown in each subcommand's --help."
)]
pub struct Cli {
    /// Print the version (with --verbose: the CPU, the kernels in use and the arithmetic).
    #[arg(short = 'V', long, global = false)]
    version: bool,

    /// More detail (with --version: kernels and CPU features).
    #[arg(short, long, global = true, env = "RESEAM_VERBOSE", value_parser = clap::builder::BoolishValueParser::new())]
    verbose: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Downloads Firefox Translations models (verified) into the models folder.
    Fetch(fetch::Args),
    Translate(translate::Args),
    /// Identifies the language of each input line: `language<TAB>confidence`.
    Detect(detect::Args),
    /// Packs translation models into memory-mappable files (`model.reseam`), or checks them.
    Pack(pack::Args),
    Serve(serve::Args),
    Health(health::Args),
    /// Measures the int8 matrix products per instruction set against the CPU's peak.
    BenchGemm(bench_gemm::Args),
    /// Cross-tokenizer speculative decoding of an LLM checkpoint with a draft model, measured
    /// against the target alone (without --draft: the target alone, with its prefill and decode
    /// speed).
    Speculate(speculate::Args),
    /// Measures this machine: memory read bandwidth, and int8 LLM decode/prefill against it.
    Bench(bench::Args),
    /// Writes the man page or shell completions (for packagers).
    #[command(hide = true)]
    Generate(generate::Args),
}

/// Exit codes, as the README documents them.
const EXIT_FAILURE: u8 = 1;
const EXIT_USAGE: u8 = 2;

pub fn main() -> ExitCode {
    // Help that depends on this CPU is added here, not in the definition, so that generated
    // man pages stay the same on every machine.
    let cmd = Cli::command().mut_subcommand("bench-gemm", |c| {
        let examples = c.get_after_help().map(|h| h.to_string()).unwrap_or_default();
        c.after_help(format!("{examples}\n\n{}", bench_gemm::after_help()))
    });
    let cli = match cmd.try_get_matches().and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version itself; those are not errors.
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reseam: {e:#}");
            // One rule for every subcommand, the one a server's 4xx will follow.
            ExitCode::from(if reseam::error::is_usage(e.as_ref()) { EXIT_USAGE } else { EXIT_FAILURE })
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if cli.version {
        return version::print(cli.verbose);
    }
    match cli.command {
        Some(Command::Fetch(args)) => fetch::run(args, cli.verbose),
        Some(Command::Translate(args)) => translate::run(args, cli.verbose),
        Some(Command::Detect(args)) => detect::run(args),
        Some(Command::Pack(args)) => pack::run(args),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Health(args)) => health::run(args),
        Some(Command::BenchGemm(args)) => bench_gemm::run(args),
        Some(Command::Speculate(args)) => speculate::run(args),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Generate(args)) => generate::run(args, Cli::command()),
        None => {
            Cli::command().print_help()?;
            Err(UsageError("no subcommand given".into()).into())
        }
    }
}

/// A mistake in how reseam was called (exit code 2), found after clap's own checks.
pub use reseam::error::UsageError;

/// Whether the failure is only that the reader of our output went away (`reseam ... | head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
