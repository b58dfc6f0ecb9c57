//! Crash test: a recorder process (`floxlog-crash-recorder`, built from
//! `src/bin/crash_recorder.rs`) writes the reproducible mixed event stream
//! through the tape writer and is killed with SIGKILL at random points.
//! Afterwards every event the writer reported as written (handed to the
//! OS) or durable (fsynced) must be read back, every event read must be
//! the generator's event at its place, the only read problem allowed is
//! the documented torn tail of a crashed writer, and after `recover` the
//! tape reads whole and `verify` finds no errors.
//!
//! The same runs are made with both layouts: flox's interleaved
//! `<created_ns>.floxlog` segments, and the spec layout's per-type series
//! (`trades-000000.bin`, `book-000000.bin`, ...), where each series must be
//! a prefix of the generator's events of its type and only each series'
//! last segment may be open or torn. (`tests/crash_cli.rs` kills the
//! `convert` and `recover` commands.)
//!
//! The kill points are random (seeded; set `FLOXLOG_CRASH_SEED` to replay
//! a sequence of runs), so each run of the test crashes the recorder at
//! different places: mid-frame, mid-block, mid-fsync, mid-rotation. The
//! assertions hold for every kill point.

#![cfg(unix)]

use floxlog::core::ReadOptions;
use floxlog::synth::{mixed_event, Rng};
use floxlog::tape::check::verify_tape;
use floxlog::tape::check::{recover_file, RecoverOptions};
use floxlog::tape::read::Order;
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{
    Durability, Layout, OpenOptions, Severity, Tape, TapeWriter, TapeWriterConfig,
};
use floxlog::OwnedEvent;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const RECORDER: &str = env!("CARGO_BIN_EXE_floxlog-crash-recorder");

/// Runs of the recorder per test.
const RUNS: usize = 40;

/// Events a killed recorder is asked for: far more than it writes before
/// the latest kill (about 5 µs an event in a debug build).
const ENDLESS: u64 = 10_000_000;

/// Events of a run left to finish (clean close).
const SHORT: u64 = 3_000;

/// One recorder configuration: codec, durability policy (recorder syntax),
/// events per index entry / LZ4 block, rotation size, layout.
struct Setup {
    lz4: bool,
    durability: &'static str,
    interval: u16,
    max_bytes: u64,
    /// [`Layout::Spec`] (per-type series) instead of [`Layout::Flox`].
    spec: bool,
}

const fn setup(lz4: bool, durability: &'static str, interval: u16, max_bytes: u64) -> Setup {
    Setup {
        lz4,
        durability,
        interval,
        max_bytes,
        spec: false,
    }
}

const fn spec_setup(lz4: bool, durability: &'static str, interval: u16, max_bytes: u64) -> Setup {
    Setup {
        spec: true,
        ..setup(lz4, durability, interval, max_bytes)
    }
}

/// Every durability policy (all but `none` with both codecs); segments of 4
/// to 32 KiB, so that kills land in rotations too.
const SETUPS: [Setup; 10] = [
    setup(false, "flush", 64, 16 << 10),
    setup(true, "block", 32, 8 << 10),
    setup(false, "every:7", 64, 16 << 10),
    setup(true, "every:50", 16, 8 << 10),
    setup(false, "close", 64, 16 << 10),
    setup(true, "flush", 64, 16 << 10),
    setup(false, "block", 100, 12 << 10),
    setup(true, "close", 128, 32 << 10),
    setup(false, "none", 64, 16 << 10),
    setup(true, "every:1", 8, 4 << 10),
];

/// How a run ends.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// SIGKILL right after spawning (the recorder may not have started).
    KillAtStart,
    /// SIGKILL this long after the recorder said `ready`.
    KillAfter(Duration),
    /// Let a short run finish and close the tape.
    Finish,
}

/// What the recorder said before it died.
#[derive(Debug, Default)]
struct Said {
    ready: bool,
    written: u64,
    durable: u64,
    done: Option<u64>,
}

fn parse_said(lines: &[String]) -> Said {
    let mut s = Said::default();
    for l in lines {
        let (what, n) = l.split_once(' ').unwrap_or((l.as_str(), ""));
        let n = || {
            n.parse::<u64>()
                .unwrap_or_else(|_| panic!("bad line {l:?}"))
        };
        match what {
            "ready" => s.ready = true,
            "written" => {
                assert!(n() > s.written, "written went backwards: {l}");
                s.written = n();
            }
            "durable" => {
                assert!(n() > s.durable, "durable went backwards: {l}");
                s.durable = n();
            }
            "done" => s.done = Some(n()),
            _ => panic!("unexpected recorder output {l:?}"),
        }
    }
    // A promise is only kept if the bytes went out first.
    assert!(s.durable <= s.written, "{s:?}");
    s
}

/// Starts the recorder, ends it as `mode` says, returns its output lines.
fn record(dir: &Path, setup: &Setup, seed: u64, events: u64, mode: Mode) -> Vec<String> {
    let mut child = Command::new(RECORDER)
        .arg(dir)
        .arg(if setup.lz4 { "lz4" } else { "none" })
        .arg(setup.durability)
        .arg(setup.interval.to_string())
        .arg(setup.max_bytes.to_string())
        .arg(seed.to_string())
        .arg(events.to_string())
        .arg(if setup.spec { "spec" } else { "flox" })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the recorder");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    // Drained on a thread, so the recorder never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    match mode {
        Mode::KillAtStart => child.kill().expect("killing the recorder"),
        Mode::KillAfter(delay) => {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(l) if l == "ready" => lines.push(l),
                other => {
                    let _ = child.kill();
                    let out = child.wait_with_output().expect("recorder output");
                    panic!(
                        "recorder did not start: {other:?}; stderr: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
            std::thread::sleep(delay);
            child.kill().expect("killing the recorder");
        }
        Mode::Finish => {}
    }
    let out = child.wait_with_output().expect("waiting for the recorder");
    reader.join().expect("stdout reader");
    lines.extend(rx.try_iter());
    let killed = out.status.code().is_none();
    assert!(
        killed || out.status.success(),
        "recorder failed: {:?}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    if matches!(mode, Mode::Finish) {
        assert!(out.status.success(), "{:?}", out.status);
    }
    lines
}

/// The segment files in `dir`, in name (= write) order.
fn segment_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "floxlog"))
        .collect();
    v.sort();
    v
}

/// The first `n` events as the writer lays them out in file order: as
/// generated, except that LZ4 sorts each block of `interval` events by
/// timestamp (stably: ties keep arrival order). Every block but a closed
/// tape's last is full, and blocks never span segments, so the blocks are
/// the consecutive runs of `interval` events from the first.
fn file_order(seed: u64, lz4: bool, interval: u16, n: usize) -> Vec<OwnedEvent> {
    let mut v: Vec<OwnedEvent> = (0..n as u64).map(|i| mixed_event(seed, i)).collect();
    if lz4 {
        for block in v.chunks_mut(interval as usize) {
            block.sort_by_key(OwnedEvent::exchange_ts_ns);
        }
    }
    v
}

/// What one read of a tape gave.
struct Read {
    events: Vec<OwnedEvent>,
    /// (segment, tolerated, error) of every segment that stopped early.
    problems: Vec<(usize, bool, String)>,
}

fn read_tape(dir: &Path, order: Order) -> Read {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).expect("listing the tape");
    let request = Request {
        order,
        ..Request::default()
    };
    let mut o = Session::open(tape, request);
    assert!(o.open_errors().is_empty(), "{:?}", o.open_errors());
    let mut r = o.cursor();
    let mut events = Vec::new();
    while let Some(it) = r.next_event().expect("reading the tape") {
        events.push(OwnedEvent::from_event(&it.event));
    }
    let problems = r
        .problems()
        .iter()
        .map(|p| (p.segment, p.tolerated, p.to_error().to_string()))
        .collect();
    Read { events, problems }
}

/// What a run found, for the distribution.
#[derive(Debug)]
struct Outcome {
    mode: Mode,
    said: Said,
    segments: usize,
    read: usize,
    torn: bool,
    /// The last segment was still open (placeholder header) at the kill,
    /// with frames or blocks in it.
    open_tail: bool,
    rewritten: usize,
}

/// Checks a (possibly crashed) tape against what the recorder said.
fn check_tape(dir: &Path, setup: &Setup, seed: u64, said: &Said, ctx: &str) -> Outcome {
    let files = segment_files(dir);
    for f in &files {
        // Segments are published with their header already written.
        let len = std::fs::metadata(f).unwrap().len();
        assert!(len >= 64, "{ctx}: {} has {len} bytes", f.display());
    }
    let mut out = Outcome {
        mode: Mode::Finish,
        said: Said::default(),
        segments: files.len(),
        read: 0,
        torn: false,
        open_tail: false,
        rewritten: 0,
    };
    if files.is_empty() {
        // Killed before the first segment was published: nothing promised.
        assert_eq!(said.written, 0, "{ctx}: events written but no segment");
        return out;
    }

    let last = files.len() - 1;
    let head = std::fs::read(&files[last]).unwrap();
    let h = floxlog::core::SegmentHeader::parse(&head).expect("last segment header");
    out.open_tail = floxlog::tape::read::engine::header_is_unfinished(&h) && head.len() > 64;
    if said.done.is_some() {
        assert!(!out.open_tail, "{ctx}: closed tape with an open segment");
    }

    // (a) The tape as the crash left it, in file order.
    let a = read_tape(dir, Order::File);
    for (seg, tolerated, e) in &a.problems {
        assert!(*tolerated, "{ctx}: not a torn tail: {e}");
        assert_eq!(*seg, last, "{ctx}: torn segment is not the last: {e}");
    }
    assert!(a.problems.len() <= 1, "{ctx}: {:?}", a.problems);
    out.torn = !a.problems.is_empty();
    let n = a.events.len();
    out.read = n;
    assert!(
        n as u64 >= said.written,
        "{ctx}: read {n} events, the writer had reported {} written ({} durable)",
        said.written,
        said.durable
    );
    if let Some(total) = said.done {
        assert_eq!(n as u64, total, "{ctx}: closed tape");
        assert!(
            a.problems.is_empty(),
            "{ctx}: closed tape: {:?}",
            a.problems
        );
    } else if setup.lz4 {
        // Only whole blocks reach the file, and only close writes a short one.
        assert_eq!(n % setup.interval as usize, 0, "{ctx}: {n} events");
    }
    let expected = file_order(seed, setup.lz4, setup.interval, n);
    if let Some(i) = (0..n).find(|&i| a.events[i] != expected[i]) {
        panic!(
            "{ctx}: event {i} of {n} in file order differs:\n got {:?}\nwant {:?}",
            a.events[i], expected[i]
        );
    }

    // Merged by timestamp: the same events, stably sorted.
    let t = read_tape(dir, Order::Time);
    let mut sorted = a.events.clone();
    sorted.sort_by_key(OwnedEvent::exchange_ts_ns);
    assert!(t.events == sorted, "{ctx}: merged order differs");
    assert_eq!(t.problems.len(), a.problems.len(), "{ctx}");

    // (b) recover every segment: only the last can need it, and it keeps
    // every event the reader returned.
    for (i, f) in files.iter().enumerate() {
        let rep = recover_file(f, &RecoverOptions::default())
            .unwrap_or_else(|e| panic!("{ctx}: recover {}: {e}", f.display()));
        if rep.action == "rewritten" {
            assert_eq!(i, last, "{ctx}: recover rewrote a closed segment: {rep:?}");
            out.rewritten += 1;
        } else {
            assert_eq!(rep.action, "already_valid", "{ctx}");
        }
    }
    if said.done.is_some() {
        assert_eq!(out.rewritten, 0, "{ctx}: a closed tape needed recovery");
    }
    let b = read_tape(dir, Order::File);
    assert!(
        b.problems.is_empty(),
        "{ctx}: after recover: {:?}",
        b.problems
    );
    assert!(b.events == a.events, "{ctx}: recover changed the events");
    verify_recovered(dir, n, ctx);
    out
}

/// `verify` after recover: no errors, and only the warnings a killed
/// writer's tape is expected to have (segments that were open are not in
/// manifest.json, which lists closed segments only; jittered timestamps go
/// backwards); every event counted.
fn verify_recovered(dir: &Path, n: usize, ctx: &str) {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).unwrap();
    let rep = verify_tape(&tape, ReadOptions::default(), &mut |_| {});
    let errors: Vec<_> = rep
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{ctx}: verify after recover: {errors:?}");
    for f in &rep.findings {
        assert!(
            ["unlisted_segment", "timestamps_backwards"].contains(&f.kind.as_str()),
            "{ctx}: {f:?}"
        );
    }
    assert_eq!(rep.events, n as u64, "{ctx}");
}

#[test]
fn killed_recorder_loses_nothing_it_reported_and_returns_nothing_invalid() {
    let (outcomes, kills, mid_write) = kill_runs("run", 0x00C0_FFEE, RUNS, &SETUPS, check_tape);
    let finished = outcomes.iter().filter(|o| o.said.done.is_some()).count();
    let rotated = outcomes.iter().filter(|o| o.segments >= 2).count();
    let open_tail = outcomes.iter().filter(|o| o.open_tail).count();
    let durable = outcomes.iter().filter(|o| o.said.durable > 0).count();
    // Lenient bounds, so that a slow or busy machine cannot make them fail:
    // typically 30 of the 32 timed kills land mid-write, 25 to 30 after a
    // rotation, 10 to 20 in an open segment with data, 20 with durable
    // events (three copies of the test at once on two cores: 28, 21, 12, 16;
    // eight copies, with the background I/O thread: down to 3 open tails
    // and 6 durable, hence the bounds below: each state must be reached,
    // not reached often).
    assert!(mid_write * 2 >= kills, "{mid_write} of {kills}");
    assert!(rotated * 4 >= kills, "{rotated} of {kills}");
    assert!(open_tail * 16 >= kills, "{open_tail} of {kills}");
    assert!(durable * 8 >= kills, "{durable} of {kills}");
    assert_eq!(finished, 3);
}

/// The random-kill driver of the recorder tests: `runs` recorders over
/// `setups`, seeded from `FLOXLOG_CRASH_SEED` (default `default_seed`).
/// Runs 7, 15, ... are killed at once, runs 4, 17, 30 finish, the others
/// are killed 1 ms to 200 ms after `ready`, log-uniform, so that as many
/// kills land in the first segments and blocks as late ones. `check` reads
/// each tape back. Returns the outcomes, the timed kills and how many of
/// them landed mid-write (the recorder had written events, not all).
fn kill_runs(
    name: &str,
    default_seed: u64,
    runs: usize,
    setups: &[Setup],
    check: fn(&Path, &Setup, u64, &Said, &str) -> Outcome,
) -> (Vec<Outcome>, usize, usize) {
    let base = std::env::var("FLOXLOG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seed);
    let mut rng = Rng::new(base);
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut outcomes: Vec<Outcome> = Vec::new();
    for run in 0..runs {
        let setup = &setups[run % setups.len()];
        let seed = rng.next_u64();
        let mode = if run % 8 == 7 {
            Mode::KillAtStart
        } else if run % 13 == 4 {
            Mode::Finish
        } else {
            Mode::KillAfter(Duration::from_micros(
                (1_000.0 * 200f64.powf(rng.unit())) as u64,
            ))
        };
        let events = if matches!(mode, Mode::Finish) {
            SHORT
        } else {
            ENDLESS
        };
        let dir = tmp.path().join(format!("run{run}"));
        let codec = if setup.lz4 { "lz4" } else { "none" };
        let ctx = format!(
            "{name} {run} (FLOXLOG_CRASH_SEED={base}, seed {seed}, {codec} {} interval {} max {}, {mode:?})",
            setup.durability, setup.interval, setup.max_bytes
        );
        let lines = record(&dir, setup, seed, events, mode);
        let said = parse_said(&lines);
        let mut out = check(&dir, setup, seed, &said, &ctx);
        out.mode = mode;
        out.said = said;
        eprintln!(
            "{name} {run:2}: {codec:>4} {:>8} {:<16} segments {:3}, written {:6}, durable {:6}, read {:6}{}{}{}{}",
            setup.durability,
            match mode {
                Mode::KillAtStart => "kill at start".to_string(),
                Mode::KillAfter(d) => format!("kill at {:.1} ms", d.as_secs_f64() * 1e3),
                Mode::Finish => "finish".to_string(),
            },
            out.segments,
            out.said.written,
            out.said.durable,
            out.read,
            if out.open_tail { ", open tail" } else { "" },
            if out.torn { ", torn tail" } else { "" },
            match out.rewritten {
                0 => String::new(),
                n => format!(", {n} rewritten"),
            },
            if out.said.done.is_some() { ", done" } else { "" },
        );
        outcomes.push(out);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
    let kills = outcomes
        .iter()
        .filter(|o| matches!(o.mode, Mode::KillAfter(_)))
        .count();
    let mid_write = outcomes
        .iter()
        .filter(|o| matches!(o.mode, Mode::KillAfter(_)) && o.read > 0 && o.said.done.is_none())
        .count();
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count();
    eprintln!(
        "{runs} {name}s in {:.1?}: {mid_write} of {kills} timed kills mid-write, {} finished, \
         {} with several segments, {} left an open segment with events, {} a torn tail, \
         {} rewritten by recover ({} several), {} with durable events",
        started.elapsed(),
        count(|o| o.said.done.is_some()),
        count(|o| o.segments >= 2),
        count(|o| o.open_tail),
        count(|o| o.torn),
        count(|o| o.rewritten > 0),
        count(|o| o.rewritten > 1),
        count(|o| o.said.durable > 0),
    );
    (outcomes, kills, mid_write)
}

/// The window the random kills rarely hit: a writer that died while closing
/// a segment, after appending the index trailer and before writing the
/// final header over the placeholder. The trailer then follows the frames
/// of a segment whose header still says "unfinished".
#[test]
fn writer_killed_between_index_trailer_and_final_header() {
    let t = tempfile::tempdir().unwrap();
    for lz4 in [false, true] {
        let dir = t.path().join(if lz4 { "lz4" } else { "none" });
        let cfg = TapeWriterConfig {
            layout: Layout::Flox,
            segment: floxlog::core::WriterConfig {
                compression: if lz4 {
                    floxlog::core::Compression::Lz4
                } else {
                    floxlog::core::Compression::None
                },
                index_interval: 16,
                ..floxlog::core::WriterConfig::default()
            },
            durability: Durability::Flush,
            created_ns: Some(1),
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(&dir, cfg).unwrap();
        for i in 0..100 {
            w.append(&mixed_event(3, i).as_event()).unwrap();
        }
        assert_eq!(w.written_events(), if lz4 { 96 } else { 100 });
        assert_eq!(w.durable_events(), 0, "Flush never fsyncs");
        w.close().unwrap();
        let files = segment_files(&dir);
        assert_eq!(files.len(), 1);
        // Put back the header the file had before the final one: the
        // placeholder (uncompressed), or the counts of the blocks before
        // the last with only the Compressed flag (LZ4).
        let mut bytes = std::fs::read(&files[0]).unwrap();
        let mut h = floxlog::core::SegmentHeader::parse(&bytes).unwrap();
        h.flags = if lz4 {
            floxlog::core::segment_header::flags::COMPRESSED
        } else {
            0
        };
        h.index_offset = 0;
        h.symbol_count = 0;
        if lz4 {
            h.event_count = 96;
        } else {
            (h.event_count, h.first_event_ns, h.last_event_ns) = (0, 0, 0);
        }
        bytes[..64].copy_from_slice(&h.to_bytes());
        std::fs::write(&files[0], &bytes).unwrap();

        // Every event reads; the trailer is the tolerated tail of a crash.
        let a = read_tape(&dir, Order::File);
        assert_eq!(a.events, file_order(3, lz4, 16, 100), "lz4 {lz4}");
        assert!(
            a.problems.iter().all(|p| p.1),
            "lz4 {lz4}: {:?}",
            a.problems
        );
        // A tailer reads every event and then waits for the final header
        // instead of failing (no writer: it reports the writer gone).
        let opts = floxlog::tape::TailOptions {
            writer_wait: Some(std::time::Duration::ZERO),
            ..Default::default()
        };
        let mut t = floxlog::tape::Tail::open(&files[0], opts).unwrap();
        let mut got = 0;
        let end = loop {
            match t.next(Some(std::time::Duration::ZERO)).unwrap() {
                floxlog::tape::TailNext::Event(_) => got += 1,
                other => break other,
            }
        };
        assert_eq!(got, 100, "lz4 {lz4}");
        assert_eq!(end, floxlog::tape::TailNext::WriterGone, "lz4 {lz4}");
        // recover keeps them all and drops only the trailer.
        let rep = recover_file(&files[0], &RecoverOptions::default()).unwrap();
        assert_eq!((rep.action.as_str(), rep.events_kept), ("rewritten", 100));
        assert!(
            rep.dropped_detail
                .as_deref()
                .is_some_and(|d| d.contains("index trailer")),
            "{rep:?}"
        );
        let b = read_tape(&dir, Order::File);
        assert!(
            b.problems.is_empty() && b.events == a.events,
            "{:?}",
            b.problems
        );
    }
}

/// Spec-layout setups: every durability policy, both codecs; segments of 4
/// to 16 KiB, so that every series rotates and kills land in rotations.
const SPEC_SETUPS: [Setup; 8] = [
    spec_setup(false, "flush", 64, 8 << 10),
    spec_setup(true, "block", 32, 8 << 10),
    spec_setup(false, "every:7", 32, 4 << 10),
    spec_setup(true, "every:50", 16, 4 << 10),
    spec_setup(false, "close", 64, 16 << 10),
    spec_setup(true, "flush", 64, 8 << 10),
    spec_setup(false, "none", 100, 8 << 10),
    spec_setup(true, "close", 8, 4 << 10),
];

/// Runs of the spec-layout recorder.
const SPEC_RUNS: usize = 30;

/// One read of a tape in file order, by segment file name.
struct SegRead {
    /// (name, events) of every segment, in the tape's segment order.
    segments: Vec<(String, Vec<OwnedEvent>)>,
    /// (name, tolerated, error) of every segment that stopped early.
    problems: Vec<(String, bool, String)>,
}

fn read_segments(dir: &Path) -> SegRead {
    let tape = Tape::open(&[dir.to_path_buf()], OpenOptions::default()).expect("listing the tape");
    let names: Vec<String> = tape.segments.iter().map(|s| s.name.clone()).collect();
    let request = Request {
        order: Order::File,
        ..Request::default()
    };
    let mut o = Session::open(tape, request);
    assert!(o.open_errors().is_empty(), "{:?}", o.open_errors());
    let mut r = o.cursor();
    let mut segments: Vec<(String, Vec<OwnedEvent>)> =
        names.iter().map(|n| (n.clone(), Vec::new())).collect();
    while let Some(it) = r.next_event().expect("reading the tape") {
        segments[it.segment]
            .1
            .push(OwnedEvent::from_event(&it.event));
    }
    let problems = r
        .problems()
        .iter()
        .map(|p| {
            (
                names[p.segment].clone(),
                p.tolerated,
                p.to_error().to_string(),
            )
        })
        .collect();
    SegRead { segments, problems }
}

/// The series (spec layout) of an event.
fn series(ev: &OwnedEvent) -> &'static str {
    floxlog::tape::dir::series_of(ev.as_event().frame_type())
}

/// Each series' events as a spec-layout writer lays them out: generated
/// order within the series, and with LZ4 each block of `interval` events
/// of the series sorted by timestamp (blocks never span segments, and
/// every block but a closed tape's last of a series is full). The first
/// `total` events of the stream if given, else at least `want` events of
/// each series.
fn series_order(
    seed: u64,
    setup: &Setup,
    want: &BTreeMap<String, usize>,
    total: Option<u64>,
) -> BTreeMap<String, Vec<OwnedEvent>> {
    let mut out: BTreeMap<String, Vec<OwnedEvent>> = BTreeMap::new();
    for i in 0.. {
        let enough = match total {
            Some(t) => i == t,
            None => want
                .iter()
                .all(|(s, &n)| out.get(s).map_or(0, Vec::len) >= n),
        };
        if enough {
            break;
        }
        assert!(i < 100_000_000, "more events read than generated: {want:?}");
        let ev = mixed_event(seed, i);
        out.entry(series(&ev).to_string()).or_default().push(ev);
    }
    if setup.lz4 {
        for v in out.values_mut() {
            for block in v.chunks_mut(setup.interval as usize) {
                block.sort_by_key(OwnedEvent::exchange_ts_ns);
            }
        }
    }
    out
}

/// Checks a (possibly crashed) spec-layout tape against what the recorder
/// said: per series, the segments are numbered from 0 without gaps, only
/// the last can be open or torn, and the events read are a prefix of the
/// series' events; together at least every event reported written. Then
/// `recover` rewrites only open last segments, keeps every event, and the
/// tape verifies clean.
fn check_spec_tape(dir: &Path, setup: &Setup, seed: u64, said: &Said, ctx: &str) -> Outcome {
    let mut by_series: BTreeMap<String, Vec<(String, PathBuf)>> = BTreeMap::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(s) = floxlog::tape::dir::segment_series(&name) {
                by_series.entry(s).or_default().push((name, e.path()));
            }
        }
    }
    let mut out = Outcome {
        mode: Mode::Finish,
        said: Said::default(),
        segments: by_series.values().map(Vec::len).sum(),
        read: 0,
        torn: false,
        open_tail: false,
        rewritten: 0,
    };
    if by_series.is_empty() {
        assert_eq!(said.written, 0, "{ctx}: events written but no segment");
        return out;
    }
    // The last segment of each series: the only one that may be open.
    let mut last_of: BTreeMap<String, String> = BTreeMap::new();
    for (s, files) in &mut by_series {
        assert!(
            floxlog::tape::dir::SERIES.contains(&s.as_str()),
            "{ctx}: series {s}"
        );
        files.sort();
        for (k, (name, path)) in files.iter().enumerate() {
            assert_eq!(*name, format!("{s}-{k:06}.bin"), "{ctx}: numbering");
            let bytes = std::fs::read(path).unwrap();
            assert!(bytes.len() >= 64, "{ctx}: {name} has {} bytes", bytes.len());
            let h = floxlog::core::SegmentHeader::parse(&bytes).expect("segment header");
            let open = floxlog::tape::read::engine::header_is_unfinished(&h);
            if k + 1 < files.len() {
                assert!(!open, "{ctx}: {name} is open but a later segment exists");
            } else if open {
                assert!(said.done.is_none(), "{ctx}: closed tape with {name} open");
                out.open_tail |= bytes.len() > 64;
            }
        }
        last_of.insert(s.clone(), files.last().unwrap().0.clone());
    }

    // (a) The tape as the crash left it.
    let a = read_segments(dir);
    for (name, tolerated, e) in &a.problems {
        assert!(*tolerated, "{ctx}: not a torn tail: {name}: {e}");
        assert!(
            last_of.values().any(|l| l == name),
            "{ctx}: torn segment {name} is not the last of its series: {e}"
        );
    }
    out.torn = !a.problems.is_empty();
    let by_name: BTreeMap<&str, &Vec<OwnedEvent>> =
        a.segments.iter().map(|(n, v)| (n.as_str(), v)).collect();
    let mut got: BTreeMap<String, Vec<OwnedEvent>> = BTreeMap::new();
    for (s, files) in &by_series {
        let v = got.entry(s.clone()).or_default();
        for (name, _) in files {
            let evs = by_name[name.as_str()];
            if let Some(e) = evs.iter().find(|e| series(e) != s) {
                panic!("{ctx}: {name} holds an event of series {}", series(e));
            }
            v.extend(evs.iter().cloned());
        }
    }
    let n: usize = got.values().map(Vec::len).sum();
    out.read = n;
    assert!(
        n as u64 >= said.written,
        "{ctx}: read {n} events, the writer had reported {} written ({} durable)",
        said.written,
        said.durable
    );
    if let Some(total) = said.done {
        assert_eq!(n as u64, total, "{ctx}: closed tape");
        assert!(a.problems.is_empty(), "{ctx}: {:?}", a.problems);
    } else if setup.lz4 {
        for (s, v) in &got {
            let len = v.len();
            assert_eq!(len % setup.interval as usize, 0, "{ctx}: {s}: {len} events");
        }
    }
    let want: BTreeMap<String, usize> = got.iter().map(|(s, v)| (s.clone(), v.len())).collect();
    let expected = series_order(seed, setup, &want, said.done);
    for (s, v) in &got {
        // (A series whose segment holds no event yet was not generated.)
        let exp = expected.get(s).map_or(&[][..], Vec::as_slice);
        assert!(v.len() <= exp.len(), "{ctx}: {s}: {} events", v.len());
        if let Some(i) = (0..v.len()).find(|&i| v[i] != exp[i]) {
            panic!(
                "{ctx}: event {i} of {} of series {s} differs:\n got {:?}\nwant {:?}",
                v.len(),
                v[i],
                exp[i]
            );
        }
        if said.done.is_some() {
            assert_eq!(v.len(), exp.len(), "{ctx}: {s}: closed tape");
        }
    }
    // A closed tape has every series the stream has.
    if said.done.is_some() {
        assert_eq!(got.len(), expected.len(), "{ctx}: series");
    }

    // Merged by timestamp: the same events, stably sorted (ties in the
    // tape's segment order).
    let t = read_tape(dir, Order::Time);
    let mut sorted: Vec<OwnedEvent> = a.segments.iter().flat_map(|(_, v)| v.clone()).collect();
    sorted.sort_by_key(OwnedEvent::exchange_ts_ns);
    if t.events != sorted {
        let i = (0..t.events.len().min(sorted.len())).find(|&i| t.events[i] != sorted[i]);
        eprintln!(
            "DBG lens {} {} first diff {:?}",
            t.events.len(),
            sorted.len(),
            i
        );
        if let Some(i) = i {
            for j in i.saturating_sub(2)..(i + 3).min(sorted.len()) {
                eprintln!(
                    "DBG {j} got {:?}\n want {:?}",
                    t.events.get(j),
                    sorted.get(j)
                );
            }
        }
        for (n, v) in &a.segments {
            eprintln!(
                "DBG seg {n} {} first {:?} last {:?}",
                v.len(),
                v.first().map(OwnedEvent::exchange_ts_ns),
                v.last().map(OwnedEvent::exchange_ts_ns)
            );
        }
    }
    assert!(t.events == sorted, "{ctx}: merged order differs");
    assert_eq!(t.problems.len(), a.problems.len(), "{ctx}");

    // (b) recover every segment: only a series' open last one can need it.
    for (s, files) in &by_series {
        for (name, path) in files {
            let rep = recover_file(path, &RecoverOptions::default())
                .unwrap_or_else(|e| panic!("{ctx}: recover {name}: {e}"));
            if rep.action == "rewritten" {
                assert_eq!(
                    Some(name),
                    last_of.get(s),
                    "{ctx}: recover rewrote a closed segment: {rep:?}"
                );
                assert_eq!(rep.events_kept as usize, by_name[name.as_str()].len());
                out.rewritten += 1;
            } else {
                assert_eq!(rep.action, "already_valid", "{ctx}");
            }
        }
    }
    if said.done.is_some() {
        assert_eq!(out.rewritten, 0, "{ctx}: a closed tape needed recovery");
    }
    let b = read_segments(dir);
    assert!(
        b.problems.is_empty(),
        "{ctx}: after recover: {:?}",
        b.problems
    );
    let before: BTreeMap<&String, &Vec<OwnedEvent>> =
        a.segments.iter().map(|(n, v)| (n, v)).collect();
    let after: BTreeMap<&String, &Vec<OwnedEvent>> =
        b.segments.iter().map(|(n, v)| (n, v)).collect();
    assert!(before == after, "{ctx}: recover changed the events");
    verify_recovered(dir, n, ctx);
    out
}

#[test]
fn killed_spec_layout_recorder_loses_nothing_it_reported_in_any_series() {
    let (outcomes, kills, mid_write) =
        kill_runs("spec run", 0x5BEC, SPEC_RUNS, &SPEC_SETUPS, check_spec_tape);
    let finished = outcomes.iter().filter(|o| o.said.done.is_some()).count();
    // Four series: more than four segments means some series rotated.
    let rotated = outcomes.iter().filter(|o| o.segments > 4).count();
    let open_tail = outcomes.iter().filter(|o| o.open_tail).count();
    let durable = outcomes.iter().filter(|o| o.said.durable > 0).count();
    // Lenient bounds (see the flox-layout test).
    assert!(mid_write * 2 >= kills, "{mid_write} of {kills}");
    assert!(rotated * 4 >= kills, "{rotated} of {kills}");
    assert!(open_tail * 16 >= kills, "{open_tail} of {kills}");
    assert!(durable * 8 >= kills, "{durable} of {kills}");
    assert_eq!(finished, 2);
}
