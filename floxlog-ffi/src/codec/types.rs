//! The C structs of the events (trade, book, option quote, pool state, the
//! event union), shared by the codec and the tape level, with compile-time
//! checks of their layouts against the core's definitions. Conversions to
//! and from the core's types are in `records.rs` and `event.rs`; the
//! headers', options' and writer's structs stand beside their functions.

use crate::consts::*;
use core::mem::{offset_of, size_of};
use floxlog_core::{Level, OptionQuote, Trade};

/// Asserts that C mirror `$c` has core record `$core`'s size, alignment
/// and, for every field of the core's list, the same name, type and offset.
macro_rules! same_layout {
    ($c:ident $core:ident
     $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        const _: () = {
            use core::mem::{align_of, offset_of, size_of};
            type T = $core;
            assert!(size_of::<$c>() == size_of::<T>() && align_of::<$c>() == align_of::<T>());
            $( assert!(offset_of!($c, $f) == offset_of!(T, $f) && offset_of!(T, $f) == $off); )*
        };
        $crate::codec::types::same_fields!($c $( $f: $t; )*);
    };
}

/// Asserts that C struct `$c` has every field of a core list with the same
/// name and type (books and pool states: their C structs hold pointers
/// where the wire holds counts, so only names and types can agree).
macro_rules! same_fields {
    ($c:ident $( $f:ident: $t:ident; )*) => {
        const _: () = {
            $( let _: fn(&$c) -> $t = |c| c.$f; )*
        };
    };
    ($c:ident
     $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        $crate::codec::types::same_fields!($c $( $f: $t; )*);
    };
}
pub(crate) use {same_fields, same_layout};

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
// are repr(C) {i64, i64}, checked field by field from the core's list.
floxlog_core::level_fields!(same_layout, floxlog_level, Level);
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
floxlog_core::book_fields!(same_fields, floxlog_book);

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
floxlog_core::pool_state_fields!(same_fields, floxlog_pool_state);

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
