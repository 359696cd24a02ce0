//! `reseam`: parse the command line, run, map the outcome to an exit code.
//! 0 ok, 1 failure, 2 usage; a closed output pipe is not a failure.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
