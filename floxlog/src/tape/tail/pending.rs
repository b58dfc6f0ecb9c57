//! Frames a poll found, waiting to be handed out one call at a time.
//!
//! A poll reads every complete frame a segment holds now (up to a bound)
//! through the core reader, checking CRCs as it goes; the frames are
//! copied here so that each `next` hands out one event without keeping
//! the segment's reader (and its LZ4 block) alive between calls.

use super::position::Spot;
use floxlog_core::{decode_frame, Event, FrameOptions, RawFrame, UnknownTypes};
use std::collections::VecDeque;

struct Item {
    start: usize,
    len: usize,
    frame_type: u8,
    /// The lane it came from.
    lane: usize,
    /// Where its lane stands once this event has been handed out.
    after: Spot,
}

/// The queue.
#[derive(Default)]
pub(crate) struct Pending {
    bytes: Vec<u8>,
    items: VecDeque<Item>,
}

impl Pending {
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Queues a frame (already checked by the reader that found it).
    pub(crate) fn push(&mut self, frame: &RawFrame<'_>, lane: usize, after: Spot) {
        if self.items.is_empty() {
            self.bytes.clear();
        }
        let start = self.bytes.len();
        let mut head = [0u8; floxlog_core::FrameHeader::LEN];
        frame.header.emit(&mut head);
        self.bytes.extend_from_slice(&head);
        self.bytes.extend_from_slice(frame.payload);
        self.items.push_back(Item {
            start,
            len: self.bytes.len() - start,
            frame_type: frame.header.frame_type,
            lane,
            after,
        });
    }

    /// The frame type of the next event, if any.
    pub(crate) fn peek_type(&self) -> Option<u8> {
        self.items.front().map(|i| i.frame_type)
    }

    /// Takes the next event, its lane and the lane's position after it.
    /// The event borrows the queue until the next call that changes it.
    pub(crate) fn pop(&mut self) -> Option<(Event<'_>, usize, Spot)> {
        let it = self.items.pop_front()?;
        let bytes = self.bytes.get(it.start..it.start.checked_add(it.len)?)?;
        // The reader checked this frame (CRC included) and decoded it once
        // already: decoding the same bytes again cannot fail.
        let opts = FrameOptions {
            verify_crc: false,
            unknown_types: UnknownTypes::Skip,
        };
        match decode_frame(bytes, opts) {
            Ok((Some(ev), _)) => Some((ev, it.lane, it.after)),
            _ => None,
        }
    }
}
