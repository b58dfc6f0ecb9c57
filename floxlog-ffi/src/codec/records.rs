//! Field-by-field conversions between the C structs and the core's types,
//! for everything that holds no caller pointer (events with level or
//! payload pointers are in `event.rs`). Nothing here casts file bytes:
//! decoded values are copied out of the core's types.

use crate::codec::frame::{floxlog_block_header, floxlog_frame_header};
use crate::codec::reader::{floxlog_index_header, floxlog_position, floxlog_reader_options};
use crate::codec::segment::floxlog_segment_header;
use crate::codec::types::*;
use crate::codec::writer::{floxlog_index_entry, floxlog_writer_config};
use crate::consts::*;
use crate::error::Fail;
use core::mem::MaybeUninit;
use floxlog_core::{
    BlockHeader, Compression, FrameHeader, IndexEntry, IndexHeader, Level, OptionQuote, Position,
    Profile, ReadOptions, SegmentHeader, Trade, TradeSink, UnknownTypes, WriterConfig,
};

/// `impl From<&$from> for $to`: copies the listed fields (the same names on
/// both sides) and sets the others from expressions over `$v`. With `<=>`
/// also the other way, from the C struct to the core type (the extra
/// fields are the C struct's).
macro_rules! convert {
    ($v:ident: &$from:ty => $to:ident { $($f:ident),* $(,)? } $($x:ident: $e:expr),* $(,)?) => {
        impl From<&$from> for $to {
            #[inline(always)]
            fn from($v: &$from) -> $to {
                $to { $($f: $v.$f,)* $($x: $e,)* }
            }
        }
    };
    ($v:ident: &$c:ident <=> $core:ident { $($f:ident),* $(,)? } $($x:ident: $e:expr),* $(,)?) => {
        convert!($v: &$core => $c { $($f),* } $($x: $e),*);
        convert!($v: &$c => $core { $($f),* });
    };
}
pub(crate) use convert;

/// Both ways between `floxlog_trade` and the core's trade, over the
/// core's field list.
macro_rules! trade_convert {
    ($( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        convert!(t: &floxlog_trade <=> Trade { $($f),* });
    };
}
floxlog_core::trade_fields!(trade_convert);

/// The caller's trade array as the core's batch kernels fill it: each
/// trade written straight into its slot (same layout: see `types.rs`).
pub(crate) struct TradeSlots<'a>(pub(crate) &'a mut [MaybeUninit<floxlog_trade>]);

impl TradeSink for TradeSlots<'_> {
    #[inline(always)]
    fn capacity(&self) -> usize {
        self.0.len()
    }

    #[inline(always)]
    fn put(&mut self, i: usize, t: Trade) {
        if let Some(slot) = self.0.get_mut(i) {
            slot.write((&t).into());
        }
    }
}

/// Both ways between `floxlog_option_quote` and the core's option quote,
/// over the core's field list (the C struct's `pad` is written as 0).
macro_rules! option_quote_convert {
    ($( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        convert!(q: &floxlog_option_quote <=> OptionQuote { $($f),* } pad: 0);
    };
}
floxlog_core::option_quote_fields!(option_quote_convert);

/// Both ways between `floxlog_level` and the core's level, over the core's
/// field list.
macro_rules! level_convert {
    ($( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        convert!(l: &floxlog_level <=> Level { $($f),* });
    };
}
floxlog_core::level_fields!(level_convert);

/// Core -> C for the headers with constants the core leaves out, over the
/// core's field list (`$x` set from expressions).
macro_rules! header_convert {
    ({ $core:ident $c:ident { $($x:ident: $e:expr),* } }
     $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        convert!(h: &$core => $c { $($f),* } $($x: $e),*);
    };
}

floxlog_core::segment_header_fields!(header_convert, {
    SegmentHeader floxlog_segment_header { magic: FLOXLOG_MAGIC_SEGMENT, reserved: [0; 15] }
});

convert!(h: &FrameHeader => floxlog_frame_header {
    size, crc32, frame_type, rec_version, flags,
});

convert!(h: &BlockHeader => floxlog_block_header {
    magic, compressed_size, original_size, event_count, flags,
});

floxlog_core::index_header_fields!(header_convert, {
    IndexHeader floxlog_index_header { magic: FLOXLOG_MAGIC_INDEX }
});

floxlog_core::index_entry_fields!(header_convert, { IndexEntry floxlog_index_entry {} });

convert!(p: &Position => floxlog_position {
    offset,
} in_block: p.in_block.unwrap_or(0), has_in_block: p.in_block.is_some() as u8);

impl Default for floxlog_reader_options {
    fn default() -> Self {
        floxlog_reader_options {
            verify_crc: 1,
            skip_unknown_types: 0,
        }
    }
}

impl floxlog_reader_options {
    /// The options a NULL pointer stands for (the defaults), or `*opts`.
    ///
    /// # Safety
    /// If non-NULL and aligned, `opts` must point at a valid value.
    pub(crate) unsafe fn from_ptr(opts: *const floxlog_reader_options) -> Result<Self, Fail> {
        if opts.is_null() {
            return Ok(Self::default());
        }
        // SAFETY: checked by in_ref; the caller promises a value.
        Ok(*unsafe { crate::boundary::in_ref(opts, "opts") }?)
    }

    /// The core's options.
    pub(crate) fn core(&self) -> ReadOptions {
        ReadOptions {
            verify_crc: self.verify_crc != 0,
            unknown_types: if self.skip_unknown_types != 0 {
                UnknownTypes::Skip
            } else {
                UnknownTypes::Reject
            },
            ..ReadOptions::default()
        }
    }
}

/// A `FLOXLOG_PROFILE_*` value.
pub(crate) fn profile_in(p: u8) -> Result<Profile, Fail> {
    match p {
        FLOXLOG_PROFILE_REFERENCE => Ok(Profile::Reference),
        FLOXLOG_PROFILE_SPEC => Ok(Profile::Spec),
        _ => Err(Fail::invalid("profile is not a FLOXLOG_PROFILE_* value")),
    }
}

/// The core's writer settings. Checks the enum values only:
/// `WriterConfig::check` does the rest.
pub(crate) fn config_in(c: &floxlog_writer_config) -> Result<WriterConfig, Fail> {
    let compression = match c.compression {
        FLOXLOG_COMPRESSION_NONE => Compression::None,
        FLOXLOG_COMPRESSION_LZ4 => Compression::Lz4,
        _ => {
            return Err(Fail::invalid(
                "compression is not a FLOXLOG_COMPRESSION_* value",
            ))
        }
    };
    Ok(WriterConfig {
        compression,
        create_index: c.create_index != 0,
        index_interval: c.index_interval,
        exchange_id: c.exchange_id,
        created_ns: c.created_ns,
        profile: profile_in(c.profile)?,
    })
}

convert!(c: &WriterConfig => floxlog_writer_config {
    created_ns, index_interval, exchange_id,
} compression: match c.compression {
    Compression::None => FLOXLOG_COMPRESSION_NONE,
    Compression::Lz4 => FLOXLOG_COMPRESSION_LZ4,
}, create_index: c.create_index as u8, profile: match c.profile {
    Profile::Reference => FLOXLOG_PROFILE_REFERENCE,
    Profile::Spec => FLOXLOG_PROFILE_SPEC,
});
