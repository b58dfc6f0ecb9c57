//! Whole-tape operations from C, on the library code the `floxlog` CLI
//! runs: verify (findings through a callback), recover (reports through a
//! callback) and the inspect summary (a struct, and the JSON text of
//! `floxlog inspect --json`).

use crate::boundary::{check_out, in_ref, put};
use crate::error::floxlog_result;
use crate::handle::{free, get, handle, into_c, opaque};
use crate::tape::error::{floxlog_tape_error, path_in, tape_boundary, TapeFail, TapeResult};
use core::ffi::{c_char, c_void};
use floxlog::tape::check::verify_tape_with;
use floxlog::tape::check::{inspect_tape, InspectOptions, Inspection};
use floxlog::tape::check::{recover_tape, RecoverEvent, RecoverOptions, RecoverReport};
use floxlog::tape::{Finding, OpenOptions, Severity, Tape};
use floxlog_core::{ReadOptions, UnknownTypes};
use floxlog_result::*;
use std::ffi::CString;
use std::path::Path;

/// `floxlog_finding.severity`: informational.
pub const FLOXLOG_SEVERITY_INFO: u32 = 0;
/// `floxlog_finding.severity`: suspicious but readable (fails a strict
/// verify only).
pub const FLOXLOG_SEVERITY_WARNING: u32 = 1;
/// `floxlog_finding.severity`: an integrity failure.
pub const FLOXLOG_SEVERITY_ERROR: u32 = 2;

/// One finding of `floxlog_tape_verify`. The strings are NUL-terminated
/// UTF-8 owned by the library and valid during the callback only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_finding {
    /// `FLOXLOG_SEVERITY_*`.
    pub severity: u32,
    /// Non-zero when `offset` is meaningful.
    pub has_offset: u8,
    /// Byte offset in `file`.
    pub offset: u64,
    /// A stable name: a corpus error kind (`crc_mismatch`...) or a check
    /// (`header_event_count`, `manifest_mismatch`...).
    pub kind: *const c_char,
    /// The file concerned; NULL if none.
    pub file: *const c_char,
    /// What was found.
    pub message: *const c_char,
    /// What to do about it; NULL if nothing to say.
    pub hint: *const c_char,
    /// The whole finding as the CLI prints it (one or more lines).
    pub text: *const c_char,
}

/// Called once per finding, in order, with the `ctx` given. Must not
/// unwind.
pub type floxlog_finding_fn =
    Option<unsafe extern "C" fn(finding: *const floxlog_finding, ctx: *mut c_void)>;

/// Options of `floxlog_tape_verify`. All-zero is the default.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct floxlog_verify_options {
    /// Non-zero: warnings fail the check too.
    pub strict: u8,
    /// Non-zero: skip frames of types 1.0 does not define instead of
    /// reporting them.
    pub skip_unknown_types: u8,
    /// Non-zero: list directories instead of trusting `manifest.json`.
    pub ignore_manifest: u8,
}

/// What `floxlog_tape_verify` checked.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_verify_summary {
    /// Segments checked.
    pub segments: u64,
    /// Events read.
    pub events: u64,
    /// Bytes checked.
    pub bytes: u64,
    /// Findings of severity error.
    pub errors: u64,
    /// Findings of severity warning.
    pub warnings: u64,
    /// 1 when the check passed (no errors; no warnings either if strict).
    pub passed: u8,
}

/// Options of `floxlog_tape_recover`. All-zero is the default: rewrite the
/// segments that need it in place, keeping each original as
/// `<name>.damaged` when the rewrite dropped or changed bytes after the
/// header (one that only rewrote the header and appended an index keeps
/// none).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct floxlog_recover_options {
    /// Non-zero: report what would be done, change nothing.
    pub dry_run: u8,
    /// Non-zero: do not keep the originals.
    pub no_backup: u8,
    /// Non-zero: rewrite valid segments too.
    pub force: u8,
    /// Non-zero: go on past damage, skipping each damaged region (every
    /// skipped range is reported) instead of dropping the rest of the
    /// segment.
    pub salvage: u8,
}

/// One outcome of `floxlog_tape_recover`. Strings are NUL-terminated UTF-8
/// owned by the library, valid during the callback only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_recover_report {
    /// `"rewritten"`, `"would_rewrite"` (dry run), `"already_valid"`,
    /// `"failed"` (see `error`), `"rebuilt_manifest"` (`file` is the
    /// manifest) or `"removed_temp"` (`file` is a hidden temporary file a
    /// killed writer left, such as `.journal-first-0.tmp`, now removed).
    pub action: *const c_char,
    /// The segment (or manifest, or temporary file).
    pub file: *const c_char,
    /// Complete events kept.
    pub events_kept: u64,
    /// Events the old header claimed.
    pub header_claimed: u32,
    /// Non-zero when the tail from `dropped_at` was dropped.
    pub has_dropped: u8,
    /// Where the dropped tail began.
    pub dropped_at: u64,
    /// Bytes dropped (the tail, plus every range salvage skipped).
    pub dropped_bytes: u64,
    /// Byte ranges salvage skipped (listed in `text`).
    pub skipped_ranges: u64,
    /// Why the tail was dropped: the corpus error kind, then `: ` and what
    /// failed (e.g. `truncated: data ends inside a frame payload ...`);
    /// NULL if nothing was.
    pub reason: *const c_char,
    /// Where the original was kept; NULL if not (`no_backup`, or nothing
    /// after the header changed).
    pub backup: *const c_char,
    /// For `"failed"`: what failed; NULL otherwise.
    pub error: *const floxlog_tape_error,
    /// The outcome as JSON (the object `floxlog recover --json` prints for
    /// it; `null` for failures and rebuilt manifests).
    pub json: *const c_char,
}

/// Called once per outcome, in order. Must not unwind.
pub type floxlog_recover_fn =
    Option<unsafe extern "C" fn(report: *const floxlog_recover_report, ctx: *mut c_void)>;

/// What `floxlog_tape_recover` did in all.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_recover_summary {
    /// Segment files found.
    pub segments: u64,
    /// Segments rewritten.
    pub rewritten: u64,
    /// Segments a dry run would rewrite.
    pub would_rewrite: u64,
    /// Segments left alone, valid.
    pub already_valid: u64,
    /// Segments that could not be recovered.
    pub failed: u64,
    /// Complete events kept over every segment.
    pub events_kept: u64,
    /// Bytes dropped over every segment.
    pub bytes_dropped: u64,
    /// `manifest.json` files rebuilt.
    pub manifests_rebuilt: u64,
}

/// Options of `floxlog_tape_inspect`. All-zero is the default.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct floxlog_inspect_options {
    /// Non-zero: headers and manifests only; the frames are not read
    /// (events, types, time range and symbols stay unknown).
    pub quick: u8,
    /// Non-zero: list directories instead of trusting `manifest.json`.
    pub ignore_manifest: u8,
}

/// The totals `floxlog inspect` prints.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct floxlog_tape_summary {
    /// Segment files of the tape.
    pub segments: u64,
    /// Bytes of the segments read.
    pub bytes: u64,
    /// Events read (0 when quick).
    pub events: u64,
    /// Events per `FLOXLOG_EVENT_*` (index 1..5; index 0 unused).
    pub events_by_type: [u64; 6],
    /// Earliest exchange timestamp (with `has_time_range`).
    pub min_ts_ns: i64,
    /// Latest exchange timestamp (with `has_time_range`).
    pub max_ts_ns: i64,
    /// Distinct symbol ids (see `floxlog_inspection_symbols`).
    pub symbols: u64,
    /// Frame bytes / stored LZ4 block bytes (with `has_compression_ratio`).
    pub compression_ratio: f64,
    /// Non-zero when the time range is known (some event was read).
    pub has_time_range: u8,
    /// Non-zero when some segment is compressed.
    pub has_compression_ratio: u8,
    /// Non-zero when the summary lacks data or found damage: a listed
    /// segment missing or unopenable, a bad header or frame (the CLI then
    /// exits 1).
    pub failed: u8,
    /// Non-zero when made with `quick`.
    pub quick: u8,
}

/// Opaque inspection result (see `floxlog_tape_inspect`).
pub struct floxlog_inspection {
    _private: [u8; 0],
}

const INSPECTION_MAGIC: u64 = 0x5053_4e49_4150_4c46; // "FLPAINSP"

#[repr(C)]
pub(crate) struct InspectionHandle {
    magic: u64,
    summary: floxlog_tape_summary,
    symbols: Vec<u32>,
    /// `floxlog inspect --json`'s text, NUL-terminated.
    json: CString,
}

opaque!(floxlog_inspection => InspectionHandle, magic INSPECTION_MAGIC, null "i");

/// A C string of `s` (an interior NUL, which no path or message of ours
/// holds, becomes U+FFFD).
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{fffd}")).unwrap_or_default()
}

fn opt_c_string(s: Option<&str>) -> Option<CString> {
    s.map(c_string)
}

fn ptr_or_null(s: &Option<CString>) -> *const c_char {
    s.as_ref().map_or(core::ptr::null(), |c| c.as_ptr())
}

fn open_tape(path: &Path, ignore_manifest: bool) -> TapeResult<Tape> {
    Ok(Tape::open(
        &[path.to_path_buf()],
        OpenOptions { ignore_manifest },
    )?)
}

/// Hands `f` to the caller's callback.
fn deliver_finding(cb: floxlog_finding_fn, ctx: *mut c_void, f: &Finding) {
    let Some(cb) = cb else { return };
    let f = &f.localized(&crate::words::CWords);
    let kind = c_string(f.kind.as_str());
    let file = opt_c_string(f.path.as_ref().map(|p| p.to_string_lossy()).as_deref());
    let message = c_string(&f.message);
    let hint = opt_c_string(f.hint.as_ref().map(|h| h.to_string()).as_deref());
    let text = c_string(&f.line());
    let c = floxlog_finding {
        severity: match f.severity {
            Severity::Info => FLOXLOG_SEVERITY_INFO,
            Severity::Warning => FLOXLOG_SEVERITY_WARNING,
            Severity::Error => FLOXLOG_SEVERITY_ERROR,
        },
        has_offset: u8::from(f.offset.is_some()),
        offset: f.offset.unwrap_or(0),
        kind: kind.as_ptr(),
        file: ptr_or_null(&file),
        message: message.as_ptr(),
        hint: ptr_or_null(&hint),
        text: text.as_ptr(),
    };
    // SAFETY: the caller's callback, given this purpose; `c` and its
    // strings live until it returns.
    unsafe { cb(&c, ctx) };
}

/// Checks every segment of the tape at `path` (a directory or a segment
/// file) in full, as `floxlog verify` does: headers, every frame's CRC and
/// layout, LZ4 blocks, the index, header counts and time range against the
/// frames, the Sorted claim, and the manifests. Each finding goes to
/// `on_finding` (may be NULL) as it is found, in order.
///
/// Returns `FLOXLOG_OK` when the check passed, `FLOXLOG_VERIFY_FAILED`
/// (with the first error in `*err`) when it found errors (or warnings, if
/// strict); `*summary` (may be NULL) is filled in both cases. Other codes
/// mean the tape could not be listed at all.
///
/// # Safety
/// `path` a NUL-terminated path; `opts` NULL or valid; `on_finding` NULL or
/// a function; `summary` NULL or writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_verify(
    path: *const c_char,
    opts: *const floxlog_verify_options,
    on_finding: floxlog_finding_fn,
    ctx: *mut c_void,
    summary: *mut floxlog_verify_summary,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: the caller's promises; pointers are checked.
        let path = unsafe { path_in(path, "path is NULL or empty") }?;
        let o = if opts.is_null() {
            floxlog_verify_options::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(opts, "opts") }?
        };
        if !summary.is_null() {
            check_out(summary, "summary")?;
        }
        let tape = open_tape(&path, o.ignore_manifest != 0)?;
        let ro = ReadOptions {
            verify_crc: true,
            unknown_types: if o.skip_unknown_types != 0 {
                UnknownTypes::Skip
            } else {
                UnknownTypes::Reject
            },
            ..ReadOptions::default()
        };
        // 0: one thread per core; the report is the same for any number.
        let rep = verify_tape_with(&tape, ro, 0, &mut |_| {});
        for f in &rep.findings {
            deliver_finding(on_finding, ctx, f);
        }
        let strict = o.strict != 0;
        let passed = rep.passed(strict);
        if !summary.is_null() {
            let s = floxlog_verify_summary {
                segments: rep.segments.len() as u64,
                events: rep.events,
                bytes: rep.bytes,
                errors: rep.count(Severity::Error) as u64,
                warnings: rep.count(Severity::Warning) as u64,
                passed: u8::from(passed),
            };
            // SAFETY: checked above.
            unsafe { put(summary, s) };
        }
        if passed {
            return Ok(FLOXLOG_OK);
        }
        let worst = rep.worst(strict);
        let mut e = floxlog::tape::TapeError::input(
            worst.and_then(|f| f.path.as_deref()),
            match worst {
                Some(f) => format!(
                    "verify failed ({} errors, {} warnings); first: {}: {}",
                    rep.count(Severity::Error),
                    rep.count(Severity::Warning),
                    f.kind,
                    f.message
                ),
                None => "verify failed".to_string(),
            },
        );
        e.offset = worst.and_then(|f| f.offset);
        // The code is VERIFY_FAILED; the text names the first finding.
        Err(TapeFail::Coded(FLOXLOG_VERIFY_FAILED, Box::new(e)))
    })
}

/// Hands a recover outcome to the caller's callback.
fn deliver_recover(cb: floxlog_recover_fn, ctx: *mut c_void, ev: &RecoverEvent<'_>) {
    let Some(cb) = cb else { return };
    let none = core::ptr::null();
    let mut error_c = None;
    let (action, file, rep, json): (&str, &Path, Option<&RecoverReport>, String) = match ev {
        RecoverEvent::Segment(r) => (
            r.action.as_str(),
            &r.path,
            Some(r),
            serde_json::to_string(r).unwrap_or_else(|_| "null".into()),
        ),
        RecoverEvent::Failed { path, error } => {
            let f = TapeFail::from((*error).clone());
            let mut c = Box::new(crate::tape::error::zeroed_error());
            f.fill(&mut c);
            error_c = Some(c);
            ("failed", path, None, "null".into())
        }
        RecoverEvent::RebuiltManifest(p) => ("rebuilt_manifest", p, None, "null".into()),
        RecoverEvent::RemovedTemp(p) => ("removed_temp", p, None, "null".into()),
    };
    let action = c_string(action);
    let file = c_string(&file.to_string_lossy());
    let reason = opt_c_string(rep.and_then(|r| r.reason.as_deref()));
    let backup = opt_c_string(
        rep.and_then(|r| r.backup.as_ref())
            .map(|b| b.to_string_lossy())
            .as_deref(),
    );
    let json = c_string(&json);
    let c = floxlog_recover_report {
        action: action.as_ptr(),
        file: file.as_ptr(),
        events_kept: rep.map_or(0, |r| r.events_kept),
        header_claimed: rep.map_or(0, |r| r.header_claimed),
        has_dropped: u8::from(rep.is_some_and(|r| r.dropped_at.is_some())),
        dropped_at: rep.and_then(|r| r.dropped_at).unwrap_or(0),
        dropped_bytes: rep.map_or(0, |r| {
            r.dropped_bytes + r.skipped.iter().map(|k| k.to - k.from).sum::<u64>()
        }),
        skipped_ranges: rep.map_or(0, |r| r.skipped.len() as u64),
        reason: ptr_or_null(&reason),
        backup: ptr_or_null(&backup),
        error: error_c.as_deref().map_or(none, |e| e as *const _),
        json: json.as_ptr(),
    };
    // SAFETY: the caller's callback; `c` and what it points at live until
    // it returns.
    unsafe { cb(&c, ctx) };
}

/// Repairs the segments of the tape at `path` (a directory or a segment
/// file) whose writer died or that are damaged:
/// takes the tape lock (`FLOXLOG_TAPE_LOCKED` while a writer runs), keeps
/// every complete event up to the damage (with `salvage`, past it too),
/// rewrites counts, index and header crash-atomically, keeps the original
/// as `<name>.damaged` unless `no_backup` or only the header changed (and
/// an index was appended), leaves valid segments alone, and
/// rebuilds `manifest.json` when it no longer matches. Each outcome goes to
/// `on_report` (may be NULL) as it happens. (A killed writer's LZ4 segment
/// that ends on a whole block is valid as it is, its header counting those
/// blocks, and is left alone without an index: it cannot be told from an
/// LZ4 segment written without one; reindexing adds an index.)
///
/// Returns `FLOXLOG_OK` when every segment is valid now (or, dry run, would
/// be); when some segment could not be recovered, the code of the first
/// such failure (details in `*err` and in its report), the others still
/// done. `*summary` (may be NULL) is filled whenever the tape could be
/// listed and locked.
///
/// # Safety
/// `path` a NUL-terminated path; `opts` NULL or valid; `on_report` NULL or
/// a function; `summary` NULL or writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_recover(
    path: *const c_char,
    opts: *const floxlog_recover_options,
    on_report: floxlog_recover_fn,
    ctx: *mut c_void,
    summary: *mut floxlog_recover_summary,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: the caller's promises; pointers are checked.
        let path = unsafe { path_in(path, "path is NULL or empty") }?;
        let o = if opts.is_null() {
            floxlog_recover_options::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(opts, "opts") }?
        };
        if !summary.is_null() {
            check_out(summary, "summary")?;
        }
        let ro = RecoverOptions {
            output: None,
            no_backup: o.no_backup != 0,
            dry_run: o.dry_run != 0,
            force: o.force != 0,
            salvage: o.salvage != 0,
        };
        let mut first_failure: Option<floxlog::tape::TapeError> = None;
        let sum = recover_tape(&[path], &ro, &mut |ev| {
            if let RecoverEvent::Failed { error, .. } = &ev {
                first_failure.get_or_insert_with(|| (*error).clone());
            }
            deliver_recover(on_report, ctx, &ev);
        })?;
        if !summary.is_null() {
            let s = floxlog_recover_summary {
                segments: sum.segments as u64,
                rewritten: sum.rewritten as u64,
                would_rewrite: sum.would_rewrite as u64,
                already_valid: sum.already_valid as u64,
                failed: sum.failed as u64,
                events_kept: sum.events_kept,
                bytes_dropped: sum.bytes_dropped,
                manifests_rebuilt: sum.manifests_rebuilt as u64,
            };
            // SAFETY: checked above.
            unsafe { put(summary, s) };
        }
        match first_failure {
            Some(e) => Err(e.into()),
            None => Ok(FLOXLOG_OK),
        }
    })
}

fn summary_of(i: &Inspection) -> floxlog_tape_summary {
    let t = &i.total;
    floxlog_tape_summary {
        segments: t.segments,
        bytes: t.bytes,
        events: t.events.unwrap_or(0),
        events_by_type: t.by_type,
        min_ts_ns: t.min_ts.unwrap_or(0),
        max_ts_ns: t.max_ts.unwrap_or(0),
        symbols: t.symbols.len() as u64,
        compression_ratio: t.compression_ratio.unwrap_or(0.0),
        has_time_range: u8::from(t.min_ts.is_some() && t.max_ts.is_some()),
        has_compression_ratio: u8::from(t.compression_ratio.is_some()),
        failed: u8::from(i.failed),
        quick: u8::from(i.quick),
    }
}

/// Summarises the tape at `path` (a directory or a segment file) as
/// `floxlog inspect` does and sets `*out` to the result: totals through
/// `floxlog_inspection_summary`, the distinct symbol ids through
/// `floxlog_inspection_symbols`, and the exact text `floxlog inspect
/// --json` prints through `floxlog_inspection_json`. Damage does not fail
/// the call (the summary's `failed` says so, and the JSON names it); only
/// a tape that cannot be listed does.
///
/// # Safety
/// `path` a NUL-terminated path; `opts` NULL or valid; `out` writable;
/// `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_inspect(
    path: *const c_char,
    opts: *const floxlog_inspect_options,
    out: *mut *mut floxlog_inspection,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        check_out(out, "out")?;
        // SAFETY: the caller's promises; pointers are checked.
        let path = unsafe { path_in(path, "path is NULL or empty") }?;
        let o = if opts.is_null() {
            floxlog_inspect_options::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(opts, "opts") }?
        };
        let tape = open_tape(&path, o.ignore_manifest != 0)?;
        let insp = inspect_tape(
            &tape,
            InspectOptions {
                quick: o.quick != 0,
            },
            &mut |_| {},
        );
        let h = InspectionHandle {
            magic: INSPECTION_MAGIC,
            summary: summary_of(&insp),
            symbols: insp.total.symbols.clone(),
            json: c_string(&insp.to_json_text()),
        };
        // SAFETY: checked above.
        unsafe { put(out, into_c::<floxlog_inspection>(h)) };
        Ok(FLOXLOG_OK)
    })
}

/// Sets `*summary` to the inspection's totals.
///
/// # Safety
/// `i` a live handle; `summary` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_inspection_summary(
    i: *mut floxlog_inspection,
    summary: *mut floxlog_tape_summary,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe { get(i, summary, "summary", |h| h.summary) }
}

/// Sets `*json` to the text `floxlog inspect --json` prints (without its
/// final newline), NUL-terminated, and `*len` (may be NULL) to its length.
/// The text belongs to the handle: valid until `floxlog_inspection_free`.
///
/// # Safety
/// `i` a live handle; `json` writable; `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_inspection_json(
    i: *mut floxlog_inspection,
    json: *mut *const c_char,
    len: *mut usize,
) -> floxlog_result {
    // SAFETY: forwarded caller promises.
    unsafe {
        get(i, json, "json", |h| {
            crate::boundary::put_if_usable(len, h.json.as_bytes().len());
            h.json.as_ptr()
        })
    }
}

/// Sets `*ids` to the distinct symbol ids of the tape, ascending, and
/// `*count` to how many (0, with `*ids` non-NULL, after a quick
/// inspection). The array belongs to the handle.
///
/// # Safety
/// `i` a live handle; `ids` and `count` writable.
#[no_mangle]
pub unsafe extern "C" fn floxlog_inspection_symbols(
    i: *mut floxlog_inspection,
    ids: *mut *const u32,
    count: *mut usize,
) -> floxlog_result {
    crate::boundary::boundary(core::ptr::null_mut(), || {
        check_out(ids, "ids")?;
        check_out(count, "count")?;
        // SAFETY: forwarded caller promise.
        let h = unsafe { handle(i) }?;
        // SAFETY: both checked above.
        unsafe {
            put(ids, h.symbols.as_ptr());
            put(count, h.symbols.len());
        }
        Ok(FLOXLOG_OK)
    })
}

/// Releases an inspection. NULL is a no-op.
///
/// # Safety
/// `i` NULL or a live handle, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn floxlog_inspection_free(i: *mut floxlog_inspection) {
    // SAFETY: forwarded caller promise.
    unsafe { free(i) }
}
