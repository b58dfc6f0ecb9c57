//! The tape layer over an arbitrary segment file: listing, the merged and
//! file-order readers (with a small reorder budget), the scan behind
//! `inspect`/`verify`, and `recover --salvage`. Nothing may panic; what
//! salvage writes must read to its end, hold every event a strict read
//! returns (as a multiset: rewriting LZ4 re-sorts each block by time), and
//! be left alone by a second recover.
#![no_main]

use floxlog::core::ReadOptions;
use floxlog::tape::merge::{OpenedTape, Order, ReadConfig};
use floxlog::tape::recover::{recover_file, RecoverOptions};
use floxlog::tape::scan::scan_segment;
use floxlog::tape::verify::verify_tape;
use floxlog::tape::{OpenOptions, Tape};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fn events(path: &PathBuf, order: Order) -> (Vec<String>, bool) {
    let Ok(tape) = Tape::open(std::slice::from_ref(path), OpenOptions::default()) else {
        return (Vec::new(), false);
    };
    let mut opened = OpenedTape::open(tape);
    let cfg = ReadConfig {
        order,
        reorder_bytes: 1 << 20,
        ..ReadConfig::default()
    };
    let mut r = opened.reader(&cfg);
    let mut v = Vec::new();
    while let Ok(Some(it)) = r.next_item() {
        v.push(format!("{:?}", it.event));
    }
    let clean = r.problems().is_empty();
    (v, clean)
}

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("floxlog-fuzz-tape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seg = dir.join("1.floxlog");
    std::fs::write(&seg, data).unwrap();

    let (file_order, _) = events(&seg, Order::File);
    let _ = events(&seg, Order::Time);
    let _ = scan_segment(data, ReadOptions::default(), &mut |_| {});
    if let Ok(tape) = Tape::open(std::slice::from_ref(&dir), OpenOptions::default()) {
        let _ = verify_tape(&tape, ReadOptions::default(), &mut |_| {});
    }

    let out = dir.join("2.floxlog");
    let opts = RecoverOptions {
        output: Some(out.clone()),
        salvage: true,
        force: true,
        ..RecoverOptions::default()
    };
    if recover_file(&seg, &opts).is_ok() && out.exists() {
        let (salvaged, clean) = events(&out, Order::File);
        assert!(clean, "a salvaged segment reads to its end");
        let mut have = std::collections::HashMap::<&str, i64>::new();
        for e in &salvaged {
            *have.entry(e).or_default() += 1;
        }
        for e in &file_order {
            let n = have.entry(e).or_default();
            *n -= 1;
            assert!(*n >= 0, "salvage keeps every event a strict read returns: {e}");
        }
        let again = recover_file(&out, &RecoverOptions { dry_run: true, ..RecoverOptions::default() });
        assert_eq!(again.map(|r| r.action).ok().as_deref(), Some("already_valid"));
    }
});
