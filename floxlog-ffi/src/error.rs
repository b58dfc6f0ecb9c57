//! Result codes and failures: `floxlog_result`, the name and description of
//! each code (the core's own texts for the codes that stand for a core
//! `ErrorKind`), the internal `Fail`, and the `floxlog_error` it becomes.

use core::ffi::c_char;
use core::fmt;
use floxlog_core::{Error, ErrorKind};

/// Result codes. 0 is success; 1..99 are non-error statuses; 100..199 are
/// data errors (100..114 are the conformance corpus's error kinds in the
/// order of its README); 200..299 are usage and resource errors. The
/// numbers are stable: new codes are only ever added.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum floxlog_result {
    /// Success.
    FLOXLOG_OK = 0,
    /// No more events (reader), or no such entry (index lookups).
    FLOXLOG_END = 1,
    /// The segment has no index (HasIndex flag clear).
    FLOXLOG_NO_INDEX = 2,
    /// A trades-only batch read stopped at an event of another type: read
    /// it with the general call (`floxlog_reader_next`, ...).
    FLOXLOG_NOT_TRADE = 3,
    /// `floxlog_tape_diff`: the tapes differ (see its `floxlog_diff_result`).
    FLOXLOG_DIFFERENT = 4,
    /// `floxlog_tape_tail_next` (and `_next_trades`): nothing arrived
    /// within the timeout; a writer holds the tape. Call again.
    FLOXLOG_TIMEOUT = 5,
    /// `floxlog_tape_tail_next` (and `_next_trades`): no writer holds the
    /// tape's lock and its last segment was never finished: the writer died
    /// while writing. Every event it published was returned; a later call
    /// returns a restarted writer's events (`floxlog_tape_recover` finishes
    /// the segment).
    FLOXLOG_WRITER_GONE = 6,
    /// `bad_magic`: segment magic is not `FLOX`.
    FLOXLOG_BAD_MAGIC = 100,
    /// `unsupported_version`: segment version is not 1.
    FLOXLOG_UNSUPPORTED_VERSION = 101,
    /// `unknown_flags`: a segment flag bit that 1.0 does not define.
    FLOXLOG_UNKNOWN_FLAGS = 102,
    /// `encrypted`: the Encrypted flag (reserved in 1.0).
    FLOXLOG_ENCRYPTED = 103,
    /// `reserved_nonzero`: a reserved header byte is not zero.
    FLOXLOG_RESERVED_NONZERO = 104,
    /// `truncated`: the data ends inside a header, frame or block.
    FLOXLOG_TRUNCATED = 105,
    /// `crc_mismatch`: a frame payload does not match its CRC32.
    FLOXLOG_CRC_MISMATCH = 106,
    /// `unsupported_record_version`: a frame's rec_version is not 1.
    FLOXLOG_UNSUPPORTED_RECORD_VERSION = 107,
    /// `frame_flags_nonzero`: a frame's reserved flags are not zero.
    FLOXLOG_FRAME_FLAGS_NONZERO = 108,
    /// `unknown_record_type`: a frame type no layout defines (strict mode).
    FLOXLOG_UNKNOWN_RECORD_TYPE = 109,
    /// `malformed_record`: a payload whose size does not fit its type.
    FLOXLOG_MALFORMED_RECORD = 110,
    /// `bad_block_magic`: a compressed block header's magic is not `FBLK`.
    FLOXLOG_BAD_BLOCK_MAGIC = 111,
    /// `decompression_failed`: an LZ4 block does not decode to exactly
    /// `original_size` bytes.
    FLOXLOG_DECOMPRESSION_FAILED = 112,
    /// `index_crc_mismatch`: index entries do not match the index CRC.
    FLOXLOG_INDEX_CRC_MISMATCH = 113,
    /// `bad_index`: index header or offset is invalid.
    FLOXLOG_BAD_INDEX = 114,
    /// `unknown_compression`: the compression byte is not a known codec or
    /// disagrees with the Compressed flag.
    FLOXLOG_UNKNOWN_COMPRESSION = 115,
    /// A tape's `manifest.json` (or flox `.manifest`) is unreadable, of
    /// another version, or names files outside the tape directory.
    FLOXLOG_BAD_MANIFEST = 116,
    /// `floxlog_tape_verify` found errors (or warnings, when strict).
    FLOXLOG_VERIFY_FAILED = 117,
    /// A required pointer is NULL (or a buffer pointer is NULL with a
    /// non-zero length).
    FLOXLOG_NULL_POINTER = 200,
    /// A caller buffer is too small; nothing was consumed or written.
    /// `floxlog_error.needed` says how much would do.
    FLOXLOG_BUFFER_TOO_SMALL = 201,
    /// The writer's index storage is full; the event was not accepted.
    FLOXLOG_INDEX_FULL = 202,
    /// An argument cannot be used as given (bad enum value, level count
    /// over 65535, overlapping buffers, wrong handle...).
    FLOXLOG_INVALID_INPUT = 203,
    /// The writer was already finished.
    FLOXLOG_FINISHED = 204,
    /// LZ4 requested or found, and this build has no LZ4 support.
    FLOXLOG_LZ4_UNSUPPORTED = 205,
    /// The spec profile's distinct-symbol table is full.
    FLOXLOG_SYMBOL_CAPACITY = 206,
    /// A count would overflow its on-disk field.
    FLOXLOG_CAPACITY_EXCEEDED = 207,
    /// A pointer is not aligned for its type.
    FLOXLOG_MISALIGNED = 208,
    /// The operating system refused a file operation (missing file,
    /// permission, disk full): `floxlog_tape_error` names the file.
    FLOXLOG_IO_ERROR = 209,
    /// Another process holds the tape's lock (a writer is running, or a
    /// recover): `floxlog_tape_error.message` names its pid.
    FLOXLOG_TAPE_LOCKED = 210,
    /// The handle is in use by another thread: two calls on one handle ran
    /// at the same time (each writer, appender or tailer handle is used
    /// from one thread at a time; give each appending thread its own
    /// `floxlog_tape_appender`). The call did nothing and nothing is
    /// corrupted; retry once the other call returned. Also
    /// `floxlog_tape_writer_close` while an appender of the writer is open.
    FLOXLOG_BUSY = 211,
    /// An error this version of the C ABI has no code for.
    FLOXLOG_INTERNAL = 298,
    /// A Rust panic was caught at the boundary (a bug: please report it).
    FLOXLOG_PANIC = 299,
}

use floxlog_result::*;

/// Where a code's name and description come from.
#[derive(Clone, Copy)]
enum Text {
    /// The code stands for a core error kind: its `as_str` and
    /// `description`.
    Core(ErrorKind),
    /// A code of the C ABI's own: name and description.
    Own(&'static str, &'static str),
}
use Text::{Core, Own};

impl floxlog_result {
    /// Every code, for tables and exhaustive tests.
    pub(crate) const ALL: [floxlog_result; 39] = [
        FLOXLOG_OK,
        FLOXLOG_END,
        FLOXLOG_NO_INDEX,
        FLOXLOG_NOT_TRADE,
        FLOXLOG_DIFFERENT,
        FLOXLOG_TIMEOUT,
        FLOXLOG_WRITER_GONE,
        FLOXLOG_BAD_MAGIC,
        FLOXLOG_UNSUPPORTED_VERSION,
        FLOXLOG_UNKNOWN_FLAGS,
        FLOXLOG_ENCRYPTED,
        FLOXLOG_RESERVED_NONZERO,
        FLOXLOG_TRUNCATED,
        FLOXLOG_CRC_MISMATCH,
        FLOXLOG_UNSUPPORTED_RECORD_VERSION,
        FLOXLOG_FRAME_FLAGS_NONZERO,
        FLOXLOG_UNKNOWN_RECORD_TYPE,
        FLOXLOG_MALFORMED_RECORD,
        FLOXLOG_BAD_BLOCK_MAGIC,
        FLOXLOG_DECOMPRESSION_FAILED,
        FLOXLOG_INDEX_CRC_MISMATCH,
        FLOXLOG_BAD_INDEX,
        FLOXLOG_UNKNOWN_COMPRESSION,
        FLOXLOG_BAD_MANIFEST,
        FLOXLOG_VERIFY_FAILED,
        FLOXLOG_NULL_POINTER,
        FLOXLOG_BUFFER_TOO_SMALL,
        FLOXLOG_INDEX_FULL,
        FLOXLOG_INVALID_INPUT,
        FLOXLOG_FINISHED,
        FLOXLOG_LZ4_UNSUPPORTED,
        FLOXLOG_SYMBOL_CAPACITY,
        FLOXLOG_CAPACITY_EXCEEDED,
        FLOXLOG_MISALIGNED,
        FLOXLOG_IO_ERROR,
        FLOXLOG_TAPE_LOCKED,
        FLOXLOG_BUSY,
        FLOXLOG_INTERNAL,
        FLOXLOG_PANIC,
    ];

    /// The one table of codes: which core kind each stands for, or its own
    /// name and description. `from_kind` is read from it too.
    const fn text(self) -> Text {
        match self {
            FLOXLOG_OK => Own("ok", "success"),
            FLOXLOG_END => Own("end", "no more events, or no such entry"),
            FLOXLOG_NO_INDEX => Own("no_index", "the segment has no index"),
            FLOXLOG_NOT_TRADE => Own(
                "not_trade",
                "the next event is not a trade: read it with the general call",
            ),
            FLOXLOG_BAD_MAGIC => Core(ErrorKind::BadMagic),
            FLOXLOG_UNSUPPORTED_VERSION => Core(ErrorKind::UnsupportedVersion),
            FLOXLOG_UNKNOWN_FLAGS => Core(ErrorKind::UnknownFlags),
            FLOXLOG_ENCRYPTED => Core(ErrorKind::Encrypted),
            FLOXLOG_RESERVED_NONZERO => Core(ErrorKind::ReservedNonzero),
            FLOXLOG_TRUNCATED => Core(ErrorKind::Truncated),
            FLOXLOG_CRC_MISMATCH => Core(ErrorKind::CrcMismatch),
            FLOXLOG_UNSUPPORTED_RECORD_VERSION => Core(ErrorKind::UnsupportedRecordVersion),
            FLOXLOG_FRAME_FLAGS_NONZERO => Core(ErrorKind::FrameFlagsNonzero),
            FLOXLOG_UNKNOWN_RECORD_TYPE => Core(ErrorKind::UnknownRecordType),
            FLOXLOG_MALFORMED_RECORD => Core(ErrorKind::MalformedRecord),
            FLOXLOG_BAD_BLOCK_MAGIC => Core(ErrorKind::BadBlockMagic),
            FLOXLOG_DECOMPRESSION_FAILED => Core(ErrorKind::DecompressionFailed),
            FLOXLOG_INDEX_CRC_MISMATCH => Core(ErrorKind::IndexCrcMismatch),
            FLOXLOG_BAD_INDEX => Core(ErrorKind::BadIndex),
            FLOXLOG_UNKNOWN_COMPRESSION => Core(ErrorKind::UnknownCompression),
            FLOXLOG_BAD_MANIFEST => Own(
                "bad_manifest",
                "the tape's manifest is unreadable, of another version, or names files outside the tape",
            ),
            FLOXLOG_VERIFY_FAILED => Own("verify_failed", "verification found errors"),
            FLOXLOG_DIFFERENT => Own("different", "the tapes differ"),
            FLOXLOG_TIMEOUT => Own("timeout", "nothing arrived within the timeout"),
            FLOXLOG_WRITER_GONE => Own(
                "writer_gone",
                "no writer holds the tape and its last segment was never finished",
            ),
            FLOXLOG_NULL_POINTER => Own("null_pointer", "a required pointer is NULL"),
            FLOXLOG_BUFFER_TOO_SMALL => Core(ErrorKind::BufferTooSmall),
            FLOXLOG_INDEX_FULL => Core(ErrorKind::IndexFull),
            FLOXLOG_INVALID_INPUT => Core(ErrorKind::InvalidInput),
            FLOXLOG_FINISHED => Core(ErrorKind::Finished),
            FLOXLOG_LZ4_UNSUPPORTED => Core(ErrorKind::Lz4Unsupported),
            FLOXLOG_SYMBOL_CAPACITY => Core(ErrorKind::SymbolCapacity),
            FLOXLOG_CAPACITY_EXCEEDED => Core(ErrorKind::CapacityExceeded),
            FLOXLOG_MISALIGNED => Own("misaligned", "a pointer is not aligned for its type"),
            FLOXLOG_IO_ERROR => Own("io_error", "the operating system refused a file operation"),
            FLOXLOG_TAPE_LOCKED => Own("tape_locked", "another process holds the tape's lock"),
            FLOXLOG_BUSY => Own("busy", "handle in use by another thread"),
            FLOXLOG_INTERNAL => Own(
                "internal",
                "an error this version of the C ABI has no code for",
            ),
            FLOXLOG_PANIC => Own("panic", "a Rust panic was caught at the boundary (a bug)"),
        }
    }

    /// The code of a number, if it is one.
    pub(crate) fn from_u32(code: u32) -> Option<floxlog_result> {
        Self::ALL.iter().copied().find(|c| *c as u32 == code)
    }

    /// The code of a core error kind (`FLOXLOG_INTERNAL` for a kind added
    /// to the core after this table: `ErrorKind` is non-exhaustive).
    pub(crate) fn from_kind(kind: ErrorKind) -> floxlog_result {
        Self::ALL
            .iter()
            .copied()
            .find(|c| matches!(c.text(), Core(k) if k == kind))
            .unwrap_or(FLOXLOG_INTERNAL)
    }

    /// Stable name: the corpus spelling for data errors.
    pub(crate) const fn name(self) -> &'static str {
        match self.text() {
            Core(k) => k.as_str(),
            Own(name, _) => name,
        }
    }

    /// One sentence saying what the code means.
    pub(crate) const fn description(self) -> &'static str {
        match self.text() {
            Core(k) => k.description(),
            Own(_, description) => description,
        }
    }

    /// The `name` of the code numbered `code` as a static NUL-terminated
    /// string; `"unknown"` if no code has that number. (No panic path: it
    /// is called outside the unwinding boundary.)
    pub(crate) fn c_name(code: u32) -> *const c_char {
        match Self::ALL
            .iter()
            .zip(&C_NAMES)
            .find(|(c, _)| **c as u32 == code)
        {
            Some((_, name)) => name.as_ptr() as *const c_char,
            None => c"unknown".as_ptr(),
        }
    }
}

/// Room for the longest name and its NUL.
const NAME_CAP: usize = 32;

/// Every code's `name`, NUL-padded, in the order of `ALL`: built at compile
/// time from `name` (so from the core's `as_str`), never written twice.
static C_NAMES: [[u8; NAME_CAP]; floxlog_result::ALL.len()] = {
    let mut t = [[0u8; NAME_CAP]; floxlog_result::ALL.len()];
    let mut i = 0;
    while i < t.len() {
        let name = floxlog_result::ALL[i].name().as_bytes();
        assert!(name.len() < NAME_CAP, "a result name does not fit NAME_CAP");
        let mut j = 0;
        while j < name.len() {
            t[i][j] = name[j];
            j += 1;
        }
        i += 1;
    }
    t
};

/// Bytes of `floxlog_error.what`, including its terminating NUL.
pub const FLOXLOG_WHAT_LEN: usize = 128;

/// Details of a failure, filled by any function that takes a
/// `floxlog_error *` when it fails and the pointer is not NULL (it is left
/// untouched on success). Plain data: the caller owns it, it holds no
/// pointers, and it stays valid after the handle that produced it is freed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct floxlog_error {
    /// The `floxlog_result` code the function returned.
    pub code: u32,
    /// For failures inside a decompressed LZ4 block (`has_in_block`): the
    /// failing frame's offset inside the block's decompressed bytes.
    pub in_block: u32,
    /// Byte offset in the segment (or in the buffer given to a standalone
    /// frame function) of what failed: 0 for the segment header, the frame
    /// header's offset for a frame, the block header's offset for anything
    /// in a compressed block, the index offset for the index. For writer
    /// errors, the segment offset the event would have been written at.
    pub offset: u64,
    /// For `FLOXLOG_BUFFER_TOO_SMALL`, `FLOXLOG_INDEX_FULL` and some
    /// `FLOXLOG_TRUNCATED` errors (`has_needed`): bytes (or entries, or
    /// levels) the buffer needs.
    pub needed: u64,
    /// Non-zero when `in_block` is meaningful.
    pub has_in_block: u8,
    /// Non-zero when `needed` is meaningful.
    pub has_needed: u8,
    /// A short description of the check that failed, NUL-terminated
    /// (truncated to fit).
    pub what: [c_char; FLOXLOG_WHAT_LEN],
}

/// What is wrong with a caller pointer; `Fail::what` is then the
/// argument's name as the prototype spells it (`trade`, `book->bids`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PtrFault {
    /// NULL where a value is required.
    Null,
    /// NULL with a non-zero count.
    NullWithCount(usize),
    /// Not aligned for its type (the alignment needed).
    Misaligned(usize),
    /// The count times the element size passes `isize::MAX` bytes.
    TooLong(usize),
}

/// An internal failure before it is copied into a `floxlog_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: floxlog_result,
    pub offset: u64,
    pub in_block: Option<u32>,
    pub needed: Option<u64>,
    pub what: &'static str,
    /// Set for pointer checks: `what` names the argument.
    pub ptr: Option<PtrFault>,
}

impl Fail {
    pub(crate) const fn new(code: floxlog_result, what: &'static str) -> Fail {
        Fail {
            code,
            offset: 0,
            in_block: None,
            needed: None,
            what,
            ptr: None,
        }
    }
    /// A pointer argument (named `arg`) that cannot be used.
    pub(crate) const fn pointer(arg: &'static str, fault: PtrFault) -> Fail {
        let code = match fault {
            PtrFault::Null | PtrFault::NullWithCount(_) => FLOXLOG_NULL_POINTER,
            PtrFault::Misaligned(_) => FLOXLOG_MISALIGNED,
            PtrFault::TooLong(_) => FLOXLOG_INVALID_INPUT,
        };
        let mut f = Fail::new(code, arg);
        f.ptr = Some(fault);
        f
    }
    pub(crate) const fn null(arg: &'static str) -> Fail {
        Fail::pointer(arg, PtrFault::Null)
    }
    pub(crate) const fn invalid(what: &'static str) -> Fail {
        Fail::new(FLOXLOG_INVALID_INPUT, what)
    }
    pub(crate) const fn too_small(needed: u64, what: &'static str) -> Fail {
        let mut f = Fail::new(FLOXLOG_BUFFER_TOO_SMALL, what);
        f.needed = Some(needed);
        f
    }

    /// The text for a person (tape errors): see the `Display` impl.
    #[cfg(feature = "tape")]
    pub(crate) fn text(&self) -> std::string::String {
        std::string::ToString::to_string(self)
    }

    /// The C form: the text truncated (at a character boundary) to fit.
    pub(crate) fn to_c(self) -> floxlog_error {
        let mut what = [0 as c_char; FLOXLOG_WHAT_LEN];
        // Formatted straight into the array: no allocation (the codec-only
        // build has no allocator). The last byte stays the NUL.
        let mut t = Truncate {
            buf: &mut what[..FLOXLOG_WHAT_LEN - 1],
            at: 0,
        };
        let _ = fmt::write(&mut t, format_args!("{self}"));
        floxlog_error {
            code: self.code as u32,
            in_block: self.in_block.unwrap_or(0),
            offset: self.offset,
            needed: self.needed.unwrap_or(0),
            has_in_block: self.in_block.is_some() as u8,
            has_needed: self.needed.is_some() as u8,
            what,
        }
    }
}

/// The text for a person: `what`, or for a pointer fault a sentence naming
/// the argument and what is wrong with it.
impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arg = self.what;
        match self.ptr {
            None => f.write_str(arg),
            Some(PtrFault::Null) => write!(f, "`{arg}` is NULL"),
            Some(PtrFault::NullWithCount(n)) => write!(f, "`{arg}` is NULL with a count of {n}"),
            Some(PtrFault::Misaligned(a)) => {
                write!(
                    f,
                    "`{arg}` is misaligned: it must be a multiple of {a} bytes"
                )
            }
            Some(PtrFault::TooLong(n)) => {
                write!(f, "`{arg}` with a count of {n} passes isize::MAX bytes")
            }
        }
    }
}

/// A `fmt::Write` into a fixed array that keeps what fits, cut at a
/// character boundary.
struct Truncate<'b> {
    buf: &'b mut [c_char],
    at: usize,
}

impl fmt::Write for Truncate<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut n = s.len().min(self.buf.len() - self.at);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        for (d, b) in self.buf[self.at..].iter_mut().zip(&s.as_bytes()[..n]) {
            *d = *b as c_char;
        }
        // Once something was cut, later pieces are dropped too: the text
        // stays a prefix of the whole.
        self.at = if n < s.len() {
            self.buf.len()
        } else {
            self.at + n
        };
        Ok(())
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail {
            code: floxlog_result::from_kind(e.kind),
            offset: e.offset,
            in_block: e.in_block,
            needed: e.needed,
            what: e.what,
            ptr: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    #[test]
    fn core_codes_use_the_core_texts() {
        let mut core_codes = 0;
        for (i, c) in floxlog_result::ALL.iter().enumerate() {
            let p = floxlog_result::c_name(*c as u32);
            assert_eq!(p, C_NAMES[i].as_ptr() as *const c_char);
            // SAFETY: C_NAMES entries are NUL-terminated (compile-time check).
            let c_name = unsafe { CStr::from_ptr(p) }.to_str().unwrap();
            assert_eq!(c_name, c.name());
            if let Core(k) = c.text() {
                core_codes += 1;
                assert_eq!(floxlog_result::from_kind(k), *c);
                assert_eq!(c_name, k.as_str());
                assert_eq!(c.description(), k.description());
            }
        }
        // Every core kind has its own code.
        assert_eq!(core_codes, ErrorKind::ALL.len());
        // SAFETY: a static C string.
        let unknown = unsafe { CStr::from_ptr(floxlog_result::c_name(12345)) };
        assert_eq!(unknown, c"unknown");
    }
}
