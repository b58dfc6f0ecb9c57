//! Writing a tape from Arrow streams through `floxlog::tape::TapeWriter`.
//!
//! The tape is built under a hidden temporary name beside the output and
//! moved into place only when complete, as `floxlog encode` does: a
//! failed write leaves nothing behind.

use crate::errors::{to_pyerr, IntoPy};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use arrow_pyarrow::FromPyArrow;
use floxlog::core::{Compression, Profile, WriterConfig, DEFAULT_INDEX_INTERVAL};
use floxlog::tape::dir::{dir_and_name, sync_dir};
use floxlog::tape::{Durability, Layout, TapeError, TapeWriter, TapeWriterConfig};
use floxlog_arrow::{append_batch, RecordType};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// Continue the tape at the output path (written in place) instead of
    /// refusing an existing one.
    pub resume: bool,
    /// Journal mode (uncompressed only): segments mapped shared, appends
    /// published with no system call.
    pub journal: bool,
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
                resume: self.resume,
                journal: self.journal,
                thread_cpus: Default::default(),
            },
            metadata,
        ))
    }
}

/// A tape being written under a temporary name (or, resumed, in place).
struct Output {
    out: PathBuf,
    tmp: PathBuf,
    w: Option<TapeWriter>,
    /// Resumed: written in place (`tmp` is `out`), never removed.
    in_place: bool,
}

impl Output {
    /// A tape written where it is to be (no temporary, never removed).
    fn in_place(out: &Path, cfg: TapeWriterConfig) -> Result<Output, TapeError> {
        let w = TapeWriter::create(out, cfg)?;
        Ok(Output {
            out: out.to_path_buf(),
            tmp: out.to_path_buf(),
            w: Some(w),
            in_place: true,
        })
    }

    fn create(out: &Path, cfg: TapeWriterConfig) -> Result<Output, TapeError> {
        if cfg.resume {
            // The tape there (if any) is continued where it is: what was
            // written before must never be removed.
            return Output::in_place(out, cfg);
        }
        let empty_dir = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
        if out.symlink_metadata().is_ok() && !empty_dir {
            return Err(
                TapeError::usage(format!("{} already exists", out.display()))
                    .with_hint("choose a new output path (or an empty directory)"),
            );
        }
        if cfg.journal {
            // A recorder's tape: written in place, so that readers follow
            // it live; an interrupted one is left for `recover`.
            return Output::in_place(out, cfg);
        }
        let (parent, name) = dir_and_name(out)?;
        floxlog::tape::dir::remove_stale_partials(parent, &name);
        let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if tmp.exists() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        let w = TapeWriter::create(&tmp, cfg)?;
        Ok(Output {
            out: out.to_path_buf(),
            tmp,
            w: Some(w),
            in_place: false,
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
        if self.in_place {
            return Ok(Written {
                events,
                segments: segs.len() as u64,
                bytes: segs.iter().map(|s| s.size_bytes).sum(),
            });
        }
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
            // Failed or interrupted: remove the partial tape (a resumed
            // one stays, as a crash would leave it, and a journal's keeps
            // every event appended: the next resume or `floxlog recover`
            // finishes it).
            w.abandon();
            if !self.in_place {
                let _ = std::fs::remove_dir_all(&self.tmp);
            }
        }
    }
}

/// Rows written between two checks for a pending signal in a merge.
const MERGE_CHUNK: usize = 1 << 16;

/// `(part, batch, row)` of every row in merge order: repeatedly the part
/// whose next row has the smallest `exchange_ts_ns` (the first such part
/// on ties). Each part keeps its own order; parts in time order merge
/// into time order.
fn merge_order(
    parts: &[(RecordType, Vec<RecordBatch>)],
) -> Result<Vec<(u32, u32, u32)>, TapeError> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    // Each part's timestamps, and its rows as (batch, row).
    type Seq = (Vec<i64>, Vec<(u32, u32)>);
    let mut seqs: Vec<Seq> = Vec::with_capacity(parts.len());
    for (rt, batches) in parts {
        let (mut ts, mut at) = (Vec::new(), Vec::new());
        for (b, batch) in batches.iter().enumerate() {
            let col = batch
                .column_by_name("exchange_ts_ns")
                .and_then(|c| c.as_primitive_opt::<Int64Type>())
                .ok_or_else(|| {
                    TapeError::usage(format!(
                        "{} data: no int64 column `exchange_ts_ns`",
                        rt.name()
                    ))
                })?;
            let b = u32::try_from(b).map_err(|_| TapeError::usage("too many batches"))?;
            for (r, &t) in col.values().iter().enumerate() {
                let r = u32::try_from(r).map_err(|_| TapeError::usage("batch too long"))?;
                ts.push(t);
                at.push((b, r));
            }
        }
        seqs.push((ts, at));
    }
    let total = seqs.iter().map(|s| s.0.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut next = vec![0usize; seqs.len()];
    let mut heap = BinaryHeap::new();
    for (p, (ts, _)) in seqs.iter().enumerate() {
        if let Some(&t) = ts.first() {
            heap.push(Reverse((t, p)));
        }
    }
    while let Some(Reverse((_, p))) = heap.pop() {
        let (ts, at) = &seqs[p];
        let i = next[p];
        let (b, r) = at[i];
        out.push((p as u32, b, r));
        next[p] = i + 1;
        if let Some(&t) = ts.get(i + 1) {
            heap.push(Reverse((t, p)));
        }
    }
    Ok(out)
}

/// A tape being written, batch by batch, from Python: the loop over the
/// input runs in Python, so a conversion error or a `KeyboardInterrupt`
/// raised there propagates as it is; `abandon` (or garbage collection)
/// removes the partial tape.
#[pyclass(module = "floxlog._floxlog", name = "NativeWriter", frozen)]
pub struct NativeWriter {
    out: Mutex<Option<Output>>,
}

impl NativeWriter {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Output) -> Result<T, TapeError> + Send,
    ) -> PyResult<T> {
        let mut g = self
            .out
            .lock()
            .map_err(|_| to_pyerr(py, TapeError::usage("the writer's lock is poisoned")))?;
        let o = g
            .as_mut()
            .ok_or_else(|| to_pyerr(py, TapeError::usage("the writer is closed")))?;
        py.detach(move || f(o)).py_err(py)
    }
}

#[pymethods]
impl NativeWriter {
    /// Creates the tape under a temporary name beside `path` (`resume`:
    /// continues the tape at `path`, in place).
    #[new]
    #[pyo3(signature = (path, *, compression="lz4", layout="flox", profile="reference",
        index_interval=None, no_index=false, max_segment_bytes=None, rotate_every_ns=None,
        exchange_id=0, created_ns=None, durability="close", metadata=None, resume=false,
        journal=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        compression: &str,
        layout: &str,
        profile: &str,
        index_interval: Option<u16>,
        no_index: bool,
        max_segment_bytes: Option<u64>,
        rotate_every_ns: Option<i64>,
        exchange_id: u8,
        created_ns: Option<i64>,
        durability: &str,
        metadata: Option<String>,
        resume: bool,
        journal: bool,
    ) -> PyResult<NativeWriter> {
        let args = WriteArgs {
            compression: compression.into(),
            layout: layout.into(),
            profile: profile.into(),
            index_interval,
            no_index,
            max_segment_bytes,
            rotate_every_ns,
            exchange_id,
            created_ns,
            durability: durability.into(),
            metadata,
            resume,
            journal,
        };
        let (cfg, md) = args.config().py_err(py)?;
        let mut o = py.detach(move || Output::create(&path, cfg)).py_err(py)?;
        if let Some(md) = md {
            o.writer().py_err(py)?.set_metadata(md);
        }
        Ok(NativeWriter {
            out: Mutex::new(Some(o)),
        })
    }

    /// Appends every row of `batch` (a `pyarrow.RecordBatch` of the raw
    /// columns of `rtype`, exact types). Checks for a pending signal first
    /// (Ctrl-C raises `KeyboardInterrupt` here, between batches).
    fn append(&self, py: Python<'_>, rtype: &str, batch: &Bound<'_, PyAny>) -> PyResult<u64> {
        py.check_signals()?;
        let rt = crate::record_type(py, rtype)?;
        let b = RecordBatch::from_pyarrow_bound(batch)?;
        self.with(py, move |o| append_batch(o.writer()?, rt, &b))
    }

    /// Appends the rows of several record types merged by
    /// `exchange_ts_ns` ([`merge_order`]: each part keeps its order, equal
    /// times go in the order of `parts`), so a time-ordered read of parts
    /// in time order returns exactly this order. `parts`: `(rtype, [RecordBatch])` of raw columns. Checks for
    /// a pending signal every `MERGE_CHUNK` rows.
    fn append_merged(
        &self,
        py: Python<'_>,
        parts: Vec<(String, Vec<Bound<'_, PyAny>>)>,
    ) -> PyResult<u64> {
        let mut ps = Vec::with_capacity(parts.len());
        for (name, batches) in &parts {
            let rt = crate::record_type(py, name)?;
            let bs = batches
                .iter()
                .map(RecordBatch::from_pyarrow_bound)
                .collect::<PyResult<Vec<_>>>()?;
            ps.push((rt, bs));
        }
        let ps = std::sync::Arc::new(ps);
        let order = {
            let ps = ps.clone();
            py.detach(move || merge_order(&ps)).py_err(py)?
        };
        let mut written = 0;
        for chunk in order.chunks(MERGE_CHUNK) {
            py.check_signals()?;
            let ps = ps.clone();
            written += self.with(py, move |o| {
                let w = o.writer()?;
                let mut n = 0;
                let mut i = 0;
                while i < chunk.len() {
                    let (p, b, r) = chunk[i];
                    // A run: consecutive rows of one batch.
                    let mut j = i + 1;
                    while j < chunk.len() && chunk[j] == (p, b, r + (j - i) as u32) {
                        j += 1;
                    }
                    let (rt, batches) = &ps[p as usize];
                    let slice = batches[b as usize].slice(r as usize, j - i);
                    n += append_batch(w, *rt, &slice)?;
                    i = j;
                }
                Ok(n)
            })?;
        }
        Ok(written)
    }

    /// Sets the tape's `metadata.json` (JSON text), replacing any given.
    fn set_metadata(&self, py: Python<'_>, metadata: &str) -> PyResult<()> {
        let md = serde_json::from_str::<serde_json::Value>(metadata)
            .map_err(|e| to_pyerr(py, TapeError::usage(format!("metadata is not JSON: {e}"))))?;
        self.with(py, move |o| {
            o.writer()?.set_metadata(md);
            Ok(())
        })
    }

    /// The writer's health (`TapeWriter::health`) as a dict of its fields
    /// by name: what a recorder's monitor reads while appends go on.
    fn health<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let h = self.with(py, |o| Ok(o.writer()?.health()))?;
        let d = pyo3::types::PyDict::new(py);
        d.set_item("appended", h.appended)?;
        d.set_item("written", h.written)?;
        d.set_item("durable", h.durable)?;
        d.set_item("segments_closed", h.segments_closed)?;
        d.set_item("segments_open", h.segments_open)?;
        d.set_item("bytes_reserved", h.bytes_reserved)?;
        d.set_item("bytes_used", h.bytes_used)?;
        d.set_item("background_queued", h.background_queued)?;
        d.set_item("background_lag_ns", h.background_lag_ns)?;
        d.set_item("background_wakeups", h.background_wakeups)?;
        d.set_item("last_rotation_ns", h.last_rotation_ns)?;
        d.set_item("last_error", h.last_error)?;
        d.set_item("last_error_ns", h.last_error_ns)?;
        d.set_item("low_space", h.low_space)?;
        d.set_item("reservation_failures", h.reservation_failures)?;
        d.set_item("last_reservation_error", h.last_reservation_error)?;
        d.set_item("last_reservation_error_ns", h.last_reservation_error_ns)?;
        Ok(d)
    }

    /// Finishes the tape and moves it into place; returns
    /// `(events, segments, bytes)`.
    fn close(&self, py: Python<'_>) -> PyResult<(u64, u64, u64)> {
        py.check_signals()?;
        let o = self
            .out
            .lock()
            .map_err(|_| to_pyerr(py, TapeError::usage("the writer's lock is poisoned")))?
            .take()
            .ok_or_else(|| to_pyerr(py, TapeError::usage("the writer is closed")))?;
        let w = py.detach(move || o.close()).py_err(py)?;
        Ok((w.events, w.segments, w.bytes))
    }

    /// Removes the partial tape (after an error or an interrupt).
    fn abandon(&self, py: Python<'_>) {
        let o = self.out.lock().ok().and_then(|mut g| g.take());
        py.detach(move || drop(o));
    }
}
