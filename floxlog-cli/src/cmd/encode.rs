//! `floxlog encode`: JSON lines to a tape.

use super::common::{progress, CmdResult, CompressionArg, LayoutArg, Sink, WriteOpts};
use super::settings::Settings;
use floxlog::json::event_from_line;
use floxlog::tape::TapeError;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// Write JSON-lines events (the corpus schema, as `cat` prints) to a tape.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Write JSON-lines events (the conformance corpus \
schema, as `floxlog cat` prints them) to a tape directory, or with --segment to one segment file.\n\n\
By default the tape is one flox can replay: `<created_ns>.floxlog` segments holding every record \
type, LZ4-compressed, with a spec-schema manifest.json beside them; --layout spec writes per-type \
series (trades-000000.bin, ...) instead. Events are written in input order.\n\n--settings FILE takes the writer settings from the conformance kit's settings JSON (docs/conformance.md): compression, create_index, index_interval, exchange_id, max_segment_bytes, profile, and created_ns (segment i gets created_ns[i]); the output is a tape directory of flox-layout segments (it may exist if empty).")]
pub struct Args {
    /// JSON-lines input file; `-` or nothing reads stdin.
    pub input: Option<PathBuf>,
    /// Output tape directory (or segment file with --segment).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub write: WriteOpts,
    /// Writer settings as the conformance kit's settings JSON (instead of the codec options).
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "compression", "index_interval", "no_index", "max_segment_bytes", "profile",
        "layout", "exchange_id", "created_ns", "segment", "rotate_every",
    ])]
    pub settings: Option<PathBuf>,
}

/// Runs `encode`.
pub fn run(mut a: Args) -> CmdResult {
    let settings = match &a.settings {
        Some(p) => Some(Settings::load(p)?),
        None => None,
    };
    if let Some(st) = &settings {
        a.write = WriteOpts {
            compression: Some(st.compression),
            index_interval: Some(st.index_interval),
            no_index: !st.create_index,
            max_segment_bytes: st.max_segment_bytes,
            profile: st.profile,
            layout: LayoutArg::Flox,
            exchange_id: Some(st.exchange_id),
            ..a.write
        };
    }
    let (reader, name, size): (Box<dyn BufRead>, PathBuf, u64) = match &a.input {
        Some(p) if p.as_os_str() != "-" => {
            let f = std::fs::File::open(p).map_err(|e| TapeError::io(p, "opening the input", e))?;
            let size = f.metadata().map(|m| m.len()).unwrap_or(0);
            (
                Box::new(std::io::BufReader::with_capacity(1 << 20, f)),
                p.clone(),
                size,
            )
        }
        _ => (
            Box::new(std::io::stdin().lock()),
            PathBuf::from("<stdin>"),
            0,
        ),
    };
    let compression = a.write.compression.unwrap_or(CompressionArg::Lz4).into();
    let mut sink = Sink::create(&a.output, &a.write, compression, 0)?;
    if let Some(st) = settings {
        sink.set_clock(st.clock());
    }
    let pb = progress(size, "encode");
    let mut n = 0u64;
    let mut read = 0u64;
    // A failed encode leaves nothing at the output: the sink, dropped,
    // removes its temporary.
    let fail = |e: TapeError, sink: Sink| -> CmdResult {
        drop(sink);
        Err(e)
    };
    for (i, line) in reader.lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            // Bytes that are not UTF-8 are bad input (exit 1), not an I/O failure.
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                let at = Path::new(&format!("{}:{}", name.display(), i + 1)).to_path_buf();
                return fail(
                    TapeError::input(Some(&at), "the line is not UTF-8 text"),
                    sink,
                );
            }
            Err(e) => return fail(TapeError::io(&name, "reading the input", e), sink),
        };
        read += line.len() as u64 + 1;
        if i % 4096 == 0 {
            pb.set_position(read);
        }
        if line.trim().is_empty() {
            continue;
        }
        let ev = match event_from_line(&line) {
            Ok(ev) => ev,
            Err(e) => {
                return fail(
                    TapeError::input(Some(Path::new(&format!("{}:{}", name.display(), i + 1))), e.0)
                        .with_hint("each line must be one event object of the corpus schema (see `floxlog cat` output)"),
                    sink,
                )
            }
        };
        if let Err(e) = sink.append(&ev.as_event()) {
            let e = TapeError {
                message: format!("line {}: {}", i + 1, e.message),
                ..e
            };
            return fail(e, sink);
        }
        n += 1;
    }
    pb.finish_and_clear();
    let (segs, bytes) = sink.close()?;
    eprintln!(
        "encoded {n} events into {segs} segments ({bytes} bytes) at {}",
        a.output.display()
    );
    Ok(0)
}
