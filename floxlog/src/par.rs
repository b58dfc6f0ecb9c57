//! A small worker pool for decoding on every core with results in order.
//!
//! [`Pool::run`] hands items to scoped worker threads and gives their
//! results to the caller's thread in input order, through a bounded
//! window: a worker takes item `i` only once the results before
//! `i - window` have been delivered, so at most `window` results (by
//! default twice the threads) are held at once, whatever the input's size.
//! A panic in a worker becomes a [`WorkerPanic`] error for its item (the
//! pool stops and the caller sees it in order) rather than tearing the
//! process down. One thread runs everything inline, spawning nothing.

use crate::tape::TapeError;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard};

/// Threads for a `--jobs` value: `0` means one per core.
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        j => j,
    }
}

/// A worker panicked on an item.
#[derive(Clone, Debug)]
pub struct WorkerPanic {
    /// The item (its place in the input).
    pub item: usize,
    /// The panic's message, when it had one.
    pub message: String,
}

impl std::fmt::Display for WorkerPanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error: a worker panicked on item {}: {}",
            self.item, self.message
        )
    }
}

impl std::error::Error for WorkerPanic {}

impl From<WorkerPanic> for TapeError {
    fn from(p: WorkerPanic) -> TapeError {
        TapeError::input(None, p.to_string())
    }
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Worker threads and the bound on results in flight.
#[derive(Clone, Copy, Debug)]
pub struct Pool {
    threads: usize,
    window: usize,
}

/// What the workers and the delivering thread share.
struct State<I, T> {
    items: I,
    /// Index the next item taken gets.
    next: usize,
    /// The input ran out (after `next` items).
    exhausted: bool,
    /// Results delivered so far.
    delivered: usize,
    /// Results by `index % window`.
    slots: Vec<Option<Result<T, WorkerPanic>>>,
    stop: bool,
}

struct Shared<I, T> {
    state: Mutex<State<I, T>>,
    /// A result arrived (the delivering thread waits on it).
    ready: Condvar,
    /// A result was delivered or the pool stops (workers wait on it).
    room: Condvar,
}

impl<I, T> Shared<I, T> {
    fn lock(&self) -> MutexGuard<'_, State<I, T>> {
        // No code panics while holding the lock; recover anyway.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Stops the workers when the delivering thread leaves, by return or by
/// unwinding (they would otherwise wait for room forever and the scope
/// would never end).
struct StopOnDrop<'s, I, T>(&'s Shared<I, T>);

impl<I, T> Drop for StopOnDrop<'_, I, T> {
    fn drop(&mut self) {
        self.0.lock().stop = true;
        self.0.room.notify_all();
    }
}

impl Pool {
    /// `threads` workers (0: one per core), a window of twice that.
    pub fn new(threads: usize) -> Pool {
        let threads = self::threads(threads);
        Pool {
            threads,
            window: 2 * threads,
        }
    }

    /// Holds at most `window` results at once (at least one per thread).
    pub fn with_window(self, window: usize) -> Pool {
        Pool {
            window: window.max(self.threads),
            ..self
        }
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `work` on every item, on the workers, and `deliver` on each
    /// result in input order, on the calling thread. Stops at the first
    /// error `deliver` returns, or at a worker's panic (as `E`), delivering
    /// nothing after it; items not yet taken are never taken.
    pub fn run<I, T, E, W, D>(&self, items: I, work: W, mut deliver: D) -> Result<(), E>
    where
        I: Iterator + Send,
        T: Send,
        E: From<WorkerPanic>,
        W: Fn(I::Item) -> T + Sync,
        D: FnMut(T) -> Result<(), E>,
    {
        let call = |i: usize, item| {
            catch_unwind(AssertUnwindSafe(|| work(item))).map_err(|p| WorkerPanic {
                item: i,
                message: panic_message(p.as_ref()),
            })
        };
        if self.threads <= 1 {
            for (i, item) in items.enumerate() {
                deliver(call(i, item)?)?;
            }
            return Ok(());
        }
        let window = self.window.max(1);
        let shared = Shared {
            state: Mutex::new(State {
                items,
                next: 0,
                exhausted: false,
                delivered: 0,
                slots: (0..window).map(|_| None).collect(),
                stop: false,
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
        };
        std::thread::scope(|sc| {
            for _ in 0..self.threads {
                sc.spawn(|| worker(&shared, window, &call));
            }
            let _stop = StopOnDrop(&shared);
            let mut i = 0usize;
            loop {
                let result = {
                    let mut st = shared.lock();
                    loop {
                        if let Some(r) = st.slots[i % window].take() {
                            break Some(r);
                        }
                        if st.exhausted && i >= st.next {
                            break None;
                        }
                        st = shared.ready.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                };
                let Some(result) = result else {
                    return Ok(());
                };
                {
                    let mut st = shared.lock();
                    st.delivered = i + 1;
                }
                shared.room.notify_all();
                deliver(result?)?;
                i += 1;
            }
        })
    }
}

/// A worker: takes the next item while the window has room, runs it,
/// files the result in its slot.
fn worker<I, T>(
    shared: &Shared<I, T>,
    window: usize,
    call: &(dyn Fn(usize, I::Item) -> Result<T, WorkerPanic> + Sync),
) where
    I: Iterator,
{
    loop {
        let (i, item) = {
            let mut st = shared.lock();
            loop {
                if st.stop || st.exhausted {
                    return;
                }
                if st.next < st.delivered + window {
                    break;
                }
                st = shared.room.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            // Items are made under the lock, in order (a lazy input opens
            // its files as they are reached).
            let item = catch_unwind(AssertUnwindSafe(|| st.items.next()));
            match item {
                Ok(Some(item)) => {
                    st.next += 1;
                    (st.next - 1, item)
                }
                Ok(None) => {
                    st.exhausted = true;
                    drop(st);
                    shared.ready.notify_all();
                    shared.room.notify_all();
                    return;
                }
                Err(p) => {
                    // The input itself panicked: that is item `next`'s result.
                    let i = st.next;
                    st.next += 1;
                    st.exhausted = true;
                    st.slots[i % window] = Some(Err(WorkerPanic {
                        item: i,
                        message: panic_message(p.as_ref()),
                    }));
                    drop(st);
                    shared.ready.notify_all();
                    shared.room.notify_all();
                    return;
                }
            }
        };
        let r = call(i, item);
        shared.lock().slots[i % window] = Some(r);
        shared.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn collect(pool: Pool, n: usize) -> Result<Vec<usize>, TapeError> {
        let mut out = Vec::new();
        pool.run(
            0..n,
            |i| {
                // Later items finish first.
                std::thread::sleep(std::time::Duration::from_micros(((n - i) % 7) as u64 * 50));
                i * 2
            },
            |r| {
                out.push(r);
                Ok::<(), TapeError>(())
            },
        )?;
        Ok(out)
    }

    #[test]
    fn results_come_in_input_order() {
        for threads in [1, 2, 3, 8] {
            for n in [0, 1, 5, 100] {
                let got = collect(Pool::new(threads), n).unwrap();
                assert_eq!(got, (0..n).map(|i| i * 2).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn never_more_than_the_window_in_flight() {
        let pool = Pool::new(3);
        let taken = AtomicUsize::new(0);
        let mut delivered = 0usize;
        pool.run(
            0..200usize,
            |i| {
                taken.fetch_max(i + 1, Ordering::SeqCst);
                i
            },
            |i| {
                delivered += 1;
                assert_eq!(i + 1, delivered);
                // Item i is delivered: nothing past i + window was taken.
                assert!(taken.load(Ordering::SeqCst) <= delivered + 6);
                Ok::<(), TapeError>(())
            },
        )
        .unwrap();
        assert_eq!(delivered, 200);
    }

    #[test]
    fn a_panic_is_an_error_in_order_and_stops_the_pool() {
        for threads in [1, 2] {
            let mut seen = Vec::new();
            let e = Pool::new(threads)
                .run(
                    0..1000usize,
                    |i| {
                        assert!(i != 5, "boom at {i}");
                        i
                    },
                    |i| {
                        seen.push(i);
                        Ok::<(), TapeError>(())
                    },
                )
                .unwrap_err();
            assert_eq!(seen, vec![0, 1, 2, 3, 4]);
            assert!(
                e.message.contains("item 5") && e.message.contains("boom at 5"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_delivery_error_stops_the_pool() {
        let started = AtomicUsize::new(0);
        let e = Pool::new(2)
            .run(
                0..10_000usize,
                |i| {
                    started.fetch_add(1, Ordering::SeqCst);
                    i
                },
                |i| {
                    if i == 3 {
                        Err(TapeError::usage("stop"))
                    } else {
                        Ok(())
                    }
                },
            )
            .unwrap_err();
        assert_eq!(e.message, "stop");
        assert!(started.load(Ordering::SeqCst) < 100);
    }
}
