//! `reseam detect`: the language of each input line (or record), as `language<TAB>confidence`.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use reseam::detect::Detector;

use super::UsageError;

/// Identifies the language of each line of standard input.
///
/// Prints `language<TAB>confidence` per input line: a Firefox language tag among the candidates
/// and a confidence from 0 to 1 (the share of the evidence for that language). Links, e-mail
/// addresses, mentions, hashtags and emoji are not read; a line with nothing else (or empty)
/// prints `und<TAB>0.00`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  echo 'Hola, ¿qué tal?' | reseam detect\n  \
    reseam detect --languages es,pt,gl,ca < posts.txt")]
pub struct Args {
    /// The candidate languages, comma-separated Firefox tags (`es,de,zh-Hant`) [default: the
    /// languages of the models installed in the models folder, or all of Firefox's languages when
    /// none is installed]. Fewer candidates give more accurate and faster answers.
    #[arg(long, env = "RESEAM_LANGUAGES", value_name = "LANGS", value_delimiter = ',')]
    pub languages: Vec<String>,

    /// The models folder whose installed languages are the default candidates [default: the user
    /// data directory's reseam/models, e.g. ~/.local/share/reseam/models].
    #[arg(long, env = "MODELS_DIR", value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Records are separated by NUL bytes instead of line breaks (as `sort -z`), so that a post
    /// may hold line breaks; output lines still end with a line break.
    #[arg(short = 'z', long, env = "RESEAM_NULL_DATA", value_parser = clap::builder::BoolishValueParser::new())]
    pub null_data: bool,
}

/// The detector `languages` (or, if empty, the models folder) asks for; a bad tag is a usage error.
pub fn detector(languages: &[String], models: Option<PathBuf>) -> anyhow::Result<Detector> {
    let models = models.unwrap_or_else(reseam::paths::default_models_dir);
    let built = if languages.is_empty() { Detector::for_models(&models) } else { Detector::new(languages) };
    built.map_err(|e| UsageError(e.to_string()).into())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let detector = detector(&args.languages, args.models)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let separator = if args.null_data { 0 } else { b'\n' };
    let mut record = 1;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(separator, &mut buf)? == 0 {
            break;
        }
        if buf.last() == Some(&separator) {
            buf.pop();
        }
        let text = std::str::from_utf8(&buf).map_err(|_| {
            anyhow::anyhow!(
                "input record {record} is not valid UTF-8; convert the input to UTF-8 first (e.g. with iconv)"
            )
        })?;
        let found = detector.detect(text);
        writeln!(out, "{}\t{:.2}", found.language, found.confidence)?;
        record += 1;
    }
    out.flush()?;
    Ok(())
}
