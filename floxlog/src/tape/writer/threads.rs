//! The threads a tape writer starts, and where they run: each is started
//! through [`spawn`], which places it on the configured CPU set
//! ([`CpuSet`], `TapeWriterConfig::thread_cpus`) as its first act, before
//! it touches any memory, and reports a placement that failed as the
//! writer's open error.

use crate::tape::error::TapeError;
use std::path::Path;
use std::thread::JoinHandle;

/// Words of a [`CpuSet`]: 1024 CPUs, the kernel's `CPU_SETSIZE`.
pub const CPU_SET_WORDS: usize = 16;

/// A set of CPUs (bit `i` of word `i / 64` is CPU `i`); empty: the writer's
/// threads inherit the affinity of the thread that opened the writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuSet {
    /// The bits, CPU 0 in bit 0 of word 0.
    pub words: [u64; CPU_SET_WORDS],
}

impl CpuSet {
    /// The set of `cpus`; `None` if one is 1024 or more.
    pub fn of(cpus: &[usize]) -> Option<CpuSet> {
        let mut s = CpuSet::default();
        for &c in cpus {
            *s.words.get_mut(c / 64)? |= 1 << (c % 64);
        }
        Some(s)
    }

    /// No CPU: inherit.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }

    /// Whether `cpu` is in the set.
    pub fn contains(&self, cpu: usize) -> bool {
        self.words
            .get(cpu / 64)
            .is_some_and(|w| w & (1 << (cpu % 64)) != 0)
    }
}

/// Places the calling thread on `cpus` (nothing if empty).
#[cfg(target_os = "linux")]
fn pin(cpus: &CpuSet) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside
    // it for CPUs below CPU_SETSIZE (1024 = 16 words); sched_setaffinity
    // reads it for the call.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..CPU_SET_WORDS * 64 {
            if cpus.contains(cpu) {
                libc::CPU_SET(cpu, &mut set);
            }
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn pin(cpus: &CpuSet) -> std::io::Result<()> {
    if cpus.is_empty() {
        Ok(())
    } else {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Starts the writer's thread `name` running `body`, first placed on
/// `cpus`; waits until it is placed, and fails (the thread not run) if it
/// could not be.
pub(crate) fn spawn(
    dir: &Path,
    name: &str,
    cpus: CpuSet,
    body: impl FnOnce() + Send + 'static,
) -> Result<JoinHandle<()>, TapeError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let placed = pin(&cpus);
            let ok = placed.is_ok();
            let _ = tx.send(placed);
            if ok {
                body();
            }
        })
        .map_err(|e| TapeError::io(dir, &format!("starting the writer's {name} thread"), e))?;
    match rx.recv() {
        Ok(Ok(())) => Ok(handle),
        Ok(Err(e)) => {
            let _ = handle.join();
            Err(TapeError::io(
                dir,
                &format!("placing the writer's {name} thread on thread_cpus"),
                e,
            )
            .with_hint("thread_cpus must name CPUs this process may run on (see taskset -p)"))
        }
        Err(_) => {
            let _ = handle.join();
            Err(TapeError::input(
                Some(dir),
                format!("the writer's {name} thread ended before it started"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread runs on the set given (here the CPU this test may use
    /// first), or is refused with an error naming the setting.
    #[test]
    fn a_thread_is_placed_on_its_set_before_it_runs() {
        let dir = Path::new("/tmp");
        let allowed: Vec<usize> = (0..1024)
            .filter(|&c| {
                // SAFETY: a zeroed set filled by sched_getaffinity.
                unsafe {
                    let mut s: libc::cpu_set_t = std::mem::zeroed();
                    libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut s) == 0
                        && libc::CPU_ISSET(c, &s)
                }
            })
            .collect();
        let first = allowed[0];
        let (tx, rx) = std::sync::mpsc::channel();
        let h = spawn(dir, "test", CpuSet::of(&[first]).unwrap(), move || {
            // SAFETY: as above.
            let on: Vec<usize> = unsafe {
                let mut s: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut s);
                (0..1024).filter(|&c| libc::CPU_ISSET(c, &s)).collect()
            };
            tx.send(on).unwrap();
        })
        .unwrap();
        h.join().unwrap();
        assert_eq!(rx.recv().unwrap(), vec![first]);
        // A CPU the process may not use (the kernel refuses the set).
        let none = (0..1024).find(|c| !allowed.contains(c)).unwrap();
        let e = spawn(dir, "test", CpuSet::of(&[none]).unwrap(), || {
            panic!("ran unplaced")
        })
        .unwrap_err();
        assert!(e.to_string().contains("thread_cpus"), "{e}");
        assert!(CpuSet::of(&[1024]).is_none());
    }
}
