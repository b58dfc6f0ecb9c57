//! A journal segment before its first event: the file created, its blocks
//! reserved, mapped, pre-faulted and its placeholder header written (by
//! the core encoder), then moved to its published name. Done ahead of
//! need by the background thread.

use super::map::{reserve, Publisher, SegMap};
use crate::tape::error::TapeError;
use floxlog_core::writer::{Buffer, Parts, WriterStorage};
use floxlog_core::{IndexEntry, SegmentWriter, WriterConfig};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Page size the capacity is rounded to.
const PAGE: u64 = 4096;

/// The encoder's storage: the mapping is its output buffer (never
/// consumed: output offsets are file offsets), the index entries a vector
/// sized ahead.
pub(super) struct MapStorage {
    pub(super) map: SegMap,
    file: Arc<File>,
    index: Vec<IndexEntry>,
    /// Set by the background thread before it finishes the segment: the
    /// index trailer may need the file to grow. Never on the appending
    /// thread, whose publisher must keep pointing at the live mapping.
    pub(super) may_grow: bool,
}

impl WriterStorage for MapStorage {
    fn parts(&mut self) -> Parts<'_> {
        Parts {
            out: self.map.bytes_mut(),
            block: &mut [],
            slots: &mut [],
            index: &mut self.index,
        }
    }
    fn out(&self) -> &[u8] {
        self.map.bytes()
    }
    fn grow(&mut self, which: Buffer, needed: usize) -> bool {
        match which {
            // Cold: only when more entries come than the capacity planned.
            Buffer::Index => {
                self.index
                    .resize(needed.max(self.index.len() * 2), IndexEntry::default());
                true
            }
            Buffer::Out if self.may_grow => {
                let len = round_up(needed as u64);
                let grown =
                    reserve(&self.file, len).and_then(|()| SegMap::new(&self.file, len as usize));
                match grown {
                    Ok(m) => {
                        self.map = m;
                        true
                    }
                    Err(_) => false,
                }
            }
            _ => false,
        }
    }
    fn lens(&self) -> (usize, usize, usize, usize) {
        (self.map.len(), 0, 0, self.index.len())
    }
}

/// What the appending thread and the background thread share of a
/// segment: its file and how far it has been fsynced.
pub(super) struct SegShared {
    pub(super) file: Arc<File>,
    pub(super) path: PathBuf,
    /// Events the appending thread asks to have fsynced (durability
    /// `SyncEveryN`, `SyncEveryBlock`); read by the background thread.
    pub(super) sync_wanted: AtomicU64,
    /// Events covered by an fsync.
    pub(super) synced: AtomicU64,
}

impl SegShared {
    pub(super) fn synced(&self) -> u64 {
        self.synced.load(Ordering::Acquire)
    }
}

/// A segment ready for its first event.
pub(super) struct Prepared {
    pub(super) w: Box<SegmentWriter<MapStorage>>,
    pub(super) publisher: Publisher,
    pub(super) shared: Arc<SegShared>,
    pub(super) name: String,
    pub(super) created: i64,
    /// Frame bytes (header included) the segment takes before it rotates
    /// for want of room; the mapping holds the index trailer past it.
    pub(super) frames_cap: u64,
}

/// What to prepare.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    pub(super) dir: PathBuf,
    pub(super) name: String,
    pub(super) created: i64,
    pub(super) segment: WriterConfig,
    /// Room for frames (the header included).
    pub(super) frames_cap: u64,
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(PAGE).max(1) * PAGE
}

/// Index entries a segment of `frames_cap` bytes of 60-byte frames (trades,
/// the common case) needs; more grow the vector, and the file at finish.
fn planned_entries(seg: &WriterConfig, frames_cap: u64) -> usize {
    if !seg.create_index {
        return 0;
    }
    let events = frames_cap / 60 + 1;
    floxlog_core::index_entries_needed(events, seg.index_interval).min(1 << 20) as usize
}

/// Creates, reserves, maps, pre-faults and publishes a segment (see the
/// module docs). The placeholder header is written before the rename, so
/// no segment file is ever listed without one.
pub(super) fn prepare(plan: &Plan) -> Result<Prepared, TapeError> {
    let path = plan.dir.join(&plan.name);
    let tmp = plan.dir.join(format!(".{}.tmp", plan.name));
    let entries = planned_entries(&plan.segment, plan.frames_cap);
    let cap = round_up(plan.frames_cap + floxlog_core::index::trailer_len(entries) as u64);
    let made = (|| {
        if path.exists() {
            return Err(TapeError::io(
                &path,
                "creating the segment",
                std::io::ErrorKind::AlreadyExists.into(),
            ));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
        reserve(&file, cap).map_err(|e| TapeError::io(&tmp, "reserving the segment", e))?;
        let mut map = SegMap::new(&file, cap as usize)
            .map_err(|e| TapeError::io(&tmp, "mapping the segment", e))?;
        map.prefault();
        let publisher = map.publisher();
        let file = Arc::new(file);
        let store = MapStorage {
            map,
            file: file.clone(),
            index: vec![IndexEntry::default(); entries],
            may_grow: false,
        };
        let mut w = Box::new(
            SegmentWriter::new(
                WriterConfig {
                    created_ns: plan.created,
                    ..plan.segment
                },
                store,
            )
            .map_err(|e| TapeError::input(Some(&path), format!("cannot start the segment: {e}")))?,
        );
        w.defer_size(true);
        std::fs::rename(&tmp, &path)
            .map_err(|e| TapeError::io(&path, "moving the new segment into place", e))?;
        Ok(Prepared {
            w,
            publisher,
            shared: Arc::new(SegShared {
                file,
                path: path.clone(),
                sync_wanted: AtomicU64::new(0),
                synced: AtomicU64::new(0),
            }),
            name: plan.name.clone(),
            created: plan.created,
            frames_cap: plan.frames_cap,
        })
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made
}

/// Removes a prepared segment that will not be used (at close, or when
/// an event needs a bigger one).
pub(super) fn discard(p: Prepared) -> Result<(), TapeError> {
    let path = p.shared.path.clone();
    drop(p);
    std::fs::remove_file(&path).map_err(|e| TapeError::io(&path, "removing an unused segment", e))
}
