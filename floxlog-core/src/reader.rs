//! The segment reader: a validated header over a byte slice (a mapped file)
//! and a cursor that yields events in file order.
//!
//! Uncompressed events are views into the slice. LZ4 blocks are decoded one
//! at a time into a scratch buffer the caller provides, and their events are
//! views into it; a block larger than the scratch is an error
//! (`BufferTooSmall`, with the size needed), never an allocation.
//!
//! The cursor stops at the first problem: it yields every good event before
//! it, then the error (kind and byte offset), then nothing.

use crate::block::BlockHeader;
use crate::consts::MAGIC_BLOCK;
use crate::consts::MAGIC_INDEX;
use crate::crc32::crc32;
use crate::error::{Error, ErrorKind, Result};
use crate::event::{Event, UnknownTypes};
use crate::frame::{check_frame, check_header, Checked, FrameHeader, RawFrame};
use crate::index::{Index, IndexEntry, IndexHeader};
use crate::le::u32_at;
use crate::segment_header::{flags, SegmentHeader};

/// Reader settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Check every frame's CRC32 (default true).
    pub verify_crc: bool,
    /// Unknown frame types: error (default) or skip by size.
    pub unknown_types: UnknownTypes,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_crc: true,
            unknown_types: UnknownTypes::Reject,
        }
    }
}

/// A segment over its bytes, with a validated header.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a> {
    data: &'a [u8],
    header: SegmentHeader,
    frames_end: usize,
    /// HasIndex is set but `index_offset` does not lead to a trailer: the
    /// reader then recognises the trailer where the frames stop.
    lost_index: bool,
}

impl<'a> Segment<'a> {
    /// Validates the header (see [`SegmentHeader::parse`]) and works out
    /// where the frame area ends: at `index_offset` when the header flags an
    /// index and an `INDX` trailer starts there, otherwise at the end of the
    /// data (so a bad index never shortens a sequential read).
    pub fn parse(data: &'a [u8]) -> Result<Segment<'a>> {
        let header = SegmentHeader::parse(data)?;
        let mut frames_end = data.len();
        let mut lost_index = header.has(flags::HAS_INDEX);
        if lost_index {
            let off = header.index_offset;
            if off >= SegmentHeader::LEN as u64
                && off <= data.len() as u64
                && data.len() as u64 - off >= 4
                && u32_at(data, off as usize) == MAGIC_INDEX
            {
                frames_end = off as usize;
                lost_index = false;
            }
        }
        Ok(Segment {
            data,
            header,
            frames_end,
            lost_index,
        })
    }

    /// Whether the header flags an index that `index_offset` does not lead
    /// to (the index is then reported as bad, but reading is unaffected).
    pub fn index_lost(&self) -> bool {
        self.lost_index
    }

    /// The segment header.
    pub fn header(&self) -> &SegmentHeader {
        &self.header
    }

    /// The bytes the segment was parsed from.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// End of the frame (or block) area.
    pub fn frames_end(&self) -> u64 {
        self.frames_end as u64
    }

    /// Whether the frame stream is LZ4 blocks.
    pub fn is_compressed(&self) -> bool {
        self.header.has(flags::COMPRESSED)
    }

    /// The index trailer, validated (`Ok(None)` without HasIndex). Its
    /// errors never affect [`Segment::reader`].
    pub fn index(&self) -> Result<Option<Index<'a>>> {
        Index::parse(self.data, &self.header)
    }

    /// A cursor over the events. `scratch` receives decompressed LZ4 blocks
    /// and may be empty for uncompressed segments.
    pub fn reader<'s>(&self, opts: ReadOptions, scratch: &'s mut [u8]) -> Reader<'a, 's> {
        Reader {
            data: self.data,
            end: self.frames_end,
            pos: SegmentHeader::LEN,
            compressed: self.is_compressed(),
            lost_index: self.lost_index,
            opts,
            scratch,
            blk: None,
            done: false,
            events: 0,
            skip_before: None,
            last: Position::default(),
        }
    }
}

/// Where an event (or error) is in the segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// The frame header's offset, or for compressed segments the block
    /// header's offset.
    pub offset: u64,
    /// For compressed segments, the frame's offset inside the decompressed
    /// block.
    pub in_block: Option<u32>,
}

/// One event as read, with its raw frame.
#[derive(Clone, Copy, Debug)]
pub struct Item<'x> {
    /// The decoded event (views into the segment or the scratch).
    pub event: Event<'x>,
    /// The frame it came from, byte for byte.
    pub frame: RawFrame<'x>,
    /// Where the frame is.
    pub position: Position,
}

#[derive(Clone, Copy, Debug)]
struct BlockState {
    offset: usize,
    len: usize,
    pos: usize,
    expected: u16,
    seen: u32,
}

/// Cursor over a segment's events; see the module docs.
pub struct Reader<'a, 's> {
    data: &'a [u8],
    end: usize,
    pos: usize,
    compressed: bool,
    lost_index: bool,
    opts: ReadOptions,
    scratch: &'s mut [u8],
    blk: Option<BlockState>,
    done: bool,
    events: u64,
    skip_before: Option<i64>,
    last: Position,
}

impl<'a, 's> Reader<'a, 's> {
    /// Events yielded so far.
    pub fn events_read(&self) -> u64 {
        self.events
    }

    /// Position of the last event yielded.
    pub fn position(&self) -> Position {
        self.last
    }

    /// Offset of the next frame or block header the cursor will read in the
    /// segment: after an error, where the damage starts; after the last
    /// event, the end of the frame area. Events of the current block, if
    /// any, come before it.
    pub fn next_offset(&self) -> u64 {
        self.blk.map_or(self.pos, |b| b.offset) as u64
    }

    /// Whether the cursor has ended (end of data or an error).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Repositions before the first event with `exchange_ts_ns >= t`, using
    /// the index entry [`Index::seek`] picks (or the first frame without
    /// one), then skipping earlier events as they are read. Clears a
    /// previous error.
    pub fn seek(&mut self, index: Option<&Index<'_>>, t: i64) {
        let start = index
            .and_then(|ix| ix.seek(t))
            .map_or(SegmentHeader::LEN as u64, |e| e.file_offset);
        // Index::parse checked entries lie in [64, index_offset).
        self.pos = (start as usize).clamp(SegmentHeader::LEN, self.end.max(SegmentHeader::LEN));
        self.blk = None;
        self.done = false;
        self.skip_before = Some(t);
    }

    /// The next event, `Ok(None)` at the end, or the error that ends the
    /// read (after which it returns `Ok(None)`).
    #[inline(always)]
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>> {
        if self.done {
            return Ok(None);
        }
        if self.compressed {
            return Ok(self.next_compressed()?.map(|it| it.event));
        }
        Ok(self.next_plain()?.map(|(ev, _, _)| ev))
    }

    /// The next event with its raw frame and position.
    #[inline]
    pub fn next_item(&mut self) -> Result<Option<Item<'_>>> {
        if self.done {
            return Ok(None);
        }
        if self.compressed {
            return self.next_compressed();
        }
        let data: &'a [u8] = self.data;
        Ok(self.next_plain()?.map(|(event, at, n)| Item {
            event,
            frame: raw_frame(&data[at..at + n]),
            position: Position {
                offset: at as u64,
                in_block: None,
            },
        }))
    }

    /// Uncompressed: events are views into `data`, decoded once. Returns
    /// the event, its frame offset and length.
    #[inline(always)]
    fn next_plain(&mut self) -> Result<Option<(Event<'a>, usize, usize)>> {
        let data: &'a [u8] = self.data;
        loop {
            if self.pos >= self.end || self.at_lost_trailer() {
                self.done = true;
                return Ok(None);
            }
            let at = self.pos;
            let checked = match check_frame(
                &data[at..self.end],
                at as u64,
                self.opts.verify_crc,
                self.opts.unknown_types,
            ) {
                Ok(c) => c,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            match checked {
                Checked::Event(event, n) => {
                    self.pos = at + n;
                    if skip(&mut self.skip_before, event.exchange_ts_ns()) {
                        continue;
                    }
                    self.events += 1;
                    self.last = Position {
                        offset: at as u64,
                        in_block: None,
                    };
                    return Ok(Some((event, at, n)));
                }
                Checked::Skipped(n) => self.pos = at + n,
            }
        }
    }

    /// Compressed: find the next frame (loading blocks as needed), then
    /// decode it from the scratch. Inlined so that the event is built in
    /// the caller's frame: returning it from an out-of-line call costs more
    /// than decoding it (the finding loop below stays out of line).
    #[inline(always)]
    fn next_compressed(&mut self) -> Result<Option<Item<'_>>> {
        // Fast path: the next frame of the current block, valid, of a known
        // type, with no seek pending. Anything else (block ends, errors,
        // skips) goes through advance_compressed, which checks it again
        // and reports it.
        let mut found = None;
        if let (Some(b), None) = (&mut self.blk, self.skip_before) {
            if b.pos < b.len {
                let at = b.pos;
                if let Ok(Some((_, n))) = check_header(
                    &self.scratch[at..b.len],
                    b.offset as u64,
                    self.opts.verify_crc,
                    self.opts.unknown_types,
                ) {
                    b.pos = at + n;
                    b.seen += 1;
                    let position = Position {
                        offset: b.offset as u64,
                        in_block: Some(at as u32),
                    };
                    found = Some((position, at, n));
                }
            }
        }
        let found = match found {
            Some(f) => Ok(Some(f)),
            None => self.advance_compressed(),
        };
        let (position, start, len) = match found {
            Ok(Some(found)) => found,
            Ok(None) => {
                self.done = true;
                return Ok(None);
            }
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        self.events += 1;
        self.last = position;
        let bytes = &self.scratch[start..start + len];
        let frame = raw_frame(bytes);
        match Event::decode(frame.header.frame_type, frame.payload) {
            Ok(event) => Ok(Some(Item {
                event,
                frame,
                position,
            })),
            Err(what) => {
                self.done = true;
                let at = position.in_block.unwrap_or(0);
                Err(Error::new(ErrorKind::MalformedRecord, position.offset, what).in_block(at))
            }
        }
    }

    /// Finds the next event of a compressed segment: (position, start in
    /// the scratch, frame length). Checks everything but the record layout,
    /// which the caller's single decode checks (skipped events are decoded
    /// here so that damage is never skipped silently).
    #[inline(never)]
    fn advance_compressed(&mut self) -> Result<Option<(Position, usize, usize)>> {
        loop {
            if let Some(mut b) = self.blk {
                if b.pos < b.len {
                    let at = b.pos;
                    let frame = &self.scratch[at..b.len];
                    let checked = check_header(
                        frame,
                        b.offset as u64,
                        self.opts.verify_crc,
                        self.opts.unknown_types,
                    )
                    .map_err(|e| e.in_block(at as u32))?;
                    b.seen += 1;
                    let position = Position {
                        offset: b.offset as u64,
                        in_block: Some(at as u32),
                    };
                    let Some((h, n)) = checked else {
                        let size = FrameHeader::parse(frame).map_or(0, |h| h.size as usize);
                        b.pos = at + FrameHeader::LEN + size;
                        self.blk = Some(b);
                        continue;
                    };
                    b.pos = at + n;
                    self.blk = Some(b);
                    let payload = &frame[FrameHeader::LEN..n];
                    if self.skip_before.is_some() {
                        let ev = Event::decode(h.frame_type, payload).map_err(|what| {
                            Error::new(ErrorKind::MalformedRecord, position.offset, what)
                                .in_block(at as u32)
                        })?;
                        if skip(&mut self.skip_before, ev.exchange_ts_ns()) {
                            continue;
                        }
                    }
                    return Ok(Some((position, at, n)));
                }
                if b.seen != b.expected as u32 {
                    return Err(Error::new(
                        ErrorKind::MalformedRecord,
                        b.offset as u64,
                        "block event_count does not match the frames it holds",
                    ));
                }
                self.blk = None;
            }
            if self.pos >= self.end || self.at_lost_trailer() {
                return Ok(None);
            }
            self.load_block()?;
        }
    }

    /// Whether the bytes at `pos` are, to the end of the data, a complete
    /// index trailer with a valid CRC, when the header's `index_offset` did
    /// not lead to one. Only then does the frame area end early.
    #[inline]
    fn at_lost_trailer(&self) -> bool {
        self.lost_index && is_trailer(&self.data[self.pos..self.end])
    }

    /// Reads and decompresses the block at `pos` into the scratch.
    fn load_block(&mut self) -> Result<()> {
        let at = self.pos;
        let off = at as u64;
        let Some(h) = BlockHeader::parse(&self.data[at..self.end]) else {
            return Err(Error::new(
                ErrorKind::Truncated,
                off,
                "data ends inside a block header",
            ));
        };
        if h.magic != MAGIC_BLOCK {
            return Err(Error::new(
                ErrorKind::BadBlockMagic,
                off,
                "block magic is not FBLK",
            ));
        }
        let body_start = at + BlockHeader::LEN;
        let body_end = body_start as u64 + h.compressed_size as u64;
        if body_end > self.end as u64 {
            return Err(Error::new(
                ErrorKind::Truncated,
                off,
                "data ends inside a compressed block (compressed_size past the end)",
            )
            .needing(body_end));
        }
        let orig = h.original_size as usize;
        if orig > self.scratch.len() {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                off,
                "block original_size exceeds the decompression scratch",
            )
            .needing(orig as u64));
        }
        let body = &self.data[body_start..body_end as usize];
        decompress_exact(body, &mut self.scratch[..orig], off)?;
        self.pos = body_end as usize;
        self.blk = Some(BlockState {
            offset: at,
            len: orig,
            pos: 0,
            expected: h.event_count,
            seen: 0,
        });
        Ok(())
    }
}

#[cfg(feature = "lz4")]
fn decompress_exact(src: &[u8], dst: &mut [u8], off: u64) -> Result<()> {
    match lz4_flex::block::decompress_into(src, dst) {
        Ok(n) if n == dst.len() => Ok(()),
        Ok(_) => Err(Error::new(
            ErrorKind::DecompressionFailed,
            off,
            "LZ4 block decodes to fewer bytes than original_size",
        )),
        Err(_) => Err(Error::new(
            ErrorKind::DecompressionFailed,
            off,
            "LZ4 block data is invalid or decodes past original_size",
        )),
    }
}

#[cfg(not(feature = "lz4"))]
fn decompress_exact(_src: &[u8], _dst: &mut [u8], off: u64) -> Result<()> {
    Err(Error::new(
        ErrorKind::Lz4Unsupported,
        off,
        "compressed segment, and this build has no LZ4 support (feature `lz4`)",
    ))
}

/// Whether a pending `seek` skips an event at `ts`; the skip ends at the
/// first event it keeps.
#[inline]
fn skip(skip_before: &mut Option<i64>, ts: i64) -> bool {
    match *skip_before {
        Some(t) if ts < t => true,
        Some(_) => {
            *skip_before = None;
            false
        }
        None => false,
    }
}

/// Whether `b` is exactly one index trailer with a matching CRC.
fn is_trailer(b: &[u8]) -> bool {
    if b.len() < IndexHeader::LEN || u32_at(b, 0) != MAGIC_INDEX {
        return false;
    }
    let Some(h) = IndexHeader::parse(b) else {
        return false;
    };
    let n = h.entry_count as u64 * IndexEntry::LEN as u64;
    n == (b.len() - IndexHeader::LEN) as u64 && crc32(&b[IndexHeader::LEN..]) == h.crc32
}

/// Splits a frame already validated by `check_frame`.
#[inline]
fn raw_frame(bytes: &[u8]) -> RawFrame<'_> {
    RawFrame {
        header: FrameHeader::parse(bytes).unwrap_or_default(),
        payload: bytes.get(FrameHeader::LEN..).unwrap_or_default(),
    }
}
