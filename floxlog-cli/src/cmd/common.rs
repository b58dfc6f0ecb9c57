//! Helpers shared by the subcommands: argument value parsers, progress
//! bars, the output sink (tape or single segment), printing findings.

use clap::ValueEnum;
use floxlog::core::{Compression, Profile, ReadOptions, UnknownTypes, WriterConfig};
use floxlog::segment::{finish_to_vec, vec_writer, VecWriter};
use floxlog::tape::{
    Durability, Finding, Layout, OpenOptions, Severity, Tape, TapeError, TapeWriter,
    TapeWriterConfig,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Result of a subcommand: the exit code.
pub type CmdResult = Result<u8, TapeError>;

/// Codec options of the reading commands: CRCs checked; frames of record
/// types 1.0 does not define skipped with `--skip-unknown`, else refused.
pub fn read_options(skip_unknown: bool) -> ReadOptions {
    ReadOptions {
        unknown_types: if skip_unknown {
            UnknownTypes::Skip
        } else {
            UnknownTypes::Reject
        },
        ..ReadOptions::default()
    }
}

/// A progress bar over `total` bytes on stderr, hidden when stderr is not
/// a terminal.
pub fn progress(total: u64, msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:10} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(msg.to_string());
    pb
}

/// Codec names.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum CompressionArg {
    /// Plain frames.
    None,
    /// LZ4 blocks.
    Lz4,
}

impl From<CompressionArg> for Compression {
    fn from(c: CompressionArg) -> Compression {
        match c {
            CompressionArg::None => Compression::None,
            CompressionArg::Lz4 => Compression::Lz4,
        }
    }
}

/// Writer profiles.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ProfileArg {
    /// Byte-identical to the flox reference writer.
    Reference,
    /// The spec 1.0 text's conventions (book type 2/3, symbol_count, Sorted, min/max times).
    Spec,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Reference => Profile::Reference,
            ProfileArg::Spec => Profile::Spec,
        }
    }
}

/// Tape layouts.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum LayoutArg {
    /// `<created_ns>.floxlog` segments, all record types interleaved (flox can replay it).
    Flox,
    /// Spec 1.0 per-type series: trades-000000.bin, book-000000.bin, ...
    Spec,
}

impl From<LayoutArg> for Layout {
    fn from(l: LayoutArg) -> Layout {
        match l {
            LayoutArg::Flox => Layout::Flox,
            LayoutArg::Spec => Layout::Spec,
        }
    }
}

/// How reading commands report a damaged segment on stderr.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ErrorFormat {
    /// Sentences with the file, byte offset and a hint.
    Text,
    /// The text, then a line `error <kind> <offset>` (the conformance kit's
    /// reader protocol; see docs/conformance.md).
    Kit,
}

/// Parses a byte size: `1048576`, `64K`, `256M`, `1G` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M') => (&t[..t.len() - 1], 1 << 20),
        Some('G') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 1048576, 64K, 256M, 1G)"))?;
    n.checked_mul(mul)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("`{s}` is out of range"))
}

/// Parses a duration into ns: `500ms`, `10s`, `5m`, `1h`, `1d`, or integer ns.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let units: [(&str, i64); 6] = [
        ("ms", 1_000_000),
        ("us", 1_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
        ("d", 86_400_000_000_000),
    ];
    for (u, mul) in units {
        if let Some(n) = t.strip_suffix(u) {
            if let Ok(v) = n.parse::<i64>() {
                return v
                    .checked_mul(mul)
                    .filter(|&v| v > 0)
                    .ok_or_else(|| format!("`{s}` is out of range"));
            }
        }
    }
    t.parse::<i64>().ok().filter(|&v| v > 0).ok_or_else(|| {
        format!("`{s}` is not a duration (e.g. 500ms, 10s, 5m, 1h, 1d, or nanoseconds)")
    })
}

/// Parses a durability policy: none, flush, block, close, every:N.
pub fn parse_durability(s: &str) -> Result<Durability, String> {
    s.parse()
}

/// Parses a timestamp: integer ns or ISO-8601.
pub fn parse_time(s: &str) -> Result<i64, String> {
    floxlog::time::parse_time(s)
}

/// Writer options shared by `encode` and `convert`.
#[derive(clap::Args, Clone, Debug)]
pub struct WriteOpts {
    /// Codec of the new segments [default: lz4 for encode; convert keeps the input's].
    #[arg(long, value_enum)]
    pub compression: Option<CompressionArg>,
    /// Events between index entries (uncompressed) or per LZ4 block.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub index_interval: Option<u16>,
    /// Write no index trailer.
    #[arg(long)]
    pub no_index: bool,
    /// Rotate segments at this size (e.g. 256M, 64K, bytes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256M")]
    pub max_segment_bytes: u64,
    /// Also rotate when event time enters a new span (e.g. 1h, 10m, 30s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub rotate_every: Option<i64>,
    /// Writer conventions.
    #[arg(long, value_enum, default_value = "reference")]
    pub profile: ProfileArg,
    /// Tape layout.
    #[arg(long, value_enum, default_value = "flox")]
    pub layout: LayoutArg,
    /// Exchange tag of the segment headers and manifest.
    #[arg(long, value_name = "N")]
    pub exchange_id: Option<u8>,
    /// Fixed created_ns of the first segment (the next get +1...), for reproducible output.
    #[arg(long, value_name = "NS")]
    pub created_ns: Option<i64>,
    /// When data is written and fsynced: none, flush, block, every:N, close.
    #[arg(long, value_parser = parse_durability, default_value = "close")]
    pub durability: Durability,
    /// Write one segment file at the output path instead of a tape directory (no rotation).
    #[arg(long)]
    pub segment: bool,
}

/// Where `encode` and `convert` write: a tape directory or one segment
/// file, built under a hidden temporary name beside the output and moved
/// into place only when complete (a tape: renamed, then the parent
/// directory fsynced; a segment: written crash-atomically). Dropped without
/// [`Sink::close`], or on a failed close, it removes its temporary, so a
/// failed or interrupted run never leaves a torn output behind; a run
/// killed outright leaves only a hidden `.NAME.partial-PID`, which the next
/// run removes.
pub struct Sink {
    inner: Option<SinkKind>,
    out: PathBuf,
    tmp: Option<PathBuf>,
}

enum SinkKind {
    Tape(Box<TapeWriter>),
    Segment(Box<VecWriter>),
}

impl Sink {
    /// Opens the sink for `out`, which must not exist (an empty directory
    /// is fine for a tape).
    pub fn create(
        out: &Path,
        o: &WriteOpts,
        compression: floxlog::core::Compression,
        exchange_id: u8,
    ) -> Result<Sink, TapeError> {
        let seg = WriterConfig {
            compression,
            create_index: !o.no_index,
            index_interval: o
                .index_interval
                .unwrap_or(floxlog::core::DEFAULT_INDEX_INTERVAL),
            exchange_id: o.exchange_id.unwrap_or(exchange_id),
            created_ns: 0,
            profile: o.profile.into(),
        };
        seg.check()
            .map_err(|e| TapeError::usage(format!("--index-interval: {}", e.what)))?;
        let empty_dir = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
        if out.symlink_metadata().is_ok() && (o.segment || !empty_dir) {
            return Err(
                TapeError::usage(format!("{} already exists", out.display()))
                    .with_hint("choose a new output path (or an empty directory for a tape)"),
            );
        }
        if o.segment {
            let w = vec_writer(WriterConfig {
                created_ns: o.created_ns.unwrap_or_else(floxlog::tape::writer::now_ns),
                ..seg
            })
            .map_err(|e| TapeError::input(Some(out), e.to_string()))?;
            return Ok(Sink {
                inner: Some(SinkKind::Segment(Box::new(w))),
                out: out.to_path_buf(),
                tmp: None,
            });
        }
        let (parent, name) = floxlog::tape::dir::dir_and_name(out)?;
        floxlog::tape::dir::remove_stale_partials(parent, &name);
        let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
        let cfg = TapeWriterConfig {
            layout: o.layout.into(),
            segment: seg,
            max_segment_bytes: o.max_segment_bytes,
            rotate_every_ns: o.rotate_every,
            durability: o.durability,
            created_ns: o.created_ns,
            write_manifest: true,
            // A new tape under a temporary name, moved into place when done.
            journal: false,
            resume: false,
            thread_cpus: Default::default(),
        };
        let mut sink = Sink {
            inner: None,
            out: out.to_path_buf(),
            tmp: Some(tmp.clone()),
        };
        sink.inner = Some(SinkKind::Tape(Box::new(TapeWriter::create(&tmp, cfg)?)));
        Ok(sink)
    }

    /// flox-style `metadata.json` for a tape output (a single segment file
    /// has nowhere to keep it).
    pub fn set_metadata(&mut self, md: serde_json::Value) {
        if let Some(SinkKind::Tape(w)) = &mut self.inner {
            w.set_metadata(md);
        }
    }

    /// Stamps each new segment's created_ns with `clock()` (tape output
    /// only; a single segment takes --created-ns).
    pub fn set_clock(&mut self, clock: floxlog::tape::writer::Clock) {
        if let Some(SinkKind::Tape(w)) = &mut self.inner {
            w.set_clock(clock);
        }
    }

    /// Appends an event.
    pub fn append(&mut self, ev: &floxlog::core::Event<'_>) -> Result<(), TapeError> {
        match &mut self.inner {
            Some(SinkKind::Tape(w)) => w.append(ev),
            Some(SinkKind::Segment(w)) => w.append(ev).map_err(|e| {
                TapeError::input(Some(&self.out), format!("cannot write the event: {e}"))
            }),
            None => Err(TapeError::input(
                Some(&self.out),
                "internal error: sink closed",
            )),
        }
    }

    /// Appends a frame byte for byte.
    pub fn append_raw(&mut self, ft: u8, payload: &[u8]) -> Result<(), TapeError> {
        match &mut self.inner {
            Some(SinkKind::Tape(w)) => w.append_raw(ft, payload),
            Some(SinkKind::Segment(w)) => w.append_raw(ft, payload).map_err(|e| {
                TapeError::input(Some(&self.out), format!("cannot write the frame: {e}"))
            }),
            None => Err(TapeError::input(
                Some(&self.out),
                "internal error: sink closed",
            )),
        }
    }

    /// Finishes and moves the output into place; returns (segments, bytes).
    pub fn close(mut self) -> Result<(u64, u64), TapeError> {
        let (parent, name) = floxlog::tape::dir::dir_and_name(&self.out)?;
        match self.inner.take() {
            Some(SinkKind::Tape(w)) => {
                let segs = w.close()?;
                let tmp = self.tmp.clone().unwrap_or_default();
                std::fs::rename(&tmp, &self.out).map_err(|e| {
                    TapeError::io(&self.out, "moving the finished tape into place", e)
                })?;
                self.tmp = None;
                floxlog::tape::dir::sync_dir(parent)?;
                Ok((segs.len() as u64, segs.iter().map(|s| s.size_bytes).sum()))
            }
            Some(SinkKind::Segment(w)) => {
                let bytes = finish_to_vec(*w)
                    .map_err(|e| TapeError::input(Some(&self.out), e.to_string()))?;
                floxlog::tape::dir::write_atomic(parent, &name, &bytes, true)?;
                Ok((1, bytes.len() as u64))
            }
            None => Err(TapeError::input(
                Some(&self.out),
                "internal error: sink closed",
            )),
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some(SinkKind::Tape(w)) = self.inner.take() {
            w.abandon();
        }
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_dir_all(tmp);
        }
    }
}

/// Prints findings to stderr (errors and warnings).
pub fn print_findings(findings: &[Finding]) {
    for f in findings {
        if f.severity >= Severity::Warning {
            eprintln!("{}", f.line());
        }
    }
}

/// Formats a timestamp as ns and ISO-8601.
pub fn ts(ns: i64) -> String {
    format!("{ns} ({})", floxlog::time::format_ns(ns))
}

/// Which events a reading command keeps (`cat`, `export`).
#[derive(clap::Args, Debug)]
pub struct FilterArgs {
    /// Only events with exchange_ts_ns >= this (ns or ISO-8601, e.g. 2024-04-26T09:30:00Z).
    #[arg(long, value_parser = parse_time, value_name = "TIME")]
    pub from: Option<i64>,
    /// Only events with exchange_ts_ns < this (ns or ISO-8601).
    #[arg(long, value_parser = parse_time, value_name = "TIME")]
    pub to: Option<i64>,
    /// Only these symbols: ids, or names from metadata.json (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub symbol: Vec<String>,
    /// Only these types: trade, book_snapshot, book_delta, book, option_quote, pool_state.
    #[arg(long = "type", value_delimiter = ',', value_name = "TYPE")]
    pub types: Vec<String>,
}

impl FilterArgs {
    /// The filter, symbol names resolved with the tape's metadata.
    pub fn filter(&self, tape: &Tape) -> Result<floxlog::tape::Filter, TapeError> {
        Ok(floxlog::tape::Filter {
            from: self.from,
            to: self.to,
            symbols: tape.symbol_ids(&self.symbol)?,
            types: floxlog::tape::Filter::types_from_names(&self.types)?,
        })
    }
}

/// The inputs every reading command takes: tape directories or segment
/// files, and whether to trust their manifests.
#[derive(clap::Args, Debug)]
pub struct TapeArgs {
    /// Tape directories or segment files.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Do not read manifest.json; list the directory's segment files instead.
    #[arg(long)]
    pub ignore_manifest: bool,
}

impl TapeArgs {
    /// Lists the tape's segments.
    pub fn open(&self) -> Result<Tape, TapeError> {
        Tape::open(
            &self.inputs,
            OpenOptions {
                ignore_manifest: self.ignore_manifest,
            },
        )
    }
}

/// Prints the tape listing's findings to stderr; returns how many listed
/// segments were not read (missing, or named outside the tape directory),
/// which every reading command turns into exit 1.
pub fn report_listing(tape: &Tape) -> u64 {
    for f in &tape.findings {
        eprintln!("{}", f.line());
    }
    tape.unread_count
}
