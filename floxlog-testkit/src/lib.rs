//! `floxlog-testkit`: the test harness of the floxlog workspace (not
//! published).
//!
//! - [`corpus`]: loading a conformance corpus laid out like
//!   `conformance/` (the loader of `floxlog::conformance`, which also
//!   holds the adapter kit behind `floxlog conformance`), and
//!   [`conformance`]: running it in process against this implementation.
//! - `floxlog-crash-recorder` (`src/bin/crash_recorder.rs`): the recorder
//!   that `tests/crash.rs` kills.

pub mod conformance;
pub use floxlog::conformance::corpus;

/// The README's Rust examples, compiled and run as doctests
/// (`cargo test -p floxlog-testkit --doc`), so they keep compiling as
/// written.
#[doc = include_str!("../../README.md")]
pub mod readme {}

/// docs/rust.md's examples, compiled and run as doctests like the
/// README's (`tests/docs_examples.rs` checks that no other page holds Rust
/// code that would escape them).
#[doc = include_str!("../../docs/rust.md")]
pub mod docs_rust {}
