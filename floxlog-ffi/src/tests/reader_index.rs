//! The codec reader's index: proven by the first call that uses it, never
//! at open, and never by reading.

use super::*;
use floxlog_core::{IndexEntry, IndexHeader, SegmentHeader};

/// A 25-trade segment with an index every 10 frames, its entry 1 moved 12
/// bytes into its frame (past the frame header) and the index CRC fixed,
/// so only the proof (every entry a frame header) finds the damage; and
/// the index offset.
fn segment_with_an_entry_inside_a_frame() -> (Vec<u8>, u64) {
    let cfg = config(FLOXLOG_COMPRESSION_NONE, 10);
    let mut b = Bufs::new(1 << 14, 0, 8);
    let w = new_writer(&cfg, &mut b);
    for i in 0..25 {
        // SAFETY: live handle.
        let rc = unsafe { floxlog_writer_append_trade(w, &trade(i), null_mut()) };
        assert_eq!(rc, FLOXLOG_OK);
    }
    let mut seg = finish(w);
    // Undamaged, it proves (the same calls' good path).
    // SAFETY: valid buffers; `seg` outlives the handle.
    unsafe {
        let mut r = null_mut();
        let rc = reader_new(
            seg.as_ptr(),
            seg.len(),
            null(),
            null_mut(),
            0,
            &mut r,
            null_mut(),
        );
        assert_eq!(rc, FLOXLOG_OK);
        assert_eq!(index_of(r).0, FLOXLOG_OK);
        let mut ent = floxlog_index_entry::default();
        let rc = floxlog_reader_index_entry(r, 1, &mut ent, null_mut());
        assert_eq!((rc, ent.file_offset), (FLOXLOG_OK, 64 + 10 * 60));
        floxlog_reader_free(r);
    }
    let off = SegmentHeader::parse(&seg).unwrap().index_offset;
    let at = off as usize;
    let mut h = IndexHeader::parse(&seg[at..], off).unwrap();
    assert!(h.entry_count >= 2);
    let e1 = at + IndexHeader::LEN + IndexEntry::LEN;
    let mut ent = IndexEntry::parse(&seg[e1..], 0).unwrap();
    ent.file_offset += 12;
    let mut b16 = [0u8; IndexEntry::LEN];
    ent.emit(&mut b16);
    seg[e1..e1 + IndexEntry::LEN].copy_from_slice(&b16);
    let entries =
        at + IndexHeader::LEN..at + IndexHeader::LEN + h.entry_count as usize * IndexEntry::LEN;
    h.crc32 = floxlog_core::crc32::crc32(&seg[entries]);
    let mut hb = [0u8; IndexHeader::LEN];
    h.emit(&mut hb);
    seg[at..at + IndexHeader::LEN].copy_from_slice(&hb);
    (seg, off)
}

/// Whether `r`'s handle has proven its index yet.
///
/// # Safety
/// `r` must be a live handle.
unsafe fn proven(r: *mut floxlog_reader) -> bool {
    // SAFETY: the caller's promise.
    unsafe { crate::handle::handle(r) }.unwrap().index_proven()
}

/// `floxlog_reader_index` on `r`: its code, and the error's offset and
/// text.
///
/// # Safety
/// `r` must be a live handle.
unsafe fn index_of(r: *mut floxlog_reader) -> (floxlog_result, u64, String) {
    let mut h = floxlog_index_header::default();
    let mut n = 0usize;
    let mut e = no_err();
    // SAFETY: the caller's promise; valid out pointers.
    let rc = unsafe { floxlog_reader_index(r, &mut h, &mut n, &mut e) };
    (rc, e.offset, what(&e))
}

fn the_index_is_proven_when_first_used_in_one_form() {
    let (seg, off) = segment_with_an_entry_inside_a_frame();
    let mut r = null_mut();
    let mut e = no_err();
    // SAFETY: valid buffers; `seg` outlives the handle.
    unsafe {
        let rc = reader_new(
            seg.as_ptr(),
            seg.len(),
            null(),
            null_mut(),
            0,
            &mut r,
            &mut e,
        );
        assert_eq!(rc, FLOXLOG_OK, "{}", what(&e));
        assert!(!proven(r), "opening proved the index");
        let mut ev = trade_event(-1);
        let mut n = 0;
        let rc = loop {
            let rc = floxlog_reader_next(r, &mut ev, null_mut(), 0, &mut e);
            if rc != FLOXLOG_OK {
                break rc;
            }
            assert_eq!(ev.data.trade, trade(n));
            n += 1;
            // An index call halfway changes nothing for reading.
            if n == 5 {
                assert!(!proven(r), "reading proved the index");
                let (rc, at, _) = index_of(r);
                assert_eq!((rc, at), (FLOXLOG_BAD_INDEX, off));
            }
        };
        assert_eq!((rc, n), (FLOXLOG_END, 25));

        // The same error on every index call: proven once, kept.
        let bad = (
            FLOXLOG_BAD_INDEX,
            off,
            "index entry does not point at a frame header".to_string(),
        );
        assert_eq!(index_of(r), bad);
        assert_eq!(index_of(r), bad);
        let mut ent = floxlog_index_entry::default();
        for rc in [
            floxlog_reader_index_entry(r, 0, &mut ent, &mut e),
            floxlog_reader_index_seek(r, trade(15).exchange_ts_ns, &mut ent, &mut e),
        ] {
            assert_eq!((rc, e.offset, what(&e)), bad);
        }
        // A seek starts at the first frame and still finds its event.
        assert_eq!(floxlog_reader_seek(r, trade(15).exchange_ts_ns), FLOXLOG_OK);
        assert_eq!(
            floxlog_reader_next(r, &mut ev, null_mut(), 0, &mut e),
            FLOXLOG_OK
        );
        assert_eq!(ev.data.trade, trade(15));
        floxlog_reader_free(r);

        // A fresh handle whose first index use is a seek: the same proof.
        let mut r = null_mut();
        let rc = reader_new(
            seg.as_ptr(),
            seg.len(),
            null(),
            null_mut(),
            0,
            &mut r,
            &mut e,
        );
        assert_eq!(rc, FLOXLOG_OK);
        assert!(!proven(r));
        assert_eq!(floxlog_reader_seek(r, trade(20).exchange_ts_ns), FLOXLOG_OK);
        assert!(proven(r));
        assert_eq!(
            floxlog_reader_next(r, &mut ev, null_mut(), 0, &mut e),
            FLOXLOG_OK
        );
        assert_eq!(ev.data.trade, trade(20));
        assert_eq!(index_of(r), bad);
        floxlog_reader_free(r);
    }
}

#[test]
fn the_index_is_proven_when_first_used() {
    each_form(the_index_is_proven_when_first_used_in_one_form);
}
