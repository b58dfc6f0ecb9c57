//! The gap finder on a thread of its own. The reading thread hands it the
//! few fields of each event it judges ([`Key`], 40 bytes) in batches, so
//! that finding gaps costs the read (`gaps`' own, or the report's) little
//! more than that copy: the finder's look-ups and windows run on the other
//! core. Memory is a few batches, whatever the tape's size.

use super::GapFinder;
use crate::see::source::{read_events, ReadEnd};
use crate::tape::{Filter, Tape, TapeError};
use floxlog_core::{Event, ReadOptions};
use std::sync::mpsc;

/// Keys a batch holds (160 KiB, within a core's L2): 4x larger batches
/// measured no faster (fewer wakes of the finder, colder keys).
const BATCH: usize = 4096;
/// Full batches in flight to the finder: the reader waits past this, so
/// at most this many plus the two being filled and emptied exist.
const IN_FLIGHT: usize = 4;

/// What the finder reads of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// exchange_ts_ns.
    pub ts: i64,
    /// recv_ts_ns.
    pub recv: i64,
    /// A trade's id, a book event's `seq` (0: none).
    pub counter: u64,
    /// symbol_id.
    pub symbol: u32,
    /// The segment it came from (the read's numbering).
    pub segment: u32,
    /// Its frame type.
    pub frame_type: u8,
    /// Which counter: [`Counted::Trade`], [`Counted::Book`] or none.
    pub counted: Counted,
}

/// Which counter an event advances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// None (option quotes, pool states).
    Nothing,
    /// The symbol's trade ids.
    Trade,
    /// The symbol's book sequence.
    Book,
}

impl Key {
    /// The key of `ev`, read from segment `segment`.
    pub fn of(segment: usize, ev: &Event<'_>) -> Key {
        let (counter, counted) = match ev {
            Event::Trade(t) => (t.trade_id, Counted::Trade),
            // A negative seq is no sequence.
            Event::Book(b) => (u64::try_from(b.seq).unwrap_or(0), Counted::Book),
            _ => (0, Counted::Nothing),
        };
        Key {
            ts: ev.exchange_ts_ns(),
            recv: ev.recv_ts_ns(),
            counter,
            symbol: ev.symbol_id(),
            segment: u32::try_from(segment).unwrap_or(u32::MAX),
            frame_type: ev.frame_type(),
            counted,
        }
    }
}

/// Reads `tape` once in time order, calling `f(segment, event)` on this
/// thread for every event `filter` keeps while `finder` judges the same
/// events on another; returns what the read could not deliver and the
/// finder, fed every event in order.
pub fn read_finding_gaps(
    tape: Tape,
    filter: Filter,
    read: ReadOptions,
    mut finder: GapFinder,
    mut f: impl FnMut(usize, &Event<'_>),
) -> Result<(ReadEnd, GapFinder), TapeError> {
    let (to_finder, full) = mpsc::sync_channel::<Vec<Key>>(IN_FLIGHT);
    let (give_back, spare) = mpsc::channel::<Vec<Key>>();
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("floxlog-gaps".into())
            .spawn_scoped(s, move || {
                for mut batch in full {
                    for k in &batch {
                        finder.push_key(k);
                    }
                    batch.clear();
                    // The reader gone: nothing more to give back to.
                    let _ = give_back.send(batch);
                }
                finder
            })
            .map_err(|e| {
                TapeError::input(
                    None,
                    format!("could not start the gap finder's thread: {e}"),
                )
            })?;
        let mut batch = Vec::with_capacity(BATCH);
        let mut lost = false;
        let end = read_events(tape, filter, read, |seg, ev| {
            batch.push(Key::of(seg, ev));
            if batch.len() == BATCH {
                let next = spare
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                // Refused only if the finder stopped (a bug): reported below.
                lost |= to_finder.send(std::mem::replace(&mut batch, next)).is_err();
            }
            f(seg, ev);
        });
        if !batch.is_empty() {
            lost |= to_finder.send(batch).is_err();
        }
        drop(to_finder);
        match (worker.join(), lost) {
            (Ok(finder), false) => end.map(|end| (end, finder)),
            _ => Err(TapeError::input(
                None,
                "internal error: the gap finder stopped before the read ended",
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::see::gaps::{find_gaps, GapKind, GapOptions, TapeInfo};
    use crate::see::source::read_events;
    use crate::tape::{OpenOptions, TapeWriter, TapeWriterConfig};
    use floxlog_core::Trade;

    /// Three symbols' trades over several batches and segments, with a
    /// trade-id jump and a silence planted in symbol 2.
    fn tape(dir: &std::path::Path) -> Tape {
        let cfg = TapeWriterConfig {
            max_segment_bytes: 256 << 10,
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(dir, cfg).unwrap();
        let mut ids = [0u64; 3];
        for i in 0..(3 * BATCH as i64 + 77) {
            let sym = (i % 3) as u32;
            ids[sym as usize] += if sym == 2 && i == 5000 { 9 } else { 1 };
            // Symbol 2 falls silent for 60 s after its 3000th event.
            let late = if sym == 2 && i > 9000 {
                60_000_000_000
            } else {
                0
            };
            let ts = 1_000_000_000_000 + i * 1_000_000 + late;
            let t = Trade {
                exchange_ts_ns: ts,
                recv_ts_ns: ts + 7,
                price_raw: 100,
                qty_raw: 1,
                trade_id: ids[sym as usize],
                symbol_id: sym + 1,
                ..Trade::default()
            };
            w.append(&Event::Trade(t)).unwrap();
        }
        w.close().unwrap();
        Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap()
    }

    #[test]
    fn the_finder_on_its_thread_finds_what_it_finds_inline() {
        let d = tempfile::tempdir().unwrap();
        let t = tape(d.path());
        assert!(t.segments.len() > 1);
        let info = TapeInfo::of(&t);
        let mut inline = GapFinder::new(1_000_000_000, info.series.len());
        let end = read_events(t, Filter::default(), ReadOptions::default(), |seg, ev| {
            inline.push(seg, ev)
        })
        .unwrap();
        let inline_ends = inline.ends.clone();
        let want = inline.finish(&info, &end);

        let d2 = tempfile::tempdir().unwrap();
        let t = tape(d2.path());
        let mut seen = 0u64;
        let finder = GapFinder::new(1_000_000_000, info.series.len());
        let (end, threaded) = read_finding_gaps(
            t,
            Filter::default(),
            ReadOptions::default(),
            finder,
            |_, _| seen += 1,
        )
        .unwrap();
        assert_eq!(seen, 3 * BATCH as u64 + 77);
        assert_eq!(end.events, seen);
        // Every batch arrived, the last short one too: the segments' last
        // events are the same.
        assert_eq!(threaded.ends, inline_ends);
        let got = threaded.finish(&info, &end);
        assert_eq!(got.gaps, want.gaps);
        let kinds: Vec<_> = got.gaps.iter().map(|g| (g.kind, g.symbol_id)).collect();
        assert!(kinds.contains(&(GapKind::TradeId, Some(3))), "{kinds:?}");
        assert!(kinds.contains(&(GapKind::Quiet, Some(3))), "{kinds:?}");
        // find_gaps goes through the thread too.
        let d3 = tempfile::tempdir().unwrap();
        let t = tape(d3.path());
        let again = find_gaps(t, &GapOptions::default()).unwrap();
        assert_eq!(again.gaps.len(), got.gaps.len());
    }
}
