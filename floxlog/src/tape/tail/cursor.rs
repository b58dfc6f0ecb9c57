//! One segment followed as it grows: mapped through [`SegmentFile`] (so a
//! truncation under the map is a mark, never `SIGBUS`), read by the core
//! reader in tail mode from where the last poll stopped.
//!
//! A poll checks the frames that arrived (CRCs, layouts, what the writer
//! published) and leaves them where they lie: a run of the map, or of the
//! one LZ4 block decoded into the cursor's scratch (a poll stops at the
//! end of a block that holds a frame of the run). [`Cursor::take`] then
//! decodes them one by one from there into the caller's event: nothing is
//! copied, and nothing is polled again until the run is handed out.
//!
//! What counts as "nothing yet" rather than damage, while the header is
//! still a writer's placeholder: data ending inside a frame or block (the
//! core reader's `needs_more`), an index trailer where frames were to go on
//! (a writer closing the segment), and a zero `size` field (or LZ4 block
//! magic) where the next frame starts: the pre-allocated zero tail of a
//! journal segment, whose writer stores a frame's size last.

use super::position::Spot;
use crate::tape::dir::TapeSegment;
use crate::tape::error::TapeError;
use crate::tape::error::SHRANK;
use crate::tape::read::source::{header_is_unfinished, SegmentFile};
use floxlog_core::frame::is_known_type;
use floxlog_core::{
    Block, Error, ErrorKind, Event, FrameHeader, RawFrame, ReadOptions, Segment, SegmentHeader,
    UnknownTypes,
};

/// What a poll found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Polled {
    /// This many events are checked and waiting in the run (more may
    /// follow).
    Got(usize),
    /// Nothing new; `finished`: the segment is closed (final header) and
    /// every event of it was read.
    Idle { finished: bool },
}

/// Most events one poll checks: a caller waiting for the next event gets
/// it without the whole segment being checked first.
const POLL_LIMIT: usize = 1024;

/// Events a poll checked and nothing handed out yet, where they lie.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    /// Offset in the area of the next frame to hand out.
    at: usize,
    /// End of the last frame checked.
    end: usize,
    /// Events left (frames of unknown types skipped among them are not).
    left: usize,
    /// `Some(block offset)`: the area is the LZ4 block decoded into the
    /// scratch; `None`: the map.
    block: Option<u64>,
}

pub(crate) struct Cursor {
    pub(crate) seg: TapeSegment,
    file: Option<SegmentFile>,
    /// The segment's `created_ns`, once its header has been read.
    pub(crate) created_ns: Option<i64>,
    /// The next frame (LZ4: block) header to read.
    pos: u64,
    /// LZ4: events of the block at `pos` already read.
    in_block: u64,
    /// Events read from this segment (handed out, in the run, or
    /// skipped).
    events: u64,
    run: Run,
    /// Events to read and drop before any joins the run (start at the end, or
    /// resume inside an LZ4 segment).
    discard: u64,
    scratch: Vec<u8>,
    /// What the last full poll found when it found nothing: `Some(true)`
    /// the segment finished and read, `Some(false)` nothing at `pos` yet.
    /// Until a poll that looks, an idle poll is then one load (see
    /// [`Cursor::poll`]).
    quiet: Option<bool>,
    /// The last read of the header found it unfinished (a writer's
    /// placeholder).
    header_open: bool,
    /// An error was put off once (see [`Cursor::poll`]).
    deferred: bool,
    /// The last poll found nothing: the next frame is handed out alone
    /// (see [`Cursor::poll_mapped`]).
    was_idle: bool,
}

impl Cursor {
    /// A cursor at the first frame of `seg`.
    pub(crate) fn new(seg: TapeSegment) -> Cursor {
        Cursor {
            seg,
            file: None,
            created_ns: None,
            pos: SegmentHeader::LEN as u64,
            in_block: 0,
            events: 0,
            run: Run::default(),
            discard: 0,
            scratch: Vec::new(),
            quiet: None,
            header_open: false,
            deferred: false,
            was_idle: false,
        }
    }

    /// A cursor at a saved position of `seg`: at `offset` for an
    /// uncompressed segment, after `events` events for an LZ4 one (read
    /// again and dropped: a block boundary alone does not say how many of
    /// the block's events were handed out).
    pub(crate) fn at(seg: TapeSegment, p: &Spot) -> Result<Cursor, TapeError> {
        let mut c = Cursor::new(seg);
        let file = c.seg.open()?;
        let h = SegmentHeader::parse(file.bytes()).map_err(|e| TapeError::data(&c.seg.path, e))?;
        c.created_ns = Some(h.created_ns);
        if h.has(floxlog_core::segment_header::flags::COMPRESSED) {
            c.discard = p.events;
        } else {
            if p.offset < SegmentHeader::LEN as u64 || p.offset > file.len() {
                return Err(TapeError::input(
                    Some(&c.seg.path),
                    format!(
                        "the saved position's offset {} is outside the segment's frames (it holds {} bytes)",
                        p.offset,
                        file.len()
                    ),
                )
                .at(p.offset));
            }
            c.pos = p.offset;
            c.events = p.events;
        }
        c.file = Some(file);
        Ok(c)
    }

    /// Reads and drops every event the segment holds now.
    pub(crate) fn skip_to_end(&mut self, opts: ReadOptions) -> Result<(), TapeError> {
        self.discard = u64::MAX;
        // Dropped events never join the run: one poll reads them all.
        let r = loop {
            match self.poll(opts, true) {
                Ok(Polled::Idle { .. }) => break Ok(()),
                Ok(Polled::Got(_)) => {}
                Err(e) => break Err(e),
            }
        };
        self.discard = 0;
        r
    }

    /// Events of this segment read so far (handed out or skipped).
    pub(crate) fn events_read(&self) -> u64 {
        self.events
    }

    /// Events checked and not handed out yet.
    pub(crate) fn queued(&self) -> usize {
        self.run.left
    }

    /// The next event of the run, decoded from where it lies (borrowing
    /// the cursor), and where the lane stands once it is handed out;
    /// `None` if the run is empty, or (`only`) the next event is of
    /// another type (it stays next). `unknown`: the tailer's, as the poll
    /// that checked the run read it.
    #[inline]
    pub(crate) fn take(
        &mut self,
        unknown: UnknownTypes,
        only: Option<u8>,
    ) -> Result<Option<(Event<'_>, Spot)>, TapeError> {
        let Some((at, header)) = self.front(unknown)? else {
            return Ok(None);
        };
        if only.is_some_and(|t| t != header.frame_type) {
            return Ok(None);
        }
        let n = FrameHeader::LEN + header.size as usize;
        self.run.at = at + n;
        self.run.left -= 1;
        let after = Spot {
            created_ns: self.created_ns.unwrap_or(0),
            offset: self.run.block.unwrap_or(self.run.at as u64),
            events: self.events - self.run.left as u64,
        };
        let frame = RawFrame {
            header,
            payload: self
                .area()
                .get(at + FrameHeader::LEN..at + n)
                .unwrap_or(&[]),
        };
        match frame.event(self.run.block.unwrap_or(at as u64)) {
            Ok(ev) => Ok(Some((ev, after))),
            Err(_) => Err(self.lost(at)),
        }
    }

    /// Where the run lies: the LZ4 block in the scratch, or the map.
    #[inline]
    fn area(&self) -> &[u8] {
        match (self.run.block, &self.file) {
            (Some(_), _) => &self.scratch,
            (None, Some(f)) => f.bytes(),
            (None, None) => &[],
        }
    }

    /// The run's next event frame (its offset in the area and header),
    /// past frames of unknown types when they are skipped; `None` if the
    /// run is empty.
    #[inline]
    fn front(&mut self, unknown: UnknownTypes) -> Result<Option<(usize, FrameHeader)>, TapeError> {
        while self.run.left > 0 {
            let at = self.run.at;
            let room = self.run.end.saturating_sub(at);
            let header = self
                .area()
                .get(at..self.run.end)
                .and_then(|b| FrameHeader::parse(b, 0).ok())
                .filter(|h| (h.size as usize).saturating_add(FrameHeader::LEN) <= room);
            let Some(h) = header else {
                let e = self.lost(at);
                self.run = Run::default();
                return Err(e);
            };
            if unknown == UnknownTypes::Skip && !is_known_type(h.frame_type) {
                self.run.at = at + FrameHeader::LEN + h.size as usize;
                continue;
            }
            return Ok(Some((at, h)));
        }
        Ok(None)
    }

    /// A frame of the run that no longer reads as it was checked: the
    /// file shrank under the map (the map now shows zeros there), else a
    /// bug. The error names the segment and where.
    fn lost(&self, at: usize) -> TapeError {
        let offset = self.run.block.unwrap_or(at as u64);
        let e = self.file.as_ref().and_then(|f| f.shrink_error(None));
        TapeError::data(
            &self.seg.path,
            e.unwrap_or_else(|| {
                Error::new(
                    ErrorKind::MalformedRecord,
                    offset,
                    "a frame the tailer checked did not read again (a bug in the tailer: please report it)",
                )
            }),
        )
    }

    /// Where the cursor stands (after the last event read), once the
    /// header has been read.
    pub(crate) fn position(&self) -> Option<Spot> {
        Some(Spot {
            created_ns: self.created_ns?,
            offset: self.pos,
            events: self.events,
        })
    }

    /// Maps the segment; `Ok(false)` if its file is gone before any event
    /// of it was read: a spare the journal writer prepared and removed
    /// unused at close, between the listing that named it and this open
    /// (the next listing marks the lane done with it).
    fn open(&mut self) -> Result<bool, TapeError> {
        match self.seg.open() {
            Ok(f) => {
                self.file = Some(f);
                Ok(true)
            }
            Err(_)
                if self.events == 0
                    && std::fs::symlink_metadata(&self.seg.path)
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the mapped file is no longer the file's extent: it grew (a
    /// default writer appends with write(2)) or shrank (`recover` trimmed
    /// it). One `stat`, asked only when a poll found nothing.
    fn stale(&self) -> bool {
        let Some(f) = &self.file else {
            return true;
        };
        if f.shrunk().is_some() {
            return true;
        }
        std::fs::metadata(&self.seg.path).is_ok_and(|m| m.len() != f.len())
    }

    /// Checks the complete events added since the last poll, leaving them
    /// in the run (while events of the run are left, says so and reads
    /// nothing: the run lies in the map and the scratch). `look`: also check that the map still shows the file (a `stat`),
    /// which a poll does anyway when it stops at the map's end, errs, or
    /// finds the segment finished; a journal segment's zero tail lies
    /// inside the map, and polling it costs no system call.
    pub(crate) fn poll(&mut self, opts: ReadOptions, look: bool) -> Result<Polled, TapeError> {
        if self.run.left > 0 {
            return Ok(Polled::Got(self.run.left));
        }
        if !look {
            // A finished segment does not change; an open one's next frame
            // is published by its size word, which stays zero until then.
            match self.quiet {
                Some(true) => return Ok(Polled::Idle { finished: true }),
                Some(false) if self.nothing_at_pos() => {
                    return Ok(Polled::Idle { finished: false })
                }
                _ => {}
            }
        }
        let was_open = self.header_open;
        let mut r = self.poll_full(opts, look);
        if r.is_err() && was_open && !self.header_open && !self.deferred {
            // The header turned final in this poll: the writer writes the
            // final header over the placeholder in one write, which a
            // reader of the map can see half done. Read again next poll;
            // an error that stays is reported then.
            self.deferred = true;
            self.header_open = true;
            self.file = None;
            r = Ok(Polled::Idle { finished: false });
        } else {
            self.deferred = false;
        }
        self.quiet = match r {
            Ok(Polled::Idle { finished }) if self.file.is_some() => Some(finished),
            // A run from an open segment that ends at a frame (or block)
            // boundary: once it is handed out, the next poll is the idle
            // poll's one load of the size word there, not a header parse
            // and a new reader.
            Ok(Polled::Got(_)) if self.file.is_some() && self.header_open && self.in_block == 0 => {
                Some(false)
            }
            _ => None,
        };
        self.was_idle = matches!(r, Ok(Polled::Idle { .. }));
        r
    }

    /// Whether the size word of the next frame (LZ4: the block's magic),
    /// inside the map, is still zero: an idle poll's one load.
    fn nothing_at_pos(&self) -> bool {
        let Some(f) = &self.file else {
            return false;
        };
        let Some(b) = usize::try_from(self.pos)
            .ok()
            .and_then(|a| f.bytes().get(a..a.checked_add(4)?))
        else {
            return false;
        };
        // SAFETY: `b` is 4 readable bytes of the map. Volatile: each poll
        // loads the word again (another process stores it).
        let w = unsafe { std::ptr::read_volatile(b.as_ptr().cast::<[u8; 4]>()) };
        if w == [0; 4] {
            return true;
        }
        // Pairs with the writer's release store of the size: the frame
        // read next is seen whole.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        false
    }

    fn poll_full(&mut self, opts: ReadOptions, look: bool) -> Result<Polled, TapeError> {
        let first = self.poll_mapped(opts);
        let mapped = self.file.as_ref().map_or(0, SegmentFile::len);
        let at_end = self.pos + floxlog_core::FrameHeader::LEN as u64 > mapped;
        let sure = match &first {
            Ok(Polled::Got(_)) => true,
            Ok(Polled::Idle { finished }) => !look && !at_end && !finished,
            Err(_) => false,
        };
        // An idle poll, or an error, on a stale map proves nothing: the
        // final header is seen through the map before the frames written
        // past its end.
        if sure || !self.stale() {
            return first;
        }
        self.file = None;
        self.poll_mapped(opts)
    }

    // Long but kept whole: one poll is one pass in order (header, position,
    // read, why it stopped, end of segment), and its locals carry across.
    fn poll_mapped(&mut self, opts: ReadOptions) -> Result<Polled, TapeError> {
        if self.file.is_none() && !self.open()? {
            return Ok(Polled::Idle { finished: false });
        }
        let Some(file) = self.file.as_ref() else {
            return Ok(Polled::Idle { finished: false });
        };
        let path = &self.seg.path;
        let data = file.bytes();
        if data.len() < SegmentHeader::LEN || data[..4] == [0; 4] {
            // Created, header not written yet.
            return Ok(Polled::Idle { finished: false });
        }
        let seg = match Segment::parse(data) {
            Ok(s) => s,
            Err(e) => {
                // Not known to be a placeholder (see `poll`).
                self.header_open = false;
                return Err(TapeError::data(
                    path,
                    file.shrink_error(Some(&e)).unwrap_or(e),
                ));
            }
        };
        let header = *seg.header();
        self.created_ns = Some(header.created_ns);
        let closed = !header_is_unfinished(&header);
        self.header_open = !closed;
        if self.pos > seg.frames_end() {
            let e = Error::new(
                ErrorKind::Truncated,
                seg.frames_end(),
                if closed {
                    "the segment's frames end before what was already read (was it rewritten?)"
                } else {
                    SHRANK
                },
            );
            return Err(TapeError::data(path, e));
        }
        let need = seg.scratch_len_from(self.pos);
        if self.scratch.len() < need {
            self.scratch.resize(need, 0);
        }
        let tail_opts = ReadOptions { tail: true, ..opts };
        let mut r = seg
            .reader_at(self.pos, tail_opts, &mut self.scratch)
            .map_err(|e| TapeError::data(path, e))?;
        let mut skip = self.in_block;
        let mut got = 0usize;
        let mut limited = false;
        // The first frame after a quiet spell is handed out alone: reading
        // on would load the next frame's line (cold, or still the
        // writer's) before the caller has the event it waited for. (Not
        // in an LZ4 block, which a second poll would decode again.)
        let compressed = header.has(floxlog_core::segment_header::flags::COMPRESSED);
        let limit = if self.was_idle && !compressed {
            1
        } else {
            POLL_LIMIT
        };
        let stopped = loop {
            if got >= limit {
                limited = true;
                break None;
            }
            let it = match r.next_item() {
                Ok(Some(it)) => it,
                Ok(None) => break None,
                Err(e) => break Some(e),
            };
            if !closed
                && !opts.verify_crc
                && it.position.in_block.is_none()
                && maybe_half_size(data, it.position.offset)
                && floxlog_core::crc32::crc32(it.frame.payload) != it.frame.header.crc32
            {
                // CRCs off, but this size may be half-published (see
                // `maybe_half_size`): checked anyway, and a mismatch is
                // "nothing yet", never a frame of the wrong length.
                self.pos = it.position.offset;
                self.in_block = 0;
                return Ok(idle_or(got, false));
            }
            if skip > 0 {
                // Handed out before: the resumed block's first events.
                skip -= 1;
                continue;
            }
            match it.position.in_block {
                Some(_) if it.position.offset == self.pos => self.in_block += 1,
                Some(_) => {
                    self.pos = it.position.offset;
                    self.in_block = 1;
                }
                None => {
                    self.pos = it.position.offset + it.frame.len() as u64;
                    self.in_block = 0;
                }
            }
            self.events += 1;
            if self.discard > 0 {
                self.discard -= 1;
                continue;
            }
            // The run: from the first event kept to the end of the last.
            let start = it.position.in_block.map_or(it.position.offset, u64::from) as usize;
            let len = it.frame.len();
            let block = it.position.in_block.map(|_| it.position.offset);
            if got == 0 {
                self.run = Run {
                    at: start,
                    end: start,
                    left: 0,
                    block,
                };
                if let Some(b) = block.and_then(|b| Block::at(data, b).ok()) {
                    // The next block would be decoded over this one.
                    r.limit(b.end());
                }
            }
            self.run.end = start + len;
            self.run.left += 1;
            got += 1;
        };
        if limited {
            return Ok(Polled::Got(got));
        }
        let needs_more = r.needs_more();
        let stop_at = r.next_offset();
        if stopped.is_none() {
            // Between blocks: the next poll starts at a block boundary.
            self.pos = stop_at;
            self.in_block = 0;
        }
        if let Some(e) = stopped {
            if !closed
                && e.offset == stop_at
                && (zero_at(data, stop_at) || maybe_half_size(data, stop_at))
            {
                // A journal segment's zero tail, or a size field caught
                // between its two stores: the next frame is not published
                // yet.
                self.pos = stop_at;
                self.in_block = 0;
                return Ok(idle_or(got, false));
            }
            if got == 0 && file.shrunk().is_some() {
                // Trimmed under the map (`recover`): read again from a new
                // map; what was read stays read. (With a run, which may lie
                // in this map, once it is handed out.)
                self.file = None;
                return Ok(idle_or(got, false));
            }
            if got > 0 {
                // Hand out what came before; the error comes back on the
                // next poll, at the same place.
                return Ok(Polled::Got(got));
            }
            return Err(TapeError::data(path, e));
        }
        if closed && needs_more {
            if got > 0 {
                return Ok(Polled::Got(got));
            }
            return Err(TapeError::data(
                path,
                Error::new(
                    ErrorKind::Truncated,
                    self.pos,
                    "closed segment ends inside a frame or block",
                ),
            ));
        }
        // A final header whose index lies past the mapped bytes was seen
        // before the last bytes written: not the end yet.
        let whole = !seg.index_lost() || header.index_offset <= data.len() as u64;
        Ok(idle_or(got, closed && !needs_more && whole))
    }
}

/// Whether a segment holds an event (its first frame's size word, or LZ4
/// block magic, is set) or is finished. Read with one small read, not
/// mapped: a journal writer's prepared spares are asked at every look.
pub(crate) fn has_events(l: &TapeSegment) -> bool {
    use std::io::Read;
    let Ok(mut f) = crate::tape::dir::files::open_regular(&l.path, l.dir.is_none()) else {
        return false;
    };
    let mut b = [0u8; SegmentHeader::LEN + 4];
    let mut got = 0;
    while got < b.len() {
        match f.read(&mut b[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    let Ok(h) = SegmentHeader::parse(&b[..got]) else {
        return false;
    };
    !header_is_unfinished(&h) || (got == b.len() && b[SegmentHeader::LEN..] != [0; 4])
}

/// `Got(got)` if anything joined the run, else idle.
fn idle_or(got: usize, finished: bool) -> Polled {
    if got > 0 {
        Polled::Got(got)
    } else {
        Polled::Idle { finished }
    }
}

/// Whether the size field at `at` may be one a journal writer has only
/// half published: its 4 bytes cross an aligned 8-byte word, and the
/// journal stores the second word first (`tape/journal/map.rs`,
/// `Publisher::publish`), so until the first word's store lands its bytes
/// read 0 and the size is wrong. An acknowledged frame never looks like
/// this unless its true size has those bytes zero; its CRC then matches.
fn maybe_half_size(data: &[u8], at: u64) -> bool {
    let k = (at % 8) as usize;
    if k < 5 {
        return false;
    }
    let Some(b) = usize::try_from(at)
        .ok()
        .and_then(|a| data.get(a..a.checked_add(4)?))
    else {
        return false;
    };
    let low = 8 - k;
    b[..low].iter().all(|&x| x == 0) && b[low..].iter().any(|&x| x != 0)
}

/// Whether the 4 bytes at `at` (a frame's size field, or an LZ4 block's
/// magic) are zero: nothing has been published there yet.
fn zero_at(data: &[u8], at: u64) -> bool {
    usize::try_from(at)
        .ok()
        .and_then(|a| data.get(a..a.checked_add(4)?))
        .is_some_and(|b| b == [0; 4])
}

#[cfg(test)]
mod tests {
    use super::maybe_half_size;

    /// The journal's two-store publication of a size crossing an 8-byte
    /// word (its second word first) is recognised at each offset where it
    /// can happen; a size inside one word, or already whole, is not.
    #[test]
    fn a_size_caught_between_its_two_stores_is_recognised() {
        let size: u32 = 0x0102_0304;
        for at in 0..16u64 {
            let k = (at % 8) as usize;
            let mut data = [0u8; 24];
            let a = at as usize;
            data[a..a + 4].copy_from_slice(&size.to_le_bytes());
            assert!(!maybe_half_size(&data, at), "whole size at {at}");
            if k >= 5 {
                // Only the second word's store has landed.
                data[a..a + 8 - k].fill(0);
                assert!(maybe_half_size(&data, at), "half size at {at}");
            }
        }
        // Nothing published, or out of bounds: not a half size.
        assert!(!maybe_half_size(&[0u8; 16], 7));
        assert!(!maybe_half_size(&[1u8; 8], 7));
    }
}
