//! The C structs of the ABI (cbindgen writes them into the header), with
//! compile-time checks of their layouts. Conversions to and from the core's
//! types are in `records.rs` and `event.rs`.

use crate::consts::*;
use core::mem::{align_of, offset_of, size_of};
use floxlog_core::{IndexEntry, Level, OptionQuote, Trade};

/// Asserts that C mirror `$c` has core record `$core`'s size, alignment
/// and, for every field of the core's list, the same name, type and offset.
macro_rules! same_layout {
    ($c:ident $core:ident
     $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        const _: () = {
            type T = $core;
            assert!(size_of::<$c>() == size_of::<T>() && align_of::<$c>() == align_of::<T>());
            $( assert!(offset_of!($c, $f) == offset_of!(T, $f) && offset_of!(T, $f) == $off); )*
        };
        const _: () = {
            $( let _: fn(&$c) -> $t = |c| c.$f; )*
        };
    };
}

/// One price level (fixed-point, scale 1e8). Same layout as the 16-byte
/// BookLevel of the format.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_level {
    /// Price, fixed-point 1e8.
    pub price_raw: i64,
    /// Quantity, fixed-point 1e8 (0 removes the level in a delta).
    pub qty_raw: i64,
}

// Levels handed in from C are viewed as `&[Level]` without copying: both
// are repr(C) {i64, i64}.
const _: () = assert!(size_of::<floxlog_level>() == size_of::<Level>());
const _: () = assert!(align_of::<floxlog_level>() == align_of::<Level>());
const _: () = assert!(offset_of!(floxlog_level, qty_raw) == offset_of!(Level, qty_raw));
const _: () = assert!(size_of::<floxlog_level>() == FLOXLOG_LEVEL_LEN);

/// A trade. Field order, sizes and offsets are those of the format's
/// 48-byte TradeRecord.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_trade {
    /// Exchange-side timestamp, ns since the Unix epoch.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Price, fixed-point 1e8.
    pub price_raw: i64,
    /// Quantity, fixed-point 1e8.
    pub qty_raw: i64,
    /// Exchange trade id; 0 if unknown.
    pub trade_id: u64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// 0 buy, 1 sell.
    pub side: u8,
    /// 0 spot, 1 perp, 2 future, 3 option.
    pub instrument: u8,
    /// Exchange tag.
    pub exchange_id: u16,
}
const _: () = assert!(size_of::<floxlog_trade>() == FLOXLOG_TRADE_LEN);
const _: () = assert!(offset_of!(floxlog_trade, exchange_id) == 46);
// The core's Trade has the same layout (it asserts the record's offsets):
// the batch kernels' trades go into the caller's array as plain 48-byte
// copies (`records::TradeSlots`). Checked field by field from the core's
// definition, so a field the mirror lacks (or types differently) fails to
// compile here.
floxlog_core::trade_fields!(same_layout, floxlog_trade, Trade);

floxlog_core::option_quote_fields!(same_layout, floxlog_option_quote, OptionQuote);

/// A book snapshot or delta (which one is the event kind, or the function
/// it is passed to).
///
/// Levels handed to the writer are read through `bids`/`asks` (NULL is
/// allowed when the count is 0; each side holds at most 65535 levels; the
/// caller keeps ownership). Levels from the reader or `floxlog_frame_decode`
/// point into the caller's level scratch (bids first, then asks) and are
/// never NULL, even when a count is 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_book {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Source sequence number; 0 if not provided.
    pub seq: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// The byte stored in the record's type field: flox writes 0 for a
    /// snapshot and 1 for a delta, the spec text 2 and 3. 0 (a zeroed
    /// struct) takes the byte of the function called (snapshot 0, delta
    /// 1); any other value must agree with it (else
    /// `FLOXLOG_INVALID_INPUT` naming `header_type`). The reference profile
    /// stores the byte so chosen; the spec profile stores 2 or 3.
    pub header_type: u8,
    /// Instrument code.
    pub instrument: u8,
    /// Exchange tag.
    pub exchange_id: u16,
    /// Bid levels.
    pub bids: *const floxlog_level,
    /// Number of bid levels.
    pub bid_count: usize,
    /// Ask levels.
    pub asks: *const floxlog_level,
    /// Number of ask levels.
    pub ask_count: usize,
}

/// An option quote. Field order, sizes and offsets are those of the
/// 112-byte OptionQuoteRecord (frame type 4).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_option_quote {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Mark price, 1e8.
    pub mark_price_raw: i64,
    /// Index price, 1e8.
    pub index_price_raw: i64,
    /// Underlying price, 1e8.
    pub underlying_price_raw: i64,
    /// Implied volatility, 1e8.
    pub iv_raw: i64,
    /// Best bid, 1e8.
    pub bid_price_raw: i64,
    /// Best ask, 1e8.
    pub ask_price_raw: i64,
    /// Bid size, 1e8.
    pub bid_size_raw: i64,
    /// Ask size, 1e8.
    pub ask_size_raw: i64,
    /// Bid implied volatility, 1e8.
    pub bid_iv_raw: i64,
    /// Ask implied volatility, 1e8.
    pub ask_iv_raw: i64,
    /// Open interest, 1e8.
    pub open_interest_raw: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// Instrument code.
    pub instrument: u8,
    /// Padding (the format's zero byte at offset 109); ignored on input,
    /// 0 on output.
    pub pad: u8,
    /// Exchange tag.
    pub exchange_id: u16,
}
const _: () = assert!(size_of::<floxlog_option_quote>() == FLOXLOG_OPTION_QUOTE_LEN);
const _: () = assert!(offset_of!(floxlog_option_quote, exchange_id) == 110);

/// A pool state (frame type 5): a 32-byte header and opaque payload bytes.
///
/// On input the writer copies `payload_len` bytes from `payload` (NULL is
/// allowed when the length is 0). On output `payload` points into the
/// segment buffer (uncompressed) or the reader's block scratch (LZ4), or
/// into the buffer given to `floxlog_frame_decode`; it is never NULL.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_pool_state {
    /// Exchange-side timestamp, ns.
    pub exchange_ts_ns: i64,
    /// Receiver-side timestamp, ns.
    pub recv_ts_ns: i64,
    /// Symbol tag.
    pub symbol_id: u32,
    /// 1 Descriptor, 2 Checkpoint, 3 SwapDelta, 4 LiquidityDelta.
    pub sub_type: u8,
    /// Venue tag.
    pub venue: u8,
    /// Exchange tag.
    pub exchange_id: u16,
    /// Payload bytes.
    pub payload: *const u8,
    /// Payload length.
    pub payload_len: usize,
}

/// The payload of a `floxlog_event`; the member to use is named by
/// `floxlog_event.kind`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union floxlog_event_data {
    /// `FLOXLOG_EVENT_TRADE`.
    pub trade: floxlog_trade,
    /// `FLOXLOG_EVENT_BOOK_SNAPSHOT` and `FLOXLOG_EVENT_BOOK_DELTA`.
    pub book: floxlog_book,
    /// `FLOXLOG_EVENT_OPTION_QUOTE`.
    pub option_quote: floxlog_option_quote,
    /// `FLOXLOG_EVENT_POOL_STATE`.
    pub pool_state: floxlog_pool_state,
}

/// One event of any type: `kind` is a `FLOXLOG_EVENT_*` value (the frame
/// type) and selects the member of `data`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct floxlog_event {
    /// `FLOXLOG_EVENT_*`.
    pub kind: u32,
    /// The event.
    pub data: floxlog_event_data,
}

/// A decoded 64-byte segment header. Field order, sizes and offsets are
/// those of the format's SegmentHeader.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_segment_header {
    /// `FLOXLOG_MAGIC_SEGMENT`.
    pub magic: u32,
    /// Format version (1).
    pub version: u16,
    /// `FLOXLOG_FLAG_*` bits.
    pub flags: u8,
    /// Exchange tag.
    pub exchange_id: u8,
    /// Wall clock when the segment was opened, ns.
    pub created_ns: i64,
    /// First (reference) or earliest (spec) event timestamp.
    pub first_event_ns: i64,
    /// Last (reference) or latest (spec) event timestamp.
    pub last_event_ns: i64,
    /// Events in the segment (0 in a placeholder header).
    pub event_count: u32,
    /// Distinct symbols (0 from the reference writer).
    pub symbol_count: u32,
    /// Offset of the index trailer; 0 if none.
    pub index_offset: u64,
    /// 0 none, 1 LZ4.
    pub compression: u8,
    /// Zero.
    pub reserved: [u8; 15],
}
const _: () = assert!(size_of::<floxlog_segment_header>() == FLOXLOG_SEGMENT_HEADER_LEN);

/// A decoded 12-byte frame header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_frame_header {
    /// Payload bytes after the header.
    pub size: u32,
    /// CRC32 of the payload.
    pub crc32: u32,
    /// Record type (`FLOXLOG_EVENT_*` for known types).
    pub frame_type: u8,
    /// Record layout version (1).
    pub rec_version: u8,
    /// Reserved, zero.
    pub flags: u16,
}
const _: () = assert!(size_of::<floxlog_frame_header>() == FLOXLOG_FRAME_HEADER_LEN);

/// A decoded 16-byte compressed block header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_block_header {
    /// `FLOXLOG_MAGIC_BLOCK`.
    pub magic: u32,
    /// LZ4 bytes after the header.
    pub compressed_size: u32,
    /// Bytes the LZ4 data decodes to.
    pub original_size: u32,
    /// Frames in the block.
    pub event_count: u16,
    /// Reserved.
    pub flags: u16,
}
const _: () = assert!(size_of::<floxlog_block_header>() == FLOXLOG_BLOCK_HEADER_LEN);

/// A decoded 32-byte index header (format layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_index_header {
    /// `FLOXLOG_MAGIC_INDEX`.
    pub magic: u32,
    /// Index version (1).
    pub version: u16,
    /// The writer's interval (a hint).
    pub interval: u16,
    /// Entries that follow.
    pub entry_count: u32,
    /// CRC32 of the entries.
    pub crc32: u32,
    /// Timestamp of the first entry.
    pub first_ts_ns: i64,
    /// Timestamp of the last entry.
    pub last_ts_ns: i64,
}
const _: () = assert!(size_of::<floxlog_index_header>() == FLOXLOG_INDEX_HEADER_LEN);
/// One index entry (format layout). Also the element type of the writer's
/// index storage.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_index_entry {
    /// Timestamp of the indexed frame (or of the first event handed to the
    /// writer for the indexed block).
    pub timestamp_ns: i64,
    /// Offset of the frame or block header from the segment start.
    pub file_offset: u64,
}
// The writer's index storage is caller memory of floxlog_index_entry,
// handed to the core as `&mut [IndexEntry]` (both repr(C) {i64, u64}).
const _: () = assert!(size_of::<floxlog_index_entry>() == size_of::<IndexEntry>());
const _: () = assert!(align_of::<floxlog_index_entry>() == align_of::<IndexEntry>());
const _: () =
    assert!(offset_of!(floxlog_index_entry, file_offset) == offset_of!(IndexEntry, file_offset));

/// Where the reader found the last event.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_position {
    /// The frame header's offset, or for compressed segments the block
    /// header's offset.
    pub offset: u64,
    /// Compressed segments: the frame's offset inside the decompressed
    /// block (`has_in_block` is then 1).
    pub in_block: u32,
    /// 1 when `in_block` is meaningful.
    pub has_in_block: u8,
}

/// Reader and frame decode options.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct floxlog_read_options {
    /// Non-zero: check every frame's CRC32 (default 1).
    pub verify_crc: u8,
    /// Non-zero: skip frames of unknown type by their size; zero: stop with
    /// `FLOXLOG_UNKNOWN_RECORD_TYPE` (spec 1.0; default 0).
    pub skip_unknown_types: u8,
}

/// Writer settings. Get the defaults with `floxlog_writer_config_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct floxlog_writer_config {
    /// Wall-clock ns stamped as the header's `created_ns` (the library has
    /// no clock; pass `clock_gettime(CLOCK_REALTIME)` or a fixed value).
    pub created_ns: i64,
    /// Events between index entries (uncompressed) or events per LZ4 block.
    /// At least 1; default 1000.
    pub index_interval: u16,
    /// `FLOXLOG_COMPRESSION_NONE` (default) or `FLOXLOG_COMPRESSION_LZ4`.
    pub compression: u8,
    /// Non-zero: write the sparse index trailer (default 1).
    pub create_index: u8,
    /// Exchange tag of the segment header (default 0).
    pub exchange_id: u8,
    /// `FLOXLOG_PROFILE_REFERENCE` (default) or `FLOXLOG_PROFILE_SPEC`.
    pub profile: u8,
}

/// The caller's buffers for a writer. They are borrowed, not copied: they
/// must stay valid, and must not be touched by the caller, until
/// `floxlog_writer_free`. They must not overlap. Their initial contents do
/// not matter.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_writer_buffers {
    /// Encoded segment bytes accumulate here until drained (required).
    /// At least 64 bytes (the placeholder header). Each uncompressed event
    /// needs 12 + payload bytes free (a trade frame is 60), each LZ4 block
    /// `floxlog_lz4_block_len_max(block bytes)`, the index trailer
    /// `floxlog_index_trailer_len(entries)`. When it is full, appends fail
    /// with `FLOXLOG_BUFFER_TOO_SMALL` until you drain.
    pub out: *mut u8,
    /// Bytes at `out`.
    pub out_len: usize,
    /// LZ4 only: staging for one block's frames and its sorted copy,
    /// `floxlog_block_scratch_len(largest block's frame bytes)` bytes
    /// (a block of N trades has N * 60 frame bytes). NULL/0 when
    /// uncompressed.
    pub block: *mut u8,
    /// Bytes at `block`.
    pub block_len: usize,
    /// Index entry storage (8-byte aligned):
    /// `floxlog_index_entries_needed(events, index_interval)` entries for
    /// an uncompressed segment, one per block for LZ4. NULL/0 when
    /// `create_index` is 0. When full, appends fail with
    /// `FLOXLOG_INDEX_FULL`.
    pub index: *mut floxlog_index_entry,
    /// Entries at `index`.
    pub index_capacity: usize,
}

/// Counts of what a writer has accepted.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_writer_stats {
    /// Segment bytes produced so far (header, frames or blocks; the
    /// trailer once finished). What rotation compares with a size limit.
    pub segment_bytes: u64,
    /// Segment offset of the first byte still pending in `out`.
    pub pending_offset: u64,
    /// Events accepted (including those staged in an unfinished LZ4 block).
    pub events: u32,
    /// Events in blocks already emitted (equals `events` uncompressed).
    pub events_emitted: u32,
    /// Index entries recorded.
    pub index_entries: usize,
    /// Bytes staged for the next LZ4 block.
    pub staged_bytes: usize,
    /// Bytes waiting in `out` to be drained.
    pub pending_bytes: usize,
    /// 1 once `floxlog_writer_finish` has succeeded.
    pub finished: u8,
}
