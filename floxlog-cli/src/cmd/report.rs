//! `floxlog report`: one self-contained HTML page of a tape (see
//! `floxlog::see::report`).

use super::common::{parse_duration, report_listing, CmdResult, TapeArgs};
use floxlog::see::report::{see, ReportOptions};
use floxlog::tape::TapeError;
use std::path::PathBuf;

/// Write one self-contained HTML page picturing a tape.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Write one self-contained HTML page \
picturing a tape (inline SVG and script, nothing fetched: readable offline, attachable to a \
ticket), from one pass over the tape in time order with memory bounded by fixed time buckets.\n\n\
It shows the summary (segments, bytes, events by type, time range, symbols, findings); a \
timeline of segments per series with damage, quiet gaps and id/sequence gaps marked; events per \
second per record type; the last-trade price and volume of the busiest symbols; spread and \
top-of-book quantity of --symbol (default: the symbol with the most book events); and the gaps \
table of `floxlog gaps`.\n\n\
Exit 0 when the page was written (damage and gaps are shown in it), 2 on usage errors, 3 when \
the tape cannot be read or the page cannot be written.")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// The symbol whose book is charted (id or name).
    #[arg(long)]
    pub symbol: Option<String>,
    /// Shortest quiet gap marked (as `gaps --min-gap`).
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DURATION")]
    pub min_gap: i64,
    /// Skip frames of record types 1.0 does not define instead of stopping.
    #[arg(long)]
    pub skip_unknown: bool,
}

/// Runs `report`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let symbol = match &a.symbol {
        None => None,
        Some(s) => match tape.symbol_ids(std::slice::from_ref(s))?.as_deref() {
            Some([id]) => Some(*id),
            _ => return Err(TapeError::usage("--symbol takes one symbol")),
        },
    };
    let _ = report_listing(&tape);
    let opts = ReportOptions {
        symbol,
        min_gap_ns: a.min_gap,
        read: super::common::read_options(a.skip_unknown),
    };
    let seen = see(tape, &opts)?;
    let page = seen.page();
    std::fs::write(&a.output, page.as_bytes())
        .map_err(|e| TapeError::io(&a.output, "writing the report", e))?;
    eprintln!(
        "floxlog: wrote {} ({} bytes): {} events, {} findings",
        a.output.display(),
        page.len(),
        seen.by_type.iter().sum::<u64>(),
        seen.gaps.gaps.len()
    );
    Ok(0)
}
