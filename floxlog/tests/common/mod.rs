//! Helpers shared by the test files (each file is its own crate and uses
//! some of them).
#![allow(dead_code)]

use floxlog::core::{Compression, WriterConfig};
use floxlog::segment::{finish_to_vec, vec_writer};
use floxlog::synth::mixed_event;

/// A segment of the first `n` events of the mixed stream `seed` (every
/// record type), index entries every 64 events when `index`.
pub fn mixed_segment(compression: Compression, index: bool, seed: u64, n: u64) -> Vec<u8> {
    let mut w = vec_writer(WriterConfig {
        compression,
        create_index: index,
        index_interval: 64,
        created_ns: 1,
        ..Default::default()
    })
    .unwrap();
    for i in 0..n {
        w.append(&mixed_event(seed, i).as_event()).unwrap();
    }
    finish_to_vec(w).unwrap()
}
