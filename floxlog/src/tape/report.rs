//! Findings of checks (verify, tape discovery): a severity, where, and what.

use super::hint::{Hint, Vocabulary};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Info,
    /// Suspicious but readable (fails `verify` only with `--strict`).
    Warning,
    /// Integrity failure.
    Error,
}

/// What a finding is about. Its stable name ([`FindingKind::as_str`]) is
/// what the CLI, JSON reports, the C ABI and Python show: a corpus error
/// kind (`crc_mismatch`...) or a check name (`header_event_count`,
/// `manifest_mismatch`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// The codec found damage of this kind (its corpus name).
    Codec(floxlog_core::ErrorKind),
    /// A segment file could not be opened or mapped.
    Io,
    /// A worker thread failed: the tape was not read in full.
    Internal,
    /// An index entry (or the index header) disagrees with the frames.
    BadIndex,
    /// An LZ4 block's reserved flags are not zero.
    BlockFlagsNonzero,
    /// Bytes after the index trailer.
    TrailingBytes,
    /// Flagged Sorted, but timestamps go backwards.
    SortedViolation,
    /// Timestamps go backwards in a segment not flagged Sorted.
    TimestampsBackwards,
    /// An unfinished journal segment's frames end in zeros.
    ZeroTail,
    /// The header is a writer's placeholder whose counts are behind.
    StaleHeader,
    /// The header's event count disagrees with the frames.
    HeaderEventCount,
    /// The header's time range disagrees with the frames.
    HeaderTimeRange,
    /// The header's symbol count disagrees with the frames.
    HeaderSymbolCount,
    /// `manifest.json` disagrees with a segment.
    ManifestMismatch,
    /// `manifest.json` lists a file twice.
    ManifestDuplicate,
    /// A listed segment file is missing (not read).
    MissingSegment,
    /// A listed name is not a plain file name in the directory (not read).
    ManifestBadName,
    /// A listed segment is not a regular file (not read).
    NotAFile,
    /// A segment file that `manifest.json` does not list (read anyway).
    UnlistedSegment,
    /// A file named like a segment that is not a regular file (skipped).
    SkippedFile,
    /// flox's `.manifest` could not be read.
    FloxManifest,
    /// flox's `.manifest` disagrees with the segments.
    FloxManifestStale,
    /// `metadata.json` could not be read.
    Metadata,
}

impl FindingKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        use FindingKind::*;
        match self {
            Codec(k) => k.as_str(),
            Io => "io",
            Internal => "internal",
            BadIndex => "bad_index",
            BlockFlagsNonzero => "block_flags_nonzero",
            TrailingBytes => "trailing_bytes",
            SortedViolation => "sorted_violation",
            TimestampsBackwards => "timestamps_backwards",
            ZeroTail => "zero_tail",
            StaleHeader => "stale_header",
            HeaderEventCount => "header_event_count",
            HeaderTimeRange => "header_time_range",
            HeaderSymbolCount => "header_symbol_count",
            ManifestMismatch => "manifest_mismatch",
            ManifestDuplicate => "manifest_duplicate",
            MissingSegment => "missing_segment",
            ManifestBadName => "manifest_bad_name",
            NotAFile => "not_a_file",
            UnlistedSegment => "unlisted_segment",
            SkippedFile => "skipped_file",
            FloxManifest => "flox_manifest",
            FloxManifestStale => "flox_manifest_stale",
            Metadata => "metadata",
        }
    }

    /// A listed segment that was not read: data the tape should hold and a
    /// reader did not return (commands exit 1 on it unless told to skip).
    pub fn is_unread(self) -> bool {
        use FindingKind::*;
        matches!(self, MissingSegment | ManifestBadName | NotAFile)
    }

    /// A listing finding that means a directory's `manifest.json` no
    /// longer describes its files (`recover` rebuilds it).
    pub fn is_stale_manifest(self) -> bool {
        use FindingKind::*;
        matches!(
            self,
            ManifestMismatch
                | UnlistedSegment
                | MissingSegment
                | ManifestDuplicate
                | ManifestBadName
        )
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for FindingKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// What it is about (serialized as its stable name).
    pub kind: FindingKind,
    /// The file concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Byte offset in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// What was found.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

impl Finding {
    /// A new finding.
    pub fn new(
        severity: Severity,
        kind: FindingKind,
        path: Option<&Path>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            kind,
            path: path.map(Path::to_path_buf),
            offset: None,
            message: message.into(),
            hint: None,
        }
    }

    /// With a byte offset.
    pub fn at(mut self, offset: u64) -> Finding {
        self.offset = Some(offset);
        self
    }

    /// With a hint.
    pub fn hint(mut self, hint: impl Into<Hint>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    /// From a codec error in `path`.
    pub fn from_error(severity: Severity, path: &Path, e: &floxlog_core::Error) -> Finding {
        let mut message = e.what.to_string();
        if let Some(p) = e.in_block {
            message.push_str(&format!(" (frame at +{p} inside the decompressed block)"));
        }
        Finding::new(severity, FindingKind::Codec(e.kind), Some(path), message)
            .at(e.offset)
            .hint(super::error::hint_for(e))
    }

    /// The same finding with its hint in `v`'s words.
    pub fn localized(&self, v: &dyn Vocabulary) -> Finding {
        let mut f = self.clone();
        f.hint = f.hint.map(|h| h.localized(v));
        f
    }

    /// One line for humans: `error crc_mismatch path@offset: message (hint)`.
    pub fn line(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let mut s = format!("{sev}[{}]", self.kind);
        if let Some(p) = &self.path {
            s.push_str(&format!(" {}", p.display()));
            if let Some(o) = self.offset {
                s.push_str(&format!(" at byte {o}"));
            }
        } else if let Some(o) = self.offset {
            s.push_str(&format!(" at byte {o}"));
        }
        s.push_str(&format!(": {}", self.message));
        if let Some(h) = &self.hint {
            s.push_str(&format!("\n    hint: {h}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::FindingKind;

    #[test]
    fn finding_kinds_keep_their_stable_names() {
        let k = FindingKind::Codec(floxlog_core::ErrorKind::CrcMismatch);
        assert_eq!(k.as_str(), "crc_mismatch");
        assert_eq!(serde_json::to_string(&k).unwrap(), "\"crc_mismatch\"");
        assert_eq!(FindingKind::MissingSegment.to_string(), "missing_segment");
        let unread: Vec<_> = [
            FindingKind::MissingSegment,
            FindingKind::ManifestBadName,
            FindingKind::NotAFile,
            FindingKind::UnlistedSegment,
        ]
        .into_iter()
        .filter(|k| k.is_unread())
        .map(FindingKind::as_str)
        .collect();
        assert_eq!(
            unread,
            ["missing_segment", "manifest_bad_name", "not_a_file"]
        );
    }
}
