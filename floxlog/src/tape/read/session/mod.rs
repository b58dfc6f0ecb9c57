//! A read session: one request ([`Request`]: what to read, in which
//! order, how strictly, on how many threads) over one opened tape, the
//! plan chosen from the request before any decoding ([`Plan`]), and one
//! outcome that folds the segments that could not be opened and the
//! problems the read found ([`Session::error`]), so "did the read fail"
//! is one question.
//!
//! Front ends hand it a sink; how the tape is cut and on which threads it
//! is read stays here: frames ([`Session::frames`]), every event into a
//! column sink in one pass ([`Session::columns`]), pieces read on several
//! threads and judged as one sequential read ([`Session::pieces`]), and a
//! dataset's fragments, listed and read one at a time
//! ([`Session::fragments`], [`Session::read_fragment`]); and events pulled
//! one at a time, runs of trades read ahead through the core's batch kernel
//! ([`Session::cursor`]). Front ends also take from it what they show of
//! the tape ([`Session::tape`], [`Session::open_errors`]...), never the
//! engine's types.

use crate::tape::dir::Tape;
use crate::tape::error::TapeError;
use crate::tape::read::merge::{Filter, Item, OpenedTape, Order, DEFAULT_REORDER_BYTES};
use crate::tape::read::outcome::ReadOutcome;
use crate::tape::read::problem::Problem;
use crate::tape::read::source::{header_is_unfinished, Want};
use floxlog_core::{ReadOptions, Segment, SegmentHeader};

mod columns;
mod events;
mod fragment;
mod frames;
mod pieces;

pub use events::Events;
pub use fragment::Fragment;
pub use frames::Ahead;
pub use pieces::Piece;

/// What takes a session's frames: type and payload.
pub type FrameSink<'f> = dyn FnMut(u8, &[u8]) -> Result<(), TapeError> + 'f;

/// What a session reads and how.
#[derive(Clone, Debug)]
pub struct Request {
    /// Output order.
    pub order: Order,
    /// Which events (time range, symbols, types).
    pub filter: Filter,
    /// Time order: most bytes the orderings (16 bytes an event) of the
    /// segments read at one time may hold together (default 256 MiB).
    pub reorder_bytes: usize,
    /// Codec options (CRC checks, unknown types).
    pub read: ReadOptions,
    /// A torn tail is an error too.
    pub strict: bool,
    /// Threads decoding (0: one per core).
    pub threads: usize,
    /// Listed segments that cannot be read (missing files, names outside
    /// the tape directory) are no error of the read.
    pub allow_missing: bool,
    /// Frames decoded ahead ([`Session::frames_ahead`]): bytes of a range
    /// (0: 4 MiB), of which the pool holds a window.
    pub range_bytes: u64,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            order: Order::Time,
            filter: Filter::default(),
            reorder_bytes: DEFAULT_REORDER_BYTES,
            read: ReadOptions::default(),
            strict: false,
            threads: 0,
            allow_missing: false,
            range_bytes: 0,
        }
    }
}

/// How a session reads, decided from its request before decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// One pass on the calling thread (the merge, or one thread).
    OnePass,
    /// The tape cut into ranges decoded on several threads, handed out in
    /// file order.
    Ranges,
}

/// One read of one tape; see the module docs.
pub struct Session {
    opened: OpenedTape,
    request: Request,
    problems: Vec<Problem>,
}

impl Session {
    /// Maps every segment of `tape` for `request`.
    pub fn open(tape: Tape, request: Request) -> Session {
        Session::from_opened(OpenedTape::open(tape), request)
    }

    /// [`Session::open`] for a dataset's fragments ([`Session::fragments`],
    /// [`Session::read_fragment`]): a segment object on object storage is
    /// fetched by range, its header and index trailer when opened, then
    /// the frames a fragment reads part by part as it reads them (a local
    /// file is mapped as by [`Session::open`]).
    pub fn open_fragments(tape: Tape, request: Request) -> Session {
        Session::from_opened(OpenedTape::open_wanting(tape, Want::Cuts), request)
    }

    /// A session over a tape already mapped (the workspace's tests map a
    /// file, then change it under the read).
    #[doc(hidden)]
    pub fn from_opened(opened: OpenedTape, request: Request) -> Session {
        Session {
            opened,
            request,
            problems: Vec::new(),
        }
    }

    /// The tape read (its listing: segments, findings, symbols).
    pub fn tape(&self) -> &Tape {
        &self.opened.tape
    }

    /// The segments that could not be opened, in tape order.
    pub fn open_errors(&self) -> &[TapeError] {
        &self.opened.open_errors
    }

    /// Bytes of the segments opened.
    pub fn total_bytes(&self) -> u64 {
        self.opened.total_bytes()
    }

    /// Bytes of segment `segment`'s file (0: not opened).
    pub fn segment_bytes(&self, segment: usize) -> u64 {
        self.opened
            .files
            .get(segment)
            .and_then(Option::as_ref)
            .map_or(0, |f| f.len())
    }

    /// The event count of segment `segment`'s header, when the header is
    /// finished (its writer closed it).
    pub fn header_events(&self, segment: usize) -> Option<u64> {
        let f = self.opened.files.get(segment)?.as_ref()?;
        let seg = Segment::parse(f.bytes()).ok()?;
        let h = seg.header();
        (!header_is_unfinished(h)).then_some(u64::from(h.event_count))
    }

    /// The header of the first segment opened, if it parses.
    pub fn first_header(&self) -> Option<SegmentHeader> {
        let f = self.opened.files.iter().flatten().next()?;
        Segment::parse(f.bytes()).ok().map(|s| *s.header())
    }

    /// The request.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The request, to change between reads (a cursor's seek raises the
    /// filter's lower bound, then reads again).
    pub fn request_mut(&mut self) -> &mut Request {
        &mut self.request
    }

    /// What the read lacks before it starts, each once, in order: the
    /// listed segments that cannot be read (with the listing's offset and
    /// hint), then the segments that could not be opened.
    pub fn listing_errors(&self) -> impl Iterator<Item = TapeError> + '_ {
        let unread = self.opened.tape.unread().map(|f| {
            let mut e = TapeError::input(f.path.as_deref(), f.message.clone());
            e.offset = f.offset;
            e.hint = f.hint.clone();
            e
        });
        unread.chain(self.opened.open_errors.iter().cloned())
    }

    /// How [`Session::frames`] reads: ranges only in file order without
    /// a filter on more than one thread.
    pub(crate) fn frames_plan(&self) -> Plan {
        let r = &self.request;
        if r.order == Order::File && no_filter(&r.filter) && crate::par::threads(r.threads) > 1 {
            Plan::Ranges
        } else {
            Plan::OnePass
        }
    }

    /// Hands every event that passes the filter to `f` in the request's
    /// order (one pass: the per-event path), stopping with the error at the
    /// first event after a problem the request counts as an error. The
    /// problems found are then in [`Session::problems`]; whether the read
    /// failed is [`Session::error`].
    pub fn events(
        &mut self,
        f: &mut dyn FnMut(&Item<'_>) -> Result<(), TapeError>,
    ) -> Result<(), TapeError> {
        let strict = self.request.strict;
        let cfg = self.request.clone();
        let mut r = self.opened.reader(&cfg);
        let res = (|| {
            while let Some(it) = r.next_item()? {
                f(&it)?;
                if let Some(e) = ReadOutcome::new(r.problems(), strict).error() {
                    return Err(e);
                }
            }
            Ok(())
        })();
        self.problems = r.problems().to_vec();
        res
    }

    /// Hands every frame (type and payload, byte for byte) to `f` in the
    /// request's order, the same for either plan; stops with the error at
    /// the first frame after a problem the request counts as an error.
    /// The problems found are then in [`Session::problems`].
    pub fn frames(&mut self, f: &mut FrameSink<'_>) -> Result<(), TapeError> {
        let strict = self.request.strict;
        let stop = |problems: &[Problem]| {
            ReadOutcome::new(problems, strict)
                .error()
                .map_or(Ok(()), Err)
        };
        let mut problems = Vec::new();
        let r = match self.frames_plan() {
            Plan::Ranges => self.frames_ahead(&mut |x| match x {
                Ahead::Frame {
                    frame_type,
                    payload,
                } => {
                    f(frame_type, payload)?;
                    stop(&problems)
                }
                Ahead::Problem(p) => {
                    problems.push(p);
                    Ok(())
                }
            }),
            Plan::OnePass => {
                let cfg = self.request.clone();
                let mut r = self.opened.reader(&cfg);
                let res = (|| {
                    while let Some(it) = r.next_item()? {
                        f(it.frame.header.frame_type, it.frame.payload)?;
                        stop(r.problems())?;
                    }
                    Ok(())
                })();
                problems = r.problems().to_vec();
                res
            }
        };
        self.problems = problems;
        r
    }

    /// The problems the last read found, in the order it found them.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The read's problems, judged by the request's strictness.
    pub fn outcome(&self) -> ReadOutcome<'_> {
        ReadOutcome::new(&self.problems, self.request.strict)
    }

    /// Whether the read failed, and why (one answer for the whole read): a
    /// listed segment that cannot be read (unless the request allows it),
    /// then a segment that could not be opened, then the first problem
    /// judged an error.
    pub fn error(&self) -> Option<TapeError> {
        let unread = self
            .opened
            .tape
            .unread()
            .next()
            .filter(|_| !self.request.allow_missing);
        unread
            .map(|f| TapeError::input(f.path.as_deref(), f.message.clone()))
            .or_else(|| self.opened.open_errors.first().cloned())
            .or_else(|| self.outcome().error())
    }
}

/// Whether `f` keeps every event (ranges hand out every frame).
fn no_filter(f: &Filter) -> bool {
    f.from.is_none() && f.to.is_none() && f.symbols.is_none() && f.types.is_none()
}
