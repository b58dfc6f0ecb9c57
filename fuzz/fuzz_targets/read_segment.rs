//! The segment reader over arbitrary bytes. The first input byte picks how
//! the rest is presented: as a whole file, or behind a valid uncompressed or
//! LZ4 segment header (to reach frame and block parsing quickly). Every read
//! runs twice, the second time into a scratch full of the first's leftovers:
//! both must agree, event for event and error for error.
#![no_main]

use floxlog_core::{
    Compression, Event, ReadOptions, Segment, SegmentHeader, UnknownTypes, FORMAT_VERSION,
};
use libfuzzer_sys::fuzz_target;

fn read(
    data: &[u8],
    opts: ReadOptions,
    scratch: &mut [u8],
    out: &mut Vec<String>,
) -> Option<String> {
    let seg = match Segment::parse(data) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let _ = seg.index();
    let mut r = seg.reader(opts, scratch);
    loop {
        match r.next_item() {
            Ok(Some(it)) => {
                // Every event's raw frame must decode to the same event.
                assert_eq!(it.frame.event(it.position.offset).ok(), Some(it.event));
                out.push(format!("{:?}", it.event));
            }
            Ok(None) => return None,
            Err(e) => return Some(e.to_string()),
        }
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else {
        return;
    };
    let mut data = Vec::with_capacity(rest.len() + 64);
    match mode % 3 {
        0 => {}
        m => {
            let codec = if m == 1 {
                Compression::None
            } else {
                Compression::Lz4
            };
            let h = SegmentHeader {
                version: FORMAT_VERSION,
                flags: if m == 1 { 0 } else { 0x02 },
                compression: codec as u8,
                ..SegmentHeader::default()
            };
            data.extend_from_slice(&h.to_bytes());
        }
    }
    data.extend_from_slice(rest);
    for opts in [
        ReadOptions::default(),
        ReadOptions {
            verify_crc: false,
            unknown_types: UnknownTypes::Skip,
            ..floxlog_core::ReadOptions::default()
        },
    ] {
        let mut scratch = vec![0u8; 1 << 16];
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let ea = read(&data, opts, &mut scratch, &mut a);
        let eb = read(&data, opts, &mut scratch, &mut b);
        assert_eq!(a, b);
        assert_eq!(ea, eb);
    }
    let _: Option<Event> = None;
});
