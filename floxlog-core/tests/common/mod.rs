//! Helpers shared by the integration tests: whole segments in Vecs.
#![allow(dead_code)]

use floxlog_core::*;

pub fn trade(ts: i64, sym: u32) -> Trade {
    Trade {
        exchange_ts_ns: ts,
        recv_ts_ns: ts + 5,
        price_raw: 100_000_000 + ts,
        qty_raw: 1_000,
        trade_id: ts as u64,
        symbol_id: sym,
        side: (ts & 1) as u8,
        instrument: 1,
        exchange_id: 3,
    }
}

/// Owned buffers for a writer.
pub struct Bufs {
    pub out: Vec<u8>,
    pub block: Vec<u8>,
    pub slots: Vec<BlockSlot>,
    pub index: Vec<IndexEntry>,
}

impl Bufs {
    pub fn new(out: usize, block: usize, slots: usize, index: usize) -> Bufs {
        Bufs {
            out: vec![0; out],
            block: vec![0; block],
            slots: vec![BlockSlot::EMPTY; slots],
            index: vec![IndexEntry::default(); index],
        }
    }
    pub fn big() -> Bufs {
        Bufs::new(1 << 22, 1 << 22, 1 << 16, 1 << 14)
    }
    pub fn borrow(&mut self) -> WriterBuffers<'_> {
        WriterBuffers {
            out: &mut self.out,
            block: &mut self.block,
            slots: &mut self.slots,
            index: &mut self.index,
        }
    }
}

/// Writes `events` with big buffers and returns the finished segment.
pub fn write_all(cfg: WriterConfig, events: &[Event<'_>]) -> Vec<u8> {
    let mut b = Bufs::big();
    let mut w = SegmentWriter::new(cfg, b.borrow()).expect("new");
    for e in events {
        w.append(e).expect("append");
    }
    let h = w.finish().expect("finish");
    let mut v = w.pending().to_vec();
    v[..64].copy_from_slice(&h);
    v
}

/// Reads every event (as owned copies via Debug-free comparison helpers).
pub fn read_all(data: &[u8], opts: ReadOptions) -> (Vec<String>, Option<Error>) {
    let seg = match Segment::parse(data) {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut scratch = vec![0u8; 1 << 22];
    let mut r = seg.reader(opts, &mut scratch);
    let mut v = Vec::new();
    loop {
        match r.next_event() {
            Ok(Some(ev)) => v.push(format!("{ev:?}")),
            Ok(None) => return (v, None),
            Err(e) => return (v, Some(e)),
        }
    }
}

pub fn debug_all(events: &[Event<'_>]) -> Vec<String> {
    events.iter().map(|e| format!("{e:?}")).collect()
}

/// The codecs this build supports.
pub fn codecs() -> Vec<Compression> {
    let mut v = vec![Compression::None];
    if LZ4_SUPPORTED {
        v.push(Compression::Lz4);
    }
    v
}
