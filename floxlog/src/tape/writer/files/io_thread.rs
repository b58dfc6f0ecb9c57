//! The tape writer's background I/O: one thread per [`FileWriter`] that
//! performs, in FIFO order, the positional writes and fsyncs the encoder
//! hands it, so that encoding the next chunk overlaps writing the last.
//!
//! Buffers move, they are not copied: a segment's output buffer
//! ([`SwapStorage`]) is swapped whole for an empty one from a small pool
//! ([`take_pending`]), travels to the thread inside its write command, and
//! comes back to the pool once `write(2)` returned. At most
//! [`MAX_IN_FLIGHT`] buffers are queued or being written; beyond that the
//! encoder waits (back-pressure). Small hand-overs (the few events or the
//! block of a syncing policy) are instead appended to the previous write
//! of the same segment if it is still queued (a copy of at most
//! [`COALESCE_MAX`] bytes), so a busy thread sees one large write; fsyncs
//! of a segment requested while one is still queued merge with it.
//!
//! Every write is positional ([`write_all_at`]) at the segment offset the
//! core writer reported, so a header rewrite at offset 0 is just another
//! command and no seek position is shared. Each segment's
//! [`SegIo::written`] and [`SegIo::synced`] are published only after the
//! `write(2)` / `fsync` of those events returned.
//!
//! The first error stops the thread's work: every later command is dropped
//! (its buffer recycled), the error is kept, and [`IoThread::failed`]
//! returns it from then on.
//!
//! [`FileWriter`]: super::FileWriter

use crate::tape::dir::manifest::{sync_dir, ManifestSegment};
use crate::tape::error::TapeError;
pub(crate) use crate::tape::writer::shared::write_all_at;
use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// The size of the chunks the chunked policies hand over.
pub(super) const CHUNK: usize = 1 << 20;

/// Output buffers that may be queued or being written at once.
pub(super) const MAX_IN_FLIGHT: usize = 3;

/// Hand-overs up to this size may be appended to a queued write (a copy);
/// larger ones always move their buffer.
pub(super) const COALESCE_MAX: usize = 64 << 10;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A segment header to write at offset 0 after a write's bytes.
#[derive(Clone, Copy)]
pub(super) struct Header {
    pub bytes: [u8; 64],
    /// The final header of a closed segment (else an LZ4 count refresh).
    pub last: bool,
}

/// One open segment file, shared by the writer and the I/O thread.
pub(super) struct SegIo {
    pub file: File,
    /// Its published path (the I/O thread only gets segments after their
    /// rename into place).
    pub path: PathBuf,
    /// Events whose bytes `write(2)` has taken.
    pub written: AtomicU64,
    /// Events fsynced (with the directory entry, except at close, where
    /// the caller syncs the directory).
    pub synced: AtomicU64,
    /// The directory entry naming this segment has been fsynced.
    pub dir_synced: AtomicBool,
    /// Renamed into place: readers see it (until then its writes go to
    /// a hidden temporary file, and are not counted written).
    pub published: AtomicBool,
    /// Closed, and finished by the finisher: final header (and fsyncs)
    /// done and listed in the manifest (see [`super::finish`]).
    pub finished: AtomicBool,
}

impl SegIo {
    pub fn new(file: File, path: PathBuf) -> SegIo {
        SegIo {
            file,
            path,
            written: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            dir_synced: AtomicBool::new(false),
            published: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }

    /// Writes `bytes` at `at`, then `header` at 0; then `events` of this
    /// segment are written.
    pub fn write(
        &self,
        at: u64,
        bytes: &[u8],
        header: Option<&Header>,
        events: u64,
    ) -> Result<(), TapeError> {
        if !bytes.is_empty() {
            write_all_at(&self.file, bytes, at)
                .map_err(|e| TapeError::io(&self.path, "writing the segment", e))?;
        }
        if let Some(h) = header {
            let doing = if h.last {
                "writing the final header"
            } else {
                "updating the segment header"
            };
            write_all_at(&self.file, &h.bytes, 0)
                .map_err(|e| TapeError::io(&self.path, doing, e))?;
        }
        self.written.fetch_max(events, Ordering::Release);
        Ok(())
    }

    /// fsyncs the file (`all`: metadata too) and, with `dir`, the first
    /// time, the directory entry; then `events` of this segment are durable.
    pub fn sync(&self, dir: Option<&Path>, all: bool, events: u64) -> Result<(), TapeError> {
        if all {
            self.file.sync_all()
        } else {
            self.file.sync_data()
        }
        .map_err(|e| TapeError::io(&self.path, "syncing the segment", e))?;
        // An entry not renamed into place yet is synced by a later call.
        if let Some(dir) = dir.filter(|_| self.published.load(Ordering::Acquire)) {
            if !self.dir_synced.load(Ordering::Acquire) {
                sync_dir(dir)?;
                self.dir_synced.store(true, Ordering::Release);
            }
        }
        self.synced.fetch_max(events, Ordering::Release);
        Ok(())
    }
}

/// What the manifest of a tape says besides its segments.
#[derive(Clone, Copy)]
pub(super) struct ManifestCtx {
    pub exchange_id: u8,
    pub created_ns: i64,
}

/// A segment to finish.
pub(super) struct Closing {
    pub seg: Arc<SegIo>,
    /// Under the syncing policies: the final header, written between the
    /// two fsyncs (otherwise already written by the I/O thread).
    pub header: Option<[u8; 64]>,
    /// The segment's events (all written once this is queued).
    pub events: u64,
    /// Its manifest entry, with its open order.
    pub entry: (u64, ManifestSegment),
    /// `None`: no `manifest.json` is written.
    pub manifest: Option<ManifestCtx>,
    /// fsync the manifest and the directory (the syncing policies).
    pub syncs: bool,
}

/// A job of the finisher, in the order the I/O thread queued them.
pub(super) enum FinJob {
    /// A closed segment.
    Close(Closing),
    /// A new segment written so far at its temporary path: renamed into
    /// place once every segment closed before it is finished.
    Publish(Arc<SegIo>, PathBuf),
}

/// The finisher thread's body: the shared state and what the manifest
/// lists already.
pub(super) type Finisher = fn(&Shared, Vec<(u64, ManifestSegment)>);

enum Cmd {
    /// `buf[..len]` at `at`, then `header` at 0; publishes `events` written.
    Write {
        seg: Arc<SegIo>,
        at: u64,
        buf: Vec<u8>,
        len: usize,
        header: Option<Header>,
        events: u64,
    },
    /// fsync; publishes `events` synced.
    Sync {
        seg: Arc<SegIo>,
        all: bool,
        dir: bool,
        events: u64,
    },
    /// A new segment: its placeholder header at 0 (unless written
    /// already), then the finisher renames `tmp` to its name once the
    /// segments closed before it are finished (so no segment file is ever
    /// seen without its header, and a kill leaves at most the last segment
    /// of a series unfinished); then a new spare is made.
    Publish {
        seg: Arc<SegIo>,
        tmp: PathBuf,
        header: Option<Vec<u8>>,
    },
    /// Makes the spare file.
    Spare,
    /// Hands a closed segment, all written, to the finisher.
    Finish(Box<Closing>),
}

/// The spare files' names: `.next-segment-N.tmp`, the next segment's file,
/// created ahead by the I/O thread. Hidden, so no reader lists them; a
/// writer killed before using one leaves it behind, empty (the next writer
/// truncates and reuses it). Each spare has its own name, so that one
/// being renamed into place is never opened again as the next.
fn spare_name(n: u64) -> String {
    format!(".next-segment-{n}.tmp")
}

#[derive(Default)]
pub(super) struct State {
    queue: VecDeque<Cmd>,
    /// Recycled output buffers.
    free: Vec<Vec<u8>>,
    /// Pool buffers inside queued or running write commands.
    in_flight: usize,
    /// Buffers the pool had to create (not recycled).
    created: usize,
    /// The thread is running a command it took off the queue.
    busy: bool,
    /// The thread waits for commands (so a push must wake it).
    io_waiting: bool,
    /// The writer waits for a buffer or for the queue to drain.
    pub(super) writer_waiting: bool,
    /// Run what is queued, then exit.
    stop: bool,
    /// The first error; every later command is dropped.
    pub(super) error: Option<TapeError>,
    /// Closed segments waiting for the finisher.
    pub(super) fin_queue: VecDeque<FinJob>,
    /// The finisher is finishing segments it took off its queue.
    pub(super) fin_busy: bool,
    /// Finish what is queued, then exit.
    pub(super) fin_stop: bool,
    /// The next segment's file, created ahead (see [`spare_name`]).
    spare: Option<(File, PathBuf)>,
    /// Spares made so far.
    spares: u64,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    wake_io: Condvar,
    pub(super) wake_writer: Condvar,
    pub(super) wake_fin: Condvar,
    /// `state.error` is set (checked without the lock on every append).
    pub(super) failed: AtomicBool,
    pub(super) dir: PathBuf,
}

/// The I/O thread of one tape writer. Dropping it runs what is queued,
/// then joins the thread.
pub(super) struct IoThread {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
    /// The finisher thread ([`super::finish`]).
    fin_handle: Option<JoinHandle<()>>,
}

impl IoThread {
    /// Starts the thread for the tape in `dir` (directory fsyncs), and its
    /// finisher; `listed` is what `manifest.json` lists already.
    /// `finisher` is the finisher thread's body (`finish::run`), passed in
    /// so that this file does not depend on the finisher's.
    pub fn start(
        dir: &Path,
        listed: Vec<(u64, ManifestSegment)>,
        finisher: Finisher,
        cpus: crate::tape::writer::CpuSet,
    ) -> Result<IoThread, TapeError> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_io: Condvar::new(),
            wake_writer: Condvar::new(),
            wake_fin: Condvar::new(),
            failed: AtomicBool::new(false),
            dir: dir.to_path_buf(),
        });
        let s = Arc::clone(&shared);
        let fin_handle =
            crate::tape::writer::spawn_thread(dir, "floxlog-finish", cpus, move || {
                finisher(&s, listed)
            })?;
        let s = Arc::clone(&shared);
        let mut io = IoThread {
            shared,
            handle: None,
            fin_handle: Some(fin_handle),
        };
        // On failure, dropping `io` stops the finisher.
        io.handle = Some(crate::tape::writer::spawn_thread(
            dir,
            "floxlog-io",
            cpus,
            move || run(&s),
        )?);
        Ok(io)
    }

    /// The spare file, if the thread has made one: the next segment's
    /// file, empty, and its temporary path.
    pub fn take_spare(&self) -> Option<(File, PathBuf)> {
        lock(&self.shared.state).spare.take()
    }

    /// Queues the making of a spare file.
    pub fn push_spare(&self) {
        self.push(Cmd::Spare);
    }

    /// Queues the publication of `seg`, whose file is at `tmp` (see
    /// [`Cmd::Publish`]); `header` if it is not written yet.
    pub fn push_publish(&self, seg: &Arc<SegIo>, tmp: PathBuf, header: Option<Vec<u8>>) {
        self.push(Cmd::Publish {
            seg: Arc::clone(seg),
            tmp,
            header,
        });
    }

    /// Queues a closed segment for the finisher, after its last write.
    pub fn push_finish(&self, c: Closing) {
        self.push(Cmd::Finish(Box::new(c)));
    }

    fn push(&self, cmd: Cmd) {
        let mut st = lock(&self.shared.state);
        st.queue.push_back(cmd);
        self.wake(&mut st);
    }

    /// Removes an unused spare file (at close).
    pub fn discard_spare(&self) {
        if let Some((_, path)) = lock(&self.shared.state).spare.take() {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Whether a command failed (one atomic load).
    #[inline]
    pub fn has_failed(&self) -> bool {
        self.shared.failed.load(Ordering::Acquire)
    }

    /// The first I/O error, once there was one.
    pub fn failed(&self) -> Option<TapeError> {
        if !self.shared.failed.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.shared.state).error.clone()
    }

    /// Appends `bytes` (to go at `at` of `seg`) to the last queued write of
    /// `seg` when they continue it and fit in its buffer (at most one fsync
    /// of the same segment queued after it, which then covers them too);
    /// `header` replaces its header and `events` its count. False if they
    /// cannot be merged.
    pub fn append_to_queued(
        &self,
        seg: &Arc<SegIo>,
        at: u64,
        bytes: &[u8],
        header: Option<Header>,
        events: u64,
    ) -> bool {
        if bytes.len() > COALESCE_MAX {
            return false;
        }
        let mut st = lock(&self.shared.state);
        if st.error.is_some() {
            return false;
        }
        let q = &mut st.queue;
        let mut i = q.len();
        while i > 0 && q.len() - i < 2 {
            i -= 1;
            match &mut q[i] {
                Cmd::Sync { seg: s, .. } if Arc::ptr_eq(s, seg) => continue,
                Cmd::Write {
                    seg: s,
                    at: w_at,
                    buf,
                    len,
                    header: h,
                    events: n,
                } if Arc::ptr_eq(s, seg)
                    && *w_at + *len as u64 == at
                    && !h.is_some_and(|h| h.last)
                    && *len + bytes.len() <= buf.len() =>
                {
                    buf[*len..*len + bytes.len()].copy_from_slice(bytes);
                    *len += bytes.len();
                    if header.is_some() {
                        *h = header;
                    }
                    *n = (*n).max(events);
                    return true;
                }
                _ => return false,
            }
        }
        false
    }

    /// An empty output buffer for [`take_pending`]: a recycled one, or a
    /// new one while fewer than [`MAX_IN_FLIGHT`] are in flight; else waits
    /// for the thread to finish one. Errs once the thread failed.
    pub fn take_buffer(&self) -> Result<Vec<u8>, TapeError> {
        let mut st = lock(&self.shared.state);
        loop {
            if let Some(e) = &st.error {
                return Err(e.clone());
            }
            if st.in_flight < MAX_IN_FLIGHT {
                return Ok(st.free.pop().unwrap_or_else(|| {
                    st.created += 1;
                    Vec::new()
                }));
            }
            st = self.wait_writer(st);
        }
    }

    /// Queues a write of `buf[..len]` at `at` of `seg`, then of `header`
    /// at 0; `events` are written once it ran. `buf` goes back to the pool.
    pub fn push_write(
        &self,
        seg: &Arc<SegIo>,
        at: u64,
        buf: Vec<u8>,
        len: usize,
        header: Option<Header>,
        events: u64,
    ) {
        let mut st = lock(&self.shared.state);
        if buf.capacity() > 0 {
            st.in_flight += 1;
        }
        st.queue.push_back(Cmd::Write {
            seg: Arc::clone(seg),
            at,
            buf,
            len,
            header,
            events,
        });
        self.wake(&mut st);
    }

    /// Queues an fsync of `seg` (`all`: `sync_all`; `dir`: and its
    /// directory entry the first time) covering `events`; merged into an
    /// fsync of the same segment at the end of the queue.
    pub fn push_sync(&self, seg: &Arc<SegIo>, all: bool, dir: bool, events: u64) {
        let mut st = lock(&self.shared.state);
        if let Some(Cmd::Sync {
            seg: s,
            all: a,
            dir: d,
            events: n,
        }) = st.queue.back_mut()
        {
            if Arc::ptr_eq(s, seg) {
                *a |= all;
                *d |= dir;
                *n = (*n).max(events);
                return;
            }
        }
        st.queue.push_back(Cmd::Sync {
            seg: Arc::clone(seg),
            all,
            dir,
            events,
        });
        self.wake(&mut st);
    }

    /// Buffers the pool has created so far.
    #[cfg(test)]
    pub fn buffers_created(&self) -> usize {
        lock(&self.shared.state).created
    }

    fn wake(&self, st: &mut State) {
        if st.io_waiting {
            st.io_waiting = false;
            self.shared.wake_io.notify_one();
        }
    }

    /// Sleeps the appending thread until the I/O thread wakes it.
    fn wait_writer<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        st.writer_waiting = true;
        self.shared
            .wake_writer
            .wait(st)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until every queued command ran (a barrier); the first error
    /// if one failed.
    pub fn wait_idle(&self) -> Result<(), TapeError> {
        let mut st = lock(&self.shared.state);
        while (st.busy || !st.queue.is_empty() || st.fin_busy || !st.fin_queue.is_empty())
            && st.error.is_none()
        {
            st = self.wait_writer(st);
        }
        match &st.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        {
            let mut st = lock(&self.shared.state);
            st.stop = true;
            self.wake(&mut st);
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        {
            let mut st = lock(&self.shared.state);
            st.fin_stop = true;
            self.shared.wake_fin.notify_all();
        }
        if let Some(h) = self.fin_handle.take() {
            let _ = h.join();
        }
        self.discard_spare();
    }
}

/// Marks the thread failed if it unwinds, so that the writer never waits
/// for it forever.
pub(super) struct PanicGuard<'a>(pub(super) &'a Shared);

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut st = lock(&self.0.state);
            st.busy = false;
            st.fin_busy = false;
            st.stop = true;
            if st.error.is_none() {
                st.error = Some(TapeError::input(
                    Some(&self.0.dir),
                    "internal error: a tape writer's background thread panicked",
                ));
            }
            self.0.failed.store(true, Ordering::Release);
            self.0.wake_writer.notify_all();
        }
    }
}

fn run(shared: &Shared) {
    let _guard = PanicGuard(shared);
    let mut st = lock(&shared.state);
    loop {
        let Some(cmd) = st.queue.pop_front() else {
            if st.stop {
                return;
            }
            st.io_waiting = true;
            st = shared
                .wake_io
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        };
        let cmd = match cmd {
            // Its writes are done (FIFO): the finisher takes it from here,
            // while this thread goes on with the next segment.
            Cmd::Finish(c) => {
                if st.error.is_none() {
                    st.fin_queue.push_back(FinJob::Close(*c));
                    shared.wake_fin.notify_one();
                }
                continue;
            }
            cmd => cmd,
        };
        st.busy = true;
        let skip = st.error.is_some();
        let (has_spare, spare_no) = (st.spare.is_some(), st.spares);
        drop(st);
        let result = if skip {
            Ok(())
        } else {
            match &cmd {
                Cmd::Write {
                    seg,
                    at,
                    buf,
                    len,
                    header,
                    events,
                } => seg.write(*at, &buf[..*len], header.as_ref(), *events),
                Cmd::Sync {
                    seg,
                    all,
                    dir,
                    events,
                } => seg.sync(dir.then_some(shared.dir.as_path()), *all, *events),
                Cmd::Publish { seg, tmp, header } => match header {
                    Some(h) => write_all_at(&seg.file, h, 0)
                        .map_err(|e| TapeError::io(tmp, "writing the segment", e)),
                    None => Ok(()),
                },
                Cmd::Spare | Cmd::Finish(_) => Ok(()),
            }
        };
        // Only this thread makes spares: one is made when there is none.
        let spare = match &cmd {
            Cmd::Publish { .. } | Cmd::Spare if !skip && !has_spare => {
                make_spare(&shared.dir, spare_no)
            }
            _ => None,
        };
        let (buf, publish) = match cmd {
            Cmd::Write { buf, .. } => (Some(buf), None),
            Cmd::Publish { seg, tmp, .. } => (None, Some(FinJob::Publish(seg, tmp))),
            _ => (None, None),
        };
        st = lock(&shared.state);
        if let Some(job) = publish.filter(|_| result.is_ok() && st.error.is_none()) {
            st.fin_queue.push_back(job);
            shared.wake_fin.notify_one();
        }
        st.busy = false;
        if spare.is_some() {
            st.spare = spare;
            st.spares += 1;
        }
        if let Err(e) = result {
            if st.error.is_none() {
                st.error = Some(e);
                shared.failed.store(true, Ordering::Release);
            }
        }
        if let Some(buf) = buf.filter(|b| b.capacity() > 0) {
            st.in_flight -= 1;
            if st.free.len() < MAX_IN_FLIGHT {
                st.free.push(buf);
            }
        }
        if st.writer_waiting {
            st.writer_waiting = false;
            shared.wake_writer.notify_all();
        }
    }
}

/// Creates (or empties) the spare file; `None` if that fails (the writer
/// then creates the next segment's file itself, and reports the error).
fn make_spare(dir: &Path, n: u64) -> Option<(File, PathBuf)> {
    let path = dir.join(spare_name(n));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .ok()?;
    Some((f, path))
}

#[cfg(test)]
#[path = "io_tests.rs"]
mod tests;
