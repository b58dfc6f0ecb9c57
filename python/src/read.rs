//! Reading a tape into record batches: the settings, the outcome as the
//! CLI judges it (errors and warnings), and the two ways to run it (all at
//! once, or on a thread feeding a stream).

use crate::errors::ErrInfo;
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use floxlog::core::ReadOptions;
use floxlog::tape::{Filter, Judged, Kept, OpenOptions, OpenedTape, Order, Tape, TapeError};
use floxlog_arrow::{read_batches, read_table, Limits, ReadSpec, ReadSummary, RecordType, Symbols};
use std::path::PathBuf;

/// What a stream reports beside its batches.
#[derive(Default, Debug)]
pub struct Outcome {
    /// Warnings (torn tails tolerated, listing findings).
    pub warnings: Vec<String>,
    /// Whether the read has ended (all batches sent, or it failed).
    pub done: bool,
    /// The errors that ended the read or were found by it.
    pub errors: Vec<ErrInfo>,
}
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// A time bound as Python gives it: nanoseconds, or text (`parse_time`:
/// integer nanoseconds or ISO-8601, UTC unless an offset is given).
#[derive(pyo3::FromPyObject, Clone, Debug)]
pub enum TimeArg {
    /// Nanoseconds since the epoch.
    Ns(i64),
    /// Text.
    Text(String),
}

pub fn time_ns(t: Option<TimeArg>, what: &str) -> Result<Option<i64>, TapeError> {
    match t {
        None => Ok(None),
        Some(TimeArg::Ns(n)) => Ok(Some(n)),
        Some(TimeArg::Text(s)) => floxlog::time::parse_time(&s)
            .map(Some)
            .map_err(|m| TapeError::usage(format!("{what}: {m}"))),
    }
}

/// The table of a record type name and the frame types it reads:
/// `book_snapshot` / `book_delta` read the book table
/// but only that kind, as `floxlog cat --type` does.
pub fn type_filter(name: &str) -> Result<(RecordType, [bool; 6]), TapeError> {
    let rt = RecordType::from_name(name).ok_or_else(|| {
        TapeError::usage(format!(
            "unknown record type `{name}` (trade, book, book_snapshot, book_delta, option_quote, pool_state)"
        ))
    })?;
    let mut mask = rt.type_mask();
    match name.trim().to_ascii_lowercase().as_str() {
        "book_snapshot" => mask[3] = false,
        "book_delta" => mask[2] = false,
        _ => {}
    }
    Ok((rt, mask))
}

/// The arguments of a read, as the Python methods take them.
#[derive(Clone, Debug)]
pub struct ReadArgs {
    /// Record type name.
    pub rtype: String,
    /// Keep `exchange_ts_ns >= start`.
    pub start: Option<TimeArg>,
    /// Keep `exchange_ts_ns < end`.
    pub end: Option<TimeArg>,
    /// Symbol ids (as text) or names; `None`: every symbol, an empty
    /// list: none.
    pub symbols: Option<Vec<String>>,
    /// `time` or `file`.
    pub order: String,
    /// Torn tails fail too.
    pub strict: bool,
    /// Rows per batch.
    pub rows: usize,
}

/// The settings of a read of `types` on `tape` in `order`, `rows` per
/// batch, CRCs checked: events in `[from, to)` of `symbols` (ids as text or
/// names from the tape's own `metadata.json`; `None`: every symbol, empty:
/// none).
pub fn read_spec(
    tape: &Tape,
    types: [bool; 6],
    (from, to): (Option<i64>, Option<i64>),
    symbols: Option<&[String]>,
    order: Order,
    rows: usize,
) -> Result<ReadSpec, TapeError> {
    let symbols = match symbols {
        None => None,
        Some([]) => Some(Vec::new()),
        Some(v) => tape.symbol_ids(v)?,
    };
    Ok(ReadSpec {
        order,
        filter: Filter {
            from,
            to,
            symbols,
            types: Some(types),
        },
        limits: Limits::rows(rows),
        read: ReadOptions {
            verify_crc: true,
            ..ReadOptions::default()
        },
        ..ReadSpec::default()
    })
}

/// [`ReadArgs`] as the Python package passes them: one tuple
/// `(rtype, start, end, symbols, order, strict, rows)`.
#[derive(pyo3::FromPyObject)]
pub struct ReadTuple(
    String,
    Option<TimeArg>,
    Option<TimeArg>,
    Option<Vec<String>>,
    String,
    bool,
    usize,
);

impl From<ReadTuple> for ReadArgs {
    fn from(t: ReadTuple) -> ReadArgs {
        let ReadTuple(rtype, start, end, symbols, order, strict, rows) = t;
        ReadArgs {
            rtype,
            start,
            end,
            symbols,
            order,
            strict,
            rows,
        }
    }
}

/// A read ready to run: the tape listed, the filter resolved.
pub struct Job {
    tape: Tape,
    rt: RecordType,
    spec: ReadSpec,
    symbols: Symbols,
    strict: bool,
}

/// Lists the tape at `path` (a directory of either layout, or a segment
/// file) as the CLI does.
pub fn list_tape(path: &PathBuf) -> Result<Tape, TapeError> {
    Tape::open(std::slice::from_ref(path), OpenOptions::default())
}

impl Job {
    /// Lists the tape and resolves the arguments; usage errors here.
    pub fn new(path: &PathBuf, a: ReadArgs) -> Result<Job, TapeError> {
        let (rt, types) = type_filter(&a.rtype)?;
        let order = match a.order.trim().to_ascii_lowercase().as_str() {
            "time" => Order::Time,
            "file" => Order::File,
            o => {
                return Err(TapeError::usage(format!(
                    "order must be \"time\" or \"file\", not {o:?}"
                )))
            }
        };
        if a.rows == 0 {
            return Err(TapeError::usage("rows must be at least 1"));
        }
        let from = time_ns(a.start, "start")?;
        let to = time_ns(a.end, "end")?;
        let tape = list_tape(path)?;
        let spec = read_spec(
            &tape,
            types,
            (from, to),
            a.symbols.as_deref(),
            order,
            a.rows,
        )?;
        Ok(Job {
            symbols: Symbols::from_tape(&tape),
            tape,
            rt,
            spec,
            strict: a.strict,
        })
    }

    /// The record type read.
    pub fn record_type(&self) -> RecordType {
        self.rt
    }

    /// Runs the read, handing each batch to `sink`; the outcome as the CLI
    /// judges it: listed segments that could not be read and files that
    /// could not be opened are errors, and so are segments that stopped
    /// early, except the torn tail of an unfinished segment (a warning
    /// unless `strict`).
    ///
    /// `whole`: the caller keeps every batch (a table), so segments are
    /// decoded in parallel ([`read_table`]); otherwise they stream.
    fn run(
        self,
        whole: bool,
        sink: &mut dyn FnMut(RecordBatch) -> Result<(), TapeError>,
    ) -> (Outcome, Option<TapeError>) {
        let mut out = Outcome::default();
        for f in &self.tape.findings {
            if f.kind.is_unread() {
                out.errors.push(ErrInfo::from(f));
            } else {
                out.warnings
                    .push(f.localized(&crate::words::PyWords).line());
            }
        }
        let strict = self.strict;
        let mut opened = OpenedTape::open(self.tape);
        out.errors
            .extend(opened.open_errors.iter().map(ErrInfo::from));
        let res = if whole {
            read_table(&mut opened, &self.spec, &self.symbols, 0).and_then(|(batches, summary)| {
                batches.into_iter().try_for_each(|(_, b)| sink(b))?;
                Ok(summary)
            })
        } else {
            read_batches(&mut opened, &self.spec, &self.symbols, &mut |_, b| sink(b))
        };
        release_later(opened);
        match res {
            Ok(summary) => {
                judge(&summary, strict, &mut out);
                (out, None)
            }
            Err(e) => (out, Some(e)),
        }
    }

    /// Reads every batch into memory.
    pub fn run_all(self) -> (Vec<RecordBatch>, Outcome) {
        let mut batches = Vec::new();
        let (mut out, fatal) = self.run(true, &mut |b| {
            batches.push(b);
            Ok(())
        });
        if let Some(e) = fatal {
            out.errors.push(ErrInfo::from(e));
        }
        out.done = true;
        (batches, out)
    }

    /// Reads on the calling (background) thread, sending each batch; an
    /// error ends the stream as an Arrow error with the floxlog text. A
    /// send that fails (the consumer is gone) ends the read.
    pub fn run_to_channel(
        self,
        tx: SyncSender<Result<RecordBatch, ArrowError>>,
        shared: Arc<Mutex<Outcome>>,
    ) {
        let mut gone = false;
        let (mut out, fatal) = self.run(false, &mut |b| {
            tx.send(Ok(b)).map_err(|_| {
                gone = true;
                TapeError::usage("the consumer closed the stream")
            })
        });
        if let (Some(e), false) = (fatal, gone) {
            out.errors.push(ErrInfo::from(e));
        }
        out.done = true;
        let first = out.errors.first().map(ErrInfo::to_tape_error);
        // Publish the outcome before the stream ends, so a consumer that
        // has seen the end also sees the warnings.
        if let Ok(mut s) = shared.lock() {
            *s = out;
        }
        if let (Some(e), false) = (first, gone) {
            let _ = tx.send(Err(ArrowError::ExternalError(Box::new(e))));
        }
    }
}

/// Unmaps a read tape on a thread of its own: for a large tape written in
/// 4 KiB pages that is a walk of every page's mapping (a tenth of a
/// whole-table read), which the caller need not wait for, as nothing of
/// the tape is used after the read (the batches hold copies; the tape
/// holds no lock). Where no thread can be started, here.
fn release_later(opened: OpenedTape) {
    // On failure the closure, and the tape with it, is dropped here.
    let _ = std::thread::Builder::new()
        .name("floxlog-unmap".into())
        .spawn(move || drop(opened));
}

/// Errors and warnings of a finished read, as `floxlog cat` reports them.
pub(crate) fn judge(s: &ReadSummary, strict: bool, out: &mut Outcome) {
    for j in s.outcome(strict).judged() {
        match j {
            Judged::Warning(p) => out.warnings.push(p.torn_warning(Kept::Read)),
            Judged::Error(p) => out.errors.push(ErrInfo::from(p.to_error())),
        }
    }
}
