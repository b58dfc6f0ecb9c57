//! The C structs of the ABI and their field-by-field conversion to and from
//! floxlog-core types. Nothing here casts file bytes: decoded values are
//! copied out of the core's types.

use crate::{check_in, slice_in, slice_uninit, Fail};
use core::mem::{align_of, offset_of, size_of, MaybeUninit};
use floxlog_core::book::MAX_LEVELS_PER_SIDE;
use floxlog_core::{
    BlockHeader, Book, BookKind, Event, IndexEntry, IndexHeader, Level, Levels, OptionQuote,
    PoolState, SegmentHeader, Trade,
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
// Literals above (cbindgen cannot follow paths into the core); kept equal:
const _: () = assert!(FLOXLOG_MAGIC_SEGMENT == floxlog_core::MAGIC_SEGMENT);
const _: () = assert!(FLOXLOG_MAGIC_BLOCK == floxlog_core::MAGIC_BLOCK);
const _: () = assert!(FLOXLOG_MAGIC_INDEX == floxlog_core::MAGIC_INDEX);
const _: () = assert!(FLOXLOG_MAX_LEVELS_PER_SIDE == floxlog_core::book::MAX_LEVELS_PER_SIDE);
const _: () = assert!(FLOXLOG_SEGMENT_HEADER_LEN == SegmentHeader::LEN);
const _: () = assert!(FLOXLOG_FRAME_HEADER_LEN == floxlog_core::FrameHeader::LEN);
const _: () = assert!(FLOXLOG_BLOCK_HEADER_LEN == BlockHeader::LEN);
const _: () = assert!(FLOXLOG_INDEX_HEADER_LEN == IndexHeader::LEN);
const _: () = assert!(FLOXLOG_INDEX_ENTRY_LEN == IndexEntry::LEN);
const _: () = assert!(FLOXLOG_TRADE_LEN == Trade::LEN);
const _: () = assert!(FLOXLOG_OPTION_QUOTE_LEN == OptionQuote::LEN);
const _: () = assert!(FLOXLOG_BOOK_HEADER_LEN == floxlog_core::book::BOOK_HEADER_LEN);
const _: () = assert!(FLOXLOG_POOL_STATE_HEADER_LEN == PoolState::HEADER_LEN);
const _: () = assert!(FLOXLOG_LEVEL_LEN == floxlog_core::book::LEVEL_LEN);

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
    /// snapshot and 1 for a delta, the spec text 2 and 3. The reference
    /// profile stores it as given (it must agree with the kind); the spec
    /// profile stores 2 or 3.
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

impl From<&SegmentHeader> for floxlog_segment_header {
    fn from(h: &SegmentHeader) -> Self {
        floxlog_segment_header {
            magic: FLOXLOG_MAGIC_SEGMENT,
            version: h.version,
            flags: h.flags,
            exchange_id: h.exchange_id,
            created_ns: h.created_ns,
            first_event_ns: h.first_event_ns,
            last_event_ns: h.last_event_ns,
            event_count: h.event_count,
            symbol_count: h.symbol_count,
            index_offset: h.index_offset,
            compression: h.compression,
            reserved: [0; 15],
        }
    }
}

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

impl From<&BlockHeader> for floxlog_block_header {
    fn from(h: &BlockHeader) -> Self {
        floxlog_block_header {
            magic: h.magic,
            compressed_size: h.compressed_size,
            original_size: h.original_size,
            event_count: h.event_count,
            flags: h.flags,
        }
    }
}

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

impl From<&IndexHeader> for floxlog_index_header {
    fn from(h: &IndexHeader) -> Self {
        floxlog_index_header {
            magic: FLOXLOG_MAGIC_INDEX,
            version: h.version,
            interval: h.interval,
            entry_count: h.entry_count,
            crc32: h.crc32,
            first_ts_ns: h.first_ts_ns,
            last_ts_ns: h.last_ts_ns,
        }
    }
}

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

impl From<IndexEntry> for floxlog_index_entry {
    fn from(e: IndexEntry) -> Self {
        floxlog_index_entry {
            timestamp_ns: e.timestamp_ns,
            file_offset: e.file_offset,
        }
    }
}

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

impl Default for floxlog_read_options {
    fn default() -> Self {
        floxlog_read_options {
            verify_crc: 1,
            skip_unknown_types: 0,
        }
    }
}

impl floxlog_read_options {
    pub(crate) fn core(&self) -> floxlog_core::ReadOptions {
        floxlog_core::ReadOptions {
            verify_crc: self.verify_crc != 0,
            unknown_types: if self.skip_unknown_types != 0 {
                floxlog_core::UnknownTypes::Skip
            } else {
                floxlog_core::UnknownTypes::Reject
            },
        }
    }
}

// ---------------------------------------------------------------------------
// C -> core.

pub(crate) fn trade_in(t: &floxlog_trade) -> Trade {
    Trade {
        exchange_ts_ns: t.exchange_ts_ns,
        recv_ts_ns: t.recv_ts_ns,
        price_raw: t.price_raw,
        qty_raw: t.qty_raw,
        trade_id: t.trade_id,
        symbol_id: t.symbol_id,
        side: t.side,
        instrument: t.instrument,
        exchange_id: t.exchange_id,
    }
}

pub(crate) fn option_quote_in(q: &floxlog_option_quote) -> OptionQuote {
    OptionQuote {
        exchange_ts_ns: q.exchange_ts_ns,
        recv_ts_ns: q.recv_ts_ns,
        mark_price_raw: q.mark_price_raw,
        index_price_raw: q.index_price_raw,
        underlying_price_raw: q.underlying_price_raw,
        iv_raw: q.iv_raw,
        bid_price_raw: q.bid_price_raw,
        ask_price_raw: q.ask_price_raw,
        bid_size_raw: q.bid_size_raw,
        ask_size_raw: q.ask_size_raw,
        bid_iv_raw: q.bid_iv_raw,
        ask_iv_raw: q.ask_iv_raw,
        open_interest_raw: q.open_interest_raw,
        symbol_id: q.symbol_id,
        instrument: q.instrument,
        exchange_id: q.exchange_id,
    }
}

/// Views one side's caller levels as core levels.
///
/// # Safety
/// `p` must point at `n` levels (or be NULL with `n == 0`) that stay
/// unchanged during `'a`.
unsafe fn levels_in<'a>(p: *const floxlog_level, n: usize) -> Result<&'a [Level], Fail> {
    if n > MAX_LEVELS_PER_SIDE {
        return Err(Fail::invalid("book side has more than 65535 levels"));
    }
    // SAFETY: the caller's promise; layouts are asserted equal above.
    unsafe { slice_in(p as *const Level, n, "book levels pointer") }
}

/// # Safety
/// The level pointers of `b` must satisfy `levels_in`.
pub(crate) unsafe fn book_in<'a>(b: &'a floxlog_book, kind: BookKind) -> Result<Book<'a>, Fail> {
    Ok(Book {
        kind,
        exchange_ts_ns: b.exchange_ts_ns,
        recv_ts_ns: b.recv_ts_ns,
        seq: b.seq,
        symbol_id: b.symbol_id,
        header_type: b.header_type,
        instrument: b.instrument,
        exchange_id: b.exchange_id,
        // SAFETY: forwarded caller promise.
        bids: Levels::Slice(unsafe { levels_in(b.bids, b.bid_count) }?),
        // SAFETY: forwarded caller promise.
        asks: Levels::Slice(unsafe { levels_in(b.asks, b.ask_count) }?),
    })
}

/// # Safety
/// `p.payload` must point at `payload_len` bytes (or be NULL with 0).
pub(crate) unsafe fn pool_state_in(p: &floxlog_pool_state) -> Result<PoolState<'_>, Fail> {
    if p.payload_len > u32::MAX as usize - FLOXLOG_POOL_STATE_HEADER_LEN {
        return Err(Fail::invalid("pool state payload does not fit a frame"));
    }
    Ok(PoolState {
        exchange_ts_ns: p.exchange_ts_ns,
        recv_ts_ns: p.recv_ts_ns,
        symbol_id: p.symbol_id,
        sub_type: p.sub_type,
        venue: p.venue,
        exchange_id: p.exchange_id,
        // SAFETY: the caller's promise.
        payload: unsafe { slice_in(p.payload, p.payload_len, "pool state payload pointer") }?,
    })
}

/// A core event from a C event (views, no copies).
///
/// # Safety
/// `ev` must be a valid event: the union member named by `kind` is read, and
/// its pointers must satisfy `book_in` / `pool_state_in`.
pub(crate) unsafe fn event_in(ev: &floxlog_event) -> Result<Event<'_>, Fail> {
    // Every member is plain data (integers and raw pointers), so reading
    // any member of any bit pattern is defined; the member named by `kind`
    // is the one the caller filled.
    Ok(match ev.kind {
        FLOXLOG_EVENT_TRADE => {
            // SAFETY: see above.
            Event::Trade(trade_in(unsafe { &ev.data.trade }))
        }
        FLOXLOG_EVENT_BOOK_SNAPSHOT => {
            // SAFETY: see above; level pointers are the caller's promise.
            Event::Book(unsafe { book_in(&ev.data.book, BookKind::Snapshot) }?)
        }
        FLOXLOG_EVENT_BOOK_DELTA => {
            // SAFETY: see above; level pointers are the caller's promise.
            Event::Book(unsafe { book_in(&ev.data.book, BookKind::Delta) }?)
        }
        FLOXLOG_EVENT_OPTION_QUOTE => {
            // SAFETY: see above.
            Event::OptionQuote(option_quote_in(unsafe { &ev.data.option_quote }))
        }
        FLOXLOG_EVENT_POOL_STATE => {
            // SAFETY: see above; the payload pointer is the caller's promise.
            Event::PoolState(unsafe { pool_state_in(&ev.data.pool_state) }?)
        }
        _ => {
            return Err(Fail::invalid(
                "floxlog_event.kind is not a FLOXLOG_EVENT_* type",
            ))
        }
    })
}

/// Checks an event pointer and converts it.
///
/// # Safety
/// As `event_in`, for `*ev` if it is non-NULL and aligned.
pub(crate) unsafe fn event_ptr_in<'a>(ev: *const floxlog_event) -> Result<Event<'a>, Fail> {
    check_in(ev, "event is NULL")?;
    // SAFETY: checked; the caller's promise for the contents.
    unsafe { event_in(&*ev) }
}

// ---------------------------------------------------------------------------
// core -> C.

#[inline(always)]
pub(crate) fn trade_out(t: &Trade) -> floxlog_trade {
    floxlog_trade {
        exchange_ts_ns: t.exchange_ts_ns,
        recv_ts_ns: t.recv_ts_ns,
        price_raw: t.price_raw,
        qty_raw: t.qty_raw,
        trade_id: t.trade_id,
        symbol_id: t.symbol_id,
        side: t.side,
        instrument: t.instrument,
        exchange_id: t.exchange_id,
    }
}

fn option_quote_out(q: &OptionQuote) -> floxlog_option_quote {
    floxlog_option_quote {
        exchange_ts_ns: q.exchange_ts_ns,
        recv_ts_ns: q.recv_ts_ns,
        mark_price_raw: q.mark_price_raw,
        index_price_raw: q.index_price_raw,
        underlying_price_raw: q.underlying_price_raw,
        iv_raw: q.iv_raw,
        bid_price_raw: q.bid_price_raw,
        ask_price_raw: q.ask_price_raw,
        bid_size_raw: q.bid_size_raw,
        ask_size_raw: q.ask_size_raw,
        bid_iv_raw: q.bid_iv_raw,
        ask_iv_raw: q.ask_iv_raw,
        open_interest_raw: q.open_interest_raw,
        symbol_id: q.symbol_id,
        instrument: q.instrument,
        pad: 0,
        exchange_id: q.exchange_id,
    }
}

/// Where empty level lists point when the caller gave no scratch.
static NO_LEVELS: [floxlog_level; 1] = [floxlog_level {
    price_raw: 0,
    qty_raw: 0,
}];

/// Level scratch from the caller: checked pointer and capacity.
pub(crate) struct LevelScratch<'a> {
    slots: &'a mut [MaybeUninit<floxlog_level>],
}

impl<'a> LevelScratch<'a> {
    /// # Safety
    /// `p` must point at `cap` writable levels (or be NULL with 0) that
    /// nothing else accesses during `'a`.
    pub(crate) unsafe fn new(p: *mut floxlog_level, cap: usize) -> Result<Self, Fail> {
        Ok(LevelScratch {
            // SAFETY: forwarded caller promise.
            slots: unsafe { slice_uninit(p, cap, "level scratch pointer") }?,
        })
    }

    /// The slots after the first `used` (empty when all are used).
    pub(crate) fn rest(&mut self, used: usize) -> LevelScratch<'_> {
        let at = used.min(self.slots.len());
        LevelScratch {
            slots: &mut self.slots[at..],
        }
    }
}

/// Writes a trade event to `*out` in place.
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
#[inline(always)]
pub(crate) unsafe fn write_trade(t: &Trade, out: *mut floxlog_event) {
    use core::ptr::addr_of_mut;
    // SAFETY: the caller's promise; field projections, no references.
    unsafe {
        addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_TRADE);
        addr_of_mut!((*out).data.trade).write(trade_out(t));
    }
}

/// Writes the C form of a decoded event to `*out`, field by field and in
/// place (no whole-struct temporaries: this is the decode hot path). Book
/// levels are decoded into `scratch` (frames are unaligned, so they are
/// never pointed at in place). `Err` carries the number of levels the
/// scratch would need; nothing is written then.
///
/// # Safety
/// `out` must be non-NULL, aligned and writable.
#[inline(always)]
pub(crate) unsafe fn write_event(
    ev: &Event<'_>,
    out: *mut floxlog_event,
    scratch: &mut LevelScratch<'_>,
) -> Result<(), usize> {
    use core::ptr::addr_of_mut;
    // SAFETY (every write below): `out` is valid for writes (the caller's
    // promise); `addr_of_mut!` projects to fields without creating
    // references to possibly uninitialised memory.
    match ev {
        // SAFETY: see above.
        Event::Trade(t) => unsafe { write_trade(t, out) },
        // SAFETY: see above.
        Event::OptionQuote(q) => unsafe {
            addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_OPTION_QUOTE);
            addr_of_mut!((*out).data.option_quote).write(option_quote_out(q));
        },
        // SAFETY: see above.
        Event::PoolState(p) => unsafe {
            addr_of_mut!((*out).kind).write(FLOXLOG_EVENT_POOL_STATE);
            addr_of_mut!((*out).data.pool_state).write(floxlog_pool_state {
                exchange_ts_ns: p.exchange_ts_ns,
                recv_ts_ns: p.recv_ts_ns,
                symbol_id: p.symbol_id,
                sub_type: p.sub_type,
                venue: p.venue,
                exchange_id: p.exchange_id,
                payload: p.payload.as_ptr(),
                payload_len: p.payload.len(),
            });
        },
        Event::Book(b) => {
            let (nb, na) = (b.bids.len(), b.asks.len());
            let total = nb + na;
            if total > scratch.slots.len() {
                return Err(total);
            }
            let slots = &mut scratch.slots[..total];
            let (bid_slots, ask_slots) = slots.split_at_mut(nb);
            for (d, l) in bid_slots.iter_mut().zip(b.bids.iter()) {
                d.write(floxlog_level {
                    price_raw: l.price_raw,
                    qty_raw: l.qty_raw,
                });
            }
            for (d, l) in ask_slots.iter_mut().zip(b.asks.iter()) {
                d.write(floxlog_level {
                    price_raw: l.price_raw,
                    qty_raw: l.qty_raw,
                });
            }
            let base: *const floxlog_level = if scratch.slots.is_empty() {
                NO_LEVELS.as_ptr()
            } else {
                scratch.slots.as_ptr() as *const floxlog_level
            };
            let kind = match b.kind {
                BookKind::Snapshot => FLOXLOG_EVENT_BOOK_SNAPSHOT,
                BookKind::Delta => FLOXLOG_EVENT_BOOK_DELTA,
            };
            // SAFETY: see above.
            unsafe {
                addr_of_mut!((*out).kind).write(kind);
                addr_of_mut!((*out).data.book).write(floxlog_book {
                    exchange_ts_ns: b.exchange_ts_ns,
                    recv_ts_ns: b.recv_ts_ns,
                    seq: b.seq,
                    symbol_id: b.symbol_id,
                    header_type: b.header_type,
                    instrument: b.instrument,
                    exchange_id: b.exchange_id,
                    bids: base,
                    bid_count: nb,
                    // In bounds (at most one past the end) since
                    // nb <= total <= capacity.
                    asks: base.wrapping_add(nb),
                    ask_count: na,
                });
            }
        }
    }
    Ok(())
}

/// The failure for a level scratch that is too small.
pub(crate) fn levels_short(needed: usize) -> Fail {
    Fail::too_small(
        needed as u64,
        "level scratch too small for this book (needed = levels); nothing was consumed",
    )
}
