//! The first difference between a writer's segment and the reference's,
//! named by its *source*: the record field, the block, the index entry or
//! the header field a writer sets, not a field derived from them (a frame's
//! CRC, `index_offset`, a compressed byte). Checked in the order a writer
//! produces them: records, then blocks, then the index entries, then the
//! segment header and the index header. Derived fields come last, so they
//! are blamed only when everything they derive from matches.

use floxlog_core::{
    BlockHeader, Book, FieldDesc, Fields, Index, OptionQuote, PoolState, ReadOptions, Segment,
    SegmentHeader, Trade, UnknownTypes,
};

/// Largest output compared structurally (everything is copied once);
/// bigger ones get the byte-level report only.
const MAX_BYTES: usize = 256 << 20;

/// One frame of a segment, copied out of its block.
struct Frame {
    ty: u8,
    name: &'static str,
    rec_version: u8,
    flags: u16,
    crc32: u32,
    payload: Vec<u8>,
    /// Where it is, in words.
    at: String,
}

fn frames(seg: &Segment<'_>) -> Option<Vec<Frame>> {
    let opts = ReadOptions {
        verify_crc: false,
        unknown_types: UnknownTypes::Skip,
        tail: false,
    };
    let mut scratch = crate::read::block_scratch(seg);
    let mut r = seg.reader(opts, &mut scratch);
    let mut v = Vec::new();
    loop {
        let it = match r.next_item() {
            Ok(Some(it)) => it,
            Ok(None) => return Some(v),
            Err(_) => return None,
        };
        let at = match it.position.in_block {
            None => format!("at offset {}", it.position.offset),
            Some(k) => format!(
                "in the block at offset {}, +{k} decompressed",
                it.position.offset
            ),
        };
        let h = it.frame.header;
        v.push(Frame {
            ty: h.frame_type,
            name: it.event.type_name(),
            rec_version: h.rec_version,
            flags: h.flags,
            crc32: h.crc32,
            payload: it.frame.payload.to_vec(),
            at,
        });
    }
}

fn u16_at(b: &[u8], at: usize) -> usize {
    b.get(at..at + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]) as usize)
}

/// The name of what payload byte `off` of a record of type `ty` holds.
fn field_name(ty: u8, off: usize, payload: &[u8]) -> String {
    let (fixed, head): (&[FieldDesc], usize) = match ty {
        1 => (Trade::FIXED, 48),
        2 | 3 => (<Book<'static> as Fields>::FIXED, 40),
        4 => (OptionQuote::FIXED, 112),
        5 => (<PoolState<'static> as Fields>::FIXED, 32),
        _ => return format!("payload byte +{off}"),
    };
    if off < head {
        if let Some(f) = fixed
            .iter()
            .find(|f| off >= f.offset && off < f.offset + f.ty.size())
        {
            return format!("field {}", f.name);
        }
        return match (ty, off) {
            (2 | 3, 28..=29) => "field bid_count".into(),
            (2 | 3, 30..=31) => "field ask_count".into(),
            (5, 20..=23) => "field payload_len".into(),
            _ => format!("pad byte +{off} (must be zero)"),
        };
    }
    match ty {
        2 | 3 => {
            let bids = u16_at(payload, 28);
            let level = (off - head) / 16;
            let part = if (off - head) % 16 < 8 {
                "price_raw"
            } else {
                "qty_raw"
            };
            if level < bids {
                format!("bids[{level}].{part}")
            } else {
                format!("asks[{}].{part}", level - bids)
            }
        }
        5 => format!("opaque payload byte +{}", off - head),
        _ => format!("byte +{off}, past the record's {head} bytes"),
    }
}

fn compare_frames(e: &[Frame], g: &[Frame]) -> Result<(), String> {
    for (i, (x, y)) in e.iter().zip(g).enumerate() {
        let here = format!("record {i} ({}, {} of the output)", x.name, y.at);
        if x.ty != y.ty {
            return Err(format!(
                "{here}: frame type: expected {} ({}), got {} ({})",
                x.ty, x.name, y.ty, y.name
            ));
        }
        for (what, a, b) in [
            (
                "rec_version",
                u32::from(x.rec_version),
                u32::from(y.rec_version),
            ),
            ("flags", x.flags.into(), y.flags.into()),
        ] {
            if a != b {
                return Err(format!(
                    "{here}: frame header field {what}: expected {a}, got {b}"
                ));
            }
        }
        let diff = x.payload.iter().zip(&y.payload).position(|(a, b)| a != b);
        match diff {
            Some(off) => {
                return Err(format!(
                    "{here}: {} differs (payload byte +{off}: expected 0x{:02x}, got 0x{:02x})",
                    field_name(x.ty, off, &x.payload),
                    x.payload[off],
                    y.payload[off]
                ))
            }
            None if x.payload.len() != y.payload.len() => {
                return Err(format!(
                    "{here}: payload size: expected {} bytes, got {}",
                    x.payload.len(),
                    y.payload.len()
                ))
            }
            None => {}
        }
        if x.crc32 != y.crc32 {
            return Err(format!(
                "{here}: frame header field crc32: expected 0x{:08x}, got 0x{:08x} (the payloads match)",
                x.crc32, y.crc32
            ));
        }
    }
    if e.len() != g.len() {
        let k = e.len().min(g.len());
        let first = if e.len() > k {
            format!("the first missing is record {k} ({})", e[k].name)
        } else {
            format!("the first extra is record {k} ({}, {})", g[k].name, g[k].at)
        };
        return Err(format!(
            "expected {} records, the output has {}; {first}",
            e.len(),
            g.len()
        ));
    }
    Ok(())
}

fn block_headers(seg: &Segment<'_>) -> Option<Vec<(u64, BlockHeader, Vec<u8>)>> {
    seg.blocks()
        .map(|b| b.ok().map(|b| (b.offset, b.header, b.body.to_vec())))
        .collect()
}

fn compare_blocks(e: &Segment<'_>, g: &Segment<'_>, bodies: bool) -> Result<(), String> {
    let (Some(be), Some(bg)) = (block_headers(e), block_headers(g)) else {
        return Ok(());
    };
    for (i, (x, y)) in be.iter().zip(&bg).enumerate() {
        for (what, a, b) in [
            (
                "event_count",
                u32::from(x.1.event_count),
                u32::from(y.1.event_count),
            ),
            ("original_size", x.1.original_size, y.1.original_size),
            ("flags", x.1.flags.into(), y.1.flags.into()),
        ] {
            if a != b {
                return Err(format!(
                    "block {i} (at offset {} of the output) header field {what}: expected {a}, got {b}",
                    y.0
                ));
            }
        }
        if bodies {
            if let Some(k) = x.2.iter().zip(&y.2).position(|(a, b)| a != b) {
                return Err(format!(
                    "block {i} (at offset {} of the output): the LZ4 data differs at +{k} \
                     (the decoded frames match: another LZ4 encoder; --lz4-decoded judges by decoded blocks)",
                    y.0
                ));
            }
            if x.2.len() != y.2.len() {
                return Err(format!(
                    "block {i} (at offset {} of the output) header field compressed_size: expected {}, got {} \
                     (the decoded frames match: another LZ4 encoder; --lz4-decoded judges by decoded blocks)",
                    y.0,
                    x.2.len(),
                    y.2.len()
                ));
            }
        }
    }
    if be.len() != bg.len() {
        return Err(format!(
            "expected {} blocks, the output has {}",
            be.len(),
            bg.len()
        ));
    }
    Ok(())
}

fn compare_index(e: &Segment<'_>, g: &Segment<'_>, data: (&[u8], &[u8])) -> Result<(), String> {
    let ie = Index::parse(data.0, e.header()).ok().flatten();
    let ig = match Index::parse(data.1, g.header()) {
        Ok(i) => i,
        Err(err) => return Err(format!("the output's index: {err}")),
    };
    let (a, b) = match (ie, ig) {
        (None, None) => return Ok(()),
        (Some(_), None) => return Err("the reference has an index, the output none".into()),
        (None, Some(_)) => return Err("the output has an index, the reference none".into()),
        (Some(a), Some(b)) => (a, b),
    };
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if x.timestamp_ns != y.timestamp_ns {
            return Err(format!(
                "index entry {i}, field timestamp_ns: expected {}, got {}",
                x.timestamp_ns, y.timestamp_ns
            ));
        }
        if x.file_offset != y.file_offset {
            return Err(format!(
                "index entry {i}, field file_offset: expected {}, got {}",
                x.file_offset, y.file_offset
            ));
        }
    }
    let (x, y) = (a.header(), b.header());
    let fields: [(&str, i128, i128); 6] = [
        ("entry_count", x.entry_count.into(), y.entry_count.into()),
        ("version", x.version.into(), y.version.into()),
        ("interval", x.interval.into(), y.interval.into()),
        ("first_ts_ns", x.first_ts_ns.into(), y.first_ts_ns.into()),
        ("last_ts_ns", x.last_ts_ns.into(), y.last_ts_ns.into()),
        ("crc32", x.crc32.into(), y.crc32.into()),
    ];
    first_field("index header", &fields)
}

fn first_field(what: &str, fields: &[(&str, i128, i128)]) -> Result<(), String> {
    match fields.iter().find(|f| f.1 != f.2) {
        Some((name, a, b)) => Err(format!("{what}, field {name}: expected {a}, got {b}")),
        None => Ok(()),
    }
}

fn compare_header(x: &SegmentHeader, y: &SegmentHeader) -> Result<(), String> {
    let fields: [(&str, i128, i128); 10] = [
        ("version", x.version.into(), y.version.into()),
        ("compression", x.compression.into(), y.compression.into()),
        ("exchange_id", x.exchange_id.into(), y.exchange_id.into()),
        ("created_ns", x.created_ns.into(), y.created_ns.into()),
        ("event_count", x.event_count.into(), y.event_count.into()),
        (
            "first_event_ns",
            x.first_event_ns.into(),
            y.first_event_ns.into(),
        ),
        (
            "last_event_ns",
            x.last_event_ns.into(),
            y.last_event_ns.into(),
        ),
        ("symbol_count", x.symbol_count.into(), y.symbol_count.into()),
        ("flags", x.flags.into(), y.flags.into()),
        ("index_offset", x.index_offset.into(), y.index_offset.into()),
    ];
    first_field("segment header", &fields)
}

/// The first source difference of `got` against `expected`, `None` when
/// the structures match (or the output cannot be parsed: the byte-level
/// report says where it goes wrong then). `bodies`: compare compressed
/// bytes too (byte-exact cases).
pub fn first_source_diff(got: &[u8], expected: &[u8], bodies: bool) -> Option<String> {
    if got.len() > MAX_BYTES || expected.len() > MAX_BYTES {
        return None;
    }
    let e = Segment::parse(expected).ok()?;
    let g = Segment::parse(got).ok()?;
    let (fe, fg) = (frames(&e)?, frames(&g)?);
    let r = compare_frames(&fe, &fg)
        .and_then(|()| compare_blocks(&e, &g, bodies))
        .and_then(|()| compare_index(&e, &g, (expected, got)))
        .and_then(|()| compare_header(e.header(), g.header()));
    r.err()
}

#[cfg(test)]
mod tests {
    use super::field_name;

    #[test]
    fn payload_bytes_are_named_by_field() {
        assert_eq!(field_name(1, 17, &[]), "field price_raw");
        assert_eq!(field_name(1, 47, &[]), "field exchange_id");
        let mut book = vec![0u8; 40 + 3 * 16];
        book[28] = 2; // two bids, one ask
        assert_eq!(field_name(2, 30, &book), "field ask_count");
        assert_eq!(field_name(2, 37, &book), "pad byte +37 (must be zero)");
        assert_eq!(field_name(3, 40 + 16 + 9, &book), "bids[1].qty_raw");
        assert_eq!(field_name(3, 40 + 32, &book), "asks[0].price_raw");
        assert_eq!(field_name(5, 33, &[]), "opaque payload byte +1");
        assert_eq!(field_name(4, 109, &[]), "pad byte +109 (must be zero)");
    }
}
