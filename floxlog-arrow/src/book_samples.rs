//! Sampled order books (`floxlog book --every`) as a Parquet file: one row
//! a sample, the columns of the CSV form (`ts`, `last_event_ts`, then
//! `bid_price_raw_1`, `bid_qty_raw_1`, ... and the asks), null where a side
//! has fewer levels than the depth.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use floxlog::core::Level;
use floxlog::tape::TapeError;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

/// Rows buffered before a batch is written.
const BATCH_ROWS: usize = 65_536;

/// Writes book samples of a fixed depth to a Parquet file.
pub struct BookSampleWriter {
    path: PathBuf,
    depth: usize,
    schema: SchemaRef,
    writer: ArrowWriter<File>,
    /// Column values: ts, last_event_ts, then 2 * depth per side.
    cols: Vec<Vec<Option<i64>>>,
}

fn err(path: &Path, e: impl std::fmt::Display) -> TapeError {
    TapeError::input(Some(path), format!("writing the book samples: {e}"))
}

/// The column names, in order (shared with the CSV form).
pub fn sample_columns(depth: usize) -> Vec<String> {
    let mut v = vec!["ts".to_string(), "last_event_ts".to_string()];
    for side in ["bid", "ask"] {
        for i in 1..=depth {
            v.push(format!("{side}_price_raw_{i}"));
            v.push(format!("{side}_qty_raw_{i}"));
        }
    }
    v
}

impl BookSampleWriter {
    /// Creates `path` (replacing a file there) for samples of `depth`
    /// levels a side.
    pub fn create(path: &Path, depth: usize) -> Result<BookSampleWriter, TapeError> {
        let fields: Vec<Field> = sample_columns(depth)
            .into_iter()
            .enumerate()
            .map(|(i, n)| Field::new(n, DataType::Int64, i != 0))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let file = File::create(path).map_err(|e| TapeError::io(path, "creating the output", e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .build();
        let writer =
            ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| err(path, e))?;
        Ok(BookSampleWriter {
            path: path.to_path_buf(),
            depth,
            cols: vec![Vec::new(); schema.fields().len()],
            schema,
            writer,
        })
    }

    /// Adds one sample: the time, the last applied event's timestamp, and
    /// the top levels (beyond `depth` ignored).
    pub fn push(
        &mut self,
        at: i64,
        last_ts: Option<i64>,
        bids: &[Level],
        asks: &[Level],
    ) -> Result<(), TapeError> {
        self.cols[0].push(Some(at));
        self.cols[1].push(last_ts);
        let mut c = 2;
        for side in [bids, asks] {
            for i in 0..self.depth {
                let l = side.get(i);
                self.cols[c].push(l.map(|l| l.price_raw));
                self.cols[c + 1].push(l.map(|l| l.qty_raw));
                c += 2;
            }
        }
        if self.cols[0].len() >= BATCH_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TapeError> {
        if self.cols[0].is_empty() {
            return Ok(());
        }
        let arrays: Vec<ArrayRef> = self
            .cols
            .iter_mut()
            .map(|c| Arc::new(Int64Array::from(std::mem::take(c))) as ArrayRef)
            .collect();
        let batch =
            RecordBatch::try_new(self.schema.clone(), arrays).map_err(|e| err(&self.path, e))?;
        self.writer.write(&batch).map_err(|e| err(&self.path, e))
    }

    /// Writes what is buffered and the file footer.
    pub fn finish(mut self) -> Result<(), TapeError> {
        self.flush()?;
        self.writer.close().map_err(|e| err(&self.path, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    #[test]
    fn samples_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.parquet");
        let mut w = BookSampleWriter::create(&p, 2).unwrap();
        let l = |p, q| Level {
            price_raw: p,
            qty_raw: q,
        };
        w.push(10, None, &[], &[]).unwrap();
        w.push(20, Some(15), &[l(5, 1), l(4, 2), l(3, 3)], &[l(6, 1)])
            .unwrap();
        w.finish().unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(File::open(&p).unwrap())
            .unwrap()
            .build()
            .unwrap();
        let b: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
        let b = &b[0];
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema().field(2).name(), "bid_price_raw_1");
        let col = |i: usize| {
            b.column(i)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(col(0), vec![Some(10), Some(20)]);
        assert_eq!(col(1), vec![None, Some(15)]);
        assert_eq!(col(4), vec![None, Some(4)]); // bid_price_raw_2
        assert_eq!(col(6), vec![None, Some(6)]); // ask_price_raw_1
        assert_eq!(col(8), vec![None, None]); // ask_price_raw_2
    }
}
