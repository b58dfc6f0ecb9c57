//! How a tailer waits for the writer between polls.

use std::time::{Duration, Instant};

/// How [`super::Tail`] waits when nothing new has arrived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WaitStrategy {
    /// Poll again at once: lowest latency, one core kept busy.
    BusySpin,
    /// Spin a while, then give the core away (`sched_yield`) between
    /// polls.
    SpinThenYield,
    /// Sleep until the writer publishes: on a journal tape (Linux), on a
    /// futex in the tape's wake page, woken by the writer; otherwise
    /// between polls, from 10 µs doubling up to 10 ms (bounded back-off:
    /// a quiet tape costs about 100 polls a second). See
    /// `docs/journal-and-tailer.md` for measured latency and CPU.
    #[default]
    Blocking,
}

/// Spins before [`WaitStrategy::SpinThenYield`] starts yielding.
const SPINS: u32 = 2_000;
const FIRST_SLEEP: Duration = Duration::from_micros(10);
const MAX_SLEEP: Duration = Duration::from_millis(10);

/// One wait's state (a call to `next`).
pub(crate) struct Backoff {
    strategy: WaitStrategy,
    rounds: u32,
    sleep: Duration,
}

impl Backoff {
    pub(crate) fn new(strategy: WaitStrategy) -> Backoff {
        Backoff {
            strategy,
            rounds: 0,
            sleep: FIRST_SLEEP,
        }
    }

    /// Waits once, never past `deadline`.
    pub(crate) fn wait(&mut self, deadline: Option<Instant>) {
        self.rounds = self.rounds.saturating_add(1);
        match self.strategy {
            WaitStrategy::BusySpin => std::hint::spin_loop(),
            WaitStrategy::SpinThenYield if self.rounds < SPINS => std::hint::spin_loop(),
            WaitStrategy::SpinThenYield => std::thread::yield_now(),
            WaitStrategy::Blocking => {
                let mut d = self.sleep;
                if let Some(end) = deadline {
                    d = d.min(end.saturating_duration_since(Instant::now()));
                }
                std::thread::sleep(d);
                self.sleep = (self.sleep * 2).min(MAX_SLEEP);
            }
        }
    }

    /// Whether this strategy sleeps (then a journal tape's wake page is
    /// slept on instead).
    pub(crate) fn sleeps(&self) -> bool {
        self.strategy == WaitStrategy::Blocking
    }
}
