//! Batch decode of trades: runs of trade frames straight into a caller's
//! slice or per-field columns, without an [`Event`] per trade.
//!
//! Exact by construction: a tight loop takes only what it can prove is a
//! whole, CRC-checked, version-1 trade frame (CRCs four frames at a time
//! through [`crc_pending`]); anything else — block ends, skipped types, a
//! pending seek, damage, a frame of another type — goes through the
//! per-event reader's own step, so the events, errors, offsets and counts
//! are the ones repeated [`Reader::next_event`] calls give. A frame of
//! another type that step reads is put back, for the per-event call.

use super::checks::crc_pending;
use super::{plain_position, Position, Reader};
use crate::consts::{frame_type, RECORD_VERSION};
use crate::crc32::crc32_same;
use crate::error::Error;
use crate::event::Event;
use crate::frame::{field as hdr, FrameHeader};
use crate::le::u32_at;
use crate::trade::Trade;

/// Encoded length of a trade frame: header and 48-byte payload.
const TRADE_FRAME: usize = FrameHeader::LEN + Trade::LEN;

/// The header's type, rec_version and flags of a valid trade frame, read
/// as one little-endian `u32` from [`hdr::TYPE`].
const TRADE_TAG: u32 = u32::from_le_bytes([frame_type::TRADE, RECORD_VERSION, 0, 0]);
const _: () = assert!(hdr::REC_VERSION == hdr::TYPE + 1 && hdr::FLAGS == hdr::TYPE + 2);

/// Where a batch of trades goes: slot `i` for `i < capacity()`.
pub trait TradeSink {
    /// How many trades fit.
    fn capacity(&self) -> usize;
    /// Stores trade number `i` (`i < capacity()`, each once, in order).
    fn put(&mut self, i: usize, t: Trade);
    /// [`TradeSink::put`], told where the trade's frame is (what
    /// [`Reader::position`] says after it): for sinks that hand trades out
    /// one by one later and must say where each was. By default the
    /// position is dropped (and costs nothing in the loop).
    #[inline(always)]
    fn put_at(&mut self, i: usize, t: Trade, at: Position) {
        let _ = at;
        self.put(i, t);
    }
}

impl TradeSink for [Trade] {
    #[inline(always)]
    fn capacity(&self) -> usize {
        self.len()
    }

    #[inline(always)]
    fn put(&mut self, i: usize, t: Trade) {
        if let Some(slot) = self.get_mut(i) {
            *slot = t;
        }
    }
}

/// [`TradeColumns`] and its [`TradeSink`], from the trade's field list.
macro_rules! trade_columns {
    ($( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*) => {
        /// One slice per trade field (what columnar consumers such as Arrow
        /// fill), named as the [`Trade`] fields; the batch holds as many
        /// trades as the shortest slice.
        #[derive(Debug)]
        pub struct TradeColumns<'c> {
            $(
                #[doc = concat!("[`Trade::", stringify!($f), "`].")]
                pub $f: &'c mut [$t],
            )*
        }

        impl TradeSink for TradeColumns<'_> {
            fn capacity(&self) -> usize {
                [$(self.$f.len()),*].into_iter().min().unwrap_or(0)
            }

            #[inline(always)]
            fn put(&mut self, i: usize, t: Trade) {
                fn set<T>(col: &mut [T], i: usize, v: T) {
                    if let Some(slot) = col.get_mut(i) {
                        *slot = v;
                    }
                }
                $( set(self.$f, i, t.$f); )*
            }
        }
    };
}
crate::trade_fields!(trade_columns);

/// Why a batch of trades ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TradeStop {
    /// The sink is full; more events may follow.
    Full,
    /// The next event is of another type: read it with the per-event calls
    /// (it has not been consumed).
    OtherType,
    /// No more events (or, tailing, [`Reader::needs_more`]).
    End,
    /// The error that ends the read, as the per-event reader reports it
    /// after the batch's trades; the reader then yields nothing more.
    Error(Error),
}

/// What one batch call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradeBatch {
    /// Trades stored, in slots `0..count`.
    pub count: usize,
    /// Why the batch ended.
    pub stop: TradeStop,
}

/// One event through the per-event path.
enum Step {
    Trade(Trade),
    Other,
    End,
    Error(Error),
}

impl Reader<'_, '_> {
    /// Reads consecutive trades into `out` (see [`Reader::next_trades_into`]).
    pub fn next_trades(&mut self, out: &mut [Trade]) -> TradeBatch {
        self.next_trades_into(out)
    }

    /// Reads consecutive trades into per-field columns (see
    /// [`Reader::next_trades_into`]).
    pub fn next_trade_columns(&mut self, cols: &mut TradeColumns<'_>) -> TradeBatch {
        self.next_trades_into(cols)
    }

    /// Reads consecutive trades into `out` until it is full, the next event
    /// is of another type (left unread), the events end, or an error, which
    /// comes with the trades before it. The trades, the error (kind and
    /// offset), [`Reader::events_read`], [`Reader::position`] and
    /// [`Reader::next_offset`] are what as many [`Reader::next_event`] calls
    /// would give; seeks, tail mode and the read options apply as there.
    pub fn next_trades_into<S: TradeSink + ?Sized>(&mut self, out: &mut S) -> TradeBatch {
        let cap = out.capacity();
        let mut n = 0;
        let stop = loop {
            if n == cap {
                break TradeStop::Full;
            }
            if self.done {
                break TradeStop::End;
            }
            n = self.fast_run(out, n, cap);
            if n == cap {
                break TradeStop::Full;
            }
            match self.slow_step() {
                Step::Trade(t) => {
                    out.put_at(n, t, self.last);
                    n += 1;
                }
                Step::Other => break TradeStop::OtherType,
                Step::End => break TradeStop::End,
                Step::Error(e) => break TradeStop::Error(e),
            }
        };
        TradeBatch { count: n, stop }
    }

    /// Stores the clean trade frames from the cursor on (slots `n..`),
    /// stopping before anything else; returns the new count.
    #[inline(always)]
    fn fast_run<S: TradeSink + ?Sized>(&mut self, out: &mut S, n: usize, cap: usize) -> usize {
        // A pending seek filters by timestamp, and a lost index trailer is
        // looked for at every frame: both take the per-event step.
        if self.skip_before.is_some() || self.lost_index {
            return n;
        }
        let verify = self.opts.verify_crc;
        if !self.compressed {
            let area = self.data.get(..self.end).unwrap_or_default();
            let (k, last) = run(
                area,
                &mut self.pos,
                &mut self.crc_ok,
                verify,
                None,
                out,
                n,
                cap,
            );
            if let Some(at) = last {
                self.events += (k - n) as u64;
                self.last = plain_position(at);
            }
            return k;
        }
        let Some(b) = self.blk.as_mut() else {
            return n;
        };
        let area = self.scratch.get(..b.len).unwrap_or_default();
        let block = Some(b.offset as u64);
        let (k, last) = run(area, &mut b.pos, &mut b.crc_ok, verify, block, out, n, cap);
        if let Some(at) = last {
            b.seen += (k - n) as u32;
            self.events += (k - n) as u64;
            self.last = Position {
                offset: b.offset as u64,
                in_block: Some(at as u32),
            };
        }
        k
    }

    /// One event through the per-event reader; a frame of another type is
    /// put back where it was.
    #[cold]
    fn slow_step(&mut self) -> Step {
        if self.compressed {
            return self.slow_compressed();
        }
        let last = self.last;
        match self.next_plain() {
            Ok(Some((Event::Trade(t), _, _))) => Step::Trade(t),
            Ok(Some((_, at, _))) => {
                // Back to the frame itself, not to where the step began:
                // frames a seek skipped before it stay skipped.
                self.pos = at;
                self.events -= 1;
                self.last = last;
                Step::Other
            }
            Ok(None) => Step::End,
            Err(e) => Step::Error(e),
        }
    }

    /// [`Reader::next_compressed`]'s handling of one event, with a frame of
    /// another type put back into its block.
    fn slow_compressed(&mut self) -> Step {
        let (position, start, len) = match self.advance_compressed() {
            Ok(Some(found)) => found,
            Ok(None) => {
                self.done = true;
                return Step::End;
            }
            Err(e) => {
                self.done = true;
                return match self.stop::<()>(e) {
                    Ok(_) => Step::End,
                    Err(e) => Step::Error(e),
                };
            }
        };
        let frame = self.scratch.get(start..start + len).unwrap_or_default();
        if frame.get(hdr::TYPE) != Some(&frame_type::TRADE) {
            if let Some(b) = self.blk.as_mut() {
                b.pos = start;
                b.seen -= 1;
            }
            return Step::Other;
        }
        // Counted before the record is decoded, as the per-event path does.
        self.events += 1;
        self.last = position;
        match Trade::parse(
            frame.get(FrameHeader::LEN..).unwrap_or_default(),
            position.offset,
        ) {
            Ok(t) => Step::Trade(t),
            Err(e) => {
                self.done = true;
                Step::Error(e.in_block(start as u32))
            }
        }
    }
}

/// The tight loop: from `*pos` in `area` (the frame area, or a block's
/// frames), stores every whole version-1 trade frame with a checked CRC
/// (when `verify`) into slots `n..cap`. Returns the new count and the
/// offset of the last frame stored; `*pos` ends at the first frame not
/// taken. `block`: the offset of the LZ4 block `area` is (frames' positions
/// are then inside it).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run<S: TradeSink + ?Sized>(
    area: &[u8],
    pos: &mut usize,
    crc_ok: &mut usize,
    verify: bool,
    block: Option<u64>,
    out: &mut S,
    mut n: usize,
    cap: usize,
) -> (usize, Option<usize>) {
    let mut at = *pos;
    let mut last = None;
    let here = |at: usize| match block {
        None => plain_position(at),
        Some(offset) => Position {
            offset,
            in_block: Some(at as u32),
        },
    };
    while n < cap {
        // RUN clean trade frames at once, their CRCs in one call, where
        // none is checked yet; anything else (fewer left, another frame,
        // a mismatch) is for the frame-by-frame step below, which finds
        // exactly where the run stops.
        if verify && at >= *crc_ok && cap - n >= RUN {
            if let Some(payloads) = clean_trades(area, at) {
                for (k, payload) in payloads.into_iter().enumerate() {
                    let at = at + k * TRADE_FRAME;
                    out.put_at(n + k, Trade::from_payload(payload), here(at));
                }
                last = Some(at + (RUN - 1) * TRADE_FRAME);
                at += RUN * TRADE_FRAME;
                *crc_ok = at;
                n += RUN;
                continue;
            }
        }
        let Some(frame) = area.get(at..at.saturating_add(TRADE_FRAME)) else {
            break;
        };
        let Ok(frame) = <&[u8; TRADE_FRAME]>::try_from(frame) else {
            break;
        };
        if u32_at(frame, hdr::SIZE) != Trade::LEN as u32 || u32_at(frame, hdr::TYPE) != TRADE_TAG {
            break;
        }
        if verify && crc_pending(crc_ok, area, at) {
            break;
        }
        let (_, payload) = frame.split_at(FrameHeader::LEN);
        let Ok(payload) = <&[u8; Trade::LEN]>::try_from(payload) else {
            break;
        };
        out.put_at(n, Trade::from_payload(payload), here(at));
        last = Some(at);
        at += TRADE_FRAME;
        n += 1;
    }
    *pos = at;
    (n, last)
}

/// Trade frames whose CRCs the tight loop checks in one call: eight
/// independent CRC chains keep the multiplier busy.
const RUN: usize = 8;

/// The payloads of the [`RUN`] frames from `at` of `area` when all are
/// whole version-1 trade frames whose CRCs match their headers.
#[inline(always)]
fn clean_trades(area: &[u8], at: usize) -> Option<[&[u8; Trade::LEN]; RUN]> {
    let b = area.get(at..at.checked_add(RUN * TRADE_FRAME)?)?;
    let (frames, _) = b.as_chunks::<TRADE_FRAME>();
    let mut payloads = [&[0u8; Trade::LEN]; RUN];
    let mut want = [0u32; RUN];
    for ((f, p), w) in frames.iter().zip(&mut payloads).zip(&mut want) {
        if u32_at(f, hdr::SIZE) != Trade::LEN as u32 || u32_at(f, hdr::TYPE) != TRADE_TAG {
            return None;
        }
        // A trade frame ends with its payload.
        *p = f.last_chunk::<{ Trade::LEN }>()?;
        *w = u32_at(f, hdr::CRC32);
    }
    (frames.len() == RUN && crc32_same(payloads) == want).then_some(payloads)
}
