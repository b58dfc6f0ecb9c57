//! `floxlog export`: a tape as a Hive-partitioned Parquet, Arrow IPC or CSV
//! dataset (see `floxlog_arrow::export`).

use super::common::{progress, report_listing, CmdResult, FilterArgs, TapeArgs};
use super::staging::Staging;
use floxlog::tape::remote::{self, is_url};
use floxlog::tape::Kept;
use floxlog_arrow::export::{export, Codec, ExportSpec, Format, PARTITION_TYPES};
use floxlog_arrow::{Conversion, Prices, Timestamps};
use std::path::PathBuf;
use std::time::Instant;

/// Dataset formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum FormatArg {
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC files.
    Arrow,
    /// CSV with a header (raw integer fields, as `cat --format csv`).
    Csv,
}

/// Compression of Parquet pages / Arrow IPC buffers.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum CodecArg {
    /// zstd (level from --zstd-level).
    Zstd,
    /// None.
    None,
}

/// Unit of the exchange_ts / recv_ts columns.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum TimestampsArg {
    /// Nanoseconds (Spark refuses these in Parquet).
    Ns,
    /// Microseconds, floored (Spark, and engines without nanoseconds).
    Us,
    /// Milliseconds, floored.
    Ms,
}

/// Price and quantity columns.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum PricesArg {
    /// Exact decimal(38, 8).
    Decimal,
    /// float64 (raw / 1e8, rounded once).
    Float,
    /// Only the raw integer columns.
    Raw,
}

/// Export a tape as a Hive-partitioned dataset (Parquet, Arrow IPC or CSV).
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Export a tape as a Hive-partitioned dataset \
that Spark, Trino, DuckDB and DataFusion read as one table per record type:\n\n  \
OUT/type=trade/date=2024-04-26/part-000000-0000.parquet\n\n\
type is trade, book_snapshot, book_delta, option_quote or pool_state; date the UTC day of \
exchange_ts_ns; --by-symbol adds symbol=NAME (or the id where the tape names none). Columns: the \
raw fields of the conformance corpus (always exact), exchange_ts/recv_ts as timestamp[ns, UTC] \
(--timestamps us or ms for Spark and engines without nanoseconds: floored), prices and quantities \
as decimal(38, 8) (--prices float: float64; raw: none besides the raw integers), symbol names. Segments are exported in parallel (--jobs), rows in \
file order.\n\n\
The dataset is built beside OUT under a hidden name and moved into place when complete. OUT may \
be an s3://bucket/prefix URL: the dataset is built in the system's temporary directory, then \
uploaded object by object (not atomic: see docs/object-storage.md). Every \
row read is written, and the counts are checked and printed; a damaged segment is exported up to \
the damage and reported (exit 1).")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Output directory, or an s3://bucket/prefix URL (must not exist,
    /// or hold objects, unless --overwrite).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// File format.
    #[arg(long, value_enum, default_value = "parquet")]
    pub format: FormatArg,
    /// Compression (Parquet and Arrow).
    #[arg(long, value_enum, default_value = "zstd")]
    pub compression: CodecArg,
    /// zstd level (1 fastest to 22 smallest).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd_level: i32,
    /// Partition by symbol too.
    #[arg(long)]
    pub by_symbol: bool,
    /// Unit of the exchange_ts / recv_ts columns (Parquet and Arrow; the
    /// *_ts_ns integers stay exact).
    #[arg(long, value_enum, default_value = "ns")]
    pub timestamps: TimestampsArg,
    /// Price and quantity columns (Parquet and Arrow; the *_raw integers
    /// stay).
    #[arg(long, value_enum, default_value = "decimal")]
    pub prices: PricesArg,
    /// Rows per batch (Parquet row groups hold 8 batches).
    #[arg(long, default_value_t = floxlog_arrow::DEFAULT_ROWS as u32, value_parser = clap::value_parser!(u32).range(1..))]
    pub rows: u32,
    /// Segments exported at once [default: one per core].
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Replace OUT if it exists.
    #[arg(long)]
    pub overwrite: bool,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Fail (exit 1) on the torn tail of an unfinished segment too.
    #[arg(long)]
    pub strict: bool,
    /// Skip frames of record types 1.0 does not define instead of stopping.
    #[arg(long)]
    pub skip_unknown: bool,
}

/// Runs `export`.
pub fn run(a: Args) -> CmdResult {
    let convert = Conversion {
        timestamps: match a.timestamps {
            TimestampsArg::Ns => Timestamps::Ns,
            TimestampsArg::Us => Timestamps::Us,
            TimestampsArg::Ms => Timestamps::Ms,
        },
        prices: match a.prices {
            PricesArg::Decimal => Prices::Decimal,
            PricesArg::Float => Prices::Float,
            PricesArg::Raw => Prices::Raw,
        },
    };
    if a.format == FormatArg::Csv && !convert.is_identity() {
        return Err(floxlog::tape::TapeError::usage(
            "--timestamps and --prices apply to Parquet and Arrow: CSV holds the raw integers",
        ));
    }
    let remote = is_url(&a.output);
    // One list call before any work: an occupied prefix is refused as an
    // existing local OUT is, and a missing bucket or a store that cannot
    // be reached fails now, not after the export.
    if remote && remote::occupied(&a.output)? && !a.overwrite {
        return Err(remote::exists(&a.output));
    }
    let tape = a.tape.open()?;
    let filter = a.filter.filter(&tape)?;
    let unread = report_listing(&tape);
    let spec = ExportSpec {
        format: match a.format {
            FormatArg::Parquet => Format::Parquet,
            FormatArg::Arrow => Format::Arrow,
            FormatArg::Csv => Format::Csv,
        },
        codec: match a.compression {
            CodecArg::Zstd => Codec::Zstd(a.zstd_level),
            CodecArg::None => Codec::None,
        },
        by_symbol: a.by_symbol,
        filter,
        rows: a.rows as usize,
        read: super::common::read_options(a.skip_unknown),
        jobs: a.jobs.unwrap_or(0),
        overwrite: a.overwrite,
        convert,
        ..ExportSpec::default()
    };
    let pb = progress(tape.file_bytes(), "export");
    let t0 = Instant::now();
    let staging = if remote { Some(Staging::new()?) } else { None };
    let out = staging
        .as_ref()
        .map_or(a.output.clone(), |s| s.path().join("dataset"));
    let s = export(&tape, &out, &spec, &|n| pb.inc(n))?;
    pb.finish_and_clear();
    let uploaded = match &staging {
        Some(_) => Some(remote::upload_dir(&out, &a.output, a.overwrite)?),
        None => None,
    };
    drop(staging);
    let secs = t0.elapsed().as_secs_f64();
    let mut failed = unread > 0;
    for e in &s.open_errors {
        eprintln!("floxlog: error: {e}");
        failed = true;
    }
    let outcome = s.outcome(a.strict);
    for p in outcome.problems {
        if !outcome.is_error(p) {
            eprintln!("floxlog: warning: {}", p.torn_warning(Kept::Exported));
            continue;
        }
        eprintln!(
            "floxlog: error: {} (exported the {} events before it)",
            p.to_error(),
            p.events_before
        );
        failed = true;
    }
    let total = s.total_rows();
    eprintln!(
        "exported {total} events ({} segments, {} files, {} bytes) to {} in {secs:.2}s ({:.2} M events/s)",
        tape.segments.len(),
        s.files,
        s.bytes,
        a.output.display(),
        total as f64 / secs.max(1e-9) / 1e6
    );
    if let Some(u) = uploaded {
        eprintln!(
            "  uploaded {} objects ({} bytes){}",
            u.objects,
            u.bytes,
            if a.overwrite {
                format!(", deleted {} objects of the old dataset", u.deleted)
            } else {
                String::new()
            }
        );
    }
    for (k, name) in PARTITION_TYPES.iter().enumerate() {
        if s.read_rows[k] > 0 || s.rows[k] > 0 {
            eprintln!(
                "  type={name}: {} read, {} written",
                s.read_rows[k], s.rows[k]
            );
        }
    }
    Ok(u8::from(failed))
}
