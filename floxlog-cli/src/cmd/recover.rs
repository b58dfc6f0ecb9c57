//! `floxlog recover`: repair segments whose writer died.

use super::common::{open_segments, CmdResult};
use floxlog::tape::lock::lock_dirs;
use floxlog::tape::rebuild::build_manifests;
use floxlog::tape::recover::{recover_file, RecoverOptions, RecoverReport};
use floxlog::tape::{OpenOptions, Tape};
use std::path::PathBuf;

/// Rewrite damaged or unfinished segments into valid ones, keeping every
/// complete event.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Rewrite segments whose writer died (placeholder \
header, torn last frame or LZ4 block) or that are damaged, into valid segments: every complete \
event up to the first damage is kept byte for byte, and the counts, index and header are written \
anew. It says what it dropped (offset, bytes, why). Valid segments are left alone. With \
--salvage it goes on past damage: each damaged region is skipped and the read resumes at the next \
frame (or block) boundary from which the chain of frames checks out, to the end of the file or \
to an index entry (so a CRC-valid frame hidden inside another frame's payload is not taken for a \
boundary); every skipped byte range is listed.\n\n\
By default the file is replaced and the original kept beside it as `<name>.damaged` (flox and \
floxlog ignore that name). Given a tape directory, every segment is checked, and manifest.json, \
if there is one, is rebuilt afterwards.")]
pub struct Args {
    /// Segment files or tape directories.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the recovered segment here (one input segment only) instead of replacing it.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Do not keep the original as <name>.damaged.
    #[arg(long)]
    pub no_backup: bool,
    /// Only report what would be done.
    #[arg(long)]
    pub dry_run: bool,
    /// Rewrite valid segments too.
    #[arg(long)]
    pub force: bool,
    /// Go on past damage: skip each damaged region and keep the events
    /// after it, resuming at the next frame (block) boundary whose chain of
    /// frames checks out. Every skipped byte range is reported.
    #[arg(long)]
    pub salvage: bool,
    /// Print the reports as JSON.
    #[arg(long)]
    pub json: bool,
}

fn describe(r: &RecoverReport) -> String {
    let mut s = format!("{}: ", r.path.display());
    match r.action.as_str() {
        "already_valid" => s.push_str(&format!("valid ({} events), nothing to do", r.events_kept)),
        _ => {
            s.push_str(&format!(
                "{} {} complete events (the old header claimed {})",
                if r.action == "rewritten" {
                    "rewrote with"
                } else {
                    "would rewrite with"
                },
                r.events_kept,
                r.header_claimed
            ));
            match (r.dropped_at, &r.reason) {
                (Some(at), Some(why)) => s.push_str(&format!(
                    "; dropped {} bytes from byte {at} ({why}: {})",
                    r.dropped_bytes,
                    r.dropped_detail.as_deref().unwrap_or("")
                )),
                _ if r.skipped.is_empty() => s.push_str("; dropped nothing"),
                _ => {}
            }
            for k in &r.skipped {
                s.push_str(&format!(
                    "\n  skipped bytes {}..{} ({} bytes; {}; resumed by {})",
                    k.from,
                    k.to,
                    k.to - k.from,
                    k.reason,
                    k.resumed_by
                ));
            }
            for p in &r.problems {
                s.push_str(&format!("\n  was: {}", p.line().replace('\n', "\n  ")));
            }
            if let Some(b) = &r.backup {
                s.push_str(&format!("\n  original kept as {}", b.display()));
            }
            if let Some(o) = &r.output {
                if o != &r.path {
                    s.push_str(&format!("\n  written to {}", o.display()));
                }
            }
        }
    }
    s
}

/// Listing findings that mean manifest.json no longer describes the files.
const STALE_KINDS: [&str; 5] = [
    "manifest_mismatch",
    "unlisted_segment",
    "missing_segment",
    "manifest_duplicate",
    "manifest_bad_name",
];

/// Runs `recover`.
pub fn run(a: Args) -> CmdResult {
    let tape = open_segments(&a.inputs, a.output.is_some())?;
    let opts = RecoverOptions {
        output: a.output.clone(),
        no_backup: a.no_backup,
        dry_run: a.dry_run,
        force: a.force,
        salvage: a.salvage,
    };
    let mut reports = Vec::new();
    // The exit code of the worst failure (1 data, 3 I/O...).
    let mut code = 0u8;
    // A live writer's segments are not rewritten under it.
    let _locks = if a.dry_run {
        Vec::new()
    } else {
        lock_dirs(tape.segments.iter().map(|s| s.path.as_path()), "recovering")?
    };
    for s in &tape.segments {
        match recover_file(&s.path, &opts) {
            Ok(r) => {
                if !a.json {
                    println!("{}", describe(&r));
                }
                reports.push(r);
            }
            Err(e) => {
                eprintln!("floxlog: error: {e}");
                code = code.max(e.exit_code() as u8);
            }
        }
    }
    let changed = reports.iter().any(|r| r.action == "rewritten");
    // A manifest the listing found out of date is rebuilt too, even when no
    // segment needed rewriting now: that is what a recover killed after its
    // last rename, before its rebuild, leaves for the re-run to finish.
    // (The segments above were listed without the manifest; list each
    // directory again with it to compare.)
    let stale = |dir: &std::path::Path| {
        Tape::open(&[dir.to_path_buf()], OpenOptions::default()).is_ok_and(|t| {
            t.findings
                .iter()
                .any(|f| STALE_KINDS.contains(&f.kind.as_str()))
        })
    };
    if a.output.is_none() && !a.dry_run {
        for (i, d) in tape.dirs.iter().enumerate() {
            if !(changed || stale(&d.path))
                || !d.path.join(floxlog::tape::manifest::MANIFEST_FILE).exists()
            {
                continue;
            }
            let t = Tape::open(
                std::slice::from_ref(&d.path),
                OpenOptions {
                    ignore_manifest: true,
                },
            )?;
            let (m, _, _) = build_manifests(&t, 0, &mut |_| {})?;
            let mut m = m;
            if let Some(old) = &tape.dirs[i].manifest {
                m.created_ns = old.created_ns;
            } else if let Ok(Some(old)) = floxlog::tape::Manifest::load(&d.path) {
                m.created_ns = old.created_ns;
                m.exchange_id = old.exchange_id;
            }
            m.save(&d.path, true)?;
            if !a.json {
                println!(
                    "rebuilt {}",
                    d.path
                        .join(floxlog::tape::manifest::MANIFEST_FILE)
                        .display()
                );
            }
        }
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&reports).unwrap_or_default()
        );
    }
    Ok(code)
}
