//! A journal segment before its first event: the file created, its blocks
//! reserved, mapped, pre-faulted and its placeholder header written (by
//! the core encoder), then moved to its published name. Done ahead of
//! need by the background thread.

use super::map::{reserve, Publisher, SegMap};
use super::window::Window;
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
    /// The pages made ready ahead of the appender.
    pub(super) window: Window,
    /// Bytes of disk reserved for it.
    pub(super) reserved: u64,
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

/// A segment file made ready but not named yet: created under a hidden
/// name, reserved, mapped and pre-faulted (the slow part of preparing a
/// segment, proportional to its size). Removed on drop unless
/// [`Reserved::publish`] named it.
pub(super) struct Reserved {
    store: Option<(MapStorage, Publisher)>,
    tmp: PathBuf,
    /// Frame bytes (header included) it has room for.
    pub(super) frames_cap: u64,
    /// The mapping's address, length and bytes made ready.
    window: (usize, usize, u64),
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if self.store.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Creates `dir/tmp_name` (replacing a file a killed run left there),
/// reserves its blocks, maps and pre-faults it, for a segment with room
/// for `frames_cap` frame bytes.
pub(super) fn reserve_file(
    dir: &std::path::Path,
    tmp_name: &str,
    segment: &WriterConfig,
    frames_cap: u64,
) -> Result<Reserved, TapeError> {
    let tmp = dir.join(tmp_name);
    #[cfg(test)]
    if full::is_full(dir) {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        return Err(TapeError::io(&tmp, "reserving the segment", e));
    }
    let entries = planned_entries(segment, frames_cap);
    let cap = round_up(frames_cap + floxlog_core::index::trailer_len(entries) as u64);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
    // From here on, a failure drops `r`, which removes the file.
    let mut r = Reserved {
        store: None,
        tmp,
        frames_cap,
        window: (0, 0, 0),
    };
    reserve(&file, cap).map_err(|e| TapeError::io(&r.tmp, "reserving the segment", e))?;
    let mut map = SegMap::new(&file, cap as usize)
        .map_err(|e| TapeError::io(&r.tmp, "mapping the segment", e))?;
    let ready = map.prefault(super::window::WINDOW);
    let base = map.base();
    let len = map.len();
    let publisher = map.publisher();
    let store = MapStorage {
        map,
        file: Arc::new(file),
        index: vec![IndexEntry::default(); entries],
        may_grow: false,
    };
    r.store = Some((store, publisher));
    r.window = (base as usize, len, ready);
    Ok(r)
}

impl Reserved {
    /// Writes the placeholder header (by the core encoder) and moves the
    /// file to `plan`'s name: a rename, the only system call. The header
    /// is written before the rename, so no segment file is ever listed
    /// without one.
    pub(super) fn publish(mut self, plan: &Plan) -> Result<Prepared, TapeError> {
        let path = plan.dir.join(&plan.name);
        if path.exists() {
            return Err(TapeError::io(
                &path,
                "creating the segment",
                std::io::ErrorKind::AlreadyExists.into(),
            ));
        }
        let Some((store, publisher)) = self.store.take() else {
            return Err(TapeError::input(
                Some(&path),
                "internal error: segment published twice",
            ));
        };
        let file = store.file.clone();
        let made = SegmentWriter::new(
            WriterConfig {
                created_ns: plan.created,
                ..plan.segment
            },
            store,
        );
        let mut w = match made {
            Ok(w) => Box::new(w),
            Err(e) => {
                let _ = std::fs::remove_file(&self.tmp);
                return Err(TapeError::input(
                    Some(&path),
                    format!("cannot start the segment: {e}"),
                ));
            }
        };
        w.defer_size(true);
        if let Err(e) = std::fs::rename(&self.tmp, &path) {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(TapeError::io(&path, "moving the new segment into place", e));
        }
        Ok(Prepared {
            w,
            publisher,
            shared: Arc::new(SegShared {
                file,
                path,
                sync_wanted: AtomicU64::new(0),
                synced: AtomicU64::new(0),
                window: Window::new(self.window.0 as *mut u8, self.window.1, self.window.2),
                reserved: self.window.1 as u64,
            }),
            name: plan.name.clone(),
            created: plan.created,
            frames_cap: self.frames_cap,
        })
    }
}

/// Creates, reserves, maps, pre-faults and publishes a segment (see the
/// module docs).
pub(super) fn prepare(plan: &Plan) -> Result<Prepared, TapeError> {
    let tmp = format!(".{}.tmp", plan.name);
    reserve_file(&plan.dir, &tmp, &plan.segment, plan.frames_cap)?.publish(plan)
}

/// Removes a prepared segment that will not be used (at close, or when
/// an event needs a bigger one).
pub(super) fn discard(p: Prepared) -> Result<(), TapeError> {
    let path = p.shared.path.clone();
    drop(p);
    std::fs::remove_file(&path).map_err(|e| TapeError::io(&path, "removing an unused segment", e))
}

/// Unit tests' full disk: reservations in the directories listed fail
/// as `fallocate` does on a full file system (the tmpfs test in
/// `floxlog/tests` fills a real one where the machine lets it mount one).
#[cfg(test)]
pub(super) mod full {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static FULL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    pub(in crate::tape::journal) fn set(dir: &Path, full: bool) {
        let mut v = FULL.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|d| d != dir);
        if full {
            v.push(dir.to_path_buf());
        }
    }

    pub(super) fn is_full(dir: &Path) -> bool {
        let v = FULL.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().any(|d| d == dir)
    }
}
