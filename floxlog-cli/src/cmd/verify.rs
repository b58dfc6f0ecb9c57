//! `floxlog verify`: full integrity check.

use super::common::{progress, CmdResult, ErrorFormat, TapeArgs};
use floxlog::core::{Error, ReadOptions, Segment, UnknownTypes};
use floxlog::read::for_each_item;
use floxlog::tape::check::verify_tape_with;
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
    /// Check only each segment's index trailer (header, CRC, entries at frame
    /// or block headers; past damaged frames, the trailer by itself); one line
    /// per segment. Exit 1 if an index is bad.
    #[arg(long, conflicts_with_all = ["json", "strict", "skip_unknown"])]
    pub index_only: bool,
    /// With --index-only: `kit` prints just `index ok` or `index_error <kind>`
    /// per segment (the conformance kit's index protocol).
    #[arg(long, value_enum, default_value = "text", requires = "index_only")]
    pub error_format: ErrorFormat,
}

/// The index verdict of one segment: `Ok(None)` without an index,
/// `Ok(Some(entries))`, or the error (a segment header that does not
/// parse is reported as such: the index cannot be found without it).
///
/// The trailer is checked in full (header, CRC, entries inside the frame
/// area) and its entries proven to sit on frame or block headers. Where
/// the frames themselves are damaged, entries past the damage cannot be
/// proven, and the damage is the frames' fault, not the index's: the
/// trailer is then judged by itself.
fn check_index(data: &[u8]) -> Result<Option<usize>, Error> {
    let seg = Segment::parse(data)?;
    let Some(mut ix) = seg.index_unproven()? else {
        return Ok(None);
    };
    let walk = ReadOptions {
        verify_crc: false,
        unknown_types: UnknownTypes::Skip,
        tail: false,
    };
    if for_each_item(data, walk, |_| {}).is_ok() {
        ix.prove(&data[..seg.frames_end() as usize], seg.is_compressed())?;
    }
    Ok(Some(ix.len()))
}

fn index_only(a: &Args) -> CmdResult {
    let tape = a.tape.open()?;
    let kit = a.error_format == ErrorFormat::Kit;
    let mut bad = tape.unread_count > 0;
    for s in &tape.segments {
        let f = s.open()?;
        let r = check_index(f.bytes());
        bad |= r.is_err();
        match (r, kit) {
            (Ok(_), true) => outln!("index ok"),
            (Err(e), true) => outln!("index_error {}", e.kind),
            (Ok(None), false) => outln!("{}: no index", s.path.display()),
            (Ok(Some(n)), false) => outln!("{}: index ok ({n} entries)", s.path.display()),
            (Err(e), false) => outln!("{}: index_error {e}", s.path.display()),
        }
    }
    Ok(u8::from(bad))
}

/// Runs `verify`.
pub fn run(a: Args) -> CmdResult {
    if a.index_only {
        return index_only(&a);
    }
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
