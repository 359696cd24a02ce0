//! `reseam generate man|completions`: what packagers ship, written from the one clap definition.

use std::path::PathBuf;

use anyhow::Context;
use clap_complete::Shell;

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

pub fn run(args: Args, cmd: clap::Command) -> anyhow::Result<()> {
    match args.what {
        What::Man { dir } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir).with_context(|| format!("writing man pages to {}", dir.display()))?;
        }
        What::Completions { dir } => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let mut cmd = cmd;
            for shell in [Shell::Bash, Shell::Zsh, Shell::Fish, Shell::Elvish, Shell::PowerShell] {
                clap_complete::generate_to(shell, &mut cmd, "reseam", &dir)
                    .with_context(|| format!("writing {shell} completions to {}", dir.display()))?;
            }
        }
    }
    Ok(())
}
