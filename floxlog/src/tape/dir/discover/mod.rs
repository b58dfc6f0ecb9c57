//! Finding the segments of a tape: a directory with `manifest.json` (spec
//! layout, per-type `trades-000000.bin` series, or this crate's default
//! flox layout of `*.floxlog` files), a directory of `*.floxlog` files with
//! no manifest (flox's layout; file-name order, as flox reads them), or
//! single segment files.
//!
//! The manifest is an index, not a requirement: listed files that are
//! missing, files that are not listed, and sizes that disagree are reported
//! as findings, and every segment file found is read.

use crate::tape::dir::files::not_regular;
use crate::tape::dir::flox_manifest::{FloxManifest, Metadata};
use crate::tape::dir::manifest::{Manifest, ManifestSegment, MANIFEST_FILE};
use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use crate::tape::report::{Finding, FindingKind, Severity};
use std::path::{Path, PathBuf};

/// Segment file layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// `<created_ns>.floxlog` segments, every record type interleaved (what
    /// flox writes and replays). The default.
    #[default]
    Flox,
    /// Spec 1.0: one series per record type (`trades-000000.bin`,
    /// `book-000000.bin`, `options-...`, `pools-...`).
    Spec,
}

/// Series (manifest `type`) of the spec layout for a frame type.
pub fn series_of(frame_type: u8) -> &'static str {
    match frame_type {
        1 => "trades",
        2 | 3 => "book",
        4 => "options",
        _ => "pools",
    }
}

/// The series every spec-layout tape can hold, in manifest order.
pub const SERIES: [&str; 4] = ["trades", "book", "options", "pools"];

/// The manifest `type` of an interleaved (flox layout) segment.
pub const MIXED: &str = "mixed";

/// One segment of a tape.
#[derive(Clone, Debug)]
pub struct TapeSegment {
    /// Path of the file.
    pub path: PathBuf,
    /// File name.
    pub name: String,
    /// Series (`mixed` for interleaved segments).
    pub series: String,
    /// Its manifest entry, if a manifest lists it.
    pub listed: Option<ManifestSegment>,
    /// Index of the tape directory it belongs to in [`Tape::dirs`], if any.
    pub dir: Option<usize>,
}

impl TapeSegment {
    /// A segment file the caller named (not found in a tape directory):
    /// its series from its name, `mixed` if the name says none.
    pub(crate) fn file(p: &Path) -> TapeSegment {
        let name = file_name(p);
        TapeSegment {
            path: p.to_path_buf(),
            series: segment_series(&name).unwrap_or_else(|| MIXED.to_string()),
            name,
            listed: None,
            dir: None,
        }
    }

    /// Opens and maps the segment: a file found in a tape directory is
    /// never opened through a symbolic link; one the caller named is.
    pub fn open(&self) -> Result<crate::tape::read::source::SegmentFile, TapeError> {
        self.open_wanting(Default::default())
    }

    /// [`TapeSegment::open`]; an object on object storage fetched as
    /// `want` says.
    pub fn open_wanting(
        &self,
        want: crate::tape::read::source::Want,
    ) -> Result<crate::tape::read::source::SegmentFile, TapeError> {
        use crate::tape::read::source::SegmentFile;
        SegmentFile::open_wanting(&self.path, self.dir.is_none(), want)
    }
}

/// A tape directory's side files.
#[derive(Clone, Debug)]
pub struct TapeDir {
    /// The directory.
    pub path: PathBuf,
    /// `manifest.json`, if present (and not ignored).
    pub manifest: Option<Manifest>,
    /// flox's `.manifest`, if present and readable.
    pub flox_manifest: Option<FloxManifest>,
    /// flox's `metadata.json`, if present.
    pub metadata: Option<Metadata>,
}

/// The segments of one or more inputs, in file order.
#[derive(Clone, Debug, Default)]
pub struct Tape {
    /// Directories given.
    pub dirs: Vec<TapeDir>,
    /// Segments in file order.
    pub segments: Vec<TapeSegment>,
    /// Disagreements found while listing (missing or unlisted files...);
    /// at most `FINDINGS_PER_KIND` of a kind, then one that counts the
    /// rest.
    pub findings: Vec<Finding>,
    /// Listed segments that were not read (every one, shown or not).
    pub unread_count: u64,
    /// Findings of each kind so far (including those not kept).
    kind_counts: std::collections::HashMap<FindingKind, u64>,
}

/// Findings of one kind kept by a listing; a hostile manifest listing a
/// million missing files costs a count, not a million messages.
pub const FINDINGS_PER_KIND: u64 = 100;

/// Options of [`Tape::open`].
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions {
    /// Do not read `manifest.json` (list the directory instead).
    pub ignore_manifest: bool,
}

/// The series of a segment file name: `Some("mixed")` for `*.floxlog`,
/// `Some(series)` for `series-NNNNNN.bin`, `None` for anything else.
pub fn segment_series(name: &str) -> Option<String> {
    if name.starts_with('.') {
        return None;
    }
    if name.ends_with(".floxlog") && name.len() > ".floxlog".len() {
        return Some(MIXED.to_string());
    }
    let stem = name.strip_suffix(".bin")?;
    let (series, num) = stem.rsplit_once('-')?;
    if series.is_empty() || num.len() < 6 || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if !series
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'_')
    {
        return None;
    }
    Some(series.to_string())
}

/// Whether a manifest's segment name is one plain file name: not empty,
/// not absolute, no separator, not `.` or `..` (so a manifest can never
/// make a reader open a file outside its tape directory).
pub fn is_plain_file_name(name: &str) -> bool {
    let mut c = Path::new(name).components();
    matches!(
        (c.next(), c.next()),
        (Some(std::path::Component::Normal(n)), None) if n == name
    ) && !name.contains(['/', '\\'])
}

/// Sort key of a segment file in a directory: flox's `<created_ns>.floxlog`
/// names by their number (`998` before `1000`), then everything else by
/// name.
pub(crate) fn file_order(name: &str) -> (u8, i64, &str) {
    match name
        .strip_suffix(".floxlog")
        .and_then(|n| n.parse::<i64>().ok())
    {
        Some(n) => (0, n, name),
        None => (1, 0, name),
    }
}

/// The segment files of `dir` (number `di` of a [`Tape`]'s directories),
/// in file order, and the entries named like segments that are not
/// regular files (with what they are instead). The one listing of a tape
/// directory: [`Tape::open`] (with or without a manifest) and the tailer,
/// which lists again at its looks (the directory is the truth while a
/// writer is live: `manifest.json` lags behind it).
#[allow(clippy::type_complexity)]
pub(crate) fn dir_segments(
    dir: &Path,
    di: usize,
) -> Result<(Vec<TapeSegment>, Vec<(String, &'static str)>), TapeError> {
    let mut files: Vec<TapeSegment> = Vec::new();
    let mut skipped: Vec<(String, &'static str)> = Vec::new();
    if crate::tape::remote::is_url(dir) {
        // A prefix's objects are all plain objects.
        files = crate::tape::remote::list(dir)?
            .into_iter()
            .filter_map(|o| {
                Some(TapeSegment {
                    path: dir.join(&o.name),
                    series: segment_series(&o.name)?,
                    name: o.name,
                    listed: None,
                    dir: Some(di),
                })
            })
            .collect();
        files.sort_by(|a, b| file_order(&a.name).cmp(&file_order(&b.name)));
        return Ok((files, skipped));
    }
    let rd = std::fs::read_dir(dir).map_err(|e| TapeError::io(dir, "listing the directory", e))?;
    for entry in rd {
        let entry = entry.map_err(|e| TapeError::io(dir, "listing the directory", e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(series) = segment_series(&name) else {
            continue;
        };
        // The entry's own type: a symbolic link is not followed (it may
        // lead out of the tape directory), a FIFO never opened (it
        // would block). Named like a segment, it is reported, not
        // skipped in silence. The type the listing gives costs no
        // `stat` (a tailer lists at each of its looks).
        let what = match entry.file_type() {
            Ok(t) if t.is_file() => None,
            _ => match entry.metadata() {
                Ok(md) => not_regular(&md),
                Err(_) => Some("unreadable"),
            },
        };
        match what {
            None => files.push(TapeSegment {
                path: dir.join(&name),
                name,
                series,
                listed: None,
                dir: Some(di),
            }),
            Some(what) => skipped.push((name, what)),
        }
    }
    files.sort_by(|a, b| file_order(&a.name).cmp(&file_order(&b.name)));
    Ok((files, skipped))
}

/// The finding of a directory entry named like a segment that is not a
/// regular file.
fn skipped_finding(path: &Path, what: &str) -> Finding {
    Finding::new(
        Severity::Warning,
        FindingKind::SkippedFile,
        Some(path),
        format!("named like a segment, but {what}; skipped, not opened"),
    )
    .hint("segments are regular files in the tape directory (links are not followed)")
}

/// A listed segment's file as found: `Some(Ok(size))` for a regular file
/// (or an object the prefix's listing saw), `Some(Err(what it is))` for
/// anything else, `None` when missing.
fn entry_meta(path: &Path) -> Option<Result<u64, &'static str>> {
    if crate::tape::remote::is_url(path) {
        return crate::tape::remote::listed_size(path).map(Ok);
    }
    let md = std::fs::symlink_metadata(path).ok()?;
    Some(match md.is_file() {
        true => Ok(md.len()),
        false => Err(not_regular(&md).unwrap_or("not a regular file")),
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Tape {
    /// Bytes of every listed segment file that exists (for progress bars).
    pub fn file_bytes(&self) -> u64 {
        let sizes =
            self.segments
                .iter()
                .filter_map(|s| match crate::tape::remote::is_url(&s.path) {
                    true => crate::tape::remote::listed_size(&s.path),
                    false => std::fs::metadata(&s.path).ok().map(|m| m.len()),
                });
        sizes.sum()
    }

    /// Lists the segments of each input, in the order given.
    pub fn open(inputs: &[PathBuf], opts: OpenOptions) -> Result<Tape, TapeError> {
        let mut tape = Tape::default();
        for p in inputs {
            let is_dir = if crate::tape::remote::is_url(p) {
                crate::tape::remote::kind(p)? == crate::tape::remote::Kind::Prefix
            } else {
                let md =
                    std::fs::metadata(p).map_err(|e| TapeError::io(p, "opening the input", e))?;
                md.is_dir()
            };
            if is_dir {
                tape.add_dir(p, opts)?;
            } else {
                tape.segments.push(TapeSegment::file(p));
            }
        }
        tape.summarise();
        Ok(tape)
    }

    fn add_dir(&mut self, dir: &Path, opts: OpenOptions) -> Result<(), TapeError> {
        let manifest = if opts.ignore_manifest {
            None
        } else {
            Manifest::load(dir)?
        };
        let (flox_manifest, metadata) = self.load_flox_files(dir);
        let di = self.dirs.len();
        let (files, mut skipped) = dir_segments(dir, di)?;
        // Listed ones get their own finding below.
        skipped.sort();
        for (name, what) in skipped {
            if !manifest
                .as_ref()
                .is_some_and(|m| m.segments.iter().any(|s| s.name == name))
            {
                self.note(skipped_finding(&dir.join(&name), what));
            }
        }
        if let Some(m) = &manifest {
            self.add_listed(dir, di, m);
        }
        self.add_unlisted(files, manifest.as_ref());
        if self.segments.iter().all(|s| s.dir != Some(di)) && manifest.is_none() {
            return Err(TapeError::input(
                Some(dir),
                "no segment files here (expected *.floxlog or <type>-NNNNNN.bin, or a manifest.json)",
            )
            .with_hint("pass a tape directory or segment files"));
        }
        self.dirs.push(TapeDir {
            path: dir.to_path_buf(),
            manifest,
            flox_manifest,
            metadata,
        });
        Ok(())
    }

    /// flox's `.manifest` and `metadata.json` of `dir`, where present and
    /// readable.
    fn load_flox_files(&mut self, dir: &Path) -> (Option<FloxManifest>, Option<Metadata>) {
        // flox's side files are optional caches: a bad one is a finding.
        let flox_manifest = match FloxManifest::load(dir) {
            Ok(m) => m,
            Err(e) => {
                let mut f = Finding::new(
                    Severity::Warning,
                    FindingKind::FloxManifest,
                    e.path.as_deref(),
                    e.message.clone(),
                );
                f.hint = e.hint.clone();
                self.note(f);
                None
            }
        };
        let metadata = match Metadata::load(dir) {
            Ok(m) => m,
            Err(e) => {
                self.note(Finding::new(
                    Severity::Warning,
                    FindingKind::Metadata,
                    e.path.as_deref(),
                    e.message.clone(),
                ));
                None
            }
        };
        (flox_manifest, metadata)
    }

    /// The segments manifest `m` of directory `dir` (number `di`) lists,
    /// each checked against its file.
    fn add_listed(&mut self, dir: &Path, di: usize, m: &Manifest) {
        let mpath = dir.join(MANIFEST_FILE);
        let mut seen = std::collections::HashSet::new();
        for s in &m.segments {
            if !is_plain_file_name(&s.name) {
                self.note(
                    Finding::new(
                        Severity::Error,
                        FindingKind::ManifestBadName,
                        Some(&mpath),
                        format!(
                            "lists segment {:?}, which is not a file name inside the tape directory; not read",
                            s.name
                        ),
                    )
                    .hint(Hint::new("segment names are plain file names (no `/`, no `..`): fix the manifest; {} replaces it", &[Remedy::RebuildManifest])),
                );
                continue;
            }
            if !seen.insert(s.name.as_str()) {
                self.note(
                    Finding::new(
                        Severity::Error,
                        FindingKind::ManifestDuplicate,
                        Some(&mpath),
                        format!("lists segment {} more than once; read once", s.name),
                    )
                    .hint(Hint::new("{} replaces it", &[Remedy::RebuildManifest])),
                );
                continue;
            }
            let path = dir.join(&s.name);
            match entry_meta(&path) {
                Some(Err(what)) => self.note(
                    Finding::new(
                        Severity::Error,
                        FindingKind::NotAFile,
                        Some(&path),
                        format!(
                            "listed in the manifest, but {what}; not read",
                        ),
                    )
                    .hint("segments are regular files in the tape directory: put the segment itself there"),
                ),
                Some(Ok(len)) => {
                    if len != s.size_bytes {
                        self.note(
                            Finding::new(
                                Severity::Error,
                                FindingKind::ManifestMismatch,
                                Some(&path),
                                format!(
                                    "manifest says {} bytes, the file has {}",
                                    s.size_bytes, len
                                ),
                            )
                            .hint(Hint::new(
                                "{} brings it up to date",
                                &[Remedy::RebuildManifest],
                            )),
                        );
                    }
                    self.segments.push(TapeSegment {
                        path,
                        name: s.name.clone(),
                        series: s.kind.clone(),
                        listed: Some(s.clone()),
                        dir: Some(di),
                    });
                }
                _ => self.note(
                    Finding::new(
                        Severity::Error,
                        FindingKind::MissingSegment,
                        Some(&mpath),
                        format!("lists segment {} but the file is missing", s.name),
                    )
                    .hint(Hint::new(
                        "restore the file; {} replaces the manifest",
                        &[Remedy::RebuildManifest],
                    )),
                ),
            }
        }
    }

    /// The segment files listed from a directory ([`dir_segments`]) that
    /// manifest `m` does not list (with no manifest: all of them).
    fn add_unlisted(&mut self, files: Vec<TapeSegment>, m: Option<&Manifest>) {
        let Some(m) = m else {
            self.segments.extend(files);
            return;
        };
        let listed: std::collections::HashSet<&str> =
            m.segments.iter().map(|s| s.name.as_str()).collect();
        for seg in files {
            if listed.contains(seg.name.as_str()) {
                continue;
            }
            self.note(
                Finding::new(
                    Severity::Warning,
                    FindingKind::UnlistedSegment,
                    Some(&seg.path),
                    "segment file not listed in manifest.json (a segment still being written, or a stale manifest); read anyway",
                )
                .hint(Hint::new("{} adds it once its writer has closed it", &[Remedy::RebuildManifest])),
            );
            self.segments.push(seg);
        }
    }

    /// Records a finding (up to [`FINDINGS_PER_KIND`] of its kind).
    fn note(&mut self, f: Finding) {
        if f.kind.is_unread() {
            self.unread_count += 1;
        }
        let n = self.kind_counts.entry(f.kind).or_default();
        *n += 1;
        if *n <= FINDINGS_PER_KIND {
            self.findings.push(f);
        }
    }

    /// One finding per kind that had more than [`FINDINGS_PER_KIND`]: how
    /// many more there were.
    fn summarise(&mut self) {
        let mut over: Vec<(FindingKind, u64)> = self
            .kind_counts
            .iter()
            .filter(|(_, &n)| n > FINDINGS_PER_KIND)
            .map(|(&k, &n)| (k, n - FINDINGS_PER_KIND))
            .collect();
        // By name, as the report lists them.
        over.sort_by_key(|&(k, n)| (k.as_str(), n));
        for (kind, more) in over {
            let severity = self
                .findings
                .iter()
                .find(|f| f.kind == kind)
                .map_or(Severity::Error, |f| f.severity);
            self.findings.push(Finding::new(
                severity,
                kind,
                None,
                format!("... and {more} more like the ones above"),
            ));
        }
    }

    /// Findings about listed segments that were not read (missing files,
    /// names outside the tape directory): data the tape should hold and a
    /// reader did not return. Commands exit 1 on them unless told to skip;
    /// [`Tape::unread_count`] counts them all.
    pub fn unread(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.kind.is_unread())
    }

    /// The `metadata.json` a tape made from this one should carry: the
    /// input's own when every input directory that has one agrees, else
    /// the union of their symbol lists (the first name of an id wins).
    pub fn merged_metadata(&self) -> Option<serde_json::Value> {
        let all: Vec<&Metadata> = self
            .dirs
            .iter()
            .filter_map(|d| d.metadata.as_ref())
            .collect();
        let first = *all.first()?;
        if all.iter().all(|m| *m == first) {
            return Some(first.0.clone());
        }
        let mut seen = std::collections::BTreeMap::new();
        for (id, name) in self.symbol_names() {
            seen.entry(id).or_insert(name);
        }
        let symbols: Vec<serde_json::Value> = seen
            .into_iter()
            .map(|(id, name)| serde_json::json!({"symbol_id": id, "name": name}))
            .collect();
        Some(serde_json::json!({ "symbols": symbols }))
    }

    /// Symbol names from every `metadata.json`.
    pub fn symbol_names(&self) -> Vec<(u32, String)> {
        self.dirs
            .iter()
            .filter_map(|d| d.metadata.as_ref())
            .flat_map(|m| m.symbols())
            .collect()
    }

    /// Resolves symbols given as numeric ids or as names from the tape's
    /// `metadata.json` files (case-insensitive; surrounding blanks
    /// ignored) into sorted, distinct ids: the symbol filter of
    /// [`crate::tape::Filter`]. No names means no filter (`None`). A name the
    /// metadata does not know is a usage error listing the known names.
    pub fn symbol_ids<S: AsRef<str>>(&self, names: &[S]) -> Result<Option<Vec<u32>>, TapeError> {
        if names.is_empty() {
            return Ok(None);
        }
        let known = self.symbol_names();
        let mut v = Vec::new();
        for n in names {
            let n = n.as_ref().trim();
            if let Ok(id) = n.parse::<u32>() {
                v.push(id);
            } else if let Some((id, _)) =
                known.iter().find(|(_, name)| name.eq_ignore_ascii_case(n))
            {
                v.push(*id);
            } else {
                return Err(TapeError::usage(format!(
                    "unknown symbol `{n}`: give a numeric symbol_id{}",
                    if known.is_empty() {
                        " (the tape has no metadata.json with names)".to_string()
                    } else {
                        format!(
                            " or one of: {}",
                            known
                                .iter()
                                .map(|k| k.1.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                )));
            }
        }
        v.sort_unstable();
        v.dedup();
        Ok(Some(v))
    }

    /// Lists the segment files named by `inputs` (segment files or tape
    /// directories) for commands that rewrite segments (`recover`,
    /// `reindex`): manifests are not read, so every segment file of a
    /// directory is listed. With `single_output` (the result goes to one
    /// output path) exactly one segment is required, else a usage error.
    pub fn open_for_rewrite(inputs: &[PathBuf], single_output: bool) -> Result<Tape, TapeError> {
        let tape = Tape::open(
            inputs,
            OpenOptions {
                ignore_manifest: true,
            },
        )?;
        if single_output && tape.segments.len() != 1 {
            return Err(TapeError::usage("--output needs exactly one input segment"));
        }
        Ok(tape)
    }
}

#[cfg(test)]
mod tests;
