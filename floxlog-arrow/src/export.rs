//! Export: a tape as a Hive-partitioned dataset of Parquet, Arrow IPC or
//! CSV files, which Spark, Trino, DuckDB and DataFusion read as one table
//! per record type:
//!
//! ```text
//! OUT/type=trade/date=2024-04-26/part-000003-0000.parquet
//! OUT/type=book_snapshot/date=2024-04-26/symbol=BTCUSDT/part-000003-0000.parquet
//! ```
//!
//! `type` is one of `trade`, `book_snapshot`, `book_delta`,
//! `option_quote`, `pool_state`; `date` the UTC day of `exchange_ts_ns`;
//! `symbol` (optional) the symbol's name where the tape's metadata gives
//! one made only of `[A-Za-z0-9._-]`, its id otherwise. Segments are
//! exported in parallel, one worker per segment at a time; each writes
//! its own files (`part-<segment>-<n>`), rows in file order.
//!
//! The dataset is built in a hidden `.OUT.partial-PID` beside `OUT`, every
//! file fsynced, and renamed into place when complete; a run that fails
//! or is killed never leaves a half dataset at `OUT` (a killed run's
//! temporary is removed by the next export to the same path). Every row
//! read is written: per segment, the rows written are checked against the
//! rows read, and, for an unfiltered export of a finished segment read to
//! its end, against the event count its header claims.

use crate::columns::Limits;
use crate::convert::Conversion;
use crate::read::{read_piece, ReadSpec};
use crate::schema::RecordType;
use crate::symbols::Symbols;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt32Type};
use arrow_array::{RecordBatch, UInt32Array};
use floxlog::json::PriceStyle;
use floxlog::output::Csv;
use floxlog::tape::dir::{dir_and_name, sync_dir};
use floxlog::tape::dir::{TapeLock, LOCK_FILE};
use floxlog::tape::read::{Piece, Problem, Session};
use floxlog::tape::{Filter, Hint, Order, ReadOutcome, Remedy, Tape, TapeError};
use floxlog::time::civil_from_days;
use floxlog_core::{ReadOptions, UnknownTypes};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as PqCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// File format of the dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet (`.parquet`).
    Parquet,
    /// Arrow IPC file format (`.arrow`).
    Arrow,
    /// CSV with a header, raw integer fields as `floxlog cat --format csv`
    /// prints them (`.csv`).
    Csv,
}

impl Format {
    fn ext(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Arrow => "arrow",
            Format::Csv => "csv",
        }
    }
}

/// Compression of Parquet pages and Arrow IPC buffers (CSV is plain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// zstd at this level (1 to 22).
    Zstd(i32),
    /// Uncompressed.
    None,
}

/// Settings of an export.
#[derive(Clone, Debug)]
pub struct ExportSpec {
    /// File format.
    pub format: Format,
    /// Compression.
    pub codec: Codec,
    /// Add a `symbol=` partition level.
    pub by_symbol: bool,
    /// Which events (time range, symbols, record types).
    pub filter: Filter,
    /// Rows per Arrow batch (and the Parquet row-group size is a multiple).
    pub rows: usize,
    /// Codec options (CRC checks, unknown frame types).
    pub read: ReadOptions,
    /// Segments exported at once (0: one per core).
    pub jobs: usize,
    /// Replace an existing `OUT`.
    pub overwrite: bool,
    /// Large segments are exported as byte ranges of at least this many
    /// bytes, on several threads (see [`floxlog::tape::read::Session::pieces`]).
    pub min_chunk_bytes: u64,
    /// Timestamp unit and price columns of Parquet and Arrow files (CSV
    /// holds the raw integers).
    pub convert: Conversion,
}

impl Default for ExportSpec {
    fn default() -> Self {
        ExportSpec {
            format: Format::Parquet,
            codec: Codec::Zstd(1),
            by_symbol: false,
            filter: Filter::default(),
            rows: crate::columns::DEFAULT_ROWS,
            read: ReadOptions::default(),
            jobs: 0,
            overwrite: false,
            min_chunk_bytes: ReadSpec::default().min_chunk_bytes,
            convert: Conversion::default(),
        }
    }
}

/// The partition types, in the order summaries list them.
pub const PARTITION_TYPES: [&str; 5] = [
    "trade",
    "book_snapshot",
    "book_delta",
    "option_quote",
    "pool_state",
];

/// What an export did.
#[derive(Clone, Debug, Default)]
pub struct ExportSummary {
    /// Rows written per partition type (index into [`PARTITION_TYPES`]).
    pub rows: [u64; 5],
    /// Rows read from the tape per partition type.
    pub read_rows: [u64; 5],
    /// Files written.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Segments that stopped early (errors and torn tails); the rows before
    /// each are in the dataset.
    pub problems: Vec<Problem>,
    /// Segment files that could not be opened.
    pub open_errors: Vec<TapeError>,
}

impl ExportSummary {
    /// Rows written in all.
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    /// The read judged strict or lenient (which problems are errors, the
    /// torn-tail warnings): the one judgement front ends format.
    pub fn outcome(&self, strict: bool) -> ReadOutcome<'_> {
        ReadOutcome::new(&self.problems, strict).with_events(self.read_rows.iter().sum())
    }
}

/// One partition's file, open.
enum PartWriter {
    Parquet(Box<ArrowWriter<File>>),
    Arrow(Box<arrow_ipc::writer::FileWriter<File>>),
    Csv(BufWriter<File>, Box<Csv>, Vec<u8>),
}

struct Part {
    path: PathBuf,
    writer: PartWriter,
    convert: Conversion,
}

fn io_err<'p>(path: &'p Path, doing: &str) -> impl FnOnce(std::io::Error) -> TapeError + 'p {
    let doing = doing.to_string();
    move |e| TapeError::io(path, &doing, e)
}

fn write_err(path: &Path, e: impl std::fmt::Display) -> TapeError {
    TapeError::input(Some(path), format!("writing the export: {e}"))
}

impl Part {
    fn create(
        path: PathBuf,
        rt: RecordType,
        ptype: usize,
        spec: &ExportSpec,
    ) -> Result<Part, TapeError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(io_err(dir, "creating the partition directory"))?;
        }
        let file = File::create(&path).map_err(io_err(&path, "creating the file"))?;
        let writer = match spec.format {
            Format::Parquet => {
                let compression = match spec.codec {
                    Codec::Zstd(l) => PqCompression::ZSTD(
                        ZstdLevel::try_new(l)
                            .map_err(|e| TapeError::usage(format!("zstd level: {e}")))?,
                    ),
                    Codec::None => PqCompression::UNCOMPRESSED,
                };
                // Dictionary pages only where values repeat (names, tags):
                // on ids, prices and timestamps they cost time and fall
                // back to plain anyway.
                let mut props = WriterProperties::builder()
                    .set_compression(compression)
                    .set_dictionary_enabled(false)
                    .set_max_row_group_row_count(Some(spec.rows.max(1).saturating_mul(8)));
                for c in [
                    "symbol",
                    "symbol_id",
                    "side",
                    "instrument",
                    "exchange_id",
                    "kind",
                    "header_type",
                    "sub_type",
                    "venue",
                ] {
                    props = props.set_column_dictionary_enabled(ColumnPath::from(c), true);
                }
                let props = props.build();
                PartWriter::Parquet(Box::new(
                    ArrowWriter::try_new(file, spec.convert.schema(&rt.schema()), Some(props))
                        .map_err(|e| write_err(&path, e))?,
                ))
            }
            Format::Arrow => {
                let opts = arrow_ipc::writer::IpcWriteOptions::default()
                    .try_with_compression(match spec.codec {
                        Codec::Zstd(_) => Some(arrow_ipc::CompressionType::ZSTD),
                        Codec::None => None,
                    })
                    .map_err(|e| write_err(&path, e))?;
                PartWriter::Arrow(Box::new(
                    arrow_ipc::writer::FileWriter::try_new_with_options(
                        file,
                        &spec.convert.schema(&rt.schema()),
                        opts,
                    )
                    .map_err(|e| write_err(&path, e))?,
                ))
            }
            Format::Csv => {
                let mut mask = [false; 6];
                mask[frame_type_of(ptype) as usize] = true;
                let csv = Csv::new(Some(mask), PriceStyle::Raw);
                let mut head = Vec::new();
                csv.write_header(&mut head);
                let mut w = BufWriter::with_capacity(1 << 20, file);
                w.write_all(&head).map_err(io_err(&path, "writing"))?;
                PartWriter::Csv(w, Box::new(csv), Vec::with_capacity(1 << 16))
            }
        };
        Ok(Part {
            path,
            writer,
            convert: spec.convert,
        })
    }

    fn write(&mut self, rt: RecordType, b: &RecordBatch) -> Result<(), TapeError> {
        let path = &self.path;
        match &mut self.writer {
            PartWriter::Parquet(w) => {
                let b = self.convert.batch(b).map_err(|e| write_err(path, e))?;
                w.write(&b).map_err(|e| write_err(path, e))
            }
            PartWriter::Arrow(w) => {
                let b = self.convert.batch(b).map_err(|e| write_err(path, e))?;
                w.write(&b).map_err(|e| write_err(path, e))
            }
            PartWriter::Csv(w, csv, buf) => {
                crate::append::for_each_event(rt, b, &mut |ev| {
                    csv.write_row(buf, ev);
                    if buf.len() >= 1 << 16 {
                        w.write_all(buf).map_err(io_err(path, "writing"))?;
                        buf.clear();
                    }
                    Ok(())
                })?;
                Ok(())
            }
        }
    }

    /// Finishes the file and fsyncs it; returns its size.
    fn finish(self) -> Result<u64, TapeError> {
        let path = self.path;
        let file = match self.writer {
            PartWriter::Parquet(w) => w.into_inner().map_err(|e| write_err(&path, e))?,
            PartWriter::Arrow(mut w) => {
                w.finish().map_err(|e| write_err(&path, e))?;
                w.into_inner().map_err(|e| write_err(&path, e))?
            }
            PartWriter::Csv(mut w, _, buf) => {
                w.write_all(&buf).map_err(io_err(&path, "writing"))?;
                w.into_inner()
                    .map_err(|e| TapeError::io(&path, "writing", e.into_error()))?
            }
        };
        file.sync_all().map_err(io_err(&path, "syncing"))?;
        let len = file
            .metadata()
            .map_err(io_err(&path, "reading the size of"))?
            .len();
        Ok(len)
    }
}

fn frame_type_of(ptype: usize) -> u8 {
    ptype as u8 + 1
}

/// Partition of a row: (partition type, UTC day, symbol id or 0).
type Key = (usize, i64, u32);

const NS_PER_DAY: i64 = 86_400_000_000_000;

/// The partition keys of a batch's rows.
fn row_keys(rt: RecordType, b: &RecordBatch, by_symbol: bool) -> Vec<Key> {
    let ts = b
        .column_by_name("exchange_ts_ns")
        .map(|c| c.as_primitive::<Int64Type>().values().to_vec())
        .unwrap_or_default();
    let ids = by_symbol.then(|| {
        b.column_by_name("symbol_id")
            .map(|c| c.as_primitive::<UInt32Type>().values().to_vec())
            .unwrap_or_default()
    });
    let snapshot: Option<Vec<bool>> = (rt == RecordType::Book).then(|| {
        b.column_by_name("kind")
            .map(|c| {
                c.as_string::<i32>()
                    .iter()
                    .map(|k| k == Some("snapshot"))
                    .collect()
            })
            .unwrap_or_default()
    });
    (0..b.num_rows())
        .map(|i| {
            let ptype = match rt {
                RecordType::Trade => 0,
                RecordType::Book => {
                    if snapshot.as_ref().is_some_and(|s| s[i]) {
                        1
                    } else {
                        2
                    }
                }
                RecordType::OptionQuote => 3,
                RecordType::PoolState => 4,
            };
            let sym = ids.as_ref().map_or(0, |v| v[i]);
            (ptype, ts[i].div_euclid(NS_PER_DAY), sym)
        })
        .collect()
}

/// A partition value safe in a path: the name if it is made of
/// `[A-Za-z0-9._-]` (and not `.`/`..`), the id otherwise.
fn symbol_value(symbols: &Symbols, id: u32) -> String {
    match symbols.name(id) {
        Some(n)
            if !n.is_empty()
                && n != "."
                && n != ".."
                && n.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c)) =>
        {
            n.to_string()
        }
        _ => id.to_string(),
    }
}

fn partition_dir(root: &Path, key: Key, by_symbol: bool, symbols: &Symbols) -> PathBuf {
    let (y, m, d) = civil_from_days(key.1);
    let mut p = root
        .join(format!("type={}", PARTITION_TYPES[key.0]))
        .join(format!("date={y:04}-{m:02}-{d:02}"));
    if by_symbol {
        p = p.join(format!("symbol={}", symbol_value(symbols, key.2)));
    }
    p
}

/// What one range's export produced.
struct RangeOut {
    /// Rows written by partition type.
    rows: [u64; 5],
    /// Rows read by partition type.
    read_rows: [u64; 5],
    /// The files written: path, size.
    files: Vec<(PathBuf, u64)>,
    dirs: Vec<PathBuf>,
}

/// Exports `piece` into `root`; its files are
/// `part-<segment>-<piece>-<n>`.
fn export_range(
    piece: &Piece<'_>,
    root: &Path,
    spec: &ExportSpec,
    rspec: &ReadSpec,
    symbols: &Symbols,
) -> Result<RangeOut, TapeError> {
    let i = piece.index();
    let seg = piece.segment().unwrap_or(0);
    let mut read_rows = [0u64; 5];
    let mut dirs = Vec::new();
    let mut parts: BTreeMap<Key, (Part, u64)> = BTreeMap::new();
    let mut made = 0usize;
    let read = read_piece(piece, rspec, symbols, &mut |rt, b| {
        let keys = row_keys(rt, &b, spec.by_symbol);
        let uniform = keys
            .first()
            .filter(|k0| keys.iter().all(|k| k == *k0))
            .copied();
        let pieces: Vec<(Key, RecordBatch)> = match uniform {
            Some(k) => vec![(k, b)],
            None => {
                let mut groups: BTreeMap<Key, Vec<u32>> = BTreeMap::new();
                for (row, k) in keys.iter().enumerate() {
                    groups.entry(*k).or_default().push(row as u32);
                }
                groups
                    .into_iter()
                    .map(|(k, rows)| {
                        arrow_select::take::take_record_batch(&b, &UInt32Array::from(rows))
                            .map(|piece| (k, piece))
                            .map_err(|e| TapeError::input(None, format!("splitting a batch: {e}")))
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        for (k, piece) in pieces {
            read_rows[k.0] += piece.num_rows() as u64;
            let entry = match parts.entry(k) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    let dir = partition_dir(root, k, spec.by_symbol, symbols);
                    let path = dir.join(format!(
                        "part-{seg:06}-{i:04}-{made:03}.{}",
                        spec.format.ext()
                    ));
                    made += 1;
                    dirs.push(dir);
                    v.insert((Part::create(path, rt, k.0, spec)?, 0))
                }
            };
            entry.0.write(rt, &piece)?;
            entry.1 += piece.num_rows() as u64;
        }
        Ok(())
    });
    // Finish what was written even when the read failed: the caller
    // removes the files of a range it does not keep.
    let mut out = RangeOut {
        rows: [0; 5],
        read_rows,
        files: Vec::new(),
        dirs,
    };
    let mut finish_err = None;
    for ((ptype, _, _), (part, rows)) in parts {
        let path = part.path.clone();
        match part.finish() {
            Ok(len) => {
                out.files.push((path, len));
                out.rows[ptype] += rows;
            }
            Err(e) => {
                finish_err.get_or_insert(e);
            }
        }
    }
    read?;
    if let Some(e) = finish_err {
        return Err(e);
    }
    if out.rows != out.read_rows {
        return Err(TapeError::input(
            None,
            format!(
                "internal error: range {i} wrote {:?} rows by type, read {:?}",
                out.rows, out.read_rows
            ),
        ));
    }
    Ok(out)
}

/// An unfiltered export of a finished segment read to its end must hold
/// the events its header counts.
fn check_header_count(
    spec: &ExportSpec,
    session: &Session,
    segment: usize,
    rows: u64,
) -> Result<(), TapeError> {
    let f = &spec.filter;
    let unfiltered = f.from.is_none() && f.to.is_none() && f.symbols.is_none() && f.types.is_none();
    if !unfiltered || spec.read.unknown_types != UnknownTypes::Reject {
        return Ok(());
    }
    let Some(count) = session.header_events(segment) else {
        return Ok(());
    };
    if count != rows {
        let path = session
            .tape()
            .segments
            .get(segment)
            .map(|s| s.path.as_path());
        return Err(TapeError::input(
            path,
            format!("the segment header counts {count} events, the export read {rows}"),
        )
        .with_hint(Hint::new("{} tells where", &[Remedy::Verify])));
    }
    Ok(())
}

/// Removes the temporary directory unless disarmed.
struct TmpGuard(Option<PathBuf>);

impl Drop for TmpGuard {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// Exports `tape` to the dataset directory `out` (see the module docs).
/// `progress` is called with the bytes of each segment done.
///
/// Segment errors do not stop the export: the rows before each are in the
/// dataset and the summary lists the problems (callers decide the exit
/// status). `Err` means no dataset was published at `out`.
pub fn export(
    tape: &Tape,
    out: &Path,
    spec: &ExportSpec,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<ExportSummary, TapeError> {
    let (parent, name) = dir_and_name(out)?;
    if out.symlink_metadata().is_ok() && !spec.overwrite {
        return Err(
            TapeError::usage(format!("{} already exists", out.display())).with_hint(Hint::new(
                "choose a new output path, or {}",
                &[Remedy::Overwrite],
            )),
        );
    }
    floxlog::tape::dir::remove_stale_partials(parent, &name);
    let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(io_err(&tmp, "creating the export directory"))?;
    let mut guard = TmpGuard(Some(tmp.clone()));
    let lock = TapeLock::acquire(&tmp, "exporting")?;
    let symbols = Symbols::from_tape(tape);
    let jobs = match spec.jobs {
        0 => std::thread::available_parallelism().map_or(1, |p| p.get()),
        j => j,
    };
    let rspec = ReadSpec {
        order: Order::File,
        filter: spec.filter.clone(),
        limits: Limits::rows(spec.rows),
        read: spec.read,
        min_chunk_bytes: spec.min_chunk_bytes,
        ..ReadSpec::default()
    };
    let session = Session::open(tape.clone(), rspec.request());
    let open_errors = session.open_errors().to_vec();
    // Progress by the bytes of each piece's segment, shared out among
    // the segment's pieces as they finish.
    let left: Vec<std::sync::atomic::AtomicU64> = (0..session.tape().segments.len())
        .map(|i| std::sync::atomic::AtomicU64::new(session.segment_bytes(i)))
        .collect();
    // Cuts proven before the reads: the pieces always settle.
    let done = session
        .pieces(jobs, rspec.min_chunk_bytes, &|p| {
            let r = export_range(p, &tmp, spec, &rspec, &symbols);
            if let Some(l) = p.segment().and_then(|s| left.get(s)) {
                progress(l.swap(0, std::sync::atomic::Ordering::Relaxed));
            }
            r
        })?
        .ok_or_else(|| TapeError::input(None, "export: a range cut was not on the frame chain"))?;
    let problems = done.problems;
    let mut summary = ExportSummary {
        problems,
        open_errors,
        ..ExportSummary::default()
    };
    let mut dirs = Vec::new();
    let mut seg_rows: BTreeMap<usize, u64> = BTreeMap::new();
    for (o, seg, kept) in done.all {
        if !kept {
            // A sequential read never gets here (an earlier range of the
            // segment ended on an error): these rows are not the tape's.
            for (f, _) in &o.files {
                std::fs::remove_file(f).map_err(io_err(f, "removing"))?;
            }
            continue;
        }
        for k in 0..5 {
            summary.rows[k] += o.rows[k];
            summary.read_rows[k] += o.read_rows[k];
        }
        summary.files += o.files.len() as u64;
        summary.bytes += o.files.iter().map(|f| f.1).sum::<u64>();
        if let Some(seg) = seg {
            *seg_rows.entry(seg).or_default() += o.rows.iter().sum::<u64>();
        }
        dirs.extend(o.dirs);
    }
    for (seg, rows) in seg_rows {
        if !summary.problems.iter().any(|p| p.segment == seg) {
            check_header_count(spec, &session, seg, rows)?;
        }
    }
    // Every partition directory and its parents, then the rename.
    dirs.sort();
    dirs.dedup();
    let mut synced = std::collections::BTreeSet::new();
    for d in &dirs {
        let mut p = d.as_path();
        while p.starts_with(&tmp) && synced.insert(p.to_path_buf()) {
            sync_dir(p)?;
            match p.parent() {
                Some(q) => p = q,
                None => break,
            }
        }
    }
    drop(lock);
    let _ = std::fs::remove_file(tmp.join(LOCK_FILE));
    sync_dir(&tmp)?;
    if out.symlink_metadata().is_ok() {
        // --overwrite: move the old one aside first, so that a failure
        // leaves one of the two whole.
        let old = parent.join(format!(".{name}.old-{}", std::process::id()));
        std::fs::rename(out, &old).map_err(io_err(out, "moving the old export aside"))?;
        std::fs::rename(&tmp, out).map_err(io_err(out, "moving the export into place"))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(&tmp, out).map_err(io_err(out, "moving the export into place"))?;
    }
    guard.0 = None;
    sync_dir(parent)?;
    Ok(summary)
}
