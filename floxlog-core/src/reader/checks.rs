//! Checks the cursor makes between frames: where the frames end in a
//! journal writer's zero tail, CRCs checked a run ahead, a block's event
//! count against its frames.

use crate::error::{Error, ErrorKind};
use crate::frame::{crc_run, FrameHeader};

/// The `what` of the `Truncated` error that ends the frames of a segment
/// at a frame position whose `size` field is 0 followed by zeros to the end
/// of the data: the pre-allocated tail of a journal writer's unfinished
/// segment (where a writer killed while appending may have left one frame
/// written but for its size, which is dropped with the zeros).
pub const ZERO_TAIL: &str =
    "the frames end in zero bytes to the end of the data (a journal writer's pre-allocated tail)";

/// Most bytes a frame left unpublished by a killed journal writer may span
/// before the zeros (its payload was written, its size not): non-zero
/// bytes further on are damage. 64 KiB covers every trade, quote and pool
/// state and books of up to 2000 levels a side.
const UNPUBLISHED_MAX: usize = 64 << 10;

/// At a frame position `at` (bytes `rest` to the end of the frame area)
/// where the read stopped: the error that says the frames end there in a
/// journal's zero tail, if they do. The `size` field must be 0 and what
/// follows zeros, but for one frame written all but its size in the first
/// [`UNPUBLISHED_MAX`] bytes (its other header fields as the encoder
/// writes them, or still zero). When
/// tailing, a 0 size alone is the writer not being done yet (the rest is
/// not scanned).
#[cold]
pub(super) fn zero_tail(rest: &[u8], at: u64, tail: bool) -> Option<Error> {
    if rest.len() < 4 || rest[..4] != [0; 4] {
        return None;
    }
    let truncated = || Some(Error::new(ErrorKind::Truncated, at, ZERO_TAIL));
    if tail {
        return truncated();
    }
    match rest.iter().rposition(|&b| b != 0) {
        None => truncated(),
        Some(last) => {
            // The encoder writes the payload, then the rest of the header:
            // a writer killed in between leaves those fields still zero.
            let h = FrameHeader::parse(rest, at).ok()?;
            let unpublished = matches!(h.rec_version, 0 | crate::consts::RECORD_VERSION)
                && h.flags == 0
                && (h.frame_type == 0 || crate::frame::is_known_type(h.frame_type))
                && last < FrameHeader::LEN + UNPUBLISHED_MAX;
            unpublished.then(|| Error::new(ErrorKind::Truncated, at, ZERO_TAIL))
        }
    }
}

/// Whether the frame at `at` of `area` still needs its own CRC check:
/// false inside the run [`crc_run`] last checked ahead (`crc_ok` is where
/// that run ends); past it, checks the next run first.
#[inline(always)]
pub(super) fn crc_pending(crc_ok: &mut usize, area: &[u8], at: usize) -> bool {
    at >= *crc_ok && check_ahead(crc_ok, area, at)
}

/// The out-of-line part of [`crc_pending`]: once per [`crc_run`].
#[inline(never)]
fn check_ahead(crc_ok: &mut usize, area: &[u8], at: usize) -> bool {
    *crc_ok = at + crc_run(&area[at..]);
    *crc_ok == at
}

/// A block whose `event_count` disagrees with the frames it holds.
#[cold]
pub(super) fn count_mismatch(block_offset: usize) -> Error {
    Error::new(
        ErrorKind::MalformedRecord,
        block_offset as u64,
        "block event_count does not match the frames it holds",
    )
}
