//! `floxlog book`: one symbol's order book at a time, or sampled at
//! intervals (see `floxlog::book_replay`).

use super::common::{parse_duration, parse_time, report_listing, CmdResult, TapeArgs};
use floxlog::book_replay::{self, BookSample, ReplayOptions, DEFAULT_CAPACITY};
use floxlog::core::fixed::Decimal;
use floxlog::core::Level;
use floxlog::tape::TapeError;
use floxlog::time::format_ns;
use floxlog_arrow::book_samples::{sample_columns, BookSampleWriter};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Sample output formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum SampleFormat {
    /// CSV: ts, last_event_ts, then bid_price_raw_1, bid_qty_raw_1, ... and
    /// ask_price_raw_1, ... (empty where a side has fewer levels).
    Csv,
    /// One JSON object a sample, as `--at --json` prints.
    Jsonl,
    /// Apache Parquet, the CSV's columns (needs -o).
    Parquet,
}

/// Levels per side that `--every` prints when --depth is not given.
const DEFAULT_SAMPLE_DEPTH: usize = 10;

/// Print a symbol's order book at a time, or sample it at intervals.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Print a symbol's order book at a time, \
or sample it at intervals.\n\n\
The book is rebuilt from the symbol's book events in timestamp order (spec 1.0: a snapshot \
replaces each side with its listed levels; a delta sets a level with qty_raw > 0 and removes it \
with qty_raw == 0). The book at T is the book after every event stamped at or before T.\n\n\
--at T prints one book (text, or --json: bids and asks as [price_raw, qty_raw] pairs, best \
first). --every D --from T --to T samples the top --depth levels at T, T+D, ... before --to, as \
CSV, JSON lines or Parquet.\n\n\
A negative quantity, a price listed twice in a snapshot side, a side beyond --capacity levels and \
damage in a segment stop with an error naming the file and byte offset (exit 1).")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// The symbol: id, or name from metadata.json.
    #[arg(long)]
    pub symbol: String,
    /// The book after every event stamped at or before this time (ns or ISO-8601).
    #[arg(long, value_parser = parse_time, value_name = "TIME",
          required_unless_present = "every", conflicts_with = "every")]
    pub at: Option<i64>,
    /// Sample every DURATION (e.g. 100ms, 1s, 5m), from --from up to --to.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION",
          requires_all = ["from", "to"])]
    pub every: Option<i64>,
    /// First sample time (with --every).
    #[arg(long, value_parser = parse_time, value_name = "TIME", requires = "every")]
    pub from: Option<i64>,
    /// Samples stop before this time (with --every).
    #[arg(long, value_parser = parse_time, value_name = "TIME", requires = "every")]
    pub to: Option<i64>,
    /// Levels per side [default: all with --at, 10 with --every].
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// With --at: print JSON.
    #[arg(long, conflicts_with = "every")]
    pub json: bool,
    /// With --every: output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub format: SampleFormat,
    /// With --every: write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Most levels a side may hold; a book needing more is an error.
    #[arg(long, default_value_t = DEFAULT_CAPACITY, value_name = "N")]
    pub capacity: usize,
    /// Fail (exit 1) on the torn tail of an unfinished segment too.
    #[arg(long)]
    pub strict: bool,
    /// Skip frames of record types 1.0 does not define instead of stopping.
    #[arg(long)]
    pub skip_unknown: bool,
}

/// Runs `book`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let symbol = match tape.symbol_ids(std::slice::from_ref(&a.symbol))?.as_deref() {
        Some([id]) => *id,
        _ => return Err(TapeError::usage("--symbol takes one symbol")),
    };
    let name = tape
        .symbol_names()
        .into_iter()
        .find(|(id, _)| *id == symbol)
        .map(|(_, n)| n);
    if report_listing(&tape) > 0 {
        // A book built without some of the tape's segments would be wrong.
        return Ok(1);
    }
    let opts = ReplayOptions {
        capacity: a.capacity,
        skip_unknown: a.skip_unknown,
        strict: a.strict,
    };
    let warnings = match (a.at, a.every) {
        (Some(at), _) => {
            let (s, w) = book_replay::book_at(tape, symbol, at, a.depth, &opts)?;
            let mut out = Vec::new();
            if a.json {
                out.extend_from_slice(sample_json(&s, name.as_deref()).to_string().as_bytes());
                out.push(b'\n');
            } else {
                text(&mut out, &s, name.as_deref());
            }
            let mut sink = Sink::open(None)?;
            sink.write(&out)?;
            sink.finish()?;
            w
        }
        (None, Some(every)) => {
            let (from, to) = (a.from.unwrap_or(0), a.to.unwrap_or(0));
            let depth = a.depth.unwrap_or(DEFAULT_SAMPLE_DEPTH);
            if a.format == SampleFormat::Parquet {
                let Some(path) = a.output.as_deref() else {
                    return Err(TapeError::usage("--format parquet needs -o FILE"));
                };
                let mut w = BookSampleWriter::create(path, depth)?;
                let r =
                    book_replay::every(tape, symbol, every, from, to, Some(depth), &opts, |s| {
                        w.push(s.at, s.last_ts, &s.bids, &s.asks)
                    });
                match r.and_then(|warn| w.finish().map(|()| warn)) {
                    Ok(warn) => warn,
                    Err(e) => {
                        let _ = std::fs::remove_file(path);
                        return Err(e);
                    }
                }
            } else {
                let mut sink = Sink::open(a.output.as_deref())?;
                let mut out = Vec::new();
                if a.format == SampleFormat::Csv {
                    csv_header(&mut out, depth);
                }
                let r =
                    book_replay::every(tape, symbol, every, from, to, Some(depth), &opts, |s| {
                        match a.format {
                            SampleFormat::Jsonl => {
                                out.extend_from_slice(
                                    sample_json(s, name.as_deref()).to_string().as_bytes(),
                                );
                                out.push(b'\n');
                            }
                            _ => csv_row(&mut out, s, depth),
                        }
                        if out.len() >= 1 << 16 {
                            sink.write(&out)?;
                            out.clear();
                        }
                        Ok(())
                    })
                    .and_then(|w| sink.write(&out).and_then(|()| sink.finish()).map(|()| w));
                match r {
                    Ok(w) => w,
                    Err(e) => {
                        sink.abandon();
                        return Err(e);
                    }
                }
            }
        }
        (None, None) => return Err(TapeError::usage("give --at TIME or --every DURATION")),
    };
    for w in warnings {
        eprintln!("floxlog: warning: {w}");
    }
    Ok(0)
}

/// Where the output goes: stdout (a closed pipe ends it quietly) or a file
/// (removed again if the command fails).
struct Sink {
    path: Option<PathBuf>,
    w: Box<dyn Write>,
    closed: bool,
}

impl Sink {
    fn open(path: Option<&Path>) -> Result<Sink, TapeError> {
        let w: Box<dyn Write> = match path {
            Some(p) => Box::new(std::io::BufWriter::new(
                std::fs::File::create(p).map_err(|e| TapeError::io(p, "creating the output", e))?,
            )),
            None => Box::new(std::io::stdout().lock()),
        };
        Ok(Sink {
            path: path.map(Path::to_path_buf),
            w,
            closed: false,
        })
    }

    fn check(&mut self, r: std::io::Result<()>) -> Result<(), TapeError> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && self.path.is_none() => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(TapeError::io(
                self.path.as_deref().unwrap_or(Path::new("<stdout>")),
                "writing the output",
                e,
            )),
            Ok(()) => Ok(()),
        }
    }

    fn write(&mut self, b: &[u8]) -> Result<(), TapeError> {
        if self.closed {
            return Ok(());
        }
        let r = self.w.write_all(b);
        self.check(r)
    }

    fn finish(&mut self) -> Result<(), TapeError> {
        if self.closed {
            return Ok(());
        }
        let r = self.w.flush();
        self.check(r)
    }

    fn abandon(self) {
        if let Some(p) = self.path {
            drop(self.w);
            let _ = std::fs::remove_file(p);
        }
    }
}

fn pairs(levels: &[Level]) -> serde_json::Value {
    levels
        .iter()
        .map(|l| serde_json::json!([l.price_raw, l.qty_raw]))
        .collect()
}

/// A sample as JSON (the `--json` and `--format jsonl` object).
fn sample_json(s: &BookSample, name: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "symbol_id": s.symbol_id,
        "symbol": name,
        "at": s.at,
        "last_event_ts": s.last_ts,
        "bids": pairs(&s.bids),
        "asks": pairs(&s.asks),
    })
}

fn text(out: &mut Vec<u8>, s: &BookSample, name: Option<&str>) {
    let sym = match name {
        Some(n) => format!("{} ({n})", s.symbol_id),
        None => s.symbol_id.to_string(),
    };
    let _ = writeln!(out, "symbol {sym} at {} ({})", s.at, format_ns(s.at));
    match s.last_ts {
        Some(t) => {
            let _ = writeln!(out, "last book event {t} ({})", format_ns(t));
        }
        None => {
            let _ = writeln!(out, "no book events at or before this time");
        }
    }
    let _ = writeln!(
        out,
        "{:>22} {:>22} | {:<22} {:<22}",
        "bid qty", "bid price", "ask price", "ask qty"
    );
    for i in 0..s.bids.len().max(s.asks.len()) {
        let (bq, bp) = s.bids.get(i).map_or((String::new(), String::new()), |l| {
            (
                Decimal(l.qty_raw).to_string(),
                Decimal(l.price_raw).to_string(),
            )
        });
        let (ap, aq) = s.asks.get(i).map_or((String::new(), String::new()), |l| {
            (
                Decimal(l.price_raw).to_string(),
                Decimal(l.qty_raw).to_string(),
            )
        });
        let _ = writeln!(out, "{bq:>22} {bp:>22} | {ap:<22} {aq:<22}");
    }
}

fn csv_header(out: &mut Vec<u8>, depth: usize) {
    out.extend_from_slice(sample_columns(depth).join(",").as_bytes());
    out.push(b'\n');
}

fn csv_row(out: &mut Vec<u8>, s: &BookSample, depth: usize) {
    let _ = write!(out, "{},", s.at);
    if let Some(t) = s.last_ts {
        let _ = write!(out, "{t}");
    }
    for side in [&s.bids, &s.asks] {
        for i in 0..depth {
            match side.get(i) {
                Some(l) => {
                    let _ = write!(out, ",{},{}", l.price_raw, l.qty_raw);
                }
                None => out.extend_from_slice(b",,"),
            }
        }
    }
    out.push(b'\n');
}
