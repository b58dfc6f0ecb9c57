//! Id and sequence gaps: a counter (a symbol's trade ids, its book
//! `seq`) that advances by exactly 1 on almost every step
//! ([`CONSECUTIVE_SHARE`] of them) is expected to, and each jump over
//! values is a gap with the missing range. Counters that do not (ids
//! shared across symbols, as the demo's are) report nothing. Jumps are
//! kept up to [`JUMPS_KEPT`] per counter; more are counted.

/// Share of steps that must be +1 for a counter to be judged consecutive.
pub const CONSECUTIVE_SHARE: f64 = 0.99;
/// Fewest steps a counter is judged on.
pub const MIN_STEPS: u64 = 16;
/// Jumps kept per counter (the rest are counted).
pub const JUMPS_KEPT: usize = 1000;

/// A jump: the values in `first_missing..=last_missing` never came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    /// exchange_ts_ns of the event before the jump.
    pub from_ns: i64,
    /// exchange_ts_ns of the event after it.
    pub to_ns: i64,
    /// recv_ts_ns of the event before.
    pub from_recv_ns: i64,
    /// recv_ts_ns of the event after.
    pub to_recv_ns: i64,
    /// First value missing.
    pub first_missing: u64,
    /// Last value missing.
    pub last_missing: u64,
}

/// One counter's steps.
#[derive(Default)]
pub struct Steps {
    last: Option<(u64, i64, i64)>,
    steps: u64,
    unit: u64,
    jumps: Vec<Jump>,
    /// Jumps seen, kept or not.
    pub jumps_seen: u64,
}

impl Steps {
    /// Takes the counter's next value (0: none, skipped).
    pub fn push(&mut self, v: u64, ts: i64, recv: i64) {
        if v == 0 {
            return;
        }
        let Some((p, pts, precv)) = self.last else {
            self.last = Some((v, ts, recv));
            return;
        };
        self.steps += 1;
        if v == p.wrapping_add(1) {
            self.unit += 1;
        } else if v > p {
            self.jumps_seen += 1;
            if self.jumps.len() < JUMPS_KEPT {
                self.jumps.push(Jump {
                    from_ns: pts,
                    to_ns: ts,
                    from_recv_ns: precv,
                    to_recv_ns: recv,
                    first_missing: p + 1,
                    last_missing: v - 1,
                });
            }
        }
        // A repeated or late value does not move the counter back.
        if v > p {
            self.last = Some((v, ts, recv));
        }
    }

    /// Whether the counter advances by 1 on almost every step.
    pub fn consecutive(&self) -> bool {
        self.steps >= MIN_STEPS && self.unit as f64 >= CONSECUTIVE_SHARE * self.steps as f64
    }

    /// The jumps to report: none unless the counter is consecutive.
    pub fn into_jumps(self) -> Vec<Jump> {
        if self.consecutive() {
            self.jumps
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(vals: &[u64]) -> Vec<Jump> {
        let mut s = Steps::default();
        for (i, &v) in vals.iter().enumerate() {
            s.push(v, i as i64 * 10, i as i64 * 10 + 1);
        }
        s.into_jumps()
    }

    #[test]
    fn a_jump_in_consecutive_ids_is_found_with_its_range() {
        let mut v: Vec<u64> = (1..=500).collect();
        v.extend(505..=1000);
        let j = run(&v);
        assert_eq!(j.len(), 1);
        assert_eq!((j[0].first_missing, j[0].last_missing), (501, 504));
        assert_eq!((j[0].from_ns, j[0].to_ns), (4990, 5000));
    }

    #[test]
    fn ids_shared_across_symbols_are_not_judged() {
        // Every third id: this symbol's share of a feed-wide counter.
        let v: Vec<u64> = (0..1000).map(|i| 1 + i * 3).collect();
        assert!(run(&v).is_empty());
        // Zero means no id; repeats do not count as jumps.
        let mut v: Vec<u64> = (1..=200).collect();
        v.extend([0, 200, 201, 0, 202]);
        assert!(run(&v).is_empty());
    }
}
