//! The CLI's names for the remedies the library's hints point at: its
//! commands and flags. Set as the program's vocabulary at start, so every
//! error, finding and JSON report the CLI prints names them.

use floxlog::tape::{Remedy, Vocabulary};

/// The CLI's vocabulary.
pub struct Cli;

impl Vocabulary for Cli {
    fn remedy(&self, r: Remedy) -> Option<&'static str> {
        Some(match r {
            Remedy::Recover => "`floxlog recover FILE`",
            Remedy::Reindex => "`floxlog reindex FILE`",
            Remedy::RebuildManifest => "`floxlog manifest DIR`",
            Remedy::RebuildFloxManifest => "`floxlog manifest --flox DIR`",
            Remedy::Verify => "`floxlog verify`",
            Remedy::IgnoreManifest => "pass --ignore-manifest",
            Remedy::SkipUnknown => "pass --skip-unknown",
            Remedy::NoBackup => "pass --no-backup",
            Remedy::RaiseReorderBytes => "raise --reorder-bytes",
            Remedy::FileOrder => "read with --file-order",
            Remedy::SmallerCreatedNs => "use a smaller --created-ns",
            Remedy::Overwrite => "pass --overwrite to replace it",
            _ => return None,
        })
    }
}
