//! The tape writer's settings: durability policy, configuration, clock.

use super::super::dir::Layout;
#[allow(unused_imports)] // for the doc links
use floxlog_core::{WriterConfig, DEFAULT_MAX_SEGMENT_BYTES};

/// When written bytes leave the process and when they are fsynced.
///
/// | policy | handed over for `write(2)` | `fsync` (`sync_data`) |
/// |---|---|---|
/// | `None` | to the I/O thread in 1 MiB chunks, at rotation and close | never |
/// | `Flush` | written by `append` itself, before it returns, for every event (LZ4: every block) | never |
/// | `SyncEveryBlock` | to the I/O thread after every LZ4 block (uncompressed: every `index_interval` events) | queued after the write, and at close |
/// | `SyncEveryN(n)` | to the I/O thread every `n` events | queued after the write, and at close |
/// | `SyncOnClose` (default) | to the I/O thread in 1 MiB chunks | when a segment is closed, in the background (file, then manifest and directory) |
///
/// LZ4 events staged in an unfinished block are in memory only, whatever
/// the policy: they reach the file when their block does. Under `Flush`,
/// `SyncEveryBlock` and `SyncEveryN` the append that fills a block sorts
/// and compresses it, and writes it or hands it over (with its fsync).
/// Under `None` and `SyncOnClose` a full block is sorted and compressed on
/// the writer's compressor thread, not in that append (the same bytes): it is
/// handed to the I/O thread at one of the writer's next calls once
/// compressed (`flush`, `sync` and `close` wait for it). An append waits
/// for the compressor only when four blocks of its segment are being
/// compressed (back-pressure), and near the end of a segment, where the
/// rotation after the block that reaches `max_segment_bytes` needs their
/// exact sizes.
///
/// Bytes and fsyncs handed to the I/O thread are carried out in order, in
/// the background: `append` does not wait for them (unless three chunks
/// are already waiting). An fsync requested while the previous one still
/// waits is merged into it (one fsync then covers both). Rotation does not
/// wait either (except under `Flush`): the closed segment's trailer, final
/// header, fsyncs and manifest entry are done in the background (see the
/// [module docs](super)). [`TapeWriter::close`](super::TapeWriter::close),
/// [`TapeWriter::flush`](super::TapeWriter::flush) and [`TapeWriter::sync`](super::TapeWriter::sync) hand over and wait for
/// everything, under any policy.
///
/// [`TapeWriter::written_events`](super::TapeWriter::written_events) and [`TapeWriter::durable_events`](super::TapeWriter::durable_events) say how
/// many events have been delivered so far: `write(2)` of their bytes
/// returned (they survive the process being killed) and their fsync
/// returned (they survive a power loss too). Under the syncing policies a
/// new segment's directory entry is fsynced too, once, with the segment's
/// first fsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Never fsync; write in large chunks, in the background.
    None,
    /// Write every event (LZ4: every block) before `append` returns
    /// (visible to readers, e.g. `cat --follow`); never fsync.
    Flush,
    /// Write and fsync after every block, in the background.
    SyncEveryBlock,
    /// Write and fsync every n events, in the background.
    SyncEveryN(u32),
    /// Write in chunks in the background, fsync each segment when it is
    /// closed.
    #[default]
    SyncOnClose,
}

impl std::str::FromStr for Durability {
    type Err = String;

    /// `none`, `flush`, `block`, `close`, `every:N` (N > 0).
    fn from_str(s: &str) -> Result<Durability, String> {
        match s {
            "none" => Ok(Durability::None),
            "flush" => Ok(Durability::Flush),
            "block" => Ok(Durability::SyncEveryBlock),
            "close" => Ok(Durability::SyncOnClose),
            _ => s
                .strip_prefix("every:")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n > 0)
                .map(Durability::SyncEveryN)
                .ok_or_else(|| {
                    format!("`{s}` is not a durability policy (none, flush, block, every:N, close)")
                }),
        }
    }
}

impl Durability {
    pub(crate) fn syncs(self) -> bool {
        !matches!(self, Durability::None | Durability::Flush)
    }
}

/// Settings of a [`TapeWriter`](super::TapeWriter).
#[derive(Clone, Copy, Debug)]
pub struct TapeWriterConfig {
    /// File layout.
    pub layout: Layout,
    /// Segment settings (compression, index, exchange, profile); its
    /// `created_ns` is ignored (see `created_ns` below).
    pub segment: WriterConfig,
    /// Rotate before a segment would grow past this (uncompressed: before
    /// the frame that would cross it, as the reference does; LZ4: after the
    /// block that crosses it, as the newest reference does).
    pub max_segment_bytes: u64,
    /// Also rotate when an event's timestamp enters a new span of this many
    /// nanoseconds (aligned to the epoch: 3_600e9 gives hourly segments).
    pub rotate_every_ns: Option<i64>,
    /// Durability policy.
    pub durability: Durability,
    /// Fixed `created_ns` for segment `i` = this + i (deterministic output);
    /// `None` stamps the wall clock. [`TapeWriter::set_clock`](super::TapeWriter::set_clock) overrides
    /// both.
    pub created_ns: Option<i64>,
    /// Write `manifest.json`.
    pub write_manifest: bool,
    /// Continue the tape already in the directory, if any, after its last
    /// segment (recovering first any segment a killed writer left open;
    /// refusing a tape whose segment cannot be recovered, or of the other
    /// layout), instead of refusing a directory that holds a tape: a
    /// recorder restarted after a crash keeps one tape. See
    /// [`TapeWriter::create`](super::TapeWriter::create).
    pub resume: bool,
    /// Journal mode (uncompressed only): segments are pre-allocated files
    /// mapped shared, and `append` publishes each frame in the mapping with
    /// no system call; see the `journal` module docs (in
    /// `tape/journal/mod.rs`) for what an append has done under each
    /// durability. The segments are byte for byte the default writer's
    /// once closed.
    pub journal: bool,
    /// CPUs the writer's own threads run on (empty: they inherit the
    /// affinity of the thread that opens the writer). Applied by each
    /// thread before it touches memory; a set the process may not use
    /// fails the open. The threads: journal mode `floxlog-journal`
    /// (prepares segments and their window of pages, finishes closed
    /// ones, runs fsyncs); the default writer `floxlog-io` (writes and
    /// fsyncs), `floxlog-finish` (finishes closed segments) and, with LZ4
    /// under the chunked policies, `floxlog-lz4` (compresses blocks).
    pub thread_cpus: super::threads::CpuSet,
}

impl Default for TapeWriterConfig {
    fn default() -> Self {
        TapeWriterConfig {
            layout: Layout::Flox,
            segment: WriterConfig::default(),
            max_segment_bytes: DEFAULT_MAX_SEGMENT_BYTES,
            rotate_every_ns: None,
            durability: Durability::default(),
            created_ns: None,
            write_manifest: true,
            resume: false,
            journal: false,
            thread_cpus: super::threads::CpuSet::default(),
        }
    }
}

/// A source of `created_ns` for new segments.
pub type Clock = Box<dyn FnMut() -> i64 + Send>;

/// Counts of what a writer wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapeWriterStats {
    /// Events accepted.
    pub events: u64,
    /// Segments closed.
    pub segments: u64,
}

/// A writer's health, for a recorder's monitoring
/// ([`TapeWriter::health`](super::TapeWriter::health)): read from any
/// thread while others append (it waits at most for one append).
/// Fields marked "journal" are 0 (or `None`) for the default writer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TapeWriterHealth {
    /// Events accepted by `append` so far.
    pub appended: u64,
    /// Events whose bytes the OS has (they survive a kill).
    pub written: u64,
    /// Events an fsync covered (they survive a power loss).
    pub durable: u64,
    /// Segments closed by this writer.
    pub segments_closed: u64,
    /// Segments open and holding events.
    pub segments_open: u64,
    /// Journal: bytes of disk reserved (`fallocate`) by the live and
    /// prepared segments.
    pub bytes_reserved: u64,
    /// Bytes of the segments written: the closed ones' sizes, and
    /// (journal) the live ones' frames.
    pub bytes_used: u64,
    /// Journal: jobs waiting for the background thread (segments to
    /// prepare or finish).
    pub background_queued: u64,
    /// Journal: how long the oldest waiting job has waited, ns (0 when
    /// the background thread keeps up).
    pub background_lag_ns: u64,
    /// Journal: times the background thread woke from a sleep.
    pub background_wakeups: u64,
    /// Journal: wall-clock ns of the last rotation (0: none yet).
    pub last_rotation_ns: i64,
    /// Journal: the background thread's failure, if any (appends then
    /// fail with it).
    pub last_error: Option<String>,
    /// Journal: wall-clock ns of that failure (0: none).
    pub last_error_ns: i64,
    /// Journal: true while a segment ahead could not be reserved (a full
    /// disk, say): the appends go on into the segments reserved already,
    /// and the reservation is retried with back-off; once those are used
    /// up, an append with nowhere to go fails (nothing acknowledged is
    /// lost). The warning before it bites.
    pub low_space: bool,
    /// Journal: reservations of a segment ahead (and rewrites of
    /// manifest.json at a rotation, written again at the next) that
    /// failed so far.
    pub reservation_failures: u64,
    /// Journal: the last of those failures (kept after space is found).
    pub last_reservation_error: Option<String>,
    /// Journal: wall-clock ns of that failure (0: none).
    pub last_reservation_error_ns: i64,
}

/// Wall clock in nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}
