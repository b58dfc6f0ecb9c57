//! Crash tests of the `floxlog` command-line tool's rewriting commands:
//! `convert` and `recover` are killed with SIGKILL at random points while
//! they work, and what they leave behind must be a state the user can
//! live with and a re-run can finish from.
//!
//! - `convert` builds its output under a hidden `.NAME.partial-PID` (a
//!   tape) or `.NAME.tmp` (`--segment`) beside the output and moves it
//!   into place only when complete: after a kill the output is absent or
//!   the whole tape, and a re-run produces the whole tape and leaves no
//!   temporary behind.
//! - `recover` keeps the original of a segment as `NAME.damaged` (a hard
//!   link) and replaces the segment with one rename: after a kill every
//!   event that was readable is still readable, and a re-run finishes the
//!   job: every complete event kept, and `verify` finds nothing.
//!
//! The tests run the real `floxlog` binary of the floxlog-cli package.
//! Cargo builds it for `cargo test --workspace`, but not for `cargo test
//! -p floxlog-testkit`, so the tests build it once themselves (`cargo
//! build -p floxlog-cli --bin floxlog`, with the running test's profile
//! and target directory: a no-op when it is up to date). Set
//! `FLOXLOG_BIN` to use a given binary instead.
//!
//! The kill points are random (seeded; set `FLOXLOG_CRASH_SEED` to replay
//! a sequence of runs) and spread over the duration of a complete run,
//! measured first.

#![cfg(unix)]

use floxlog::core::{Compression, ReadOptions, WriterConfig};
use floxlog::synth::{mixed_event, Rng};
use floxlog::tape::check::verify_tape;
use floxlog::tape::check::{recover_file, RecoverOptions};
use floxlog::tape::dir::{segment_series, series_of};
use floxlog::tape::read::{Request, Session};
use floxlog::tape::{
    Durability, Layout, Manifest, OpenOptions, Order, Severity, Tape, TapeWriter, TapeWriterConfig,
};
use floxlog::OwnedEvent;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `created_ns` of every tape the tests write, input or output.
const CREATED_NS: i64 = 1_700_000_000_000_000_000;

/// Events of the input tapes.
const EVENTS: u64 = 30_000;

fn base_seed(default: u64) -> u64 {
    std::env::var("FLOXLOG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The `floxlog` binary, built if needed (see the module docs).
fn floxlog_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("FLOXLOG_BIN") {
            return PathBuf::from(p);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "floxlog-cli", "--bin", "floxlog"])
            .arg("--message-format=json-render-diagnostics")
            .arg("--manifest-path")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"));
        // This test runs as <target dir>/<profile dir>/deps/<name>-<hash>.
        let exe = std::env::current_exe().expect("the test binary's path");
        if let Some(profile_dir) = exe.parent().and_then(Path::parent) {
            match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") | None => {}
                Some("release") => {
                    cmd.arg("--release");
                }
                Some(p) => {
                    cmd.args(["--profile", p]);
                }
            }
            if let Some(target) = profile_dir.parent() {
                cmd.arg("--target-dir").arg(target);
            }
        }
        let out = cmd.output().expect("running cargo build for floxlog-cli");
        assert!(
            out.status.success(),
            "cargo build -p floxlog-cli failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let exe = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "floxlog")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .unwrap_or_else(|| panic!("cargo named no floxlog executable:\n{stdout}"));
        assert!(exe.is_file(), "{}", exe.display());
        exe
    })
}

fn floxlog(args: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(floxlog_bin());
    c.args(args).stdin(Stdio::null());
    c
}

/// Runs a command to its end.
fn run(mut c: Command) -> Output {
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("running floxlog")
}

/// The shortest of three runs of the command `f` makes (each checked to
/// succeed), after `prepare` and before `clean`, which are not timed.
fn min_duration(
    mut prepare: impl FnMut(),
    mut f: impl FnMut() -> Command,
    mut clean: impl FnMut(),
) -> Duration {
    (0..3)
        .map(|_| {
            prepare();
            let c = f();
            let t = Instant::now();
            let o = run(c);
            let d = t.elapsed();
            assert!(o.status.success(), "{}", stderr(&o));
            clean();
            d
        })
        .min()
        .unwrap()
}

/// SIGKILL's number (9 on every unix).
const SIGKILL: i32 = 9;

/// Starts a command, SIGKILLs it `delay` later (it may have finished by
/// then), and returns its output, its pid and whether the kill ended it.
fn run_and_kill(mut c: Command, delay: Duration) -> (Output, u32, bool) {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting floxlog");
    let pid = child.id();
    std::thread::sleep(delay);
    child.kill().expect("killing floxlog");
    let out = child.wait_with_output().expect("waiting for floxlog");
    let killed = out.status.signal() == Some(SIGKILL);
    assert!(
        killed || out.status.success(),
        "floxlog failed before the kill: {:?}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (out, pid, killed)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes the reproducible mixed stream `seed` (`n` events) as a tape;
/// with `abandon`, stops as if the writer had been killed at the end.
fn write_tape(dir: &Path, seed: u64, n: u64, cfg: TapeWriterConfig, abandon: bool) {
    let mut w = TapeWriter::create(dir, cfg).unwrap();
    w.set_metadata(serde_json::json!({
        "symbols": [{"symbol_id": 1, "name": "BTCUSDT"}, {"symbol_id": 2, "name": "ETHUSDT"}]
    }));
    for i in 0..n {
        w.append(&mixed_event(seed, i).as_event()).unwrap();
    }
    if abandon {
        w.abandon();
    } else {
        w.close().unwrap();
    }
}

fn writer_config(layout: Layout, lz4: bool, interval: u16, max_bytes: u64) -> TapeWriterConfig {
    TapeWriterConfig {
        layout,
        segment: WriterConfig {
            compression: if lz4 {
                Compression::Lz4
            } else {
                Compression::None
            },
            index_interval: interval,
            ..WriterConfig::default()
        },
        max_segment_bytes: max_bytes,
        durability: Durability::Flush,
        created_ns: Some(CREATED_NS),
        ..TapeWriterConfig::default()
    }
}

/// One read of a tape (or segment file) in file order, by segment name.
struct SegRead {
    /// Events of every segment.
    events: BTreeMap<String, Vec<OwnedEvent>>,
    /// (tolerated, error) of every segment that stopped early.
    problems: BTreeMap<String, (bool, String)>,
}

fn read_segments(path: &Path) -> SegRead {
    let tape = Tape::open(&[path.to_path_buf()], OpenOptions::default()).expect("listing the tape");
    let names: Vec<String> = tape.segments.iter().map(|s| s.name.clone()).collect();
    let request = Request {
        order: Order::File,
        ..Request::default()
    };
    let mut o = Session::open(tape, request);
    assert!(o.open_errors().is_empty(), "{:?}", o.open_errors());
    let mut r = o.cursor();
    let mut events: BTreeMap<String, Vec<OwnedEvent>> =
        names.iter().map(|n| (n.clone(), Vec::new())).collect();
    assert_eq!(events.len(), names.len(), "a segment listed twice");
    while let Some(it) = r.next_event().expect("reading the tape") {
        let ev = OwnedEvent::from_event(&it.event);
        events.get_mut(&names[it.segment]).unwrap().push(ev);
    }
    let problems = r
        .problems()
        .iter()
        .map(|p| {
            let e = (p.tolerated, p.to_error().to_string());
            (names[p.segment].clone(), e)
        })
        .collect();
    SegRead { events, problems }
}

/// `verify` of the library: (kind, text) of the findings other than
/// jittered timestamps going backwards (which every tape of the mixed
/// stream has).
fn verify_findings(path: &Path) -> Vec<(String, String)> {
    let tape = Tape::open(&[path.to_path_buf()], OpenOptions::default()).unwrap();
    let rep = verify_tape(&tape, ReadOptions::default(), &mut |_| {});
    rep.findings
        .iter()
        .filter(|f| f.severity >= Severity::Warning && f.kind.as_str() != "timestamps_backwards")
        .map(|f| (f.kind.to_string(), f.line()))
        .collect()
}

/// The files of a tape directory (or a segment file, as ""), name to
/// bytes, hidden files left out; panics on a hidden file other than the
/// tape lock (a temporary left inside a finished output).
fn snapshot(path: &Path) -> BTreeMap<String, Vec<u8>> {
    if path.is_file() {
        return BTreeMap::from([(String::new(), std::fs::read(path).unwrap())]);
    }
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(path).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            e.file_type().unwrap().is_file(),
            "{}: {name}",
            path.display()
        );
        if name.starts_with('.') {
            assert_eq!(name, ".floxlog.lock", "{}: a hidden file", path.display());
            continue;
        }
        m.insert(name, std::fs::read(e.path()).unwrap());
    }
    m
}

fn names_in(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// A `convert` of the test: its options, and whether it writes a single
/// segment file (`--segment`) rather than a tape.
struct Conversion {
    args: &'static [&'static str],
    segment: bool,
    spec: bool,
    lz4: bool,
    interval: usize,
}

/// Recompress into rotated flox segments, split into spec series (with
/// fsyncs), both at once, and into one LZ4 segment file.
const CONVERSIONS: [Conversion; 4] = [
    Conversion {
        args: &[
            "--compression",
            "lz4",
            "--index-interval",
            "64",
            "--max-segment-bytes",
            "64K",
        ],
        segment: false,
        spec: false,
        lz4: true,
        interval: 64,
    },
    Conversion {
        args: &[
            "--layout",
            "spec",
            "--max-segment-bytes",
            "48K",
            "--durability",
            "block",
        ],
        segment: false,
        spec: true,
        lz4: false,
        interval: 0,
    },
    Conversion {
        args: &[
            "--compression",
            "lz4",
            "--layout",
            "spec",
            "--index-interval",
            "32",
            "--max-segment-bytes",
            "32K",
            "--durability",
            "every:500",
        ],
        segment: false,
        spec: true,
        lz4: true,
        interval: 32,
    },
    Conversion {
        args: &[
            "--segment",
            "--compression",
            "lz4",
            "--index-interval",
            "128",
        ],
        segment: true,
        spec: false,
        lz4: true,
        interval: 128,
    },
];

impl Conversion {
    fn output_name(&self) -> &'static str {
        if self.segment {
            "out.floxlog"
        } else {
            "out"
        }
    }

    fn command(&self, input: &Path, output: &Path) -> Command {
        let mut c = floxlog(&["convert".as_ref(), input.as_os_str()]);
        c.arg("-o").arg(output).args(self.args);
        c.args(["--created-ns", &CREATED_NS.to_string()]);
        c
    }

    fn describe(&self) -> String {
        self.args.join(" ")
    }

    /// Each series' events in the output (one series, `mixed`, unless
    /// split), from the input's events in file order.
    fn expected(&self, input: &[OwnedEvent]) -> BTreeMap<String, Vec<OwnedEvent>> {
        let mut m: BTreeMap<String, Vec<OwnedEvent>> = BTreeMap::new();
        for ev in input {
            let s = if self.spec {
                series_of(ev.as_event().frame_type())
            } else {
                "mixed"
            };
            m.entry(s.to_string()).or_default().push(ev.clone());
        }
        // LZ4 sorts each block by timestamp; blocks never span segments and
        // all but the last of a series are full.
        if self.lz4 {
            for v in m.values_mut() {
                for block in v.chunks_mut(self.interval) {
                    block.sort_by_key(OwnedEvent::exchange_ts_ns);
                }
            }
        }
        m
    }
}

/// Each series' events of a read, segments in name order.
fn by_series(r: &SegRead) -> BTreeMap<String, Vec<OwnedEvent>> {
    let mut m: BTreeMap<String, Vec<OwnedEvent>> = BTreeMap::new();
    for (name, evs) in &r.events {
        let s = segment_series(name).unwrap_or_else(|| "mixed".into());
        m.entry(s).or_default().extend(evs.iter().cloned());
    }
    m
}

/// Where a kill of `convert` landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum ConvertKill {
    /// Before the output's temporary existed (or, `--segment`, before the
    /// file was written: it is built in memory).
    NothingYet,
    /// The temporary tape existed, with no segment yet.
    Started,
    /// Segments were being written into the temporary tape.
    MidWrite,
    /// After the output was moved into place (or the run had ended).
    Complete,
}

#[test]
fn killed_convert_leaves_no_output_or_the_whole_tape_and_a_rerun_completes() {
    let base = base_seed(0x00C0_4E47);
    let mut rng = Rng::new(base);
    let seed = rng.next_u64();
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    // The input: an uncompressed flox-layout tape in several segments (with
    // a manifest and metadata.json, which convert carries over).
    let input = tmp.path().join("input");
    write_tape(
        &input,
        seed,
        EVENTS,
        TapeWriterConfig {
            durability: Durability::None,
            ..writer_config(Layout::Flox, false, 64, 512 << 10)
        },
        false,
    );
    let input_events: Vec<OwnedEvent> = (0..EVENTS).map(|i| mixed_event(seed, i)).collect();
    let bin = floxlog_bin();
    let built = started.elapsed();

    // A complete run of each conversion: the reference output, and how
    // long a run takes (kills are spread over it).
    let mut reference = Vec::new();
    let mut duration = Vec::new();
    for (k, conv) in CONVERSIONS.iter().enumerate() {
        let dir = tmp.path().join(format!("ref{k}"));
        std::fs::create_dir(&dir).unwrap();
        let out = dir.join(conv.output_name());
        let o = run(conv.command(&input, &out));
        assert!(o.status.success(), "{}: {}", conv.describe(), stderr(&o));
        // The quickest of a few more runs (a first run or a busy moment
        // takes longer, and kills after the end test nothing).
        let again = dir.join(format!(
            "timing{}",
            if conv.segment { ".floxlog" } else { "" }
        ));
        duration.push(min_duration(
            || {},
            || conv.command(&input, &again),
            || {
                let _ = std::fs::remove_dir_all(&again);
                let _ = std::fs::remove_file(&again);
            },
        ));
        assert_eq!(
            names_in(&dir),
            BTreeSet::from([conv.output_name().to_string()])
        );
        // The output holds the input's events, as its codec lays them out.
        let r = read_segments(&out);
        assert!(
            r.problems.is_empty(),
            "{}: {:?}",
            conv.describe(),
            r.problems
        );
        let got = by_series(&r);
        assert!(
            got == conv.expected(&input_events),
            "{}: the output's events differ from the input's",
            conv.describe()
        );
        let findings = verify_findings(&out);
        assert!(findings.is_empty(), "{}: {findings:#?}", conv.describe());
        let snap = snapshot(&out);
        if !conv.segment {
            assert!(snap.contains_key("manifest.json") && snap.contains_key("metadata.json"));
        }
        reference.push(snap);
    }
    eprintln!(
        "floxlog at {} (ready in {built:.1?}); complete runs: {duration:.1?}",
        bin.display()
    );

    const RUNS: usize = 24;
    let mut landed = Vec::new();
    for run_no in 0..RUNS {
        let k = run_no % CONVERSIONS.len();
        let conv = &CONVERSIONS[k];
        let parent = tmp.path().join(format!("run{run_no}"));
        std::fs::create_dir(&parent).unwrap();
        let name = conv.output_name();
        let out = parent.join(name);
        // Uniform over a complete run.
        let delay = duration[k].mul_f64(rng.unit());
        let ctx = format!(
            "run {run_no} (FLOXLOG_CRASH_SEED={base}, convert {}, kill at {delay:.1?})",
            conv.describe()
        );
        let (o, pid, killed) = run_and_kill(conv.command(&input, &out), delay);

        // Beside the output: only the output and the temporaries of the
        // killed run.
        let partial = format!(".{name}.partial-");
        let temp = format!(".{name}.tmp");
        let mut partial_segments = 0;
        let mut partial_dirs = 0;
        for e in names_in(&parent) {
            if let Some(pid_of) = e.strip_prefix(&partial) {
                assert!(!conv.segment, "{ctx}: {e}");
                assert_eq!(pid_of, pid.to_string(), "{ctx}: {e}");
                partial_dirs += 1;
                partial_segments += names_in(&parent.join(&e))
                    .iter()
                    .filter(|n| segment_series(n).is_some())
                    .count();
            } else {
                assert!(e == name || (conv.segment && e == temp), "{ctx}: left {e}");
            }
        }
        assert!(partial_dirs <= 1, "{ctx}");
        let where_ = if out.symlink_metadata().is_ok() {
            // The output exists only whole.
            assert!(
                snapshot(&out) == reference[k],
                "{ctx}: the output is not the complete tape"
            );
            assert_eq!(partial_dirs, 0, "{ctx}");
            ConvertKill::Complete
        } else if partial_segments > 0 {
            ConvertKill::MidWrite
        } else if partial_dirs > 0 {
            ConvertKill::Started
        } else {
            ConvertKill::NothingYet
        };
        if !killed {
            assert_eq!(where_, ConvertKill::Complete, "{ctx}: {}", stderr(&o));
        }

        // A re-run to the same output: it finishes the job (or, when the
        // output is already there, refuses to overwrite it).
        let again = run(conv.command(&input, &out));
        if where_ == ConvertKill::Complete {
            assert_eq!(again.status.code(), Some(2), "{ctx}: {}", stderr(&again));
            assert!(stderr(&again).contains("already exists"), "{ctx}");
        } else {
            assert!(
                again.status.success(),
                "{ctx}: re-run failed: {}",
                stderr(&again)
            );
        }
        assert!(
            snapshot(&out) == reference[k],
            "{ctx}: after the re-run the output is not the complete tape"
        );
        // The stale temporaries are gone.
        assert_eq!(
            names_in(&parent),
            BTreeSet::from([name.to_string()]),
            "{ctx}: left behind"
        );
        eprintln!(
            "convert run {run_no:2}: kill at {:>6.1} ms of {:>6.1} ms: {}{where_:?}{}",
            delay.as_secs_f64() * 1e3,
            duration[k].as_secs_f64() * 1e3,
            if killed { "" } else { "(had ended) " },
            if partial_segments > 0 {
                format!(", {partial_segments} segments in the temporary")
            } else {
                String::new()
            }
        );
        landed.push((killed, where_));
        std::fs::remove_dir_all(&parent).unwrap();
    }
    let count = |w: ConvertKill| landed.iter().filter(|l| l.0 && l.1 == w).count();
    let killed = landed.iter().filter(|l| l.0).count();
    let (nothing, started_, mid, complete) = (
        count(ConvertKill::NothingYet),
        count(ConvertKill::Started),
        count(ConvertKill::MidWrite),
        count(ConvertKill::Complete),
    );
    eprintln!(
        "{RUNS} convert runs in {:.1?}: {killed} killed ({nothing} before the output's temporary \
         existed or in memory, {started_} with an empty temporary, {mid} mid-write, {complete} \
         after the rename)",
        started.elapsed()
    );
    // Not vacuous: most kills land while convert works (typically all but
    // one or two, and 18 of 24 with segments in the temporary tape; the
    // `--segment` runs build their file in memory). Lenient bounds, so
    // that a busy machine cannot make them fail.
    assert!(killed * 2 >= RUNS, "{killed} of {RUNS} killed");
    assert!(mid * 4 >= RUNS, "{mid} of {RUNS} mid-write");
}

/// A damaged tape for the recover test.
struct Damaged {
    what: &'static str,
    dir: PathBuf,
    /// Every segment's events as a reader returns them.
    events: BTreeMap<String, Vec<OwnedEvent>>,
    /// Segments recover rewrites.
    needs: BTreeSet<String>,
    /// How long a complete `floxlog recover` takes.
    duration: Duration,
}

/// Cuts `cut` bytes off the end of `path`.
fn cut(path: &Path, cut: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let len = f.metadata().unwrap().len();
    f.set_len(len - cut).unwrap();
}

/// The segment files of a tape directory, in name order.
fn segments_of(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| segment_series(&p.file_name().unwrap().to_string_lossy()).is_some())
        .collect();
    v.sort();
    v
}

/// Copies the files of tape `from` (not the lock) into a new directory.
fn copy_tape(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != ".floxlog.lock" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The damaged tapes: writers killed (abandoned) with torn last frames and
/// blocks, and closed segments cut short (listed in the manifest, so that
/// recover must also rebuild it).
fn damaged_tapes(root: &Path, rng: &mut Rng) -> Vec<Damaged> {
    let mut v = Vec::new();
    // (a) flox layout, LZ4: the open last segment loses the end of its
    // last block; two closed segments are cut inside their blocks.
    let a = root.join("flox-lz4");
    write_tape(
        &a,
        rng.next_u64(),
        EVENTS,
        writer_config(Layout::Flox, true, 64, 96 << 10),
        true,
    );
    let segs = segments_of(&a);
    assert!(segs.len() >= 6, "{}", segs.len());
    cut(segs.last().unwrap(), 1 + rng.below(200));
    for s in [&segs[1], &segs[segs.len() / 2]] {
        let len = std::fs::metadata(s).unwrap().len();
        cut(s, len / 4 + rng.below(len / 2));
    }
    v.push((
        "flox layout, LZ4: open torn tail, two closed segments cut",
        a,
    ));
    // (b) spec layout, uncompressed: every series' open segment torn mid
    // frame; a closed trades segment cut.
    let b = root.join("spec-none");
    write_tape(
        &b,
        rng.next_u64(),
        EVENTS,
        writer_config(Layout::Spec, false, 64, 256 << 10),
        true,
    );
    let segs = segments_of(&b);
    let mut last: BTreeMap<String, &PathBuf> = BTreeMap::new();
    for s in &segs {
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        last.insert(segment_series(&name).unwrap(), s);
    }
    assert_eq!(last.len(), 4, "{segs:?}");
    for s in last.values() {
        cut(s, 1 + rng.below(40));
    }
    let t0 = b.join("trades-000000.bin");
    assert!(!last.values().any(|s| **s == t0), "{segs:?}");
    let len = std::fs::metadata(&t0).unwrap().len();
    cut(&t0, len / 3);
    v.push((
        "spec layout, uncompressed: four open torn tails, one closed segment cut",
        b,
    ));

    v.into_iter()
        .map(|(what, dir)| {
            let r = read_segments(&dir);
            let needs: BTreeSet<String> = segments_of(&dir)
                .iter()
                .filter(|p| {
                    let opts = RecoverOptions {
                        dry_run: true,
                        ..RecoverOptions::default()
                    };
                    recover_file(p, &opts).unwrap().action == "would_rewrite"
                })
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            // Every segment the reader stops early in needs recovery.
            for name in r.problems.keys() {
                assert!(needs.contains(name), "{what}: {name}");
            }
            Damaged {
                what,
                dir,
                events: r.events,
                needs,
                duration: Duration::ZERO,
            }
        })
        .collect()
}

/// Checks that a recovered tape (after a complete run of recover) holds
/// every event it held before, reads without problems, keeps each
/// rewritten original as a `.damaged` backup, and verifies clean.
fn check_recovered(d: &Damaged, dir: &Path, ctx: &str) {
    let r = read_segments(dir);
    assert!(r.problems.is_empty(), "{ctx}: {:?}", r.problems);
    assert!(r.events == d.events, "{ctx}: the events changed");
    for name in &d.needs {
        let old = std::fs::read(d.dir.join(name)).unwrap();
        let new = std::fs::read(dir.join(name)).unwrap();
        assert!(
            body_kept(&old, &new)
                || backups_of(dir, name)
                    .iter()
                    .any(|b| std::fs::read(b).unwrap() == old),
            "{ctx}: no backup of {name} holds the original"
        );
    }
    let findings = verify_findings(dir);
    assert!(findings.is_empty(), "{ctx}: verify: {findings:#?}");
    let o = run(floxlog(&["verify".as_ref(), dir.as_os_str()]));
    assert!(o.status.success(), "{ctx}: floxlog verify: {}", stderr(&o));
}

/// `NAME.damaged`, `NAME.damaged.1`, ... in `dir`.
/// Whether `new` holds every byte of `old` after the 64-byte header (a
/// recover that only rewrote the header and appended an index): recover
/// keeps no backup then.
fn body_kept(old: &[u8], new: &[u8]) -> bool {
    old.len() >= 64 && new.len() >= old.len() && new[64..old.len()] == old[64..]
}

fn backups_of(dir: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!("{name}.damaged");
    names_in(dir)
        .into_iter()
        .filter(|n| {
            n.strip_prefix(&prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
        .map(|n| dir.join(n))
        .collect()
}

/// Where a kill of `recover` landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecoverKill {
    /// No segment replaced yet.
    NoneReplaced,
    /// Some of the segments that need it replaced, not all.
    SomeReplaced,
    /// Every segment replaced, the manifest not yet rebuilt.
    AllReplaced,
    /// The manifest rebuilt too (or the run had ended).
    Done,
}

#[test]
fn killed_recover_keeps_every_readable_event_and_a_rerun_verifies_clean() {
    let base = base_seed(0x02EC_07E2);
    let mut rng = Rng::new(base);
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut tapes = damaged_tapes(&tmp.path().join("pristine"), &mut rng);
    floxlog_bin();
    // A complete run on a copy of each: how long it takes, and what it
    // must leave.
    for (k, d) in tapes.iter_mut().enumerate() {
        let dir = tmp.path().join(format!("ref{k}"));
        copy_tape(&d.dir, &dir);
        let o = run(floxlog(&["recover".as_ref(), dir.as_os_str()]));
        assert!(o.status.success(), "{}: {}", d.what, stderr(&o));
        check_recovered(d, &dir, d.what);
        let again = tmp.path().join(format!("timing{k}"));
        d.duration = min_duration(
            || copy_tape(&d.dir, &again),
            || floxlog(&["recover".as_ref(), again.as_os_str()]),
            || std::fs::remove_dir_all(&again).unwrap(),
        );
        eprintln!(
            "{}: {} segments, {} to recover, {} events; recover takes {:.1?}",
            d.what,
            d.events.len(),
            d.needs.len(),
            d.events.values().map(Vec::len).sum::<usize>(),
            d.duration
        );
    }

    const RUNS: usize = 24;
    let mut landed = Vec::new();
    let mut leftovers = 0;
    for run_no in 0..RUNS {
        let d = &tapes[run_no % tapes.len()];
        let dir = tmp.path().join(format!("run{run_no}"));
        copy_tape(&d.dir, &dir);
        let delay = d.duration.mul_f64(rng.unit());
        let ctx = format!(
            "run {run_no} (FLOXLOG_CRASH_SEED={base}, {}, kill at {delay:.1?})",
            d.what
        );
        let (o, _, killed) = run_and_kill(floxlog(&["recover".as_ref(), dir.as_os_str()]), delay);

        // Each segment's name holds the old bytes or the new ones, and
        // reads the same events either way.
        let mut replaced = BTreeSet::new();
        for name in d.events.keys() {
            let old = std::fs::read(d.dir.join(name)).unwrap();
            let now = std::fs::read(dir.join(name))
                .unwrap_or_else(|e| panic!("{ctx}: {name} is gone: {e}"));
            if now != old {
                assert!(d.needs.contains(name), "{ctx}: {name} was rewritten");
                replaced.insert(name.clone());
                // The original was kept first (unless only its header
                // changed: then the new file holds it but for the header).
                assert!(
                    body_kept(&old, &now)
                        || backups_of(&dir, name)
                            .iter()
                            .any(|b| std::fs::read(b).unwrap() == old),
                    "{ctx}: {name} replaced without a backup of the original"
                );
            }
        }
        let r = read_segments(&dir);
        assert!(r.events == d.events, "{ctx}: the events changed");
        // Only the segments still holding their old bytes stop early.
        for name in r.problems.keys() {
            assert!(
                !replaced.contains(name),
                "{ctx}: replaced {name} is damaged"
            );
        }
        let replaced = replaced.len();
        if let Err(e) = Manifest::load(&dir) {
            panic!("{ctx}: the manifest does not read: {e}");
        }
        let where_ = if replaced == 0 {
            RecoverKill::NoneReplaced
        } else if replaced < d.needs.len() {
            RecoverKill::SomeReplaced
        } else if verify_findings(&dir).is_empty() {
            RecoverKill::Done
        } else {
            RecoverKill::AllReplaced
        };
        if !killed {
            assert_eq!(where_, RecoverKill::Done, "{ctx}: {}", stderr(&o));
        }

        // A re-run finishes the job.
        let again = run(floxlog(&["recover".as_ref(), dir.as_os_str()]));
        assert!(
            again.status.success(),
            "{ctx}: re-run failed: {}",
            stderr(&again)
        );
        check_recovered(d, &dir, &ctx);
        // Temporaries of the killed run (`.NAME.tmp` of an unfinished
        // replacement) that the re-run did not reuse.
        let left: Vec<String> = names_in(&dir)
            .into_iter()
            .filter(|n| n.starts_with('.') && n != ".floxlog.lock")
            .collect();
        leftovers += left.len();
        eprintln!(
            "recover run {run_no:2}: kill at {:>6.1} ms of {:>6.1} ms: {}{where_:?} ({replaced} of {} replaced){}",
            delay.as_secs_f64() * 1e3,
            d.duration.as_secs_f64() * 1e3,
            if killed { "" } else { "(had ended) " },
            d.needs.len(),
            if left.is_empty() {
                String::new()
            } else {
                format!(", left {left:?}")
            },
        );
        landed.push((killed, where_));
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let count = |w: RecoverKill| landed.iter().filter(|l| l.0 && l.1 == w).count();
    let killed = landed.iter().filter(|l| l.0).count();
    let (none, some, all, done) = (
        count(RecoverKill::NoneReplaced),
        count(RecoverKill::SomeReplaced),
        count(RecoverKill::AllReplaced),
        count(RecoverKill::Done),
    );
    eprintln!(
        "{RUNS} recover runs in {:.1?}: {killed} killed ({none} before any replacement, {some} \
         between replacements, {all} before the manifest was rebuilt, {done} after); \
         {leftovers} temporaries left behind",
        started.elapsed()
    );
    // Typically 21 to 24 killed, 9 to 15 of them between replacements;
    // lenient bounds, as above.
    assert!(killed * 2 >= RUNS, "{killed} of {RUNS} killed");
    assert!(some * 8 >= RUNS, "{some} of {RUNS} between replacements");
}

/// The window the random kills of recover rarely hit, deterministically: a
/// `floxlog recover DIR` killed after its last segment replacement and
/// before it rebuilt manifest.json (replayed here by the library's
/// `recover_file` on every segment, which is what the command's loop does
/// before the rebuild). The re-run must rebuild the manifest, so that the
/// tape verifies clean.
#[test]
fn recover_rerun_after_a_kill_before_the_manifest_rebuild_rebuilds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tape");
    // A spec-layout writer killed mid-write (four open segments), and a
    // closed, listed segment cut short.
    write_tape(
        &dir,
        7,
        EVENTS,
        writer_config(Layout::Spec, false, 64, 256 << 10),
        true,
    );
    let t0 = dir.join("trades-000000.bin");
    let len = std::fs::metadata(&t0).unwrap().len();
    cut(&t0, len / 3);
    let before = read_segments(&dir);
    // The killed run: every segment replaced, the manifest not rebuilt.
    let mut rewritten = 0;
    for p in segments_of(&dir) {
        let rep = recover_file(&p, &RecoverOptions::default()).unwrap();
        rewritten += usize::from(rep.action == "rewritten");
    }
    assert_eq!(rewritten, 5);
    // The re-run.
    let o = run(floxlog(&["recover".as_ref(), dir.as_os_str()]));
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_segments(&dir);
    assert!(r.problems.is_empty() && r.events == before.events);
    let findings = verify_findings(&dir);
    assert!(
        findings.is_empty(),
        "verify after the re-run: {findings:#?}"
    );
    let o = run(floxlog(&["verify".as_ref(), dir.as_os_str()]));
    assert!(o.status.success(), "floxlog verify: {}", stderr(&o));
}
