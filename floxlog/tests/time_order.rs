//! Time order is exact: on random tapes (uncompressed and LZ4, several
//! segments, overlapping or following one another, in order or not,
//! damaged or torn), `TapeReader` in time order returns exactly a plain
//! stable sort by `exchange_ts_ns` of what it returns in file order (ties
//! in file order, segments in listing order), with the same problems; and
//! the bound on ordering memory is `reorder_bytes`.

mod common;
use common::mixed_segment;
use floxlog::core::{Compression, WriterConfig};
use floxlog::segment::{finish_to_vec, vec_writer};
use floxlog::synth::mixed_event;
use floxlog::tape::read::engine::OpenedTape;
use floxlog::tape::read::{Filter, Order, Request};
use floxlog::tape::{OpenOptions, Tape};
use std::path::{Path, PathBuf};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A segment of `n` mixed events at `base + i * 10`, moved by up to
/// `jitter` either way (0: in order), with few distinct timestamps when
/// `ties` (many equal keys).
fn segment(rng: &mut Rng, z: Compression, n: u64, base: i64, jitter: i64, ties: bool) -> Vec<u8> {
    let mut w = vec_writer(WriterConfig {
        compression: z,
        index_interval: 16,
        created_ns: 1,
        ..Default::default()
    })
    .unwrap();
    let seed = rng.next();
    for i in 0..n {
        let mut ev = mixed_event(seed, i);
        let j = if jitter > 0 {
            rng.below(2 * jitter as u64 + 1) as i64 - jitter
        } else {
            0
        };
        let mut ts = base + i as i64 * 10 + j;
        if ties {
            ts = base + (ts - base).div_euclid(50) * 50;
        }
        set_ts(&mut ev, ts);
        w.append(&ev.as_event()).unwrap();
    }
    finish_to_vec(w).unwrap()
}

fn set_ts(ev: &mut floxlog::owned::OwnedEvent, ts: i64) {
    use floxlog::owned::OwnedEvent as O;
    match ev {
        O::Trade(t) => t.exchange_ts_ns = ts,
        O::Book(b) => b.head.exchange_ts_ns = ts,
        O::OptionQuote(q) => q.exchange_ts_ns = ts,
        O::PoolState(p) => p.head.exchange_ts_ns = ts,
    }
}

/// A random tape in `dir`: its segment paths.
fn tape(rng: &mut Rng, dir: &Path) -> Vec<PathBuf> {
    let k = 1 + rng.below(5);
    let mut base = 1_000_000i64;
    let mut paths = Vec::new();
    for i in 0..k {
        let z = if rng.below(2) == 0 {
            Compression::None
        } else {
            Compression::Lz4
        };
        let n = 1 + rng.below(600);
        // 15: inversions inside LZ4 blocks only, so the segment is flagged
        // Sorted while its first written event is not its earliest.
        let jitter = [0, 5, 15, 40, 3_000, 100_000][rng.below(6) as usize];
        let ties = rng.below(4) == 0;
        let mut s = segment(rng, z, n, base, jitter, ties);
        match rng.below(8) {
            0 => {
                // A flipped byte: CRC or block damage.
                let at = 64 + rng.below(s.len() as u64 - 64) as usize;
                s[at] ^= 1 << rng.below(8);
            }
            1 => s.truncate(s.len() - 1 - rng.below(s.len() as u64 / 3) as usize),
            2 => s = mixed_segment(z, false, rng.next(), 1 + rng.below(200)),
            _ => {}
        }
        let p = dir.join(format!("s{i:02}.floxlog"));
        std::fs::write(&p, s).unwrap();
        paths.push(p);
        // Next segment: after this one, touching it, or overlapping it.
        base += match rng.below(3) {
            0 => n as i64 * 10 + 1_000,
            1 => n as i64 * 10,
            _ => rng.below(n * 10) as i64,
        };
    }
    paths
}

/// (ts, event text) in the order read, and the problems (sorted).
type Read = (Vec<(i64, String)>, Vec<String>);

fn read(paths: &[PathBuf], cfg: &Request) -> Result<Read, String> {
    let t = Tape::open(paths, OpenOptions::default()).unwrap();
    let mut o = OpenedTape::open(t);
    let mut r = o.reader(cfg);
    let mut v = Vec::new();
    while let Some(it) = r.next_item().map_err(|e| e.to_string())? {
        v.push((
            it.event.exchange_ts_ns(),
            format!("{} {:?} {:?}", it.segment, it.position, it.event),
        ));
    }
    let mut p: Vec<String> = r.problems().iter().map(|p| format!("{p:?}")).collect();
    p.sort();
    Ok((v, p))
}

fn check(paths: &[PathBuf], filter: &Filter, ctx: &str) {
    let cfg = |order| Request {
        order,
        filter: filter.clone(),
        ..Request::default()
    };
    let (mut want, want_p) = read(paths, &cfg(Order::File)).unwrap();
    want.sort_by_key(|x| x.0);
    let (got, got_p) = read(paths, &cfg(Order::Time)).unwrap();
    assert_eq!(got.len(), want.len(), "{ctx}");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{ctx}: event {i}");
    }
    assert_eq!(got_p, want_p, "{ctx}");
}

#[test]
fn time_order_is_a_stable_sort_of_file_order() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..60 {
        let dir = d.path().join(format!("t{round}"));
        std::fs::create_dir(&dir).unwrap();
        let paths = tape(&mut rng, &dir);
        let filters = [
            Filter::default(),
            Filter {
                from: Some(1_000_000 + rng.below(4_000) as i64),
                to: Some(1_000_000 + 4_000 + rng.below(8_000) as i64),
                ..Filter::default()
            },
            Filter {
                types: Some([false, true, true, false, false, true]),
                symbols: Some(vec![1, 2]),
                ..Filter::default()
            },
        ];
        for (fi, f) in filters.iter().enumerate() {
            check(&paths, f, &format!("round {round} filter {fi}"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn ordering_memory_is_bounded_by_reorder_bytes() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(7);
    let cfg = |bytes| Request {
        reorder_bytes: bytes,
        ..Request::default()
    };
    for z in [Compression::None, Compression::Lz4] {
        // 5,000 events out of order: 80,000 bytes of keys.
        let p = d.path().join("shuffled.floxlog");
        std::fs::write(&p, segment(&mut rng, z, 5_000, 0, 500, false)).unwrap();
        let e = read(std::slice::from_ref(&p), &cfg(64 << 10)).unwrap_err();
        assert!(e.contains("reorder bound") && e.contains("shuffled"), "{e}");
        assert_eq!(
            read(std::slice::from_ref(&p), &cfg(256 << 10))
                .unwrap()
                .0
                .len(),
            5_000
        );
        // In order (not flagged Sorted: the writer's flag is cleared), it
        // needs no keys at all.
        let mut s = segment(&mut rng, z, 5_000, 0, 0, false);
        s[floxlog::core::segment_header::field::FLAGS] &=
            !floxlog::core::segment_header::flags::SORTED;
        std::fs::write(&p, s).unwrap();
        assert_eq!(
            read(std::slice::from_ref(&p), &cfg(1)).unwrap().0.len(),
            5_000
        );
        // Segments that follow one another are read one after the other:
        // the bound holds the keys of two (across a jittered boundary: 32
        // KiB each), not of the tape (six).
        let mut paths = Vec::new();
        for i in 0..6 {
            let q = d.path().join(format!("seq{i}.floxlog"));
            std::fs::write(&q, segment(&mut rng, z, 2_000, i * 20_000, 30, false)).unwrap();
            paths.push(q);
        }
        let (v, p) = read(&paths, &cfg(80 << 10)).unwrap();
        assert_eq!((v.len(), p.len()), (12_000, 0));
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
        check(&paths, &Filter::default(), "jittered sequence");
        // Overlapping, they are open together.
        for (i, q) in paths.iter().enumerate() {
            std::fs::write(q, segment(&mut rng, z, 2_000, i as i64, 30, false)).unwrap();
        }
        let e = read(&paths, &cfg(80 << 10)).unwrap_err();
        assert!(e.contains("reorder bound"), "{e}");
        check(&paths, &Filter::default(), "overlapping");
    }
}

/// A Sorted LZ4 segment's header `first_event_ns` is its first *written*
/// event (the reference's rule), which the block sort can move back: the
/// merge must open it by its earliest event, not by that field.
#[test]
fn a_sorted_segment_is_opened_by_its_earliest_event_not_its_header() {
    let d = tempfile::tempdir().unwrap();
    let w = |ts: &[i64]| {
        let mut w = vec_writer(WriterConfig {
            compression: Compression::Lz4,
            created_ns: 1,
            ..Default::default()
        })
        .unwrap();
        for (i, &t) in ts.iter().enumerate() {
            let mut ev = mixed_event(3, i as u64);
            set_ts(&mut ev, t);
            w.append(&ev.as_event()).unwrap();
        }
        finish_to_vec(w).unwrap()
    };
    // One block: written 100 then 50, stored 50 then 100, flagged Sorted
    // with first_event_ns 100.
    let a = w(&[100, 50]);
    let h = floxlog::core::SegmentHeader::parse(&a).unwrap();
    assert!(h.has(floxlog::core::segment_header::flags::SORTED));
    assert_eq!(h.first_event_ns, 100);
    let b = w(&[70]);
    let paths = vec![d.path().join("a.floxlog"), d.path().join("b.floxlog")];
    std::fs::write(&paths[0], a).unwrap();
    std::fs::write(&paths[1], b).unwrap();
    let (v, p) = read(&paths, &Request::default()).unwrap();
    let ts: Vec<i64> = v.iter().map(|x| x.0).collect();
    assert_eq!((ts, p.len()), (vec![50, 70, 100], 0));
    check(&paths, &Filter::default(), "sorted by block");
}

/// A segment whose Sorted flag lies: a read that relies on the flag (time
/// order, a time filter) stops with an error naming it, after events in
/// order; never a wrong order. A plain file-order read returns every event.
#[test]
fn a_lying_sorted_flag_is_an_error_not_a_wrong_order() {
    use floxlog::core::segment_header::{field, flags};
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(11);
    for z in [Compression::None, Compression::Lz4] {
        let mut s = segment(&mut rng, z, 2_000, 0, 3_000, false);
        s[field::FLAGS] |= flags::SORTED;
        let p = d.path().join("liar.floxlog");
        std::fs::write(&p, s).unwrap();
        let paths = vec![p];
        let (all, probs) = read(
            &paths,
            &Request {
                order: Order::File,
                ..Request::default()
            },
        )
        .unwrap();
        assert_eq!((all.len(), probs.len()), (2_000, 0), "{z:?}");
        for cfg in [
            Request::default(),
            Request {
                order: Order::File,
                filter: Filter {
                    to: Some(i64::MAX),
                    ..Filter::default()
                },
                ..Request::default()
            },
        ] {
            let (v, p) = read(&paths, &cfg).unwrap();
            assert!(v.len() < 2_000, "{z:?}");
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "{z:?}");
            assert_eq!(p.len(), 1, "{z:?}");
            assert!(p[0].contains("flagged Sorted"), "{z:?}: {}", p[0]);
        }
    }
}

/// One segment not flagged Sorted, read in time order: the in-order scan
/// decides whether it is read as in file order. In order, or with one
/// event of any type moved back (by a little or past many), then perhaps
/// damaged (a flipped byte, a cut, a zero tail): always a stable sort of
/// file order, with the same problems, unfiltered and filtered.
#[test]
fn one_unflagged_segment_in_order_or_nearly_is_a_stable_sort_of_file_order() {
    use floxlog::core::segment_header::{field, flags};
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x51ed_2701_90ab_cdef);
    for round in 0..120 {
        let z = if rng.below(4) == 0 {
            Compression::Lz4
        } else {
            Compression::None
        };
        let n = 1 + rng.below(500);
        let back =
            (rng.below(2) == 0).then(|| (rng.below(n), [1, 15, 2_000][rng.below(3) as usize]));
        let mut w = vec_writer(WriterConfig {
            compression: z,
            index_interval: 16,
            created_ns: 1,
            ..Default::default()
        })
        .unwrap();
        let seed = rng.next();
        for i in 0..n {
            let mut ev = mixed_event(seed, i);
            let mut ts = 1_000_000 + i as i64 * 10;
            if let Some((_, by)) = back.filter(|b| b.0 == i) {
                ts -= by;
            }
            set_ts(&mut ev, ts);
            w.append(&ev.as_event()).unwrap();
        }
        let mut s = finish_to_vec(w).unwrap();
        // As the reference profile leaves it, in order or not.
        s[field::FLAGS] &= !flags::SORTED;
        match rng.below(6) {
            0 => {
                let at = 64 + rng.below(s.len() as u64 - 64) as usize;
                s[at] ^= 1 << rng.below(8);
            }
            1 => s.truncate(s.len() - 1 - rng.below(s.len() as u64 / 2) as usize),
            2 => s.extend(std::iter::repeat_n(0u8, 1 + rng.below(100) as usize)),
            _ => {}
        }
        let p = d.path().join(format!("one{round}.floxlog"));
        std::fs::write(&p, s).unwrap();
        let paths = vec![p];
        let filters = [
            Filter::default(),
            Filter {
                types: Some([false, false, true, true, true, true]),
                ..Filter::default()
            },
        ];
        for (fi, f) in filters.iter().enumerate() {
            check(
                &paths,
                f,
                &format!("one segment, round {round} filter {fi}"),
            );
        }
    }
}
