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
    /// Sleep between polls, from 10 µs doubling up to 10 ms (bounded
    /// back-off: a quiet tape costs about 100 polls a second).
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

    /// Whether this strategy sleeps (then every round may afford a look
    /// at the directory and the lock).
    pub(crate) fn sleeps(&self) -> bool {
        self.strategy == WaitStrategy::Blocking
    }
}
