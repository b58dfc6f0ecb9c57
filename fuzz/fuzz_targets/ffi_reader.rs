//! The C ABI reader over arbitrary bytes, called exactly as C would: size
//! the scratch, open, read with a small level buffer (books that do not fit
//! are held back and must come out once given room), in single and batch
//! calls, then the index functions and seek. Every call must return a code,
//! never crash or touch memory outside what it was given.
#![no_main]

use core::ptr::{null, null_mut};
use floxlog_ffi::*;
use libfuzzer_sys::fuzz_target;
use std::mem::MaybeUninit;

fuzz_target!(|input: &[u8]| {
    let Some((&knobs, data)) = input.split_first() else {
        return;
    };
    let lax = knobs & 1 == 1;
    let mut err = MaybeUninit::<floxlog_error>::zeroed();
    let mut needed = 0usize;
    // SAFETY (all calls below): pointers are to live locals or buffers of
    // the lengths passed, as the header's contracts require.
    unsafe {
        if floxlog_segment_scratch_len(data.as_ptr(), data.len(), &mut needed, err.as_mut_ptr())
            != floxlog_result::FLOXLOG_OK
        {
            return;
        }
        let mut scratch = vec![0xA5u8; needed.min(1 << 20)];
        let mut opts = MaybeUninit::<floxlog_reader_options>::zeroed();
        floxlog_reader_options_default(opts.as_mut_ptr());
        let mut opts = opts.assume_init();
        if lax {
            opts.verify_crc = 0;
            opts.skip_unknown_types = 1;
        }
        let mut r: *mut floxlog_reader = null_mut();
        let rc = floxlog_reader_new(
            data.as_ptr(),
            data.len(),
            &opts,
            scratch.as_mut_ptr(),
            scratch.len(),
            &mut r,
            err.as_mut_ptr(),
        );
        if rc != floxlog_result::FLOXLOG_OK {
            assert!(r.is_null());
            return;
        }
        let mut levels = vec![MaybeUninit::<floxlog_level>::uninit(); 64];
        let mut events = vec![MaybeUninit::<floxlog_event>::uninit(); 8];
        let mut ev = MaybeUninit::<floxlog_event>::uninit();
        let mut small = 2usize; // level room, grown when a book is held back
        for step in 0..100_000 {
            let rc = if step % 3 == 2 {
                let mut n = 0usize;
                let rc = floxlog_reader_next_batch(
                    r,
                    events.as_mut_ptr().cast(),
                    events.len(),
                    levels.as_mut_ptr().cast(),
                    small,
                    &mut n,
                    err.as_mut_ptr(),
                );
                assert!(n <= events.len());
                rc
            } else {
                floxlog_reader_next(
                    r,
                    ev.as_mut_ptr(),
                    levels.as_mut_ptr().cast(),
                    small,
                    err.as_mut_ptr(),
                )
            };
            match rc {
                floxlog_result::FLOXLOG_OK => {}
                floxlog_result::FLOXLOG_BUFFER_TOO_SMALL if small < levels.len() => {
                    small = levels.len()
                }
                _ => break,
            }
        }
        let mut ih = MaybeUninit::<floxlog_index_header>::uninit();
        let mut n = 0usize;
        if floxlog_reader_index(r, ih.as_mut_ptr(), &mut n, err.as_mut_ptr())
            == floxlog_result::FLOXLOG_OK
        {
            let mut e = MaybeUninit::<floxlog_index_entry>::uninit();
            for i in [0, n / 2, n.saturating_sub(1), n, usize::MAX] {
                floxlog_reader_index_entry(r, i, e.as_mut_ptr(), err.as_mut_ptr());
            }
            floxlog_reader_index_seek(r, i64::from(knobs) << 40, e.as_mut_ptr(), err.as_mut_ptr());
        }
        floxlog_reader_seek(r, i64::from(knobs) << 40);
        floxlog_reader_next(
            r,
            ev.as_mut_ptr(),
            levels.as_mut_ptr().cast(),
            levels.len(),
            err.as_mut_ptr(),
        );
        // NULL arguments are error codes, not crashes.
        assert_ne!(
            floxlog_reader_next(r, null_mut(), null_mut(), 0, null_mut()),
            floxlog_result::FLOXLOG_OK
        );
        assert_ne!(
            floxlog_reader_new(
                null(),
                1,
                null(),
                null_mut(),
                0,
                &mut null_mut(),
                null_mut()
            ),
            floxlog_result::FLOXLOG_OK
        );
        floxlog_reader_free(r);
    }
});
