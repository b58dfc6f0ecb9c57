//! The C reader's option, filter, stats and position structs, with their
//! defaults.

use core::ffi::c_char;
use floxlog::tape::read::Request;

/// `floxlog_tape_reader_options.order`: merged by exchange timestamp across
/// segments (a stable k-way merge: ties keep segment, then file order).
pub const FLOXLOG_ORDER_TIME: u8 = 0;
/// `floxlog_tape_reader_options.order`: segment by segment, each in file
/// order.
pub const FLOXLOG_ORDER_FILE: u8 = 1;

/// Which events a tape reader returns. All-zero means every event.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_filter {
    /// With `has_from`: keep `exchange_ts_ns >= from_ns`.
    pub from_ns: i64,
    /// With `has_to`: keep `exchange_ts_ns < to_ns`.
    pub to_ns: i64,
    /// Non-zero: `from_ns` applies.
    pub has_from: u8,
    /// Non-zero: `to_ns` applies.
    pub has_to: u8,
    /// Event types to keep, as bits `1u << FLOXLOG_EVENT_*`; 0 keeps all.
    pub types: u32,
    /// Symbol ids to keep (read during open only; NULL only with 0).
    pub symbol_ids: *const u32,
    /// Entries at `symbol_ids`.
    pub symbol_id_count: usize,
    /// Symbol names to keep, resolved through the tape's `metadata.json`
    /// (case-insensitive; a decimal string is an id); an unknown name
    /// fails the open with `FLOXLOG_INVALID_INPUT` listing the known ones.
    /// Read during open only; NULL only with 0. With ids as well, the union
    /// is kept; with neither, every symbol.
    pub symbol_names: *const *const c_char,
    /// Entries at `symbol_names`.
    pub symbol_name_count: usize,
}

/// How a tape reader reads. Get the defaults with
/// `floxlog_tape_reader_options_default`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_reader_options {
    /// Which events.
    pub filter: floxlog_tape_filter,
    /// `FLOXLOG_ORDER_*` (default time).
    pub order: u8,
    /// Non-zero: check every frame's CRC32 (default 1).
    pub verify_crc: u8,
    /// Non-zero: skip frames of types 1.0 does not define; zero (default):
    /// such a frame is an error.
    pub skip_unknown_types: u8,
    /// Non-zero: a segment whose writer is still running or died (a
    /// placeholder header and a torn last frame or block) is an error too;
    /// by default its complete events are returned and the torn tail is
    /// only counted in `floxlog_tape_reader_stats.torn_tails`.
    pub strict: u8,
    /// Non-zero: list each directory instead of trusting `manifest.json`.
    pub ignore_manifest: u8,
    /// Time order: most bytes the orderings may hold together (16 bytes an
    /// event of the segments whose time ranges overlap; default 256 MiB);
    /// a tape that needs more fails with `FLOXLOG_CAPACITY_EXCEEDED`,
    /// naming `reorder_bytes`, instead of growing without bound.
    pub reorder_bytes: u64,
}

/// What a tape reader has done so far.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_tape_reader_stats {
    /// Segment files of the tape.
    pub segments: u64,
    /// Bytes of the mapped segment files.
    pub bytes: u64,
    /// Events returned.
    pub events: u64,
    /// Segments that ended in a running or killed writer's torn tail.
    pub torn_tails: u64,
    /// Errors found so far (segments that could not be read to their end,
    /// files that could not be opened): each is returned by
    /// `floxlog_tape_reader_next` after the last event.
    pub errors: u64,
}

/// Where the last event a tape reader returned is
/// (`floxlog_tape_reader_position`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_tape_position {
    /// The segment's number in the tape (0-based, in listing order).
    pub segment: u64,
    /// The frame header's byte offset in the segment file; for LZ4
    /// segments, the block header's.
    pub offset: u64,
    /// LZ4 segments (`has_in_block`): the frame's offset inside the
    /// decompressed block.
    pub in_block: u32,
    /// 1 when `in_block` is meaningful.
    pub has_in_block: u8,
}

/// Opaque tape reader handle (see `floxlog_tape_reader_open`). Use one
/// handle from one thread at a time; it may move between threads.
pub struct floxlog_tape_reader {
    _private: [u8; 0],
}

impl Default for floxlog_tape_filter {
    fn default() -> Self {
        floxlog_tape_filter {
            from_ns: 0,
            to_ns: 0,
            has_from: 0,
            has_to: 0,
            types: 0,
            symbol_ids: core::ptr::null(),
            symbol_id_count: 0,
            symbol_names: core::ptr::null(),
            symbol_name_count: 0,
        }
    }
}

impl Default for floxlog_tape_reader_options {
    fn default() -> Self {
        floxlog_tape_reader_options {
            filter: floxlog_tape_filter::default(),
            order: FLOXLOG_ORDER_TIME,
            verify_crc: 1,
            skip_unknown_types: 0,
            strict: 0,
            ignore_manifest: 0,
            reorder_bytes: Request::default().reorder_bytes as u64,
        }
    }
}

/// Every event type bit a filter may hold.
pub(crate) const TYPE_BITS: u32 = 0b11_1110;
