//! `Tape.book_samples`: one symbol's book sampled at fixed times in one
//! replay (`floxlog book --every`), handed to Python as plain vectors that
//! the package turns into an Arrow table.

use crate::read::list_tape;
use floxlog::book_replay::{every, BookSample, ReplayOptions};
use floxlog::core::Level;
use floxlog::tape::TapeError;
use std::path::PathBuf;

/// One side of every sample: list offsets and the levels' fields.
#[derive(Default)]
pub struct SideCols {
    /// `offsets[i]..offsets[i + 1]`: sample i's levels.
    pub offsets: Vec<i64>,
    /// Level prices (raw).
    pub price: Vec<i64>,
    /// Level quantities (raw).
    pub qty: Vec<i64>,
}

impl SideCols {
    fn push(&mut self, levels: &[Level]) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.price.extend(levels.iter().map(|l| l.price_raw));
        self.qty.extend(levels.iter().map(|l| l.qty_raw));
        self.offsets.push(self.price.len() as i64);
    }
}

/// Every sample as columns.
#[derive(Default)]
pub struct Samples {
    /// Symbol id sampled.
    pub symbol_id: u32,
    /// Sample times (ns).
    pub ts: Vec<i64>,
    /// exchange_ts_ns of the last event applied before each sample.
    pub last_ts: Vec<Option<i64>>,
    /// Bids, best first.
    pub bids: SideCols,
    /// Asks, best first.
    pub asks: SideCols,
    /// The replay's warnings.
    pub warnings: Vec<String>,
}

/// What to sample.
pub struct SampleArgs {
    /// Symbol id or name.
    pub symbol: String,
    /// Interval (ns, > 0).
    pub every: i64,
    /// First sample time.
    pub from: i64,
    /// Samples are before this time.
    pub to: i64,
    /// Levels a side (`None`: all).
    pub depth: Option<usize>,
    /// Torn tails fail too.
    pub strict: bool,
}

/// Replays the tape at `path` once, sampling as `floxlog book --every`.
pub fn book_samples(path: &PathBuf, a: SampleArgs) -> Result<Samples, TapeError> {
    let tape = list_tape(path)?;
    let symbol_id = match tape.symbol_ids(std::slice::from_ref(&a.symbol))?.as_deref() {
        Some([id]) => *id,
        _ => return Err(TapeError::usage("symbol: give one symbol")),
    };
    let opts = ReplayOptions {
        strict: a.strict,
        ..Default::default()
    };
    let mut out = Samples {
        symbol_id,
        ..Samples::default()
    };
    let mut push = |s: &BookSample| {
        out.ts.push(s.at);
        out.last_ts.push(s.last_ts);
        out.bids.push(&s.bids);
        out.asks.push(&s.asks);
        Ok(())
    };
    let warnings = every(
        tape, symbol_id, a.every, a.from, a.to, a.depth, &opts, &mut push,
    )?;
    out.warnings = warnings;
    for side in [&mut out.bids, &mut out.asks] {
        if side.offsets.is_empty() {
            side.offsets.push(0);
        }
    }
    Ok(out)
}
