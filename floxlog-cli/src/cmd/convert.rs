//! `floxlog convert`: recompress, decompress, re-index, merge, split.

use super::common::{progress, report_listing, CmdResult, Sink, TapeArgs, WriteOpts};
use floxlog::core::{Compression, FrameHeader, ReadOptions, UnknownTypes};
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{Order, TapeError};
use std::path::PathBuf;

/// Rewrite tapes with other settings, copying every record byte for byte.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Rewrite one or more tapes (or segments) into a \
new tape with other settings, copying every record byte for byte (trades, books, option quotes, \
pool states): recompress (--compression lz4), decompress (--compression none), re-index \
(--index-interval, --no-index), merge (several inputs, or --order time to interleave them by \
timestamp), split (--max-segment-bytes, --rotate-every, --layout spec).\n\n\
It fails loudly rather than dropping anything: any damaged or torn segment, or an unknown record \
type, stops the conversion with exit 1 and removes the partial output (run `floxlog recover` \
first). Note that LZ4 writers sort each block by timestamp, as flox does: converting an unsorted \
stream to LZ4 keeps every record but may reorder records inside a block.")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Output tape directory (or segment file with --segment).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Order of the copied events: file (segments one after another) or time (merged).
    #[arg(long, value_enum, default_value = "file")]
    pub order: OrderArg,
    /// Convert even when listed segments are missing (or named outside the
    /// tape directory); the summary lists what was left out.
    #[arg(long)]
    pub allow_missing: bool,
    /// Threads decoding ahead of the writer (file order; 0: one per core).
    /// The output is the same for any number.
    #[arg(short = 'j', long, default_value_t = 0)]
    pub jobs: usize,
    #[command(flatten)]
    pub write: WriteOpts,
}

/// Output orders.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum OrderArg {
    /// Segment after segment, each in file order.
    File,
    /// Merged by timestamp (stable).
    Time,
}

/// Runs `convert`.
// Long but kept whole: settings, the copy and its outcome in the order
// the command runs them, sharing the opened tape and the writer.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let unread = report_listing(&tape);
    let mut left_out: Vec<String> = tape.unread().map(|f| f.message.clone()).collect();
    if unread > left_out.len() as u64 {
        left_out.push(format!("... {} listed segments in all", unread));
    }
    if unread > 0 && !a.allow_missing {
        return Err(TapeError::input(
            None,
            format!("{unread} listed segment(s) cannot be read; refusing to write a tape without them"),
        )
        .with_hint("restore them, or pass --allow-missing to convert the rest (the summary lists what was left out)"));
    }
    let request = Request {
        order: if a.order == OrderArg::Time {
            Order::Time
        } else {
            Order::File
        },
        read: ReadOptions {
            verify_crc: true,
            unknown_types: UnknownTypes::Reject,
            ..ReadOptions::default()
        },
        // Every record or nothing: a torn tail too is an error.
        strict: true,
        threads: a.jobs,
        allow_missing: a.allow_missing,
        ..Request::default()
    };
    let mut session = Session::open(tape, request);
    if let Some(e) = session.open_errors().first() {
        return Err(e.clone());
    }
    // Defaults from the first segment: its codec and exchange tag.
    let (mut comp, mut exch) = (Compression::None, 0u8);
    if let Some(h) = session.first_header() {
        comp = h.codec();
        exch = h.exchange_id;
    }
    let compression = a.write.compression.map_or(comp, Into::into);
    let total = session.total_bytes();
    let result = (|| -> Result<(u64, u64, u64), TapeError> {
        let mut sink = Sink::create(&a.output, &a.write, compression, exch)?;
        // Symbol names travel with the events (a single segment file has
        // nowhere to keep them).
        if let Some(md) = session.tape().merged_metadata() {
            sink.set_metadata(md);
        }
        let pb = progress(total, "convert");
        let mut n = 0u64;
        let mut frame_bytes = 0u64;
        let mut copy = |ft: u8, payload: &[u8]| -> Result<(), TapeError> {
            sink.append_raw(ft, payload)?;
            frame_bytes += (FrameHeader::LEN + payload.len()) as u64;
            n += 1;
            if n.is_multiple_of(65536) {
                pb.set_position(frame_bytes.min(total));
            }
            Ok(())
        };
        // The session stops at the first frame after a problem.
        session.frames(&mut copy)?;
        if let Some(e) = session.error() {
            return Err(e.with_hint(
                "convert copies every record or nothing: `floxlog recover FILE` first keeps the complete events",
            ));
        }
        pb.finish_and_clear();
        let (segs, bytes) = sink.close()?;
        Ok((n, segs, bytes))
    })();
    match result {
        Ok((n, segs, bytes)) => {
            eprintln!(
                "converted {n} events into {segs} segments ({bytes} bytes) at {}",
                a.output.display()
            );
            for what in &left_out {
                eprintln!("left out (--allow-missing): {what}");
            }
            Ok(0)
        }
        // The sink removed its temporary: nothing is left at the output.
        Err(e) => Err(e),
    }
}
