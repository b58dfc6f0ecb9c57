//! `floxlog-conformance`: the runner of the downloadable conformance kit.
//! The same command as `floxlog conformance` (the very source files of
//! floxlog-cli, included below), built without the CLI's other commands
//! and their dependencies so that it links statically and small
//! (scripts/package-conformance.sh).

#[macro_use]
#[allow(unused_macros)]
#[path = "../../floxlog-cli/src/stdout.rs"]
mod stdout;

mod common {
    /// Result of a subcommand: the exit code.
    pub type CmdResult = Result<u8, floxlog::tape::TapeError>;
}

#[path = "../../floxlog-cli/src/cmd/conformance.rs"]
mod conformance;

use clap::Parser;
use std::process::ExitCode;

/// Exit codes, shown in `--help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  every case passed (or failed as listed in --expect-fail)
  1  a case failed (FAIL or XPASS)
  2  usage errors, no usable corpus, a corpus file that does not match SHA256SUMS
  3  I/O errors (writing the report)";

#[derive(Parser)]
#[command(name = "floxlog-conformance", version)]
struct Cli {
    #[command(flatten)]
    args: conformance::Args,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match (conformance::run(cli.args), stdout::finish()) {
        (Err(e), _) => {
            eprintln!("floxlog-conformance: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
        (Ok(_), Some(e)) => {
            eprintln!("floxlog-conformance: error: writing the report to <stdout>: {e}");
            ExitCode::from(3)
        }
        (Ok(code), None) => ExitCode::from(code),
    }
}
