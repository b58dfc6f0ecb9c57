//! The tape lock: an advisory lock on `.floxlog.lock` in the tape
//! directory, held by a live writer for as long as it writes.
//!
//! Commands that rewrite segments in place (`recover`, `reindex`), and a
//! second writer, take the same lock first and refuse while another
//! process holds it. The lock is the kernel's (`flock`), so it dies with
//! its process: a writer killed mid-write leaves a lock file that the next
//! taker simply locks again (a stale lock is never mistaken for a live
//! one). The file holds the holder's pid, for the message.

use crate::tape::error::TapeError;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// File name of the lock inside a tape directory (hidden: never listed as
/// a segment).
pub const LOCK_FILE: &str = ".floxlog.lock";

/// A held tape lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct TapeLock {
    file: File,
    path: PathBuf,
}

impl TapeLock {
    /// Takes the lock of tape directory `dir` for `doing` (e.g. "writing",
    /// "recovering"). Refuses, naming the holder's pid, if another process
    /// holds it.
    pub fn acquire(dir: &Path, doing: &str) -> Result<TapeLock, TapeError> {
        let path = dir.join(LOCK_FILE);
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| TapeError::io(&path, "opening the tape lock", e))?;
        match try_lock_patiently(&file) {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another process".to_string()
                } else {
                    format!("process {holder}")
                };
                return Err(TapeError::io(
                    &path,
                    &format!("locking the tape for {doing}"),
                    std::io::Error::new(
                        std::io::ErrorKind::WouldBlock,
                        format!("{} is being written by {who}", dir.display()),
                    ),
                )
                .with_hint("wait until its writer has closed the tape (a killed writer releases the lock by itself)"));
            }
            Err(TryLockError::Error(e)) => {
                return Err(TapeError::io(&path, "locking the tape", e));
            }
        }
        // Only the holder writes its pid (the lock serialises writers).
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        Ok(TapeLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TapeLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Takes the lock, trying again for about 0.1 s: a reader asking
/// [`writer_is_live`] holds a shared lock for an instant, and must not
/// turn a writer away.
fn try_lock_patiently(file: &File) -> Result<(), TryLockError> {
    for _ in 0..50 {
        match file.try_lock() {
            Err(TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            r => return r,
        }
    }
    file.try_lock()
}

/// Whether a live writer holds the lock of tape directory `dir`. Never
/// creates the lock file and never blocks: the lock is probed with a
/// shared lock, released at once. A lock file that is not a regular file
/// (a FIFO would block the open) counts as no writer.
pub fn writer_is_live(dir: &Path) -> bool {
    // Object storage has no lock files: writers stay local.
    if crate::tape::remote::is_url(dir) {
        return false;
    }
    let Ok(file) = crate::tape::dir::files::open_regular(&dir.join(LOCK_FILE), false) else {
        return false;
    };
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(TryLockError::WouldBlock) => true,
        Err(TryLockError::Error(_)) => false,
    }
}

/// Whether the lock of tape directory `dir` was left by a holder that died
/// holding it: no process holds it, yet it still names a pid (a holder
/// empties it before letting go). A writer killed between two segments
/// leaves only finished segments; this tells its tape from a closed one.
pub fn holder_died(dir: &Path) -> bool {
    holder_text(dir).is_some_and(|pid| !pid.trim().is_empty()) && !writer_is_live(dir)
}

/// The pid the lock file of tape directory `dir` names: the holder's
/// while it lives, or that of a holder that died holding it.
pub fn holder_pid(dir: &Path) -> Option<u32> {
    holder_text(dir)?.trim().parse().ok()
}

/// What the lock file holds (at most a pid), read without blocking.
fn holder_text(dir: &Path) -> Option<String> {
    // Object storage has no lock files (see writer_is_live).
    if crate::tape::remote::is_url(dir) {
        return None;
    }
    let mut file = crate::tape::dir::files::open_regular(&dir.join(LOCK_FILE), false).ok()?;
    let mut pid = String::new();
    // A pid is a few bytes: a bigger file is not one.
    std::io::Read::by_ref(&mut file)
        .take(64)
        .read_to_string(&mut pid)
        .ok()?;
    Some(pid)
}

/// Takes the tape lock of every directory that holds one of `paths`
/// (each once), for commands that rewrite segments in place. Bare segment
/// files lock the directory they are in.
pub fn lock_dirs<'p>(
    paths: impl IntoIterator<Item = &'p Path>,
    doing: &str,
) -> Result<Vec<TapeLock>, TapeError> {
    let mut dirs: Vec<PathBuf> = paths
        .into_iter()
        .map(|p| match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter().map(|d| TapeLock::acquire(d, doing)).collect()
}

/// Removes the `.NAME.partial-*` directories beside an output `NAME` in
/// `parent` whose builder is gone (their lock can be taken): what killed
/// runs left. Builders of outputs (tape writers under a temporary name,
/// exports) hold the lock of their temporary directory while they work.
pub fn remove_stale_partials(parent: &Path, name: &str) {
    let prefix = format!(".{name}.partial-");
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let stale = e.file_name().to_string_lossy().starts_with(&prefix)
            && e.file_type().is_ok_and(|t| t.is_dir())
            && TapeLock::acquire(&e.path(), "cleaning up").is_ok();
        if stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_taker_until_dropped() {
        let d = tempfile::tempdir().unwrap();
        let first = TapeLock::acquire(d.path(), "writing").unwrap();
        let e = TapeLock::acquire(d.path(), "recovering").unwrap_err();
        assert!(e.to_string().contains("is being written by process"), "{e}");
        assert_eq!(e.exit_code(), 3);
        assert!(writer_is_live(d.path()));
        drop(first);
        assert!(!writer_is_live(d.path()));
        TapeLock::acquire(d.path(), "recovering").unwrap();
    }
}
