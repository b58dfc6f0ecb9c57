//! One event at a time into the caller's `floxlog_event` slots, with the
//! pointer fix-ups of a batch's book levels and pool payloads.

use crate::codec::event::{write_event, write_trade, LevelScratch};
use crate::codec::types::*;
use crate::error::floxlog_result;
use crate::tape::error::TapeFail;
use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;
use floxlog::tape::{TapeError, TapeErrorKind};
use floxlog_core::{Event, Position};
use floxlog_result::*;

use super::handle::{Fixup, TapeReaderHandle};
use super::options::*;

/// What a read step found.
pub(crate) enum Step {
    /// An event was written to the caller's slot.
    Event,
    /// No more events: `FLOXLOG_END`, or the next error.
    End,
}

/// Reads the next event into `*out`: book levels into `levels[*used..]`
/// (grown as needed) and, when `copy_payload`, pool payloads copied into
/// `payloads`; fixups record where those pointers must point.
///
/// # Safety
/// `out` non-NULL, aligned, writable.
pub(crate) unsafe fn step(
    h: &mut TapeReaderHandle,
    out: *mut floxlog_event,
    slot: usize,
    used: &mut usize,
    copy_payload: bool,
) -> Result<Step, TapeFail> {
    let TapeReaderHandle {
        events,
        levels,
        payloads,
        fixups,
        ..
    } = h;
    let Some(r) = events.as_mut() else {
        return Ok(Step::End);
    };
    // A trade read ahead: straight into the slot (the per-event path's
    // fast case, as `floxlog_tape_reader_next`'s).
    if let Some(t) = r.next_held_trade() {
        // SAFETY: `out` is the caller's writable slot.
        unsafe { write_trade(&t, out) };
        h.events_out += 1;
        return Ok(Step::Event);
    }
    let item = match r.next_event() {
        Ok(Some(it)) => it,
        Ok(None) => return Ok(Step::End),
        Err(e) => return Err(merge_failure(e)),
    };
    let ev = &item.event;
    if let Event::Book(b) = ev {
        let total = b.bids.len() + b.asks.len();
        let end = *used + total;
        if levels.len() < end {
            levels.resize(end, MaybeUninit::uninit());
        }
        let mut scratch = LevelScratch::from_slots(&mut levels[*used..end]);
        // SAFETY: `out` is the caller's writable slot; the scratch fits.
        let _ = unsafe { write_event(ev, out, &mut scratch) };
        fixups.push(Fixup::Book {
            at: slot,
            levels: *used,
            bids: b.bids.len(),
        });
        *used = end;
    } else {
        let mut none = LevelScratch::from_slots(&mut []);
        // SAFETY: as above; only books use the scratch.
        let _ = unsafe { write_event(ev, out, &mut none) };
        if let (Event::PoolState(p), true) = (ev, copy_payload) {
            fixups.push(Fixup::Pool {
                at: slot,
                offset: payloads.len(),
            });
            payloads.extend_from_slice(p.payload);
        }
    }
    h.events_out += 1;
    Ok(Step::Event)
}

/// The merge's one usage error is its memory bound.
pub(crate) fn merge_failure(e: TapeError) -> TapeFail {
    match e.kind {
        TapeErrorKind::Usage => TapeFail::Coded(FLOXLOG_CAPACITY_EXCEEDED, Box::new(e)),
        _ => e.into(),
    }
}

/// Where an event is (its segment and position), in the C form.
pub(crate) fn position_of(segment: usize, p: Position) -> floxlog_tape_position {
    floxlog_tape_position {
        segment: segment as u64,
        offset: p.offset,
        in_block: p.in_block.unwrap_or(0),
        has_in_block: u8::from(p.in_block.is_some()),
    }
}

/// Points the events' level and payload pointers at the handle's buffers,
/// which no longer move.
///
/// # Safety
/// `events` must hold the slots the fixups name, written by `step`.
pub(crate) unsafe fn apply_fixups(h: &mut TapeReaderHandle, events: *mut floxlog_event) {
    let lv = h.levels.as_ptr() as *const floxlog_level;
    let pl = h.payloads.as_ptr();
    for f in h.fixups.drain(..) {
        match f {
            Fixup::Book { at, levels, bids } => {
                // SAFETY: slot `at` holds a book written by `step`; the
                // offsets are inside `levels` (at most one past its end).
                unsafe {
                    let b = addr_of_mut!((*events.add(at)).data.book);
                    let base = lv.wrapping_add(levels);
                    addr_of_mut!((*b).bids).write(base);
                    addr_of_mut!((*b).asks).write(base.wrapping_add(bids));
                }
            }
            Fixup::Pool { at, offset } => {
                // SAFETY: slot `at` holds a pool state written by `step`.
                unsafe {
                    let p = addr_of_mut!((*events.add(at)).data.pool_state);
                    addr_of_mut!((*p).payload).write(pl.wrapping_add(offset));
                }
            }
        }
    }
}
