//! Index parsing and seek: a small valid segment whose trailer is replaced
//! by fuzz bytes (and whose index_offset the input may also bend). Seeking
//! must never panic, must start at a frame the reader can read, and on a
//! sorted segment with a valid index must land on the first event >= t.
#![no_main]

use floxlog_core::*;
use libfuzzer_sys::fuzz_target;

fn segment() -> (Vec<u8>, u64) {
    let mut out = vec![0u8; 1 << 14];
    let mut index = [IndexEntry::default(); 16];
    let cfg = WriterConfig {
        index_interval: 3,
        ..WriterConfig::default()
    };
    let bufs = WriterBuffers {
        out: &mut out,
        block: &mut [],
        slots: &mut [],
        index: &mut index,
    };
    let mut w = SegmentWriter::new(cfg, bufs).unwrap();
    for i in 0..20i64 {
        let t = Trade {
            exchange_ts_ns: 100 + 10 * i,
            ..Trade::default()
        };
        w.append(&Event::Trade(t)).unwrap();
    }
    let h = w.finish().unwrap();
    let mut v = w.pending().to_vec();
    v[..64].copy_from_slice(&h);
    let off = SegmentHeader::parse(&v).unwrap().index_offset;
    (v, off)
}

fuzz_target!(|input: (i64, u8, Vec<u8>)| {
    let (t, bend, trailer) = input;
    let (mut seg, off) = segment();
    if bend & 1 == 1 {
        seg.truncate(off as usize);
        seg.extend_from_slice(&trailer);
    } else if let Some(x) = trailer.first() {
        // Flip one byte of the real trailer.
        let i = off as usize + (*x as usize % (seg.len() - off as usize));
        seg[i] ^= bend | 1;
    }
    if bend & 2 == 2 {
        let bent = off.wrapping_add(u64::from(bend) << 1);
        seg[40..48].copy_from_slice(&bent.to_le_bytes());
    }
    let Ok(s) = Segment::parse(&seg) else { return };
    let ix = s.index().ok().flatten();
    if let Some(ix) = &ix {
        let _ = ix.seek(t);
        assert_eq!(ix.iter().count(), ix.len());
    }
    let mut r = s.reader(ReadOptions::default(), &mut []);
    r.seek(ix.as_ref(), t);
    let first = r.next_event();
    if let (Ok(Some(ev)), true) = (&first, ix.is_some()) {
        assert!(ev.exchange_ts_ns() >= t);
    }
    if ix.is_some() && first.is_ok() {
        // With a valid index on this sorted segment the answer is exact.
        let want = (0..20i64).map(|i| 100 + 10 * i).find(|&x| x >= t);
        let got = first.ok().flatten().map(|e| e.exchange_ts_ns());
        assert_eq!(got, want);
    }
});
