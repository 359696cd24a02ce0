//! `reseam generate man|completions`: what packagers ship, written from the one clap definition.
//!
//! clap_mangen renders the name, synopsis, description, options (each with its environment
//! variable and default) and subcommands; the sections a man page also needs (examples, exit
//! status, environment, files, see also) are added here, from the commands' `after_help` and
//! from the few settings reseam reads outside clap. The repository's man/ and completions/ are
//! this command's output, and a test fails when they differ from it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Command;
use clap_complete::Shell;
use clap_mangen::Man;
use roff::{Roff, bold, italic, roman};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Man pages (reseam.1 and one per subcommand) into DIR.
    Man { dir: PathBuf },
    /// Completion scripts for bash, zsh, fish, elvish and PowerShell into DIR.
    Completions { dir: PathBuf },
}

pub fn run(args: Args, cmd: Command) -> anyhow::Result<()> {
    let (dir, files) = match args.what {
        What::Man { dir } => (dir, man_pages(cmd)),
        What::Completions { dir } => (dir, completions(cmd)),
    };
    write_all(&dir, &files)
}

fn write_all(dir: &Path, files: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// The completion scripts, by file name.
pub fn completions(mut cmd: Command) -> Vec<(String, Vec<u8>)> {
    [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Elvish, Shell::PowerShell]
        .into_iter()
        .map(|shell| {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "reseam", &mut out);
            let name = match shell {
                Shell::Bash => "reseam.bash",
                Shell::Zsh => "_reseam",
                Shell::Fish => "reseam.fish",
                Shell::Elvish => "reseam.elv",
                _ => "_reseam.ps1",
            };
            (name.to_string(), out)
        })
        .collect()
}

/// reseam.1 and one page per visible subcommand (reseam-bench-llm.1 for nested ones), by file name.
pub fn man_pages(cmd: Command) -> Vec<(String, Vec<u8>)> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = Vec::new();
    add_pages(&cmd, &mut Vec::new(), &mut pages);
    pages
}

fn add_pages(cmd: &Command, path: &mut Vec<String>, pages: &mut Vec<(String, Vec<u8>)>) {
    path.push(cmd.get_name().to_string());
    pages.push((format!("{}.1", path.join("-")), page(cmd, path)));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(sub, path, pages);
    }
    path.pop();
}

/// One page. `path` is the command's words: `["reseam", "bench", "llm"]`.
fn page(cmd: &Command, path: &[String]) -> Vec<u8> {
    let man = Man::new(cmd.clone()).source(format!("reseam {}", env!("CARGO_PKG_VERSION"))).manual("User Commands");
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        let _ = man.render_options_section(&mut out);
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        let _ = man.render_subcommands_section(&mut out);
    }

    let mut roff = Roff::new();
    let blocks = after_help_blocks(cmd);
    let examples: Vec<&str> = blocks.iter().filter(|(h, _)| h == "Examples").map(|(_, b)| b.as_str()).collect();
    if !examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for b in examples {
            preformatted(&mut roff, b);
        }
    }
    for (heading, body) in blocks.iter().filter(|(h, _)| h != "Examples" && h != "Exit codes") {
        roff.control("SH", [heading.to_uppercase().as_str()]);
        preformatted(&mut roff, body);
    }

    roff.control("SH", ["EXIT STATUS"]);
    match blocks.iter().find(|(h, _)| h == "Exit codes") {
        Some((_, body)) => {
            roff.text([roman(body.split_whitespace().collect::<Vec<_>>().join(" "))]);
        }
        None => exit_status(&mut roff),
    }

    let env = environment(cmd, path);
    if !env.is_empty() {
        roff.control("SH", ["ENVIRONMENT"]);
        for (var, text) in env {
            roff.control("TP", []);
            roff.text([bold(var)]);
            roff.text([roman(text)]);
        }
    }

    let files = files(path);
    if !files.is_empty() {
        roff.control("SH", ["FILES"]);
        for (file, text) in files {
            roff.control("TP", []);
            roff.text([italic(file)]);
            roff.text([roman(text)]);
        }
    }

    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(see_also(cmd, path).join(", "))]);
    let _ = roff.to_writer(&mut out);
    out
}

/// A command's `after_help` as (heading, body) blocks: blocks are separated by an empty line and
/// start with `Heading:` (its text may go on on the same line). Text before any heading is Notes.
fn after_help_blocks(cmd: &Command) -> Vec<(String, String)> {
    let Some(help) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) else { return Vec::new() };
    let help = help.to_string();
    help.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|b| match b.split_once(':') {
            Some((head, rest))
                if !head.contains('\n') && head.len() < 20 && head.chars().all(|c| c.is_alphabetic() || c == ' ') =>
            {
                (head.to_string(), rest.trim_start_matches(' ').trim_start_matches('\n').to_string())
            }
            _ => ("Notes".to_string(), b.to_string()),
        })
        .collect()
}

/// Lines kept as they are (examples line up their comments with spaces).
fn preformatted(roff: &mut Roff, body: &str) {
    roff.control("PP", []);
    roff.control("nf", []);
    roff.control("RS", ["4"]);
    for line in body.lines() {
        roff.text([roman(line.trim_start())]);
    }
    roff.control("RE", []);
    roff.control("fi", []);
}

/// The rule every subcommand follows (src/error.rs; the README's "Exit codes").
fn exit_status(roff: &mut Roff) {
    for (code, text) in [
        ("0", "Success. A closed pipe (the reader of the output went away) also ends with 0."),
        ("1", "A failure: a damaged model file, the network, a failed write."),
        (
            "2",
            "A usage error, the caller's mistake: a bad flag or setting, an input file that is missing or \
             malformed, a model or language pair that is not installed or offered.",
        ),
    ] {
        roff.control("TP", []);
        roff.text([bold(code)]);
        roff.text([roman(text)]);
    }
}

/// Every environment variable the command reads: its flags' (after clap's propagation of the
/// global ones), then those read outside clap.
fn environment(cmd: &Command, path: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut args: Vec<_> = cmd.get_arguments().filter(|a| !a.is_hide_set() && a.get_env().is_some()).collect();
    args.sort_by_key(|a| a.get_env().map(|e| e.to_os_string()));
    for a in args {
        let var = a.get_env().unwrap_or_default().to_string_lossy().into_owned();
        let flag = match (a.get_long(), a.get_value_names()) {
            (Some(l), _) => format!("--{l}"),
            (None, Some(v)) => v.join(" "),
            (None, None) => a.get_id().to_string(),
        };
        let default = a.get_default_values().iter().map(|v| v.to_string_lossy()).collect::<Vec<_>>().join(",");
        let text = if default.is_empty() || a.is_hide_default_value_set() {
            format!("The same as {flag}.")
        } else {
            format!("The same as {flag} (default: {default}).")
        };
        out.push((var, text));
    }
    let sub = path.get(1).map(String::as_str).unwrap_or("");
    let mode = path.get(2).map(String::as_str).unwrap_or("");
    let models = matches!(sub, "fetch" | "translate" | "detect" | "pack" | "serve") || mode == "translate";
    // Every command that runs the int8 kernels (the top level: --version --verbose names them).
    if !matches!(sub, "fetch" | "detect" | "health") {
        out.push((
            "RESEAM_MT_ISA".into(),
            "Forces the int8 kernels: reference, avx2, avx512bw, avxvnni, avx512vnni, amx or neon \
             (default: the best this CPU runs; `reseam --version --verbose` names it). Output does not \
             change with it, only speed."
                .into(),
        ));
    }
    if matches!(sub, "translate" | "serve") || mode == "translate" {
        out.push((
            "RESEAM_MT_PROFILE".into(),
            "1: at exit, seconds per kind of operation (encoder, decoder, products, attention, ...) and the \
             bytes of weights read per source piece and per decoder row, and the int8 products' multiply-adds and \
             their rate, on stderr."
                .into(),
        ));
    }
    if models || sub == "speculate" || sub.is_empty() {
        out.push(("XDG_DATA_HOME, XDG_CACHE_HOME, HOME".into(), "Where the default folders are (see FILES).".into()));
    }
    if matches!(sub, "fetch" | "translate") || sub.is_empty() {
        out.push((
            "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY".into(),
            "A proxy for downloading models (lower case too).".into(),
        ));
    }
    if sub == "serve" {
        out.push((
            "NOTIFY_SOCKET".into(),
            "Set by systemd for Type=notify: READY=1 is sent once the server listens and its models are \
             loaded, RELOADING=1 on SIGHUP, STOPPING=1 on SIGTERM."
                .into(),
        ));
        out.push((
            "CREDENTIALS_DIRECTORY".into(),
            "Set by systemd's LoadCredential=: the token is read from its file translate-token when \
             neither --token nor --token-file is given."
                .into(),
        ));
    }
    out
}

/// The files and folders the command reads or writes when not told otherwise.
fn files(path: &[String]) -> Vec<(String, String)> {
    let sub = path.get(1).map(String::as_str).unwrap_or("");
    let mode = path.get(2).map(String::as_str).unwrap_or("");
    let mut out = Vec::new();
    let models = matches!(sub, "fetch" | "translate" | "detect" | "pack" | "serve" | "") || mode == "translate";
    if models {
        out.push((
            "$XDG_DATA_HOME/reseam/models".to_string(),
            "The models folder (--models, MODELS_DIR): one <from>-<to>/ folder per language pair with \
             Firefox's file names and reseam's manifest.json. Without XDG_DATA_HOME: \
             ~/.local/share/reseam/models (~/Library/Application Support/reseam/models on macOS); \
             ./models without a home directory."
                .to_string(),
        ));
    }
    if matches!(sub, "translate" | "pack" | "serve" | "") || mode == "translate" {
        out.push((
            "<model folder>/model.reseam".to_string(),
            "A model's pack: its weights prepared for the kernels, memory-mapped on every later start \
             (written on first use; --pack-dir, RESEAM_PACK_DIR put packs elsewhere)."
                .to_string(),
        ));
    }
    if matches!(sub, "translate" | "pack" | "serve" | "speculate" | "") || mode == "translate" {
        out.push((
            "$XDG_CACHE_HOME/reseam/packed".to_string(),
            "Packs of read-only model folders and packed LLM weights (without XDG_CACHE_HOME: \
             ~/.cache/reseam/packed; ~/Library/Caches/reseam/packed on macOS)."
                .to_string(),
        ));
    }
    if sub == "serve" || sub.is_empty() {
        out.push((
            "/var/lib/reseam/models".to_string(),
            "The models folder of the systemd unit reseam.service (its StateDirectory).".to_string(),
        ));
        out.push((
            "/etc/default/reseam".to_string(),
            "The unit's EnvironmentFile: every setting of reseam serve as VAR=value.".to_string(),
        ));
        out.push((
            "$CREDENTIALS_DIRECTORY/translate-token".to_string(),
            "The token, as systemd's LoadCredential=translate-token:FILE hands it over.".to_string(),
        ));
    }
    out
}

/// The parent's page, the subcommands' pages, and for `serve` the unit that runs it.
fn see_also(cmd: &Command, path: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if path.len() > 1 {
        out.push(format!("{}(1)", path[..path.len() - 1].join("-")));
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out.push(format!("{}-{}(1)", path.join("-"), sub.get_name()));
    }
    if matches!(path.get(1).map(String::as_str), Some("serve" | "health" | "fetch")) {
        out.push("systemd.exec(5)".into());
        out.push("systemd.service(5)".into());
    }
    let related: &[&str] = match path.get(1).map(String::as_str) {
        Some("fetch") => &["reseam-translate(1)", "reseam-serve(1)"],
        Some("serve") => &["reseam-fetch(1)", "reseam-health(1)"],
        Some("health") => &["reseam-serve(1)"],
        Some("translate") => &["reseam-fetch(1)", "reseam-pack(1)", "reseam-detect(1)"],
        _ => &[],
    };
    out.extend(related.iter().map(|s| s.to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::CommandFactory;

    fn committed(dir: &str) -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| {
                let p = e.expect("dir entry").path();
                (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).expect("read"))
            })
            .collect();
        files.sort();
        files
    }

    /// What differs between the committed files and a fresh generation, by name.
    fn stale(dir: &str, mut fresh: Vec<(String, Vec<u8>)>) -> Vec<String> {
        fresh.sort();
        let old = committed(dir);
        let mut names: Vec<String> = fresh.iter().chain(old.iter()).map(|(n, _)| n.clone()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|n| {
                let a = fresh.iter().find(|(m, _)| m == n).map(|(_, b)| b);
                let b = old.iter().find(|(m, _)| m == n).map(|(_, b)| b);
                a != b
            })
            .collect()
    }

    const REGENERATE: &str = "regenerate them: cargo run --release -- generate man man && \
                              cargo run --release -- generate completions completions";

    #[test]
    fn committed_man_pages_are_current() {
        let stale = stale("man", man_pages(Cli::command()));
        assert!(stale.is_empty(), "man/ is stale ({}); {REGENERATE}", stale.join(", "));
    }

    #[test]
    fn committed_completions_are_current() {
        let stale = stale("completions", completions(Cli::command()));
        assert!(stale.is_empty(), "completions/ is stale ({}); {REGENERATE}", stale.join(", "));
    }

    /// Walks the definition itself, not the generator, so a subcommand the generator skipped
    /// would show up here.
    #[test]
    fn every_subcommand_has_a_man_page_with_every_section() {
        fn walk(cmd: &Command, path: &mut Vec<String>, names: &mut Vec<(String, Command)>) {
            path.push(cmd.get_name().to_string());
            names.push((format!("{}.1", path.join("-")), cmd.clone()));
            for s in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
                walk(s, path, names);
            }
            path.pop();
        }
        let mut cmd = Cli::command();
        cmd.build();
        let mut pages = Vec::new();
        walk(&cmd, &mut Vec::new(), &mut pages);
        assert!(pages.len() >= 13, "{} pages", pages.len());
        for name in ["reseam-serve.1", "reseam-fetch.1", "reseam-health.1", "reseam-bench-translate.1"] {
            assert!(pages.iter().any(|(n, _)| n == name), "{name} missing from the walk");
        }
        assert!(!pages.iter().any(|(n, _)| n.contains("generate")), "the hidden packaging command got a page");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
        for (name, cmd) in pages {
            let text =
                std::fs::read_to_string(dir.join(&name)).unwrap_or_else(|e| panic!("man/{name}: {e}; {REGENERATE}"));
            for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH \"EXIT STATUS\"", ".SH \"SEE ALSO\""] {
                assert!(text.contains(section), "man/{name} has no {section}");
            }
            if name != "reseam.1" {
                assert!(text.contains(".SH EXAMPLES"), "man/{name} has no examples: give its command an after_help");
            }
            // Every flag, with its environment variable and default as --help shows them.
            for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = a.get_long() {
                    assert!(text.contains(&format!("\\-\\-{}", long.replace('-', "\\-"))), "man/{name}: --{long}");
                }
                if let Some(env) = a.get_env() {
                    let env = env.to_string_lossy().replace('-', "\\-");
                    assert!(text.contains(&format!("\\fB{env}\\fR environment variable")), "man/{name}: {env}");
                    assert!(text.matches(&*env).count() >= 2, "man/{name}: {env} not in ENVIRONMENT");
                }
                if !a.is_hide_default_value_set() && a.get_num_args().is_some_and(|n| n.takes_values()) {
                    let d: Vec<_> = a.get_default_values().iter().map(|d| d.to_string_lossy()).collect();
                    if !d.is_empty() {
                        let d = d.join(",").replace('-', "\\-");
                        assert!(text.contains(&format!("[default: {d}]")), "man/{name}: default {d}");
                    }
                }
            }
            if ["reseam.1", "reseam-fetch.1", "reseam-serve.1", "reseam-translate.1"].contains(&name.as_str()) {
                assert!(
                    text.contains(".SH FILES") && text.contains("XDG_DATA_HOME/reseam/models"),
                    "man/{name}: FILES"
                );
            }
        }
    }
}
