//! `floxlog cat --follow`: a live tape printed as its writer appends to
//! it (the tailer, in file order), for a consumer at the other end of a
//! pipe: it waits for the tape to appear and for its first event, writes
//! each batch of lines as soon as the tailer has nothing more at hand
//! (flushed then, not held for a quiet gap), can start at the end, and
//! when the writer is gone waits `--writer-wait` for a restart before
//! exiting 1.

use super::cat::{Args, Format, Out};
use super::common::{parse_duration, CmdResult};
use floxlog::output::{write_json_line, Csv};
use floxlog::tape::{Tail, TailNext, TailOptions, TailStart, Tape, TapeError};
use std::path::Path;
use std::time::{Duration, Instant};

/// The options of `cat --follow`.
#[derive(clap::Args, Debug)]
pub struct FollowArgs {
    /// Print the tape as its writer appends to it, across rotations and
    /// writer restarts, in FILE order (not merged by time): waits for the
    /// tape to appear and for its first event; each batch of lines is
    /// written (and flushed) as it comes. Exit 0 when the writer closes the
    /// tape, 1 with a message when it is gone (see --writer-wait).
    #[arg(long)]
    pub follow: bool,
    /// With --follow: only the events appended from now on.
    #[arg(long, requires = "follow")]
    pub from_end: bool,
    /// With --follow: how long to wait for a writer to start, or to come
    /// back after it died, before exiting 1 (e.g. 500ms, 10s, 5m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "2s", requires = "follow")]
    pub writer_wait: i64,
    /// With --follow: stop (exit 0, with a message) after this many seconds
    /// without new events (or without the tape appearing).
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<f64>,
    /// Accepted and ignored: --follow sleeps until the writer publishes
    /// (or polls with its own bounded back-off).
    #[arg(long, default_value_t = 200, value_name = "MS")]
    pub poll_ms: u64,
}

/// Waits until the tape at `path` can be listed: it exists and (a
/// directory) holds a segment, which a writer names at its first event
/// (a recorder not started yet, or starting). At most `idle`; `None` if
/// it did not come in time. The reason it cannot be listed yet is said
/// once; a file that exists is opened at once (its error is final).
fn wait_for(a: &Args, path: &Path, idle: Option<Duration>) -> Result<Option<Tape>, TapeError> {
    let started = Instant::now();
    let mut nap = Duration::from_millis(1);
    let mut said = false;
    loop {
        let e = match a.tape.open() {
            Ok(t) => return Ok(Some(t)),
            Err(e) if path.is_file() => return Err(e),
            Err(e) => e,
        };
        if idle.is_some_and(|i| started.elapsed() >= i) {
            return Ok(None);
        }
        if !said {
            eprintln!(
                "floxlog: waiting for the tape's first event ({})",
                e.message
            );
            said = true;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(50));
    }
}

/// Runs `cat --follow`.
pub fn run(a: &Args) -> CmdResult {
    let [path] = a.tape.inputs.as_slice() else {
        return Err(TapeError::usage(
            "--follow follows one tape: give one tape directory or segment file",
        ));
    };
    let f = &a.follow;
    let idle = f.idle_timeout.map(Duration::from_secs_f64);
    let Some(tape) = wait_for(a, path, idle)? else {
        eprintln!(
            "floxlog: stopped waiting for {}: no event within {:.1} s (--idle-timeout)",
            path.display(),
            idle.unwrap_or_default().as_secs_f64()
        );
        return Ok(0);
    };
    let filter = a.filter.filter(&tape)?;
    let style = a.prices.style();
    let csv = (a.format == Format::Csv).then(|| Csv::new(filter.types, style));
    let opts = TailOptions {
        start: if f.from_end {
            TailStart::End
        } else {
            TailStart::Beginning
        },
        skip_unknown: a.skip_unknown,
        writer_wait: Some(Duration::from_nanos(f.writer_wait.unsigned_abs())),
        ..TailOptions::default()
    };
    let mut tail = Tail::open(path, opts)?;
    // Plain `cat` merges by time; a live tape can only be printed as it is
    // written. Said on stderr so that the output stays the events.
    eprintln!(
        "floxlog: following {} in file order (segment after segment, as written; not merged by time)",
        path.display()
    );
    let mut out = Out::new(csv.as_ref());
    loop {
        // Lines held: take what is at hand without waiting, and write them
        // once nothing more is (a batch); else wait for the next event.
        let wait = if out.buf.is_empty() {
            idle
        } else {
            Some(Duration::ZERO)
        };
        let started = Instant::now();
        match tail.next(wait)? {
            TailNext::Event(ev) => {
                if filter.accepts(&ev, ev.frame_type()) {
                    match &csv {
                        Some(c) => c.write_row(&mut out.buf, &ev),
                        None => write_json_line(&mut out.buf, &ev, style),
                    }
                    out.flush_if(false)?;
                }
            }
            TailNext::Timeout if wait == Some(Duration::ZERO) => out.flush_if(true)?,
            TailNext::Timeout => {
                out.flush_if(true)?;
                eprintln!(
                    "floxlog: stopped following {}: no new event for {:.1} s (--idle-timeout); its writer is still running",
                    path.display(),
                    started.elapsed().as_secs_f64()
                );
                return Ok(0);
            }
            TailNext::End => {
                out.flush_if(true)?;
                return Ok(0);
            }
            TailNext::WriterGone => {
                out.flush_if(true)?;
                eprintln!(
                    "floxlog: error: the writer of {} is gone: no process holds the tape and it was not closed (killed or crashed), and none came back within {:.1} s (--writer-wait); every event it wrote was printed",
                    path.display(),
                    f.writer_wait as f64 / 1e9
                );
                eprintln!(
                    "  hint: `floxlog recover {}` finishes its last segment; a restarted writer can be followed again",
                    path.display()
                );
                return Ok(1);
            }
        }
        if out.closed {
            return Ok(0);
        }
    }
}
