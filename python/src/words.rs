//! The Python API's names for the remedies the library's hints point at:
//! its methods and keyword arguments. Every error, warning and report the
//! module hands to Python is rendered with it (the library's own wording
//! names none).

use floxlog::tape::{Remedy, Vocabulary};

/// The Python API's vocabulary.
pub struct PyWords;

impl Vocabulary for PyWords {
    fn remedy(&self, r: Remedy) -> Option<&'static str> {
        Some(match r {
            Remedy::Verify => "`Tape.verify()`",
            Remedy::SkipUnknown => "pass `skip_unknown=True`",
            Remedy::FileOrder => "read with `order=\"file\"`",
            Remedy::SmallerCreatedNs => "pass a smaller `created_ns=`",
            // The module has no recover, reindex, manifest or reorder
            // setting: the neutral wording names no other interface.
            _ => return None,
        })
    }
}
