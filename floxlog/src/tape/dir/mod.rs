//! A tape directory: finding its segments ([`Tape`]), its manifests
//! (`manifest.json`: [`Manifest`]; flox's `.manifest` and
//! `metadata.json`: [`FloxManifest`], [`Metadata`]), the tape lock
//! ([`TapeLock`]) and opening its files safely (only regular files, never
//! through a link out of the directory).

pub(crate) mod discover;
pub(crate) mod files;
pub(crate) mod flox_manifest;
pub(crate) mod lock;
pub(crate) mod manifest;

pub use discover::{
    is_plain_file_name, segment_series, series_of, Layout, OpenOptions, Tape, TapeSegment, MIXED,
    SERIES,
};
pub use flox_manifest::{FloxManifest, Metadata, FLOX_MANIFEST_FILE};
pub use lock::{lock_dirs, remove_stale_partials, TapeLock, LOCK_FILE};
pub use manifest::{
    dir_and_name, sync_dir, write_atomic, write_file_atomic, Manifest, ManifestSegment,
};
