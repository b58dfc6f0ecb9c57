//! A time-order read of a tape holds what it reads, not the tape (issue 39
//! item 4, memory): planning the read walks each LZ4 segment's block
//! headers, and the kernel's fault-around maps whole runs of pages for
//! each header touched; the walk gives them back segment by segment, so
//! the peak resident set grows by about one segment, not the tape.
//! (Segments in time order, flagged Sorted: the plan then reads only
//! their first events, as a recorder's usual tape.)
//!
//! One test in its own binary: the process's memory is this read's.

#![cfg(target_os = "linux")]

mod common;

use common::status;
use floxlog::core::{Compression, ReadOptions};
use floxlog::see::source::read_events;
use floxlog::synth::{generate, SynthConfig};
use floxlog::tape::{Durability, Filter, OpenOptions, Tape, TapeWriter, TapeWriterConfig};

const SEGMENT: u64 = 4 << 20;

#[test]
fn a_time_order_read_holds_about_one_segment_resident_not_the_tape() {
    let d = tempfile::tempdir().unwrap();
    let mut cfg = TapeWriterConfig {
        max_segment_bytes: SEGMENT,
        durability: Durability::SyncOnClose,
        ..TapeWriterConfig::default()
    };
    cfg.segment.compression = Compression::Lz4;
    let mut w = TapeWriter::create(d.path(), cfg).unwrap();
    let synth = SynthConfig {
        trades: 600_000,
        book_deltas: 400_000,
        duration_ns: 3_600_000_000_000,
        ..SynthConfig::default()
    };
    let events = generate(&synth, |ev| w.append(ev)).unwrap();
    w.close().unwrap();
    let tape = Tape::open(&[d.path().to_path_buf()], OpenOptions::default()).unwrap();
    let on_disk: u64 = tape
        .segments
        .iter()
        .map(|s| std::fs::metadata(&s.path).unwrap().len())
        .sum();
    assert!(on_disk > 8 * SEGMENT, "{on_disk}");

    // The peak resident set (VmHWM) is reset to the resident set now
    // (clear_refs 5), so that what the read adds is its own.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status("VmRSS");
    let end = read_events(tape, Filter::default(), ReadOptions::default(), |_, _| {}).unwrap();
    assert_eq!(end.events, events);
    let grown = status("VmHWM").saturating_sub(before);
    // Two segments' worth leaves room for the one being read and its
    // neighbour's first pages; without the release it is the whole tape.
    assert!(
        grown < 2 * SEGMENT,
        "the read of a {on_disk}-byte tape grew the peak resident set by {grown} bytes"
    );
}
