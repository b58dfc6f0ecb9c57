//! A segment scanned in ranges (as `verify -j` does on several threads)
//! folds into exactly the scan of one pass, on intact and damaged
//! segments, LZ4 and uncompressed, with and without an index.

use floxlog::core::Compression;
use floxlog::tape::check::{range_starts, split_ranges};
use floxlog::tape::check::{scan_segment, Scanner};
use floxlog_core::{ReadOptions, Segment};

mod common;
use common::mixed_segment;

fn in_ranges(data: &[u8], target: u64) -> (String, usize) {
    let sc = Scanner::new(data, ReadOptions::default());
    // The cut points of the engine's splitter (verify -j reads these).
    let starts = Segment::parse(data)
        .map(|seg| range_starts(&seg, ReadOptions::default(), target))
        .unwrap_or_default();
    let ranges = split_ranges(&starts);
    let parts: Vec<_> = ranges
        .iter()
        .map(|&(a, b)| sc.scan_range(a, b, &mut |_| {}))
        .collect();
    (format!("{:?}", sc.finish(parts)), ranges.len())
}

#[test]
fn ranges_fold_into_the_one_pass_scan() {
    for (comp, index) in [
        (Compression::Lz4, true),
        (Compression::Lz4, false),
        (Compression::None, true),
        (Compression::None, false),
    ] {
        let good = mixed_segment(comp, index, 7, 6000);
        let len = good.len();
        // Damage at many places: frames, block headers, the index, the end.
        let mut cases: Vec<Vec<u8>> = vec![good.clone()];
        for k in 1..40 {
            let at = 64 + (len - 64) * k / 40;
            let mut d = good.clone();
            d[at] ^= 0x5a;
            cases.push(d);
            cases.push(good[..at].to_vec());
        }
        let mut split = false;
        for (ci, data) in cases.iter().enumerate() {
            let one = format!(
                "{:?}",
                scan_segment(data, ReadOptions::default(), &mut |_| {})
            );
            for target in [len as u64 / 13, len as u64 / 5] {
                let (many, n) = in_ranges(data, target);
                split |= n > 3;
                assert_eq!(
                    many, one,
                    "{comp:?} index {index} case {ci} target {target}"
                );
            }
        }
        assert!(split, "{comp:?} index {index}: never split");
    }
}

#[test]
fn an_index_entry_off_the_frame_chain_is_never_a_cut() {
    use floxlog::tape::check::range_starts;
    use floxlog_core::{Segment, SegmentHeader};
    let mut seg = mixed_segment(Compression::None, true, 7, 6000);
    let s = Segment::parse(&seg).unwrap();
    let ix = s.index_unproven().unwrap().unwrap();
    let n = ix.len();
    let target = (seg.len() as u64) / 20;
    let honest = range_starts(&s, ReadOptions::default(), target);
    assert!(honest.len() > 5);
    // An entry a third of the way in moved one byte into its frame, the
    // index CRC made right again: structurally fine, off the chain.
    let k = (1..n)
        .find(|&i| honest.contains(&ix.get(i).unwrap().file_offset) && i > n / 3)
        .unwrap();
    let moved = ix.get(k).unwrap().file_offset + 1;
    let at = SegmentHeader::parse(&seg).unwrap().index_offset as usize;
    let e = at + 32 + k * 16 + 8;
    seg[e..e + 8].copy_from_slice(&moved.to_le_bytes());
    let crc = floxlog_core::crc32::crc32(&seg[at + 32..at + 32 + n * 16]);
    seg[at + 12..at + 16].copy_from_slice(&crc.to_le_bytes());
    let s = Segment::parse(&seg).unwrap();
    assert_eq!(
        s.index_unproven()
            .unwrap()
            .unwrap()
            .get(k)
            .unwrap()
            .file_offset,
        moved
    );
    for jobs in [1, 2, 3] {
        let cuts = floxlog::tape::check::range_starts_on(&s, ReadOptions::default(), target, jobs);
        assert!(!cuts.contains(&moved), "jobs {jobs}");
        // The cuts before the moved entry's frame are kept, none from it on.
        let before: Vec<u64> = honest.iter().copied().filter(|&c| c < moved - 1).collect();
        assert_eq!(cuts, before, "jobs {jobs}");
    }
    // A scan in ranges still folds into the one-pass scan.
    let one = format!(
        "{:?}",
        scan_segment(&seg, ReadOptions::default(), &mut |_| {})
    );
    assert_eq!(in_ranges(&seg, target).0, one);
}
