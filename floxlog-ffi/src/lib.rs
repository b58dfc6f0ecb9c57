//! C ABI for floxlog: the codec of `floxlog-core` over caller buffers
//! (writer, reader, standalone frames, errors) for hosts with their own
//! I/O, and tapes on disk (`floxlog_tape_*`: writer, merged reader,
//! verify, recover, inspect) on the `floxlog` crate's tape layer, the code
//! the CLI runs.
//!
//! The conventions (result codes, the one rule for errors: `floxlog_error`
//! for the codec, `floxlog_tape_error` for the tape level, ownership,
//! threads, units) are written once, as the header's top comment in
//! `floxlog-ffi/cbindgen.toml`. Here, beyond them: no panic crosses the
//! boundary (every function that returns a `floxlog_result`, and the
//! `_free` functions, run inside `catch_unwind`: `boundary.rs`); the
//! functions that return a plain value only read constants and do
//! saturating arithmetic.
//!
//! Layout: `codec/` (caller buffers, no I/O) and `tape/` (tapes on disk,
//! built on `codec/`'s record structs and conversions; `codec/` never
//! uses `tape/`); the shared parts (codes and `floxlog_error`, messages,
//! constants, the boundary helpers, handles, C words) at the top. Each C
//! struct stands beside the functions that take it.
//!
//! cbindgen writes the header in the order it reads this crate: the items
//! of this file, then the modules in the order they are declared below
//! (reordering them reorders the header).
//!
//! Features (Cargo.toml): `tape` (default) is the whole library; without
//! it and without `std` the crate is `no_std` with no allocator and holds
//! the codec's C API only (`panic.rs` is its panic handler), for firmware.
#![cfg_attr(not(feature = "std"), no_std)]
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

use core::ffi::c_char;

// The header's sections, in its order: cbindgen reads the modules in the
// order they are declared (so each `mod` stands alone: rustfmt sorts the
// declarations of a group).

// Result codes, `floxlog_error`.
mod error;

// Names and messages of codes and errors.
mod message;

// Constants of the format and the ABI.
mod consts;

// The codec over caller buffers (codec/).
mod codec;

// Tapes on disk (tape/).
#[cfg(feature = "tape")]
mod tape;

// Internal: no C items.
mod boundary;
mod handle;
#[cfg(not(feature = "std"))]
mod panic;
#[cfg(feature = "tape")]
mod words;

pub use codec::book::*;
pub use codec::frame::*;
pub use codec::reader::*;
pub use codec::segment::*;
pub use codec::sizes::*;
pub use codec::types::*;
pub use codec::writer::*;
pub use consts::*;
pub use error::{floxlog_error, floxlog_result, FLOXLOG_WHAT_LEN};
pub use message::*;
#[cfg(feature = "tape")]
pub use tape::book::*;
#[cfg(feature = "tape")]
pub use tape::diff::*;
#[cfg(feature = "tape")]
pub use tape::error::*;
#[cfg(feature = "tape")]
pub use tape::ops::*;
#[cfg(feature = "tape")]
pub use tape::reader::*;
#[cfg(feature = "tape")]
pub use tape::tail::*;
#[cfg(feature = "tape")]
pub use tape::writer::*;

/// The library version, e.g. `"0.2.0"`: a static NUL-terminated string
/// (never free it).
#[no_mangle]
pub extern "C" fn floxlog_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// The `.floxlog` format version this library reads and writes (1).
#[no_mangle]
pub extern "C" fn floxlog_format_version() -> u16 {
    floxlog_core::FORMAT_VERSION
}

/// Whether this build reads and writes LZ4 segments.
#[no_mangle]
pub extern "C" fn floxlog_lz4_supported() -> bool {
    floxlog_core::LZ4_SUPPORTED
}

#[cfg(all(test, feature = "std"))]
mod tests;

#[cfg(all(test, feature = "tape"))]
mod words_tests;
