//! `Tape.book_samples`: one symbol's book sampled at fixed times in one
//! replay (`floxlog book --every`), as one Arrow record batch with the
//! read's price conversion.

use crate::read::{convert, list_tape};
use arrow_array::types::Int64Type;
use arrow_array::{
    ArrayRef, ListArray, PrimitiveArray, RecordBatch, StructArray, TimestampNanosecondArray,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use floxlog::book_replay::{every, BookSample, ReplayOptions};
use floxlog::core::Level;
use floxlog::tape::TapeError;
use floxlog_arrow::schema::{level_fields, level_item_field, timestamp_type};
use floxlog_arrow::WithLevels;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

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

    /// The side as raw book levels (best first).
    fn column(self) -> Result<ArrayRef, TapeError> {
        let offsets = self
            .offsets
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<Result<Vec<i32>, _>>()
            .map_err(|_| TapeError::usage("book samples: over 2^31 levels; sample less"))?;
        let int = |v: Vec<i64>| Arc::new(PrimitiveArray::<Int64Type>::from(v)) as ArrayRef;
        let items =
            StructArray::try_new(level_fields(), vec![int(self.price), int(self.qty)], None)
                .map_err(arrow_err)?;
        let list = ListArray::try_new(
            level_item_field(),
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Arc::new(items),
            None,
        )
        .map_err(arrow_err)?;
        Ok(Arc::new(list))
    }
}

fn arrow_err(e: arrow_schema::ArrowError) -> TapeError {
    TapeError::input(None, format!("building the book samples: {e}"))
}

impl Samples {
    /// One row a sample: `ts`, `time` (`timestamp[ns, UTC]`),
    /// `last_event_ts`, `bids`, `asks` (levels as a book read gives them,
    /// through `c`), the symbol id in the schema's metadata.
    pub fn batch(self, c: &WithLevels) -> Result<RecordBatch, TapeError> {
        let levels = DataType::List(level_item_field());
        let fields = vec![
            Field::new("ts", DataType::Int64, true),
            Field::new("time", timestamp_type(), true),
            Field::new("last_event_ts", DataType::Int64, true),
            Field::new("bids", levels.clone(), true),
            Field::new("asks", levels, true),
        ];
        let meta = HashMap::from([("symbol_id".to_string(), self.symbol_id.to_string())]);
        let schema = Arc::new(Schema::new_with_metadata(fields, meta));
        let ts = ScalarBuffer::from(self.ts);
        let cols: Vec<ArrayRef> = vec![
            Arc::new(PrimitiveArray::<Int64Type>::new(ts.clone(), None)),
            Arc::new(TimestampNanosecondArray::new(ts, None).with_timezone("UTC")),
            Arc::new(PrimitiveArray::<Int64Type>::from(self.last_ts)),
            self.bids.column()?,
            self.asks.column()?,
        ];
        let b = RecordBatch::try_new(schema, cols).map_err(arrow_err)?;
        convert(c, &b)
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
