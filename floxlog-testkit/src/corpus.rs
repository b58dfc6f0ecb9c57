//! Loading a conformance corpus laid out like `conformance/`
//! (`cases/`, `real/`, `corrupt/`; see its README). The root is always a
//! parameter, so the same runner works on any corpus with this layout.

use floxlog_core::{Compression, ErrorKind};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The reference writer's settings for a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterSettings {
    /// Codec.
    pub compression: Compression,
    /// Whether an index was written.
    pub create_index: bool,
    /// Index interval / events per LZ4 block.
    pub index_interval: u16,
    /// Segment header exchange tag.
    pub exchange_id: u8,
    /// Rotation threshold (uncompressed only).
    pub max_segment_bytes: u64,
}

/// One segment file of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    /// Path of the file.
    pub path: PathBuf,
    /// Its `created_ns`, if the case gives it.
    pub created_ns: Option<i64>,
}

/// A case of `cases/` or `real/`.
#[derive(Clone, Debug)]
pub struct Case {
    /// Case name.
    pub name: String,
    /// Case directory.
    pub dir: PathBuf,
    /// Writer settings (absent for `real/`).
    pub writer: Option<WriterSettings>,
    /// Segment files in write order.
    pub segments: Vec<SegmentFile>,
    /// Whether a writer must reproduce the bytes exactly.
    pub byte_exact: bool,
    /// Input events (`events.jsonl`), if present.
    pub events_path: Option<PathBuf>,
    /// Expected reader output.
    pub expected_path: PathBuf,
}

/// What a strict reader must do with a damaged segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Yield `events` events, then fail with `kind` at `offset`.
    Error {
        /// Events before the error.
        events: u64,
        /// Error kind.
        kind: ErrorKind,
        /// Byte offset of what failed.
        offset: u64,
    },
    /// Read `events` events cleanly; the index fails with `kind`.
    IndexError {
        /// Events read.
        events: u64,
        /// Index error kind.
        kind: ErrorKind,
    },
}

/// A case of `corrupt/`.
#[derive(Clone, Debug)]
pub struct CorruptCase {
    /// Case name.
    pub name: String,
    /// The damaged segment.
    pub segment: PathBuf,
    /// The expected outcome.
    pub expect: Expect,
}

/// A whole corpus.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Root directory.
    pub root: PathBuf,
    /// `cases/`.
    pub cases: Vec<Case>,
    /// `real/`.
    pub real: Vec<Case>,
    /// `corrupt/`.
    pub corrupt: Vec<CorruptCase>,
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v = Vec::new();
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(v),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    for e in rd {
        let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if p.is_dir() {
            v.push(p);
        }
    }
    v.sort();
    Ok(v)
}

fn field<'v>(v: &'v Value, k: &str, ctx: &Path) -> Result<&'v Value, String> {
    v.get(k)
        .ok_or_else(|| format!("{}: missing `{k}`", ctx.display()))
}

fn as_u64(v: &Value, k: &str, ctx: &Path) -> Result<u64, String> {
    field(v, k, ctx)?
        .as_u64()
        .ok_or_else(|| format!("{}: `{k}` is not an unsigned integer", ctx.display()))
}

fn load_case(dir: &Path) -> Result<Case, String> {
    let cj = dir.join("case.json");
    let v = read_json(&cj)?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| dir.file_name().unwrap_or_default().to_string_lossy().into());
    let writer = match v.get("writer") {
        None => None,
        Some(w) => Some(WriterSettings {
            compression: match field(w, "compression", &cj)?.as_str() {
                Some("none") => Compression::None,
                Some("lz4") => Compression::Lz4,
                _ => return Err(format!("{}: unknown compression", cj.display())),
            },
            create_index: field(w, "create_index", &cj)?
                .as_bool()
                .ok_or_else(|| format!("{}: create_index is not a bool", cj.display()))?,
            index_interval: u16::try_from(as_u64(w, "index_interval", &cj)?)
                .map_err(|_| format!("{}: index_interval out of range", cj.display()))?,
            exchange_id: u8::try_from(as_u64(w, "exchange_id", &cj)?)
                .map_err(|_| format!("{}: exchange_id out of range", cj.display()))?,
            max_segment_bytes: w
                .get("max_segment_bytes")
                .and_then(Value::as_u64)
                .unwrap_or(floxlog_core::DEFAULT_MAX_SEGMENT_BYTES),
        }),
    };
    let mut segments = Vec::new();
    let seg_dir = dir.join("segments");
    if let Some(list) = v.get("segments").and_then(Value::as_array) {
        for s in list {
            let file = field(s, "file", &cj)?
                .as_str()
                .ok_or_else(|| format!("{}: segment file is not a string", cj.display()))?;
            segments.push(SegmentFile {
                path: seg_dir.join(file),
                created_ns: s.get("created_ns").and_then(Value::as_i64),
            });
        }
    } else {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&seg_dir)
            .map_err(|e| format!("{}: {e}", seg_dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        segments.extend(files.into_iter().map(|path| SegmentFile {
            path,
            created_ns: None,
        }));
    }
    let events = dir.join("events.jsonl");
    Ok(Case {
        name,
        dir: dir.to_path_buf(),
        writer,
        segments,
        byte_exact: v
            .get("byte_exact")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        events_path: events.is_file().then_some(events),
        expected_path: dir.join("expected.jsonl"),
    })
}

fn kind_of(v: &Value, k: &str, ctx: &Path) -> Result<ErrorKind, String> {
    let s = field(v, k, ctx)?
        .as_str()
        .ok_or_else(|| format!("{}: `{k}` is not a string", ctx.display()))?;
    ErrorKind::from_name(s).ok_or_else(|| format!("{}: unknown error kind `{s}`", ctx.display()))
}

fn load_corrupt(dir: &Path) -> Result<CorruptCase, String> {
    let cj = dir.join("case.json");
    let v = read_json(&cj)?;
    let e = field(&v, "expect", &cj)?;
    let events = as_u64(e, "events", &cj)?;
    let expect = if e.get("index_error").is_some() {
        Expect::IndexError {
            events,
            kind: kind_of(e, "index_error", &cj)?,
        }
    } else {
        Expect::Error {
            events,
            kind: kind_of(e, "error", &cj)?,
            offset: as_u64(e, "error_offset", &cj)?,
        }
    };
    Ok(CorruptCase {
        name: dir.file_name().unwrap_or_default().to_string_lossy().into(),
        segment: dir.join("segment.floxlog"),
        expect,
    })
}

impl Corpus {
    /// Loads every case under `root`.
    pub fn load(root: &Path) -> Result<Corpus, String> {
        if !root.is_dir() {
            return Err(format!("corpus root {} is not a directory", root.display()));
        }
        Ok(Corpus {
            root: root.to_path_buf(),
            cases: subdirs(&root.join("cases"))?
                .iter()
                .map(|d| load_case(d))
                .collect::<Result<_, _>>()?,
            real: subdirs(&root.join("real"))?
                .iter()
                .map(|d| load_case(d))
                .collect::<Result<_, _>>()?,
            corrupt: subdirs(&root.join("corrupt"))?
                .iter()
                .map(|d| load_corrupt(d))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The corpus root named by `FLOXLOG_CONFORMANCE_DIR`, else `default`.
    pub fn root_from_env(default: &Path) -> PathBuf {
        std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| default.to_path_buf())
    }
}

/// Reads a JSON-lines file into values (blank lines skipped).
pub fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}
