//! The tape reader handle: a read session over the tape, its cursor, and
//! what the C calls have handed out so far.

use crate::boundary::slice_in;
use crate::codec::types::*;
use crate::error::{floxlog_result, Fail};
use crate::handle::opaque;
use crate::tape::error::{str_in, TapeFail, TapeResult};
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use floxlog::tape::read::{Events, Request, Session};
use floxlog::tape::{Filter, OpenOptions, Order, ReadOutcome, Tape, TapeError};
use floxlog_core::{ReadOptions, UnknownTypes};
use floxlog_result::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::options::*;

const TAPE_READER_MAGIC: u64 = 0x4452_4550_4154_4c46; // "FLTAPERD"

#[repr(C)]
pub(crate) struct TapeReaderHandle {
    pub(crate) magic: u64,
    /// Borrows `*session` (which is boxed, so moving the handle moves no
    /// borrowed byte). Always dropped before `session` is freed (`Drop`).
    pub(crate) events: Option<Events<'static>>,
    pub(crate) session: NonNull<Session>,
    /// The filter's own lower bound (a seek raises it, never lowers it).
    pub(crate) from: Option<i64>,
    pub(crate) segments: u64,
    pub(crate) bytes: u64,
    /// Files that could not be opened or listed: errors known at open.
    pub(crate) listing: Vec<TapeError>,
    /// Errors returned so far (listing first, then the reader's).
    pub(crate) reported: usize,
    /// A hard error of the merge (budget), returned once, then the end.
    pub(crate) fatal: Option<TapeFail>,
    pub(crate) events_out: u64,
    pub(crate) levels: Vec<MaybeUninit<floxlog_level>>,
    pub(crate) payloads: Vec<u8>,
    pub(crate) fixups: Vec<Fixup>,
    /// Each segment's path, NUL-terminated (`floxlog_tape_reader_segment_path`).
    pub(crate) paths: Vec<CString>,
    /// The session's read-ahead of trades is off (the tests' reference
    /// read); kept across seeks.
    #[cfg(test)]
    pub(crate) no_read_ahead: bool,
}

/// A pointer of a batch's event to set once the batch's buffers stop
/// moving.
#[derive(Clone, Copy)]
pub(crate) enum Fixup {
    Book {
        at: usize,
        levels: usize,
        bids: usize,
    },
    Pool {
        at: usize,
        offset: usize,
    },
}

opaque!(floxlog_tape_reader => TapeReaderHandle, magic TAPE_READER_MAGIC, null "r");

impl Drop for TapeReaderHandle {
    fn drop(&mut self) {
        // The cursor borrows the session: it goes first.
        self.events = None;
        // SAFETY: `session` came from `Box::leak` in `new` and nothing
        // borrows it any more.
        drop(unsafe { Box::from_raw(self.session.as_ptr()) });
    }
}

impl TapeReaderHandle {
    /// Lists and maps the tape, resolves the filter, asks the session for
    /// the read.
    pub(crate) fn new(
        inputs: &[PathBuf],
        o: &floxlog_tape_reader_options,
    ) -> TapeResult<TapeReaderHandle> {
        let order = match o.order {
            FLOXLOG_ORDER_TIME => Order::Time,
            FLOXLOG_ORDER_FILE => Order::File,
            _ => return Err(Fail::invalid("order is not a FLOXLOG_ORDER_* value").into()),
        };
        let f = &o.filter;
        if f.types & !TYPE_BITS != 0 {
            return Err(Fail::invalid("filter types has bits of no FLOXLOG_EVENT_* type").into());
        }
        let tape = Tape::open(
            inputs,
            OpenOptions {
                ignore_manifest: o.ignore_manifest != 0,
            },
        )?;
        // SAFETY: the caller promises `symbol_id_count` ids.
        let ids = unsafe { slice_in(f.symbol_ids, f.symbol_id_count, "opts->filter.symbol_ids") }?;
        // SAFETY: the caller promises `symbol_name_count` string pointers.
        let name_ptrs = unsafe {
            slice_in(
                f.symbol_names,
                f.symbol_name_count,
                "opts->filter.symbol_names",
            )
        }?;
        let mut names = Vec::with_capacity(name_ptrs.len());
        for p in name_ptrs {
            // SAFETY: the caller promises NUL-terminated strings.
            names.push(unsafe { str_in(*p, "a filter symbol name is NULL or not UTF-8") }?);
        }
        let symbols = match (tape.symbol_ids(&names)?, ids.is_empty()) {
            (None, true) => None,
            (named, _) => {
                let mut v = named.unwrap_or_default();
                v.extend_from_slice(ids);
                v.sort_unstable();
                v.dedup();
                Some(v)
            }
        };
        let types = (f.types != 0).then(|| core::array::from_fn(|t| f.types & (1 << t) != 0));
        let from = (f.has_from != 0).then_some(f.from_ns);
        let request = Request {
            order,
            filter: Filter {
                from,
                to: (f.has_to != 0).then_some(f.to_ns),
                symbols,
                types,
            },
            reorder_bytes: usize::try_from(o.reorder_bytes).unwrap_or(usize::MAX),
            read: ReadOptions {
                verify_crc: o.verify_crc != 0,
                unknown_types: if o.skip_unknown_types != 0 {
                    UnknownTypes::Skip
                } else {
                    UnknownTypes::Reject
                },
                ..ReadOptions::default()
            },
            strict: o.strict != 0,
            ..Request::default()
        };
        let segments = tape.segments.len() as u64;
        let paths = tape
            .segments
            .iter()
            .map(|s| CString::new(s.path.as_os_str().as_bytes()).unwrap_or_default())
            .collect();
        let session = Session::open(tape, request);
        // Listed segments that cannot be read are data the reader lacks.
        let listing = session.listing_errors().collect();
        let bytes = session.total_bytes();
        let mut h = TapeReaderHandle {
            magic: TAPE_READER_MAGIC,
            events: None,
            session: NonNull::from(Box::leak(Box::new(session))),
            from,
            segments,
            bytes,
            listing,
            reported: 0,
            fatal: None,
            events_out: 0,
            levels: Vec::new(),
            payloads: Vec::new(),
            fixups: Vec::new(),
            paths,
            #[cfg(test)]
            no_read_ahead: false,
        };
        h.restart(from);
        Ok(h)
    }

    /// A new cursor over the session, its filter reading from `from`.
    pub(crate) fn restart(&mut self, from: Option<i64>) {
        self.events = None;
        // SAFETY: `session` is a live box that nothing borrows now (the old
        // cursor was dropped above); the new cursor's borrow lasts until
        // the next restart or the drop, both of which end it first.
        let session: &'static mut Session = unsafe { &mut *self.session.as_ptr() };
        session.request_mut().filter.from = from;
        #[allow(unused_mut)]
        let mut events = session.cursor();
        #[cfg(test)]
        events.set_read_ahead(!self.no_read_ahead);
        self.events = Some(events);
        self.reported = 0;
        self.fatal = None;
    }

    /// Whether the cursor reads trades ahead (the tests compare both).
    #[cfg(test)]
    pub(crate) fn set_read_ahead(&mut self, on: bool) {
        self.no_read_ahead = !on;
        if let Some(c) = self.events.as_mut() {
            c.set_read_ahead(on);
        }
    }

    /// The cursor (always there outside `restart`).
    pub(crate) fn cursor(&mut self) -> Option<&mut Events<'static>> {
        self.events.as_mut()
    }

    /// The read so far, judged strict or lenient (problems found reading
    /// ahead show once the trades before them have been handed out).
    fn outcome(&self) -> Option<ReadOutcome<'_>> {
        let o = self.events.as_ref()?.outcome();
        Some(o.with_events(self.events_out))
    }

    /// The errors found so far, in the order they are returned.
    fn errors(&self) -> impl Iterator<Item = TapeError> + '_ {
        let problems = self.outcome().into_iter().flat_map(|o| o.errors());
        self.listing
            .iter()
            .cloned()
            .chain(problems.map(|p| p.to_error()))
    }

    /// The result of a batch call whose loop stopped after `n` events,
    /// `failure` being what stopped it, if anything: `FLOXLOG_OK` when it
    /// got events (the failure is kept for the next call), else `idle` when
    /// given (`FLOXLOG_NOT_TRADE`), else the next error or `FLOXLOG_END`.
    pub(crate) fn end_batch(
        &mut self,
        n: usize,
        failure: Option<TapeFail>,
        idle: Option<floxlog_result>,
    ) -> TapeResult<floxlog_result> {
        if n > 0 {
            if let Some(e) = failure {
                self.fatal = Some(e);
            }
            return Ok(FLOXLOG_OK);
        }
        if let Some(code) = idle {
            return Ok(code);
        }
        match failure.or_else(|| self.next_error()) {
            Some(e) => Err(e),
            None => Ok(FLOXLOG_END),
        }
    }

    /// After the last event: the next unreported error, if any.
    pub(crate) fn next_error(&mut self) -> Option<TapeFail> {
        if let Some(e) = self.fatal.take() {
            return Some(e);
        }
        let e = self.errors().nth(self.reported)?;
        self.reported += 1;
        Some(e.into())
    }

    pub(crate) fn stats(&self) -> floxlog_tape_reader_stats {
        let torn = self.outcome().map_or(0, |o| o.torn_tails());
        floxlog_tape_reader_stats {
            segments: self.segments,
            bytes: self.bytes,
            events: self.events_out,
            torn_tails: torn,
            errors: self.errors().count() as u64 + u64::from(self.fatal.is_some()),
        }
    }
}
