//! `floxlog recover`: repair segments whose writer died.

use super::common::CmdResult;
use floxlog::tape::check::{recover_tape, RecoverEvent, RecoverOptions, RecoverReport};
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
floxlog ignore that name), when the rewrite dropped or changed bytes after the header; a segment \
whose header alone was rewritten (and index appended), as an abandoned writer's, gets no backup. \
Given a tape directory, every segment is checked, and manifest.json, \
if there is one, is rebuilt afterwards.")]
pub struct Args {
    /// Segment files or tape directories.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Write the recovered segment here (one input segment only) instead of replacing it.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Do not keep the original as <name>.damaged (kept only when bytes after the header changed).
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

/// Runs `recover`.
pub fn run(a: Args) -> CmdResult {
    let opts = RecoverOptions {
        output: a.output.clone(),
        no_backup: a.no_backup,
        dry_run: a.dry_run,
        force: a.force,
        salvage: a.salvage,
    };
    let sum = recover_tape(&a.inputs, &opts, &mut |ev| match ev {
        RecoverEvent::Segment(r) => {
            if !a.json {
                outln!("{}", describe(r));
            }
        }
        RecoverEvent::Failed { error, .. } => eprintln!("floxlog: error: {error}"),
        RecoverEvent::RebuiltManifest(p) => {
            if !a.json {
                outln!("rebuilt {}", p.display());
            }
        }
        RecoverEvent::RemovedTemp(p) => {
            if !a.json {
                outln!(
                    "removed {} (a temporary file a killed writer left)",
                    p.display()
                );
            }
        }
    })?;
    if a.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&sum.reports).unwrap_or_default()
        );
    }
    Ok(sum.exit_code)
}
