//! `floxlog_tape_diff`: two tapes compared from C, on the library code
//! `floxlog diff` runs (`floxlog::tape::diff`).

use crate::boundary::{check_out, in_ref, put};
use crate::error::floxlog_result;
use crate::tape::error::{floxlog_tape_error, path_in, tape_boundary, TapeFail};
use core::ffi::c_char;
use floxlog::tape::diff::{diff_tapes, DiffOptions, DiffOutcome, DiffReport, EventAt, TypeCounts};
use floxlog::tape::{OpenOptions, Order, TapeError};
use floxlog_core::{ErrorKind, ReadOptions, UnknownTypes};
use floxlog_result::*;

/// Size of `floxlog_diff_result.fields` (with its NUL).
pub const FLOXLOG_DIFF_FIELDS_LEN: usize = 512;

/// Options of `floxlog_tape_diff`. All-zero is the default: events in file
/// order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct floxlog_diff_options {
    /// Non-zero: compare in time order (merged) instead of file order.
    pub time_order: u8,
    /// Non-zero: compare the segment files byte for byte.
    pub bytes: u8,
    /// Non-zero: a torn tail (live or crashed writer) is damage too.
    pub strict: u8,
    /// Non-zero: skip frames of types 1.0 does not define.
    pub skip_unknown_types: u8,
    /// Non-zero: list directories instead of trusting `manifest.json`.
    pub ignore_manifest: u8,
}

/// Where the first differing event (or byte) is in one tape.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_diff_position {
    /// 0: this tape ended there (no event); 1: the fields below are set.
    pub present: u8,
    /// Frame type of the event (0 in a byte comparison).
    pub frame_type: u8,
    /// Segment number in the tape's listing.
    pub segment: u64,
    /// Byte offset of the frame (LZ4: of its block) or the first differing byte.
    pub offset: u64,
    /// LZ4: the frame's offset in the decompressed block; else `UINT32_MAX`.
    pub in_block: u32,
}

/// Events per record type of one tape (`by_type[t]`: frame type `t`, 1..5).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct floxlog_diff_counts {
    /// All events.
    pub events: u64,
    /// Per frame type (index 0 unused).
    pub by_type: [u64; 6],
}

/// What `floxlog_tape_diff` found.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct floxlog_diff_result {
    /// 1 when the tapes differ (the fields below say where).
    pub different: u8,
    /// 1 when a tape is damaged (the code and `*err` say where).
    pub damaged: u8,
    /// Leading events (bytes, for a byte comparison) that compared equal;
    /// the first difference's event number.
    pub equal: u64,
    /// The first difference in tape A.
    pub a: floxlog_diff_position,
    /// The first difference in tape B.
    pub b: floxlog_diff_position,
    /// Counts of tape A (to its end; zero for a byte comparison).
    pub counts_a: floxlog_diff_counts,
    /// Counts of tape B.
    pub counts_b: floxlog_diff_counts,
    /// The differing fields, `"price_raw: 100 vs 101"` joined by `"; "`
    /// (or why the bytes differ), NUL-terminated UTF-8, cut to fit.
    pub fields: [c_char; FLOXLOG_DIFF_FIELDS_LEN],
}

fn counts(c: &TypeCounts) -> floxlog_diff_counts {
    floxlog_diff_counts {
        events: c.events,
        by_type: [
            0,
            c.trade,
            c.book_snapshot,
            c.book_delta,
            c.option_quote,
            c.pool_state,
        ],
    }
}

fn position(e: &Option<EventAt>) -> floxlog_diff_position {
    match e {
        None => floxlog_diff_position::default(),
        Some(e) => floxlog_diff_position {
            present: 1,
            frame_type: floxlog_core::consts::frame_type::from_name(e.type_name).unwrap_or(0),
            segment: e.segment as u64,
            offset: e.offset,
            in_block: e.in_block.unwrap_or(u32::MAX),
        },
    }
}

fn result_of(rep: &DiffReport) -> floxlog_diff_result {
    let mut r = floxlog_diff_result {
        different: u8::from(rep.first.is_some() || rep.bytes.is_some()),
        damaged: u8::from(!rep.damage.is_empty()),
        equal: rep.equal,
        a: floxlog_diff_position::default(),
        b: floxlog_diff_position::default(),
        counts_a: counts(&rep.counts_a),
        counts_b: counts(&rep.counts_b),
        fields: [0; FLOXLOG_DIFF_FIELDS_LEN],
    };
    let mut text = String::new();
    if let Some(f) = &rep.first {
        r.a = position(&f.a);
        r.b = position(&f.b);
        let parts: Vec<String> = f.fields.iter().map(ToString::to_string).collect();
        text = match (&f.a, &f.b) {
            (None, _) => "tape a ended".to_string(),
            (_, None) => "tape b ended".to_string(),
            _ => parts.join("; "),
        };
    }
    if let Some(b) = &rep.bytes {
        let at = |present: bool| floxlog_diff_position {
            present: u8::from(present),
            segment: b.segment as u64,
            offset: b.offset,
            in_block: u32::MAX,
            frame_type: 0,
        };
        r.a = at(b.file_a.is_some());
        r.b = at(b.file_b.is_some());
        text = b.reason.to_string();
    }
    // Cut at a character boundary, leaving room for the NUL.
    let mut n = text.len().min(FLOXLOG_DIFF_FIELDS_LEN - 1);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    for (d, s) in r.fields.iter_mut().zip(&text.as_bytes()[..n]) {
        *d = *s as c_char;
    }
    r
}

/// Compares the tapes at `path_a` and `path_b` (directories or segment
/// files, either layout, any compression) as `floxlog diff` does: event by
/// event by their decoded fields, in file order (or time order), or byte
/// for byte. `*out` (may be NULL) is filled whatever the outcome.
///
/// Returns `FLOXLOG_OK` when identical, `FLOXLOG_DIFFERENT` when they
/// differ, and when a tape is damaged the data-error code of the first
/// damage (e.g. `FLOXLOG_CRC_MISMATCH`) with its file and offset in
/// `*err`. Other codes mean a tape could not be listed or opened.
///
/// # Safety
/// `path_a`, `path_b` NUL-terminated paths; `opts` NULL or valid; `out`
/// NULL or writable; `err` may be NULL.
#[no_mangle]
pub unsafe extern "C" fn floxlog_tape_diff(
    path_a: *const c_char,
    path_b: *const c_char,
    opts: *const floxlog_diff_options,
    out: *mut floxlog_diff_result,
    err: *mut floxlog_tape_error,
) -> floxlog_result {
    tape_boundary(err, || {
        // SAFETY: the caller's promises; pointers are checked.
        let a = unsafe { path_in(path_a, "path_a is NULL or empty") }?;
        // SAFETY: as above.
        let b = unsafe { path_in(path_b, "path_b is NULL or empty") }?;
        let o = if opts.is_null() {
            floxlog_diff_options::default()
        } else {
            // SAFETY: non-NULL; the caller's promise.
            *unsafe { in_ref(opts, "opts") }?
        };
        if !out.is_null() {
            check_out(out, "out")?;
        }
        let d = DiffOptions {
            order: if o.time_order != 0 {
                Order::Time
            } else {
                Order::File
            },
            bytes: o.bytes != 0,
            strict: o.strict != 0,
            read: ReadOptions {
                unknown_types: if o.skip_unknown_types != 0 {
                    UnknownTypes::Skip
                } else {
                    UnknownTypes::Reject
                },
                ..ReadOptions::default()
            },
            open: OpenOptions {
                ignore_manifest: o.ignore_manifest != 0,
            },
        };
        let rep = diff_tapes(&[a], &[b], &d)?;
        if !out.is_null() {
            // SAFETY: checked above.
            unsafe { put(out, result_of(&rep)) };
        }
        match rep.outcome {
            DiffOutcome::Identical => Ok(FLOXLOG_OK),
            DiffOutcome::Different => Ok(FLOXLOG_DIFFERENT),
            DiffOutcome::Damaged => {
                let Some(dm) = rep.damage.first() else {
                    return Ok(FLOXLOG_INTERNAL);
                };
                let code = ErrorKind::from_name(&dm.kind)
                    .map_or(FLOXLOG_IO_ERROR, floxlog_result::from_kind);
                let e = TapeError::input(
                    Some(&dm.file),
                    format!("tape {} is damaged: {}: {}", dm.tape, dm.kind, dm.message),
                )
                .at(dm.offset);
                Err(TapeFail::Coded(code, Box::new(e)))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn corpus(p: &str) -> CString {
        let root = std::env::var_os("FLOXLOG_CONFORMANCE_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
            });
        CString::new(root.join(p).to_str().unwrap()).unwrap()
    }

    fn diff(
        a: &CString,
        b: &CString,
        o: floxlog_diff_options,
    ) -> (floxlog_result, floxlog_diff_result, floxlog_tape_error) {
        let mut out = core::mem::MaybeUninit::<floxlog_diff_result>::zeroed();
        let mut err = crate::tape::error::zeroed_error();
        // SAFETY: valid strings and out-pointers.
        let rc =
            unsafe { floxlog_tape_diff(a.as_ptr(), b.as_ptr(), &o, out.as_mut_ptr(), &mut err) };
        // SAFETY: zeroed is a valid value of this plain struct.
        (rc, unsafe { out.assume_init() }, err)
    }

    #[test]
    fn identical_different_and_damaged() {
        let t = corpus("cases/trades-10k/segments");
        let (rc, r, _) = diff(&t, &t, floxlog_diff_options::default());
        assert_eq!(rc, FLOXLOG_OK);
        assert_eq!(
            (r.different, r.equal, r.counts_a.by_type[1]),
            (0, 10_000, 10_000)
        );

        let lz = corpus("cases/lz4-trades-5k/segments");
        let (rc, r, _) = diff(&t, &lz, floxlog_diff_options::default());
        assert_eq!(rc, FLOXLOG_DIFFERENT);
        assert_eq!((r.different, r.a.present, r.a.frame_type), (1, 1, 1));
        assert!(r.fields[0] != 0);

        let bad = corpus("corrupt/crc-mismatch/segment.floxlog");
        let (rc, r, e) = diff(&bad, &t, floxlog_diff_options::default());
        assert_eq!(rc, FLOXLOG_CRC_MISMATCH);
        assert_eq!((r.damaged, e.has_file, e.has_offset), (1, 1, 1));

        let (rc, _, _) = diff(
            &t,
            &t,
            floxlog_diff_options {
                bytes: 1,
                ..Default::default()
            },
        );
        assert_eq!(rc, FLOXLOG_OK);
        // SAFETY: NULL paths are reported, not dereferenced.
        let rc = unsafe {
            floxlog_tape_diff(
                core::ptr::null(),
                t.as_ptr(),
                core::ptr::null(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            )
        };
        assert_eq!(rc, FLOXLOG_NULL_POINTER);
    }
}
