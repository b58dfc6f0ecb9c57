//! The constants of the ABI, each checked against the core's value at
//! compile time (cbindgen needs literals: it cannot follow paths into the
//! core).

use floxlog_core::{
    BlockHeader, FrameHeader, IndexEntry, IndexHeader, OptionQuote, PoolState, SegmentHeader, Trade,
};

/// No event (a skipped frame of an unknown type).
pub const FLOXLOG_EVENT_NONE: u32 = 0;
/// `floxlog_event.kind` of a trade (frame type 1).
pub const FLOXLOG_EVENT_TRADE: u32 = 1;
/// `floxlog_event.kind` of a book snapshot (frame type 2).
pub const FLOXLOG_EVENT_BOOK_SNAPSHOT: u32 = 2;
/// `floxlog_event.kind` of a book delta (frame type 3).
pub const FLOXLOG_EVENT_BOOK_DELTA: u32 = 3;
/// `floxlog_event.kind` of an option quote (frame type 4).
pub const FLOXLOG_EVENT_OPTION_QUOTE: u32 = 4;
/// `floxlog_event.kind` of a pool state (frame type 5).
pub const FLOXLOG_EVENT_POOL_STATE: u32 = 5;

/// `floxlog_writer_config.compression`: frames follow the header directly.
pub const FLOXLOG_COMPRESSION_NONE: u8 = 0;
/// `floxlog_writer_config.compression`: frames packed into LZ4 blocks.
pub const FLOXLOG_COMPRESSION_LZ4: u8 = 1;

/// Writer profile: byte-identical to the flox reference writer (default).
pub const FLOXLOG_PROFILE_REFERENCE: u8 = 0;
/// Writer profile: the spec text's conventions (book header type 2/3,
/// symbol_count counted, Sorted flag when timestamps never decrease).
pub const FLOXLOG_PROFILE_SPEC: u8 = 1;

/// Segment flag: sparse index trailer present.
pub const FLOXLOG_FLAG_HAS_INDEX: u8 = 0x01;
/// Segment flag: frame stream partitioned into LZ4 blocks.
pub const FLOXLOG_FLAG_COMPRESSED: u8 = 0x02;
/// Segment flag: reserved in 1.0 (a reader refuses it).
pub const FLOXLOG_FLAG_ENCRYPTED: u8 = 0x04;
/// Segment flag: exchange_ts_ns never decreases across the segment.
pub const FLOXLOG_FLAG_SORTED: u8 = 0x08;

/// Segment header magic, "FLOX" as a little-endian u32.
pub const FLOXLOG_MAGIC_SEGMENT: u32 = 0x584F_4C46;
/// Compressed block header magic, "FBLK".
pub const FLOXLOG_MAGIC_BLOCK: u32 = 0x4B4C_4246;
/// Index trailer magic, "INDX".
pub const FLOXLOG_MAGIC_INDEX: u32 = 0x5844_4E49;
/// Encoded segment header bytes.
pub const FLOXLOG_SEGMENT_HEADER_LEN: usize = 64;
/// Encoded frame header bytes.
pub const FLOXLOG_FRAME_HEADER_LEN: usize = 12;
/// Encoded block header bytes.
pub const FLOXLOG_BLOCK_HEADER_LEN: usize = 16;
/// Encoded index header bytes.
pub const FLOXLOG_INDEX_HEADER_LEN: usize = 32;
/// Encoded index entry bytes.
pub const FLOXLOG_INDEX_ENTRY_LEN: usize = 16;
/// Encoded trade payload bytes (a trade frame is 12 + 48).
pub const FLOXLOG_TRADE_LEN: usize = 48;
/// Encoded option quote payload bytes.
pub const FLOXLOG_OPTION_QUOTE_LEN: usize = 112;
/// Encoded book payload header bytes (levels follow, 16 bytes each).
pub const FLOXLOG_BOOK_HEADER_LEN: usize = 40;
/// Encoded pool state payload header bytes (the opaque payload follows).
pub const FLOXLOG_POOL_STATE_HEADER_LEN: usize = 32;
/// Encoded book level bytes.
pub const FLOXLOG_LEVEL_LEN: usize = 16;
/// Most levels one book side can hold (its count is a u16).
pub const FLOXLOG_MAX_LEVELS_PER_SIDE: usize = 65535;
/// Alignment of the caller storage `floxlog_writer_init` and
/// `floxlog_reader_init` place a handle in (e.g. a `uint64_t` array, or
/// C11 `alignas(FLOXLOG_STORAGE_ALIGN)`).
pub const FLOXLOG_STORAGE_ALIGN: usize = 8;

const _: () = assert!(FLOXLOG_MAGIC_SEGMENT == floxlog_core::MAGIC_SEGMENT);
const _: () = assert!(FLOXLOG_MAGIC_BLOCK == floxlog_core::MAGIC_BLOCK);
const _: () = assert!(FLOXLOG_MAGIC_INDEX == floxlog_core::MAGIC_INDEX);
const _: () = assert!(FLOXLOG_MAX_LEVELS_PER_SIDE == floxlog_core::book::MAX_LEVELS_PER_SIDE);
const _: () = assert!(FLOXLOG_SEGMENT_HEADER_LEN == SegmentHeader::LEN);
const _: () = assert!(FLOXLOG_FRAME_HEADER_LEN == FrameHeader::LEN);
const _: () = assert!(FLOXLOG_BLOCK_HEADER_LEN == BlockHeader::LEN);
const _: () = assert!(FLOXLOG_INDEX_HEADER_LEN == IndexHeader::LEN);
const _: () = assert!(FLOXLOG_INDEX_ENTRY_LEN == IndexEntry::LEN);
const _: () = assert!(FLOXLOG_TRADE_LEN == Trade::LEN);
const _: () = assert!(FLOXLOG_OPTION_QUOTE_LEN == OptionQuote::LEN);
const _: () = assert!(FLOXLOG_BOOK_HEADER_LEN == floxlog_core::book::BOOK_HEADER_LEN);
const _: () = assert!(FLOXLOG_POOL_STATE_HEADER_LEN == PoolState::HEADER_LEN);
const _: () = assert!(FLOXLOG_LEVEL_LEN == floxlog_core::book::LEVEL_LEN);
