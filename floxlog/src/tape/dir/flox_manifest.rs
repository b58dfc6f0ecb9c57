//! flox's own tape files: the binary `.manifest` ("FMAN" cache of segment
//! summaries, written by `SegmentManifest::save`) and `metadata.json`.
//!
//! `.manifest` layout (little-endian, native alignment): a 56-byte header
//! (magic `0x464D414E`, stored as the bytes `NAMF`; version 1; segment_count
//! u64; total_events u64; first/last timestamp i64; total_bytes u64;
//! symbol_count u32; checksum u32, always 0), then 296-byte entries
//! (256-byte NUL-padded file name, first/last_event_ns i64, event_count u64,
//! file_size u64, flags u32 (0x1 index, 0x2 compressed), reserved u32), then
//! `symbol_count` u32 symbol ids in ascending order.

use crate::tape::error::TapeError;
use std::path::Path;

/// File name of the binary manifest.
pub const FLOX_MANIFEST_FILE: &str = ".manifest";
/// File name of flox's recording metadata.
pub const METADATA_FILE: &str = "metadata.json";
/// The magic as a u32 (its little-endian bytes spell `NAMF`).
pub const FMAN_MAGIC: u32 = 0x464D_414E;
const HEADER_LEN: usize = 56;
const ENTRY_LEN: usize = 296;
const NAME_LEN: usize = 256;

/// One `.manifest` entry.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FloxManifestEntry {
    /// File name relative to the tape directory.
    pub filename: String,
    /// First event timestamp.
    pub first_event_ns: i64,
    /// Last event timestamp.
    pub last_event_ns: i64,
    /// Events.
    pub event_count: u64,
    /// File size from the file system.
    pub file_size: u64,
    /// 0x1 has index, 0x2 compressed.
    pub flags: u32,
}

/// A decoded `.manifest`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FloxManifest {
    /// Total events over all segments.
    pub total_events: u64,
    /// Smallest non-zero first timestamp.
    pub first_timestamp_ns: i64,
    /// Largest last timestamp.
    pub last_timestamp_ns: i64,
    /// Sum of file sizes.
    pub total_bytes: u64,
    /// Entries, sorted by first_event_ns.
    pub segments: Vec<FloxManifestEntry>,
    /// Distinct symbol ids, ascending.
    pub symbols: Vec<u32>,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

impl FloxManifest {
    /// Decodes `.manifest` bytes; errors name the offset.
    pub fn parse(b: &[u8], path: &Path) -> Result<FloxManifest, TapeError> {
        let bad = |off: u64, msg: &str| {
            TapeError::manifest(
                path,
                msg.to_string(),
                crate::tape::hint::Hint::new(
                    "it is only a cache: delete it; {} replaces it",
                    &[crate::tape::hint::Remedy::RebuildFloxManifest],
                ),
            )
            .at(off)
        };
        if b.len() < HEADER_LEN {
            return Err(bad(0, "shorter than the 56-byte FMAN header"));
        }
        if u32_at(b, 0) != FMAN_MAGIC {
            return Err(bad(0, "magic is not FMAN"));
        }
        if b[4] != 1 {
            return Err(bad(4, "FMAN version is not 1"));
        }
        let count = u64_at(b, 8);
        let symbol_count = u32_at(b, 48) as u64;
        // Saturating: a count of u64::MAX must be "too long", not a wrap.
        let need = (HEADER_LEN as u64)
            .saturating_add(count.saturating_mul(ENTRY_LEN as u64))
            .saturating_add(symbol_count.saturating_mul(4));
        if need > b.len() as u64 {
            return Err(bad(
                8,
                "segment or symbol count runs past the end of the file",
            ));
        }
        let mut m = FloxManifest {
            total_events: u64_at(b, 16),
            first_timestamp_ns: u64_at(b, 24) as i64,
            last_timestamp_ns: u64_at(b, 32) as i64,
            total_bytes: u64_at(b, 40),
            ..FloxManifest::default()
        };
        for i in 0..count as usize {
            let e = &b[HEADER_LEN + i * ENTRY_LEN..HEADER_LEN + (i + 1) * ENTRY_LEN];
            let name = &e[..NAME_LEN];
            let end = name.iter().position(|&c| c == 0).unwrap_or(NAME_LEN);
            m.segments.push(FloxManifestEntry {
                filename: String::from_utf8_lossy(&name[..end]).into_owned(),
                first_event_ns: u64_at(e, 256) as i64,
                last_event_ns: u64_at(e, 264) as i64,
                event_count: u64_at(e, 272),
                file_size: u64_at(e, 280),
                flags: u32_at(e, 288),
            });
        }
        let sym_at = HEADER_LEN + count as usize * ENTRY_LEN;
        for i in 0..symbol_count as usize {
            m.symbols.push(u32_at(b, sym_at + 4 * i));
        }
        Ok(m)
    }

    /// Encodes as flox's `SegmentManifest::save` does (checksum 0).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(
            HEADER_LEN + self.segments.len() * ENTRY_LEN + 4 * self.symbols.len(),
        );
        b.extend_from_slice(&FMAN_MAGIC.to_le_bytes());
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&(self.segments.len() as u64).to_le_bytes());
        b.extend_from_slice(&self.total_events.to_le_bytes());
        b.extend_from_slice(&self.first_timestamp_ns.to_le_bytes());
        b.extend_from_slice(&self.last_timestamp_ns.to_le_bytes());
        b.extend_from_slice(&self.total_bytes.to_le_bytes());
        b.extend_from_slice(&(self.symbols.len() as u32).to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        for s in &self.segments {
            let mut name = [0u8; NAME_LEN];
            let n = s.filename.len().min(NAME_LEN - 1);
            name[..n].copy_from_slice(&s.filename.as_bytes()[..n]);
            b.extend_from_slice(&name);
            b.extend_from_slice(&s.first_event_ns.to_le_bytes());
            b.extend_from_slice(&s.last_event_ns.to_le_bytes());
            b.extend_from_slice(&s.event_count.to_le_bytes());
            b.extend_from_slice(&s.file_size.to_le_bytes());
            b.extend_from_slice(&s.flags.to_le_bytes());
            b.extend_from_slice(&0u32.to_le_bytes());
        }
        for s in &self.symbols {
            b.extend_from_slice(&s.to_le_bytes());
        }
        b
    }

    /// Reads `dir/.manifest`; `Ok(None)` if absent.
    pub fn load(dir: &Path) -> Result<Option<FloxManifest>, TapeError> {
        let path = dir.join(FLOX_MANIFEST_FILE);
        match crate::tape::dir::files::read_side_file(&path) {
            Ok(Some(b)) => FloxManifest::parse(&b, &path).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(TapeError::io(&path, "reading the flox manifest", e)),
        }
    }
}

/// flox's `metadata.json`, kept as JSON; helpers pick out what tools use.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata(pub serde_json::Value);

impl Metadata {
    /// Reads `dir/metadata.json`; `Ok(None)` if absent.
    pub fn load(dir: &Path) -> Result<Option<Metadata>, TapeError> {
        let path = dir.join(METADATA_FILE);
        let text = crate::tape::dir::files::read_side_file(&path).and_then(|b| {
            b.map(String::from_utf8)
                .transpose()
                .map_err(|_| std::io::ErrorKind::InvalidData.into())
        });
        match text {
            Ok(None) => Ok(None),
            Ok(Some(t)) => serde_json::from_str(&t)
                .map(|v| Some(Metadata(v)))
                .map_err(|e| {
                    TapeError::manifest(
                        &path,
                        format!("not valid JSON: {e}"),
                        "fix or remove metadata.json (it is optional)",
                    )
                }),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err(TapeError::manifest(
                &path,
                "not UTF-8 text, so not JSON",
                "fix or remove metadata.json (it is optional)",
            )),
            Err(e) => Err(TapeError::io(&path, "reading metadata", e)),
        }
    }

    /// `(symbol_id, name)` pairs from `symbols`.
    pub fn symbols(&self) -> Vec<(u32, String)> {
        let mut v = Vec::new();
        if let Some(list) = self.0.get("symbols").and_then(|s| s.as_array()) {
            for s in list {
                let id = s.get("symbol_id").and_then(|x| x.as_u64());
                let name = s.get("name").and_then(|x| x.as_str());
                if let (Some(id), Some(name)) = (id, name) {
                    if let Ok(id) = u32::try_from(id) {
                        v.push((id, name.to_string()));
                    }
                }
            }
        }
        v
    }

    /// A string field, if present.
    pub fn str_field(&self, k: &str) -> Option<&str> {
        self.0.get(k).and_then(|v| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fman_round_trip_and_magic_bytes() {
        let m = FloxManifest {
            total_events: 10,
            first_timestamp_ns: 5,
            last_timestamp_ns: 9,
            total_bytes: 1234,
            segments: vec![FloxManifestEntry {
                filename: "1714123456000000000.floxlog".into(),
                first_event_ns: 5,
                last_event_ns: 9,
                event_count: 10,
                file_size: 1234,
                flags: 1,
            }],
            symbols: vec![1, 7, 9],
        };
        let b = m.to_bytes();
        assert_eq!(&b[..4], b"NAMF");
        assert_eq!(b.len(), 56 + 296 + 12);
        assert_eq!(FloxManifest::parse(&b, Path::new(".manifest")).unwrap(), m);
        assert!(FloxManifest::parse(&b[..100], Path::new(".manifest")).is_err());
    }

    #[test]
    fn segment_count_of_u64_max_is_too_long_not_a_panic() {
        let mut b = FloxManifest::default().to_bytes();
        b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = FloxManifest::parse(&b, Path::new(".manifest")).unwrap_err();
        assert!(e.to_string().contains("runs past the end"), "{e}");
    }
}
