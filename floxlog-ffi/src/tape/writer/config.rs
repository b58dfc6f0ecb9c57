//! `floxlog_tape_writer_config`: the tape writer's settings from C (layout,
//! durability, segment size and time, journal mode, resume, a clock), their
//! defaults, and their checked conversion to `TapeWriterConfig`.

use crate::codec::records::config_in;
use crate::codec::writer::floxlog_writer_config;
use crate::error::{floxlog_result, Fail};
use core::ffi::c_void;
use floxlog::tape::{Durability, Layout, TapeWriterConfig};
use floxlog_core::WriterConfig;

/// Tape layout: flox's, `<created_ns>.floxlog` segments of every event type
/// in one series (default).
pub const FLOXLOG_LAYOUT_FLOX: u8 = 0;
/// Tape layout: the spec's, one series per event family
/// (`trades-000000.bin`, `book-000000.bin`...).
pub const FLOXLOG_LAYOUT_SPEC: u8 = 1;

/// Durability: never fsync; write in 1 MiB chunks, in the background.
/// When an append returns, its event is in the writer's memory (an
/// encoder buffer, or queued for the I/O thread): a kill loses what is not
/// yet `written_events` (at most about 4 MiB: the chunk being filled and
/// three queued), a power loss anything not `durable_events` (0 unless
/// `floxlog_tape_writer_sync` is called). See `floxlog_tape_writer_config`.
pub const FLOXLOG_DURABILITY_NONE: u8 = 0;
/// Durability: hand every event (LZ4: every block) to the OS at once, so
/// that followers see it; never fsync. When an append returns, `write(2)`
/// of its event (LZ4: of every finished block) has returned: a kill loses
/// nothing appended but an unfinished LZ4 block; a power loss loses what
/// is not `durable_events`.
pub const FLOXLOG_DURABILITY_FLUSH: u8 = 1;
/// Durability: write and fsync after every LZ4 block (uncompressed: every
/// `index_interval` events), in the background: when an append returns
/// the write and fsync are queued, not done; `written_events` and
/// `durable_events` say what they covered so far.
pub const FLOXLOG_DURABILITY_SYNC_EVERY_BLOCK: u8 = 2;
/// Durability: write and fsync every `sync_every_n` events, in the
/// background (as `SYNC_EVERY_BLOCK`).
pub const FLOXLOG_DURABILITY_SYNC_EVERY_N: u8 = 3;
/// Durability: write in 1 MiB chunks in the background, fsync each
/// segment when it is closed (default), also in the background: a kill
/// loses what is not `written_events`, a power loss what is not
/// `durable_events` (the events of the segments closed and fsynced).
pub const FLOXLOG_DURABILITY_SYNC_ON_CLOSE: u8 = 4;

/// A clock for `created_ns`: nanoseconds since the Unix epoch. Called with
/// `clock_ctx`, exactly once per segment the writer opens, on the thread
/// that calls the append that opens it (in journal mode, which prepares
/// segments ahead, when the segment before it in its series opens). It
/// runs while the tape is locked for that append: it must not call the
/// writer, its appenders or its counts. It must not unwind (a C++
/// exception escaping it aborts the process).
pub type floxlog_clock_fn = Option<unsafe extern "C" fn(ctx: *mut c_void) -> i64>;

/// Tape writer settings. Get the defaults with
/// `floxlog_tape_writer_config_default`, then change what you need.
///
/// What has happened when an append returns, by durability policy:
///
/// | policy | the event, when the append returns | a kill loses | a power loss loses |
/// |---|---|---|---|
/// | `NONE` | encoded in memory; written in 1 MiB chunks by the I/O thread | what is not `written_events` | what is not `durable_events` (0 without `floxlog_tape_writer_sync`) |
/// | `FLUSH` | `write(2)` returned (LZ4: for every finished block) | an unfinished LZ4 block only | what is not `durable_events` |
/// | `SYNC_EVERY_BLOCK`, `SYNC_EVERY_N` | encoded; write and fsync queued at the block / every n events | what is not `written_events` | what is not `durable_events` |
/// | `SYNC_ON_CLOSE` (default) | encoded; written in chunks in the background | what is not `written_events` | what is not `durable_events` (closed, fsynced segments) |
///
/// LZ4 events staged in an unfinished block are in memory under every
/// policy. Where LZ4 blocks are compressed: under `FLUSH`,
/// `SYNC_EVERY_BLOCK` and `SYNC_EVERY_N`, in the append that fills the
/// block (which then writes it, or queues its write and fsync); under
/// `NONE` and `SYNC_ON_CLOSE`, on the writer's compressor thread (the same
/// bytes), so a full block is in memory,
/// being compressed, when its last append returns, and goes to the I/O
/// thread at one of the writer's next calls (`floxlog_tape_writer_flush`,
/// `_sync` and `_close` wait for it). There an append waits for the
/// compressor only when four blocks of its segment are being compressed,
/// and near the end of a segment (the rotation after the block that
/// reaches `max_segment_bytes` needs their exact sizes).
/// `floxlog_tape_writer_written_events` counts events whose
/// `write(2)` returned (they survive a kill of the process: readers and
/// `floxlog_tape_recover` find them), `floxlog_tape_writer_durable_events`
/// those fsynced with their directory entry (they survive a power loss);
/// `floxlog_tape_writer_progress` reads both at once. The counts advance at
/// the writer's own calls.
///
/// An append waits only when three 1 MiB chunks are already queued for
/// the I/O thread (the disk is slower than the appends), and under `FLUSH`
/// for its own `write(2)`. Rotation does not wait on the appending thread
/// (except under `FLUSH`, which has no background thread and closes,
/// opens and renames segments, and rewrites `manifest.json`, in the
/// append that rotates): the append that rotates encodes the closed
/// segment's index trailer and hands it over; the next segment's file is
/// created ahead by the I/O thread (the first segment, and one opened
/// before the spare file is ready, are created by the append itself);
/// the closed segment's final header, its fsyncs (syncing policies) and
/// the `manifest.json` rewrite run on a background finisher thread, the
/// manifest rewritten once for all the segments closed meanwhile, so its
/// cost does not grow on the appending thread with the number of
/// segments. A new segment is renamed into place (visible to readers)
/// only once the segments closed before it are finished, so a kill leaves
/// at most the last segment of each series unfinished; its events are
/// counted written from then on. `floxlog_tape_writer_flush`, `_sync` and
/// `_close` wait for everything.
///
/// File order of an LZ4 segment (the reference profile's, as the flox
/// reference writes it; this writer does the same under the spec
/// profile): the events of each block sorted by `exchange_ts_ns` (stable:
/// ties keep append order), blocks in append order (the `Sorted` header
/// flag is set only when no block starts before the previous block's
/// latest event). A file-order read of such a segment is not append order
/// when events arrive out of time order within a block. Uncompressed
/// segments keep append order.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_tape_writer_config {
    /// Segment settings: compression, index interval (LZ4: events per
    /// block), index on/off, exchange id, profile. Its `created_ns` is not
    /// used: the clock below stamps each segment.
    pub segment: floxlog_writer_config,
    /// `FLOXLOG_LAYOUT_*` (default flox).
    pub layout: u8,
    /// `FLOXLOG_DURABILITY_*` (default `SYNC_ON_CLOSE`).
    pub durability: u8,
    /// Non-zero: keep `manifest.json` up to date (default 1).
    pub write_manifest: u8,
    /// Non-zero: journal mode (default 0; uncompressed segments only, LZ4
    /// is refused with `FLOXLOG_INVALID_INPUT`). Each segment is a
    /// pre-allocated file mapped shared; an append encodes its frame
    /// straight into the mapping and publishes it by writing the frame's
    /// size field last (release ordering), with no system call or
    /// allocation (one uncontended lock, shared with the writer's
    /// appenders); a background thread prepares the next segment and
    /// finalises the previous one, so a rotation does not wait on I/O.
    /// When an append returns, under every durability, its event is in the
    /// page cache, visible to readers of the file, and survives the process
    /// being killed (`written_events` counts it); `NONE` and `FLUSH` do
    /// nothing more (a power loss may lose what `floxlog_tape_writer_sync`
    /// did not cover); `SYNC_EVERY_N` and `SYNC_EVERY_BLOCK` ask the
    /// background thread for an fsync every n (every `index_interval`)
    /// events, run within about a millisecond (`durable_events` counts
    /// what it covered); `SYNC_ON_CLOSE` fsyncs each segment when it is
    /// finalised. A killed writer leaves its live segment unfinished, ending
    /// in zeros up to the pre-allocated size (readers take them as the end
    /// of the data; `floxlog recover` cuts them off), maybe the next,
    /// prepared segment with no event, and hidden temporary files (such as
    /// `.journal-first-N.tmp`, a series' first segment reserved at open)
    /// that `floxlog_tape_recover` removes. Segments are stamped when
    /// prepared (see `floxlog_clock_fn`). After close each
    /// segment is byte for byte what the default writer writes. Set it after
    /// `floxlog_tape_writer_config_default` (it sits in what was padding,
    /// so the struct's size is unchanged).
    pub journal: u8,
    /// Events between fsyncs for `FLOXLOG_DURABILITY_SYNC_EVERY_N` (at
    /// least 1).
    pub sync_every_n: u32,
    /// Rotate before a segment would grow past this many bytes
    /// (uncompressed: before the frame that would cross it, as the flox
    /// reference does; LZ4: after the block that crosses it). Default
    /// 256 MiB.
    pub max_segment_bytes: u64,
    /// Also rotate when an event's timestamp enters a new span of this many
    /// nanoseconds, aligned to the epoch (3600e9: hourly segments); 0 (the
    /// default) rotates by size only.
    pub rotate_every_ns: i64,
    /// Source of each segment's `created_ns` (which also names flox-layout
    /// segments); NULL (default) reads `CLOCK_REALTIME`. The values are
    /// made strictly increasing across the tape's segments.
    pub clock_ns: floxlog_clock_fn,
    /// Passed to `clock_ns`.
    pub clock_ctx: *mut c_void,
    /// Non-zero: continue the tape already in `dir`, if any, after its last
    /// segment, instead of refusing it (default 0). A recorder restarted
    /// after a crash keeps one tape: before anything is appended, the
    /// segments the killed writer left open are recovered, as
    /// `floxlog_tape_recover` would (every complete event kept, the torn
    /// tail dropped, the original kept as `<name>.damaged` when bytes are
    /// dropped), and `manifest.json` lists every segment; new segments
    /// follow the last one. A segment that cannot be recovered (its header
    /// itself is invalid) makes `floxlog_tape_writer_open` fail with the
    /// code of the damage (e.g. `FLOXLOG_BAD_MAGIC`), `err` naming the
    /// file and byte offset; a tape of the other layout fails with
    /// `FLOXLOG_INVALID_INPUT`. On an empty or missing
    /// directory it starts a new tape. The writer's counts are of its own
    /// events. Journal mode resumes too.
    pub resume: u8,
    /// CPUs the writer's own threads run on: bit `i % 64` of word `i / 64`
    /// is CPU `i` (the layout of Linux's `cpu_set_t`); all zero (the
    /// default) inherits the affinity of the thread that calls
    /// `floxlog_tape_writer_open`. Each thread applies it before it
    /// touches memory; a set the process may not use fails the open. The
    /// threads: journal mode `floxlog-journal` (prepares segments and
    /// their window of ready pages, finishes closed ones, runs fsyncs);
    /// the default writer `floxlog-io` (writes, fsyncs), `floxlog-finish`
    /// (finishes closed segments) and, for LZ4 under the chunked policies,
    /// `floxlog-lz4`. Pin a recorder by giving them a housekeeping core,
    /// not the feed threads' cores.
    pub thread_cpus: [u64; FLOXLOG_CPU_SET_WORDS],
}

/// Words of `floxlog_tape_writer_config.thread_cpus` (1024 CPUs).
pub const FLOXLOG_CPU_SET_WORDS: usize = 16;
const _: () = assert!(FLOXLOG_CPU_SET_WORDS == floxlog::tape::writer::CPU_SET_WORDS);

// `journal` took the byte of padding after `write_manifest`: the fields
// after it, and the struct's size, are where they were.
const _: () = {
    use core::mem::offset_of;
    assert!(
        offset_of!(floxlog_tape_writer_config, journal)
            == offset_of!(floxlog_tape_writer_config, write_manifest) + 1
    );
    assert!(
        offset_of!(floxlog_tape_writer_config, sync_every_n)
            == offset_of!(floxlog_tape_writer_config, journal) + 1
    );
};

/// The caller's clock, callable from Rust.
pub(super) struct CClock {
    pub(super) f: unsafe extern "C" fn(*mut c_void) -> i64,
    pub(super) ctx: *mut c_void,
}

// SAFETY: the clock is only called from inside the writer's calls, on the
// caller's thread, one call at a time (the handle is used from one thread
// at a time); the header says so. Its context travels with the handle.
unsafe impl Send for CClock {}

impl CClock {
    pub(super) fn now(&self) -> i64 {
        // SAFETY: a function pointer the caller gave for this purpose,
        // with its context.
        unsafe { (self.f)(self.ctx) }
    }
}

impl Default for floxlog_tape_writer_config {
    fn default() -> Self {
        let d = TapeWriterConfig::default();
        floxlog_tape_writer_config {
            segment: (&WriterConfig::default()).into(),
            layout: FLOXLOG_LAYOUT_FLOX,
            durability: FLOXLOG_DURABILITY_SYNC_ON_CLOSE,
            write_manifest: u8::from(d.write_manifest),
            journal: u8::from(d.journal),
            sync_every_n: 1,
            max_segment_bytes: d.max_segment_bytes,
            rotate_every_ns: 0,
            clock_ns: None,
            clock_ctx: core::ptr::null_mut(),
            resume: 0,
            thread_cpus: [0; FLOXLOG_CPU_SET_WORDS],
        }
    }
}

pub(super) fn tape_config_in(c: &floxlog_tape_writer_config) -> Result<TapeWriterConfig, Fail> {
    let layout = match c.layout {
        FLOXLOG_LAYOUT_FLOX => Layout::Flox,
        FLOXLOG_LAYOUT_SPEC => Layout::Spec,
        _ => return Err(Fail::invalid("layout is not a FLOXLOG_LAYOUT_* value")),
    };
    let durability = match c.durability {
        FLOXLOG_DURABILITY_NONE => Durability::None,
        FLOXLOG_DURABILITY_FLUSH => Durability::Flush,
        FLOXLOG_DURABILITY_SYNC_EVERY_BLOCK => Durability::SyncEveryBlock,
        FLOXLOG_DURABILITY_SYNC_EVERY_N if c.sync_every_n == 0 => {
            return Err(Fail::invalid("sync_every_n is 0"))
        }
        FLOXLOG_DURABILITY_SYNC_EVERY_N => Durability::SyncEveryN(c.sync_every_n),
        FLOXLOG_DURABILITY_SYNC_ON_CLOSE => Durability::SyncOnClose,
        _ => {
            return Err(Fail::invalid(
                "durability is not a FLOXLOG_DURABILITY_* value",
            ))
        }
    };
    if c.rotate_every_ns < 0 {
        return Err(Fail::invalid("rotate_every_ns is negative"));
    }
    if c.max_segment_bytes == 0 {
        return Err(Fail::invalid("max_segment_bytes is 0"));
    }
    Ok(TapeWriterConfig {
        layout,
        segment: config_in(&c.segment)?,
        max_segment_bytes: c.max_segment_bytes,
        rotate_every_ns: (c.rotate_every_ns > 0).then_some(c.rotate_every_ns),
        durability,
        created_ns: None,
        write_manifest: c.write_manifest != 0,
        resume: c.resume != 0,
        journal: c.journal != 0,
        thread_cpus: floxlog::tape::CpuSet {
            words: c.thread_cpus,
        },
    })
}

/// Fills `*cfg` with the defaults: flox layout, uncompressed, index every
/// 1000 events, reference profile, 256 MiB segments, fsync at segment
/// close, manifest on, wall clock, no resume.
///
/// # Safety
/// `cfg` must be writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_writer_config_default(
    cfg: *mut floxlog_tape_writer_config,
) -> floxlog_result {
    // SAFETY: forwarded caller promise; the pointer is checked.
    unsafe {
        crate::boundary::output(core::ptr::null_mut(), cfg, "cfg", || {
            Ok(floxlog_tape_writer_config::default())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_values_are_checked() {
        let mut c = floxlog_tape_writer_config::default();
        assert!(tape_config_in(&c).is_ok());
        c.layout = 9;
        assert!(tape_config_in(&c).is_err());
        c.layout = FLOXLOG_LAYOUT_SPEC;
        c.durability = FLOXLOG_DURABILITY_SYNC_EVERY_N;
        c.sync_every_n = 0;
        assert!(tape_config_in(&c).is_err());
        c.sync_every_n = 10;
        assert_eq!(
            tape_config_in(&c).unwrap().durability,
            Durability::SyncEveryN(10)
        );
        c.rotate_every_ns = -1;
        assert!(tape_config_in(&c).is_err());
    }
}
