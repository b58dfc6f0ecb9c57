//! `floxlog`: inspect, verify, read, write, convert and repair `.floxlog`
//! tapes. See `floxlog --help`.

#[macro_use]
mod stdout;
mod cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Exit codes, shown in every `--help`.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (verify: no errors; warnings only fail with --strict)
  1  data errors: damaged or inconsistent segments, a manifest of another version,
     bad input events, verification failures, failed conformance cases
  2  usage errors: bad arguments or options, no usable conformance corpus
  3  I/O errors: missing files, permissions, disk full
  4  diff: a tape is damaged (1 there means the tapes differ)";

#[derive(Parser)]
#[command(
    name = "floxlog",
    version,
    about = "Read, check, cut and convert .floxlog market-data tapes",
    long_about = "Read, check, cut and convert .floxlog market-data tapes.\n\n\
A tape is a directory of segment files: flox's layout (`<created_ns>.floxlog`, every record \
type interleaved, optional `.manifest` and `metadata.json`) or the spec 1.0 layout \
(`manifest.json` with per-type series `trades-000000.bin`, `book-000000.bin`). Commands that \
read take tape directories, directories of *.floxlog files, or single segment files.\n\n\
Start with `floxlog demo`.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    Inspect(cmd::inspect::Args),
    Verify(cmd::verify::Args),
    Diff(cmd::diff::Args),
    Cat(cmd::cat::Args),
    Book(cmd::book::Args),
    Encode(cmd::encode::Args),
    Convert(cmd::convert::Args),
    Export(cmd::export::Args),
    Gaps(cmd::gaps::Args),
    Recover(cmd::recover::Args),
    Reindex(cmd::reindex::Args),
    Report(cmd::report::Args),
    Manifest(cmd::manifest::Args),
    Conformance(cmd::conformance::Args),
    Demo(cmd::demo::Args),
}

fn main() -> ExitCode {
    // Library hints name the remedies in the CLI's words (its commands and
    // flags); the C ABI and Python render their own.
    floxlog::tape::set_program_vocabulary(&cmd::words::Cli);
    let cli = Cli::parse();
    let r = match cmd::local::check(&cli.cmd) {
        Err(e) => Err(e),
        Ok(_) => run(cli.cmd),
    };
    finish(r)
}

/// Runs the subcommand.
fn run(cmd: Cmd) -> cmd::common::CmdResult {
    match cmd {
        Cmd::Inspect(a) => cmd::inspect::run(a),
        Cmd::Verify(a) => cmd::verify::run(a),
        Cmd::Diff(a) => cmd::diff::run(a),
        Cmd::Cat(a) => cmd::cat::run(a),
        Cmd::Book(a) => cmd::book::run(a),
        Cmd::Encode(a) => cmd::encode::run(a),
        Cmd::Convert(a) => cmd::convert::run(a),
        Cmd::Export(a) => cmd::export::run(a),
        Cmd::Gaps(a) => cmd::gaps::run(a),
        Cmd::Recover(a) => cmd::recover::run(a),
        Cmd::Reindex(a) => cmd::reindex::run(a),
        Cmd::Report(a) => cmd::report::run(a),
        Cmd::Manifest(a) => cmd::manifest::run(a),
        Cmd::Conformance(a) => cmd::conformance::run(a),
        Cmd::Demo(a) => cmd::demo::run(a),
    }
}

/// The exit code of `r`, its error printed.
fn finish(r: cmd::common::CmdResult) -> ExitCode {
    // A report cut short by a write error is not a success.
    match (r, stdout::finish()) {
        (Err(e), _) => {
            eprintln!("floxlog: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
        (Ok(_), Some(e)) => {
            eprintln!("floxlog: error: writing the report to <stdout>: {e}");
            ExitCode::from(3)
        }
        (Ok(code), None) => ExitCode::from(code),
    }
}
