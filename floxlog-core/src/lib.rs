//! `floxlog-core`: a `no_std`, allocation-free codec for the `.floxlog` 1.0
//! binary tape format (segments of trades, book snapshots and deltas,
//! option quotes and pool states; optional LZ4 blocks and sparse index).
//!
//! Everything reads from and writes into buffers the caller provides. The
//! crate has no `unsafe`, never allocates, and never panics on any input:
//! every structure is decoded from little-endian fields at named offsets
//! (each layout module has a `field` module) after one length check, and bad
//! input gets an [`Error`] with a kind and the byte offset of what failed.
//!
//! - [`SegmentWriter`]: streaming writer (uncompressed or LZ4, with index);
//!   by default byte-identical to the flox C++ reference, or the spec text's
//!   conventions with [`Profile::Spec`].
//! - [`Segment`] and [`Reader`]: header validation and an event cursor
//!   that checks every CRC by default and stops at the first problem after
//!   yielding every good event before it.
//!   [`Reader::next_trades`] and [`Reader::next_trade_columns`] decode runs
//!   of trades in batches, with the same results.
//! - [`Index`]: the sparse index trailer and timestamp seek.
//! - [`encode_frame`] / [`decode_frame`]: single frames, for callers that
//!   build their own streams; [`Blocks`] / [`Block`]: LZ4 blocks, walked
//!   and decompressed into caller scratch.
//! - [`lz4_compress`]: the LZ4 block compressor the writer uses (both
//!   profiles), whose output is byte-identical to liblz4's
//!   `LZ4_compress_default`, the reference's, on every target; blocks are
//!   decompressed by lz4_flex's checked decoder.
//! - [`BookState`]: an order book rebuilt from snapshots and deltas over
//!   caller storage.
//! - [`fixed`]: fixed-point (1e8) conversions.
//!
//! # Example: write a segment and read it back
//!
//! ```
//! use floxlog_core::*;
//!
//! // Buffers the caller owns; an uncompressed segment needs no block scratch.
//! let mut out = [0u8; 4096];
//! let mut index = [IndexEntry::default(); 4];
//! let cfg = WriterConfig { created_ns: 1_700_000_000_000_000_000, ..Default::default() };
//! let mut w = SegmentWriter::new(cfg, WriterBuffers {
//!     out: &mut out, block: &mut [], slots: &mut [], index: &mut index,
//! })?;
//! for i in 0..3 {
//!     w.append(&Event::Trade(Trade {
//!         exchange_ts_ns: 1_000 + i,
//!         price_raw: fixed::parse_decimal("101.25").unwrap(),
//!         qty_raw: fixed::f64_to_raw(0.5),
//!         symbol_id: 7,
//!         ..Default::default()
//!     }))?;
//! }
//! let header = w.finish()?;
//! // The caller owns the bytes: put the final header at offset 0.
//! let mut file = [0u8; 4096];
//! let bytes = w.pending();
//! file[..bytes.len()].copy_from_slice(bytes);
//! file[..64].copy_from_slice(&header);
//! let file = &file[..bytes.len()];
//!
//! let seg = Segment::parse(file)?;
//! assert_eq!(seg.header().event_count, 3);
//! let mut reader = seg.reader(ReadOptions::default(), &mut []);
//! let mut n = 0;
//! while let Some(ev) = reader.next_event()? {
//!     let Event::Trade(t) = ev else { unreachable!() };
//!     assert_eq!(t.price_raw, 10_125_000_000);
//!     n += 1;
//! }
//! assert_eq!(n, 3);
//! # Ok::<(), floxlog_core::Error>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod block;
pub mod book;
pub mod book_state;
pub mod consts;
pub mod crc32;
pub mod error;
pub mod event;
pub mod fixed;
pub mod frame;
pub mod index;
mod le;
#[cfg(feature = "lz4")]
pub mod lz4_compress;
pub mod option_quote;
pub mod pool_state;
pub mod reader;
pub mod record;
pub mod salvage;
pub mod segment_header;
pub mod trade;
pub mod writer;

pub use block::{Block, BlockHeader, Blocks};
pub use book::{Book, BookKind, Level, Levels};
pub use book_state::{BookState, Side};
pub use consts::*;
pub use error::{Error, ErrorKind};
pub use event::{Event, Profile, UnknownTypes};
pub use frame::{decode_frame, encode_frame, FrameHeader, FrameOptions, RawFrame};
pub use index::{Index, IndexEntry, IndexHeader};
pub use option_quote::OptionQuote;
pub use pool_state::PoolState;
pub use reader::{
    Item, Position, ReadOptions, Reader, Segment, TradeBatch, TradeColumns, TradeSink, TradeStop,
};
pub use record::{values_of, FieldDesc, FieldRole, FieldType, FieldValue, Fields, Record, Scalar};
pub use segment_header::{Compression, SegmentHeader};
pub use trade::Trade;
pub use writer::{
    block_scratch_len, compress_block, index_entries_needed, BlockSlot, SealedBlock, SegmentWriter,
    WriterBuffers, WriterConfig, WriterStats, MAX_UNPLACED, SYMBOL_CAPACITY,
};

/// Whether this build reads and writes LZ4 segments (feature `lz4`).
pub const LZ4_SUPPORTED: bool = cfg!(feature = "lz4");
