//! Test helper for `tests/crash.rs`, not a user tool: a recorder that
//! writes the reproducible [`mixed_event`] stream through a [`TapeWriter`]
//! until it is killed, and says on stdout what the writer has delivered.
//!
//! ```text
//! floxlog-crash-recorder DIR none|lz4 none|flush|block|close|every:N INTERVAL MAX_BYTES SEED EVENTS [flox|spec]
//! ```
//!
//! The last argument is the tape layout (default `flox`: interleaved
//! `<created_ns>.floxlog` segments; `spec`: per-type series such as
//! `trades-000000.bin`).
//!
//! Output lines (each written and flushed at once): `ready` once the
//! writer exists; `written N` whenever [`TapeWriter::written_events`]
//! grows and `durable N` whenever [`TapeWriter::durable_events`] grows
//! (printed after the write or fsync, so a line seen is a promise kept;
//! with the spec layout they count the events of every series together);
//! `done N` after a clean close.

use floxlog::core::{Compression, WriterConfig};
use floxlog::synth::mixed_event;
use floxlog::tape::{Durability, Layout, TapeWriter, TapeWriterConfig};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `created_ns` of the first segment; segment `i` gets this + `i`, so file
/// names sort in write order.
pub const CREATED_NS: i64 = 1_700_000_000_000_000_000;

fn parse_durability(s: &str) -> Option<Durability> {
    Some(match s {
        "none" => Durability::None,
        "flush" => Durability::Flush,
        "block" => Durability::SyncEveryBlock,
        "close" => Durability::SyncOnClose,
        _ => Durability::SyncEveryN(s.strip_prefix("every:")?.parse().ok()?),
    })
}

fn run(args: &[String]) -> Result<(), String> {
    let (args, layout) = match args {
        [rest @ .., l] if rest.len() == 7 => (rest, l.as_str()),
        _ => (args, "flox"),
    };
    let [dir, comp, dur, interval, max_bytes, seed, events] = args else {
        return Err(
            "usage: floxlog-crash-recorder DIR none|lz4 none|flush|block|close|every:N \
             INTERVAL MAX_BYTES SEED EVENTS [flox|spec]"
                .into(),
        );
    };
    let layout = match layout {
        "flox" => Layout::Flox,
        "spec" => Layout::Spec,
        _ => return Err(format!("unknown layout {layout}")),
    };
    let num = |s: &str| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
    let compression = match comp.as_str() {
        "none" => Compression::None,
        "lz4" => Compression::Lz4,
        _ => return Err(format!("unknown compression {comp}")),
    };
    let durability = parse_durability(dur).ok_or(format!("unknown durability {dur}"))?;
    let interval = u16::try_from(num(interval)?).map_err(|e| e.to_string())?;
    let (max_bytes, seed, events) = (num(max_bytes)?, num(seed)?, num(events)?);
    let cfg = TapeWriterConfig {
        layout,
        segment: WriterConfig {
            compression,
            index_interval: interval,
            ..WriterConfig::default()
        },
        max_segment_bytes: max_bytes,
        durability,
        created_ns: Some(CREATED_NS),
        ..TapeWriterConfig::default()
    };
    let mut w = TapeWriter::create(&PathBuf::from(dir), cfg).map_err(|e| e.to_string())?;
    let mut out = Out(std::io::stdout().lock());
    out.line("ready")?;
    let (mut written, mut durable) = (0u64, 0u64);
    for i in 0..events {
        w.append(&mixed_event(seed, i).as_event())
            .map_err(|e| e.to_string())?;
        if w.written_events() > written {
            written = w.written_events();
            out.line(&format!("written {written}"))?;
        }
        if w.durable_events() > durable {
            durable = w.durable_events();
            out.line(&format!("durable {durable}"))?;
        }
    }
    let segs = w.close().map_err(|e| e.to_string())?;
    let total: u64 = segs.iter().map(|s| s.event_count).sum();
    if total != events {
        return Err(format!("closed with {total} events of {events}"));
    }
    // After close every event is written, and durable unless the policy
    // never syncs.
    if events > written {
        out.line(&format!("written {events}"))?;
    }
    let syncs = !matches!(durability, Durability::None | Durability::Flush);
    if syncs && events > durable {
        out.line(&format!("durable {events}"))?;
    }
    out.line(&format!("done {events}"))
}

struct Out<W: Write>(W);

impl<W: Write> Out<W> {
    /// Writes one line and flushes it out of the process.
    fn line(&mut self, s: &str) -> Result<(), String> {
        writeln!(self.0, "{s}")
            .and_then(|()| self.0.flush())
            .map_err(|e| e.to_string())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floxlog-crash-recorder: {e}");
            ExitCode::FAILURE
        }
    }
}
