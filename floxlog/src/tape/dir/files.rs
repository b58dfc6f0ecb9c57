//! Opening the files of a tape safely: only regular files are opened, so a
//! FIFO (whose `open` blocks until a writer comes) or a device never hangs
//! or feeds a reader, and a tape directory's segments are never followed
//! through a symbolic link out of it.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// What a directory entry is, for messages: `None` for a regular file.
pub fn not_regular(md: &Metadata) -> Option<&'static str> {
    let t = md.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_symlink() {
        return Some("a symbolic link");
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_block_device() || t.is_char_device() {
            return Some("a device");
        }
    }
    Some("not a regular file")
}

/// Opens `path` for reading if it is a regular file, else an
/// `InvalidInput` error saying what it is. `follow`: a symbolic link is
/// followed (a file the user named); otherwise it is refused (a file found
/// in a tape directory). The type is checked before opening, and again on
/// the opened file: opened non-blocking (no effect on regular files), a
/// FIFO swapped in between cannot block the open either.
pub fn open_regular(path: &Path, follow: bool) -> io::Result<File> {
    let md = if follow {
        std::fs::metadata(path)?
    } else {
        std::fs::symlink_metadata(path)?
    };
    if let Some(what) = not_regular(&md) {
        return Err(refused(what));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        o.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let f = o.open(path)?;
    if let Some(what) = not_regular(&f.metadata()?) {
        return Err(refused(what));
    }
    Ok(f)
}

fn refused(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file; not opened"),
    )
}

/// Reads a small side file (a manifest, metadata) if it is a regular
/// file in its directory: `Ok(None)` when absent, an error when it is
/// something else.
pub fn read_side_file(path: &Path) -> io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if crate::tape::remote::is_url(path) {
        return crate::tape::remote::read_side(path);
    }
    let mut f = match open_regular(path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut v = Vec::new();
    f.read_to_end(&mut v)?;
    Ok(Some(v))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_links_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("1.floxlog");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for follow in [true, false] {
            let e = open_regular(&fifo, follow).unwrap_err();
            assert!(e.to_string().contains("FIFO"), "{e}");
        }
        let out = d.path().join("outside");
        std::fs::write(&out, b"x").unwrap();
        let link = d.path().join("2.floxlog");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        assert!(open_regular(&link, false)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        assert!(open_regular(&link, true).is_ok());
    }
}
