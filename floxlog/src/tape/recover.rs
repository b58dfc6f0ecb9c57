//! Rewriting segments: recovery of a segment whose writer died (placeholder
//! header, torn last frame or block), re-indexing, recompression. Every
//! frame is copied byte for byte (`append_raw`); only the header, index and
//! LZ4 block packing are made anew.

use super::error::TapeError;
use super::report::{Finding, Severity};
use super::scan::scan_segment;
use super::source::SegmentFile;
use super::verify::check_segment;
use crate::segment::{finish_to_vec, vec_writer};
use floxlog_core::{
    BlockHeader, Compression, Error, FrameHeader, Profile, ReadOptions, Segment, SegmentHeader,
    WriterConfig, DEFAULT_INDEX_INTERVAL, MAGIC_BLOCK,
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
    /// Settings used.
    pub config: WriterConfig,
}

/// The writer settings that reproduce a segment's own: codec, exchange,
/// created_ns from the header; interval from the index, else (LZ4) the
/// largest block, else the default.
pub fn settings_of(seg: &Segment<'_>) -> WriterConfig {
    let h = seg.header();
    let mut interval = seg
        .index()
        .ok()
        .flatten()
        .map(|ix| ix.header().interval)
        .filter(|&i| i > 0);
    if interval.is_none() && seg.is_compressed() {
        let data = seg.data();
        let mut pos = SegmentHeader::LEN;
        let mut most = 0u16;
        while let Some(bh) = data.get(pos..).and_then(BlockHeader::parse) {
            if bh.magic != MAGIC_BLOCK {
                break;
            }
            most = most.max(bh.event_count);
            pos = pos.saturating_add(BlockHeader::LEN + bh.compressed_size as usize);
        }
        interval = (most > 0).then_some(most);
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
    if super::source::index_trailer_at(data, at) {
        // What a writer that died while closing the segment leaves.
        return format!("{have} bytes of an index trailer where the frames were to go on");
    }
    if compressed {
        match BlockHeader::parse(rest) {
            Some(b) if b.magic == MAGIC_BLOCK => format!(
                "an LZ4 block claiming {} events and {} compressed bytes, {} bytes of it present",
                b.event_count,
                b.compressed_size,
                have.saturating_sub(BlockHeader::LEN as u64)
            ),
            Some(_) => format!("{have} bytes that do not start with a block header"),
            None => format!("{have} bytes of a torn block header"),
        }
    } else {
        match FrameHeader::parse(rest) {
            Some(f) => format!(
                "a frame of type {} claiming {} payload bytes, {} present",
                f.frame_type,
                f.size,
                have.saturating_sub(FrameHeader::LEN as u64)
            ),
            None => format!("{have} bytes of a torn frame header"),
        }
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
    };
    let mut r = seg.reader(ropts, &mut scratch);
    let mut stopped = None;
    loop {
        match r.next_item() {
            Ok(Some(it)) => {
                w.append_raw(it.frame.header.frame_type, it.frame.payload)
                    .map_err(|e| {
                        TapeError::input(Some(path), format!("cannot copy the frame: {e}"))
                            .at(it.position.offset)
                    })?;
            }
            Ok(None) => break,
            Err(e) if opts.tolerate_damage => {
                stopped = Some(e);
                break;
            }
            Err(e) => return Err(TapeError::data(path, e)),
        }
    }
    let events = r.events_read();
    let dropped_from = r.next_offset();
    let end = seg.frames_end();
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
    };
    if rep.problems.is_empty() && !opts.force {
        return Ok(rep);
    }
    let out = rewrite_segment(
        data,
        path,
        &RewriteOptions {
            tolerate_damage: true,
            ..RewriteOptions::default()
        },
    )?;
    rep.events_kept = out.events;
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
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match &opts.output {
        Some(o) => {
            std::fs::write(o, &out.bytes)
                .map_err(|e| TapeError::io(o, "writing the recovered segment", e))?;
            rep.output = Some(o.clone());
        }
        None => {
            let tmp = dir.join(format!(".{name}.recover.tmp"));
            {
                use std::io::Write;
                let mut f =
                    std::fs::File::create(&tmp).map_err(|e| TapeError::io(&tmp, "creating", e))?;
                f.write_all(&out.bytes)
                    .map_err(|e| TapeError::io(&tmp, "writing", e))?;
                f.sync_all()
                    .map_err(|e| TapeError::io(&tmp, "syncing", e))?;
            }
            if !opts.no_backup {
                let bak = dir.join(format!("{name}.damaged"));
                std::fs::rename(path, &bak)
                    .map_err(|e| TapeError::io(path, "keeping the original as .damaged", e))?;
                rep.backup = Some(bak);
            }
            std::fs::rename(&tmp, path)
                .map_err(|e| TapeError::io(path, "moving the recovered segment into place", e))?;
            super::manifest::sync_dir(dir)?;
            rep.output = Some(path.to_path_buf());
        }
    }
    rep.action = "rewritten".into();
    Ok(rep)
}
