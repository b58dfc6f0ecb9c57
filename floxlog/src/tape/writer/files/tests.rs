//! Unit tests of the tape writer.

use super::io_thread::{self, SegIo, CHUNK};
use super::*;
use crate::tape::dir::manifest::MANIFEST_FILE;
use crate::tape::TapeErrorKind;
use crate::tape::TapeWriter;
use floxlog_core::{Profile, Trade, WriterConfig};
use std::sync::Arc;

fn trade(i: u64) -> Event<'static> {
    Event::Trade(Trade {
        exchange_ts_ns: 1_000_000 + i as i64,
        price_raw: 100 + (i % 7) as i64,
        qty_raw: 3,
        trade_id: i,
        symbol_id: (i % 3) as u32,
        ..Default::default()
    })
}

fn cfg(dur: Durability, lz4: bool) -> TapeWriterConfig {
    TapeWriterConfig {
        segment: WriterConfig {
            compression: if lz4 {
                Compression::Lz4
            } else {
                Compression::None
            },
            index_interval: 32,
            ..WriterConfig::default()
        },
        durability: dur,
        created_ns: Some(1),
        ..TapeWriterConfig::default()
    }
}

/// A write that fails (on the I/O thread, or in `append` under Flush)
/// is returned, with the segment's path and what was being done, by
/// the next append, and by every call after it; nothing is written
/// after it and the segment is never finalised.
#[test]
fn the_first_io_error_is_returned_and_appends_refused() {
    let t = tempfile::tempdir().unwrap();
    for (i, dur) in [
        Durability::None,
        Durability::Flush,
        Durability::SyncEveryN(10),
        Durability::SyncOnClose,
    ]
    .into_iter()
    .enumerate()
    {
        for lz4 in [false, true] {
            let dir = t.path().join(format!("{i}-{lz4}"));
            let mut w = TapeWriter::create(&dir, cfg(dur, lz4)).unwrap();
            w.append(&trade(0)).unwrap();
            let path = w.open_paths()[0].clone();
            let len = std::fs::metadata(&path).unwrap().len();
            // From now on every write of the segment fails (EBADF).
            let ro = std::fs::File::open(&path).unwrap();
            w.files(|f| f.open[0].as_mut().unwrap().io = Arc::new(SegIo::new(ro, path.clone())));
            let mut n = 1;
            let e = loop {
                assert!(n < 1_000_000, "{dur:?}: no error after {n} events");
                match w.append(&trade(n)) {
                    Ok(()) => n += 1,
                    Err(e) => break e,
                }
            };
            let ctx = format!("{dur:?} lz4 {lz4}: {e}");
            // The event of an append whose own write failed (Flush) is
            // in the encoder, never written; later appends take nothing.
            let accepted = w.stats().events;
            assert!(accepted == n || accepted == n + 1, "{ctx}");
            assert!(matches!(e.kind, TapeErrorKind::Io(_)), "{ctx}");
            assert_eq!(e.path.as_deref(), Some(path.as_path()), "{ctx}");
            assert!(e.message.starts_with("writing the segment"), "{ctx}");
            assert!(w.written_events() <= 1, "{ctx}");
            for again in [w.append(&trade(n)), w.flush(), w.sync()] {
                assert_eq!(again.unwrap_err().message, e.message, "{ctx}");
            }
            assert_eq!(
                w.stats().events,
                accepted,
                "{ctx}: refused appends took nothing"
            );
            assert_eq!(w.close().unwrap_err().message, e.message, "{ctx}");
            assert_eq!(std::fs::metadata(&path).unwrap().len(), len, "{ctx}");
            assert!(!dir.join(MANIFEST_FILE).exists(), "{ctx}");
        }
    }
}

#[test]
fn the_writer_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<TapeWriter>();
}

/// The chunked policies hand over whole buffers and get them back:
/// however much is written, the pool creates at most MAX_IN_FLIGHT.
#[test]
fn buffers_are_recycled() {
    let t = tempfile::tempdir().unwrap();
    for lz4 in [false, true] {
        let dir = t.path().join(format!("{lz4}"));
        let mut w = TapeWriter::create(&dir, cfg(Durability::None, lz4)).unwrap();
        let mut n = 0;
        let below = |f: &mut FileWriter| {
            f.open[0]
                .as_ref()
                .is_none_or(|s| s.w.pending_offset() < 24 * CHUNK as u64)
        };
        while w.files(below) {
            w.append(&trade(n)).unwrap();
            n += 1;
        }
        let created = w.files(|f| f.io.as_ref().unwrap().buffers_created());
        assert!(
            (1..=io_thread::MAX_IN_FLIGHT).contains(&created),
            "lz4 {lz4}: {created} buffers"
        );
        w.close().unwrap();
    }
}

/// Every file of `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Trades with a book delta and a pool state now and then: in the spec
/// layout these go to other series' segments, so runs end there.
fn mixed(n: u64, payload: &[u8]) -> Vec<Event<'_>> {
    use floxlog_core::{Book, BookKind, Levels, PoolState};
    let mut v = Vec::new();
    for i in 0..n {
        v.push(trade(i));
        if i % 97 == 5 {
            v.push(Event::Book(Book {
                exchange_ts_ns: 1_000_000 + i as i64,
                recv_ts_ns: 0,
                seq: i as i64,
                symbol_id: 1,
                kind: BookKind::Delta,
                header_type: 1,
                instrument: 0,
                exchange_id: 0,
                bids: Levels::Wire(&[]),
                asks: Levels::Wire(&[]),
            }));
        }
        if i % 131 == 7 {
            v.push(Event::PoolState(PoolState {
                exchange_ts_ns: 1_000_000 + i as i64,
                recv_ts_ns: 0,
                symbol_id: 2,
                sub_type: 1,
                venue: 0,
                exchange_id: 0,
                payload: &payload[..(i % 23) as usize],
            }));
        }
    }
    v
}

/// The files of a tape `evs` appended one by one make (rotated).
fn one_by_one(c: TapeWriterConfig, evs: &[Event<'_>]) -> Vec<(String, Vec<u8>)> {
    let one = tempfile::tempdir().unwrap();
    let mut w = TapeWriter::create(one.path(), c).unwrap();
    for e in evs {
        w.append(e).unwrap();
    }
    w.close().unwrap();
    let want = files(one.path());
    assert!(want.len() > 4, "rotated: {}", want.len());
    want
}

/// `append_batch` writes the tape `append` one by one writes: the same
/// files byte for byte, across rotations, layouts and durabilities
/// (the fast path and the fallback), in batches of any size, by the
/// default writer and (uncompressed) by the journal writer, whose batches
/// seal CRCs four at a time and publish a run at once.
#[test]
fn batches_write_the_tape_single_appends_write() {
    let payload = [9u8; 32];
    let evs = mixed(3000, &payload);
    for layout in [Layout::Flox, Layout::Spec] {
        for (dur, lz4) in [
            (Durability::None, false),
            (Durability::SyncOnClose, false),
            (Durability::Flush, false),
            (Durability::None, true),
        ] {
            let c = TapeWriterConfig {
                layout,
                max_segment_bytes: 16_000,
                ..cfg(dur, lz4)
            };
            let want = one_by_one(c, &evs);
            let journals: &[bool] = if lz4 { &[false] } else { &[false, true] };
            for (&journal, batch) in journals
                .iter()
                .flat_map(|j| [1, 4, 7, 1000, evs.len()].map(|b| (j, b)))
            {
                let many = tempfile::tempdir().unwrap();
                let c = TapeWriterConfig { journal, ..c };
                let mut w = TapeWriter::create(many.path(), c).unwrap();
                for part in evs.chunks(batch) {
                    let (n, r) = w.append_batch(part);
                    r.unwrap();
                    assert_eq!(n, part.len());
                }
                assert_eq!(w.stats().events, evs.len() as u64);
                w.close().unwrap();
                let got = files(many.path());
                let names =
                    |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                assert_eq!(
                    names(&got),
                    names(&want),
                    "{layout:?} {dur:?} lz4 {lz4} journal {journal} batch {batch}"
                );
                assert!(
                    got == want,
                    "{layout:?} {dur:?} lz4 {lz4} journal {journal} batch {batch}: bytes differ"
                );
            }
        }
    }
}

/// `append_trades` (the encoder's trade batch) writes the tape `append`
/// of each trade one by one writes: the same files byte for byte, across
/// rotations, layouts, profiles and durabilities (the fast path and the
/// fallback), in batches of any size, by the default writer and the
/// journal writer; out-of-order and zero timestamps included (the
/// header's first event, sorted flag and time range).
#[test]
fn trade_batches_write_the_tape_single_appends_write() {
    let trades: Vec<Trade> = (0..3000u64)
        .map(|i| Trade {
            exchange_ts_ns: match i % 97 {
                0 if i < 200 => 0,
                5 => 10,
                _ => 1_000_000 + (i * 7919 % 1000) as i64 + i as i64 * 100,
            },
            recv_ts_ns: i as i64,
            price_raw: 100 + (i % 7) as i64,
            qty_raw: 3,
            trade_id: i,
            symbol_id: (i % 5) as u32,
            ..Default::default()
        })
        .collect();
    for layout in [Layout::Flox, Layout::Spec] {
        for profile in [Profile::Reference, Profile::Spec] {
            for (dur, lz4) in [
                (Durability::None, false),
                (Durability::SyncOnClose, false),
                (Durability::SyncEveryN(50), false),
                (Durability::None, true),
            ] {
                let mut c = TapeWriterConfig {
                    layout,
                    max_segment_bytes: 16_000,
                    ..cfg(dur, lz4)
                };
                c.segment.profile = profile;
                let evs: Vec<Event<'_>> = trades.iter().map(|t| Event::Trade(*t)).collect();
                let want = one_by_one(c, &evs);
                let journals: &[bool] = if lz4 { &[false] } else { &[false, true] };
                for (&journal, batch) in journals
                    .iter()
                    .flat_map(|j| [1, 7, 256, 1000, trades.len()].map(|b| (j, b)))
                {
                    let ctx = format!(
                        "{layout:?} {profile:?} {dur:?} lz4 {lz4} journal {journal} batch {batch}"
                    );
                    let many = tempfile::tempdir().unwrap();
                    let mut w =
                        TapeWriter::create(many.path(), TapeWriterConfig { journal, ..c }).unwrap();
                    for part in trades.chunks(batch) {
                        let (n, r) = w.append_trades(part);
                        r.unwrap();
                        assert_eq!(n, part.len(), "{ctx}");
                    }
                    assert_eq!(w.stats().events, trades.len() as u64, "{ctx}");
                    w.close().unwrap();
                    let got = files(many.path());
                    assert!(got == want, "{ctx}: files differ");
                }
            }
        }
    }
}

/// Rotation hands the closed segment to the background: once `flush` has
/// waited for it, `manifest.json` lists every closed segment in order,
/// each with its final header and index on disk; `close` leaves nothing
/// else behind (no spare file).
#[test]
fn closed_segments_are_finished_and_listed_in_the_background() {
    use crate::tape::dir::manifest::Manifest;
    use crate::tape::read::source::header_is_unfinished;
    let t = tempfile::tempdir().unwrap();
    for dur in [
        Durability::None,
        Durability::SyncOnClose,
        Durability::SyncEveryN(7),
    ] {
        for lz4 in [false, true] {
            let dir = t.path().join(format!("{dur:?}-{lz4}"));
            let c = TapeWriterConfig {
                max_segment_bytes: 16_000,
                ..cfg(dur, lz4)
            };
            let mut w = TapeWriter::create(&dir, c).unwrap();
            for i in 0..6000 {
                w.append(&trade(i)).unwrap();
            }
            w.flush().unwrap();
            let ctx = format!("{dur:?} lz4 {lz4}");
            let closed = w.closed_segments();
            assert!(closed.len() >= 3, "{ctx}: {} closed", closed.len());
            let m = Manifest::load(&dir).unwrap().expect("a manifest");
            assert_eq!(m.segments, closed, "{ctx}");
            for s in &closed {
                let bytes = std::fs::read(dir.join(&s.name)).unwrap();
                assert_eq!(bytes.len() as u64, s.size_bytes, "{ctx}: {}", s.name);
                let h = floxlog_core::SegmentHeader::parse(&bytes).unwrap();
                assert!(!header_is_unfinished(&h), "{ctx}: {} unfinished", s.name);
                assert_eq!(u64::from(h.event_count), s.event_count, "{ctx}");
            }
            let listed: u64 = closed.iter().map(|s| s.event_count).sum();
            assert!(w.written_events() >= listed, "{ctx}");
            if dur.syncs() {
                assert!(w.durable_events() >= listed, "{ctx}");
            }
            w.close().unwrap();
            for (name, _) in files(&dir) {
                let ok =
                    name == MANIFEST_FILE || name.ends_with(".floxlog") || name == ".floxlog.lock";
                assert!(ok, "{ctx}: {name} left behind");
            }
        }
    }
}

/// LZ4 blocks compressed on the compressor thread (`None`, `SyncOnClose`)
/// give the files compressing in `append` gives (the other policies): the
/// same bytes, block boundaries and rotations (by size, after the block
/// that crosses the limit, and by time), with blocks out of time order
/// (sorted by the compressor) and of varying compressibility, both layouts.
#[test]
fn lz4_blocks_compressed_in_the_background_are_those_compressed_in_place() {
    let payload: Vec<u8> = (0..64u32).map(|i| (i * 37 % 251) as u8).collect();
    let mut evs = mixed(6000, &payload);
    for (i, e) in evs.iter_mut().enumerate() {
        if let Event::Trade(t) = e {
            // Out of order within blocks; prices from a cheap LCG so that
            // blocks compress unevenly.
            t.exchange_ts_ns += ((i * 7919) % 50) as i64;
            t.price_raw = ((i as i64).wrapping_mul(6364136223846793005) >> 40) & 0xffff;
        }
    }
    for layout in [Layout::Flox, Layout::Spec] {
        for span in [None, Some(1_500)] {
            let c = |dur| TapeWriterConfig {
                layout,
                max_segment_bytes: 9_000,
                rotate_every_ns: span,
                ..cfg(dur, true)
            };
            let write = |dur| {
                let t = tempfile::tempdir().unwrap();
                let mut w = TapeWriter::create(t.path(), c(dur)).unwrap();
                for (i, e) in evs.iter().enumerate() {
                    w.append(e).unwrap();
                    if i == 2000 {
                        // A flush places every compressed block: all but
                        // the unfinished one are written.
                        w.flush().unwrap();
                        let staged: u64 = w.files(|f| {
                            let staged = f.open.iter().flatten().map(|s| s.w.stats());
                            staged.map(|s| (s.events - s.events_emitted) as u64).sum()
                        });
                        assert_eq!(w.written_events() + staged, i as u64 + 1, "{dur:?}");
                    }
                }
                w.close().unwrap();
                files(t.path())
            };
            let want = write(Durability::Flush);
            assert!(want.len() > 6, "rotated: {}", want.len());
            for dur in [
                Durability::None,
                Durability::SyncOnClose,
                Durability::SyncEveryBlock,
                Durability::SyncEveryN(100),
            ] {
                let got = write(dur);
                let names =
                    |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                assert_eq!(names(&got), names(&want), "{layout:?} {span:?} {dur:?}");
                assert!(got == want, "{layout:?} {span:?} {dur:?}: bytes differ");
            }
        }
    }
}
