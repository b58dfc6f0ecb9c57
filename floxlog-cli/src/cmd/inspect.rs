//! `floxlog inspect`: tape or segment summary.

use super::common::{progress, ts, CmdResult, TapeArgs};
use floxlog::core::segment_header::flags;
use floxlog::core::{frame_type, ReadOptions};
use floxlog::tape::scan::{scan_segment, SegmentScan};
use floxlog::tape::source::SegmentFile;
use serde_json::json;
use std::collections::BTreeSet;

/// Summarise a tape or segments: headers, manifest, counts, time range,
/// symbols, compression ratio.
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

fn flag_names(f: u8) -> String {
    let mut v = Vec::new();
    for (bit, name) in [
        (flags::HAS_INDEX, "HasIndex"),
        (flags::COMPRESSED, "Compressed"),
        (flags::ENCRYPTED, "Encrypted"),
        (flags::SORTED, "Sorted"),
    ] {
        if f & bit != 0 {
            v.push(name);
        }
    }
    if f & !flags::KNOWN != 0 {
        v.push("unknown");
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

/// Runs `inspect`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let total = tape.file_bytes();
    let pb = progress(total, "inspect");
    let mut done = 0u64;
    let mut segs = Vec::new();
    let mut all_symbols = BTreeSet::new();
    let (mut events, mut bytes, mut by_type) = (0u64, 0u64, [0u64; 6]);
    let (mut tmin, mut tmax): (Option<i64>, Option<i64>) = (None, None);
    let (mut orig, mut comp) = (0u64, 0u64);
    // Listed segments that could not be read: the summary lacks their data.
    let mut failed = tape.unread().next().is_some();
    for s in &tape.segments {
        let f = match SegmentFile::open(&s.path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("floxlog: error: {e}");
                failed = true;
                continue;
            }
        };
        let scan: SegmentScan = if a.quick {
            let mut sc = SegmentScan {
                file_size: f.len(),
                ..SegmentScan::default()
            };
            match floxlog::core::Segment::parse(f.bytes()) {
                Ok(seg) => {
                    sc.header = Some(*seg.header());
                    sc.unfinished = floxlog::tape::source::header_is_unfinished(seg.header());
                }
                Err(e) => sc.header_error = Some(e),
            }
            sc
        } else {
            let base = done;
            scan_segment(f.bytes(), ReadOptions::default(), &mut |o| {
                pb.set_position(base + o)
            })
        };
        done += f.len();
        bytes += f.len();
        events += scan.events;
        for (t, n) in by_type.iter_mut().zip(scan.by_type) {
            *t += n;
        }
        if let Some(m) = scan.min_ts {
            tmin = Some(tmin.map_or(m, |t| t.min(m)));
        }
        if let Some(m) = scan.max_ts {
            tmax = Some(tmax.map_or(m, |t| t.max(m)));
        }
        orig += scan.block_original;
        comp += scan.block_compressed;
        all_symbols.extend(scan.symbols.iter().copied());
        let err = scan.header_error.or(scan.stream_error);
        if err.is_some() {
            failed = true;
        }
        let h = scan.header;
        segs.push(json!({
            "path": s.path,
            "series": s.series,
            "size_bytes": f.len(),
            "header": h.map(|h| json!({
                "flags": flag_names(h.flags),
                "exchange_id": h.exchange_id,
                "created_ns": h.created_ns,
                "first_event_ns": h.first_event_ns,
                "last_event_ns": h.last_event_ns,
                "event_count": h.event_count,
                "symbol_count": h.symbol_count,
                "index_offset": h.index_offset,
                "compression": if h.flags & flags::COMPRESSED != 0 { "lz4" } else { "none" },
                "placeholder": scan.unfinished,
            })),
            "error": err.map(|e| json!({"kind": e.kind.as_str(), "offset": e.offset, "what": e.what})),
            "events": (!a.quick).then_some(scan.events),
            "by_type": (!a.quick).then(|| (1..6).map(|i| (frame_type::name(i as u8).unwrap_or_default(), scan.by_type[i])).filter(|x| x.1 > 0).collect::<std::collections::BTreeMap<_, _>>()),
            "min_ts": scan.min_ts,
            "max_ts": scan.max_ts,
            "symbols": (!a.quick).then(|| scan.symbols.iter().copied().collect::<Vec<_>>()),
            "index": (!a.quick).then(|| json!({"entries": scan.index.entries, "interval": scan.index.interval, "offset": scan.index.offset, "error": scan.index.error.map(|e| e.kind.as_str())})),
            "blocks": scan.blocks,
            "compression_ratio": scan.compression_ratio(),
            "listed_in_manifest": s.listed.is_some(),
        }));
    }
    pb.finish_and_clear();
    let names = tape.symbol_names();
    let dirs: Vec<_> = tape
        .dirs
        .iter()
        .map(|d| {
            json!({
                "path": d.path,
                "manifest": d.manifest.as_ref().map(|m| json!({
                    "schema_version": m.schema_version, "format_version": m.format_version,
                    "exchange_id": m.exchange_id, "created_ns": m.created_ns,
                    "segments": m.segments.len(),
                    "events": m.segments.iter().map(|s| s.event_count).sum::<u64>(),
                })),
                "flox_manifest": d.flox_manifest.as_ref().map(|m| json!({
                    "segments": m.segments.len(), "total_events": m.total_events,
                    "first_timestamp_ns": m.first_timestamp_ns, "last_timestamp_ns": m.last_timestamp_ns,
                    "total_bytes": m.total_bytes, "symbols": m.symbols,
                })),
                "metadata": d.metadata.as_ref().map(|m| m.0.clone()),
            })
        })
        .collect();
    let ratio = (comp > 0).then(|| orig as f64 / comp as f64);
    if a.json {
        let v = json!({
            "segments": segs,
            "dirs": dirs,
            "findings": tape.findings,
            "total": {
                "segments": tape.segments.len(), "bytes": bytes, "events": (!a.quick).then_some(events),
                "by_type": (1..6).map(|i| (frame_type::name(i as u8).unwrap_or_default(), by_type[i])).filter(|x| x.1 > 0).collect::<std::collections::BTreeMap<_, _>>(),
                "min_ts": tmin, "max_ts": tmax, "symbols": all_symbols.iter().copied().collect::<Vec<_>>(),
                "compression_ratio": ratio,
            },
        });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(u8::from(failed));
    }
    for d in &tape.dirs {
        println!("tape {}", d.path.display());
        match &d.manifest {
            Some(m) => println!(
                "  manifest.json: schema {} format {}, exchange {}, created {}, {} segments",
                m.schema_version,
                m.format_version,
                m.exchange_id,
                ts(m.created_ns),
                m.segments.len()
            ),
            None => println!("  manifest.json: none (segments in file-name order)"),
        }
        if let Some(m) = &d.flox_manifest {
            println!(
                "  .manifest (flox): {} segments, {} events, {} symbols",
                m.segments.len(),
                m.total_events,
                m.symbols.len()
            );
        }
        if let Some(m) = &d.metadata {
            println!(
                "  metadata.json: exchange {}, {} named symbols",
                m.str_field("exchange").unwrap_or("?"),
                m.symbols().len()
            );
        }
    }
    for (s, seg) in tape.segments.iter().zip(&segs) {
        let h = &seg["header"];
        println!(
            "segment {} ({} bytes, {})",
            s.path.display(),
            seg["size_bytes"],
            s.series
        );
        if h.is_object() {
            println!(
                "  header: flags {}, compression {}, exchange {}, {} events claimed{}",
                h["flags"].as_str().unwrap_or(""),
                h["compression"].as_str().unwrap_or(""),
                h["exchange_id"],
                h["event_count"],
                if h["placeholder"].as_bool() == Some(true) {
                    " (placeholder: writer running or died)"
                } else {
                    ""
                }
            );
            println!("  created {}", ts(h["created_ns"].as_i64().unwrap_or(0)));
        }
        if let Some(e) = seg["error"].as_object() {
            println!(
                "  ERROR {} at byte {}: {}",
                e["kind"].as_str().unwrap_or(""),
                e["offset"],
                e["what"].as_str().unwrap_or("")
            );
        }
        if !a.quick {
            println!("  events: {} {}", seg["events"], seg["by_type"]);
            if let (Some(lo), Some(hi)) = (seg["min_ts"].as_i64(), seg["max_ts"].as_i64()) {
                println!("  time: {} .. {}", ts(lo), ts(hi));
            }
            println!("  index: {}", seg["index"]);
            if let Some(r) = seg["compression_ratio"].as_f64() {
                println!("  LZ4: {} blocks, ratio {r:.2}", seg["blocks"]);
            }
        }
    }
    for f in &tape.findings {
        println!("{}", f.line());
    }
    println!("total: {} segments, {bytes} bytes", tape.segments.len());
    if !a.quick {
        let types: Vec<String> = (1..6)
            .filter(|&i| by_type[i] > 0)
            .map(|i| {
                format!(
                    "{} {}",
                    frame_type::name(i as u8).unwrap_or_default(),
                    by_type[i]
                )
            })
            .collect();
        println!("  events: {events} ({})", types.join(", "));
        if let (Some(lo), Some(hi)) = (tmin, tmax) {
            println!(
                "  time: {} .. {} ({:.3} s)",
                ts(lo),
                ts(hi),
                (hi - lo) as f64 / 1e9
            );
        }
        let syms: Vec<String> = all_symbols
            .iter()
            .map(|id| match names.iter().find(|n| n.0 == *id) {
                Some((_, n)) => format!("{id} ({n})"),
                None => id.to_string(),
            })
            .collect();
        let shown = syms.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
        println!(
            "  symbols: {}{shown}{}",
            if syms.is_empty() { "none" } else { "" },
            if syms.len() > 20 {
                format!(", ... ({} in all)", syms.len())
            } else {
                String::new()
            }
        );
        if let Some(r) = ratio {
            println!("  compression ratio: {r:.2} (frame bytes / stored block bytes)");
        }
    }
    Ok(u8::from(failed))
}
