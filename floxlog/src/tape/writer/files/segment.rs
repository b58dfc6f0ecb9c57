//! Opening and closing the segments of a tape writer.

use super::io_thread::{self, Header, IoThread, SegIo};
use super::io_thread::{Closing, ManifestCtx};
use super::swap::{take_pending, Exchange, SwapStorage, SwapWriter};
use super::{now_ns, Durability, FileWriter};
use crate::tape::dir::manifest::ManifestSegment;
use crate::tape::dir::{series_of, Layout, MIXED};
use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use floxlog_core::{Compression, WriterConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub(super) struct OpenSeg {
    /// The file (at its published path) and its written / synced counts,
    /// shared with the I/O thread.
    pub(super) io: Arc<SegIo>,
    /// Where the encoder's output buffer is swapped for an empty one.
    pub(super) xchg: Arc<Exchange>,
    pub(super) name: String,
    pub(super) series: &'static str,
    pub(super) w: SwapWriter,
    pub(super) seq: u64,
    pub(super) min_ts: i64,
    pub(super) max_ts: i64,
    pub(super) events: u64,
    pub(super) bucket: Option<i64>,
    pub(super) unsynced: u64,
    /// Events whose bytes were handed over (to the I/O thread or written).
    pub(super) handed: u64,
    /// `io.written` as of the writer's last call (see [`FileWriter::harvest`]).
    pub(super) written: u64,
    /// `io.synced` as of the writer's last call.
    pub(super) synced: u64,
}

impl FileWriter {
    // Out of line: it builds a segment writer (16 KiB with its symbol
    // table) on its stack, which would cost every append a stack probe.
    #[cold]
    #[inline(never)]
    pub(super) fn open_segment(&mut self, si: usize, frame_type: u8) -> Result<(), TapeError> {
        let series: &'static str = match self.cfg.layout {
            Layout::Flox => MIXED,
            Layout::Spec => series_of(frame_type),
        };
        let clocked = self.clock.is_some();
        // What set the value, for the hint: the clock hook or the fixed
        // created_ns (the wall clock is never negative nor i64::MAX).
        let source = if clocked {
            Hint::new("{} gave it", &[Remedy::SegmentClock])
        } else {
            Hint::new("{}", &[Remedy::SmallerCreatedNs])
        };
        let exhausted = || created_ns_exhausted(source.clone());
        let after_last = self.last_created.checked_add(1).ok_or_else(exhausted)?;
        let wanted = match (&mut self.clock, self.cfg.created_ns) {
            (Some(clock), _) => (clock.get_mut().unwrap_or_else(|e| e.into_inner()))(),
            (None, Some(base)) => i64::try_from(self.seq)
                .ok()
                .and_then(|seq| base.checked_add(seq))
                .ok_or_else(exhausted)?,
            (None, None) => now_ns(),
        };
        if wanted < 0 {
            return Err(TapeError::usage(format!(
                "segment created_ns {wanted} is negative: it names and orders the tape's segments, so it must be 0 or more; no segment was opened"
            ))
            .with_hint(if clocked {
                source
            } else {
                Hint::from("the fixed created_ns must be 0 or more")
            }));
        }
        let mut created = wanted.max(after_last);
        // The placeholder header is written under a hidden temporary name
        // and the file renamed into place, so that no segment file is ever
        // seen without its header (a recorder killed in between leaves only
        // the temporary, which no reader lists). The name is checked first:
        // the rename would replace a file of another writer.
        let path = loop {
            let name = match self.cfg.layout {
                Layout::Flox => format!("{created}.floxlog"),
                Layout::Spec => format!("{series}-{:06}.bin", self.numbers[si]),
            };
            let path = self.dir.join(&name);
            if created == i64::MAX {
                return Err(exhausted());
            }
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break path,
                Ok(_) if self.cfg.layout == Layout::Flox => {
                    created = created.checked_add(1).ok_or_else(exhausted)?
                }
                Ok(_) => {
                    return Err(TapeError::io(
                        &path,
                        "creating the segment",
                        std::io::ErrorKind::AlreadyExists.into(),
                    ))
                }
                Err(e) => return Err(TapeError::io(&path, "creating the segment", e)),
            }
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let background = self.cfg.durability != Durability::Flush;
        if self.io.is_none() && background {
            self.io = Some(IoThread::start(
                &self.dir,
                self.closed.clone(),
                super::finish::run,
                self.cfg.thread_cpus,
            )?);
        }
        // Only the chunked policies, which promise nothing per event or
        // block, leave full blocks to the compressor thread.
        let chunked = matches!(
            self.cfg.durability,
            Durability::None | Durability::SyncOnClose
        );
        let lz4 = chunked && self.cfg.segment.compression == Compression::Lz4;
        if lz4 && self.lz4.is_none() {
            self.lz4 = Some(super::compress::Compressor::start(
                &self.dir,
                self.cfg.thread_cpus,
            )?);
        }
        // The I/O thread creates the next segment's file ahead (a spare);
        // without one (the first segment, a rotation right after another),
        // it is created here.
        let spare = self.io.as_ref().and_then(IoThread::take_spare);
        let from_spare = spare.is_some();
        let (file, tmp) = match spare {
            Some(s) => s,
            None => {
                let tmp = self.dir.join(format!(".{name}.tmp"));
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(&tmp)
                    .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
                (file, tmp)
            }
        };
        self.last_created = created;
        self.numbers[si] += 1;
        let (store, xchg) = SwapStorage::new();
        let mut w = SwapWriter::new(
            WriterConfig {
                created_ns: created,
                ..self.cfg.segment
            },
            store,
        )
        .map_err(|e| TapeError::input(Some(&path), format!("cannot start the segment: {e}")))?;
        w.defer_blocks(lz4);
        let seg_io = Arc::new(SegIo::new(file, path));
        // The placeholder header goes out first, as the reference does.
        // From a spare, the I/O thread writes it (before any other write of
        // the segment: its queue is FIFO). While an earlier segment is
        // being finished, the rename waits for it on the finisher (a kill
        // leaves only the last segment of a series unfinished). Otherwise
        // all is done here; the I/O thread then makes a spare for the next
        // rotation.
        let write_header = || {
            io_thread::write_all_at(&seg_io.file, w.pending(), 0)
                .map_err(|e| TapeError::io(&tmp, "writing the segment", e))
        };
        match &self.io {
            Some(io) if from_spare => io.push_publish(&seg_io, tmp, Some(w.pending().to_vec())),
            Some(io) if !self.closing.is_empty() => {
                if let Err(e) = write_header() {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                io.push_publish(&seg_io, tmp, None);
                io.push_spare();
            }
            _ => {
                let path = &seg_io.path;
                let published = write_header().and_then(|()| {
                    std::fs::rename(&tmp, path)
                        .map_err(|e| TapeError::io(path, "moving the new segment into place", e))
                });
                if let Err(e) = published {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                seg_io.published.store(true, Ordering::Release);
                if let Some(io) = &self.io {
                    io.push_spare();
                }
            }
        }
        let n = w.pending().len();
        w.consume(n);
        if clocked && self.seq == 0 {
            self.tape_created = created;
        }
        self.open[si] = Some(OpenSeg {
            io: seg_io,
            xchg,
            name,
            series,
            w,
            seq: self.seq,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            events: 0,
            bucket: None,
            unsynced: 0,
            handed: 0,
            written: 0,
            synced: 0,
        });
        self.seq += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn close_segment(&mut self, si: usize) -> Result<(), TapeError> {
        self.lz4_drain(si)?;
        let Some(seg) = self.open[si].as_mut() else {
            return Ok(());
        };
        let header = seg.w.finish().map_err(|e| {
            TapeError::input(
                Some(&seg.io.path),
                format!("cannot finish the segment: {e}"),
            )
            .at(e.offset)
        })?;
        let syncs = self.cfg.durability.syncs();
        if self.io.is_none() {
            return self.close_segment_here(si, header);
        }
        // Under the syncing policies the frames and trailer are fsynced
        // before the final header is written (and fsynced in turn), so
        // that no crash, even of the machine, leaves a final header whose
        // index is not on disk: the finisher does that. Otherwise the final
        // header is just the segment's last write.
        let last = if syncs {
            self.hand_over(si, None)?;
            Some(header)
        } else {
            self.hand_over(si, Some(header))?;
            None
        };
        let Some(seg) = self.open[si].take() else {
            return Ok(());
        };
        let entry = self.record_closed(&seg);
        let manifest = self.cfg.write_manifest.then_some(ManifestCtx {
            exchange_id: self.cfg.segment.exchange_id,
            created_ns: self.tape_created,
        });
        if let Some(io) = &self.io {
            io.push_finish(Closing {
                seg: Arc::clone(&seg.io),
                header: last,
                events: seg.events,
                entry,
                manifest,
                syncs,
            });
        }
        // Counted written and durable as the I/O thread and the finisher
        // get there (see `harvest`); nothing here waits for them.
        self.closing.push(ClosingSeg {
            io: seg.io,
            events: seg.events,
            syncs,
            written: seg.written,
            synced: seg.synced,
        });
        Ok(())
    }

    /// The manifest entry of a segment being closed, recorded.
    fn record_closed(&mut self, seg: &OpenSeg) -> (u64, ManifestSegment) {
        let empty = seg.events == 0;
        let entry = (
            seg.seq,
            ManifestSegment {
                name: seg.name.clone(),
                kind: seg.series.to_string(),
                size_bytes: seg.w.pending_offset(),
                first_event_ns: if empty { 0 } else { seg.min_ts },
                last_event_ns: if empty { 0 } else { seg.max_ts },
                event_count: seg.events,
            },
        );
        self.closed.push(entry.clone());
        self.stats.segments += 1;
        entry
    }

    /// Closes segment `si` on this thread (`Durability::Flush`, which has
    /// no I/O thread): trailer and final header written, then listed.
    fn close_segment_here(&mut self, si: usize, header: [u8; 64]) -> Result<(), TapeError> {
        self.hand_over(si, Some(header))?;
        let Some(seg) = self.open[si].take() else {
            return Ok(());
        };
        self.closed_written += seg.events;
        self.record_closed(&seg);
        // What an earlier sync() made durable; the rest waits for the
        // next sync().
        let durable = seg.io.synced.load(Ordering::Acquire).min(seg.events);
        if durable < seg.events {
            self.closed_unsynced
                .push((seg.io.path.clone(), seg.events - durable));
        }
        self.save_manifest()?;
        self.closed_durable += durable;
        Ok(())
    }

    /// Takes the progress of closing segments into the counts; those the
    /// finisher is done with move to the closed counts.
    pub(super) fn harvest_closing(&mut self) {
        let mut i = 0;
        while i < self.closing.len() {
            let c = &mut self.closing[i];
            let finished = c.io.finished.load(Ordering::Acquire);
            (c.written, c.synced) = progress(&c.io);
            if !finished {
                i += 1;
                continue;
            }
            let c = self.closing.swap_remove(i);
            self.closed_written += c.events;
            // Under None, what an earlier sync() made durable; the rest
            // waits for the next sync().
            let durable = if c.syncs { c.events } else { c.synced };
            if durable < c.events {
                self.closed_unsynced
                    .push((c.io.path.clone(), c.events - durable));
            }
            self.closed_durable += durable;
        }
    }
}

/// What of a segment is written and durable: written once it is renamed
/// into place (readers see it), durable once its directory entry is
/// synced too. `synced` is read before `written`, and the threads publish
/// a segment's fsync after its writes, so durable never passes written.
pub(super) fn progress(io: &SegIo) -> (u64, u64) {
    let dir = io.dir_synced.load(Ordering::Acquire);
    let synced = io.synced.load(Ordering::Acquire);
    let published = io.published.load(Ordering::Acquire);
    let written = io.written.load(Ordering::Acquire);
    (
        if published { written } else { 0 },
        if dir { synced } else { 0 },
    )
}

/// A closed segment the finisher has not finished yet.
pub(super) struct ClosingSeg {
    pub(super) io: Arc<SegIo>,
    pub(super) events: u64,
    pub(super) syncs: bool,
    /// `io.written` as of the writer's last call.
    pub(super) written: u64,
    /// `io.synced` as of the writer's last call (0 until its directory
    /// entry is synced).
    pub(super) synced: u64,
}

/// See [`FileWriter::hand_over`].
pub(super) fn hand_over(
    io: Option<&IoThread>,
    seg: &mut OpenSeg,
    last: Option<[u8; 64]>,
) -> Result<(), TapeError> {
    let n = seg.w.pending().len();
    if n == 0 && last.is_none() {
        return Ok(());
    }
    let events = seg.w.stats().events_emitted as u64;
    let header = match last {
        Some(bytes) => Some(Header { bytes, last: true }),
        None if seg.w.config().compression == Compression::Lz4
            && events > 0
            && !seg.w.is_finished() =>
        {
            Some(Header {
                bytes: seg.w.current_header().to_bytes(),
                last: false,
            })
        }
        None => None,
    };
    let at = seg.w.pending_offset();
    match io {
        None => {
            seg.io.write(at, seg.w.pending(), header.as_ref(), events)?;
            seg.w.consume(n);
        }
        Some(io) if n == 0 => io.push_write(&seg.io, at, Vec::new(), 0, header, events),
        Some(io) => {
            if io.append_to_queued(&seg.io, at, seg.w.pending(), header, events) {
                seg.w.consume(n);
            } else {
                let fresh = io.take_buffer()?;
                let (buf, len) = take_pending(&mut seg.w, &seg.xchg, fresh).ok_or_else(|| {
                    TapeError::input(
                        Some(&seg.io.path),
                        "internal error: the encoder's buffer could not be handed over",
                    )
                })?;
                io.push_write(&seg.io, at, buf, len, header, events);
            }
        }
    }
    seg.handed = events;
    Ok(())
}

/// created_ns reached i64::MAX: the segment would leave no strictly larger
/// name (or created_ns) for the next one, so it is not opened. Nothing
/// else changes: the writer's closed segments stay valid and a later
/// append tries again (with a new value from the clock, if it has one).
#[cold]
fn created_ns_exhausted(source: Hint) -> TapeError {
    TapeError::usage(
        "segment created_ns would reach i64::MAX: no later segment name is left; no segment was opened",
    )
    .with_hint(source)
}
