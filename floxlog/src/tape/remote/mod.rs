//! Tapes on object storage, read in place: `s3://bucket/key` wherever a
//! reader takes a path.
//!
//! A URL stays a [`Path`] through the tape layer (`s3://bucket/prefix/x.floxlog`
//! joins and names files as a path does), so every error names the URL
//! exactly as a local read names the file. The few places that would touch
//! the file system ask [`is_url`] first:
//!
//! - [`Tape::open`](crate::tape::Tape::open): a URL is a tape "directory"
//!   when objects lie under `key/` (listed by the store's list call, one
//!   level), else one segment object.
//! - `SegmentFile::open_wanting`: a segment object is fetched by range
//!   requests of at most [`PART_BYTES`], [`PARTS_IN_FLIGHT`] at a time, each
//!   conditional on the ETag the listing saw (an object replaced since is
//!   an error that says "changed; list again", never a mix of two objects):
//!   whole, or for a dataset's fragments only its header, index trailer and
//!   the fragment's frames (`crate::tape::read::Want`).
//! - side files (`manifest.json`, `metadata.json`, flox's `.manifest`): one
//!   GET each; a missing one is absent, as on disk.
//!
//! What it costs: what was fetched of a segment object is held in memory
//! while it is open. A whole read opens every segment of a tape before
//! reading (a time-ordered merge reads them all at once), so it holds the
//! bytes of the objects it reads; `verify` on one thread holds one at a
//! time; a dataset's fragment holds two parts of its frames at most (one read,
//! the next fetched).
//!
//! Writing: [`upload_dir`] puts a finished local directory (an export's
//! dataset) under a prefix, object by object (stores have no rename; see
//! `put.rs` for what that costs and what it still promises). Every other
//! writer refuses a URL ([`refuse_writing`]).
//!
//! Without the `object-store` cargo feature a URL is a usage error that
//! says so (the core and C libraries build without an HTTP stack).

#[cfg(feature = "object-store")]
mod fetch;
#[cfg(feature = "object-store")]
mod options;
#[cfg(feature = "object-store")]
mod put;
#[cfg(all(test, feature = "object-store"))]
mod put_tests;
#[cfg(all(test, feature = "object-store"))]
mod range_tests;
#[cfg(feature = "object-store")]
mod runtime;
#[cfg(feature = "object-store")]
mod store;
#[cfg(all(test, feature = "object-store"))]
mod tests;
mod url;

use crate::tape::error::TapeError;
use std::path::Path;
pub use url::is_url;

/// What an upload did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uploaded {
    /// Objects written.
    pub objects: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Objects deleted under the prefix (replacing: not part of the new
    /// dataset).
    pub deleted: u64,
}

/// Bytes of one range request.
pub const PART_BYTES: u64 = 8 << 20;
/// Range requests of one object in flight at once.
pub const PARTS_IN_FLIGHT: usize = 4;

/// What a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A prefix with objects under it (a tape directory).
    Prefix,
    /// One object (a segment).
    Object,
}

/// An object a listing saw directly under a prefix: its name (the last
/// part of its key) and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Name under the prefix.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
}

#[cfg(feature = "object-store")]
mod imp {
    pub use super::fetch::{
        fetch_range, kind, list, listed_size, names, object_size, read_side, stats,
    };
    pub use super::put::{exists, occupied, upload_dir};
    use crate::tape::error::TapeError;
    use std::path::Path;

    pub fn configure(url: &Path, options: Vec<(String, String)>) -> Result<(), TapeError> {
        let (bucket, _) = super::url::split(url)?;
        // Checked now, where the caller gave them: not at a first read.
        super::store::check_options(&bucket, &options)?;
        if super::options::set(&bucket, options) {
            super::runtime::state()?.forget_store(&bucket);
        }
        Ok(())
    }
}

#[cfg(not(feature = "object-store"))]
mod imp {
    use super::{Entry, Kind, Uploaded};
    use crate::tape::error::TapeError;
    use std::path::Path;

    fn unsupported(url: &Path) -> TapeError {
        TapeError::usage(format!(
            "{}: this build of floxlog reads no object storage (built without the `object-store` feature)",
            url.display()
        ))
    }

    pub fn kind(url: &Path) -> Result<Kind, TapeError> {
        Err(unsupported(url))
    }
    pub fn list(url: &Path) -> Result<Vec<Entry>, TapeError> {
        Err(unsupported(url))
    }
    pub fn names(url: &Path) -> Result<Vec<(String, bool)>, TapeError> {
        Err(unsupported(url))
    }
    pub fn configure(url: &Path, _: Vec<(String, String)>) -> Result<(), TapeError> {
        Err(unsupported(url))
    }
    pub fn object_size(url: &Path) -> Result<u64, TapeError> {
        Err(unsupported(url))
    }
    pub fn fetch_range(url: &Path, _: std::ops::Range<u64>, _: &mut [u8]) -> Result<(), TapeError> {
        Err(unsupported(url))
    }
    pub fn read_side(url: &Path) -> std::io::Result<Option<Vec<u8>>> {
        Err(std::io::Error::other(unsupported(url).message))
    }
    pub fn listed_size(_: &Path) -> Option<u64> {
        None
    }
    pub fn stats() -> (u64, u64) {
        (0, 0)
    }
    pub fn occupied(url: &Path) -> Result<bool, TapeError> {
        Err(unsupported(url))
    }
    pub fn exists(url: &Path) -> TapeError {
        unsupported(url)
    }
    pub fn upload_dir(_: &Path, url: &Path, _: bool) -> Result<Uploaded, TapeError> {
        Err(unsupported(url))
    }
}

/// Whether `url` is a prefix (a tape directory) or one object.
pub fn kind(url: &Path) -> Result<Kind, TapeError> {
    imp::kind(url)
}

/// The objects directly under prefix `url`, in the store's order.
pub fn list(url: &Path) -> Result<Vec<Entry>, TapeError> {
    imp::list(url)
}

/// The names directly under prefix `url`, each with whether it is a
/// prefix itself (a tape directory) rather than an object: what a glob
/// over URLs matches.
pub fn names(url: &Path) -> Result<Vec<(String, bool)>, TapeError> {
    imp::names(url)
}

/// Options of the store of `url`'s bucket in this process, over what the
/// environment gives: fsspec's names (`key`, `secret`, `token`,
/// `endpoint_url`, `region`, `anon`) or object_store's `aws_*` keys. They
/// replace options given before for that bucket; an unknown name is a
/// usage error naming it (never its value).
pub fn configure(url: &Path, options: Vec<(String, String)>) -> Result<(), TapeError> {
    imp::configure(url, options)
}

/// The size of object `url`: what the last listing saw, else one look.
pub fn object_size(url: &Path) -> Result<u64, TapeError> {
    imp::object_size(url)
}

/// Copies the bytes `range` of object `url` into `out` (as long as the
/// object, [`object_size`]) at their offsets, by range requests of at
/// most [`PART_BYTES`], [`PARTS_IN_FLIGHT`] at a time, each conditional on
/// the ETag the last listing saw: an object replaced since is the
/// "changed; list again" error, never a mix of two objects.
pub fn fetch_range(
    url: &Path,
    range: std::ops::Range<u64>,
    out: &mut [u8],
) -> Result<(), TapeError> {
    imp::fetch_range(url, range, out)
}

/// A side file: `Ok(None)` when there is no such object.
pub fn read_side(url: &Path) -> std::io::Result<Option<Vec<u8>>> {
    imp::read_side(url)
}

/// The size the last listing (or look) saw of object `url`.
pub fn listed_size(url: &Path) -> Option<u64> {
    imp::listed_size(url)
}

/// `(requests, bytes)`: requests this process has sent to object stores
/// and the object bytes it received (for benchmarks: bytes fetched against
/// bytes read).
pub fn stats() -> (u64, u64) {
    imp::stats()
}

/// Whether any object lies under prefix `url` (one list call). The
/// bucket's root is refused: a dataset goes under a prefix.
pub fn occupied(url: &Path) -> Result<bool, TapeError> {
    imp::occupied(url)
}

/// The usage error for an output prefix that holds objects, worded as
/// local writers word an output that exists (with the `--overwrite` hint).
pub fn exists(url: &Path) -> TapeError {
    imp::exists(url)
}

/// Uploads the files under directory `local` as the objects under prefix
/// `url`, at the same relative keys. Without `replace` the caller has
/// checked [`occupied`], and a failure deletes what was uploaded; with it,
/// objects under the prefix that are not part of the upload are deleted
/// once every new object is in place. Not atomic: readers may see objects
/// appear one by one (see docs/object-storage.md).
pub fn upload_dir(local: &Path, url: &Path, replace: bool) -> Result<Uploaded, TapeError> {
    imp::upload_dir(local, url, replace)
}

/// A usage error for a command that writes, given a URL: writers stay
/// local.
pub fn refuse_writing(url: &Path) -> TapeError {
    TapeError::usage(format!(
        "{}: writing to object storage is not supported; write a local tape, then upload it (e.g. `aws s3 cp --recursive tape/ s3://bucket/prefix/`)",
        url.display()
    ))
}

#[cfg(all(test, not(feature = "object-store")))]
mod without_feature {
    #[test]
    fn a_url_is_a_usage_error_naming_the_feature() {
        let url = std::path::PathBuf::from("s3://b/tape");
        let e = crate::tape::Tape::open(&[url], Default::default()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let msg = e.to_string();
        assert!(
            msg.starts_with("s3://b/tape: ") && msg.contains("`object-store` feature"),
            "{msg}"
        );
    }
}
