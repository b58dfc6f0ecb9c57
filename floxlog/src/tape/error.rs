//! Errors of tape operations: what failed, in which file, at which byte
//! offset, and what to do about it.

use super::hint::{Hint, Remedy, Vocabulary};
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
    /// What to do about it (rendered in each interface's words).
    pub hint: Option<Hint>,
}

impl TapeError {
    /// An I/O error while `doing` something with `path`.
    pub fn io(path: &Path, doing: &str, e: std::io::Error) -> TapeError {
        let hint = match e.kind() {
            std::io::ErrorKind::NotFound => Some(Hint::from("check the path")),
            std::io::ErrorKind::PermissionDenied => Some(Hint::from("check the file permissions")),
            std::io::ErrorKind::AlreadyExists => Some(Hint::from(
                "choose another output path or remove the existing one",
            )),
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
            hint: Some(hint_for(&e)),
        }
    }

    /// A manifest problem.
    pub fn manifest(path: &Path, message: impl Into<String>, hint: impl Into<Hint>) -> TapeError {
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
    pub fn with_hint(mut self, hint: impl Into<Hint>) -> TapeError {
        self.hint = Some(hint.into());
        self
    }

    /// The same error with an offset.
    pub fn at(mut self, offset: u64) -> TapeError {
        self.offset = Some(offset);
        self
    }

    /// The same error with its hint in `v`'s words (what a front end shows
    /// or hands on).
    pub fn localized(&self, v: &dyn Vocabulary) -> TapeError {
        let mut e = self.clone();
        e.hint = e.hint.map(|h| h.localized(v));
        e
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

/// The `what` of the error a shrinking gives.
pub const SHRANK: &str = "the file shrank while it was being read (another program truncated it)";

/// The `what` of the error of a segment flagged Sorted whose timestamps
/// go back.
pub const UNSORTED: &str =
    "the segment is flagged Sorted, but exchange_ts_ns goes back here (a time-ordered or time-filtered read relies on the flag)";

/// What to do about codec error `e`. Never an operation that would refuse
/// the file: recovering needs a valid header, reindexing a segment that
/// reads to its end.
pub fn hint_for(e: &floxlog_core::Error) -> Hint {
    if e.what == SHRANK {
        return Hint::from(
            "another program cut the file while it was read; the events before this \
             offset were delivered. Read it again once nothing truncates it",
        );
    }
    if e.what == UNSORTED {
        return Hint::new(
            "the segment's Sorted flag is wrong: a file-order read returns every event, \
             and {} writes the flag for what it holds",
            &[Remedy::Reindex],
        );
    }
    let text = match e.kind {
        ErrorKind::Truncated if e.offset == 0 => {
            "the file is shorter than a segment header, so it holds no events \
             (a writer killed before its first write leaves this); there is nothing to recover"
        }
        ErrorKind::Truncated => return Hint::new(
            "the segment ends inside a record (it was cut short, or its writer died mid-write); \
                 {} keeps every complete event",
            &[Remedy::Recover],
        ),
        ErrorKind::CrcMismatch
        | ErrorKind::MalformedRecord
        | ErrorKind::BadBlockMagic
        | ErrorKind::DecompressionFailed
        | ErrorKind::FrameFlagsNonzero => {
            return Hint::new(
                "the segment is damaged from this offset on; {} keeps the events before it",
                &[Remedy::Recover],
            )
        }
        ErrorKind::BadMagic => "this is not a .floxlog segment, or its header is damaged",
        ErrorKind::UnsupportedVersion
        | ErrorKind::UnknownFlags
        | ErrorKind::UnsupportedRecordVersion => {
            "the segment uses a newer format than 1.0; read it with a newer floxlog"
        }
        ErrorKind::UnknownRecordType => {
            return Hint::new(
                "the segment holds a record type 1.0 does not define; {} to skip such frames",
                &[Remedy::SkipUnknown],
            )
        }
        ErrorKind::Encrypted => "encrypted segments are not supported by 1.0",
        ErrorKind::ReservedNonzero | ErrorKind::UnknownCompression => {
            "the segment header is damaged or from another format version"
        }
        ErrorKind::IndexCrcMismatch | ErrorKind::BadIndex => {
            return Hint::new(
                "the events are intact; {} rebuilds the index",
                &[Remedy::Reindex],
            )
        }
        ErrorKind::Lz4Unsupported => "this build has no LZ4 support",
        _ => "this is an internal limit of the tool; please report it",
    };
    Hint::from(text)
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
