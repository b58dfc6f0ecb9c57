//! Batch appends: C records converted to events a chunk at a time and
//! handed to a batch append (the core's, or the tape writer's), which seals
//! the frames' CRCs several at a time.

use crate::error::Fail;
use floxlog_core::Event;

/// Events converted per batch handed over: on the heap with `std`; on the
/// stack without (an event is tens of bytes, and firmware stacks are
/// small).
#[cfg(feature = "std")]
const CHUNK: usize = 256;
#[cfg(not(feature = "std"))]
const CHUNK: usize = 16;

/// Converts `items` with `conv` a chunk at a time and hands each chunk to
/// `append` (how many it appended, and its error). Stops at the first
/// error: an append's, or a conversion's after the events before it were
/// appended, as appending one by one would. Returns how many were appended
/// and the first error.
pub(crate) fn append_in_chunks<'a, T, E: From<Fail>>(
    items: &'a [T],
    conv: impl Fn(&'a T) -> Result<Event<'a>, Fail>,
    mut append: impl FnMut(&[Event<'a>]) -> (usize, Result<(), E>),
) -> (usize, Result<(), E>) {
    let mut n = 0;
    #[cfg(feature = "std")]
    let mut chunk: Vec<Event<'a>> = Vec::with_capacity(CHUNK.min(items.len()));
    #[cfg(not(feature = "std"))]
    let mut chunk: heapless::Vec<Event<'a>, CHUNK> = heapless::Vec::new();
    for part in items.chunks(CHUNK) {
        chunk.clear();
        let mut bad = None;
        for item in part {
            match conv(item) {
                // A part holds at most CHUNK items: the push always fits.
                Ok(e) => {
                    #[cfg(feature = "std")]
                    chunk.push(e);
                    #[cfg(not(feature = "std"))]
                    let _ = chunk.push(e);
                }
                Err(f) => {
                    bad = Some(f);
                    break;
                }
            }
        }
        let (done, r) = append(&chunk);
        n += done;
        if r.is_err() {
            return (n, r);
        }
        if let Some(f) = bad {
            return (n, Err(f.into()));
        }
    }
    (n, Ok(()))
}
