//! Errors: a kind (stable, matches the conformance corpus names), the byte
//! offset of what failed, and a short static description.

use core::fmt;

/// What went wrong. The first fifteen kinds are the error kinds of the
/// conformance corpus (`as_str` gives its spelling); the rest are resource and
/// usage errors of this implementation.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Segment magic is not `FLOX`.
    BadMagic,
    /// Segment version is not 1.
    UnsupportedVersion,
    /// A segment flag bit that 1.0 does not define.
    UnknownFlags,
    /// The Encrypted flag (reserved in 1.0).
    Encrypted,
    /// A reserved header byte is not zero.
    ReservedNonzero,
    /// The data ends inside a header, frame or block.
    Truncated,
    /// A frame payload does not match its CRC32.
    CrcMismatch,
    /// A frame's rec_version is not 1.
    UnsupportedRecordVersion,
    /// A frame's reserved flags are not zero.
    FrameFlagsNonzero,
    /// A frame type no layout defines (strict mode).
    UnknownRecordType,
    /// A payload whose size or content does not fit its type.
    MalformedRecord,
    /// A compressed block header's magic is not `FBLK`.
    BadBlockMagic,
    /// An LZ4 block does not decode to exactly `original_size` bytes.
    DecompressionFailed,
    /// Index entries do not match the index CRC.
    IndexCrcMismatch,
    /// Index header or offset is invalid.
    BadIndex,
    /// The segment header's compression byte is not a known codec, or
    /// disagrees with the Compressed flag.
    UnknownCompression,
    /// The segment is LZ4-compressed and this build has no LZ4 support.
    Lz4Unsupported,
    /// A caller-provided buffer is too small for the operation; nothing was
    /// consumed or written. `Error::needed` says how many bytes would do.
    BufferTooSmall,
    /// The caller-provided index storage is full; the event was not accepted.
    IndexFull,
    /// The writer's distinct-symbol table (spec profile) is full.
    SymbolCapacity,
    /// A count would overflow its on-disk field (event_count, block size...).
    CapacityExceeded,
    /// An argument or event cannot be encoded as given (e.g. a book header
    /// type byte that contradicts the book kind).
    InvalidInput,
    /// The writer was already finished.
    Finished,
}

impl ErrorKind {
    /// Stable snake_case name; the conformance corpus uses these spellings.
    pub const fn as_str(self) -> &'static str {
        Self::TABLE[self as usize].1
    }

    /// One sentence saying what the kind means (its documentation).
    pub const fn description(self) -> &'static str {
        Self::TABLE[self as usize].2
    }

    /// Every kind, in declaration order (for tables and exhaustive tests).
    pub const ALL: [ErrorKind; 23] = {
        let mut all = [ErrorKind::BadMagic; 23];
        let mut i = 0;
        while i < all.len() {
            all[i] = Self::TABLE[i].0;
            i += 1;
        }
        all
    };

    /// Name and description of every kind, indexed by discriminant: the one
    /// table the C ABI's messages come from too.
    const TABLE: [(ErrorKind, &'static str, &'static str); 23] = [
        (
            ErrorKind::BadMagic,
            "bad_magic",
            "segment magic is not FLOX",
        ),
        (
            ErrorKind::UnsupportedVersion,
            "unsupported_version",
            "segment version is not 1",
        ),
        (
            ErrorKind::UnknownFlags,
            "unknown_flags",
            "a segment flag bit that 1.0 does not define",
        ),
        (
            ErrorKind::Encrypted,
            "encrypted",
            "the Encrypted flag (reserved in 1.0)",
        ),
        (
            ErrorKind::ReservedNonzero,
            "reserved_nonzero",
            "a reserved header byte is not zero",
        ),
        (
            ErrorKind::Truncated,
            "truncated",
            "the data ends inside a header, frame or block",
        ),
        (
            ErrorKind::CrcMismatch,
            "crc_mismatch",
            "a frame payload does not match its CRC32",
        ),
        (
            ErrorKind::UnsupportedRecordVersion,
            "unsupported_record_version",
            "a frame's rec_version is not 1",
        ),
        (
            ErrorKind::FrameFlagsNonzero,
            "frame_flags_nonzero",
            "a frame's reserved flags are not zero",
        ),
        (
            ErrorKind::UnknownRecordType,
            "unknown_record_type",
            "a frame type no layout defines (strict mode)",
        ),
        (
            ErrorKind::MalformedRecord,
            "malformed_record",
            "a payload whose size does not fit its type",
        ),
        (
            ErrorKind::BadBlockMagic,
            "bad_block_magic",
            "a compressed block header's magic is not FBLK",
        ),
        (
            ErrorKind::DecompressionFailed,
            "decompression_failed",
            "an LZ4 block does not decode to exactly original_size bytes",
        ),
        (
            ErrorKind::IndexCrcMismatch,
            "index_crc_mismatch",
            "index entries do not match the index CRC",
        ),
        (
            ErrorKind::BadIndex,
            "bad_index",
            "index header or offset is invalid",
        ),
        (
            ErrorKind::UnknownCompression,
            "unknown_compression",
            "the compression byte is unknown or disagrees with the Compressed flag",
        ),
        (
            ErrorKind::Lz4Unsupported,
            "lz4_unsupported",
            "this build has no LZ4 support",
        ),
        (
            ErrorKind::BufferTooSmall,
            "buffer_too_small",
            "a caller buffer is too small; nothing was consumed or written",
        ),
        (
            ErrorKind::IndexFull,
            "index_full",
            "the writer's index storage is full; the event was not accepted",
        ),
        (
            ErrorKind::SymbolCapacity,
            "symbol_capacity",
            "the spec profile's distinct-symbol table is full",
        ),
        (
            ErrorKind::CapacityExceeded,
            "capacity_exceeded",
            "a count would overflow its on-disk field",
        ),
        (
            ErrorKind::InvalidInput,
            "invalid_input",
            "an argument cannot be used as given",
        ),
        (
            ErrorKind::Finished,
            "finished",
            "the writer was already finished",
        ),
    ];

    /// Parses a name produced by [`ErrorKind::as_str`].
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with the byte offset of what failed.
///
/// `offset` follows the corpus convention: 0 for the segment header, the
/// frame header's offset for a frame, the block header's offset for anything
/// inside a compressed block (then `in_block` gives the position inside the
/// decompressed block), the index header's offset for the index. For writer
/// errors it is the segment offset the event would have been written at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Byte offset in the segment (see above).
    pub offset: u64,
    /// For failures inside a decompressed LZ4 block: the offset of the
    /// failing frame inside the block's decompressed bytes.
    pub in_block: Option<u32>,
    /// For `BufferTooSmall`: how many bytes (or entries) the buffer needs.
    pub needed: Option<u64>,
    /// A short description of the check that failed.
    pub what: &'static str,
}

impl Error {
    /// An error of `kind` at `offset`, described by `what`.
    pub const fn new(kind: ErrorKind, offset: u64, what: &'static str) -> Error {
        Error {
            kind,
            offset,
            in_block: None,
            needed: None,
            what,
        }
    }

    /// The same error, located inside a decompressed block.
    pub const fn in_block(mut self, pos: u32) -> Error {
        self.in_block = Some(pos);
        self
    }

    /// The same error, with the size a buffer would need.
    pub const fn needing(mut self, needed: u64) -> Error {
        self.needed = Some(needed);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)?;
        if let Some(p) = self.in_block {
            write!(f, " (+{p} inside the decompressed block)")?;
        }
        write!(f, ": {}", self.what)?;
        if let Some(n) = self.needed {
            write!(f, " (needs {n})")?;
        }
        Ok(())
    }
}

impl core::error::Error for Error {}

/// `MalformedRecord` at `at`: a payload that does not fit its type.
pub(crate) const fn malformed(at: u64, what: &'static str) -> Error {
    Error::new(ErrorKind::MalformedRecord, at, what)
}

/// Result alias for this crate (not re-exported at the crate root, so that
/// `use floxlog_core::*` leaves `Result` alone).
pub type Result<T> = core::result::Result<T, Error>;

// TABLE is indexed by discriminant: each row must sit at its own kind.
const _: () = {
    let mut i = 0;
    while i < ErrorKind::TABLE.len() {
        assert!(ErrorKind::TABLE[i].0 as usize == i);
        i += 1;
    }
};
