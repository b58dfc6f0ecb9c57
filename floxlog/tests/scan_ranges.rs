//! A segment scanned in ranges (as `verify -j` does on several threads)
//! folds into exactly the scan of one pass, on intact and damaged
//! segments, LZ4 and uncompressed, with and without an index.

use floxlog::core::Compression;
use floxlog::tape::scan::{scan_segment, Scanner};
use floxlog::tape::split::{self, range_starts};
use floxlog_core::{ReadOptions, Segment};

mod common;
use common::mixed_segment;

fn in_ranges(data: &[u8], target: u64) -> (String, usize) {
    let sc = Scanner::new(data, ReadOptions::default());
    // The cut points of the engine's splitter (verify -j reads these).
    let starts = Segment::parse(data)
        .map(|seg| range_starts(&seg, ReadOptions::default(), target))
        .unwrap_or_default();
    let ranges = split::ranges(&starts);
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
