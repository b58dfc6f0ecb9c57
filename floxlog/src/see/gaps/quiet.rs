//! Quiet gaps: a span without events of one symbol and record type that
//! is longer than the minimum gap and than [`QUIET_MULTIPLE`] times the
//! series' typical inter-event time, the median of the [`CONTEXT`]
//! intervals before it and the [`CONTEXT`] after it. A gap is decided once
//! the intervals after it are seen (or at the end of the tape), so memory
//! is a fixed window per series.

/// A quiet gap must exceed this many typical intervals.
pub const QUIET_MULTIPLE: i64 = 10;
/// Intervals taken on each side of a gap to judge what is typical.
pub const CONTEXT: usize = 32;
/// Fewest surrounding intervals a gap is judged on: a series with fewer
/// events around a silence has no typical pace to compare with.
pub const MIN_CONTEXT: usize = 8;
/// Fewest intervals on each side: a silence is a pause in a pace seen on
/// both sides of it, so a lone early stamp (a timestamp of 0 before a
/// day's events, say) is not a quiet gap.
pub const MIN_SIDE: usize = 4;

/// A quiet gap found: from the last event before to the first after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quiet {
    /// exchange_ts_ns of the event before the silence.
    pub from_ns: i64,
    /// exchange_ts_ns of the event after it.
    pub to_ns: i64,
    /// recv_ts_ns of those two events.
    pub from_recv_ns: i64,
    /// recv_ts_ns of the event after it.
    pub to_recv_ns: i64,
    /// The typical interval it was judged against.
    pub typical_ns: i64,
}

struct Pending {
    gap: Quiet,
    around: Vec<i64>,
    before: usize,
    after: usize,
}

/// One series' pace: the last event, the recent intervals, and the gaps
/// still waiting for their following intervals.
#[derive(Default)]
pub struct QuietSeries {
    last: Option<(i64, i64)>,
    recent: Vec<i64>,
    next: usize,
    pending: Vec<Pending>,
}

impl QuietSeries {
    /// Takes the series' next event (`ts`, `recv`); gaps decided now go to
    /// `found`.
    pub fn push(&mut self, ts: i64, recv: i64, min_gap: i64, found: &mut Vec<Quiet>) {
        let Some((last, last_recv)) = self.last.replace((ts, recv)) else {
            return;
        };
        // Events out of time order (a late event) count as no wait.
        let d = ts.saturating_sub(last).max(0);
        if !self.pending.is_empty() {
            for p in &mut self.pending {
                p.around.push(d);
                p.after += 1;
            }
            self.pending.retain_mut(|p| {
                if p.after < CONTEXT {
                    return true;
                }
                judge(p, found);
                false
            });
        }
        if d > min_gap {
            self.pending.push(Pending {
                gap: Quiet {
                    from_ns: last,
                    to_ns: ts,
                    from_recv_ns: last_recv,
                    to_recv_ns: recv,
                    typical_ns: 0,
                },
                around: self.recent.clone(),
                before: self.recent.len(),
                after: 0,
            });
        }
        if self.recent.len() < CONTEXT {
            self.recent.push(d);
        } else {
            self.recent[self.next] = d;
            self.next = (self.next + 1) % CONTEXT;
        }
    }

    /// Decides the gaps still waiting (end of the tape).
    pub fn finish(&mut self, found: &mut Vec<Quiet>) {
        for mut p in self.pending.drain(..) {
            judge(&mut p, found);
        }
    }
}

fn judge(p: &mut Pending, found: &mut Vec<Quiet>) {
    if p.around.len() < MIN_CONTEXT || p.before < MIN_SIDE || p.after < MIN_SIDE {
        return;
    }
    let mid = p.around.len() / 2;
    let typical = *p.around.select_nth_unstable(mid).1;
    let d = p.gap.to_ns - p.gap.from_ns;
    if d > typical.saturating_mul(QUIET_MULTIPLE) {
        found.push(Quiet {
            typical_ns: typical,
            ..p.gap
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ts: &[i64], min_gap: i64) -> Vec<Quiet> {
        let mut s = QuietSeries::default();
        let mut found = Vec::new();
        for &t in ts {
            s.push(t, t + 5, min_gap, &mut found);
        }
        s.finish(&mut found);
        found
    }

    #[test]
    fn a_lone_early_stamp_is_no_silence() {
        let mut ts = vec![0];
        ts.extend((0..100).map(|i| 5_000_000_000 + i * 1_000_000));
        assert!(run(&ts, 1_000_000_000).is_empty());
        // With a pace before it, the same silence is one.
        let mut ts: Vec<i64> = (0..8).map(|i| i * 1_000_000).collect();
        ts.extend((0..100).map(|i| 5_000_000_000 + i * 1_000_000));
        assert_eq!(run(&ts, 1_000_000_000).len(), 1);
    }

    #[test]
    fn a_busy_series_silence_is_found() {
        let mut ts: Vec<i64> = (0..100).map(|i| i * 1_000_000).collect();
        ts.extend((0..100).map(|i| 5_000_000_000 + i * 1_000_000));
        let f = run(&ts, 1_000_000_000);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].from_ns, f[0].to_ns), (99_000_000, 5_000_000_000));
        assert_eq!(f[0].typical_ns, 1_000_000);
        assert_eq!(f[0].to_recv_ns, 5_000_000_005);
    }

    #[test]
    fn a_thin_series_normal_pace_is_not_a_gap() {
        // An event every 30 s, one pause of 2 minutes: under 10 intervals.
        let mut ts: Vec<i64> = (0..50).map(|i| i * 30_000_000_000).collect();
        ts.push(ts[49] + 120_000_000_000);
        assert!(run(&ts, 1_000_000_000).is_empty());
        // Not past the minimum gap either, however busy.
        let ts: Vec<i64> = (0..100).map(|i| i * 1_000 + (i / 50) * 500_000).collect();
        assert!(run(&ts, 1_000_000_000).is_empty());
    }

    #[test]
    fn too_little_context_is_not_judged() {
        assert!(run(&[0, 1, 2, 10_000_000_000, 10_000_000_001], 1).is_empty());
    }
}
