//! Writing a tape from Arrow streams through `floxlog::tape::TapeWriter`.
//!
//! The tape is built under a hidden temporary name beside the output and
//! moved into place only when complete, as `floxlog encode` does: a
//! failed write leaves nothing behind.

use arrow_array::ffi_stream::RecordBatchStreamReader;
use floxlog::core::{Compression, Profile, WriterConfig, DEFAULT_INDEX_INTERVAL};
use floxlog::tape::manifest::{dir_and_name, sync_dir};
use floxlog::tape::{Durability, Layout, TapeError, TapeWriter, TapeWriterConfig};
use floxlog_arrow::{append_batch, RecordType};
use std::path::{Path, PathBuf};

/// Writer settings as Python gives them.
#[derive(Clone, Debug)]
pub struct WriteArgs {
    /// `lz4` or `none`.
    pub compression: String,
    /// `flox` or `spec`.
    pub layout: String,
    /// `reference` or `spec`.
    pub profile: String,
    /// Events between index entries (uncompressed), per LZ4 block.
    pub index_interval: Option<u16>,
    /// Write no index trailer.
    pub no_index: bool,
    /// Rotate segments at this size.
    pub max_segment_bytes: Option<u64>,
    /// Also rotate when event time enters a new span of this many ns.
    pub rotate_every_ns: Option<i64>,
    /// Exchange tag of the segment headers and manifest.
    pub exchange_id: u8,
    /// Fixed created_ns of the first segment (the next get +1...).
    pub created_ns: Option<i64>,
    /// `none`, `flush`, `block`, `close`, `every:N`.
    pub durability: String,
    /// flox-style `metadata.json`, as JSON text.
    pub metadata: Option<String>,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written {
    /// Events.
    pub events: u64,
    /// Segments.
    pub segments: u64,
    /// Bytes of the segment files.
    pub bytes: u64,
}

fn pick<T: Copy>(what: &str, v: &str, table: &[(&str, T)]) -> Result<T, TapeError> {
    let key = v.trim().to_ascii_lowercase();
    table
        .iter()
        .find(|(n, _)| *n == key)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            TapeError::usage(format!(
                "{what} must be one of {}, not {v:?}",
                names.join(", ")
            ))
        })
}

fn durability(s: &str) -> Result<Durability, TapeError> {
    s.trim().parse().map_err(TapeError::usage)
}

impl WriteArgs {
    /// The writer configuration; usage errors for bad settings.
    pub fn config(&self) -> Result<(TapeWriterConfig, Option<serde_json::Value>), TapeError> {
        let compression = pick(
            "compression",
            &self.compression,
            &[("lz4", Compression::Lz4), ("none", Compression::None)],
        )?;
        let layout = pick(
            "layout",
            &self.layout,
            &[("flox", Layout::Flox), ("spec", Layout::Spec)],
        )?;
        let profile = pick(
            "profile",
            &self.profile,
            &[("reference", Profile::Reference), ("spec", Profile::Spec)],
        )?;
        let seg = WriterConfig {
            compression,
            create_index: !self.no_index,
            index_interval: self.index_interval.unwrap_or(DEFAULT_INDEX_INTERVAL),
            exchange_id: self.exchange_id,
            created_ns: 0,
            profile,
        };
        seg.check()
            .map_err(|e| TapeError::usage(format!("index_interval: {}", e.what)))?;
        let max_segment_bytes = self
            .max_segment_bytes
            .unwrap_or(floxlog::core::DEFAULT_MAX_SEGMENT_BYTES);
        if max_segment_bytes == 0 {
            return Err(TapeError::usage("max_segment_bytes must be at least 1"));
        }
        if self.rotate_every_ns.is_some_and(|n| n <= 0) {
            return Err(TapeError::usage("rotate_every must be positive"));
        }
        let metadata = match &self.metadata {
            None => None,
            Some(t) => Some(
                serde_json::from_str::<serde_json::Value>(t)
                    .map_err(|e| TapeError::usage(format!("metadata is not JSON: {e}")))?,
            ),
        };
        Ok((
            TapeWriterConfig {
                layout,
                segment: seg,
                max_segment_bytes,
                rotate_every_ns: self.rotate_every_ns,
                durability: durability(&self.durability)?,
                created_ns: self.created_ns,
                write_manifest: true,
            },
            metadata,
        ))
    }
}

/// A tape being written under a temporary name.
struct Output {
    out: PathBuf,
    tmp: PathBuf,
    w: Option<TapeWriter>,
}

impl Output {
    fn create(out: &Path, cfg: TapeWriterConfig) -> Result<Output, TapeError> {
        let empty_dir = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
        if out.symlink_metadata().is_ok() && !empty_dir {
            return Err(
                TapeError::usage(format!("{} already exists", out.display()))
                    .with_hint("choose a new output path (or an empty directory)"),
            );
        }
        let (parent, name) = dir_and_name(out)?;
        floxlog::tape::lock::remove_stale_partials(parent, &name);
        let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if tmp.exists() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        let w = TapeWriter::create(&tmp, cfg)?;
        Ok(Output {
            out: out.to_path_buf(),
            tmp,
            w: Some(w),
        })
    }

    fn writer(&mut self) -> Result<&mut TapeWriter, TapeError> {
        self.w
            .as_mut()
            .ok_or_else(|| TapeError::input(Some(&self.out), "internal error: writer closed"))
    }

    fn close(mut self) -> Result<Written, TapeError> {
        let w = self.writer()?;
        let events = w.stats().events;
        let w = self
            .w
            .take()
            .ok_or_else(|| TapeError::input(Some(&self.out), "internal error: writer closed"))?;
        let segs = w.close()?;
        if self.out.is_dir() {
            // An empty directory given as the output.
            std::fs::remove_dir(&self.out)
                .map_err(|e| TapeError::io(&self.out, "replacing the empty directory", e))?;
        }
        std::fs::rename(&self.tmp, &self.out)
            .map_err(|e| TapeError::io(&self.out, "moving the finished tape into place", e))?;
        let (parent, _) = dir_and_name(&self.out)?;
        sync_dir(parent)?;
        Ok(Written {
            events,
            segments: segs.len() as u64,
            bytes: segs.iter().map(|s| s.size_bytes).sum(),
        })
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(w) = self.w.take() {
            // Failed or interrupted: remove the partial tape.
            w.abandon();
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// Writes every part (record type, stream of batches) in turn into a new
/// tape at `out`.
pub fn write_tape(
    out: &Path,
    cfg: TapeWriterConfig,
    metadata: Option<serde_json::Value>,
    parts: Vec<(RecordType, RecordBatchStreamReader)>,
) -> Result<Written, TapeError> {
    let mut o = Output::create(out, cfg)?;
    for (rt, reader) in parts {
        for b in reader {
            let b = b.map_err(|e| {
                TapeError::input(None, format!("reading the {} data: {e}", rt.name()))
            })?;
            append_batch(o.writer()?, rt, &b)?;
        }
    }
    if let Some(md) = metadata {
        o.writer()?.set_metadata(md);
    }
    o.close()
}
