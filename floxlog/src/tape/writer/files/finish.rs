//! The tape writer's finisher: a second background thread that closes
//! segments after their last bytes are written, so that rotation costs the
//! appending thread a hand-over, and the I/O thread goes on writing the
//! next segment meanwhile.
//!
//! For each closed segment, in the order they were closed: under the
//! syncing policies the frames and trailer are fsynced, the final header
//! written and fsynced in turn (so that not even a power loss leaves a
//! final header whose index is not on disk); otherwise the I/O thread has
//! already written the final header. Then `manifest.json` is rewritten
//! (crash-atomically, as before) to list it. Segments closed while a
//! rewrite runs wait for it and are listed together by the next one: at
//! most one rewrite is pending, whatever the rate of rotation, and the
//! appending thread never waits for one. Each segment is marked
//! [`SegIo::finished`] once its manifest entry (or, without a manifest,
//! its directory entry under the syncing policies) is on disk.

use super::io_thread::{lock, Closing, FinJob, Header, PanicGuard, Shared};
use crate::tape::dir::manifest::{sync_dir, Manifest, ManifestSegment};
use crate::tape::error::TapeError;
use std::sync::atomic::Ordering;
use std::sync::PoisonError;

/// Fsyncs and final header of one segment (see the module docs).
fn finish_one(c: &Closing) -> Result<(), TapeError> {
    if let Some(bytes) = c.header {
        c.seg.sync(None, false, c.events)?;
        let h = Header { bytes, last: true };
        c.seg.write(0, &[], Some(&h), c.events)?;
        c.seg.sync(None, true, c.events)?;
    }
    Ok(())
}

/// The finisher thread: runs until told to stop with nothing queued.
/// `listed` is what the manifest lists already (a resumed tape's segments).
pub(super) fn run(shared: &Shared, mut listed: Vec<(u64, ManifestSegment)>) {
    let _guard = PanicGuard(shared);
    let mut st = lock(&shared.state);
    loop {
        if st.fin_queue.is_empty() {
            if st.fin_stop {
                return;
            }
            st = shared
                .wake_fin
                .wait(st)
                .unwrap_or_else(PoisonError::into_inner);
            continue;
        }
        // Everything queued now is finished together, under one manifest
        // rewrite.
        let batch: Vec<FinJob> = st.fin_queue.drain(..).collect();
        st.fin_busy = true;
        let skip = st.error.is_some();
        drop(st);
        let result = if skip {
            Ok(())
        } else {
            finish_batch(shared, &batch, &mut listed)
        };
        st = lock(&shared.state);
        st.fin_busy = false;
        if let Err(e) = result {
            if st.error.is_none() {
                st.error = Some(e);
                shared.failed.store(true, Ordering::Release);
            }
        }
        if st.writer_waiting {
            st.writer_waiting = false;
            shared.wake_writer.notify_all();
        }
    }
}

fn finish_batch(
    shared: &Shared,
    jobs: &[FinJob],
    listed: &mut Vec<(u64, ManifestSegment)>,
) -> Result<(), TapeError> {
    let mut batch = Vec::new();
    for job in jobs {
        match job {
            FinJob::Close(c) => {
                finish_one(c)?;
                listed.push(c.entry.clone());
                batch.push(c);
            }
            FinJob::Publish(seg, tmp) => {
                std::fs::rename(tmp, &seg.path).map_err(|e| {
                    TapeError::io(&seg.path, "moving the new segment into place", e)
                })?;
                seg.published.store(true, Ordering::Release);
            }
        }
    }
    if batch.is_empty() {
        return Ok(());
    }
    let syncs = batch.iter().any(|c| c.syncs);
    match batch.iter().rev().find_map(|c| c.manifest) {
        Some(ctx) => {
            let mut m = Manifest::new(ctx.exchange_id, ctx.created_ns);
            listed.sort_by_key(|(seq, _)| *seq);
            m.segments = listed.iter().map(|(_, s)| s.clone()).collect();
            // With `syncs`, saving fsyncs the directory too.
            m.save(&shared.dir, syncs)?;
        }
        None => {
            let unsynced = batch
                .iter()
                .any(|c| c.syncs && !c.seg.dir_synced.load(Ordering::Acquire));
            if unsynced {
                sync_dir(&shared.dir)?;
            }
        }
    }
    for c in batch {
        if syncs {
            c.seg.dir_synced.store(true, Ordering::Release);
        }
        c.seg.finished.store(true, Ordering::Release);
    }
    Ok(())
}
