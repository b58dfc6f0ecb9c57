//! Batch encode of trades: a slice of trades straight into consecutive
//! 60-byte frames, without an [`Event`] or a length lookup per trade.
//!
//! Exact by construction: [`SegmentWriter::append_trades`] first works out
//! how many of the trades can go in with no error (output and index room,
//! the event count, the spec profile's symbol table); those are encoded by
//! a tight loop (CRCs [`RUN`] frames at a time with [`crc32_same`], the
//! index entries, counts and time range the per-event path keeps); any
//! trade after them goes through [`SegmentWriter::append`], which gives
//! the error (or, on storage that grows, appends it). So the bytes, the
//! stats and the errors are those of appending `Event::Trade`s one by one.

use super::storage::len_of;
use super::{Buffer, SegmentWriter, WriterStorage};
use crate::consts::{frame_type, RECORD_VERSION};
use crate::crc32::{crc32, crc32_same};
use crate::error::Result;
use crate::event::{Event, Profile};
use crate::frame::{field as hdr, FrameHeader};
use crate::index::IndexEntry;
use crate::le::put_u32;
use crate::segment_header::Compression;
use crate::trade::Trade;

/// Encoded length of a trade frame: header and 48-byte payload.
const TRADE_FRAME: usize = FrameHeader::LEN + Trade::LEN;

/// Frames whose CRCs one [`crc32_same`] call computes: eight independent
/// chains keep the carry-less multiplier busy (as the read kernel does).
const RUN: usize = 8;

/// The header's type, rec_version and flags of a trade frame, as one
/// little-endian `u32` at [`hdr::TYPE`].
const TRADE_TAG: u32 = u32::from_le_bytes([frame_type::TRADE, RECORD_VERSION, 0, 0]);
const _: () = assert!(hdr::REC_VERSION == hdr::TYPE + 1 && hdr::FLAGS == hdr::TYPE + 2);

impl<S: WriterStorage> SegmentWriter<S> {
    /// Appends trades, as [`SegmentWriter::append`] of `Event::Trade` one
    /// by one would (the same bytes, stats and errors), in one pass over
    /// fixed-size frames. Returns how many were appended: all, or those
    /// before the first error, which is returned with the count. LZ4
    /// segments append one by one.
    pub fn append_trades(&mut self, trades: &[Trade]) -> (usize, Result<()>) {
        let mut done = 0;
        while let Some(rest) = trades.get(done..).filter(|r| !r.is_empty()) {
            let room = self.trade_room(rest.len());
            let k = match rest.get(..room) {
                Some(run) if room > 0 => self.encode_trades(run),
                _ => 0,
            };
            if k > 0 {
                done += k;
                continue;
            }
            // Nothing goes in without a check failing (or the storage
            // growing): the per-event path says which, or appends it.
            let Some(t) = rest.first() else {
                break;
            };
            if let Err(e) = self.append(&Event::Trade(*t)) {
                return (done, Err(e));
            }
            done += 1;
        }
        (done, Ok(()))
    }

    /// How many of `want` trades the tight loop may take: as many as fit
    /// the output and index storage (grown if it can) and the event count;
    /// 0 when finished or compressed.
    fn trade_room(&mut self, want: usize) -> usize {
        if self.finished || self.cfg.compression != Compression::None {
            return 0;
        }
        let mut k = want.min((u32::MAX - self.events) as usize);
        let need = self.out_len.saturating_add(k.saturating_mul(TRADE_FRAME));
        if !self.ensure(Buffer::Out, need) {
            let free = len_of(&self.store, Buffer::Out).saturating_sub(self.out_len);
            k = k.min(free / TRADE_FRAME);
        }
        if self.cfg.create_index {
            let (due, every) = (self.until_index as usize, self.cfg.index_interval as usize);
            let entries = entries_in(k, due, every);
            if entries > 0 && !self.ensure(Buffer::Index, self.index_len + entries) {
                // Stop before the entry that does not fit: the one after
                // the `free` that do falls at batch position due + free·every.
                let free = len_of(&self.store, Buffer::Index).saturating_sub(self.index_len);
                k = k.min(free.saturating_mul(every).saturating_add(due));
            }
        }
        k
    }

    /// Encodes `trades`, for which [`SegmentWriter::trade_room`] vouched,
    /// except under the spec profile from the first whose new symbol the
    /// table cannot count. Returns how many went in.
    fn encode_trades(&mut self, trades: &[Trade]) -> usize {
        let k = if self.cfg.profile == Profile::Spec {
            self.note_symbols(trades)
        } else {
            trades.len()
        };
        let Some(trades) = trades.get(..k) else {
            return 0;
        };
        let at = self.out_len;
        let base = self.position();
        let size = (!self.defer_size).then_some(Trade::LEN as u32);
        let parts = self.store.parts();
        let Some(area) = parts.out.get_mut(at..at + k * TRADE_FRAME) else {
            return 0;
        };
        let (frames, _) = area.as_chunks_mut::<TRADE_FRAME>();
        for (fs, ts) in frames.chunks_mut(RUN).zip(trades.chunks(RUN)) {
            encode_group(fs, ts, size);
        }
        if self.cfg.create_index {
            let (due, every) = (self.until_index as usize, self.cfg.index_interval as usize);
            let mut i = due;
            let mut n = self.index_len;
            while let (Some(t), Some(slot)) = (trades.get(i), parts.index.get_mut(n)) {
                *slot = IndexEntry {
                    timestamp_ns: t.exchange_ts_ns,
                    file_offset: base + (i * TRADE_FRAME) as u64,
                };
                n += 1;
                i += every;
            }
            self.index_len = n;
            self.until_index = if k <= due {
                (due - k) as u16
            } else {
                (every - 1 - (k - 1 - due) % every) as u16
            };
        }
        self.out_len += k * TRADE_FRAME;
        self.note_trades(trades);
        k
    }

    /// Spec profile: adds the trades' new symbols to the table, as
    /// [`SegmentWriter::append`] does; returns how many trades come before
    /// the first whose symbol does not fit.
    fn note_symbols(&mut self, trades: &[Trade]) -> usize {
        let mut last = None;
        for (i, t) in trades.iter().enumerate() {
            let s = t.symbol_id;
            if last == Some(s) {
                continue;
            }
            if let Err(at) = self.symbols.binary_search(&s) {
                if self.symbols.insert(at, s).is_err() {
                    return i;
                }
            }
            last = Some(s);
        }
        trades.len()
    }

    /// The counts and time range of [`SegmentWriter::append`]'s
    /// `note_event`, for trades just encoded.
    #[inline(always)]
    fn note_trades(&mut self, trades: &[Trade]) {
        let (mut first, mut last, mut min, mut max) =
            (self.first_ts, self.last_ts, self.min_ts, self.max_ts);
        let (mut prev, mut sorted, mut events) = (self.prev_ts, self.stream_sorted, self.events);
        for t in trades {
            let ts = t.exchange_ts_ns;
            // Reference: first_event_ns is taken while still 0.
            if first == 0 {
                first = ts;
            }
            last = ts;
            min = min.min(ts);
            max = max.max(ts);
            sorted &= events == 0 || ts >= prev;
            prev = ts;
            events += 1;
        }
        (self.first_ts, self.last_ts, self.min_ts, self.max_ts) = (first, last, min, max);
        (self.prev_ts, self.stream_sorted, self.events) = (prev, sorted, events);
        self.events_emitted = events;
        self.emitted_first_ts = first;
        self.emitted_last_ts = last;
    }
}

/// Index entries due among the next `k` events when the next is due at
/// batch position `due` and then every `every`.
fn entries_in(k: usize, due: usize, every: usize) -> usize {
    if k > due {
        (k - 1 - due) / every.max(1) + 1
    } else {
        0
    }
}

/// Encodes up to [`RUN`] trades into their frames: payloads, then the
/// header (the `size` field only if `size` is given, the CRCs computed
/// together).
#[inline(always)]
fn encode_group(frames: &mut [[u8; TRADE_FRAME]], trades: &[Trade], size: Option<u32>) {
    for (f, t) in frames.iter_mut().zip(trades) {
        let (head, body) = f.split_at_mut(FrameHeader::LEN);
        if let Ok(p) = <&mut [u8; Trade::LEN]>::try_from(body) {
            t.emit(p);
        }
        if let Some(size) = size {
            put_u32(head, hdr::SIZE, size);
        }
        put_u32(head, hdr::TYPE, TRADE_TAG);
    }
    let crcs = match <&[[u8; TRADE_FRAME]; RUN]>::try_from(&*frames) {
        Ok(group) => crc32_same(group.each_ref().map(payload)),
        Err(_) => {
            let mut c = [0u32; RUN];
            for (c, f) in c.iter_mut().zip(frames.iter()) {
                *c = crc32(payload(f));
            }
            c
        }
    };
    for (f, c) in frames.iter_mut().zip(crcs) {
        put_u32(f, hdr::CRC32, c);
    }
}

/// A trade frame's payload.
#[inline(always)]
fn payload(f: &[u8; TRADE_FRAME]) -> &[u8; Trade::LEN] {
    f.last_chunk::<{ Trade::LEN }>().unwrap_or(&[0; Trade::LEN])
}
