//! The tape writer's background I/O: one thread per [`TapeWriter`] that
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
//! [`TapeWriter`]: super::TapeWriter

use crate::tape::error::TapeError;
use crate::tape::manifest::sync_dir;
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

/// Writes all of `buf` at `offset` of `file`, not using (nor moving, on
/// unix) the file position.
pub(super) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match file.seek_write(buf, offset) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, offset);
        Err(std::io::ErrorKind::Unsupported.into())
    }
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
}

impl SegIo {
    pub fn new(file: File, path: PathBuf) -> SegIo {
        SegIo {
            file,
            path,
            written: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            dir_synced: AtomicBool::new(false),
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
        if let Some(dir) = dir {
            if !self.dir_synced.load(Ordering::Acquire) {
                sync_dir(dir)?;
                self.dir_synced.store(true, Ordering::Release);
            }
        }
        self.synced.fetch_max(events, Ordering::Release);
        Ok(())
    }
}

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
}

#[derive(Default)]
struct State {
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
    writer_waiting: bool,
    /// Run what is queued, then exit.
    stop: bool,
    /// The first error; every later command is dropped.
    error: Option<TapeError>,
}

struct Shared {
    state: Mutex<State>,
    wake_io: Condvar,
    wake_writer: Condvar,
    /// `state.error` is set (checked without the lock on every append).
    failed: AtomicBool,
    dir: PathBuf,
}

/// The I/O thread of one tape writer. Dropping it runs what is queued,
/// then joins the thread.
pub(super) struct IoThread {
    shared: Arc<Shared>,
    handle: Option<JoinHandle<()>>,
}

impl IoThread {
    /// Starts the thread for the tape in `dir` (directory fsyncs).
    pub fn start(dir: &Path) -> Result<IoThread, TapeError> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_io: Condvar::new(),
            wake_writer: Condvar::new(),
            failed: AtomicBool::new(false),
            dir: dir.to_path_buf(),
        });
        let s = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("floxlog-io".into())
            .spawn(move || run(&s))
            .map_err(|e| TapeError::io(dir, "starting the writer's I/O thread", e))?;
        Ok(IoThread {
            shared,
            handle: Some(handle),
        })
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
            st.writer_waiting = true;
            st = self
                .shared
                .wake_writer
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
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

    /// Waits until every queued command ran (a barrier); the first error
    /// if one failed.
    pub fn wait_idle(&self) -> Result<(), TapeError> {
        let mut st = lock(&self.shared.state);
        while (st.busy || !st.queue.is_empty()) && st.error.is_none() {
            st.writer_waiting = true;
            st = self
                .shared
                .wake_writer
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
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
    }
}

/// Marks the thread failed if it unwinds, so that the writer never waits
/// for it forever.
struct PanicGuard<'a>(&'a Shared);

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut st = lock(&self.0.state);
            st.busy = false;
            st.stop = true;
            if st.error.is_none() {
                st.error = Some(TapeError::input(
                    Some(&self.0.dir),
                    "internal error: the tape writer's I/O thread panicked",
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
        st.busy = true;
        let skip = st.error.is_some();
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
            }
        };
        let buf = match cmd {
            Cmd::Write { buf, .. } => Some(buf),
            Cmd::Sync { .. } => None,
        };
        st = lock(&shared.state);
        st.busy = false;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_small_writes_merge_and_errors_stick() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("f");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let seg = Arc::new(SegIo::new(file, path.clone()));
        let io = IoThread::start(t.path()).unwrap();
        let mut at = 0u64;
        for i in 0..200u64 {
            let bytes = [i as u8; 10];
            if !io.append_to_queued(&seg, at, &bytes, None, i + 1) {
                let mut buf = io.take_buffer().unwrap();
                buf.resize(4096, 0);
                buf[..10].copy_from_slice(&bytes);
                io.push_write(&seg, at, buf, 10, None, i + 1);
            }
            at += 10;
            if i % 50 == 49 {
                io.push_sync(&seg, false, true, i + 1);
            }
        }
        io.wait_idle().unwrap();
        assert_eq!(seg.written.load(Ordering::Acquire), 200);
        assert_eq!(seg.synced.load(Ordering::Acquire), 200);
        assert!(seg.dir_synced.load(Ordering::Acquire));
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 2000);
        for (i, c) in data.chunks(10).enumerate() {
            assert!(c.iter().all(|&b| b == i as u8));
        }
        assert!(io.failed().is_none());
        assert!(lock(&io.shared.state).in_flight == 0);

        // A write to a read-only descriptor fails; that error stays, and
        // later commands are dropped.
        let ro = Arc::new(SegIo::new(
            std::fs::File::open(&path).unwrap(),
            path.clone(),
        ));
        io.push_write(&ro, 0, vec![1; 8], 8, None, 1);
        io.push_write(&seg, 2000, vec![2; 8], 8, None, 201);
        let e = io.wait_idle().unwrap_err();
        assert!(e.message.starts_with("writing the segment"), "{e}");
        assert_eq!(e.path.as_deref(), Some(path.as_path()));
        assert!(io.failed().is_some());
        assert!(io.take_buffer().is_err());
        drop(io);
        assert_eq!(seg.written.load(Ordering::Acquire), 200);
        assert_eq!(std::fs::read(&path).unwrap().len(), 2000);
    }
}
