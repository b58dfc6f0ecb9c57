//! Reading a tape into record batches through the read session: the
//! arguments by name, the outcome as the CLI judges it (errors and
//! warnings), and the two ways to run it (all at once, or on a thread
//! feeding a stream).

use crate::errors::ErrInfo;
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use floxlog::core::ReadOptions;
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{Filter, Finding, Kept, OpenOptions, Order, ReadOutcome, Tape, TapeError};
use floxlog_arrow::{read_batches, read_table, Limits, ReadSpec, RecordType, Symbols};
use floxlog_arrow::{Conversion, Prices, Timestamps, WithLevels};
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// What a read reports beside its batches.
#[derive(Default, Debug)]
pub struct Outcome {
    /// Warnings (torn tails tolerated, listing findings).
    pub warnings: Vec<String>,
    /// Whether the read has ended (all batches sent, or it failed).
    pub done: bool,
    /// The errors that ended the read or were found by it.
    pub errors: Vec<ErrInfo>,
}

impl Outcome {
    /// The listing's findings: segments that cannot be read are errors,
    /// the rest warnings.
    pub fn listing(findings: &[Finding]) -> Outcome {
        let mut out = Outcome::default();
        for f in findings {
            if f.kind.is_unread() {
                out.errors.push(ErrInfo::from(f));
            } else {
                out.warnings
                    .push(f.localized(&crate::words::PyWords).line());
            }
        }
        out
    }

    /// Adds a finished read's problems as the session judged them (as
    /// `floxlog cat` reports them).
    pub fn judge(&mut self, outcome: ReadOutcome<'_>) {
        for p in outcome.problems {
            if outcome.is_error(p) {
                self.errors.push(ErrInfo::from(p.to_error()));
            } else {
                self.warnings.push(p.torn_warning(Kept::Read));
            }
        }
    }
}

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

/// The value named `name` among `options` (the package checked the name;
/// otherwise a usage error naming `what`).
fn named<T: Copy>(what: &str, name: &str, options: &[(&str, T)]) -> Result<T, TapeError> {
    let found = options.iter().find(|(n, _)| *n == name);
    found.map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<String> = options.iter().map(|(n, _)| format!("{n:?}")).collect();
        let names = names.join(", ");
        TapeError::usage(format!("{what} must be one of {names}, not {name:?}"))
    })
}

/// The conversion of a read's batches: `prices` (`decimal`, `float`,
/// `raw`) and `timestamps` (`ns`, `us`, `ms`) as the package checked
/// them; book levels gain their price twins, as every read gives them.
pub fn conversion(prices: &str, timestamps: &str) -> Result<WithLevels, TapeError> {
    let p = [
        ("decimal", Prices::Decimal),
        ("float", Prices::Float),
        ("raw", Prices::Raw),
    ];
    let t = [
        ("ns", Timestamps::Ns),
        ("us", Timestamps::Us),
        ("ms", Timestamps::Ms),
    ];
    Ok(WithLevels(Conversion {
        prices: named("prices", prices, &p)?,
        timestamps: named("timestamps", timestamps, &t)?,
    }))
}

/// `batch` converted, an error of it as the read's.
pub fn convert(c: &WithLevels, batch: &RecordBatch) -> Result<RecordBatch, TapeError> {
    c.batch(batch)
        .map_err(|e| TapeError::input(None, format!("converting an Arrow batch: {e}")))
}

/// The arguments of a read, by name: the mapping the package passes
/// (`_read_options` in `floxlog/__init__.py`, `ReadSettings.native` in
/// `_dataset.py`), every key given, values checked there.
#[derive(pyo3::FromPyObject, Clone, Debug)]
#[pyo3(from_item_all)]
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
    /// `decimal`, `float` or `raw`.
    pub prices: String,
    /// `ns`, `us` or `ms`.
    pub timestamps: String,
}

impl ReadArgs {
    /// The record type read and the session's request on `tape` (symbol
    /// names from the tape's own `metadata.json`), CRCs checked, on one
    /// thread per core; usage errors here.
    pub fn request(&self, tape: &Tape) -> Result<(RecordType, Request), TapeError> {
        let (rt, types) = type_filter(&self.rtype)?;
        let orders = [("time", Order::Time), ("file", Order::File)];
        let order = named("order", &self.order, &orders)?;
        if self.rows == 0 {
            return Err(TapeError::usage("rows must be at least 1"));
        }
        let filter = Filter {
            from: time_ns(self.start.clone(), "start")?,
            to: time_ns(self.end.clone(), "end")?,
            symbols: match self.symbols.as_deref() {
                None => None,
                Some([]) => Some(Vec::new()),
                Some(v) => tape.symbol_ids(v)?,
            },
            types: Some(types),
        };
        let read = ReadOptions {
            verify_crc: true,
            ..ReadOptions::default()
        };
        let strict = self.strict;
        Ok((
            rt,
            Request {
                order,
                filter,
                read,
                strict,
                ..Request::default()
            },
        ))
    }

    /// The Arrow read's settings for the session's `request`: price twins
    /// built in the form asked (the conversion then has none to drop).
    pub fn spec(&self, request: &Request) -> Result<ReadSpec, TapeError> {
        Ok(ReadSpec {
            order: request.order,
            filter: request.filter.clone(),
            limits: Limits::rows(self.rows),
            read: request.read,
            reorder_bytes: request.reorder_bytes,
            prices: self.conversion()?.0.prices,
            ..ReadSpec::default()
        })
    }

    /// The conversion of the batches.
    pub fn conversion(&self) -> Result<WithLevels, TapeError> {
        conversion(&self.prices, &self.timestamps)
    }
}

/// A read ready to run: the tape listed and opened in a session, the
/// filter resolved.
pub struct Job {
    session: Session,
    rt: RecordType,
    args: ReadArgs,
    symbols: Symbols,
    convert: WithLevels,
}

/// Lists the tape at `path` (a directory of either layout, or a segment
/// file) as the CLI does.
pub fn list_tape(path: &PathBuf) -> Result<Tape, TapeError> {
    Tape::open(std::slice::from_ref(path), OpenOptions::default())
}

impl Job {
    /// Lists the tape and resolves the arguments; usage errors here.
    pub fn new(path: &PathBuf, a: ReadArgs) -> Result<Job, TapeError> {
        let convert = a.conversion()?;
        let tape = list_tape(path)?;
        let (rt, request) = a.request(&tape)?;
        Ok(Job {
            symbols: Symbols::from_tape(&tape),
            session: Session::open(tape, request),
            rt,
            args: a,
            convert,
        })
    }

    /// The schema of the batches read.
    pub fn schema(&self) -> arrow_schema::SchemaRef {
        self.convert.schema(&self.rt.schema())
    }

    /// Runs the read, handing each batch to `sink`; the outcome as the
    /// session judges it: listed segments that could not be read and
    /// files that could not be opened are errors, and so are segments that
    /// stopped early, except the torn tail of an unfinished segment (a
    /// warning unless `strict`).
    ///
    /// `whole`: the caller keeps every batch (a table), so segments are
    /// decoded in parallel ([`read_table`]); otherwise they stream.
    fn run(
        mut self,
        whole: bool,
        sink: &mut dyn FnMut(RecordBatch) -> Result<(), TapeError>,
    ) -> (Outcome, Option<TapeError>) {
        let mut out = Outcome::listing(&self.session.tape().findings);
        out.errors
            .extend(self.session.open_errors().iter().map(ErrInfo::from));
        let (args, symbols, c) = (&self.args, &self.symbols, &self.convert);
        let mut sink = |b: RecordBatch| sink(convert(c, &b)?);
        let session = &mut self.session;
        let (strict, threads) = (session.request().strict, session.request().threads);
        let res = (|| {
            let spec = args.spec(session.request())?;
            if whole {
                let (batches, summary) = read_table(session, &spec, symbols, threads)?;
                batches.into_iter().try_for_each(|(_, b)| sink(b))?;
                Ok(summary)
            } else {
                read_batches(session, &spec, symbols, &mut |_, b| sink(b))
            }
        })();
        let fatal = match res {
            Ok(summary) => {
                out.judge(summary.outcome(strict));
                None
            }
            Err(e) => Some(e),
        };
        release_later(self.session);
        (out, fatal)
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
fn release_later(session: Session) {
    // On failure the closure, and the tape with it, is dropped here.
    let _ = std::thread::Builder::new()
        .name("floxlog-unmap".into())
        .spawn(move || drop(session));
}
