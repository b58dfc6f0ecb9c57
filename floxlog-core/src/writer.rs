//! The streaming segment writer: events in, segment bytes out, over buffers
//! the caller provides and never reallocates.
//!
//! The writer appends encoded bytes to the caller's output buffer; the caller
//! takes them with [`SegmentWriter::pending`] and [`SegmentWriter::consume`]
//! (to a file, a socket, a NIC ring) whenever it likes. The first 64 pending
//! bytes are a placeholder header; [`SegmentWriter::finish`] appends the index
//! trailer and returns the final header for the caller to put at offset 0, so
//! nothing already written has to be read back.
//!
//! Every method that can fail checks all of its buffers before it changes
//! anything: on error the event was not accepted and everything accepted
//! before it is intact, so the caller can drain, grow or flush and retry.

use core::mem::MaybeUninit;

use crate::consts::FORMAT_VERSION;
use crate::crc32::LANES;
use crate::error::{Error, ErrorKind, Result};
use crate::event::{Event, Profile};
use crate::frame::{emit_frame_sized, is_known_type, seal_frames, FrameHeader};
use crate::index::{emit_trailer, trailer_len, IndexEntry};
use crate::segment_header::{flags, Compression, SegmentHeader};

mod deferred;
mod lz4;
mod storage;
mod trades;
pub use deferred::{compress_block, SealedBlock, MAX_UNPLACED};
use storage::holds;
pub use storage::{
    block_scratch_len, index_entries_needed, BlockSlot, Buffer, Parts, WriterBuffers, WriterStorage,
};

/// Distinct symbols the spec profile can count; past this `append` fails with
/// `SymbolCapacity` (the reference profile does not count symbols).
pub const SYMBOL_CAPACITY: usize = 4096;

/// Writer settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterConfig {
    /// Codec of the frame stream.
    pub compression: Compression,
    /// Write the sparse index trailer.
    pub create_index: bool,
    /// Events between index entries (uncompressed), events per block (LZ4).
    /// At least 1.
    pub index_interval: u16,
    /// Exchange tag of the segment header.
    pub exchange_id: u8,
    /// Wall-clock nanoseconds stamped as `created_ns` (no clock in no_std).
    pub created_ns: i64,
    /// Reference bytes (default) or spec-text conventions.
    pub profile: Profile,
}

impl WriterConfig {
    /// Whether the settings can be used: `InvalidInput` for an index
    /// interval of 0, `Lz4Unsupported` for LZ4 in a build without the `lz4`
    /// feature. [`SegmentWriter::new`] checks this; tools check it up front
    /// to refuse settings before they create anything.
    pub fn check(&self) -> Result<()> {
        if self.index_interval == 0 {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                0,
                "index_interval must be at least 1",
            ));
        }
        if self.compression == Compression::Lz4 && !cfg!(feature = "lz4") {
            return Err(Error::new(
                ErrorKind::Lz4Unsupported,
                0,
                "this build has no LZ4 support (feature `lz4`)",
            ));
        }
        Ok(())
    }
}

impl Default for WriterConfig {
    fn default() -> Self {
        WriterConfig {
            compression: Compression::None,
            create_index: true,
            index_interval: crate::consts::DEFAULT_INDEX_INTERVAL,
            exchange_id: 0,
            created_ns: 0,
            profile: Profile::Reference,
        }
    }
}

/// Counts and time range of what the writer has accepted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Events accepted (including those still staged in an LZ4 block).
    pub events: u32,
    /// Events in blocks already emitted (equals `events` when uncompressed).
    pub events_emitted: u32,
    /// Segment bytes produced so far (header, frames, blocks; no trailer
    /// until finish).
    pub segment_bytes: u64,
    /// Index entries recorded.
    pub index_entries: usize,
    /// Bytes waiting in the LZ4 staging area.
    pub staged_bytes: usize,
}

/// Streaming writer of one segment over storage `S` (see the module docs).
pub struct SegmentWriter<S: WriterStorage> {
    cfg: WriterConfig,
    store: S,
    out_len: usize,
    drained: u64,

    block_len: usize,
    block_events: usize,
    block_first_ts: i64,
    block_sorted: bool,
    block_min_ts: i64,
    block_max_ts: i64,

    index_len: usize,
    /// Uncompressed: events until the next index entry is due.
    until_index: u16,

    events: u32,
    events_emitted: u32,
    first_ts: i64,
    last_ts: i64,
    min_ts: i64,
    max_ts: i64,
    prev_ts: i64,
    stream_sorted: bool,
    blocks_sorted: bool,
    prev_block_max: Option<i64>,
    emitted_first_ts: i64,
    emitted_last_ts: i64,
    symbols: heapless::Vec<u32, SYMBOL_CAPACITY>,
    finished: bool,
    defer_size: bool,
    deferred: deferred::Deferred,
}

/// A frame to append: an event to encode, or a validated raw payload.
#[derive(Clone, Copy)]
enum Source<'e> {
    Event(&'e Event<'e>),
    Raw(u8, &'e [u8], i64, u32),
    /// A whole encoded frame (header and payload, CRC included), with its
    /// event's timestamp and symbol.
    Frame(&'e [u8], i64, u32),
}

impl Source<'_> {
    fn payload_len(&self) -> usize {
        match self {
            Source::Event(e) => e.payload_len(),
            Source::Raw(_, p, _, _) => p.len(),
            Source::Frame(f, _, _) => f.len().saturating_sub(FrameHeader::LEN),
        }
    }
    fn ts(&self) -> i64 {
        match self {
            Source::Event(e) => e.exchange_ts_ns(),
            Source::Raw(_, _, ts, _) | Source::Frame(_, ts, _) => *ts,
        }
    }
    fn symbol(&self) -> u32 {
        match self {
            Source::Event(e) => e.symbol_id(),
            Source::Raw(_, _, _, s) | Source::Frame(_, _, s) => *s,
        }
    }
    fn frame_type(&self) -> u8 {
        match self {
            Source::Event(e) => e.frame_type(),
            Source::Raw(t, _, _, _) => *t,
            Source::Frame(f, _, _) => f.get(crate::frame::field::TYPE).copied().unwrap_or(0),
        }
    }
    /// Writes header + payload into `dst` (exactly 12 + payload_len bytes);
    /// the CRC only if `seal` (see [`seal_frames`]).
    #[inline]
    fn emit(&self, profile: Profile, dst: &mut [u8], seal: bool, size: bool) {
        if let Source::Frame(f, _, _) = self {
            // As it came (its CRC was checked), the size field left alone
            // when deferred; `dst` is exactly as long.
            let from = if size { 0 } else { crate::frame::field::CRC32 };
            if let (Some(d), Some(s)) = (dst.get_mut(from..), f.get(from..)) {
                if d.len() == s.len() {
                    d.copy_from_slice(s);
                }
            }
            return;
        }
        emit_frame_sized(self.frame_type(), dst, seal, size, |payload| match self {
            Source::Event(e) => e.emit_payload(profile, payload),
            Source::Raw(_, p, _, _) => payload.copy_from_slice(p),
            Source::Frame(..) => {}
        });
    }
}

impl<S: WriterStorage> SegmentWriter<S> {
    /// Starts a segment: checks the configuration against the storage and
    /// puts the 64-byte placeholder header in the output.
    ///
    /// Errors: `InvalidInput` for an interval of 0; `Lz4Unsupported` for
    /// LZ4 in a build without the `lz4` feature; `BufferTooSmall` if the
    /// output cannot hold the header or, for LZ4, there are fewer than
    /// `index_interval` block slots. On error the storage is dropped; build
    /// it from borrows ([`WriterBuffers`]) to keep it.
    pub fn new(cfg: WriterConfig, mut store: S) -> Result<SegmentWriter<S>> {
        Self::check_start(&cfg, &mut store)?;
        let mut w = Self::fresh(cfg, store);
        w.put_placeholder();
        Ok(w)
    }

    /// [`new`](Self::new), building the writer in `slot`, the memory it
    /// will live in, instead of on the stack: its state is about 17 KB
    /// (mostly the set of distinct symbols), which a caller that places it
    /// (the C API's `floxlog_writer_init`, firmware) would otherwise have on
    /// the stack once more. Same checks and errors; `slot` is written only
    /// on success.
    pub fn new_in(
        slot: &mut MaybeUninit<SegmentWriter<S>>,
        cfg: WriterConfig,
        mut store: S,
    ) -> Result<&mut SegmentWriter<S>> {
        Self::check_start(&cfg, &mut store)?;
        let w = slot.write(Self::fresh(cfg, store));
        w.put_placeholder();
        Ok(w)
    }

    /// The checks of [`new`](Self::new), on the storage before a writer
    /// holds it.
    fn check_start(cfg: &WriterConfig, store: &mut S) -> Result<()> {
        cfg.check()?;
        let slots = cfg.index_interval as usize;
        if cfg.compression == Compression::Lz4 && !holds(store, Buffer::Slots, slots) {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                0,
                "LZ4 needs one block slot per event of a block",
            )
            .needing(slots as u64));
        }
        if !holds(store, Buffer::Out, SegmentHeader::LEN) {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                0,
                "output buffer cannot hold the 64-byte segment header",
            )
            .needing(SegmentHeader::LEN as u64));
        }
        Ok(())
    }

    /// A writer with nothing written, over checked storage.
    #[inline(always)]
    fn fresh(cfg: WriterConfig, store: S) -> SegmentWriter<S> {
        SegmentWriter {
            cfg,
            store,
            out_len: 0,
            drained: 0,
            block_len: 0,
            block_events: 0,
            block_first_ts: 0,
            block_sorted: true,
            block_min_ts: i64::MAX,
            block_max_ts: i64::MIN,
            index_len: 0,
            until_index: 0,
            events: 0,
            events_emitted: 0,
            first_ts: 0,
            last_ts: 0,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            prev_ts: i64::MIN,
            stream_sorted: true,
            blocks_sorted: true,
            prev_block_max: None,
            emitted_first_ts: 0,
            emitted_last_ts: 0,
            symbols: heapless::Vec::new(),
            finished: false,
            defer_size: false,
            deferred: deferred::Deferred::default(),
        }
    }

    /// Puts the placeholder header at the start of the (checked) output.
    fn put_placeholder(&mut self) {
        let h = self.placeholder_header().to_bytes();
        self.store.parts().out[..SegmentHeader::LEN].copy_from_slice(&h);
        self.out_len = SegmentHeader::LEN;
    }

    /// Whether buffer `which` holds at least `needed`, growing it if the
    /// storage can.
    fn ensure(&mut self, which: Buffer, needed: usize) -> bool {
        holds(&mut self.store, which, needed)
    }

    /// From now on, leaves the `size` field (frame offset 0) of each
    /// uncompressed frame's header untouched (the output buffer's bytes
    /// there, zero in a pre-zeroed one) and writes the rest of the frame:
    /// the caller then publishes each frame by writing its size last, at
    /// the frame's offset `segment_bytes()` before the append, the value
    /// being the growth of `segment_bytes()` minus 12. For journals whose
    /// output buffer is the live, pre-zeroed file, where a reader takes a
    /// zero size as "nothing yet". LZ4 blocks are not affected.
    pub fn defer_size(&mut self, on: bool) {
        self.defer_size = on;
    }

    /// The storage, for a caller that must reach its buffers between
    /// calls (to grow them, say).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Ends the writer (finished or not) and gives its storage back.
    pub fn into_storage(self) -> S {
        self.store
    }

    /// The configuration.
    pub fn config(&self) -> &WriterConfig {
        &self.cfg
    }

    /// Encoded bytes not yet consumed, in segment order.
    pub fn pending(&self) -> &[u8] {
        &self.store.out()[..self.out_len]
    }

    /// Segment offset of the first pending byte.
    pub fn pending_offset(&self) -> u64 {
        self.drained
    }

    /// Marks the first `n` pending bytes as taken (written out by the
    /// caller); the rest move to the front of the output buffer.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.out_len);
        self.store.parts().out.copy_within(n..self.out_len, 0);
        self.out_len -= n;
        self.drained += n as u64;
    }

    /// Counts so far.
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            events: self.events,
            events_emitted: self.events_emitted,
            segment_bytes: self.position(),
            index_entries: self.index_len,
            staged_bytes: self.block_len,
        }
    }

    /// Whether [`SegmentWriter::finish`] has completed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Segment bytes produced so far (what the reference compares with
    /// `max_segment_bytes`): header plus frames or blocks, no trailer.
    pub fn segment_bytes(&self) -> u64 {
        self.position()
    }

    /// The reference's rotation test: whether appending `ev` would take an
    /// uncompressed segment past `max_segment_bytes` (`segment_bytes + 12 +
    /// payload > max`). Always false for LZ4 (the reference this corpus
    /// comes from never rotates compressed segments) and for a segment with
    /// no events yet (so one oversized event still gets a segment).
    pub fn would_exceed(&self, ev: &Event<'_>, max_segment_bytes: u64) -> bool {
        self.cfg.compression == Compression::None
            && self.events > 0
            && self.position() + (FrameHeader::LEN + ev.payload_len()) as u64 > max_segment_bytes
    }

    fn position(&self) -> u64 {
        self.drained + self.out_len as u64
    }

    fn out_short(&self, pos: u64, need: usize, what: &'static str) -> Error {
        Error::new(ErrorKind::BufferTooSmall, pos, what).needing((self.out_len + need) as u64)
    }

    fn check_open(&self) -> Result<()> {
        if self.finished {
            return Err(Error::new(
                ErrorKind::Finished,
                self.position(),
                "writer already finished",
            ));
        }
        Ok(())
    }

    fn index_full(&self, pos: u64) -> Error {
        Error::new(
            ErrorKind::IndexFull,
            pos,
            "index storage full: finish the segment or give more entries",
        )
        .needing(self.index_len as u64 + 1)
    }

    /// Appends one event. See the module docs for what happens on error.
    #[inline(always)]
    pub fn append(&mut self, ev: &Event<'_>) -> Result<()> {
        ev.validate(self.cfg.profile)
            .map_err(|what| Error::new(ErrorKind::InvalidInput, self.position(), what))?;
        self.append_source(Source::Event(ev), true).map(|_| ())
    }

    /// Appends a frame from its type and payload bytes, copied verbatim (for
    /// converting tapes byte for byte). The payload must decode as a valid
    /// record of a known type (`InvalidInput` otherwise). Under the spec
    /// profile, a book's header type byte is kept as found.
    pub fn append_raw(&mut self, frame_type: u8, payload: &[u8]) -> Result<()> {
        let pos = self.position();
        if !is_known_type(frame_type) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                pos,
                "raw frame of a type 1.0 does not define",
            ));
        }
        let ev = Event::decode(frame_type, payload, pos).map_err(|e| Error {
            kind: ErrorKind::InvalidInput,
            ..e
        })?;
        self.append_source(
            Source::Raw(frame_type, payload, ev.exchange_ts_ns(), ev.symbol_id()),
            true,
        )
        .map(|_| ())
    }

    /// Appends an encoded frame (header and payload) byte for byte, for
    /// frames that come encoded (from hardware, another tape): `ev` is the
    /// frame decoded by [`crate::decode_frame`], which checked its size,
    /// type, version, flags and CRC; its CRC is not computed again. A frame
    /// that does not match `ev` (length, type) or an event the profile
    /// refuses is `InvalidInput`, and nothing is appended.
    pub fn append_frame(&mut self, frame: &[u8], ev: &Event<'_>) -> Result<()> {
        let pos = self.position();
        let matches = frame.len() == FrameHeader::LEN + ev.payload_len()
            && frame.get(crate::frame::field::TYPE) == Some(&ev.frame_type());
        if !matches {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                pos,
                "frame bytes do not match the decoded event",
            ));
        }
        ev.validate(self.cfg.profile)
            .map_err(|what| Error::new(ErrorKind::InvalidInput, pos, what))?;
        self.append_source(
            Source::Frame(frame, ev.exchange_ts_ns(), ev.symbol_id()),
            true,
        )
        .map(|_| ())
    }

    /// Appends several events, as [`SegmentWriter::append`] one by one
    /// would (the same bytes, the same errors), with the frames' CRCs
    /// computed [`LANES`] at a time in one interleaved pass: a short CRC is
    /// latency-bound, several together are not. Returns how many events
    /// were appended: all, or those before the first error, which is
    /// returned with the count. LZ4 segments append one by one (the block
    /// compression dominates there).
    pub fn append_batch(&mut self, evs: &[Event<'_>]) -> (usize, Result<()>) {
        if self.cfg.compression != Compression::None {
            for (i, ev) in evs.iter().enumerate() {
                if let Err(e) = self.append(ev) {
                    return (i, Err(e));
                }
            }
            return (evs.len(), Ok(()));
        }
        let mut group = [(0usize, 0usize); LANES];
        let mut k = 0;
        for (i, ev) in evs.iter().enumerate() {
            let appended = ev
                .validate(self.cfg.profile)
                .map_err(|what| Error::new(ErrorKind::InvalidInput, self.position(), what))
                .and_then(|()| self.append_source(Source::Event(ev), false));
            match appended {
                Ok(Some(at)) => {
                    group[k] = (at, ev.payload_len());
                    k += 1;
                    if k == LANES {
                        self.seal(&group);
                        k = 0;
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    // Whatever was appended is whole, as one by one.
                    self.seal(&group[..k]);
                    return (i, Err(e));
                }
            }
        }
        self.seal(&group[..k]);
        (evs.len(), Ok(()))
    }

    /// Computes the CRCs of unsealed frames at output offsets (with their
    /// payload lengths: a deferred `size` field is still 0).
    fn seal(&mut self, frames: &[(usize, usize)]) {
        if !frames.is_empty() {
            let end = self.out_len;
            seal_frames(&mut self.store.parts().out[..end], frames);
        }
    }

    /// Appends a frame; uncompressed, with the CRC only if `seal`, and
    /// returns where an unsealed frame starts in the output (which the
    /// caller must seal before anything reads it).
    #[inline(always)]
    fn append_source(&mut self, src: Source<'_>, seal: bool) -> Result<Option<usize>> {
        let pos = self.position();
        self.check_open()?;
        if self.events == u32::MAX {
            return Err(Error::new(
                ErrorKind::CapacityExceeded,
                pos,
                "segment event_count would overflow u32",
            ));
        }
        let payload_len = src.payload_len();
        // The size field counts payload bytes only; LZ4 staging checks its
        // own u32 bound below.
        if payload_len > u32::MAX as usize {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                pos,
                "payload does not fit a u32 frame size",
            ));
        }
        let frame_len = FrameHeader::LEN + payload_len;
        let new_symbol = self.check_symbol(src.symbol(), pos)?;
        let ts = src.ts();
        match self.cfg.compression {
            Compression::None => {
                // Entries at events 0, interval, 2·interval...: a countdown
                // instead of a division per event.
                let index_due = self.cfg.create_index && self.until_index == 0;
                if !self.ensure(Buffer::Out, self.out_len + frame_len) {
                    return Err(self.out_short(
                        pos,
                        frame_len,
                        "output buffer full: consume pending bytes and retry",
                    ));
                }
                if index_due && !self.ensure(Buffer::Index, self.index_len + 1) {
                    return Err(self.index_full(pos));
                }
                let at = self.out_len;
                let profile = self.cfg.profile;
                let size = !self.defer_size;
                let parts = self.store.parts();
                src.emit(profile, &mut parts.out[at..at + frame_len], seal, size);
                if index_due {
                    parts.index[self.index_len] = IndexEntry {
                        timestamp_ns: ts,
                        file_offset: pos,
                    };
                    self.index_len += 1;
                }
                self.out_len += frame_len;
                if self.cfg.create_index {
                    self.until_index = match self.until_index {
                        0 => self.cfg.index_interval - 1,
                        n => n - 1,
                    };
                }
                self.note_event(ts, new_symbol);
                self.events_emitted = self.events;
                self.emitted_first_ts = self.first_ts;
                self.emitted_last_ts = self.last_ts;
                Ok((!seal).then_some(at))
            }
            Compression::Lz4 => self
                .stage_lz4(src, pos, frame_len, ts, new_symbol)
                .map(|()| None),
        }
    }

    /// Spec profile: `Some(symbol)` if it is new and fits the table.
    fn check_symbol(&self, sym: u32, pos: u64) -> Result<Option<u32>> {
        if self.cfg.profile != Profile::Spec {
            return Ok(None);
        }
        match self.symbols.binary_search(&sym) {
            Ok(_) => Ok(None),
            Err(_) if self.symbols.is_full() => Err(Error::new(
                ErrorKind::SymbolCapacity,
                pos,
                "more distinct symbols than the spec profile counts (SYMBOL_CAPACITY)",
            )
            .needing(SYMBOL_CAPACITY as u64 + 1)),
            Err(_) => Ok(Some(sym)),
        }
    }

    // Always inlined: as a call, the stats it writes are reloaded right
    // after and the CPU cannot forward them (measured through the C ABI).
    #[inline(always)]
    fn note_event(&mut self, ts: i64, new_symbol: Option<u32>) {
        if let Some(s) = new_symbol {
            if let Err(i) = self.symbols.binary_search(&s) {
                // Capacity was checked by check_symbol.
                let _ = self.symbols.insert(i, s);
            }
        }
        // Reference: first_event_ns is taken while still 0.
        if self.first_ts == 0 {
            self.first_ts = ts;
        }
        self.last_ts = ts;
        self.min_ts = self.min_ts.min(ts);
        self.max_ts = self.max_ts.max(ts);
        if self.events > 0 && ts < self.prev_ts {
            self.stream_sorted = false;
        }
        self.prev_ts = ts;
        self.events += 1;
    }

    fn placeholder_header(&self) -> SegmentHeader {
        let lz4 = self.cfg.compression == Compression::Lz4;
        SegmentHeader {
            version: FORMAT_VERSION,
            flags: if lz4 { flags::COMPRESSED } else { 0 },
            exchange_id: self.cfg.exchange_id,
            created_ns: self.cfg.created_ns,
            compression: self.cfg.compression as u8,
            ..SegmentHeader::default()
        }
    }

    /// The header a reader would find at offset 0 if the writer died now,
    /// as the reference leaves it: uncompressed, the placeholder (no counts,
    /// no index); LZ4, the counts as of the last emitted block, flags still
    /// only Compressed. Recorders that rewrite the header as they go can
    /// write this.
    pub fn current_header(&self) -> SegmentHeader {
        let mut h = self.placeholder_header();
        if self.cfg.compression == Compression::Lz4 && self.events_emitted > 0 {
            h.event_count = self.events_emitted;
            h.first_event_ns = self.emitted_first_ts;
            h.last_event_ns = self.emitted_last_ts;
        }
        h
    }

    fn final_header(&self, index_offset: u64) -> SegmentHeader {
        let lz4 = self.cfg.compression == Compression::Lz4;
        let spec = self.cfg.profile == Profile::Spec;
        let mut h = self.placeholder_header();
        h.event_count = self.events;
        if spec {
            if self.events > 0 {
                h.first_event_ns = self.min_ts;
                h.last_event_ns = self.max_ts;
            }
            h.symbol_count = self.symbols.len() as u32;
        } else {
            h.first_event_ns = self.first_ts;
            h.last_event_ns = self.last_ts;
        }
        let sorted = if lz4 {
            self.blocks_sorted
        } else {
            spec && self.stream_sorted
        };
        if sorted {
            h.flags |= flags::SORTED;
        }
        if index_offset != 0 {
            h.flags |= flags::HAS_INDEX;
            h.index_offset = index_offset;
        }
        h
    }

    /// Ends the segment: emits the last LZ4 block, appends the index trailer
    /// (when there is at least one entry, as the reference does) and returns
    /// the final 64-byte header, which belongs at offset 0 in place of the
    /// placeholder.
    ///
    /// On `BufferTooSmall` nothing is lost: consume pending bytes and call
    /// `finish` again. After success, `pending` still holds the unconsumed
    /// bytes (ending with the trailer) and appends fail with `Finished`.
    pub fn finish(&mut self) -> Result<[u8; 64]> {
        let pos = self.position();
        self.check_open()?;
        self.check_placed()?;
        if self.block_events > 0 {
            // If the trailer then does not fit, the block stays emitted and
            // a retry goes straight to the trailer.
            self.check_block_room(self.block_len, pos)?;
            self.emit_block()?;
        }
        let pos = self.position();
        let mut index_offset = 0;
        if self.cfg.create_index && self.index_len > 0 {
            let need = trailer_len(self.index_len);
            if !self.ensure(Buffer::Out, self.out_len + need) {
                return Err(self.out_short(
                    pos,
                    need,
                    "output buffer cannot hold the index trailer: consume pending bytes and retry",
                ));
            }
            let at = self.out_len;
            let n = self.index_len;
            let interval = self.cfg.index_interval;
            let parts = self.store.parts();
            self.out_len += emit_trailer(&parts.index[..n], interval, &mut parts.out[at..]);
            index_offset = pos;
        }
        self.finished = true;
        Ok(self.final_header(index_offset).to_bytes())
    }
}
