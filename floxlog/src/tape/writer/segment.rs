//! Opening and closing the segments of a tape writer.

use super::io_thread::{self, Header, IoThread, SegIo};
use super::swap::{take_pending, Exchange, SwapStorage, SwapWriter};
use super::{now_ns, Durability, TapeWriter};
use crate::tape::dir::{series_of, Layout, MIXED};
use crate::tape::error::TapeError;
use crate::tape::hint::{Hint, Remedy};
use crate::tape::manifest::{sync_dir, ManifestSegment};
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
    /// `io.written` as of the writer's last call (see [`TapeWriter::harvest`]).
    pub(super) written: u64,
    /// `io.synced` as of the writer's last call.
    pub(super) synced: u64,
}

impl TapeWriter {
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
        if self.io.is_none() && self.cfg.durability != Durability::Flush {
            self.io = Some(IoThread::start(&self.dir)?);
        }
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| TapeError::io(&tmp, "creating the segment", e))?;
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
        // The placeholder header goes out at once, as the reference does,
        // written here (the I/O thread only gets published segments).
        let published = io_thread::write_all_at(&file, w.pending(), 0)
            .map_err(|e| TapeError::io(&tmp, "writing the segment", e))
            .and_then(|()| {
                std::fs::rename(&tmp, &path)
                    .map_err(|e| TapeError::io(&path, "moving the new segment into place", e))
            });
        if let Err(e) = published {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let n = w.pending().len();
        w.consume(n);
        if clocked && self.seq == 0 {
            self.tape_created = created;
        }
        self.open[si] = Some(OpenSeg {
            io: Arc::new(SegIo::new(file, path)),
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
        // Trailer, final header, fsync: in that order, then wait for them
        // (the manifest must not list a segment before its bytes are out).
        // Under the syncing policies the frames and trailer are fsynced
        // before the final header is written (and fsynced in turn), so that
        // no crash, even of the machine, leaves a final header whose index
        // is not on disk.
        if syncs {
            self.hand_over(si, None)?;
            self.sync_seg(si, false, false)?;
        }
        self.hand_over(si, Some(header))?;
        if syncs {
            self.sync_seg(si, true, false)?;
        }
        let waited = self.wait_io();
        let Some(seg) = self.open[si].take() else {
            return Ok(());
        };
        waited?;
        let size = seg.w.pending_offset();
        self.closed_written += seg.events;
        let empty = seg.events == 0;
        self.closed.push((
            seg.seq,
            ManifestSegment {
                name: seg.name.clone(),
                kind: seg.series.to_string(),
                size_bytes: size,
                first_event_ns: if empty { 0 } else { seg.min_ts },
                last_event_ns: if empty { 0 } else { seg.max_ts },
                event_count: seg.events,
            },
        ));
        self.stats.segments += 1;
        // Under None and Flush, what an earlier sync() made durable; the
        // rest waits for the next sync().
        let durable = if syncs {
            seg.events
        } else {
            seg.io.synced.load(Ordering::Acquire).min(seg.events)
        };
        if durable < seg.events {
            self.closed_unsynced
                .push((seg.io.path.clone(), seg.events - durable));
        }
        // With a manifest, saving it fsyncs the directory.
        if syncs && !seg.io.dir_synced.load(Ordering::Acquire) && !self.cfg.write_manifest {
            sync_dir(&self.dir)?;
        }
        self.save_manifest()?;
        self.closed_durable += durable;
        Ok(())
    }
}

/// See [`TapeWriter::hand_over`].
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
