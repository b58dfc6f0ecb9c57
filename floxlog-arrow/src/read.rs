//! Tape events as record batches: a front end over the floxlog read engine.
//!
//! [`read_batches`] reads a read session's events into columns in one
//! pass ([`Session::columns`]), so the result is exactly what the session
//! (and so `floxlog cat`) returns for the same request: the same events,
//! in the same order, stopping at the same errors. Runs of trades go
//! through the core's batch trade kernel straight into the trade columns.
//! Filters are the session's: applied before any column sees an event.
//!
//! [`read_table`] reads the session's pieces ([`Session::pieces_on_trust`])
//! on several threads and concatenates them, falling back to
//! [`read_batches`] when time order cannot be had by concatenation.
//! Neither has a merge, planner, splitter or batch loop of its own.

use crate::columns::{Columns, Limits};
use crate::convert::Prices;
use crate::schema::RecordType;
use crate::symbols::Symbols;
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
use floxlog::tape::read::{ColumnSink, Piece, Problem, Request, Session};
use floxlog::tape::{Filter, Order, ReadOutcome, TapeError};
use floxlog_core::{Event, ReadOptions, TradeColumns};
use std::path::{Path, PathBuf};

/// What to read and how.
#[derive(Clone, Debug)]
pub struct ReadSpec {
    /// Time order (merged, stable) or file order.
    pub order: Order,
    /// Time range, symbols, record types.
    pub filter: Filter,
    /// Batch bounds.
    pub limits: Limits,
    /// Codec options (CRC checks, unknown frame types).
    pub read: ReadOptions,
    /// Time order: most bytes the orderings of the segments read at one
    /// time may hold together (see [`Request::reorder_bytes`]).
    pub reorder_bytes: usize,
    /// [`read_table`] splits segments into ranges of at least this many
    /// bytes to decode them on several threads.
    pub min_chunk_bytes: u64,
    /// The form of the fixed-point fields' twins, built as the rows come
    /// (see [`Columns::with_prices`]).
    pub prices: Prices,
}

impl ReadSpec {
    /// The read session's request for this read.
    pub fn request(&self) -> Request {
        Request {
            order: self.order,
            filter: self.filter.clone(),
            reorder_bytes: self.reorder_bytes,
            read: self.read,
            ..Request::default()
        }
    }
}

impl Default for ReadSpec {
    fn default() -> Self {
        ReadSpec {
            order: Order::Time,
            filter: Filter::default(),
            limits: Limits::default(),
            read: ReadOptions::default(),
            reorder_bytes: Request::default().reorder_bytes,
            min_chunk_bytes: 4 << 20,
            prices: Prices::Decimal,
        }
    }
}

/// How a read went.
#[derive(Clone, Debug, Default)]
pub struct ReadSummary {
    /// Rows handed to the sink, by [`RecordType`] (index = `rt as usize`).
    pub rows: [u64; 4],
    /// Segments that stopped early (errors and torn tails), as the read
    /// session reports them ([`Session::problems`]).
    pub problems: Vec<Problem>,
    /// Whether [`read_table`] read the tape in ranges on several threads
    /// and concatenated them (false for [`read_batches`]).
    pub direct: bool,
}

impl ReadSummary {
    /// Rows of one type.
    pub fn rows_of(&self, rt: RecordType) -> u64 {
        self.rows[rt as usize]
    }

    /// Rows of every type.
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    /// The read judged strict or lenient (floxlog's one judgement of a
    /// read: which problems are errors, the torn-tail warnings).
    pub fn outcome(&self, strict: bool) -> ReadOutcome<'_> {
        ReadOutcome::new(&self.problems, strict).with_events(self.total_rows())
    }

    /// The first problem that is an error: any, when `strict`; otherwise
    /// one that is not the torn tail of an unfinished segment.
    pub fn error(&self, strict: bool) -> Option<TapeError> {
        self.outcome(strict).error()
    }
}

/// Where batches go. An error from the sink ends the read with it.
pub type Sink<'s> = dyn FnMut(RecordType, RecordBatch) -> Result<(), TapeError> + 's;

fn arrow_error(e: ArrowError) -> TapeError {
    TapeError::input(None, format!("building an Arrow batch: {e}"))
}

/// Column builders and the sink.
struct Emit<'x, 's> {
    cols: Columns,
    symbols: &'x Symbols,
    sink: &'x mut Sink<'s>,
    rows: [u64; 4],
}

impl<'x, 's> Emit<'x, 's> {
    fn new(cols: Columns, symbols: &'x Symbols, sink: &'x mut Sink<'s>) -> Self {
        Emit {
            cols,
            symbols,
            sink,
            rows: [0; 4],
        }
    }

    #[inline]
    fn push(&mut self, ev: &Event<'_>, path: &Path, offset: u64) -> Result<(), TapeError> {
        match self.cols.push(ev) {
            Ok(None) => Ok(()),
            Ok(Some(rt)) => self.flush(rt),
            Err(msg) => Err(TapeError::input(Some(path), msg).at(offset)),
        }
    }

    fn flush(&mut self, rt: RecordType) -> Result<(), TapeError> {
        if let Some(b) = self.cols.finish(rt, self.symbols).map_err(arrow_error)? {
            self.rows[rt as usize] += b.num_rows() as u64;
            (self.sink)(rt, b)?;
        }
        Ok(())
    }

    fn flush_all(&mut self) -> Result<(), TapeError> {
        RecordType::ALL.iter().try_for_each(|&rt| self.flush(rt))
    }
}

/// Reads the events of `session`'s request (opened with
/// [`ReadSpec::request`]) as batches of at most `spec.limits.rows` rows,
/// each handed to `sink` with its table (one table per [`RecordType`]; set
/// `spec.filter.types` to read fewer).
///
/// Batches of different types are interleaved as they fill; within a type
/// rows keep the read order. Segments that fail are recorded in the
/// summary's `problems` and the others are read on, as the session reads;
/// every event before an error has been handed to the sink by the time
/// this returns. `Err` is kept for what ends the whole read: the sink's
/// errors, the merge's memory budget, a pool-state payload too large for
/// an Arrow batch. Files that could not be opened are in
/// [`Session::open_errors`].
pub fn read_batches(
    session: &mut Session,
    spec: &ReadSpec,
    symbols: &Symbols,
    sink: &mut Sink<'_>,
) -> Result<ReadSummary, TapeError> {
    let cols = Columns::new(spec.limits).with_prices(spec.prices);
    read_into(session, cols, symbols, sink)
}

/// [`read_batches`] into `cols`.
fn read_into(
    session: &mut Session,
    cols: Columns,
    symbols: &Symbols,
    sink: &mut Sink<'_>,
) -> Result<ReadSummary, TapeError> {
    let paths: Vec<PathBuf> = session
        .tape()
        .segments
        .iter()
        .map(|s| s.path.clone())
        .collect();
    let mut emit = Emit::new(cols, symbols, sink);
    session.columns(&mut ColumnEmit {
        emit: &mut emit,
        paths: &paths,
        path: Path::new(""),
    })?;
    emit.flush_all()?;
    Ok(ReadSummary {
        rows: emit.rows,
        problems: session.problems().to_vec(),
        direct: false,
    })
}

/// The builders as a session's sink: errors name the path of the segment
/// last told (one piece's: `paths` empty).
struct ColumnEmit<'e, 'x, 's> {
    emit: &'e mut Emit<'x, 's>,
    paths: &'e [PathBuf],
    path: &'e Path,
}

impl ColumnSink for ColumnEmit<'_, '_, '_> {
    #[inline]
    fn event(&mut self, ev: &Event<'_>, at: u64) -> Result<(), TapeError> {
        self.emit.push(ev, self.path, at)
    }

    fn trade_room(&mut self, want: usize) -> Option<TradeColumns<'_>> {
        Some(self.emit.cols.trade_room(want))
    }

    fn trades_stored(&mut self, n: usize) -> Result<(), TapeError> {
        match self.emit.cols.trades_stored(n) {
            Some(rt) => self.emit.flush(rt),
            None => Ok(()),
        }
    }

    fn segment(&mut self, segment: usize) {
        if let Some(p) = self.paths.get(segment) {
            self.path = p;
        }
    }
}

/// Reads `piece` (of a session opened with `spec`'s [`ReadSpec::request`])
/// into batches of its own, of at most `spec.limits`, handed to `sink`;
/// the rows handed over by [`RecordType`].
pub fn read_piece(
    piece: &Piece<'_>,
    spec: &ReadSpec,
    symbols: &Symbols,
    sink: &mut Sink<'_>,
) -> Result<[u64; 4], TapeError> {
    let cols = Columns::new(spec.limits).with_prices(spec.prices);
    piece_into(piece, cols, symbols, sink)
}

/// [`read_piece`] into `cols`.
fn piece_into(
    piece: &Piece<'_>,
    cols: Columns,
    symbols: &Symbols,
    sink: &mut Sink<'_>,
) -> Result<[u64; 4], TapeError> {
    let path = piece.path().unwrap_or(Path::new(""));
    let mut emit = Emit::new(cols, symbols, sink);
    piece.read(&mut ColumnEmit {
        emit: &mut emit,
        paths: &[],
        path,
    })?;
    emit.flush_all()?;
    Ok(emit.rows)
}

/// Reads everything `spec` selects into memory: the same rows, in the same
/// order per type, as [`read_batches`], for callers that want a whole
/// table (a `pyarrow.Table`, say) rather than a stream. With `jobs` > 1
/// (0: one per core) the session's pieces ([`Session::pieces_on_trust`]) are decoded on that
/// many threads; file order concatenates them, time order when each is in
/// order and they do not overlap in time (checked on the decoded
/// timestamps, so no pass ahead is needed), and otherwise reads again
/// through [`read_batches`] on one thread; so it does when an index entry
/// cut at on trust is not proven by the reads (a damaged segment, or an
/// index that points off the frame chain). Batches
/// end at range boundaries, so there can be more, smaller ones than
/// [`read_batches`] gives.
pub fn read_table(
    session: &mut Session,
    spec: &ReadSpec,
    symbols: &Symbols,
    jobs: usize,
) -> Result<(Vec<(RecordType, RecordBatch)>, ReadSummary), TapeError> {
    let jobs = floxlog::par::threads(jobs);
    if jobs > 1 {
        if let Some(done) = read_parallel(session, spec, symbols, jobs)? {
            return Ok(done);
        }
    }
    let mut out = Vec::new();
    let rows = spec.limits.rows;
    let summary = read_into(session, table_columns(spec), symbols, &mut |rt, b| {
        slice_into(&mut out, rt, b, rows);
        Ok(())
    })?;
    Ok((out, summary))
}

/// Rows a trade batch of a whole table may grow to before it is sliced
/// into batches of the size asked for (see [`Columns::growing`]).
const TABLE_ROWS: usize = 1 << 20;

/// Builders for a read kept whole.
fn table_columns(spec: &ReadSpec) -> Columns {
    Columns::growing(Limits {
        rows: spec.limits.rows.max(TABLE_ROWS),
        ..spec.limits
    })
    .with_prices(spec.prices)
}

/// `b` into `out` as zero-copy slices of at most `rows` rows.
fn slice_into(
    out: &mut Vec<(RecordType, RecordBatch)>,
    rt: RecordType,
    b: RecordBatch,
    rows: usize,
) {
    let n = b.num_rows();
    if n <= rows {
        out.push((rt, b));
        return;
    }
    let mut at = 0;
    while at < n {
        let len = rows.min(n - at);
        out.push((rt, b.slice(at, len)));
        at += len;
    }
}

type Table = (Vec<(RecordType, RecordBatch)>, ReadSummary);

/// The parallel part of [`read_table`]; `None` when the session's pieces
/// are no sequential read's (see [`Session::pieces_on_trust`]).
fn read_parallel(
    session: &Session,
    spec: &ReadSpec,
    symbols: &Symbols,
    jobs: usize,
) -> Result<Option<Table>, TapeError> {
    // Index entries are cut at on trust (the proof would read every frame
    // header first); a cut the reads do not prove, or time order that
    // concatenation cannot give, sends the read to the one-pass path
    // (the engine's merge, behind read_batches: no second merge here).
    let done = session.pieces_on_trust(jobs, spec.min_chunk_bytes, &|p| {
        let mut batches = Vec::new();
        let max = spec.limits.rows;
        let rows = piece_into(p, table_columns(spec), symbols, &mut |rt, b| {
            slice_into(&mut batches, rt, b, max);
            Ok(())
        })?;
        Ok((batches, rows))
    })?;
    let Some(mut done) = done else {
        return Ok(None);
    };
    let mut summary = ReadSummary {
        direct: true,
        problems: std::mem::take(&mut done.problems),
        ..ReadSummary::default()
    };
    let mut out = Vec::new();
    for i in done.order {
        let (batches, rows) = &mut done.all[i].0;
        for (sum, n) in summary.rows.iter_mut().zip(rows.iter()) {
            *sum += n;
        }
        out.append(batches);
    }
    Ok(Some((out, summary)))
}
