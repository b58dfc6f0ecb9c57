//! The C ABI's names for the remedies the library's hints point at: its
//! functions, option fields and constants. Every tape error and finding
//! handed to C is rendered with it (the library's own wording names none).

use floxlog::tape::{Remedy, Vocabulary};

/// The C ABI's vocabulary.
pub(crate) struct CWords;

impl Vocabulary for CWords {
    fn remedy(&self, r: Remedy) -> Option<&'static str> {
        Some(match r {
            Remedy::Recover => "`floxlog_tape_recover`",
            Remedy::Verify => "`floxlog_tape_verify`",
            Remedy::IgnoreManifest => "set `ignore_manifest`",
            Remedy::SkipUnknown => "set `skip_unknown_types`",
            Remedy::NoBackup => "set `no_backup`",
            Remedy::RaiseReorderBytes => "raise `reorder_bytes`",
            Remedy::FileOrder => "read with `FLOXLOG_ORDER_FILE`",
            Remedy::SegmentClock => "`clock_ns`",
            // No C function rebuilds an index or a manifest: the neutral
            // wording says what to do without naming another interface.
            _ => return None,
        })
    }
}
