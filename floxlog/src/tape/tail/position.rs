//! Saved tail positions: where a tailer stands in each series of a tape,
//! and the bytes a caller stores to resume there later.
//!
//! A tape of several series (the spec layout) is followed lane by lane,
//! and the lanes advance independently, so one place in one segment
//! cannot say where the tailer stands: a position holds one entry per
//! series. A series with no entry has had nothing handed out: a resumed
//! tailer starts it at its first event.
//!
//! The saved form (`TailPosition::to_bytes`), little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `FLTP` |
//! | 4 | 1 | version (1) |
//! | 5 | 1 | reserved, 0 |
//! | 6 | 2 | entry count |
//! | 8 | … | entries: name length (1 byte, 1..=255), series name (ASCII), `created_ns` (i64), `offset` (u64), `events` (u64) |
//! | end − 4 | 4 | CRC32 (IEEE) of every byte before it |

use crate::tape::dir::TapeSegment;
use crate::tape::error::TapeError;

/// Where a tailer stands in one series: the segment (named by its
/// header's `created_ns`, which survives the listing changing), the byte
/// offset of the next frame in it (LZ4: of the block holding it), and the
/// events of that segment before that point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeriesPosition {
    /// The series (`mixed` for the flox layout, else `trades`, `book`...).
    pub series: String,
    /// The segment's `created_ns`.
    pub created_ns: i64,
    /// Byte offset of the next frame (LZ4: its block) in the segment.
    pub offset: u64,
    /// Events of the segment before it.
    pub events: u64,
}

/// A place in a tape: after the last event a tailer handed out, in every
/// series it has handed one out from (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TailPosition {
    /// One entry per series, at most one each.
    pub series: Vec<SeriesPosition>,
}

/// A place in one segment of a lane (its series is the lane's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spot {
    pub created_ns: i64,
    pub offset: u64,
    pub events: u64,
}

impl Spot {
    pub(crate) fn named(self, series: &str) -> SeriesPosition {
        SeriesPosition {
            series: series.to_string(),
            created_ns: self.created_ns,
            offset: self.offset,
            events: self.events,
        }
    }
}

/// The saved form's magic.
pub const MAGIC: [u8; 4] = *b"FLTP";
/// The saved form's version.
pub const VERSION: u8 = 1;
/// Bytes of the saved form's header (magic, version, reserved, count).
const HEAD: usize = 8;
/// Bytes of an entry besides its name.
const FIXED: usize = 1 + 8 + 8 + 8;
/// Bytes of the trailing CRC.
const CRC: usize = 4;

impl TailPosition {
    /// The entry of `series`, if any.
    pub fn get(&self, series: &str) -> Option<&SeriesPosition> {
        self.series.iter().find(|s| s.series == series)
    }

    /// Bytes of the saved form.
    pub fn saved_len(&self) -> usize {
        HEAD + self
            .series
            .iter()
            .map(|s| FIXED + s.series.len())
            .sum::<usize>()
            + CRC
    }

    /// The saved form (see the module docs). Fails for a series name
    /// that is empty or over 255 bytes, or over 65,535 entries.
    pub fn to_bytes(&self) -> Result<Vec<u8>, TapeError> {
        let count = u16::try_from(self.series.len()).map_err(|_| {
            TapeError::usage(format!(
                "a tail position holds at most 65535 series, not {}",
                self.series.len()
            ))
        })?;
        let mut out = Vec::with_capacity(self.saved_len());
        out.extend_from_slice(&MAGIC);
        out.push(VERSION);
        out.push(0);
        out.extend_from_slice(&count.to_le_bytes());
        for s in &self.series {
            let len = u8::try_from(s.series.len())
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    TapeError::usage(format!(
                        "a tail position's series name is 1 to 255 bytes, not {}",
                        s.series.len()
                    ))
                })?;
            out.push(len);
            out.extend_from_slice(s.series.as_bytes());
            out.extend_from_slice(&s.created_ns.to_le_bytes());
            out.extend_from_slice(&s.offset.to_le_bytes());
            out.extend_from_slice(&s.events.to_le_bytes());
        }
        let crc = floxlog_core::crc32::crc32(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    /// Reads the saved form back, checking every field: errors name the
    /// byte offset where it stops making sense.
    pub fn from_bytes(b: &[u8]) -> Result<TailPosition, TapeError> {
        let bad = |at: usize, what: String| {
            TapeError::input(None, format!("not a saved tail position: {what}"))
                .at(at as u64)
                .with_hint("pass the bytes a tailer's position returned, unchanged")
        };
        if b.len() < HEAD + CRC {
            return Err(bad(
                0,
                format!(
                    "{} bytes, fewer than the {} of an empty one",
                    b.len(),
                    HEAD + CRC
                ),
            ));
        }
        if b.get(..4) != Some(&MAGIC[..]) {
            return Err(bad(0, "no FLTP magic".into()));
        }
        let version = b.get(4).copied().unwrap_or(0);
        if version != VERSION {
            return Err(bad(
                4,
                format!("version {version}, this library reads {VERSION}"),
            ));
        }
        let body = b.len() - CRC;
        let stored = le_u32(b, body).unwrap_or(0);
        let crc = floxlog_core::crc32::crc32(b.get(..body).unwrap_or(&[]));
        if stored != crc {
            return Err(bad(
                body,
                format!("CRC {stored:#010x} stored, {crc:#010x} computed: the bytes changed"),
            ));
        }
        let count = b.get(6..8).map_or(0, |c| u16::from_le_bytes([c[0], c[1]]));
        let mut at = HEAD;
        let mut series: Vec<SeriesPosition> = Vec::with_capacity(usize::from(count).min(64));
        for k in 0..count {
            let len = usize::from(b.get(at).copied().unwrap_or(0));
            let name = b
                .get(at + 1..at + 1 + len)
                .filter(|_| len > 0 && at + 1 + len + FIXED - 1 <= body)
                .ok_or_else(|| bad(at, format!("entry {k} runs past the end")))?;
            let name = std::str::from_utf8(name)
                .ok()
                .filter(|n| n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_'))
                .ok_or_else(|| bad(at + 1, format!("entry {k}'s series name is not a series")))?;
            if series.iter().any(|s| s.series == name) {
                return Err(bad(at + 1, format!("series {name} is named twice")));
            }
            let f = at + 1 + len;
            let (Some(created), Some(offset), Some(events)) =
                (le_u64(b, f), le_u64(b, f + 8), le_u64(b, f + 16))
            else {
                return Err(bad(f, format!("entry {k} runs past the end")));
            };
            series.push(SeriesPosition {
                series: name.to_string(),
                created_ns: created as i64,
                offset,
                events,
            });
            at = f + 24;
        }
        if at != body {
            return Err(bad(
                at,
                format!("{} bytes after the last entry", body.saturating_sub(at)),
            ));
        }
        Ok(TailPosition { series })
    }
}

fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

fn le_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    let mut a = [0u8; 4];
    a.copy_from_slice(s);
    Some(u32::from_le_bytes(a))
}

/// The segment of `series` whose header says `created_ns`.
pub(crate) fn find_created(
    of: &[&TapeSegment],
    series: &str,
    created_ns: i64,
) -> Result<TapeSegment, TapeError> {
    for l in of {
        let Ok(f) = l.open() else {
            continue;
        };
        if floxlog_core::SegmentHeader::parse(f.bytes()).is_ok_and(|h| h.created_ns == created_ns) {
            return Ok((*l).clone());
        }
    }
    Err(TapeError::input(
        of.first().map(|l| l.path.as_path()),
        format!("no {series} segment of the tape was created at {created_ns} (the saved position's segment): removed or rewritten?"),
    )
    .with_hint("tail it from the beginning or the end"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two() -> TailPosition {
        TailPosition {
            series: vec![
                SeriesPosition {
                    series: "trades".into(),
                    created_ns: -5,
                    offset: 64,
                    events: 3,
                },
                SeriesPosition {
                    series: "book".into(),
                    created_ns: 1 << 40,
                    offset: u64::MAX,
                    events: 0,
                },
            ],
        }
    }

    #[test]
    fn the_saved_form_round_trips_at_its_documented_offsets() {
        let p = two();
        let b = p.to_bytes().unwrap();
        assert_eq!(b.len(), p.saved_len());
        assert_eq!(&b[..4], b"FLTP");
        assert_eq!(b[4], 1);
        assert_eq!(&b[6..8], &2u16.to_le_bytes());
        assert_eq!(b[8], 6);
        assert_eq!(&b[9..15], b"trades");
        assert_eq!(&b[15..23], &(-5i64).to_le_bytes());
        assert_eq!(TailPosition::from_bytes(&b).unwrap(), p);
        let empty = TailPosition::default().to_bytes().unwrap();
        assert_eq!(empty.len(), 12);
        assert_eq!(
            TailPosition::from_bytes(&empty).unwrap(),
            TailPosition::default()
        );
    }

    /// Every truncation and every single-bit change is refused with an
    /// error, never a panic or a different position.
    #[test]
    fn damaged_bytes_are_refused() {
        let b = two().to_bytes().unwrap();
        for n in 0..b.len() {
            assert!(TailPosition::from_bytes(&b[..n]).is_err(), "cut at {n}");
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut c = b.clone();
                c[i] ^= 1 << bit;
                assert!(TailPosition::from_bytes(&c).is_err(), "byte {i} bit {bit}");
            }
        }
        let e = TailPosition::from_bytes(b"nope nope nope").unwrap_err();
        assert!(e.to_string().contains("magic"), "{e}");
    }

    #[test]
    fn names_that_cannot_be_saved_are_refused() {
        let mut p = two();
        p.series[0].series = "x".repeat(256);
        assert!(p.to_bytes().is_err());
        p.series[0].series.clear();
        assert!(p.to_bytes().is_err());
    }
}
