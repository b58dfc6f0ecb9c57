//! Loading a conformance corpus laid out like `conformance/`
//! (`cases/`, `real/`, `corrupt/`; see its README). The root is always a
//! parameter, so the same runner works on any corpus with this layout.
//!
//! Loading is per case: a case whose `case.json` is missing or malformed
//! becomes a [`BrokenCase`] (with the file and what is wrong), and the
//! other cases load normally. Fields the loader does not know are ignored.

use floxlog_core::Compression;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The three folders of a corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    /// `cases/`: reference segments, expected events, maybe writer input.
    Cases,
    /// `corrupt/`: one damaged segment and the outcome a reader must give.
    Corrupt,
    /// `real/`: recordings (read only).
    Real,
    /// `tapes/`: tape directories read whole, in time order.
    Tapes,
}

impl Group {
    /// The folder name, also the middle part of a case id.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Cases => "cases",
            Group::Corrupt => "corrupt",
            Group::Real => "real",
            Group::Tapes => "tapes",
        }
    }
}

/// The reference writer's settings for a case (widths as in the adapter
/// protocol's settings file, so that any corpus value can be handed on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriterSettings {
    /// Codec.
    pub compression: Compression,
    /// Whether an index was written.
    pub create_index: bool,
    /// Index interval / events per LZ4 block.
    pub index_interval: u32,
    /// Segment header exchange tag.
    pub exchange_id: u16,
    /// Rotation threshold (uncompressed only).
    pub max_segment_bytes: u64,
    /// Writer conventions (`reference` unless the case says otherwise).
    pub profile: String,
}

/// One segment file of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    /// Path of the file.
    pub path: PathBuf,
    /// Its `created_ns`, if the case gives it.
    pub created_ns: Option<i64>,
}

impl SegmentFile {
    /// The file name, for messages.
    pub fn file_name(&self) -> String {
        file_name(&self.path)
    }
}

/// A case of `cases/` or `real/`.
#[derive(Clone, Debug)]
pub struct Case {
    /// Case name (its folder's name).
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
    /// Halves (`read`, `index`, `write`) whose check is recommended rather
    /// than required: it tests a reference quirk, not the spec.
    pub recommended: Vec<String>,
    /// Expected reader output.
    pub expected_path: PathBuf,
    /// `tapes/`: the tape directory read whole (`tape/`).
    pub tape: Option<PathBuf>,
    /// `tapes/`: the tape's read must fail (after its events) with this
    /// finding (`expect.error`, e.g. `missing_segment`).
    pub tape_error: Option<String>,
}

/// What a strict reader must do with a damaged segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Yield `events` events, then fail with `kind` at `offset`.
    Error {
        /// Events before the error.
        events: u64,
        /// Error kind, as the corpus spells it (e.g. `crc_mismatch`).
        kind: String,
        /// Byte offset of what failed.
        offset: u64,
    },
    /// Read `events` events cleanly; the index fails with `kind`.
    IndexError {
        /// Events read.
        events: u64,
        /// Index error kind.
        kind: String,
    },
}

/// A case of `corrupt/`.
#[derive(Clone, Debug)]
pub struct CorruptCase {
    /// Case name (its folder's name).
    pub name: String,
    /// The damaged segment.
    pub segment: PathBuf,
    /// The expected outcome.
    pub expect: Expect,
    /// The `expected.jsonl` whose first events are the ones before the
    /// damage (`source` in `case.json`: the case the segment was made
    /// from); `None` if the case names none.
    pub source: Option<PathBuf>,
    /// Halves whose check is recommended rather than required.
    pub recommended: Vec<String>,
}

/// A case folder whose `case.json` could not be used.
#[derive(Clone, Debug)]
pub struct BrokenCase {
    /// Its folder.
    pub group: Group,
    /// Case name (its folder's name).
    pub name: String,
    /// Whether the folder holds `events.jsonl` (a writer case).
    pub has_events: bool,
    /// What is wrong, naming the file.
    pub error: String,
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
    /// `tapes/`.
    pub tapes: Vec<Case>,
    /// Case folders that could not be loaded.
    pub broken: Vec<BrokenCase>,
    /// The corpus version (`VERSION`, semantic versioning), if it has one.
    pub version: Option<String>,
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into()
}

/// Most bytes of a `case.json`.
pub const MAX_CASE_JSON: u64 = 16 << 20;
/// Most bytes of an `expected.jsonl`: what a reader adapter may print
/// (a longer file could never be matched).
pub const MAX_EXPECTED: u64 = 256 << 20;

/// The text of corpus file `path`: a regular file (never a FIFO, which
/// would block) of at most `cap` bytes.
fn read_text(path: &Path, cap: u64) -> Result<String, String> {
    use std::io::Read;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let f = crate::tape::dir::files::open_regular(path, true).map_err(|e| err(&e))?;
    let len = f.metadata().map_err(|e| err(&e))?.len();
    if len > cap {
        return Err(format!(
            "{}: {len} bytes, more than the {} MiB such a file may have",
            path.display(),
            cap >> 20
        ));
    }
    let mut text = String::new();
    f.take(cap).read_to_string(&mut text).map_err(|e| err(&e))?;
    Ok(text)
}

/// `p` is inside the corpus `root` (canonical) once links are resolved,
/// or does not exist (it is reported as missing where it is used).
fn within(root: &Path, p: &Path) -> Result<(), String> {
    match std::fs::canonicalize(p) {
        Ok(c) if c.starts_with(root) => Ok(()),
        Ok(c) => Err(format!(
            "{} leads outside the corpus (to {}); a case may only use files inside it",
            p.display(),
            c.display()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", p.display())),
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = read_text(path, MAX_CASE_JSON)?;
    serde_json::from_str(&text).map_err(|e| format!("{}: invalid JSON: {e}", path.display()))
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

fn as_str<'v>(v: &'v Value, k: &str, ctx: &Path) -> Result<&'v str, String> {
    field(v, k, ctx)?
        .as_str()
        .ok_or_else(|| format!("{}: `{k}` is not a string", ctx.display()))
}

/// `recommended`: the halves whose check tests a reference quirk.
fn recommended(v: &Value, cj: &Path) -> Result<Vec<String>, String> {
    let Some(r) = v.get("recommended") else {
        return Ok(Vec::new());
    };
    let bad = || {
        format!(
            "{}: `recommended` is not a list of halves (read, index, write)",
            cj.display()
        )
    };
    r.as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|h| match h.as_str() {
            Some(h @ ("read" | "index" | "write")) => Ok(h.to_string()),
            _ => Err(bad()),
        })
        .collect()
}

fn load_writer(w: &Value, cj: &Path) -> Result<WriterSettings, String> {
    if !w.is_object() {
        return Err(format!("{}: `writer` is not an object", cj.display()));
    }
    let range = |k: &str| format!("{}: `writer.{k}` is out of range", cj.display());
    Ok(WriterSettings {
        compression: match as_str(w, "compression", cj)? {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            other => {
                return Err(format!(
                    "{}: unknown compression `{other}` (none or lz4)",
                    cj.display()
                ))
            }
        },
        create_index: field(w, "create_index", cj)?
            .as_bool()
            .ok_or_else(|| format!("{}: `create_index` is not a bool", cj.display()))?,
        index_interval: u32::try_from(as_u64(w, "index_interval", cj)?)
            .map_err(|_| range("index_interval"))?,
        exchange_id: u16::try_from(as_u64(w, "exchange_id", cj)?)
            .map_err(|_| range("exchange_id"))?,
        max_segment_bytes: match w.get("max_segment_bytes") {
            None => floxlog_core::DEFAULT_MAX_SEGMENT_BYTES,
            Some(_) => as_u64(w, "max_segment_bytes", cj)?,
        },
        profile: match w.get("profile") {
            None => "reference".into(),
            Some(_) => as_str(w, "profile", cj)?.to_string(),
        },
    })
}

fn load_case(root: &Path, dir: &Path) -> Result<Case, String> {
    let cj = dir.join("case.json");
    for p in [dir, &cj, &dir.join("segments")] {
        within(root, p)?;
    }
    let v = read_json(&cj)?;
    if !v.is_object() {
        return Err(format!("{}: not a JSON object", cj.display()));
    }
    let writer = match v.get("writer") {
        None | Some(Value::Null) => None,
        Some(w) => Some(load_writer(w, &cj)?),
    };
    let mut segments = Vec::new();
    let seg_dir = dir.join("segments");
    match v.get("segments") {
        Some(list) => {
            let list = list
                .as_array()
                .ok_or_else(|| format!("{}: `segments` is not an array", cj.display()))?;
            for (i, s) in list.iter().enumerate() {
                let file = s.get("file").and_then(Value::as_str).ok_or_else(|| {
                    format!(
                        "{}: segments[{i}].file is missing or not a string",
                        cj.display()
                    )
                })?;
                // A name, not a path: a case must not reach outside its folder.
                if file.is_empty() || file.contains(['/', '\\']) || file == ".." {
                    return Err(format!(
                        "{}: segments[{i}].file `{file}` is not a plain file name",
                        cj.display()
                    ));
                }
                let created_ns = match s.get("created_ns") {
                    None | Some(Value::Null) => None,
                    Some(c) => Some(c.as_i64().ok_or_else(|| {
                        format!(
                            "{}: segments[{i}].created_ns is not a 64-bit integer",
                            cj.display()
                        )
                    })?),
                };
                segments.push(SegmentFile {
                    path: seg_dir.join(file),
                    created_ns,
                });
            }
        }
        None => {
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
    }
    for s in &segments {
        within(root, &s.path)?;
    }
    let byte_exact = match v.get("byte_exact") {
        None | Some(Value::Null) => false,
        Some(b) => b
            .as_bool()
            .ok_or_else(|| format!("{}: `byte_exact` is not a bool", cj.display()))?,
    };
    let events = dir.join("events.jsonl");
    within(root, &events)?;
    within(root, &dir.join("expected.jsonl"))?;
    Ok(Case {
        name: file_name(dir),
        dir: dir.to_path_buf(),
        writer,
        segments,
        byte_exact,
        events_path: events.is_file().then_some(events),
        expected_path: dir.join("expected.jsonl"),
        recommended: recommended(&v, &cj)?,
        tape: None,
        tape_error: None,
    })
}

fn load_tape(root: &Path, dir: &Path) -> Result<Case, String> {
    let cj = dir.join("case.json");
    for p in [dir, &cj, &dir.join("tape"), &dir.join("expected.jsonl")] {
        within(root, p)?;
    }
    let v = read_json(&cj)?;
    let tape_error = match v.get("expect") {
        None | Some(Value::Null) => None,
        Some(e) => Some(as_str(e, "error", &cj)?.to_string()),
    };
    Ok(Case {
        name: file_name(dir),
        dir: dir.to_path_buf(),
        writer: None,
        segments: Vec::new(),
        byte_exact: false,
        events_path: None,
        expected_path: dir.join("expected.jsonl"),
        recommended: recommended(&v, &cj)?,
        tape: Some(dir.join("tape")),
        tape_error,
    })
}

fn load_corrupt(root: &Path, dir: &Path) -> Result<CorruptCase, String> {
    let cj = dir.join("case.json");
    for p in [dir, &cj, &dir.join("segment.floxlog")] {
        within(root, p)?;
    }
    let v = read_json(&cj)?;
    let e = field(&v, "expect", &cj)?;
    let events = as_u64(e, "events", &cj)?;
    let expect = if e.get("index_error").is_some() {
        Expect::IndexError {
            events,
            kind: as_str(e, "index_error", &cj)?.to_string(),
        }
    } else {
        Expect::Error {
            events,
            kind: as_str(e, "error", &cj)?.to_string(),
            offset: as_u64(e, "error_offset", &cj)?,
        }
    };
    let source = match v.get("source") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let s = as_str(&v, "source", &cj)?;
            let ok = matches!(s.split_once('/'), Some(("cases" | "real", n))
                if !n.is_empty() && !n.contains(['/', '\\']) && n != "..");
            if !ok {
                return Err(format!(
                    "{}: `source` `{s}` is not `cases/<name>` or `real/<name>`",
                    cj.display()
                ));
            }
            // From the folder's own root (not the canonical one): the same
            // spelling as every other path of the corpus.
            let top = dir.parent().and_then(Path::parent).unwrap_or(root);
            let p = top.join(s).join("expected.jsonl");
            within(root, &p)?;
            Some(p)
        }
    };
    Ok(CorruptCase {
        name: file_name(dir),
        segment: dir.join("segment.floxlog"),
        expect,
        source,
        recommended: recommended(&v, &cj)?,
    })
}

impl Corpus {
    /// Loads every case under `root`. Fails only when `root` is not a
    /// corpus (not a directory, or none of `cases/`, `corrupt/`, `real/`)
    /// or a group folder cannot be listed; a bad case lands in `broken`.
    pub fn load(root: &Path) -> Result<Corpus, String> {
        // Adapters get absolute paths, whatever the caller's directory.
        let root = &std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        if !root.is_dir() {
            return Err(format!("corpus root {} is not a directory", root.display()));
        }
        if !Group::ALL.iter().any(|g| root.join(g.as_str()).is_dir()) {
            return Err(format!(
                "{} is not a conformance corpus: it has no cases/, corrupt/ or real/ folder",
                root.display()
            ));
        }
        let canon = std::fs::canonicalize(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let mut c = Corpus {
            root: root.to_path_buf(),
            cases: Vec::new(),
            real: Vec::new(),
            corrupt: Vec::new(),
            tapes: Vec::new(),
            broken: Vec::new(),
            version: super::integrity::version(root)?,
        };
        for g in Group::ALL {
            for dir in subdirs(&root.join(g.as_str()))? {
                let r = match g {
                    Group::Cases => load_case(&canon, &dir).map(|x| c.cases.push(x)),
                    Group::Real => load_case(&canon, &dir).map(|x| c.real.push(x)),
                    Group::Corrupt => load_corrupt(&canon, &dir).map(|x| c.corrupt.push(x)),
                    Group::Tapes => load_tape(&canon, &dir).map(|x| c.tapes.push(x)),
                };
                if let Err(error) = r {
                    c.broken.push(BrokenCase {
                        group: g,
                        name: file_name(&dir),
                        has_events: dir.join("events.jsonl").is_file(),
                        error,
                    });
                }
            }
        }
        Ok(c)
    }

    /// Number of case folders, loaded or broken.
    pub fn len(&self) -> usize {
        self.cases.len()
            + self.real.len()
            + self.corrupt.len()
            + self.tapes.len()
            + self.broken.len()
    }

    /// Whether the corpus has no case folder at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The corpus root named by `FLOXLOG_CONFORMANCE_DIR`, else `default`.
    pub fn root_from_env(default: &Path) -> PathBuf {
        std::env::var_os(ENV_DIR)
            .map(PathBuf::from)
            .unwrap_or_else(|| default.to_path_buf())
    }
}

/// The environment variable naming a corpus root.
pub const ENV_DIR: &str = "FLOXLOG_CONFORMANCE_DIR";

impl Group {
    /// Every group, in the order cases are run.
    pub const ALL: [Group; 4] = [Group::Cases, Group::Real, Group::Corrupt, Group::Tapes];
}

/// Reads a JSON-lines file into values (blank lines skipped); errors name
/// the file and line.
pub fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = read_text(path, MAX_EXPECTED)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}
