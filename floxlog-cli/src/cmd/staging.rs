//! The private temporary directory where `export -o s3://...` builds its
//! dataset before the upload, and the sweep of those that killed exports
//! left behind.

use floxlog::tape::TapeError;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Name prefix of a staging directory: `floxlog-export-<pid>-...`.
const PREFIX: &str = "floxlog-export-";

/// A staging directory younger than this is never swept, whatever its
/// process: a process in another PID namespace that shares the temporary
/// directory looks dead from here.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// A private directory under the system's temporary directory where a
/// dataset bound for object storage is built, removed when dropped (on
/// success and on every error; a process killed by a signal leaves it).
pub struct Staging(PathBuf);

impl Staging {
    /// The path of the directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn new() -> Result<Staging, TapeError> {
        let base = std::env::temp_dir();
        sweep(&base, STALE_AFTER);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for n in 0..16u32 {
            let p = base.join(format!("{PREFIX}{}-{nanos:x}-{n}", std::process::id()));
            // `create_dir`, not `_all`: never a directory (or link) that
            // someone else made.
            match private_dir(&p) {
                Ok(()) => return Ok(Staging(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(TapeError::io(
                        &p,
                        "creating the export's temporary directory",
                        e,
                    ))
                }
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no free name"));
        Err(TapeError::io(
            &base,
            "creating the export's temporary directory",
            e,
        ))
    }
}

#[cfg(unix)]
fn private_dir(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(p)
}

#[cfg(not(unix))]
fn private_dir(p: &Path) -> std::io::Result<()> {
    std::fs::create_dir(p)
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes the staging directories under `base` that exports killed by a
/// signal left: named for a process that no longer runs, owned by this
/// user, untouched for `age`. Best effort: what cannot be removed stays.
/// Only where `/proc` tells which processes run.
fn sweep(base: &Path, age: Duration) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let p = e.path();
        if pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        // Not followed: a link is never a staging directory.
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let old = m
            .modified()
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|d| d >= age);
        if m.is_dir() && old && mine(&m) {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
}

#[cfg(unix)]
fn mine(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // The owner of this process's own files: no libc call needed.
    std::fs::metadata("/proc/self").is_ok_and(|s| s.uid() == m.uid())
}

#[cfg(not(unix))]
fn mine(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_directories_of_dead_processes_are_swept() {
        let base = tempfile::tempdir().unwrap();
        // Above any pid_max: never a running process.
        let dead = base.path().join(format!("{PREFIX}4294967295-1f-0"));
        let live = base.path().join(format!("{PREFIX}1-1f-0"));
        let other = base.path().join("floxlog-exports-4294967295");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("part.parquet"), b"x").unwrap();
        }
        // Young: kept, dead or not.
        sweep(base.path(), Duration::from_secs(3600));
        assert!(dead.exists() && live.exists() && other.exists());
        sweep(base.path(), Duration::ZERO);
        assert!(!dead.exists(), "a dead export's directory stays");
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn a_staging_directory_is_private_and_removed_when_dropped() {
        let s = Staging::new().unwrap();
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        drop(s);
        assert!(!p.exists());
    }
}
