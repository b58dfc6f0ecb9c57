//! `floxlog cat`: events as JSON lines or CSV.

use super::common::{parse_size, report_listing, CmdResult, ErrorFormat, FilterArgs, TapeArgs};
use floxlog::json::PriceStyle;
use floxlog::output::{write_json_line, Csv};
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{Kept, Order, TapeError};
use std::io::Write;

/// Output formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// JSON lines in the conformance corpus schema (what `encode` reads).
    Jsonl,
    /// CSV with a header; columns are the fields of the selected types.
    Csv,
}

/// Price formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum Prices {
    /// Raw fixed-point integers (scale 1e8), fields `*_raw`.
    Raw,
    /// Exact decimal strings, fields without the `_raw` suffix.
    Decimal,
}

impl Prices {
    pub fn style(self) -> PriceStyle {
        match self {
            Prices::Raw => PriceStyle::Raw,
            Prices::Decimal => PriceStyle::Decimal,
        }
    }
}

/// Print events as JSON lines or CSV, merged in timestamp order.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Print events as JSON lines or CSV.\n\n\
Events of all segments are merged in timestamp order (stable: ties keep segment and file order); \
--file-order prints each segment in file order instead. Inputs: tape directories (manifest.json), \
directories of *.floxlog files (file-name order), or segment files.\n\n\
A segment whose writer is still running (or died) is read up to its last complete event, with a \
warning; --strict makes that an error. Damage in a segment stops that segment with an error naming \
the file and byte offset (exit 1); the other segments are still printed.")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// Each segment in file order, segments in manifest (or file-name) order.
    #[arg(long)]
    pub file_order: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Prices and quantities as raw integers or decimals.
    #[arg(long, value_enum, default_value = "raw")]
    pub prices: Prices,
    /// Most memory time order may hold for orderings (16 bytes an event of
    /// the segments whose time ranges overlap; e.g. 256M, 1G): a tape that
    /// needs more fails, naming this option and --file-order.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256M")]
    pub reorder_bytes: u64,
    #[command(flatten)]
    pub follow: super::cat_follow::FollowArgs,
    /// Fail (exit 1) on the torn tail of an unfinished segment too.
    #[arg(long)]
    pub strict: bool,
    /// Skip frames of record types 1.0 does not define instead of stopping.
    #[arg(long)]
    pub skip_unknown: bool,
    /// How damage is reported on stderr; `kit` adds a line `error <kind> <offset>`
    /// after each damaged segment's message (the conformance kit's reader protocol).
    #[arg(long, value_enum, default_value = "text")]
    pub error_format: ErrorFormat,
}

/// The kit's `error <kind> <offset>` line for a codec error, if `e` is one.
fn kit_line(e: &TapeError) -> Option<String> {
    Some(format!("error {} {}", e.data_kind()?, e.offset?))
}

/// Lines for stdout, written in large pieces (or when forced, then
/// flushed); `closed` once the reader went away.
pub(super) struct Out {
    pub(super) buf: Vec<u8>,
    pub(super) stdout: std::io::Stdout,
    pub(super) closed: bool,
}

impl Out {
    /// Output starting with the CSV header, if CSV.
    pub(super) fn new(csv: Option<&Csv>) -> Out {
        let mut out = Out {
            buf: Vec::with_capacity(1 << 17),
            stdout: std::io::stdout(),
            closed: false,
        };
        if let Some(c) = csv {
            c.write_header(&mut out.buf);
        }
        out
    }

    pub(super) fn flush_if(&mut self, force: bool) -> Result<(), TapeError> {
        if self.closed || (!force && self.buf.len() < 1 << 16) {
            return Ok(());
        }
        let mut lock = self.stdout.lock();
        let r = lock
            .write_all(&self.buf)
            .and_then(|_| if force { lock.flush() } else { Ok(()) });
        self.buf.clear();
        match r {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(TapeError::io(
                std::path::Path::new("<stdout>"),
                "writing the output",
                e,
            )),
        }
    }
}

/// Runs `cat`.
pub fn run(a: Args) -> CmdResult {
    if a.follow.follow {
        return super::cat_follow::run(&a);
    }
    let tape = a.tape.open()?;
    let style = a.prices.style();
    let filter = a.filter.filter(&tape)?;
    let unread = report_listing(&tape);
    // The kit's tape-level line for each listed segment not read
    // (docs/conformance.md): `error <kind> <file name>`, printed last.
    let unread_lines: Vec<String> = tape
        .findings
        .iter()
        .filter(|f| f.kind.is_unread())
        .map(|f| {
            let name = f.path.as_deref().and_then(|p| p.file_name());
            let name = name.map(|n| n.to_string_lossy().into_owned());
            format!("error {} {}", f.kind, name.unwrap_or_default())
        })
        .collect();
    let csv = (a.format == Format::Csv).then(|| Csv::new(filter.types, style));
    let mut out = Out::new(csv.as_ref());
    let write = |out: &mut Out, ev: &floxlog::core::Event<'_>| {
        match &csv {
            Some(c) => c.write_row(&mut out.buf, ev),
            None => write_json_line(&mut out.buf, ev, style),
        }
        out.flush_if(false)
    };
    let request = Request {
        order: if a.file_order {
            Order::File
        } else {
            Order::Time
        },
        filter,
        reorder_bytes: usize::try_from(a.reorder_bytes).unwrap_or(usize::MAX),
        read: super::common::read_options(a.skip_unknown),
        strict: a.strict,
        ..Request::default()
    };
    let mut session = Session::open(tape, request);
    // Listed segments that could not be read are data the output lacks.
    let mut failed = unread > 0;
    let kit = a.error_format == ErrorFormat::Kit;
    let report = |e: &TapeError| {
        eprintln!("floxlog: error: {e}");
        if let Some(l) = kit.then(|| kit_line(e)).flatten() {
            eprintln!("{l}");
        }
    };
    for e in session.open_errors() {
        report(e);
        failed = true;
    }
    let mut events = session.cursor();
    loop {
        let ev = match events.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            // With the kit's format the error line must come last, so the
            // error is reported here rather than by main.
            Err(e) if kit => {
                out.flush_if(true)?;
                report(&e);
                return Ok(1);
            }
            Err(e) => return Err(e),
        };
        write(&mut out, &ev.event)?;
        if out.closed {
            return Ok(0);
        }
    }
    out.flush_if(true)?;
    let outcome = events.outcome();
    for p in outcome.problems {
        if !outcome.is_error(p) {
            eprintln!("floxlog: warning: {}", p.torn_warning(Kept::Read));
            if !p.writer_live {
                eprintln!(
                    "  hint: if its writer is gone, `floxlog recover {}` makes it a valid segment",
                    p.path.display()
                );
            }
            continue;
        }
        eprintln!(
            "floxlog: error: {} (after {} events of that segment)",
            p.to_error(),
            p.events_before
        );
        if kit {
            eprintln!("error {} {}", p.error.kind, p.error.offset);
        }
        failed = true;
    }
    if kit {
        for l in &unread_lines {
            eprintln!("{l}");
        }
    }
    Ok(u8::from(failed))
}
