//! `floxlog inspect`: tape or segment summary.

use super::common::{progress, ts, CmdResult, TapeArgs};
use floxlog::core::frame_type;
use floxlog::core::segment_header::flags;
use floxlog::tape::check::live::WriterState;
use floxlog::tape::check::{flag_names, inspect_tape, InspectOptions, Inspection};

/// Summarise a tape or segments: headers, manifest, counts, time range,
/// symbols, compression ratio. A live tape is summarised as it is now:
/// its writer shown live, each open segment to its last published event,
/// a journal writer's prepared segments (no event yet) counted apart.
/// Exits 0 unless something could not be read or is damaged.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES)]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Headers and manifests only; do not read the frames.
    #[arg(long)]
    pub quick: bool,
}

/// Runs `inspect`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let pb = progress(tape.file_bytes(), "inspect");
    let insp = inspect_tape(&tape, InspectOptions { quick: a.quick }, &mut |o| {
        pb.set_position(o)
    });
    pb.finish_and_clear();
    for e in &insp.open_errors {
        eprintln!("floxlog: error: {e}");
    }
    if a.json {
        outln!("{}", insp.to_json_text());
        return Ok(u8::from(insp.failed));
    }
    print_dirs(&insp);
    print_segments(&insp);
    for f in &insp.findings {
        outln!("{}", f.line());
    }
    print_total(&insp);
    Ok(u8::from(insp.failed))
}

/// Per tape directory: its manifests and metadata.
fn print_dirs(insp: &Inspection) {
    for (i, d) in insp.dirs.iter().enumerate() {
        outln!("tape {}", d.path.display());
        if let Some(w) = insp.writers.get(i) {
            let pid = w.pid.map_or(String::new(), |p| format!("pid {p} "));
            match w.state {
                WriterState::Live => outln!("  writer: live ({pid}holds the tape lock)"),
                WriterState::Died => outln!(
                    "  writer: died ({pid}held the tape lock; `floxlog recover` or a resumed writer finalises its segments)"
                ),
                WriterState::None => {}
            }
        }
        match &d.manifest {
            Some(m) => outln!(
                "  manifest.json: schema {} format {}, exchange {}, created {}, {} segments",
                m.schema_version,
                m.format_version,
                m.exchange_id,
                ts(m.created_ns),
                m.segments.len()
            ),
            None => outln!("  manifest.json: none (segments in file-name order)"),
        }
        if let Some(m) = &d.flox_manifest {
            outln!(
                "  .manifest (flox): {} segments, {} events, {} symbols",
                m.segments.len(),
                m.total_events,
                m.symbols.len()
            );
        }
        if let Some(m) = &d.metadata {
            outln!(
                "  metadata.json: exchange {}, {} named symbols",
                m.str_field("exchange").unwrap_or("?"),
                m.symbols().len()
            );
        }
    }
}

/// Per segment: header, counts, time range, symbols, index, compression.
fn print_segments(insp: &Inspection) {
    for s in &insp.segments {
        // Counts by type and the index are shown as `inspect --json` has them.
        let seg = s.to_json();
        outln!(
            "segment {} ({} bytes, {})",
            s.path.display(),
            s.size_bytes,
            s.series
        );
        if let Some(h) = &s.header {
            outln!(
                "  header: flags {}, compression {}, exchange {}, {} events claimed{}",
                flag_names(h.flags),
                if h.has(flags::COMPRESSED) {
                    "lz4"
                } else {
                    "none"
                },
                h.exchange_id,
                h.event_count,
                if s.placeholder {
                    " (placeholder: writer running or died)"
                } else {
                    ""
                }
            );
            outln!("  created {}", ts(h.created_ns));
        }
        if let Some(end) = s.live_end {
            outln!("  open: published frames end at byte {end} (zeros reserved after)");
        }
        if let Some(e) = &s.error {
            outln!(
                "  ERROR {} at byte {}: {}",
                e.kind.as_str(),
                e.offset,
                e.what
            );
        }
        if !insp.quick {
            outln!("  events: {} {}", seg["events"], seg["by_type"]);
            if let (Some(lo), Some(hi)) = (s.min_ts, s.max_ts) {
                outln!("  time: {} .. {}", ts(lo), ts(hi));
            }
            outln!("  index: {}", seg["index"]);
            if let Some(r) = s.compression_ratio {
                outln!("  LZ4: {} blocks, ratio {r:.2}", s.blocks);
            }
        }
    }
}

/// Totals over every segment (with `--quick`, only counts and bytes).
fn print_total(insp: &Inspection) {
    let t = &insp.total;
    outln!("total: {} segments, {} bytes", t.segments, t.bytes);
    if t.segments_open > 0 || t.segments_prepared > 0 {
        outln!(
            "  open segments: {}; prepared (no event yet): {}, {} bytes reserved",
            t.segments_open,
            t.segments_prepared,
            t.bytes_prepared
        );
    }
    if !insp.quick {
        let types: Vec<String> = (1..6)
            .filter(|&i| t.by_type[i] > 0)
            .map(|i| {
                format!(
                    "{} {}",
                    frame_type::name(i as u8).unwrap_or_default(),
                    t.by_type[i]
                )
            })
            .collect();
        outln!("  events: {} ({})", t.events.unwrap_or(0), types.join(", "));
        if let (Some(lo), Some(hi)) = (t.min_ts, t.max_ts) {
            outln!(
                "  time: {} .. {} ({:.3} s)",
                ts(lo),
                ts(hi),
                (hi - lo) as f64 / 1e9
            );
        }
        let syms: Vec<String> = t
            .symbols
            .iter()
            .map(|id| match insp.symbol_names.iter().find(|n| n.0 == *id) {
                Some((_, n)) => format!("{id} ({n})"),
                None => id.to_string(),
            })
            .collect();
        let shown = syms.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
        outln!(
            "  symbols: {}{shown}{}",
            if syms.is_empty() { "none" } else { "" },
            if syms.len() > 20 {
                format!(", ... ({} in all)", syms.len())
            } else {
                String::new()
            }
        );
        if let Some(r) = t.compression_ratio {
            outln!("  compression ratio: {r:.2} (frame bytes / stored block bytes)");
        }
    }
}
