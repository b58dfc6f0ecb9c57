//! Comparing a writer's segment with the reference: byte for byte (with the
//! structure the first difference falls in), or by the corpus's LZ4 rule.
//! The structures are found with floxlog-core's parsers, never by hand.

use floxlog_core::frame::field as frame_field;
use floxlog_core::index::field as index_field;
use floxlog_core::segment_header::field as seg_field;
use floxlog_core::{
    block, BlockHeader, FrameHeader, Index, IndexEntry, IndexHeader, ReadOptions, Segment,
    SegmentHeader, UnknownTypes,
};

const SEGMENT_FIELDS: [(usize, &str); 12] = [
    (seg_field::MAGIC, "magic"),
    (seg_field::VERSION, "version"),
    (seg_field::FLAGS, "flags"),
    (seg_field::EXCHANGE_ID, "exchange_id"),
    (seg_field::CREATED_NS, "created_ns"),
    (seg_field::FIRST_EVENT_NS, "first_event_ns"),
    (seg_field::LAST_EVENT_NS, "last_event_ns"),
    (seg_field::EVENT_COUNT, "event_count"),
    (seg_field::SYMBOL_COUNT, "symbol_count"),
    (seg_field::INDEX_OFFSET, "index_offset"),
    (seg_field::COMPRESSION, "compression"),
    (seg_field::RESERVED_START, "reserved"),
];

const FRAME_FIELDS: [(usize, &str); 5] = [
    (frame_field::SIZE, "size"),
    (frame_field::CRC32, "crc32"),
    (frame_field::TYPE, "type"),
    (frame_field::REC_VERSION, "rec_version"),
    (frame_field::FLAGS, "flags"),
];

const BLOCK_FIELDS: [(usize, &str); 5] = [
    (block::field::MAGIC, "magic"),
    (block::field::COMPRESSED_SIZE, "compressed_size"),
    (block::field::ORIGINAL_SIZE, "original_size"),
    (block::field::EVENT_COUNT, "event_count"),
    (block::field::FLAGS, "flags"),
];

const INDEX_FIELDS: [(usize, &str); 7] = [
    (index_field::MAGIC, "magic"),
    (index_field::VERSION, "version"),
    (index_field::INTERVAL, "interval"),
    (index_field::ENTRY_COUNT, "entry_count"),
    (index_field::CRC32, "crc32"),
    (index_field::FIRST_TS_NS, "first_ts_ns"),
    (index_field::LAST_TS_NS, "last_ts_ns"),
];

const ENTRY_FIELDS: [(usize, &str); 2] = [
    (index_field::ENTRY_TIMESTAMP, "timestamp_ns"),
    (index_field::ENTRY_FILE_OFFSET, "file_offset"),
];

/// The field of a fixed layout that byte `rel` falls in.
fn field_at(fields: &[(usize, &'static str)], rel: u64) -> &'static str {
    fields
        .iter()
        .rev()
        .find(|(off, _)| *off as u64 <= rel)
        .map_or("?", |f| f.1)
}

/// Says which structure of segment `data` byte `at` belongs to: the
/// segment header (and field), frame N or block N (header field or
/// payload), the index header or entry N. Best effort on damaged data.
pub fn locate(data: &[u8], at: u64) -> String {
    if at < SegmentHeader::LEN as u64 {
        return format!("segment header, field {}", field_at(&SEGMENT_FIELDS, at));
    }
    let Ok(seg) = Segment::parse(data) else {
        return "after an unreadable segment header".into();
    };
    if at >= seg.frames_end() {
        let h = seg.header();
        let off = h.index_offset;
        if off >= SegmentHeader::LEN as u64 && at >= off {
            let rel = at - off;
            if rel < IndexHeader::LEN as u64 {
                return format!("index header, field {}", field_at(&INDEX_FIELDS, rel));
            }
            let e = (rel - IndexHeader::LEN as u64) / IndexEntry::LEN as u64;
            let r = (rel - IndexHeader::LEN as u64) % IndexEntry::LEN as u64;
            return format!("index entry {e}, field {}", field_at(&ENTRY_FIELDS, r));
        }
        return "past the frame area".into();
    }
    if seg.is_compressed() {
        for (n, b) in seg.blocks().enumerate() {
            let Ok(b) = b else { break };
            if at < b.end() {
                let rel = at.saturating_sub(b.offset);
                return if rel < BlockHeader::LEN as u64 {
                    format!("block {n} header, field {}", field_at(&BLOCK_FIELDS, rel))
                } else {
                    format!(
                        "block {n} compressed data (+{})",
                        rel - BlockHeader::LEN as u64
                    )
                };
            }
        }
        return "in the block area, past the last readable block".into();
    }
    let opts = ReadOptions {
        verify_crc: false,
        unknown_types: UnknownTypes::Skip,
        tail: false,
    };
    let mut r = seg.reader(opts, &mut []);
    let mut n = 0u64;
    while let Ok(Some(it)) = r.next_item() {
        let off = it.position.offset;
        let end = off + it.frame.len() as u64;
        if at < end {
            let rel = at - off;
            let ty = it.event.type_name();
            return if rel < FrameHeader::LEN as u64 {
                format!(
                    "frame {n} ({ty}) header, field {}",
                    field_at(&FRAME_FIELDS, rel)
                )
            } else {
                format!(
                    "frame {n} ({ty}) payload (+{})",
                    rel - FrameHeader::LEN as u64
                )
            };
        }
        n += 1;
    }
    "in the frame area, past the last readable frame".into()
}

/// Byte-for-byte comparison; the error names the first differing offset
/// and what it falls in (located in the expected segment).
pub fn compare_exact(got: &[u8], expected: &[u8]) -> Result<(), String> {
    if got == expected {
        return Ok(());
    }
    let common = got.len().min(expected.len());
    match got.iter().zip(expected).position(|(a, b)| a != b) {
        Some(at) => Err(format!(
            "bytes differ at offset {at} ({}): expected 0x{:02x}, got 0x{:02x} (got {} bytes, expected {})",
            locate(expected, at as u64),
            expected[at],
            got[at],
            got.len(),
            expected.len()
        )),
        None if got.len() < expected.len() => Err(format!(
            "got {} bytes, expected {}: the output stops at offset {common} ({})",
            got.len(),
            expected.len(),
            locate(expected, common as u64)
        )),
        None => Err(format!(
            "got {} bytes, expected {}: {} extra bytes at offset {common}",
            got.len(),
            expected.len(),
            got.len() - common
        )),
    }
}

/// Blocks of the rest of `it` (each header checked).
fn count_rest<'a>(
    it: impl Iterator<Item = Result<floxlog_core::Block<'a>, floxlog_core::Error>>,
) -> Result<usize, String> {
    let mut n = 0;
    for b in it {
        b.map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}

/// Compares the blocks of `se` (expected) and `sg` (got) one pair at a
/// time: at most one decompressed block of each is held, whatever the
/// output's size. Returns the output's block offsets.
fn compare_blocks(se: &Segment<'_>, sg: &Segment<'_>) -> Result<Vec<u64>, String> {
    let (mut ie, mut ig) = (se.blocks(), sg.blocks());
    let mut scratch_e = crate::read::block_scratch(se);
    let mut scratch_g = crate::read::block_scratch(sg);
    let mut offsets = Vec::new();
    let mut i = 0usize;
    loop {
        let e = ie
            .next()
            .transpose()
            .map_err(|e| format!("expected segment: {e}"))?;
        let g = ig.next().transpose().map_err(|e| e.to_string())?;
        let (e, g) = match (e, g) {
            (None, None) => return Ok(offsets),
            (Some(_), None) => {
                let n = i + 1 + count_rest(ie).map_err(|e| format!("expected segment: {e}"))?;
                return Err(format!("expected {n} blocks, got {i}"));
            }
            (None, Some(_)) => {
                let n = i + 1 + count_rest(ig)?;
                return Err(format!("expected {i} blocks, got {n}"));
            }
            (Some(e), Some(g)) => (e, g),
        };
        offsets.push(g.offset);
        let (x, y) = (e.header, g.header);
        for (name, a, b) in [
            ("original_size", x.original_size, y.original_size),
            ("event_count", x.event_count.into(), y.event_count.into()),
            ("flags", x.flags.into(), y.flags.into()),
        ] {
            if a != b {
                return Err(format!(
                    "block {i} header (at offset {}), field {name}: expected {a}, got {b}",
                    g.offset
                ));
            }
        }
        let eb = e
            .decompress(&mut scratch_e)
            .map_err(|e| format!("expected segment: {e}"))?;
        let gb = g.decompress(&mut scratch_g).map_err(|e| e.to_string())?;
        if let Some(at) = eb.iter().zip(gb).position(|(a, b)| a != b) {
            return Err(format!(
                "block {i} (at offset {}): decompressed bytes differ at +{at}",
                g.offset
            ));
        }
        i += 1;
    }
}

fn header_fields(h: &SegmentHeader) -> [(&'static str, i128); 9] {
    [
        ("version", h.version.into()),
        ("flags", h.flags.into()),
        ("exchange_id", h.exchange_id.into()),
        ("created_ns", h.created_ns.into()),
        ("first_event_ns", h.first_event_ns.into()),
        ("last_event_ns", h.last_event_ns.into()),
        ("event_count", h.event_count.into()),
        ("symbol_count", h.symbol_count.into()),
        ("compression", h.compression.into()),
    ]
}

fn index_fields(h: &IndexHeader) -> [(&'static str, i128); 5] {
    [
        ("version", h.version.into()),
        ("interval", h.interval.into()),
        ("entry_count", h.entry_count.into()),
        ("first_ts_ns", h.first_ts_ns.into()),
        ("last_ts_ns", h.last_ts_ns.into()),
    ]
}

fn first_field_diff<const N: usize>(
    what: &str,
    e: [(&'static str, i128); N],
    g: [(&'static str, i128); N],
) -> Result<(), String> {
    match e.iter().zip(&g).find(|(a, b)| a.1 != b.1) {
        Some((a, b)) => Err(format!(
            "{what}, field {}: expected {}, got {}",
            a.0, a.1, b.1
        )),
        None => Ok(()),
    }
}

/// The corpus's rule for segments whose compressed bytes may differ:
/// segment header fields other than `index_offset`, the number of blocks,
/// each block header's `original_size`, `event_count` and `flags`, each
/// block's decompressed bytes, the index header other than its CRC, every
/// index entry's `timestamp_ns`, and every index `file_offset` of the
/// output pointing at one of its block headers. Uncompressed segments have
/// nothing that may legitimately differ and are compared byte for byte.
pub fn compare_lz4(got: &[u8], expected: &[u8]) -> Result<(), String> {
    let se = Segment::parse(expected).map_err(|e| format!("expected segment: {e}"))?;
    let sg = Segment::parse(got).map_err(|e| format!("segment header: {e}"))?;
    if !se.is_compressed() {
        return compare_exact(got, expected);
    }
    first_field_diff(
        "segment header",
        header_fields(se.header()),
        header_fields(sg.header()),
    )?;
    let bg = compare_blocks(&se, &sg)?;
    let ie = Index::parse(expected, se.header()).map_err(|e| format!("expected segment: {e}"))?;
    let ig = Index::parse(got, sg.header()).map_err(|e| format!("index: {e}"))?;
    match (ie, ig) {
        (None, None) => Ok(()),
        (Some(a), Some(b)) => {
            first_field_diff(
                "index header",
                index_fields(a.header()),
                index_fields(b.header()),
            )?;
            for (i, (ea, eb)) in a.iter().zip(b.iter()).enumerate() {
                if ea.timestamp_ns != eb.timestamp_ns {
                    return Err(format!(
                        "index entry {i}, field timestamp_ns: expected {}, got {}",
                        ea.timestamp_ns, eb.timestamp_ns
                    ));
                }
                if bg.binary_search(&eb.file_offset).is_err() {
                    return Err(format!(
                        "index entry {i}, field file_offset: {} is not a block header of the output",
                        eb.file_offset
                    ));
                }
            }
            Ok(())
        }
        (Some(_), None) => Err("the expected segment has an index, the output none".into()),
        (None, Some(_)) => Err("the output has an index, the expected segment none".into()),
    }
}
