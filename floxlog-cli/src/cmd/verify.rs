//! `floxlog verify`: full integrity check.

use super::common::{progress, CmdResult, TapeArgs};
use floxlog::tape::verify::verify_tape_with;
use floxlog::tape::Severity;

/// Check every segment: CRCs, frames, blocks, index, header counts and time
/// range, the Sorted claim, and the manifests.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Check every segment of a tape in full.\n\n\
Checks: segment headers; every frame's CRC, version, flags and layout; LZ4 blocks; the index \
(CRC, entries pointing at frame or block headers with the right timestamps); header event_count, \
time range and symbol_count against the frames; the Sorted flag against the timestamps; \
manifest.json (sizes, counts, time ranges, missing and unlisted files) and flox's .manifest.\n\n\
Findings have a severity. Errors (damage, inconsistencies) make the exit code 1. Warnings \
(timestamps going backwards in a segment not flagged Sorted, a writer's stale placeholder header, \
a segment not listed in the manifest, a stale .manifest cache) do not, unless --strict.")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Warnings fail the check too.
    #[arg(long)]
    pub strict: bool,
    /// Skip frames of record types 1.0 does not define instead of reporting them.
    #[arg(long)]
    pub skip_unknown: bool,
    /// Threads reading segments (and ranges of large segments); 0: one per core.
    /// The report is the same for any number.
    #[arg(short = 'j', long, default_value_t = 0)]
    pub jobs: usize,
}

/// Runs `verify`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let total = tape.file_bytes();
    let pb = progress(total, "verify");
    let opts = super::common::read_options(a.skip_unknown);
    let t0 = std::time::Instant::now();
    let rep = verify_tape_with(&tape, opts, a.jobs, &mut |b| pb.set_position(b));
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let passed = rep.passed(a.strict);
    let errors = rep.count(Severity::Error);
    let warnings = rep.count(Severity::Warning);
    if a.json {
        let v = serde_json::json!({
            "ok": passed,
            "strict": a.strict,
            "errors": errors,
            "warnings": warnings,
            "events": rep.events,
            "bytes": rep.bytes,
            "segments": rep.segments,
            "findings": rep.findings,
        });
        outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for f in &rep.findings {
            outln!("{}", f.line());
        }
        outln!(
            "{}: {} segments, {} events, {} bytes checked in {:.2}s ({:.1} M events/s, {:.0} MB/s); {errors} errors, {warnings} warnings",
            if passed { "OK" } else { "FAILED" },
            rep.segments.len(),
            rep.events,
            rep.bytes,
            secs,
            rep.events as f64 / secs.max(1e-9) / 1e6,
            rep.bytes as f64 / secs.max(1e-9) / 1e6,
        );
    }
    Ok(u8::from(!passed))
}
