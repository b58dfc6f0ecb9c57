//! The journal's background thread: prepares each series' next segment
//! before it is needed, finalises segments the appending thread is done
//! with (index trailer, truncation, fsync per the policy, final header,
//! manifest), runs the fsyncs the policy asks for while a segment is live
//! and moves each live segment's window of ready pages ([`super::window`]).
//!
//! It sleeps until work is due, on a futex word ([`Shared::ring`], the
//! wake page's system calls): no periodic wake-up. The appending thread
//! rings it only when work is due (a segment handed over, the window to
//! move, an fsync asked for) and then only makes a system call when the
//! thread is asleep: an append makes none.
//!
//! A segment it cannot prepare (a full disk) is retried with back-off,
//! not a failure of the writer (see [`super::space`]). It waits (on the condition
//! variable) only when the next segment is not prepared yet, or to close,
//! flush or sync.

use super::prepare::{discard, prepare, MapStorage, Plan, Prepared, SegShared};
pub(super) use super::space::Ask;
use super::space::Space;
use crate::tape::dir::manifest::{sync_dir, Manifest, ManifestSegment};
use crate::tape::dir::Layout;
use crate::tape::error::TapeError;
use crate::tape::writer::shared::write_all_at;
use floxlog_core::{SegmentWriter, WriterConfig};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long a thread waiting for the background thread sleeps between
/// looks (it is also notified).
const TICK: Duration = Duration::from_millis(1);
/// The longest the background thread sleeps without being rung: a bound,
/// in case a ring is ever missed, not a tick.
const SLEEP_MAX: Duration = Duration::from_secs(3600);

/// Segments of each series prepared ahead of the live one. Two, so that a
/// rotation does not wait while this thread is busy with something else
/// (finalising the previous segment, whose fsync under `SyncOnClose` can
/// take longer than the appending thread needs to fill a segment): the
/// successor's successor is then prepared already. Each costs its
/// reserved `max_segment_bytes` of disk and its first window of page
/// cache until used (or removed at close; a crash leaves them empty, for
/// readers to skip and `recover` to remove).
pub(super) const AHEAD: usize = 2;

/// A segment the appending thread is done with.
pub(super) struct Finishing {
    pub(super) w: Box<SegmentWriter<MapStorage>>,
    pub(super) shared: Arc<SegShared>,
    pub(super) seq: u64,
    pub(super) name: String,
    pub(super) series: &'static str,
    pub(super) min_ts: i64,
    pub(super) max_ts: i64,
    pub(super) events: u64,
}

pub(super) enum Job {
    /// Prepare the next segment of a series slot.
    Prepare(Ask),
    Finish(Finishing),
    Discard(Box<Prepared>),
}

/// Settings the thread needs.
pub(super) struct Settings {
    pub(super) dir: PathBuf,
    pub(super) layout: Layout,
    pub(super) segment: WriterConfig,
    pub(super) frames_cap: u64,
    pub(super) syncs: bool,
    pub(super) write_manifest: bool,
    /// The tape's created_ns (manifest.json): set again when a clock
    /// stamps the first segment.
    pub(super) tape_created: AtomicI64,
    /// Where the thread runs (`TapeWriterConfig::thread_cpus`).
    pub(super) cpus: crate::tape::writer::CpuSet,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) jobs: VecDeque<Job>,
    /// Since when the job at the head of the queue has waited (health).
    pub(super) queued_since: Option<std::time::Instant>,
    /// Wall-clock ns of `failed` (health).
    pub(super) failed_ns: i64,
    /// Each series' prepared segments, oldest first (at most [`AHEAD`]).
    pub(super) ready: Vec<VecDeque<Box<Prepared>>>,
    /// Live segments, for the fsyncs their policy asks for.
    pub(super) live: Vec<Arc<SegShared>>,
    pub(super) closed: Vec<(u64, ManifestSegment)>,
    pub(super) closed_durable: u64,
    /// Segments handed over and not yet closed, with their events: what
    /// their fsyncs covered still counts as durable meanwhile.
    pub(super) finishing: Vec<(Arc<SegShared>, u64)>,
    /// Closed segments not fsynced (policies `None`, `Flush`) and their
    /// events, for `sync`.
    pub(super) closed_unsynced: Vec<(PathBuf, u64)>,
    pub(super) failed: Option<TapeError>,
    /// Segments that could not be prepared ahead, retried (see `space`).
    pub(super) space: Space,
    busy: bool,
    stop: bool,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    /// Threads waiting for this thread (appender, close, sync) wait here.
    cv: Condvar,
    /// The background thread's futex word: 1 while it sleeps (or is about
    /// to), 0 once rung or awake.
    bell: AtomicU32,
    /// Times the background thread woke from a sleep (health, tests).
    pub(super) wakeups: AtomicU64,
    /// Set with `state.failed`: the appending thread checks it without the lock.
    pub(super) has_failed: AtomicBool,
    settings: Settings,
}

impl Shared {
    /// Wakes the background thread if it sleeps: one load when it does
    /// not. Called after the work is published (a job under the lock, or
    /// an atomic stored with `SeqCst`).
    pub(super) fn ring(&self) {
        if self.bell.load(Ordering::SeqCst) == 1 && self.bell.swap(0, Ordering::SeqCst) == 1 {
            crate::tape::wake::futex::wake_all(&self.bell);
        }
    }

    /// Wakes everyone: the background thread and the threads waiting for it.
    fn notify(&self) {
        self.cv.notify_all();
        self.ring();
    }
}

pub(super) fn lock(s: &Shared) -> MutexGuard<'_, State> {
    s.state.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) struct Background {
    pub(super) shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Background {
    pub(super) fn start(settings: Settings, slots: usize) -> Result<Background, TapeError> {
        let mut state = State {
            ready: (0..slots).map(|_| VecDeque::with_capacity(AHEAD)).collect(),
            ..State::default()
        };
        state.jobs.reserve(64);
        state.live.reserve(64);
        state.finishing.reserve(64);
        let dir = settings.dir.clone();
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            cv: Condvar::new(),
            bell: AtomicU32::new(0),
            wakeups: AtomicU64::new(0),
            has_failed: AtomicBool::new(false),
            settings,
        });
        let s2 = shared.clone();
        let cpus = shared.settings.cpus;
        let thread =
            crate::tape::writer::spawn_thread(&dir, "floxlog-journal", cpus, move || run(&s2))?;
        Ok(Background {
            shared,
            thread: Some(thread),
        })
    }

    pub(super) fn settings(&self) -> &Settings {
        &self.shared.settings
    }

    pub(super) fn tape_created(&self) -> i64 {
        self.shared.settings.tape_created.load(Ordering::Acquire)
    }

    pub(super) fn set_tape_created(&self, ns: i64) {
        self.shared
            .settings
            .tape_created
            .store(ns, Ordering::Release);
    }

    /// Queues jobs and rings the thread (a system call only if it sleeps).
    pub(super) fn push(&self, jobs: impl IntoIterator<Item = Job>) {
        let mut g = lock(&self.shared);
        g.jobs.extend(jobs);
        queued(&mut g);
        drop(g);
        self.shared.ring();
    }

    /// Queues a segment to finish and rings the thread.
    pub(super) fn push_finish(&self, f: Finishing) {
        let mut g = lock(&self.shared);
        g.finishing.push((f.shared.clone(), f.events));
        g.jobs.push_back(Job::Finish(f));
        queued(&mut g);
        drop(g);
        self.shared.notify();
    }

    /// Queues and wakes the thread.
    pub(super) fn push_now(&self, job: Job) {
        let mut g = lock(&self.shared);
        g.jobs.push_back(job);
        queued(&mut g);
        drop(g);
        self.shared.notify();
    }

    /// The oldest prepared segment of slot `si`, waiting for it if needed
    /// (it was requested before).
    /// If its preparation failed (a full disk), one more attempt is asked
    /// for at once, and its failure returned: the appender has nowhere
    /// to go (see `space`).
    pub(super) fn take_ready(&self, si: usize) -> Result<Box<Prepared>, TapeError> {
        let mut g = lock(&self.shared);
        let mut asked = None;
        loop {
            if let Some(p) = g.ready.get_mut(si).and_then(VecDeque::pop_front) {
                return Ok(p);
            }
            if let Some(e) = &g.failed {
                return Err(e.clone());
            }
            if g.space.holds(si) {
                match asked {
                    None => {
                        asked = Some(g.space.attempts);
                        g.space.retry_now = true;
                    }
                    Some(a) if g.space.attempts > a => return Err(g.space.no_room()),
                    Some(_) => {}
                }
            }
            drop(g);
            self.shared.notify();
            g = tick(&self.shared, lock(&self.shared));
        }
    }

    pub(super) fn register_live(&self, seg: Arc<SegShared>) {
        lock(&self.shared).live.push(seg);
    }

    /// Waits until every queued job is done; the first failure, if any.
    pub(super) fn wait_idle(&self) -> Result<(), TapeError> {
        self.shared.notify();
        let mut g = lock(&self.shared);
        while !g.jobs.is_empty() || g.busy {
            g = tick(&self.shared, g);
        }
        g.failed.clone().map_or(Ok(()), Err)
    }

    pub(super) fn failed(&self) -> Option<TapeError> {
        lock(&self.shared).failed.clone()
    }

    /// Runs what is queued, removes unused prepared segments, stops the
    /// thread.
    pub(super) fn stop(&mut self, discard_ready: bool) {
        {
            let mut g = lock(&self.shared);
            g.stop = true;
        }
        self.shared.notify();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if discard_ready {
            let ready: Vec<_> = lock(&self.shared)
                .ready
                .iter_mut()
                .flat_map(|r| r.drain(..))
                .collect();
            for p in ready {
                if let Err(e) = discard(*p) {
                    fail(&self.shared, e);
                }
            }
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop(false);
    }
}

fn fail(s: &Shared, e: TapeError) {
    let mut g = lock(s);
    if g.failed.is_none() {
        g.failed_ns = crate::tape::writer::now_ns();
    }
    g.failed.get_or_insert(e);
    s.has_failed.store(true, Ordering::Release);
    s.cv.notify_all();
}

/// Starts the lag clock when the queue stops being empty.
fn queued(g: &mut State) {
    if g.jobs.is_empty() {
        g.queued_since = None;
    } else if g.queued_since.is_none() {
        g.queued_since = Some(std::time::Instant::now());
    }
}

/// The live segments whose fsync is due.
fn syncs_due(g: &State) -> Vec<Arc<SegShared>> {
    g.live
        .iter()
        .filter(|l| l.sync_wanted.load(Ordering::SeqCst) > l.synced())
        .cloned()
        .collect()
}

fn run(s: &Shared) {
    let mut g = lock(s);
    loop {
        if g.space.low() {
            // Requests queued behind a failed one wait behind it (names
            // stay in order).
            let (asks, rest): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut g.jobs)
                .into_iter()
                .partition(|j| matches!(j, Job::Prepare(_)));
            g.jobs = rest;
            for j in asks {
                if let Job::Prepare(a) = j {
                    g.space.deferred.push_back(a);
                }
            }
        }
        if !g.stop && g.failed.is_none() && g.space.due(std::time::Instant::now()) {
            if let Some(ask) = g.space.take() {
                g.busy = true;
                drop(g);
                let made = prepare_ask(s, ask);
                g = lock(s);
                g.busy = false;
                settle(&mut g, ask, made);
                s.cv.notify_all();
                continue;
            }
        }
        // Preparing the next segment goes first: the appending thread may
        // need it before a finalisation (an fsync of a whole segment) ends.
        let first = g
            .jobs
            .iter()
            .position(|j| matches!(j, Job::Prepare(_)))
            .unwrap_or(0);
        if let Some(job) = g.jobs.remove(first) {
            // The next job waits from now (an approximation of its wait).
            g.queued_since = None;
            queued(&mut g);
            g.busy = true;
            let failed = g.failed.is_some();
            drop(g);
            // After a failure nothing more is written; unused files stay
            // for `recover`.
            if failed {
                g = lock(s);
            } else if let Job::Prepare(ask) = job {
                let made = prepare_ask(s, ask);
                g = lock(s);
                settle(&mut g, ask, made);
            } else {
                if let Err(e) = do_job(s, job) {
                    fail(s, e);
                }
                g = lock(s);
            }
            g.busy = false;
            s.cv.notify_all();
            continue;
        }
        if g.stop {
            return;
        }
        // The windows to move: first, the appender may be about to reach them.
        let windows: Vec<_> = g.live.iter().filter(|l| l.window.due()).cloned().collect();
        if !windows.is_empty() {
            drop(g);
            for l in windows {
                l.window.advance();
            }
            g = lock(s);
            continue;
        }
        // The fsyncs live segments asked for.
        let due = syncs_due(&g);
        if !due.is_empty() && g.failed.is_none() {
            drop(g);
            for l in due {
                let want = l.sync_wanted.load(Ordering::Acquire);
                match l.file.sync_data() {
                    Ok(()) => l.synced.fetch_max(want, Ordering::AcqRel),
                    Err(e) => {
                        fail(s, TapeError::io(&l.path, "syncing the segment", e));
                        break;
                    }
                };
            }
            g = lock(s);
            continue;
        }
        g = sleep(s, g);
    }
}

/// Sleeps until rung (see [`Shared::ring`]): announces the sleep, looks
/// once more for work published before the announcement was seen, then
/// waits on the futex word.
fn sleep<'a>(s: &'a Shared, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
    s.bell.store(1, Ordering::SeqCst);
    let failed = g.failed.is_some();
    let now = std::time::Instant::now();
    let work = !g.jobs.is_empty()
        || (!failed && g.space.due(now))
        || g.stop
        || g.live.iter().any(|l| l.window.due())
        || (!failed && !syncs_due(&g).is_empty());
    // A deferred reservation is tried again when its back-off ends (not
    // after a failure: nothing more is written then).
    let max = match failed {
        false => g.space.sleep_for(now, SLEEP_MAX),
        true => SLEEP_MAX,
    };
    drop(g);
    if !work {
        let woke = crate::tape::wake::futex::wait(&s.bell, 1, max);
        if woke == crate::tape::wake::Woke::Unsupported {
            // No futex on this platform: look again after a tick.
            std::thread::sleep(TICK);
        }
        s.wakeups.fetch_add(1, Ordering::Relaxed);
    }
    s.bell.store(0, Ordering::SeqCst);
    lock(s)
}

/// Waits on the condition variable for a wake-up or a [`TICK`].
fn tick<'a>(s: &'a Shared, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
    s.cv.wait_timeout(g, TICK)
        .map(|(g, _)| g)
        .unwrap_or_else(|e| e.into_inner().0)
}

fn do_job(s: &Shared, job: Job) -> Result<(), TapeError> {
    match job {
        Job::Prepare(ask) => {
            let made = prepare_ask(s, ask);
            settle(&mut lock(s), ask, made);
            Ok(())
        }
        Job::Discard(p) => discard(*p),
        Job::Finish(f) => finish(s, f),
    }
}

/// Prepares the segment `ask` asks for.
fn prepare_ask(s: &Shared, ask: Ask) -> Result<Prepared, TapeError> {
    let set = &s.settings;
    prepare(&plan(
        set,
        ask.series,
        ask.created,
        ask.number,
        set.frames_cap,
    ))
}

/// Files a preparation's outcome: the segment among the ready ones, or
/// the request among those retried (not a failure of the writer).
fn settle(g: &mut State, ask: Ask, made: Result<Prepared, TapeError>) {
    match made {
        Ok(p) => {
            if let Some(r) = g.ready.get_mut(ask.si) {
                r.push_back(Box::new(p));
            }
            g.space.succeeded();
        }
        Err(e) => g.space.failed(ask, e),
    }
}

/// What to prepare for a segment of `series` numbered `number` (spec
/// layout) or created at `created` (flox layout, its name).
pub(super) fn plan(set: &Settings, series: &str, created: i64, number: u32, cap: u64) -> Plan {
    let name = match set.layout {
        Layout::Flox => format!("{created}.floxlog"),
        Layout::Spec => format!("{series}-{number:06}.bin"),
    };
    Plan {
        dir: set.dir.clone(),
        name,
        created,
        segment: set.segment,
        frames_cap: cap,
    }
}

/// Finalises a segment as the default writer's close does, ending with the
/// same bytes: the trailer (into the mapping, which may grow for it), the
/// pre-allocated tail cut off, the frames and trailer fsynced under the
/// syncing policies, the final header over offset 0 (and fsynced), then
/// the manifest.
fn finish(s: &Shared, f: Finishing) -> Result<(), TapeError> {
    let set = &s.settings;
    let Finishing {
        mut w,
        shared,
        seq,
        name,
        series,
        min_ts,
        max_ts,
        events,
    } = f;
    let path = &shared.path;
    shared.window.unmapping();
    w.storage_mut().may_grow = true;
    let header = w.finish().map_err(|e| {
        TapeError::input(Some(path), format!("cannot finish the segment: {e}")).at(e.offset)
    })?;
    let size = w.segment_bytes();
    // Unmapped before the file shrinks (see map.rs).
    drop(w);
    let file = &shared.file;
    // Cut first: a crash before the final header leaves what a default
    // writer's crash leaves (placeholder header, frames, trailer).
    file.set_len(size)
        .map_err(|e| TapeError::io(path, "truncating the segment", e))?;
    if set.syncs {
        file.sync_all()
            .map_err(|e| TapeError::io(path, "syncing the segment", e))?;
    }
    write_all_at(file, &header, 0).map_err(|e| TapeError::io(path, "writing the segment", e))?;
    if set.syncs {
        file.sync_data()
            .map_err(|e| TapeError::io(path, "syncing the segment", e))?;
    }
    let empty = events == 0;
    let entry = ManifestSegment {
        name,
        kind: series.to_string(),
        size_bytes: size,
        first_event_ns: if empty { 0 } else { min_ts },
        last_event_ns: if empty { 0 } else { max_ts },
        event_count: events,
    };
    let durable = if set.syncs {
        events
    } else {
        shared.synced().min(events)
    };
    let manifest = {
        let mut g = lock(s);
        g.live.retain(|l| !Arc::ptr_eq(l, &shared));
        g.closed.push((seq, entry));
        if durable < events {
            g.closed_unsynced.push((path.clone(), events - durable));
        }
        set.write_manifest.then(|| {
            let mut v = g.closed.clone();
            v.sort_by_key(|(s, _)| *s);
            v.into_iter().map(|(_, m)| m).collect::<Vec<_>>()
        })
    };
    if let Some(segments) = manifest {
        let mut m = Manifest::new(
            set.segment.exchange_id,
            set.tape_created.load(Ordering::Acquire),
        );
        m.segments = segments;
        if let Err(e) = m.save(&set.dir, set.syncs) {
            // Not a failure of the writer (a full disk, say): the segment
            // files are the tape (readers list them); the manifest is
            // written again at the next finish and at close.
            lock(s).space.note(e);
            if set.syncs {
                sync_dir(&set.dir)?;
            }
        }
    } else if set.syncs {
        sync_dir(&set.dir)?;
    }
    let mut g = lock(s);
    g.finishing.retain(|(l, _)| !Arc::ptr_eq(l, &shared));
    g.closed_durable += durable;
    Ok(())
}
