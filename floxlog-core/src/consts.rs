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
    /// [`crate::OptionQuote`] (FORMAT-NOTES layout).
    pub const OPTION_QUOTE: u8 = 4;
    /// [`crate::PoolState`] (FORMAT-NOTES layout).
    pub const POOL_STATE: u8 = 5;
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
