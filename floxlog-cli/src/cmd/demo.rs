//! `floxlog demo`: write a synthetic tape, verify it, print the summary.

use super::common::{parse_size, CmdResult, CompressionArg};
use floxlog::core::{ReadOptions, WriterConfig};
use floxlog::synth::{generate, metadata, SynthConfig};
use floxlog::tape::check::verify_tape;
use floxlog::tape::{
    Durability, Layout, OpenOptions, Severity, Tape, TapeError, TapeWriter, TapeWriterConfig,
};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Write a synthetic tape (trades and books, a few seconds of a busy
/// market), verify it and print the summary.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    /// Where to write the tape (replaced if it holds only a previous tape).
    #[arg(default_value = "floxlog-demo")]
    pub dir: PathBuf,
    /// Trades to generate.
    #[arg(long, default_value_t = 60_000)]
    pub trades: u64,
    /// Book deltas to generate (plus one snapshot per symbol per second).
    #[arg(long, default_value_t = 40_000)]
    pub book_deltas: u64,
    /// Seconds of market time.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Codec.
    #[arg(long, value_enum, default_value = "lz4")]
    pub compression: CompressionArg,
    /// Segment size bound.
    #[arg(long, value_parser = parse_size, default_value = "1M")]
    pub max_segment_bytes: u64,
    /// Spec 1.0 per-type layout instead of flox's.
    #[arg(long)]
    pub spec_layout: bool,
}

fn clear_previous(dir: &Path) -> Result<(), TapeError> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    // Held while the files go, so a live writer's tape is refused, not
    // emptied under it (the lock names the writer).
    let _lock = floxlog::tape::dir::lock_dirs(
        [dir.join("manifest.json").as_path()],
        "replacing the previous demo tape",
    )?;
    let mut files = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        // A tape's files, its lock and wake page, and what a killed writer
        // leaves (`.name.tmp`): a re-run must not trip over them.
        let ok = floxlog::tape::dir::segment_series(&name).is_some()
            || name == "manifest.json"
            || name == "metadata.json"
            || name == ".manifest"
            || name == floxlog::tape::dir::LOCK_FILE
            || name == floxlog::tape::WAKE_FILE
            || (name.starts_with('.') && name.ends_with(".tmp"));
        if !ok {
            return Err(TapeError::usage(format!(
                "{} holds files other than a tape ({name}); choose another directory",
                dir.display()
            )));
        }
        files.push(e.path());
    }
    for f in files {
        // The lock file stays: the lock is held through it.
        if f.file_name() == Some(std::ffi::OsStr::new(floxlog::tape::dir::LOCK_FILE)) {
            continue;
        }
        std::fs::remove_file(&f)
            .map_err(|e| TapeError::io(&f, "removing the previous demo tape", e))?;
    }
    Ok(())
}

/// Runs `demo`.
pub fn run(a: Args) -> CmdResult {
    if a.seconds.is_nan() || a.seconds <= 0.0 {
        return Err(TapeError::usage("--seconds must be positive"));
    }
    clear_previous(&a.dir)?;
    let synth = SynthConfig {
        trades: a.trades,
        book_deltas: a.book_deltas,
        duration_ns: (a.seconds * 1e9) as i64,
        ..SynthConfig::default()
    };
    let cfg = TapeWriterConfig {
        layout: if a.spec_layout {
            Layout::Spec
        } else {
            Layout::Flox
        },
        segment: WriterConfig {
            compression: a.compression.into(),
            exchange_id: 1,
            ..WriterConfig::default()
        },
        max_segment_bytes: a.max_segment_bytes,
        durability: Durability::SyncOnClose,
        ..TapeWriterConfig::default()
    };
    let t0 = Instant::now();
    let mut w = TapeWriter::create(&a.dir, cfg)?;
    let n = generate(&synth, |ev| w.append(ev))?;
    let snapshots = n - a.trades - a.book_deltas;
    w.set_metadata(metadata(&synth, a.trades, a.book_deltas + snapshots));
    let segs = w.close()?;
    let wrote = t0.elapsed().as_secs_f64();
    let bytes: u64 = segs.iter().map(|s| s.size_bytes).sum();
    outln!(
        "wrote {} events ({} trades, {} book deltas, {} snapshots) into {} segments, {} bytes, in {:.2}s: {}",
        n,
        a.trades,
        a.book_deltas,
        snapshots,
        segs.len(),
        bytes,
        wrote,
        a.dir.display()
    );
    let tape = Tape::open(std::slice::from_ref(&a.dir), OpenOptions::default())?;
    let t1 = Instant::now();
    let rep = verify_tape(&tape, ReadOptions::default(), &mut |_| {});
    let errors = rep.count(Severity::Error);
    for f in &rep.findings {
        outln!("{}", f.line());
    }
    outln!(
        "verify: {} ({} events in {:.2}s, {errors} errors, {} warnings)",
        if errors == 0 { "OK" } else { "FAILED" },
        rep.events,
        t1.elapsed().as_secs_f64(),
        rep.count(Severity::Warning)
    );
    outln!();
    let code = super::inspect::run(super::inspect::Args {
        tape: super::common::TapeArgs {
            inputs: vec![a.dir.clone()],
            ignore_manifest: false,
        },
        json: false,
        quick: false,
    })?;
    let d = a.dir.display();
    outln!(
        "\nnext:\n  floxlog cat {d} --symbol BTCUSDT --type trade --prices decimal | head\n  \
         floxlog cat {d} --format csv --type book_snapshot | head -3\n  \
         floxlog book {d} --symbol BTCUSDT --at 2024-04-26T09:24:18.5Z --depth 5\n  \
         floxlog verify {d}\n  \
         floxlog convert {d} -o {d}-spec --layout spec --compression none\n  \
         floxlog diff {d} {d}-spec --order time"
    );
    Ok(u8::from(errors > 0 || code != 0))
}
