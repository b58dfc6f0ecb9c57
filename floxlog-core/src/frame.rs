//! The 12-byte frame header, and standalone frame encode/decode for callers
//! that build their own streams.

use crate::consts::{frame_type, RECORD_VERSION};
use crate::crc32::{crc32, crc32_x4, LANES};
use crate::error::{Error, ErrorKind, Result};
use crate::event::{Event, Profile, UnknownTypes};
use crate::le::{put_u16, put_u32, u16_at, u32_at};

/// Byte offsets of the frame header fields.
pub mod field {
    /// `u32` payload bytes.
    pub const SIZE: usize = 0;
    /// `u32` CRC32 of the payload.
    pub const CRC32: usize = 4;
    /// `u8` record type.
    pub const TYPE: usize = 8;
    /// `u8` record layout version (1).
    pub const REC_VERSION: usize = 9;
    /// `u16` reserved, zero.
    pub const FLAGS: usize = 10;
}

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FrameHeader {
    /// Payload bytes after the header.
    pub size: u32,
    /// CRC32 of the payload.
    pub crc32: u32,
    /// Record type ([`frame_type`]).
    pub frame_type: u8,
    /// Record layout version.
    pub rec_version: u8,
    /// Reserved, zero.
    pub flags: u16,
}

impl FrameHeader {
    /// Encoded length.
    pub const LEN: usize = 12;

    /// Decodes the first 12 bytes of `b`, which starts at byte `at` of the
    /// segment (what errors report). `Truncated` (needing 12) if shorter.
    /// The fields are not validated: see [`decode_frame`] for the checks.
    #[inline]
    pub fn parse(b: &[u8], at: u64) -> Result<FrameHeader> {
        if b.len() < Self::LEN {
            return Err(
                Error::new(ErrorKind::Truncated, at, "data ends inside a frame header")
                    .needing(Self::LEN as u64),
            );
        }
        Ok(FrameHeader {
            size: u32_at(b, field::SIZE),
            crc32: u32_at(b, field::CRC32),
            frame_type: b[field::TYPE],
            rec_version: b[field::REC_VERSION],
            flags: u16_at(b, field::FLAGS),
        })
    }

    /// The header of a version-1 frame of `frame_type` carrying `payload`
    /// (its size and CRC32).
    #[inline]
    pub fn for_payload(frame_type: u8, payload: &[u8]) -> FrameHeader {
        FrameHeader {
            size: payload.len() as u32,
            crc32: crc32(payload),
            frame_type,
            rec_version: RECORD_VERSION,
            flags: 0,
        }
    }

    /// Encodes into `out[..12]`.
    #[inline]
    pub fn emit(&self, out: &mut [u8; 12]) {
        put_u32(out, field::SIZE, self.size);
        put_u32(out, field::CRC32, self.crc32);
        out[field::TYPE] = self.frame_type;
        out[field::REC_VERSION] = self.rec_version;
        put_u16(out, field::FLAGS, self.flags);
    }
}

/// Whether 1.0 (with docs/format-notes.md) defines a layout for this frame type.
pub const fn is_known_type(t: u8) -> bool {
    matches!(
        t,
        frame_type::TRADE
            | frame_type::BOOK_SNAPSHOT
            | frame_type::BOOK_DELTA
            | frame_type::OPTION_QUOTE
            | frame_type::POOL_STATE
    )
}

/// One frame as found in a stream: its header, payload, and where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawFrame<'a> {
    /// The decoded header.
    pub header: FrameHeader,
    /// The payload bytes (`header.size` of them).
    pub payload: &'a [u8],
}

impl<'a> RawFrame<'a> {
    /// Total encoded length (header + payload).
    pub fn len(&self) -> usize {
        FrameHeader::LEN + self.payload.len()
    }

    /// Never empty: a frame has at least its header.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Decodes the payload as an event; errors report offset `at` (the
    /// frame's).
    pub fn event(&self, at: u64) -> Result<Event<'a>> {
        Event::decode(self.header.frame_type, self.payload, at)
    }

    /// Cuts encoded frame bytes (header then payload) that a check has
    /// already validated.
    #[inline]
    pub(crate) fn from_checked(bytes: &'a [u8]) -> RawFrame<'a> {
        RawFrame {
            header: FrameHeader::parse(bytes, 0).unwrap_or_default(),
            payload: bytes.get(FrameHeader::LEN..).unwrap_or_default(),
        }
    }
}

/// Writes one frame into `dst` (exactly 12 + payload bytes): `fill` writes
/// the payload, then the header is made from it. The one place frames are
/// assembled, for [`encode_frame`] and the segment writer.
///
/// With `seal` false the CRC field is left 0: the caller computes it later
/// with other frames' in one [`seal_frames`] call.
#[inline(always)]
pub(crate) fn emit_frame(frame_type: u8, dst: &mut [u8], seal: bool, fill: impl FnOnce(&mut [u8])) {
    emit_frame_sized(frame_type, dst, seal, true, fill)
}

/// [`emit_frame`], leaving the `size` field as it is when `size` is false:
/// a journal publishes a frame by writing that field last (see
/// [`crate::SegmentWriter::defer_size`]).
#[inline(always)]
pub(crate) fn emit_frame_sized(
    frame_type: u8,
    dst: &mut [u8],
    seal: bool,
    size: bool,
    fill: impl FnOnce(&mut [u8]),
) {
    let (head, payload) = dst.split_at_mut(FrameHeader::LEN);
    fill(payload);
    let mut hb = [0u8; FrameHeader::LEN];
    let mut h = FrameHeader {
        size: payload.len() as u32,
        crc32: 0,
        frame_type,
        rec_version: RECORD_VERSION,
        flags: 0,
    };
    if seal {
        h.crc32 = crc32(payload);
    }
    h.emit(&mut hb);
    if size {
        head.copy_from_slice(&hb);
    } else {
        head[field::CRC32..].copy_from_slice(&hb[field::CRC32..]);
    }
}

/// Fills in the CRC32 of frames that [`emit_frame`] left unsealed, given
/// as (offset in `buf`, payload length) — the length is passed, not read
/// from the `size` field, which a journal leaves 0 until it publishes the
/// frame —, [`LANES`] at a time in one interleaved computation. A frame
/// that does not lie whole in `buf` is left as it is (the writer only
/// passes frames it emitted).
#[inline]
pub(crate) fn seal_frames(buf: &mut [u8], frames: &[(usize, usize)]) {
    for group in frames.chunks(LANES) {
        let mut spans = [None; LANES];
        for (span, &(a, len)) in spans.iter_mut().zip(group) {
            let Some(start) = a.checked_add(FrameHeader::LEN) else {
                continue;
            };
            *span = start
                .checked_add(len)
                .filter(|&e| e <= buf.len())
                .map(|end| (start, end));
        }
        let view: &[u8] = buf;
        let crcs = crc32_x4(spans.map(|sp| sp.and_then(|(s, e)| view.get(s..e)).unwrap_or(&[])));
        for ((&(a, _), sp), c) in group.iter().zip(spans).zip(crcs) {
            if sp.is_some() {
                if let Some(f) = buf.get_mut(a..) {
                    put_u32(f, field::CRC32, c);
                }
            }
        }
    }
}

/// What a frame check found: `T` for a frame of a known type that passed
/// every check (with its encoded length), or an unknown type skipped on
/// request (its encoded length).
pub(crate) enum Checked<T> {
    /// A known frame: what was found, and the frame's encoded length.
    Event(T, usize),
    /// A frame of an unknown type, skipped on request; its encoded length.
    Skipped(usize),
}

/// Checks the frame header at the start of `b` and its payload's presence
/// and CRC, without decoding the record. Returns the header and the frame's
/// encoded length, or the length of an unknown type skipped on request.
///
/// `offset` is what errors report. Checks, in order: header and payload
/// present (`Truncated`), rec_version, flags, CRC (when `verify_crc`), type.
#[inline(always)]
pub(crate) fn check_header(
    b: &[u8],
    offset: u64,
    verify_crc: bool,
    unknown: UnknownTypes,
) -> Result<Checked<(FrameHeader, usize)>> {
    let h = FrameHeader::parse(b, offset)?;
    let end = FrameHeader::LEN as u64 + h.size as u64;
    if end > b.len() as u64 {
        return Err(Error::new(
            ErrorKind::Truncated,
            offset,
            "data ends inside a frame payload (size field past the end)",
        )
        .needing(end));
    }
    let total = end as usize;
    if h.rec_version != RECORD_VERSION {
        return Err(Error::new(
            ErrorKind::UnsupportedRecordVersion,
            offset,
            "frame rec_version is not 1",
        ));
    }
    if h.flags != 0 {
        return Err(Error::new(
            ErrorKind::FrameFlagsNonzero,
            offset,
            "frame reserved flags are not zero",
        ));
    }
    if verify_crc && crc32(&b[FrameHeader::LEN..total]) != h.crc32 {
        return Err(Error::new(
            ErrorKind::CrcMismatch,
            offset,
            "frame payload does not match its CRC32",
        ));
    }
    if !is_known_type(h.frame_type) {
        return match unknown {
            UnknownTypes::Reject => Err(Error::new(
                ErrorKind::UnknownRecordType,
                offset,
                "frame type not defined by 1.0 (strict mode)",
            )),
            UnknownTypes::Skip => Ok(Checked::Skipped(total)),
        };
    }
    Ok(Checked::Event((h, total), total))
}

/// Checks the CRCs of up to [`LANES`] consecutive frames at the start of
/// `b` in one interleaved computation and returns where the leading run of
/// whole frames with a matching CRC ends (0: the first frame is not whole
/// or does not match). Readers skip the CRC check of frames inside that
/// run; the first frame after it is checked on its own, so every error is
/// still reported by [`check_header`], in order, at its frame.
// Out of line: once per LANES frames, and the reader's loop stays small.
#[inline(never)]
pub(crate) fn crc_run(b: &[u8]) -> usize {
    let mut lanes: [&[u8]; LANES] = [&[]; LANES];
    let mut want = [0u32; LANES];
    let mut ends = [0usize; LANES];
    let mut n = 0;
    let mut pos = 0usize;
    while n < LANES {
        let Some(h) = b.get(pos..).and_then(|r| FrameHeader::parse(r, 0).ok()) else {
            break;
        };
        let start = pos + FrameHeader::LEN;
        let Some(end) = start.checked_add(h.size as usize).filter(|&e| e <= b.len()) else {
            break;
        };
        lanes[n] = &b[start..end];
        want[n] = h.crc32;
        ends[n] = end;
        n += 1;
        pos = end;
    }
    if n == 0 {
        return 0;
    }
    let got = crc32_x4(lanes);
    let mut ok = 0;
    for k in 0..n {
        if got[k] != want[k] {
            break;
        }
        ok = ends[k];
    }
    ok
}

/// Validates the frame at the start of `b` and decodes its event: the
/// checks of [`check_header`], then the record's own layout
/// (`MalformedRecord`).
#[inline(always)]
pub(crate) fn check_frame(
    b: &[u8],
    offset: u64,
    verify_crc: bool,
    unknown: UnknownTypes,
) -> Result<Checked<Event<'_>>> {
    match check_header(b, offset, verify_crc, unknown)? {
        Checked::Event((h, total), _) => Ok(Checked::Event(
            Event::decode(h.frame_type, &b[FrameHeader::LEN..total], offset)?,
            total,
        )),
        Checked::Skipped(n) => Ok(Checked::Skipped(n)),
    }
}

/// Options of a standalone frame decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameOptions {
    /// Verify the payload CRC (default true).
    pub verify_crc: bool,
    /// Unknown frame types: error (default) or skip.
    pub unknown_types: UnknownTypes,
}

impl Default for FrameOptions {
    fn default() -> Self {
        FrameOptions {
            verify_crc: true,
            unknown_types: UnknownTypes::Reject,
        }
    }
}

/// Decodes one frame from the start of `b` with every check. Returns the
/// event (or `None` for a skipped unknown type) and the frame's encoded
/// length. Errors are at offset 0 (the start of `b`).
pub fn decode_frame(b: &[u8], opts: FrameOptions) -> Result<(Option<Event<'_>>, usize)> {
    match check_frame(b, 0, opts.verify_crc, opts.unknown_types)? {
        Checked::Event(ev, n) => Ok((Some(ev), n)),
        Checked::Skipped(n) => Ok((None, n)),
    }
}

/// Encodes `ev` as a complete frame (header + payload, CRC computed) at the
/// start of `out`; returns the bytes written. `BufferTooSmall` (with the
/// size needed) if `out` is short, `InvalidInput` if the event cannot be
/// encoded; `out` is untouched on error.
pub fn encode_frame(ev: &Event<'_>, profile: Profile, out: &mut [u8]) -> Result<usize> {
    ev.validate(profile)
        .map_err(|what| Error::new(ErrorKind::InvalidInput, 0, what))?;
    let payload_len = ev.payload_len();
    let total = FrameHeader::LEN + payload_len;
    if out.len() < total {
        return Err(Error::new(
            ErrorKind::BufferTooSmall,
            0,
            "output buffer shorter than the frame",
        )
        .needing(total as u64));
    }
    emit_frame(ev.frame_type(), &mut out[..total], true, |p| {
        ev.emit_payload(profile, p)
    });
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trade::Trade;

    /// A trade frame as the reference writes it: size 48, CRC, type 1,
    /// rec_version 1, flags 0, then the payload.
    #[test]
    fn frame_header_golden_bytes() {
        let h = FrameHeader {
            size: 48,
            crc32: 0x1234_5678,
            frame_type: frame_type::TRADE,
            rec_version: 1,
            flags: 0,
        };
        let mut b = [0u8; 12];
        h.emit(&mut b);
        assert_eq!(b, [48, 0, 0, 0, 0x78, 0x56, 0x34, 0x12, 1, 1, 0, 0]);
        assert_eq!(FrameHeader::parse(&b, 7), Ok(h));
        let e = FrameHeader::parse(&b[..11], 7).unwrap_err();
        assert_eq!(
            (e.kind, e.offset, e.needed),
            (ErrorKind::Truncated, 7, Some(12))
        );
    }

    #[test]
    fn encoded_frame_golden_bytes() {
        let t = Trade {
            exchange_ts_ns: 1,
            price_raw: 2,
            symbol_id: 3,
            ..Trade::default()
        };
        let mut out = [0u8; 60];
        let n = encode_frame(&Event::Trade(t), Profile::Reference, &mut out).unwrap();
        assert_eq!(n, 60);
        let mut payload = [0u8; 48];
        payload[0] = 1; // exchange_ts_ns
        payload[16] = 2; // price_raw
        payload[40] = 3; // symbol_id
        assert_eq!(&out[12..], &payload);
        let crc = crc32(&payload).to_le_bytes();
        assert_eq!(
            out[..12],
            [48, 0, 0, 0, crc[0], crc[1], crc[2], crc[3], 1, 1, 0, 0]
        );
        // CRC-32/ISO-HDLC check value.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let (ev, used) = decode_frame(&out, FrameOptions::default()).unwrap();
        assert_eq!((ev, used), (Some(Event::Trade(t)), 60));
    }
}
