//! Rewriting segments: recovery of a segment whose writer died (placeholder
//! header, torn last frame or block), re-indexing, recompression. Every
//! frame is copied byte for byte (`append_raw`); only the header, index and
//! LZ4 block packing are made anew.

use super::error::TapeError;
use super::manifest::{dir_and_name, write_atomic, write_file_atomic};
use super::report::{Finding, Severity};
use super::scan::scan_segment;
use super::source::SegmentFile;
use super::verify::check_segment;
use crate::segment::{finish_to_vec, vec_writer};
use floxlog_core::index::{emit_trailer, starts_trailer, trailer_len};
use floxlog_core::salvage::{resync, ResyncBy};
use floxlog_core::segment_header::flags;
use floxlog_core::{
    BlockHeader, Compression, Error, ErrorKind, FrameHeader, IndexEntry, Profile, ReadOptions,
    Segment, SegmentHeader, WriterConfig, DEFAULT_INDEX_INTERVAL,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

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
        .map_err(|e| TapeError::usage(format!("--index-interval: {}", e.what)))?;
    let mut h = *seg.header();
    if super::source::header_is_unfinished(&h) && h.event_count == 0 {
        return Err(TapeError::input(
            Some(path),
            "the header is a writer's placeholder (the segment was never closed)",
        )
        .with_hint(format!(
            "`floxlog recover {}` finishes it, index included",
            path.display()
        )));
    }
    let mut scratch = crate::read::block_scratch(&seg);
    let mut r = seg.reader(ReadOptions::default(), &mut scratch);
    let mut entries = Vec::new();
    let mut last_block = None;
    let mut n = 0u64;
    while let Some(it) = r.next_item().map_err(|e| {
        TapeError::data(path, e).with_hint(format!(
            "the segment is damaged: `floxlog recover {}` keeps the events before the damage",
            path.display()
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
        .with_hint(format!(
            "`floxlog recover {}` rewrites the header from the frames",
            path.display()
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
    /// Where the original was kept.
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
    /// When replacing, do not keep the original as `<name>.damaged`.
    pub no_backup: bool,
    /// Only report.
    pub dry_run: bool,
    /// Rewrite even a valid segment.
    pub force: bool,
    /// Skip damaged regions and keep the events after them (see
    /// [`RewriteOptions::salvage`]), instead of stopping at the first.
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
    problems.retain(|f| f.severity == Severity::Error || f.kind == "stale_header");
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
    drop(file);
    match &opts.output {
        Some(o) => {
            write_file_atomic(o, &out.bytes, true)?;
            rep.output = Some(o.clone());
        }
        None => {
            let (dir, name) = dir_and_name(path)?;
            if !opts.no_backup {
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
        super::manifest::sync_dir(dir)?;
        return Ok(bak);
    }
    Err(TapeError::input(
        Some(path),
        "a thousand backups of this segment exist already; nothing was changed",
    )
    .with_hint("remove old `.damaged` files, or pass --no-backup"))
}
