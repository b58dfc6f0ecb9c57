//! Errors of tape operations: what failed, in which file, at which byte
//! offset, and what to do about it.

use floxlog_core::ErrorKind;
use std::fmt;
use std::path::{Path, PathBuf};

/// The class of a [`TapeError`]; decides the CLI exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapeErrorKind {
    /// The operating system refused (missing file, permission, disk full).
    Io(std::io::ErrorKind),
    /// Segment bytes failed a check of the codec (kind as in the corpus).
    Data(ErrorKind),
    /// `manifest.json` (or `.manifest`) is unreadable or of another version.
    Manifest,
    /// Input that is not a tape or not valid JSON events.
    Input,
    /// Arguments that cannot work together.
    Usage,
}

/// An error with the file, offset and a hint at the fix.
#[derive(Clone, Debug)]
pub struct TapeError {
    /// What class of failure.
    pub kind: TapeErrorKind,
    /// The file concerned, if any.
    pub path: Option<PathBuf>,
    /// Byte offset in that file, if it applies.
    pub offset: Option<u64>,
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl TapeError {
    /// An I/O error while `doing` something with `path`.
    pub fn io(path: &Path, doing: &str, e: std::io::Error) -> TapeError {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound => Some("check the path".to_string()),
            std::io::ErrorKind::PermissionDenied => Some("check the file permissions".to_string()),
            std::io::ErrorKind::AlreadyExists => {
                Some("choose another output path or remove the existing one".to_string())
            }
            _ => None,
        };
        TapeError {
            kind: TapeErrorKind::Io(e.kind()),
            path: Some(path.to_path_buf()),
            offset: None,
            message: format!("{doing}: {e}"),
            hint,
        }
    }

    /// A codec error in segment `path`.
    pub fn data(path: &Path, e: floxlog_core::Error) -> TapeError {
        let mut message = format!("{}: {}", e.kind, e.what);
        if let Some(p) = e.in_block {
            message.push_str(&format!(" (frame at +{p} inside the decompressed block)"));
        }
        TapeError {
            kind: TapeErrorKind::Data(e.kind),
            path: Some(path.to_path_buf()),
            offset: Some(e.offset),
            message,
            hint: Some(hint_for(&e).to_string()),
        }
    }

    /// A manifest problem.
    pub fn manifest(path: &Path, message: impl Into<String>, hint: impl Into<String>) -> TapeError {
        TapeError {
            kind: TapeErrorKind::Manifest,
            path: Some(path.to_path_buf()),
            offset: None,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// Bad input (not a tape, bad JSON line...).
    pub fn input(path: Option<&Path>, message: impl Into<String>) -> TapeError {
        TapeError {
            kind: TapeErrorKind::Input,
            path: path.map(Path::to_path_buf),
            offset: None,
            message: message.into(),
            hint: None,
        }
    }

    /// Arguments that do not work together.
    pub fn usage(message: impl Into<String>) -> TapeError {
        TapeError {
            kind: TapeErrorKind::Usage,
            path: None,
            offset: None,
            message: message.into(),
            hint: None,
        }
    }

    /// The same error with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> TapeError {
        self.hint = Some(hint.into());
        self
    }

    /// The same error with an offset.
    pub fn at(mut self, offset: u64) -> TapeError {
        self.offset = Some(offset);
        self
    }

    /// The CLI exit code for this error: 1 data, 2 usage, 3 I/O.
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            TapeErrorKind::Io(_) => 3,
            TapeErrorKind::Usage => 2,
            _ => 1,
        }
    }

    /// The corpus error kind, for data errors.
    pub fn data_kind(&self) -> Option<ErrorKind> {
        match self.kind {
            TapeErrorKind::Data(k) => Some(k),
            _ => None,
        }
    }
}

/// What to do about codec error `e`. Never a command that would refuse the
/// file: `recover` needs a valid header, `reindex` a segment that reads to
/// its end.
pub fn hint_for(e: &floxlog_core::Error) -> &'static str {
    if e.what == super::source::SHRANK {
        return "another program cut the file while it was read; the events before this \
                offset were delivered. Read it again once nothing truncates it";
    }
    if e.what == super::merge::UNSORTED {
        return "the segment's Sorted flag is wrong: a file-order read returns every event, \
                and reindexing the segment writes the flag for what it holds";
    }
    match e.kind {
        ErrorKind::Truncated if e.offset == 0 => {
            "the file is shorter than a segment header, so it holds no events \
             (a writer killed before its first write leaves this); there is nothing to recover"
        }
        ErrorKind::Truncated => {
            "the segment ends inside a record (it was cut short, or its writer died mid-write); \
             `floxlog recover FILE` keeps every complete event"
        }
        ErrorKind::CrcMismatch
        | ErrorKind::MalformedRecord
        | ErrorKind::BadBlockMagic
        | ErrorKind::DecompressionFailed
        | ErrorKind::FrameFlagsNonzero => {
            "the segment is damaged from this offset on; `floxlog recover FILE` keeps the events before it"
        }
        ErrorKind::BadMagic => "this is not a .floxlog segment, or its header is damaged",
        ErrorKind::UnsupportedVersion | ErrorKind::UnknownFlags | ErrorKind::UnsupportedRecordVersion => {
            "the segment uses a newer format than 1.0; read it with a newer floxlog"
        }
        ErrorKind::UnknownRecordType => {
            "the segment holds a record type 1.0 does not define; pass --skip-unknown to skip such frames"
        }
        ErrorKind::Encrypted => "encrypted segments are not supported by 1.0",
        ErrorKind::ReservedNonzero | ErrorKind::UnknownCompression => {
            "the segment header is damaged or from another format version"
        }
        ErrorKind::IndexCrcMismatch | ErrorKind::BadIndex => {
            "the events are intact; `floxlog reindex FILE` rebuilds the index"
        }
        ErrorKind::Lz4Unsupported => "this build has no LZ4 support",
        _ => "this is an internal limit of the tool; please report it",
    }
}

impl fmt::Display for TapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{}", p.display())?;
            if let Some(o) = self.offset {
                write!(f, " at byte {o}")?;
            }
            f.write_str(": ")?;
        } else if let Some(o) = self.offset {
            write!(f, "at byte {o}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TapeError {}
