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
//!
//! A cursor can start at any frame (or block) boundary a previous cursor
//! reported ([`Segment::reader_at`]), and can tail a segment a writer is
//! still appending to ([`ReadOptions::tail`]): re-map the file, resume at
//! [`Reader::next_offset`], and a half-written last frame or block is
//! [`Reader::needs_more`] rather than an error.

use crate::block::{Block, Blocks};
use crate::error::{Error, ErrorKind, Result};
use crate::event::Event;
use crate::frame::{check_frame, check_header, Checked, FrameHeader, RawFrame};
use crate::index::{is_trailer, starts_trailer, Index};
use crate::segment_header::{flags, SegmentHeader};

mod checks;
mod options;
mod trades;
pub use checks::ZERO_TAIL;
use checks::{count_mismatch, crc_pending, zero_tail};
pub use options::ReadOptions;
pub use trades::{TradeBatch, TradeColumns, TradeSink, TradeStop};

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
                && starts_trailer(&data[off as usize..])
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

    /// The segment with its frame area ending at `end` when that is before
    /// its own end, and no bytes past it: a cursor made from it reads the
    /// frames (or blocks) up to `end` only, and one that runs over `end`
    /// stops as data cut short (for bytes fetched up to there; see
    /// `floxlog::tape::read::Want`). The index is not read from it.
    pub fn frames_until(&self, end: u64) -> Segment<'a> {
        let end = usize::try_from(end).map_or(self.frames_end, |e| e.min(self.frames_end));
        Segment {
            data: self.data.get(..end).unwrap_or(self.data),
            frames_end: end,
            ..*self
        }
    }

    /// Where the frame (or block) whose header is at `pos` ends, as its
    /// header says (whether or not the segment holds that many bytes);
    /// `None` when no whole header is there.
    pub fn end_of_frame_at(&self, pos: u64) -> Option<u64> {
        let frames = self.data.get(..self.frames_end).unwrap_or(self.data);
        crate::index::next_header(frames, pos, self.is_compressed())
    }

    /// Whether the frame stream is LZ4 blocks.
    pub fn is_compressed(&self) -> bool {
        self.header.has(flags::COMPRESSED)
    }

    /// The index trailer, validated and proven ([`Index::parse`], then
    /// [`Index::prove`]: every entry is a frame or block boundary); `Ok(None)`
    /// without HasIndex. Its errors never affect [`Segment::reader`]. The
    /// proof reads every frame header once; [`Segment::index_unproven`]
    /// skips it.
    pub fn index(&self) -> Result<Option<Index<'a>>> {
        let Some(mut ix) = self.index_unproven()? else {
            return Ok(None);
        };
        ix.prove(&self.data[..self.frames_end], self.is_compressed())?;
        Ok(Some(ix))
    }

    /// Whether hopping from the frame (or block) header at `from` to the
    /// next, reading only headers as [`Index::prove`] does, lands exactly on
    /// `to`. With `from` on the chain of the segment's frames (the first
    /// frame is), `to` is then on it too: a boundary no frame crosses. A
    /// CRC-valid frame hidden in another's payload is never reached.
    pub fn chain_reaches(&self, from: u64, to: u64) -> bool {
        let frames = &self.data[..self.frames_end];
        let compressed = self.is_compressed();
        let mut pos = from;
        while pos < to {
            match crate::index::next_header(frames, pos, compressed) {
                Some(p) => pos = p,
                None => return false,
            }
        }
        pos == to
    }

    /// The index trailer, structurally validated ([`Index::parse`]) but not
    /// proven: [`crate::Reader::seek`] ignores it until it is proven or
    /// trusted.
    pub fn index_unproven(&self) -> Result<Option<Index<'a>>> {
        Index::parse(self.data, &self.header)
    }

    /// The compressed blocks from `offset` (a block boundary) to the end of
    /// the frame area, without decompressing them.
    pub fn blocks_from(&self, offset: u64) -> Blocks<'a> {
        Blocks::new(self.data, offset, self.frames_end as u64)
    }

    /// The compressed blocks of the segment (empty walk if uncompressed).
    pub fn blocks(&self) -> Blocks<'a> {
        let start = if self.is_compressed() {
            SegmentHeader::LEN as u64
        } else {
            self.frames_end as u64
        };
        self.blocks_from(start)
    }

    /// Scratch a reader needs for the blocks from `offset` on: the largest
    /// [`crate::BlockHeader::scratch_needed`] among the block headers up to
    /// the first damaged one (0 for an uncompressed segment). Never more
    /// than [`crate::block::MAX_SCRATCH`], so a damaged header never asks
    /// for gigabytes; such a block then stops the read with
    /// `BufferTooSmall`.
    pub fn scratch_len_from(&self, offset: u64) -> usize {
        if !self.is_compressed() {
            return 0;
        }
        self.blocks_from(offset)
            .map_while(|b| b.ok())
            .map(|b| b.header.scratch_needed())
            .max()
            .unwrap_or(0)
    }

    /// [`Segment::scratch_len_from`] the first block.
    pub fn scratch_len(&self) -> usize {
        self.scratch_len_from(SegmentHeader::LEN as u64)
    }

    /// A cursor over the events. `scratch` receives decompressed LZ4 blocks
    /// ([`Segment::scratch_len`] bytes) and may be empty for uncompressed
    /// segments.
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
            need_more: false,
            events: 0,
            skip_before: None,
            last: Position::default(),
            crc_ok: 0,
        }
    }

    /// A cursor that starts at byte `offset`: a frame (or, compressed, a
    /// block) boundary that a previous cursor's [`Reader::next_offset`]
    /// reported, for instance before the file grew. The offset must lie in
    /// the frame area (`InvalidInput` otherwise); that a frame starts there
    /// is the caller's promise (a wrong offset gives an error or, at worst,
    /// a CRC-valid frame that sits inside another frame's payload).
    pub fn reader_at<'s>(
        &self,
        offset: u64,
        opts: ReadOptions,
        scratch: &'s mut [u8],
    ) -> Result<Reader<'a, 's>> {
        if offset < SegmentHeader::LEN as u64 || offset > self.frames_end as u64 {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                offset,
                "resume offset outside the frame area",
            ));
        }
        let mut r = self.reader(opts, scratch);
        r.pos = offset as usize;
        Ok(r)
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
    /// Frames starting before this scratch offset had their CRC checked
    /// ahead (see [`crc_run`](crate::frame::crc_run)).
    crc_ok: usize,
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
    need_more: bool,
    events: u64,
    skip_before: Option<i64>,
    last: Position,
    /// Frames starting before this offset had their CRC checked ahead, with
    /// the next few frames' (see [`crc_run`](crate::frame::crc_run)).
    crc_ok: usize,
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

    /// Leaves the current LZ4 block once all its frames have been read, so
    /// that [`Reader::next_offset`] is the next block and a cursor made
    /// there by [`Segment::reader_at`] carries on exactly. Returns whether
    /// the cursor is now between blocks (always, uncompressed); `false`
    /// while frames of the block remain. Checks the block's `event_count`
    /// as the next read would (`MalformedRecord`, ending the read).
    pub fn end_block(&mut self) -> Result<bool> {
        let Some(b) = self.blk else {
            return Ok(true);
        };
        if b.pos < b.len {
            return Ok(false);
        }
        if b.seen != b.expected as u32 {
            self.done = true;
            return Err(count_mismatch(b.offset));
        }
        self.blk = None;
        Ok(true)
    }

    /// Ends the frame area at `end` (when before its end): the read stops
    /// there as at the end of the segment. `end` must be a frame (or block)
    /// boundary, as [`Segment::reader_at`] takes, so that a range
    /// `[start, end)` of a segment read on its own thread gives exactly what
    /// a read of the whole segment gives there (no frame crosses `end`).
    pub fn limit(&mut self, end: u64) {
        if end < self.end as u64 {
            self.end = end as usize;
        }
    }

    /// Tail mode: whether the read ended at a frame or block the writer has
    /// not finished yet. Resume at [`Reader::next_offset`] once the data
    /// has grown.
    pub fn needs_more(&self) -> bool {
        self.need_more
    }

    /// Repositions before the first event with `exchange_ts_ns >= t`, using
    /// the index entry [`Index::seek`] picks if the index is proven (see
    /// [`Index::is_proven`]; otherwise, or without one, the first frame),
    /// then skipping earlier events as they are read. Clears a previous
    /// error.
    pub fn seek(&mut self, index: Option<&Index<'_>>, t: i64) {
        let start = index
            .filter(|ix| ix.is_proven())
            .and_then(|ix| ix.seek(t))
            .map_or(SegmentHeader::LEN as u64, |e| e.file_offset);
        // Index::parse checked entries lie in [64, index_offset).
        self.pos = (start as usize).clamp(SegmentHeader::LEN, self.end.max(SegmentHeader::LEN));
        self.blk = None;
        self.done = false;
        self.need_more = false;
        self.skip_before = Some(t);
        self.crc_ok = 0;
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

    /// The next event with its position: what [`Reader::next_item`] gives
    /// but the raw frame, and cheaper to move out of the result.
    #[inline(always)]
    pub fn next_event_at(&mut self) -> Result<Option<(Event<'_>, Position)>> {
        if self.done {
            return Ok(None);
        }
        if self.compressed {
            return Ok(self.next_compressed()?.map(|it| (it.event, it.position)));
        }
        Ok(self
            .next_plain()?
            .map(|(ev, at, _)| (ev, plain_position(at))))
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
            frame: RawFrame::from_checked(&data[at..at + n]),
            position: plain_position(at),
        }))
    }

    /// The event the cursor returned last, decoded again from where it is
    /// (the segment bytes, or the block scratch), for a caller that could
    /// not keep it: valid until the next call that reads, `None` before the
    /// first event. The CRC is not checked again.
    pub fn last_item(&self) -> Option<Item<'_>> {
        if self.events == 0 {
            return None;
        }
        let p = self.last;
        let area: &[u8] = match p.in_block {
            Some(at) => self.scratch.get(at as usize..)?,
            None => self.data.get(p.offset as usize..self.end)?,
        };
        let h = FrameHeader::parse(area, p.offset).ok()?;
        let bytes = area.get(..FrameHeader::LEN.checked_add(h.size as usize)?)?;
        let frame = RawFrame::from_checked(bytes);
        let event = frame.event(p.offset).ok()?;
        Some(Item {
            event,
            frame,
            position: p,
        })
    }

    /// Ends the cursor, giving back the scratch it was made with.
    pub fn into_scratch(self) -> &'s mut [u8] {
        self.scratch
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
            if self.opts.tail && self.unpublished(at) {
                self.done = true;
                self.need_more = true;
                return Ok(None);
            }
            let verify =
                self.opts.verify_crc && crc_pending(&mut self.crc_ok, &data[..self.end], at);
            let checked = match check_frame(
                &data[at..self.end],
                at as u64,
                verify,
                self.opts.unknown_types,
            ) {
                Ok(c) => c,
                Err(e) => {
                    self.done = true;
                    return self.stop(e);
                }
            };
            match checked {
                Checked::Event(event, n) => {
                    self.pos = at + n;
                    if skip(&mut self.skip_before, event.exchange_ts_ns()) {
                        continue;
                    }
                    self.events += 1;
                    self.last = plain_position(at);
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
                let block = &self.scratch[..b.len];
                let verify = self.opts.verify_crc && crc_pending(&mut b.crc_ok, block, at);
                if let Ok(Checked::Event(_, n)) = check_header(
                    &block[at..],
                    b.offset as u64,
                    verify,
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
                return self.stop(e);
            }
        };
        self.events += 1;
        self.last = position;
        let bytes = &self.scratch[start..start + len];
        let frame = RawFrame::from_checked(bytes);
        match frame.event(position.offset) {
            Ok(event) => Ok(Some(Item {
                event,
                frame,
                position,
            })),
            Err(e) => {
                self.done = true;
                Err(e.in_block(position.in_block.unwrap_or(0)))
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
                    let block = &self.scratch[..b.len];
                    let verify = self.opts.verify_crc && crc_pending(&mut b.crc_ok, block, at);
                    let frame = &block[at..];
                    let checked =
                        check_header(frame, b.offset as u64, verify, self.opts.unknown_types)
                            .map_err(|e| e.in_block(at as u32))?;
                    b.seen += 1;
                    let position = Position {
                        offset: b.offset as u64,
                        in_block: Some(at as u32),
                    };
                    let (h, n) = match checked {
                        Checked::Event(hn, _) => hn,
                        Checked::Skipped(n) => {
                            b.pos = at + n;
                            self.blk = Some(b);
                            continue;
                        }
                    };
                    b.pos = at + n;
                    self.blk = Some(b);
                    if self.skip_before.is_some() {
                        let payload = &frame[crate::frame::FrameHeader::LEN..n];
                        let ev = Event::decode(h.frame_type, payload, position.offset)
                            .map_err(|e| e.in_block(at as u32))?;
                        if skip(&mut self.skip_before, ev.exchange_ts_ns()) {
                            continue;
                        }
                    }
                    return Ok(Some((position, at, n)));
                }
                if b.seen != b.expected as u32 {
                    return Err(count_mismatch(b.offset));
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

    /// Tailing: whether the frame at `at` is not published yet. Its `size`
    /// is read once, before the rest: a journal writer stores it last
    /// (with release ordering), so 0 is "nothing yet" whatever the other
    /// bytes read, and any other value means the frame is whole (the
    /// acquire fence keeps the reads of the rest after this one). Judging
    /// by a second read of the size after the checks of the rest failed
    /// would take a frame published between the two reads for damage.
    #[inline(always)]
    fn unpublished(&self, at: usize) -> bool {
        let zero = self.data[..self.end]
            .get(at..at.saturating_add(4))
            .is_some_and(|s| s == [0; 4]);
        core::sync::atomic::fence(core::sync::atomic::Ordering::Acquire);
        zero
    }

    /// Ends the read on `e`, unless tailing and `e` is the writer not being
    /// done yet: data ending inside the frame or block at `pos`, or an
    /// index trailer starting there (written just before the final header).
    #[cold]
    fn stop<T>(&mut self, e: Error) -> Result<Option<T>> {
        let at = self.next_offset();
        let e = match self.blk.is_none() && !self.compressed && e.offset == at {
            true => zero_tail(&self.data[at as usize..self.end], at, self.opts.tail).unwrap_or(e),
            false => e,
        };
        let unfinished = e.kind == ErrorKind::Truncated && e.offset == at
            || starts_trailer(&self.data[at as usize..self.end]);
        if self.opts.tail && self.blk.is_none() && unfinished {
            self.need_more = true;
            return Ok(None);
        }
        Err(e)
    }

    /// Reads and decompresses the block at `pos` into the scratch.
    fn load_block(&mut self) -> Result<()> {
        let block = Block::at(&self.data[..self.end], self.pos as u64)?;
        let len = block.decompress(self.scratch)?.len();
        self.blk = Some(BlockState {
            offset: self.pos,
            len,
            pos: 0,
            expected: block.header.event_count,
            seen: 0,
            crc_ok: 0,
        });
        self.pos = block.end() as usize;
        Ok(())
    }
}

/// Where the uncompressed frame at byte `at` is.
#[inline(always)]
fn plain_position(at: usize) -> Position {
    Position {
        offset: at as u64,
        in_block: None,
    }
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
