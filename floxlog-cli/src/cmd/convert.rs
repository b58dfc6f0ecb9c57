//! `floxlog convert`: recompress, decompress, re-index, merge, split.

use super::common::{progress, CmdResult, Sink, WriteOpts};
use floxlog::core::{Compression, ReadOptions, Segment, UnknownTypes};
use floxlog::tape::{Filter, OpenOptions, OpenedTape, Order, ReadConfig, Tape, TapeError};
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
    /// Tape directories or segment files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output tape directory (or segment file with --segment).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Order of the copied events: file (segments one after another) or time (merged).
    #[arg(long, value_enum, default_value = "file")]
    pub order: OrderArg,
    /// Do not read manifest.json.
    #[arg(long)]
    pub ignore_manifest: bool,
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
pub fn run(a: Args) -> CmdResult {
    let tape = Tape::open(
        &a.inputs,
        OpenOptions {
            ignore_manifest: a.ignore_manifest,
        },
    )?;
    for f in &tape.findings {
        eprintln!("{}", f.line());
    }
    let mut opened = OpenedTape::open(tape);
    if let Some(e) = opened.open_errors.first() {
        return Err(e.clone());
    }
    // Defaults from the first segment: its codec and exchange tag.
    let (mut comp, mut exch) = (Compression::None, 0u8);
    if let Some(f) = opened.files.iter().flatten().next() {
        if let Ok(seg) = Segment::parse(f.bytes()) {
            comp = seg.header().codec();
            exch = seg.header().exchange_id;
        }
    }
    let compression = a.write.compression.map_or(comp, Into::into);
    let existed = a.output.exists();
    let total = opened.total_bytes();
    let cfg = ReadConfig {
        order: if a.order == OrderArg::Time {
            Order::Time
        } else {
            Order::File
        },
        filter: Filter::default(),
        reorder_window: floxlog::tape::merge::DEFAULT_REORDER_WINDOW,
        read: ReadOptions {
            verify_crc: true,
            unknown_types: UnknownTypes::Reject,
        },
    };
    let result = (|| -> Result<(u64, u64, u64), TapeError> {
        let mut sink = Sink::create(&a.output, &a.write, compression, exch)?;
        let pb = progress(total, "convert");
        let mut r = opened.reader(&cfg);
        let mut n = 0u64;
        let mut frame_bytes = 0u64;
        while let Some(it) = r.next_item()? {
            sink.append_raw(it.frame.header.frame_type, it.frame.payload)?;
            frame_bytes += it.frame.len() as u64;
            n += 1;
            if n % 65536 == 0 {
                pb.set_position(frame_bytes.min(total));
            }
            if let Some(p) = r.problems().first() {
                return Err(p.to_error());
            }
        }
        if let Some(p) = r.problems().first() {
            return Err(p.to_error().with_hint(
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
            Ok(0)
        }
        Err(e) => {
            if !existed {
                let _ = if a.write.segment {
                    std::fs::remove_file(&a.output)
                } else {
                    std::fs::remove_dir_all(&a.output)
                };
            }
            Err(e)
        }
    }
}
