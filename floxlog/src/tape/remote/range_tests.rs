//! Segments fetched by range, as a dataset's fragments read them (their
//! frames part by part: parts of 16 KiB here): what a fragment fetches,
//! its events against a local read, damage inside a fragment, and an index
//! entry that is no boundary.

use super::runtime::state;
use super::tests::{put, upload_files, write_events};
use crate::tape::read::ranges::{TEST_LARGEST_PART, TEST_PARTS};
use crate::tape::read::source::SegmentFile;
use crate::tape::read::source::Want;
use crate::tape::read::{Fragment, Order, Request, Session};
use crate::tape::{OpenOptions, Tape, TapeError};
use object_store::memory::InMemory;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const RANGE: u64 = 64 << 10;

/// Parts of a fragment's read: several per fragment.
const PART: u64 = 16 << 10;

/// A tape of one segment of 40 000 mixed events at `dir`.
fn write_tape(dir: &Path, lz4: bool) {
    let segment = floxlog_core::WriterConfig {
        compression: if lz4 {
            floxlog_core::Compression::Lz4
        } else {
            floxlog_core::Compression::None
        },
        // Entries a few frames apart: parts of a few KiB.
        index_interval: 64,
        ..floxlog_core::WriterConfig::default()
    };
    write_events(dir, segment, u64::MAX, 40_000, 11);
}

/// `dir`'s files under `bucket/t/` of a new in-memory store; the URL of
/// the tape and the (local) path of its one segment.
fn upload(dir: &Path, bucket: &str) -> (Arc<InMemory>, PathBuf, PathBuf) {
    let store = Arc::new(InMemory::new());
    let (_, seg) = upload_files(&store, dir, "t/");
    state().unwrap().set_store(bucket, store.clone());
    (
        store,
        PathBuf::from(format!("s3://{bucket}/t")),
        seg.unwrap(),
    )
}

fn request() -> Request {
    Request {
        order: Order::File,
        ..Request::default()
    }
}

/// Every event of the tape at `path`, read whole, in file order, and the
/// problems' texts.
fn whole(path: &Path) -> (Vec<String>, Vec<String>) {
    let tape = Tape::open(&[path.to_path_buf()], OpenOptions::default()).unwrap();
    let mut s = Session::open(tape, request());
    let mut v = Vec::new();
    let _ = s.events(&mut |it| {
        v.push(format!("{:?}", it.event));
        Ok(())
    });
    let errs = s.problems().iter().map(|p| p.to_error().to_string());
    (v, errs.collect())
}

/// The fragments of the one-segment tape at `url`, as a dataset lists them.
fn fragments(url: &Path) -> Vec<Fragment> {
    let tape = Tape::open(&[url.to_path_buf()], OpenOptions::default()).unwrap();
    Session::open_fragments(tape, request()).fragments(RANGE)
}

/// What a dataset's read of fragment `f` gives: its events, its
/// problems' texts and its error.
fn read(url: &Path, f: &Fragment) -> (Vec<String>, Vec<String>, Option<TapeError>) {
    read_with(url, f, request())
}

/// [`read`] with request `req`.
fn read_with(
    url: &Path,
    f: &Fragment,
    req: Request,
) -> (Vec<String>, Vec<String>, Option<TapeError>) {
    crate::tape::read::ranges::TEST_STREAM_BYTES.with(|b| b.set(Some(PART)));
    let tape = Tape::open(&[url.to_path_buf()], OpenOptions::default()).unwrap();
    let s = Session::open_fragments(tape, req);
    let r = s
        .read_fragment(RANGE, f.start, f.end, &mut |p| {
            let mut v = Vec::new();
            p.read(&mut |ev: &floxlog_core::Event<'_>, _: u64| {
                v.push(format!("{ev:?}"));
                Ok(())
            })?;
            Ok(v)
        })
        .unwrap();
    let errs = r.problems.iter().map(|p| p.to_error().to_string());
    (r.kept.concat(), errs.collect(), r.fatal)
}

/// The largest distance between consecutive index entries of segment
/// file `p` (the first from the first frame).
fn max_index_gap(p: &Path) -> u64 {
    let b = std::fs::read(p).unwrap();
    let s = floxlog_core::Segment::parse(&b).unwrap();
    let ix = s.index_unproven().unwrap().unwrap();
    let mut last = 64;
    let mut gap = 0;
    for e in ix.iter().map(|e| e.file_offset).chain([s.frames_end()]) {
        gap = gap.max(e - last);
        last = e;
    }
    gap
}

#[test]
fn fragments_fetch_their_own_bytes_and_read_what_a_whole_read_reads() {
    for lz4 in [true, false] {
        let d = tempfile::tempdir().unwrap();
        write_tape(d.path(), lz4);
        let bucket = format!("ranges-{lz4}");
        let (_, url, local_seg) = upload(d.path(), &bucket);
        let frags = fragments(&url);
        assert!(frags.len() >= 4, "lz4 {lz4}: {} fragments", frags.len());
        let seg_url = url.join(local_seg.file_name().unwrap());
        let size = std::fs::metadata(&local_seg).unwrap().len();
        let (mut all, mut most) = (Vec::new(), 0);
        let gap = max_index_gap(&local_seg);
        // Uncompressed: entries a few frames apart, so parts of 16 KiB.
        assert!(lz4 || gap < PART / 2, "{gap}");
        for f in &frags {
            TEST_LARGEST_PART.with(|c| c.set(0));
            TEST_PARTS.with(|c| c.set((0, 0)));
            let (v, errs, fatal) = read(&url, f);
            assert!(errs.is_empty() && fatal.is_none(), "{errs:?} {fatal:?}");
            // Every part after the first fetched while the one before was
            // read, and none fetched that was not read.
            let (parts, ahead) = TEST_PARTS.with(|c| c.get());
            assert!(parts >= 1, "{parts} parts");
            assert_eq!(ahead, parts - 1, "lz4 {lz4}");
            most = most.max(parts);
            all.extend(v);
            // Parts of the part size: a part is one index entry's spacing
            // (an LZ4 block, or a run of frames) past the part size at most.
            let largest = TEST_LARGEST_PART.with(|c| c.get());
            assert!(0 < largest && largest <= PART + gap, "{largest} {gap}");
            // The header and trailer held; the frames fetched as read.
            let file = SegmentFile::open_wanting(&seg_url, true, Want::Cuts).unwrap();
            let start = f.start.unwrap_or(64);
            let part = file.with_frames(start, f.end.unwrap_or(u64::MAX)).unwrap();
            let (s, e) = part.fetched_frames().unwrap();
            assert_eq!(s, start);
            if let Some(end) = f.end {
                assert_eq!(e, end);
                assert!(end - start < size / 2, "{start}..{end} of {size}");
            }
        }
        assert!(most >= 3, "lz4 {lz4}: at most {most} parts a fragment");
        let local = whole(d.path());
        assert!(local.0.len() == 40_000 && local.1.is_empty());
        assert_eq!(all, local.0, "lz4 {lz4}");
        let cuts = SegmentFile::open_wanting(&seg_url, true, Want::Cuts).unwrap();
        assert_eq!(cuts.fetched_frames(), Some((64, 64)));
    }
}

#[test]
fn damage_inside_a_fragment_is_reported_as_a_whole_read_reports_it() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), true);
    let (store, url, local_seg) = upload(d.path(), "ranges-damage");
    let frags = fragments(&url);
    let f = frags[2];
    // A byte in the middle of the third fragment's blocks.
    let mut bytes = std::fs::read(&local_seg).unwrap();
    let at = (f.start.unwrap() + f.end.unwrap()) / 2;
    bytes[at as usize] ^= 0x5a;
    std::fs::write(&local_seg, &bytes).unwrap();
    let name = local_seg.file_name().unwrap().to_string_lossy();
    put(&store, &format!("t/{name}"), &bytes);
    // Judging it counts the events before it: read again from the first
    // frame, the same problem as a whole read's, URL for path.
    let (_, errs, fatal) = read(&url, &fragments(&url)[2]);
    assert!(fatal.is_none(), "{fatal:?}");
    let (_, local_errs) = whole(d.path());
    assert_eq!(local_errs.len(), 1, "{local_errs:?}");
    let local_errs: Vec<String> = local_errs
        .iter()
        .map(|e| e.replace(&*d.path().to_string_lossy(), "s3://ranges-damage/t"))
        .collect();
    assert_eq!(errs, local_errs);
}

#[test]
fn an_index_entry_that_is_no_boundary_fails_the_fragment_before_it() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), true);
    let (store, url, local_seg) = upload(d.path(), "ranges-index");
    let cut = fragments(&url)[1].start.unwrap();
    // The entry of the second fragment's cut moved into its block, its
    // CRC made good: an index that lies.
    let mut b = std::fs::read(&local_seg).unwrap();
    let h = floxlog_core::SegmentHeader::parse(&b).unwrap();
    let ix = h.index_offset as usize;
    let n = u32::from_le_bytes(b[ix + 8..ix + 12].try_into().unwrap()) as usize;
    let entries = ix + 32..ix + 32 + 16 * n;
    let k = (0..n)
        .find(|&k| b[ix + 32 + 16 * k + 8..ix + 32 + 16 * k + 16] == cut.to_le_bytes())
        .unwrap();
    let moved = cut + 16;
    b[ix + 32 + 16 * k + 8..ix + 32 + 16 * k + 16].copy_from_slice(&moved.to_le_bytes());
    let crc = floxlog_core::crc32::crc32(&b[entries]);
    b[ix + 12..ix + 16].copy_from_slice(&crc.to_le_bytes());
    let name = local_seg.file_name().unwrap().to_string_lossy();
    put(&store, &format!("t/{name}"), &b);
    let frags = fragments(&url);
    assert_eq!(frags[0].end, Some(moved));
    let (v, _, fatal) = read(&url, &frags[0]);
    assert!(v.is_empty());
    let e = fatal.expect("the cut is no boundary");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("s3://ranges-index/t/{name} at byte {cut}: "))
            && msg.contains(&format!(
                "the index entry at byte {moved} is no LZ4 block boundary"
            )),
        "{msg}"
    );
    // The fragment after it starts inside a block: an error, no events.
    let (v, errs, fatal) = read(&url, &frags[1]);
    assert!(
        v.is_empty() && (fatal.is_some() || !errs.is_empty()),
        "{errs:?}"
    );
}

#[test]
fn a_read_that_may_stop_early_fetches_no_part_ahead() {
    let d = tempfile::tempdir().unwrap();
    write_tape(d.path(), false);
    let (_, url, _) = upload(d.path(), "ranges-to");
    let frags = fragments(&url);
    let to = Request {
        filter: crate::tape::read::Filter {
            to: Some(i64::MAX),
            ..Default::default()
        },
        ..request()
    };
    let (mut all, mut bounded, mut most) = (Vec::new(), Vec::new(), 0);
    for f in &frags {
        all.extend(read(&url, f).0);
        TEST_PARTS.with(|c| c.set((0, 0)));
        let (v, errs, fatal) = read_with(&url, f, to.clone());
        assert!(errs.is_empty() && fatal.is_none(), "{errs:?} {fatal:?}");
        bounded.extend(v);
        let (parts, ahead) = TEST_PARTS.with(|c| c.get());
        assert!(parts >= 1 && ahead == 0, "{parts} parts, {ahead} ahead");
        most = most.max(parts);
    }
    assert!(most >= 3, "at most {most} parts a fragment");
    assert_eq!(bounded, all);
}
