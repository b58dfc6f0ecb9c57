//! Tapes as Apache Arrow record batches, one schema per record type (see
//! [`schema`]): built straight from the core's zero-copy reader with no
//! per-event allocation, in batches of bounded size, with time, symbol and
//! type filters applied before any column is built ([`read_batches`]);
//! and back again, record batches into a tape ([`append_batch`]).
//!
//! ```no_run
//! use floxlog::tape::{Filter, OpenOptions, Session, Tape};
//! use floxlog_arrow::{read_batches, ReadSpec, RecordType, Symbols};
//!
//! # fn main() -> Result<(), floxlog::tape::TapeError> {
//! let tape = Tape::open(&["tape".into()], OpenOptions::default())?;
//! let symbols = Symbols::from_tape(&tape);
//! let spec = ReadSpec {
//!     filter: Filter { types: Some(RecordType::Trade.type_mask()), ..Filter::default() },
//!     ..ReadSpec::default()
//! };
//! let mut session = Session::open(tape, spec.request());
//! let mut rows = 0;
//! let summary = read_batches(&mut session, &spec, &symbols, &mut |_, batch| {
//!     rows += batch.num_rows();
//!     Ok(())
//! })?;
//! if let Some(e) = summary.error(false) {
//!     return Err(e);
//! }
//! # Ok(()) }
//! ```

pub mod append;
pub mod columns;
pub mod convert;
pub mod read;
pub mod schema;
pub mod symbols;

pub use append::{append_batch, for_each_event};
pub use columns::{Columns, Limits, DEFAULT_ROWS};
pub use convert::{Conversion, Prices, Timestamps, WithLevels};
pub use read::{read_batches, read_piece, read_table, ReadSpec, ReadSummary, Sink};
pub use schema::RecordType;
pub use symbols::Symbols;

#[cfg(feature = "export")]
pub mod book_samples;
#[cfg(feature = "export")]
pub mod export;
