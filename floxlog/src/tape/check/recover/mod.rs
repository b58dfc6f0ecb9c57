//! Rewriting segments: recovery of a segment whose writer died (placeholder
//! header, torn last frame or block), re-indexing, recompression. Every
//! frame is copied byte for byte (`append_raw`); only the header, index and
//! LZ4 block packing are made anew.

use crate::segment::{finish_to_vec, vec_writer};
use crate::tape::check::scan::scan_segment;
use crate::tape::check::verify::check_segment;
use crate::tape::dir::manifest::{dir_and_name, write_atomic, write_file_atomic};
use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use crate::tape::read::source::SegmentFile;
use crate::tape::report::{Finding, FindingKind, Severity};
use floxlog_core::index::{emit_trailer, starts_trailer, trailer_len};
use floxlog_core::salvage::{resync, ResyncBy};
use floxlog_core::segment_header::flags;
use floxlog_core::{
    BlockHeader, Compression, Error, ErrorKind, FrameHeader, IndexEntry, Profile, ReadOptions,
    Segment, SegmentHeader, WriterConfig, DEFAULT_INDEX_INTERVAL,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

mod stale;

/// Settings of [`rewrite_segment`]; `None` keeps what the segment has.
#[derive(Clone, Copy, Debug, Default)]
pub struct RewriteOptions {
    /// New codec.
    pub compression: Option<Compression>,
    /// New index interval (events per block for LZ4).
    pub index_interval: Option<u16>,
    /// Write an index (default: yes).
    pub create_index: Option<bool>,
    /// Writer profile.
    pub profile: Profile,
    /// Keep the events before damage instead of failing.
    pub tolerate_damage: bool,
    /// Skip frames of unknown types instead of failing (they are dropped,
    /// and counted).
    pub skip_unknown: bool,
    /// With `tolerate_damage`: go on after each damaged region at the next
    /// frame (block) boundary that checks out, instead of stopping (see
    /// [`floxlog_core::salvage`]).
    pub salvage: bool,
}

/// A byte range of the frame area that salvage skipped.
#[derive(Clone, Debug, Serialize)]
pub struct SkippedRange {
    /// First byte skipped (where the damage starts).
    pub from: u64,
    /// First byte read again (the end of the frame area if nothing after
    /// the damage checked out).
    pub to: u64,
    /// The damage: the corpus error kind and what failed.
    pub reason: String,
    /// How the read resumed: `extent` (right after the damaged frame or
    /// block), `index_entry`, `scan`, or `none` (nothing after it checked
    /// out).
    pub resumed_by: &'static str,
}

/// What [`rewrite_segment`] produced.
#[derive(Clone, Debug)]
pub struct RewriteOutcome {
    /// The new segment.
    pub bytes: Vec<u8>,
    /// Events copied.
    pub events: u64,
    /// The damage the read stopped at (only with `tolerate_damage`).
    pub stopped: Option<Error>,
    /// Offset where the dropped bytes start.
    pub dropped_from: u64,
    /// Bytes of the frame area not copied.
    pub dropped_bytes: u64,
    /// What the dropped bytes were.
    pub dropped_detail: Option<String>,
    /// With `salvage`: every damaged region skipped.
    pub skipped: Vec<SkippedRange>,
    /// Settings used.
    pub config: WriterConfig,
}

/// The writer settings that reproduce a segment's own: codec, exchange,
/// created_ns from the header; interval from the index, else (LZ4) the
/// largest block, else the default.
pub fn settings_of(seg: &Segment<'_>) -> WriterConfig {
    let h = seg.header();
    let mut interval = seg
        .index_unproven()
        .ok()
        .flatten()
        .map(|ix| ix.header().interval)
        .filter(|&i| i > 0);
    if interval.is_none() {
        let most = seg.blocks().map_while(|b| b.ok());
        interval = most.map(|b| b.header.event_count).max().filter(|&n| n > 0);
    }
    WriterConfig {
        compression: h.codec(),
        create_index: true,
        index_interval: interval.unwrap_or(DEFAULT_INDEX_INTERVAL),
        exchange_id: h.exchange_id,
        created_ns: h.created_ns,
        profile: Profile::Reference,
    }
}

fn describe_damage(data: &[u8], at: u64, compressed: bool, end: u64) -> String {
    let have = end.saturating_sub(at);
    let rest = data.get(at as usize..end as usize).unwrap_or_default();
    if starts_trailer(rest) {
        // What a writer that died while closing the segment leaves.
        return format!("{have} bytes of an index trailer where the frames were to go on");
    }
    if compressed {
        return match BlockHeader::parse(rest, at) {
            Ok(b) => format!(
                "an LZ4 block claiming {} events and {} compressed bytes, {} bytes of it present",
                b.event_count,
                b.compressed_size,
                have.saturating_sub(BlockHeader::LEN as u64)
            ),
            Err(e) if e.kind == ErrorKind::BadBlockMagic => {
                format!("{have} bytes that do not start with a block header")
            }
            Err(_) => format!("{have} bytes of a torn block header"),
        };
    }
    match FrameHeader::parse(rest, at) {
        Ok(f) => format!(
            "a frame of type {} claiming {} payload bytes, {} present",
            f.frame_type,
            f.size,
            have.saturating_sub(FrameHeader::LEN as u64)
        ),
        Err(_) => format!("{have} bytes of a torn frame header"),
    }
}

/// Re-encodes a segment, copying every frame; see [`RewriteOptions`].
// Long but kept whole: one copy loop whose salvage state (checkpoints,
// resync budget, skipped regions) all its exits share.
pub fn rewrite_segment(
    data: &[u8],
    path: &Path,
    opts: &RewriteOptions,
) -> Result<RewriteOutcome, TapeError> {
    let seg = Segment::parse(data).map_err(|e| TapeError::data(path, e))?;
    let mut cfg = settings_of(&seg);
    if let Some(c) = opts.compression {
        cfg.compression = c;
    }
    if let Some(i) = opts.index_interval {
        cfg.index_interval = i;
    }
    if let Some(c) = opts.create_index {
        cfg.create_index = c;
    }
    cfg.profile = opts.profile;
    let mut w = vec_writer(cfg)
        .map_err(|e| TapeError::input(Some(path), format!("cannot start the writer: {e}")))?;
    let mut scratch = crate::read::block_scratch(&seg);
    let ropts = ReadOptions {
        verify_crc: true,
        unknown_types: if opts.skip_unknown {
            floxlog_core::UnknownTypes::Skip
        } else {
            floxlog_core::UnknownTypes::Reject
        },
        ..ReadOptions::default()
    };
    // Salvage resumes at boundaries the chain of frames proves; index
    // entries (CRC-checked, not yet proven) are checkpoints for it.
    let checkpoints: Vec<u64> = match seg.index_unproven() {
        Ok(Some(ix)) => ix.iter().map(|e| e.file_offset).collect(),
        _ => Vec::new(),
    };
    let end = seg.frames_end();
    let mut stopped = None;
    let mut skipped = Vec::new();
    let mut events = 0u64;
    let mut from = SegmentHeader::LEN as u64;
    // One budget for every resync of the segment: a hostile file with many
    // damaged regions cannot make salvage quadratic.
    let mut budget = 4 * end + (1 << 20);
    let dropped_from = loop {
        let mut r = seg
            .reader_at(from, ropts, &mut scratch)
            .map_err(|e| TapeError::data(path, e))?;
        let failure = loop {
            match r.next_item() {
                Ok(Some(it)) => {
                    w.append_raw(it.frame.header.frame_type, it.frame.payload)
                        .map_err(|e| {
                            TapeError::input(Some(path), format!("cannot copy the frame: {e}"))
                                .at(it.position.offset)
                        })?;
                }
                Ok(None) => break None,
                Err(e) if opts.tolerate_damage => break Some(e),
                Err(e) => return Err(TapeError::data(path, e)),
            }
        };
        events += r.events_read();
        let damage = r.next_offset();
        let Some(e) = failure else {
            break damage;
        };
        if !opts.salvage {
            stopped = Some(e);
            break damage;
        }
        let found = resync(&seg, damage, &checkpoints, ropts, &mut scratch, &mut budget);
        let (to, resumed_by) = match found {
            Some((to, ResyncBy::Extent)) => (to, "extent"),
            Some((to, ResyncBy::IndexEntry)) => (to, "index_entry"),
            Some((to, ResyncBy::Scan)) => (to, "scan"),
            None => (end, "none"),
        };
        skipped.push(SkippedRange {
            from: damage,
            to,
            reason: format!("{}: {}", e.kind, e.what),
            resumed_by,
        });
        if found.is_none() {
            break end;
        }
        from = to;
    };
    let dropped_bytes = end.saturating_sub(dropped_from);
    let dropped_detail = stopped
        .is_some()
        .then(|| describe_damage(data, dropped_from, seg.is_compressed(), end));
    let bytes = finish_to_vec(w)
        .map_err(|e| TapeError::input(Some(path), format!("cannot finish: {e}")))?;
    Ok(RewriteOutcome {
        bytes,
        events,
        stopped,
        dropped_from,
        dropped_bytes,
        dropped_detail,
        skipped,
        config: cfg,
    })
}

/// Rebuilds a segment's index trailer without touching its frames or
/// blocks: the bytes up to the end of the frame area are kept as they are,
/// a new trailer follows, and the header (otherwise unchanged) says where
/// it is. Uncompressed segments get an entry every `interval` frames
/// (default: the segment's own interval); LZ4 segments one per block,
/// stamped with the block's first event. The segment must be finished and
/// readable to its end.
pub fn reindex_segment(
    data: &[u8],
    path: &Path,
    interval: Option<u16>,
) -> Result<RewriteOutcome, TapeError> {
    let seg = Segment::parse(data).map_err(|e| TapeError::data(path, e))?;
    let mut cfg = settings_of(&seg);
    if let Some(i) = interval {
        cfg.index_interval = i;
    }
    cfg.check()
        .map_err(|e| TapeError::usage(format!("index interval: {}", e.what)))?;
    let mut h = *seg.header();
    if crate::tape::read::source::header_is_unfinished(&h) && h.event_count == 0 {
        return Err(TapeError::input(
            Some(path),
            "the header is a writer's placeholder (the segment was never closed)",
        )
        .with_hint(Hint::new(
            "{} finishes it, index included",
            &[Remedy::Recover],
        )));
    }
    let mut scratch = crate::read::block_scratch(&seg);
    let mut r = seg.reader(ReadOptions::default(), &mut scratch);
    let mut entries = Vec::new();
    let mut last_block = None;
    let mut n = 0u64;
    while let Some(it) = r.next_item().map_err(|e| {
        TapeError::data(path, e).with_hint(Hint::new(
            "the segment is damaged: {} keeps the events before the damage",
            &[Remedy::Recover],
        ))
    })? {
        let at = it.position.offset;
        let due = if seg.is_compressed() {
            last_block.replace(at) != Some(at)
        } else {
            n.is_multiple_of(u64::from(cfg.index_interval))
        };
        if due {
            entries.push(IndexEntry {
                timestamp_ns: it.event.exchange_ts_ns(),
                file_offset: at,
            });
        }
        n += 1;
    }
    if u64::from(h.event_count) != n {
        return Err(TapeError::input(
            Some(path),
            format!(
                "the header claims {} events, the frames hold {n}",
                h.event_count
            ),
        )
        .with_hint(Hint::new(
            "{} rewrites the header from the frames",
            &[Remedy::Recover],
        )));
    }
    let end = seg.frames_end() as usize;
    let mut bytes = data[..end].to_vec();
    h.flags &= !flags::HAS_INDEX;
    h.index_offset = 0;
    if !entries.is_empty() {
        let at = bytes.len();
        bytes.resize(at + trailer_len(entries.len()), 0);
        emit_trailer(&entries, cfg.index_interval, &mut bytes[at..]);
        h.flags |= flags::HAS_INDEX;
        h.index_offset = at as u64;
    }
    bytes[..SegmentHeader::LEN].copy_from_slice(&h.to_bytes());
    Ok(RewriteOutcome {
        bytes,
        events: n,
        stopped: None,
        dropped_from: end as u64,
        dropped_bytes: 0,
        dropped_detail: None,
        skipped: Vec::new(),
        config: cfg,
    })
}

/// What `recover` did to one file.
#[derive(Clone, Debug, Serialize)]
pub struct RecoverReport {
    /// The segment.
    pub path: PathBuf,
    /// `rewritten`, `already_valid`, `would_rewrite` (dry run).
    pub action: String,
    /// Complete events kept.
    pub events_kept: u64,
    /// Events the old header claimed.
    pub header_claimed: u32,
    /// Where the dropped bytes start, if any were dropped.
    pub dropped_at: Option<u64>,
    /// Bytes dropped.
    pub dropped_bytes: u64,
    /// Why: the error kind at `dropped_at`.
    pub reason: Option<String>,
    /// What the dropped bytes were.
    pub dropped_detail: Option<String>,
    /// What was wrong before (verify findings).
    pub problems: Vec<Finding>,
    /// Where the recovered segment was written.
    pub output: Option<PathBuf>,
    /// Where the original was kept (`None` when nothing past the header
    /// changed, see [`RecoverOptions::no_backup`]).
    pub backup: Option<PathBuf>,
    /// With `--salvage`: every damaged region skipped (the events around
    /// them are kept).
    pub skipped: Vec<SkippedRange>,
}

/// Options of [`recover_file`].
#[derive(Clone, Debug, Default)]
pub struct RecoverOptions {
    /// Write here instead of replacing the file.
    pub output: Option<PathBuf>,
    /// When replacing, do not keep the original as `<name>.damaged`. A
    /// backup is only kept when recovery drops or changes bytes after the
    /// header: one that rewrites the header and appends an index keeps
    /// none (the original is the new file's prefix but for its header).
    pub no_backup: bool,
    /// Only report.
    pub dry_run: bool,
    /// Rewrite even a valid segment.
    pub force: bool,
    /// Skip damaged regions and keep the events after them (see
    /// `RewriteOptions::salvage`), instead of stopping at the first.
    pub salvage: bool,
}

/// Recovers one segment file: keeps every complete event, rewrites counts,
/// index and header, and says what it dropped.
pub fn recover_file(path: &Path, opts: &RecoverOptions) -> Result<RecoverReport, TapeError> {
    let file = SegmentFile::open(path)?;
    let data = file.bytes();
    let scan = scan_segment(data, ReadOptions::default(), &mut |_| {});
    if let Some(e) = scan.header_error {
        return Err(TapeError::data(path, e).with_hint(
            "the segment header itself is invalid, so the frames cannot be trusted; nothing was changed",
        ));
    }
    let mut problems = Vec::new();
    check_segment(path, &scan, &mut problems);
    problems.retain(|f| {
        f.severity == Severity::Error
            || f.kind == FindingKind::StaleHeader
            || f.kind == FindingKind::ZeroTail
    });
    let claimed = scan.header.map_or(0, |h| h.event_count);
    let mut rep = RecoverReport {
        path: path.to_path_buf(),
        action: "already_valid".into(),
        events_kept: scan.events,
        header_claimed: claimed,
        dropped_at: None,
        dropped_bytes: 0,
        reason: None,
        dropped_detail: None,
        problems,
        output: None,
        backup: None,
        skipped: Vec::new(),
    };
    if rep.problems.is_empty() && !opts.force {
        return Ok(rep);
    }
    let out = rewrite_segment(
        data,
        path,
        &RewriteOptions {
            tolerate_damage: true,
            salvage: opts.salvage,
            ..RewriteOptions::default()
        },
    )?;
    rep.events_kept = out.events;
    rep.skipped = out.skipped.clone();
    if let Some(e) = out.stopped {
        rep.dropped_at = Some(out.dropped_from);
        rep.dropped_bytes = out.dropped_bytes;
        rep.reason = Some(format!("{}: {}", e.kind, e.what));
        rep.dropped_detail = out.dropped_detail.clone();
    }
    if opts.dry_run {
        rep.action = "would_rewrite".into();
        return Ok(rep);
    }
    // A backup is only worth keeping when the rewrite lost or changed
    // bytes after the header: the old file is otherwise the new one's
    // prefix but for its header (rewritten from the frames anyway), and a
    // full copy of a large segment would be kept for nothing.
    let h = SegmentHeader::LEN;
    // Nor when all it dropped is a journal's zero tail.
    let kept_len = match &out.stopped {
        Some(e)
            if crate::tape::read::source::is_zero_tail(e)
                && data
                    .get(e.offset as usize..)
                    .is_some_and(|z| z.iter().all(|&b| b == 0)) =>
        {
            e.offset as usize
        }
        _ => data.len(),
    };
    let body_kept = data.len() >= h
        && out.bytes.len() >= kept_len
        && out.bytes.get(h..kept_len) == data.get(h..kept_len);
    drop(file);
    match &opts.output {
        Some(o) => {
            write_file_atomic(o, &out.bytes, true)?;
            rep.output = Some(o.clone());
        }
        None => {
            let (dir, name) = dir_and_name(path)?;
            if !opts.no_backup && !body_kept {
                rep.backup = Some(keep_backup(path, dir, &name)?);
            }
            // One rename replaces the segment: at every instant its name
            // holds the old bytes or the new ones, so a killed run leaves a
            // tape a re-run simply recovers again.
            write_atomic(dir, &name, &out.bytes, true)?;
            rep.output = Some(path.to_path_buf());
        }
    }
    rep.action = "rewritten".into();
    Ok(rep)
}

/// Keeps the original of `path` as `<name>.damaged` (or `.damaged.N` when
/// that is taken, say by an earlier run) before it is replaced: a hard link
/// to the same bytes, or a synced copy where links are not supported. The
/// original name is never without a file. Readers do not list either.
fn keep_backup(path: &Path, dir: &Path, name: &str) -> Result<PathBuf, TapeError> {
    for n in 0..1000 {
        let bak = match n {
            0 => dir.join(format!("{name}.damaged")),
            n => dir.join(format!("{name}.damaged.{n}")),
        };
        if bak.symlink_metadata().is_ok() {
            continue;
        }
        if std::fs::hard_link(path, &bak).is_err() {
            std::fs::copy(path, &bak)
                .map_err(|e| TapeError::io(&bak, "keeping the original as a backup", e))?;
            std::fs::File::open(&bak)
                .and_then(|f| f.sync_all())
                .map_err(|e| TapeError::io(&bak, "syncing the backup", e))?;
        }
        crate::tape::dir::manifest::sync_dir(dir)?;
        return Ok(bak);
    }
    Err(TapeError::input(
        Some(path),
        "a thousand backups of this segment exist already; nothing was changed",
    )
    .with_hint(Hint::new(
        "remove old `.damaged` files, or {}",
        &[Remedy::NoBackup],
    )))
}

/// What [`recover_tape`] reports as it goes.
#[derive(Clone, Copy, Debug)]
pub enum RecoverEvent<'a> {
    /// A segment was recovered (or found valid, or would be rewritten).
    Segment(&'a RecoverReport),
    /// A segment could not be recovered; the others still are.
    Failed {
        /// The segment.
        path: &'a Path,
        /// Why.
        error: &'a TapeError,
    },
    /// This `manifest.json` was rebuilt from the segment files.
    RebuiltManifest(&'a Path),
    /// This hidden temporary file, which a killed writer left (see
    /// `stale::is_writer_temp`), was removed.
    RemovedTemp(&'a Path),
}

/// What [`recover_tape`] did in all.
#[derive(Clone, Debug, Default)]
pub struct RecoverTapeSummary {
    /// Segment files found.
    pub segments: usize,
    /// Segments rewritten.
    pub rewritten: usize,
    /// Segments a dry run would rewrite.
    pub would_rewrite: usize,
    /// Segments valid as they were (left alone).
    pub already_valid: usize,
    /// Segments that could not be recovered ([`RecoverEvent::Failed`]).
    pub failed: usize,
    /// Complete events kept (or found) over every reported segment.
    pub events_kept: u64,
    /// Bytes dropped over every reported segment: the tails after the
    /// damage, plus the ranges salvage skipped.
    pub bytes_dropped: u64,
    /// `manifest.json` files rebuilt.
    pub manifests_rebuilt: usize,
    /// Hidden temporary files killed writers left, removed.
    pub temps_removed: usize,
    /// Every report, in segment order (what `recover --json` prints).
    pub reports: Vec<RecoverReport>,
    /// The exit code of `floxlog recover`: 0, or that of the worst failed
    /// segment (1 data, 3 I/O...; see [`TapeError::exit_code`]).
    pub exit_code: u8,
}

/// Recovers every segment file of `inputs` (segment files or tape
/// directories; manifests are not read, see [`Tape::open_for_rewrite`](crate::tape::dir::discover::Tape::open_for_rewrite)),
/// as `floxlog recover` does: takes the tape lock of every directory
/// (unless `dry_run`), so a live writer's segments are not rewritten under
/// it; runs [`recover_file`] on each segment, reporting each outcome to
/// `on` as it goes; then (unless `dry_run` or `output`) rebuilds the
/// `manifest.json` of each directory that has one, when a segment was
/// rewritten or the manifest was out of date
/// ([`FindingKind::is_stale_manifest`]), keeping its `created_ns` and exchange;
/// and removes from each directory given the hidden temporary files
/// killed writers left (`stale::is_writer_temp`: a journal's reserved first
/// segment, a spare segment file...).
///
/// A segment that fails does not stop the others (it counts in
/// `RecoverTapeSummary::failed` and the exit code); an error listing the
/// inputs, taking a lock or rebuilding a manifest is returned.
pub fn recover_tape(
    inputs: &[PathBuf],
    opts: &RecoverOptions,
    on: &mut dyn FnMut(RecoverEvent<'_>),
) -> Result<RecoverTapeSummary, TapeError> {
    use crate::tape::dir::discover::{OpenOptions, Tape};
    use crate::tape::dir::manifest::{Manifest, MANIFEST_FILE};
    let tape = Tape::open_for_rewrite(inputs, opts.output.is_some())?;
    let mut sum = RecoverTapeSummary {
        segments: tape.segments.len(),
        ..RecoverTapeSummary::default()
    };
    // A live writer's segments (and temporary files) are not touched
    // under it. A directory given is locked even with no segment: a
    // writer killed before its first append left temporary files only.
    let in_dirs: Vec<PathBuf> = tape
        .dirs
        .iter()
        .map(|d| d.path.join(MANIFEST_FILE))
        .collect();
    let _locks = if opts.dry_run {
        Vec::new()
    } else {
        let paths = tape.segments.iter().map(|s| s.path.as_path());
        crate::tape::dir::lock::lock_dirs(
            paths.chain(in_dirs.iter().map(PathBuf::as_path)),
            "recovering",
        )?
    };
    for s in &tape.segments {
        match recover_file(&s.path, opts) {
            Ok(r) => {
                on(RecoverEvent::Segment(&r));
                match r.action.as_str() {
                    "rewritten" => sum.rewritten += 1,
                    "would_rewrite" => sum.would_rewrite += 1,
                    _ => sum.already_valid += 1,
                }
                sum.events_kept += r.events_kept;
                sum.bytes_dropped += r.dropped_bytes;
                sum.bytes_dropped += r.skipped.iter().map(|k| k.to - k.from).sum::<u64>();
                sum.reports.push(r);
            }
            Err(e) => {
                on(RecoverEvent::Failed {
                    path: &s.path,
                    error: &e,
                });
                sum.failed += 1;
                sum.exit_code = sum
                    .exit_code
                    .max(u8::try_from(e.exit_code()).unwrap_or(u8::MAX));
            }
        }
    }
    if opts.output.is_none() && !opts.dry_run {
        for d in &tape.dirs {
            for p in stale::remove_writer_temps(&d.path)? {
                sum.temps_removed += 1;
                on(RecoverEvent::RemovedTemp(&p));
            }
        }
    }
    let changed = sum.rewritten > 0;
    // A manifest the listing found out of date is rebuilt too, even when no
    // segment needed rewriting now: that is what a recover killed after its
    // last rename, before its rebuild, leaves for the re-run to finish.
    // (The segments above were listed without the manifest; list each
    // directory again with it to compare.)
    let stale = |dir: &Path| {
        Tape::open(&[dir.to_path_buf()], OpenOptions::default())
            .is_ok_and(|t| t.findings.iter().any(|f| f.kind.is_stale_manifest()))
    };
    if opts.output.is_none() && !opts.dry_run {
        for (i, d) in tape.dirs.iter().enumerate() {
            if !(changed || stale(&d.path)) || !d.path.join(MANIFEST_FILE).exists() {
                continue;
            }
            let t = Tape::open(
                std::slice::from_ref(&d.path),
                OpenOptions {
                    ignore_manifest: true,
                },
            )?;
            let (mut m, _, _) = crate::tape::check::rebuild::build_manifests(&t, 0, &mut |_| {})?;
            if let Some(old) = &tape.dirs[i].manifest {
                m.created_ns = old.created_ns;
            } else if let Ok(Some(old)) = Manifest::load(&d.path) {
                m.created_ns = old.created_ns;
                m.exchange_id = old.exchange_id;
            }
            m.save(&d.path, true)?;
            sum.manifests_rebuilt += 1;
            on(RecoverEvent::RebuiltManifest(&d.path.join(MANIFEST_FILE)));
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::dir::discover::{OpenOptions, Tape};
    use crate::tape::dir::manifest::MANIFEST_FILE;
    use crate::tape::{Durability, TapeWriter, TapeWriterConfig};

    fn writer(dir: &Path, durability: Durability) -> TapeWriter {
        let cfg = TapeWriterConfig {
            max_segment_bytes: 8 << 10,
            created_ns: Some(1_000),
            durability,
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(dir, cfg).unwrap();
        for i in 0..1_000 {
            w.append(&crate::synth::mixed_event(5, i).as_event())
                .unwrap();
        }
        w
    }

    /// Collects what `recover_tape` reports, as owned strings.
    fn recover(dir: &Path, opts: &RecoverOptions) -> (RecoverTapeSummary, Vec<String>) {
        let mut seen = Vec::new();
        let sum = recover_tape(&[dir.to_path_buf()], opts, &mut |e| {
            seen.push(match e {
                RecoverEvent::Segment(r) => format!("{} {}", r.action, r.path.display()),
                RecoverEvent::Failed { path, error } => {
                    assert_eq!(error.path.as_deref(), Some(path));
                    format!("failed {}", path.display())
                }
                RecoverEvent::RebuiltManifest(p) => format!("rebuilt {}", p.display()),
                RecoverEvent::RemovedTemp(p) => format!("removed {}", p.display()),
            })
        })
        .unwrap();
        (sum, seen)
    }

    #[test]
    fn recover_tape_rewrites_a_torn_segment_and_rebuilds_the_manifest() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        writer(&p, Durability::SyncOnClose).close().unwrap();
        let before = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
        let n = before.segments.len();
        assert!(n > 2);
        let torn = before.segments[1].path.clone();
        let len = std::fs::metadata(&torn).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&torn)
            .unwrap()
            .set_len(len / 2)
            .unwrap();

        // A dry run changes nothing.
        let dry = RecoverOptions {
            dry_run: true,
            ..RecoverOptions::default()
        };
        let (sum, seen) = recover(&p, &dry);
        assert_eq!(
            (sum.would_rewrite, sum.rewritten, sum.already_valid),
            (1, 0, n - 1)
        );
        assert_eq!(seen.len(), n);
        assert_eq!(std::fs::metadata(&torn).unwrap().len(), len / 2);

        let (sum, seen) = recover(&p, &RecoverOptions::default());
        assert_eq!(sum.segments, n);
        assert_eq!(
            (sum.rewritten, sum.already_valid, sum.failed),
            (1, n - 1, 0)
        );
        assert_eq!((sum.manifests_rebuilt, sum.exit_code), (1, 0));
        assert!(sum.bytes_dropped > 0);
        assert_eq!(sum.reports.len(), n);
        assert_eq!(seen[1], format!("rewritten {}", torn.display()));
        assert_eq!(
            seen[n],
            format!("rebuilt {}", p.join(MANIFEST_FILE).display())
        );
        let r = &sum.reports[1];
        assert_eq!(
            r.backup.as_deref(),
            Some(
                p.join(format!("{}.damaged", before.segments[1].name))
                    .as_path()
            )
        );
        assert!(r.events_kept < u64::from(r.header_claimed));
        let kept: u64 = sum.reports.iter().map(|r| r.events_kept).sum();
        assert_eq!(sum.events_kept, kept);
        assert!(kept < 1_000);

        // The tape is whole again: the manifest agrees with the files,
        // keeps its created_ns, and a second run has nothing to do.
        let after = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
        assert!(after.findings.is_empty(), "{:?}", after.findings);
        assert_eq!(
            after.dirs[0].manifest.as_ref().unwrap().created_ns,
            before.dirs[0].manifest.as_ref().unwrap().created_ns
        );
        let insp =
            crate::tape::check::inspect::inspect_tape(&after, Default::default(), &mut |_| {});
        assert!(!insp.failed);
        assert_eq!(insp.total.events, Some(kept));
        let (sum, seen) = recover(&p, &RecoverOptions::default());
        assert_eq!((sum.already_valid, sum.manifests_rebuilt), (n, 0));
        assert!(seen.iter().all(|s| s.starts_with("already_valid")));
    }

    #[test]
    fn recover_tape_finishes_an_abandoned_writer_and_lists_its_segment() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        writer(&p, Durability::Flush).abandon();
        let before = Tape::open(std::slice::from_ref(&p), OpenOptions::default()).unwrap();
        assert!(
            before
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::UnlistedSegment),
            "{:?}",
            before.findings
        );
        let (sum, seen) = recover(&p, &RecoverOptions::default());
        assert!(sum.rewritten >= 1, "{seen:?}");
        assert_eq!(
            (sum.failed, sum.manifests_rebuilt, sum.exit_code),
            (0, 1, 0)
        );
        assert_eq!(sum.events_kept, 1_000);
        let after = Tape::open(&[p], OpenOptions::default()).unwrap();
        assert!(after.findings.is_empty(), "{:?}", after.findings);
        assert_eq!(
            after.dirs[0]
                .manifest
                .as_ref()
                .unwrap()
                .segments
                .iter()
                .map(|s| s.event_count)
                .sum::<u64>(),
            1_000
        );
    }

    #[test]
    fn recover_tape_goes_on_past_a_segment_it_cannot_recover() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        writer(&p, Durability::SyncOnClose).close().unwrap();
        let n = Tape::open(std::slice::from_ref(&p), OpenOptions::default())
            .unwrap()
            .segments
            .len();
        // Not a segment: its header is invalid, so recover refuses it.
        let bad = p.join("99999999999.floxlog");
        std::fs::write(&bad, [0x5a; 200]).unwrap();
        let (sum, seen) = recover(&p, &RecoverOptions::default());
        assert_eq!((sum.segments, sum.failed, sum.already_valid), (n + 1, 1, n));
        assert_eq!(sum.exit_code, 1);
        assert!(seen.contains(&format!("failed {}", bad.display())));
        // The unlisted file made the manifest stale: rebuilt (with the
        // bad file's readable part, nothing), though nothing was rewritten.
        assert_eq!(sum.manifests_rebuilt, 1);
        assert!(std::fs::read(&bad).unwrap() == [0x5a; 200]);
    }

    #[test]
    fn recover_tape_with_output_needs_one_segment() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        writer(&p, Durability::SyncOnClose).close().unwrap();
        let opts = RecoverOptions {
            output: Some(d.path().join("out.floxlog")),
            ..RecoverOptions::default()
        };
        let e = recover_tape(&[p], &opts, &mut |_| panic!("nothing reported")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
