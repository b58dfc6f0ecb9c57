//! `floxlog diff`: are two tapes the same, and where do they first differ.

use floxlog::tape::diff::{diff_tapes, DiffOptions, DiffOutcome, DiffReport, EventAt, TypeCounts};
use floxlog::tape::{OpenOptions, Order};
use std::path::PathBuf;

use super::common::CmdResult;

/// Compare two tapes event by event (or byte by byte).
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Compare two tapes event by event.\n\n\
A and B are tape directories (either layout) or segment files (any compression). Events compare \
by their decoded fields, so a tape and its LZ4 conversion, or its spec-layout conversion, are the \
same. Reports the first difference (event number, each event's file and byte offset, the fields \
that differ, or which tape ended first) and the events per record type of each tape, counted to \
the end of both.\n\n\
Exit 0: identical. 1: different. 4: a tape is damaged (reported with its kind and offset; the \
first difference is shown too when it came before the damage). A torn tail of a live or crashed \
writer is not damage unless --strict. With --bytes the segment files are compared byte for byte, \
pairwise in listing order, and nothing is decoded.")]
pub struct Args {
    /// Tape A (directory or segment file).
    pub a: PathBuf,
    /// Tape B (directory or segment file).
    pub b: PathBuf,
    /// Order of the compared events: file (segment by segment) or time (merged).
    #[arg(long, value_enum, default_value = "file")]
    pub order: OrderArg,
    /// Compare the segment files byte for byte instead of their events.
    #[arg(long)]
    pub bytes: bool,
    /// A torn tail (live or crashed writer) counts as damage.
    #[arg(long)]
    pub strict: bool,
    /// Skip frames of record types 1.0 does not define instead of reporting them.
    #[arg(long)]
    pub skip_unknown: bool,
    /// Do not read manifest.json; list the directories' segment files instead.
    #[arg(long)]
    pub ignore_manifest: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Event orders.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum OrderArg {
    /// Segment by segment, each in file order.
    File,
    /// Merged by exchange timestamp.
    Time,
}

/// The exit code of a damaged tape (1 is "different").
pub const EXIT_DAMAGED: u8 = 4;

/// Runs `diff`.
pub fn run(a: Args) -> CmdResult {
    let opts = DiffOptions {
        order: match a.order {
            OrderArg::File => Order::File,
            OrderArg::Time => Order::Time,
        },
        bytes: a.bytes,
        strict: a.strict,
        read: super::common::read_options(a.skip_unknown),
        open: OpenOptions {
            ignore_manifest: a.ignore_manifest,
        },
    };
    let rep = diff_tapes(
        std::slice::from_ref(&a.a),
        std::slice::from_ref(&a.b),
        &opts,
    )?;
    if a.json {
        let v = serde_json::to_value(&rep).unwrap_or_default();
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print_text(&rep);
    }
    Ok(match rep.outcome {
        DiffOutcome::Identical => 0,
        DiffOutcome::Different => 1,
        DiffOutcome::Damaged => EXIT_DAMAGED,
    })
}

fn print_text(rep: &DiffReport) {
    for d in &rep.damage {
        let ev = d
            .event
            .map(|e| format!(", at event {e}"))
            .unwrap_or_default();
        outln!(
            "DAMAGED: tape {}: {} at byte {}: {}: {} ({} events of the segment read before it{ev})",
            d.tape,
            d.file.display(),
            d.offset,
            d.kind,
            d.message,
            d.segment_events_before,
        );
    }
    if let Some(b) = &rep.bytes {
        let name = |p: &Option<PathBuf>| {
            p.as_ref()
                .map_or_else(|| "(none)".to_string(), |p| p.display().to_string())
        };
        outln!(
            "DIFFERENT ({}): segment {}: {} vs {} at byte {}",
            b.reason,
            b.segment,
            name(&b.file_a),
            name(&b.file_b),
            b.offset
        );
    }
    if let Some(f) = &rep.first {
        let side = |e: &Option<EventAt>| match e {
            Some(e) => {
                let ib = e
                    .in_block
                    .map(|p| format!(" (+{p} in block)"))
                    .unwrap_or_default();
                format!(
                    "{} {} at byte {}{ib}",
                    e.type_name,
                    e.file.display(),
                    e.offset
                )
            }
            None => "(ended)".to_string(),
        };
        outln!("DIFFERENT at event {} ({} order):", f.event, rep.mode);
        outln!("  a: {}", side(&f.a));
        outln!("  b: {}", side(&f.b));
        for fd in &f.fields {
            outln!("  {fd}");
        }
        match (&f.a, &f.b) {
            (None, Some(_)) => outln!("  tape a ends after {} events; b has more", f.event),
            (Some(_), None) => outln!("  tape b ends after {} events; a has more", f.event),
            _ => {}
        }
    }
    if rep.mode == "bytes" {
        if rep.outcome == DiffOutcome::Identical {
            outln!("IDENTICAL: {} bytes", rep.equal);
        }
        return;
    }
    if rep.outcome == DiffOutcome::Identical {
        outln!("IDENTICAL: {} events ({} order)", rep.equal, rep.mode);
    } else {
        outln!("{} events compared equal before it", rep.equal);
    }
    outln!("  a: {}", counts(&rep.counts_a));
    outln!("  b: {}", counts(&rep.counts_b));
}

fn counts(c: &TypeCounts) -> String {
    format!(
        "{} events: {} trade, {} book_snapshot, {} book_delta, {} option_quote, {} pool_state",
        c.events, c.trade, c.book_snapshot, c.book_delta, c.option_quote, c.pool_state
    )
}
