//! Comparing two tapes event by event (or byte by byte): are they the
//! same, and if not, where do they first differ.
//!
//! Events compare by their decoded fields (a book's levels, a pool state's
//! payload bytes), so the same events stored uncompressed or in LZ4, in
//! flox's or the spec's layout, are the same. Both tapes are read in
//! lockstep: tape A in a tight batch loop ([`TapeReader::next_run`]), each
//! of its events pulling the next one of tape B.
//!
//! After the first difference both tapes are still read to their ends, so
//! the counts per record type are of whole tapes (and damage further on is
//! still found). Damage (a reader problem other than a tolerated torn
//! tail, or any problem with `strict`) makes the outcome
//! [`DiffOutcome::Damaged`] wherever it is; the first difference is kept
//! when it came before the damage. In file order a damaged segment is
//! noticed before the next segment's first event is compared, so
//! `equal_events` counts only events compared before it; in time order the
//! merge reads ahead, so the damage may be noticed some events later.

mod bytes;
mod fields;
mod report;

use crate::tape::diff::bytes::diff_segment_bytes;
pub use crate::tape::diff::fields::{field_diffs, FieldDiff};
pub use crate::tape::diff::report::{
    ByteDifference, Damage, DiffOptions, DiffOutcome, DiffReport, EventAt, FirstDifference,
    TypeCounts,
};
use crate::tape::dir::discover::Tape;
use crate::tape::error::TapeError;
use crate::tape::read::merge::{OpenedTape, Order, TapeReader};
use crate::tape::read::outcome::ReadOutcome;
use crate::tape::read::problem::Problem;
use crate::tape::read::Request;
use floxlog_core::{Event, Position};
use std::path::PathBuf;

/// Compares tapes `a` and `b` (each a directory or segment file, either
/// layout, any compression); see the module docs. `Err` only when a tape
/// cannot be listed or a segment file not opened.
pub fn diff_tapes(a: &[PathBuf], b: &[PathBuf], o: &DiffOptions) -> Result<DiffReport, TapeError> {
    let ta = Tape::open(a, o.open)?;
    let tb = Tape::open(b, o.open)?;
    if o.bytes {
        return diff_segment_bytes(&ta, &tb);
    }
    // Listed segments that are missing count as damage.
    let listed = [(&ta, "a"), (&tb, "b")];
    let missing = listed.iter().flat_map(|&(t, name)| {
        t.unread().map(move |f| Damage {
            tape: name,
            file: f.path.clone().unwrap_or_default(),
            kind: f.kind.to_string(),
            offset: f.offset.unwrap_or(0),
            message: f.message.clone(),
            segment_events_before: 0,
            event: None,
        })
    });
    let missing: Vec<Damage> = missing.collect();
    let mut oa = opened(ta)?;
    let mut ob = opened(tb)?;
    let cfg = Request {
        order: o.order,
        read: o.read,
        ..Request::default()
    };
    let paths = |t: &OpenedTape| -> Vec<PathBuf> {
        t.tape.segments.iter().map(|s| s.path.clone()).collect()
    };
    let (pa, pb) = (paths(&oa), paths(&ob));
    let mut sa = Side::new(oa.reader(&cfg), pa, o.strict);
    let mut sb = Side::new(ob.reader(&cfg), pb, o.strict);
    let mut rep = DiffReport {
        outcome: DiffOutcome::Identical,
        mode: if o.order == Order::File {
            "file"
        } else {
            "time"
        },
        equal: 0,
        first: None,
        bytes: None,
        damage: missing,
        counts_a: TypeCounts::default(),
        counts_b: TypeCounts::default(),
    };
    let file_order = o.order == Order::File;
    let first = compare(&mut sa, &mut sb, file_order, &mut rep.equal)?;
    sa.drain()?;
    sb.drain()?;
    rep.damage.extend(sa.damage("a", file_order));
    rep.damage.extend(sb.damage("b", file_order));
    rep.first = first;
    rep.counts_a = sa.tally.counts;
    rep.counts_b = sb.tally.counts;
    rep.outcome = if !rep.damage.is_empty() {
        DiffOutcome::Damaged
    } else if rep.first.is_some() {
        DiffOutcome::Different
    } else {
        DiffOutcome::Identical
    };
    Ok(rep)
}

/// Maps the segments; a file that cannot be opened is an I/O error.
fn opened(t: Tape) -> Result<OpenedTape, TapeError> {
    let mut o = OpenedTape::open(t);
    let first = o.open_errors.drain(..).next();
    match first {
        Some(e) => Err(e),
        None => Ok(o),
    }
}

/// Events compared per batch of tape A (between checks for its damage).
const BATCH: usize = 1 << 16;

/// What was read of one tape.
struct Tally {
    counts: TypeCounts,
    /// Events per segment, for the event number of a damaged segment.
    per_segment: Vec<u64>,
}

impl Tally {
    #[inline]
    fn add(&mut self, segment: usize, frame_type: u8) {
        self.counts.add(frame_type);
        if let Some(n) = self.per_segment.get_mut(segment) {
            *n += 1;
        }
    }
}

/// One tape being read.
struct Side<'a> {
    r: TapeReader<'a>,
    tally: Tally,
    /// The segment files, by segment number.
    paths: Vec<PathBuf>,
    strict: bool,
}

impl<'a> Side<'a> {
    fn new(r: TapeReader<'a>, paths: Vec<PathBuf>, strict: bool) -> Side<'a> {
        Side {
            r,
            tally: Tally {
                counts: TypeCounts::default(),
                per_segment: vec![0; paths.len()],
            },
            paths,
            strict,
        }
    }

    fn damaging(&self, p: &Problem) -> bool {
        ReadOutcome::new(self.r.problems(), self.strict).is_error(p)
    }

    fn damaged(&self) -> bool {
        self.r.problems().iter().any(|p| self.damaging(p))
    }

    /// Reads the rest, counting.
    fn drain(&mut self) -> Result<(), TapeError> {
        let tally = &mut self.tally;
        while self.r.next_run(BATCH, |seg, _, ev| {
            tally.add(seg, ev.frame_type());
            true
        })? > 0
        {}
        Ok(())
    }

    fn damage(&self, tape: &'static str, file_order: bool) -> Vec<Damage> {
        let problems = self.r.problems().iter().filter(|p| self.damaging(p));
        problems
            .map(|p| Damage {
                tape,
                file: p.path.clone(),
                kind: p.error.kind.to_string(),
                offset: p.error.offset,
                message: p.error.what.to_string(),
                segment_events_before: p.events_before,
                event: file_order.then(|| {
                    let before: u64 = self.tally.per_segment.iter().take(p.segment).sum();
                    before + p.events_before
                }),
            })
            .collect()
    }
}

/// Where comparing stopped.
enum Stop {
    /// A difference (or one tape ended first).
    Differ(FirstDifference),
    /// A tape is damaged: counting goes on, comparing does not.
    Damaged,
}

/// Tape A's event and where it is.
struct AEvent<'e, 'x> {
    segment: usize,
    position: Position,
    event: &'e Event<'x>,
    paths: &'e [PathBuf],
}

/// Compares A's event with B's next one; both are counted (consumed).
fn step(
    a: AEvent<'_, '_>,
    tally_a: &mut Tally,
    sb: &mut Side<'_>,
    equal: &mut u64,
) -> Result<Option<Stop>, TapeError> {
    let ev = a.event;
    tally_a.add(a.segment, ev.frame_type());
    let mut got = None;
    sb.r.next_run(1, |seg, pos, bev| {
        // Field by field only once they differ.
        let fields = (ev != bev).then(|| field_diffs(ev, bev));
        got = Some((seg, pos, bev.frame_type(), fields));
        true
    })?;
    if let Some((seg, _, ft, _)) = &got {
        sb.tally.add(*seg, *ft);
    }
    if sb.damaged() {
        return Ok(Some(Stop::Damaged));
    }
    let here = || at(a.paths, a.segment, a.position, ev.type_name());
    Ok(match got {
        Some((_, _, _, None)) => {
            *equal += 1;
            None
        }
        Some((seg, pos, ft, Some(fields))) => Some(Stop::Differ(FirstDifference {
            event: *equal,
            a: Some(here()),
            b: Some(at(&sb.paths, seg, pos, type_name(ft))),
            fields,
        })),
        None => Some(Stop::Differ(FirstDifference {
            event: *equal,
            a: Some(here()),
            b: None,
            fields: Vec::new(),
        })),
    })
}

/// The lockstep comparison, up to the first difference or damage; counts
/// every event it consumes, and `equal` the ones that compared equal.
fn compare(
    sa: &mut Side<'_>,
    sb: &mut Side<'_>,
    file_order: bool,
    equal: &mut u64,
) -> Result<Option<FirstDifference>, TapeError> {
    if sa.damaged() || sb.damaged() {
        return Ok(None);
    }
    // In file order a segment's problem is recorded before the next
    // segment's first event is handed out: declining that event ends the
    // batch, A's problems are looked at, and the event is then taken with
    // `current()`. (A declined event is not handed out again by the next
    // `next_run`; a stop also declines, its event already counted.)
    let mut a_seg = usize::MAX;
    loop {
        let mut stop: Option<Stop> = None;
        let mut err = None;
        let mut held = false;
        let (ra, tally_a, paths) = (&mut sa.r, &mut sa.tally, &sa.paths[..]);
        let n = ra.next_run(BATCH, |segment, position, event| {
            if file_order && segment != a_seg {
                a_seg = segment;
                held = true;
                return false;
            }
            let a = AEvent {
                segment,
                position,
                event,
                paths,
            };
            match step(a, tally_a, sb, equal) {
                Ok(None) => true,
                Ok(s) => {
                    stop = s;
                    false
                }
                Err(e) => {
                    err = Some(e);
                    false
                }
            }
        })?;
        if let Some(e) = err {
            return Err(e);
        }
        if sa.damaged() {
            return Ok(None);
        }
        if held && stop.is_none() {
            let (tally_a, paths) = (&mut sa.tally, &sa.paths[..]);
            if let Some(it) = sa.r.current()? {
                let a = AEvent {
                    segment: it.segment,
                    position: it.position,
                    event: &it.event,
                    paths,
                };
                stop = step(a, tally_a, sb, equal)?;
            }
        }
        match stop {
            Some(Stop::Damaged) => return Ok(None),
            Some(Stop::Differ(d)) => return Ok(Some(d)),
            None if n == 0 && !held => break,
            None => {}
        }
    }
    // A ended: B must end too.
    let mut extra = None;
    let (rb, tally_b, paths) = (&mut sb.r, &mut sb.tally, &sb.paths[..]);
    rb.next_run(1, |seg, pos, bev| {
        tally_b.add(seg, bev.frame_type());
        extra = Some(at(paths, seg, pos, bev.type_name()));
        true
    })?;
    if sb.damaged() {
        return Ok(None);
    }
    Ok(extra.map(|b| FirstDifference {
        event: *equal,
        a: None,
        b: Some(b),
        fields: Vec::new(),
    }))
}

/// An event's place, for the report.
fn at(paths: &[PathBuf], segment: usize, p: Position, type_name: &'static str) -> EventAt {
    EventAt {
        segment,
        file: paths.get(segment).cloned().unwrap_or_default(),
        offset: p.offset,
        in_block: p.in_block,
        type_name,
    }
}

fn type_name(frame_type: u8) -> &'static str {
    floxlog_core::consts::frame_type::name(frame_type).unwrap_or("unknown")
}
