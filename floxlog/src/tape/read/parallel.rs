//! Ranges on several threads, results in order, and the check that lets
//! time order be had by concatenating them.

use super::track::Track;
use crate::tape::error::TapeError;

/// Runs `work(i)` for every `i < n` on up to `jobs` threads (0: one per
/// core); the results in order. A worker that fails stops the others
/// starting items after its own; the first error in order is returned (a
/// worker's panic is one too).
pub fn run_parallel<T: Send>(
    n: usize,
    jobs: usize,
    work: &(dyn Fn(usize) -> Result<T, TapeError> + Sync),
) -> Result<Vec<T>, TapeError> {
    let mut out = Vec::with_capacity(n);
    // Every result is kept, so nothing is gained by holding workers back:
    // the window is the whole input.
    run(n, jobs, n, work, &mut |_, r| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

/// [`run_parallel`] handing each result to `deliver` in order, on the
/// calling thread, as soon as it and those before it are done (for a
/// caller that reports progress or folds results as they come); at most
/// twice `jobs` results are held at once. An error of `deliver` ends the
/// run with it.
pub fn run_parallel_each<T: Send>(
    n: usize,
    jobs: usize,
    work: &(dyn Fn(usize) -> Result<T, TapeError> + Sync),
    deliver: &mut dyn FnMut(usize, T) -> Result<(), TapeError>,
) -> Result<(), TapeError> {
    run(n, jobs, 0, work, deliver)
}

/// The pool both run on: `window` results in flight (0: the pool's own).
fn run<T: Send>(
    n: usize,
    jobs: usize,
    window: usize,
    work: &(dyn Fn(usize) -> Result<T, TapeError> + Sync),
    deliver: &mut dyn FnMut(usize, T) -> Result<(), TapeError>,
) -> Result<(), TapeError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The lowest failed index: only items after it may be skipped, since
    // an earlier item's result (or error) is still delivered first.
    let failed = AtomicUsize::new(usize::MAX);
    let jobs = crate::par::threads(jobs);
    let mut pool = crate::par::Pool::new(jobs.clamp(1, n.max(1)));
    if window > 0 {
        pool = pool.with_window(window);
    }
    let mut next = 0;
    pool.run(
        0..n,
        |i| {
            if i > failed.load(Ordering::Relaxed) {
                // Never delivered: an earlier item's error ends the run.
                return Err(TapeError::input(
                    None,
                    "internal error: a worker thread stopped",
                ));
            }
            let r = work(i);
            if r.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            r
        },
        |r| -> Result<(), TapeError> {
            let i = next;
            next += 1;
            deliver(i, r?)
        },
    )
}

/// Whether pieces whose emitted timestamps are `tracks` (in tape order),
/// taken in order of their first timestamp (ties by place in the tape),
/// are exactly the stable time-order merge: each in order, and each ending
/// at or before the next one starts (at a tie, only before a later piece).
/// Returns that order (pieces with no events left out).
pub fn concat_order(tracks: &[Track]) -> Option<Vec<usize>> {
    if tracks.iter().any(|t| !t.in_order) {
        return None;
    }
    let mut order: Vec<usize> = (0..tracks.len())
        .filter(|&i| tracks[i].first.is_some())
        .collect();
    order.sort_by_key(|&i| (tracks[i].first, i));
    for w in order.windows(2) {
        let (a, b) = (&tracks[w[0]], &tracks[w[1]]);
        let next = b.first?;
        if a.last > next || (a.last == next && w[0] > w[1]) {
            return None;
        }
    }
    Some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(ts: &[i64]) -> Track {
        let mut t = Track::default();
        ts.iter().for_each(|&x| t.see(x));
        t
    }

    #[test]
    fn pieces_that_follow_one_another_concatenate_in_time_order() {
        let t = [track(&[5, 6]), track(&[]), track(&[1, 2]), track(&[6, 9])];
        assert_eq!(concat_order(&t), Some(vec![2, 0, 3]));
    }

    #[test]
    fn overlapping_or_unordered_pieces_do_not() {
        assert_eq!(concat_order(&[track(&[1, 5]), track(&[3, 9])]), None);
        assert_eq!(concat_order(&[track(&[2, 1])]), None);
        // A tie goes to the earlier piece: a later piece ending at the
        // earlier one's first timestamp would have to come after it.
        assert_eq!(concat_order(&[track(&[3, 4]), track(&[1, 3])]), None);
    }

    #[test]
    fn results_come_back_in_order() {
        let v = run_parallel(50, 2, &|i| Ok(i * 2)).unwrap();
        assert_eq!(v, (0..50).map(|i| i * 2).collect::<Vec<_>>());
        let e = run_parallel(5, 2, &|i| {
            if i == 3 {
                Err(TapeError::usage("three"))
            } else {
                Ok(i)
            }
        });
        assert!(e.unwrap_err().message.contains("three"));
    }

    #[test]
    fn results_are_handed_over_in_order() {
        let mut got = Vec::new();
        run_parallel_each(40, 3, &|i| Ok(i + 1), &mut |i, r| {
            got.push((i, r));
            Ok(())
        })
        .unwrap();
        assert_eq!(got, (0..40).map(|i| (i, i + 1)).collect::<Vec<_>>());
        // The deliverer's error ends the run with it.
        let e = run_parallel_each(40, 3, &|i| Ok(i), &mut |i, _| {
            if i == 7 {
                Err(TapeError::usage("seven"))
            } else {
                Ok(())
            }
        });
        assert!(e.unwrap_err().message.contains("seven"));
    }

    #[test]
    fn an_item_before_a_failure_is_still_done() {
        // Item 3 fails before item 2 starts: item 2 must still run, and
        // the error returned is item 3's, not a skipped item's.
        use std::sync::atomic::{AtomicBool, Ordering};
        let three_failed = AtomicBool::new(false);
        let e = run_parallel(6, 2, &|i| {
            if i == 3 {
                three_failed.store(true, Ordering::SeqCst);
                return Err(TapeError::usage("three"));
            }
            if i == 2 {
                while !three_failed.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            }
            Ok(i)
        });
        assert!(e.unwrap_err().message.contains("three"));
    }
}
