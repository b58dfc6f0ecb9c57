//! Magic numbers, versions, sizes and codes of floxlog 1.0.

/// Segment header magic, "FLOX" read as little-endian u32.
pub const MAGIC_SEGMENT: u32 = 0x584F_4C46;
/// Compressed block header magic, "FBLK".
pub const MAGIC_BLOCK: u32 = 0x4B4C_4246;
/// Index trailer magic, "INDX".
pub const MAGIC_INDEX: u32 = 0x5844_4E49;
/// Segment format version.
pub const FORMAT_VERSION: u16 = 1;
/// Index format version.
pub const INDEX_VERSION: u16 = 1;
/// Record layout version of every frame type in 1.0.
pub const RECORD_VERSION: u8 = 1;

/// Index interval (and LZ4 events per block) the reference uses by default.
pub const DEFAULT_INDEX_INTERVAL: u16 = 1000;
/// Segment size past which the reference rotates (uncompressed only).
pub const DEFAULT_MAX_SEGMENT_BYTES: u64 = 256 * 1024 * 1024;

/// Frame type codes.
pub mod frame_type {
    /// [`crate::Trade`].
    pub const TRADE: u8 = 1;
    /// Book snapshot ([`crate::Book`]).
    pub const BOOK_SNAPSHOT: u8 = 2;
    /// Book delta ([`crate::Book`]).
    pub const BOOK_DELTA: u8 = 3;
    /// [`crate::OptionQuote`] (layout in docs/format-notes.md).
    pub const OPTION_QUOTE: u8 = 4;
    /// [`crate::PoolState`] (layout in docs/format-notes.md).
    pub const POOL_STATE: u8 = 5;

    /// Every type 1.0 defines, with the name the corpus's JSON and the CLI
    /// use for it.
    pub const NAMES: [(u8, &str); 5] = [
        (TRADE, "trade"),
        (BOOK_SNAPSHOT, "book_snapshot"),
        (BOOK_DELTA, "book_delta"),
        (OPTION_QUOTE, "option_quote"),
        (POOL_STATE, "pool_state"),
    ];

    /// The name of frame type `t`, if 1.0 defines it.
    pub const fn name(t: u8) -> Option<&'static str> {
        let mut i = 0;
        while i < NAMES.len() {
            if NAMES[i].0 == t {
                return Some(NAMES[i].1);
            }
            i += 1;
        }
        None
    }

    /// The frame type named `name` (see [`NAMES`]).
    pub fn from_name(name: &str) -> Option<u8> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }
}

/// Instrument codes.
pub mod instrument {
    /// Spot.
    pub const SPOT: u8 = 0;
    /// Perpetual.
    pub const PERP: u8 = 1;
    /// Future.
    pub const FUTURE: u8 = 2;
    /// Option.
    pub const OPTION: u8 = 3;
}

/// Trade side codes.
pub mod side {
    /// Buy.
    pub const BUY: u8 = 0;
    /// Sell.
    pub const SELL: u8 = 1;
}

/// Pool-state sub-types.
pub mod pool_sub_type {
    /// Pool descriptor.
    pub const DESCRIPTOR: u8 = 1;
    /// Checkpoint.
    pub const CHECKPOINT: u8 = 2;
    /// Swap delta.
    pub const SWAP_DELTA: u8 = 3;
    /// Liquidity delta.
    pub const LIQUIDITY_DELTA: u8 = 4;
}
