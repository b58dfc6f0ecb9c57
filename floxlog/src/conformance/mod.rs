//! The conformance kit: a corpus laid out like `conformance/` run against
//! any implementation through adapter programs (protocol in
//! `docs/conformance.md`). `floxlog conformance` is its command-line front
//! end; `floxlog-testkit` runs the same corpus in process.
//!
//! - [`corpus`]: loading a corpus (a bad case is a failing case, not a
//!   failed load).
//! - [`plan`]: the case ids (`read/cases/trades-7`, ...).
//! - [`template`], [`process`]: adapter command lines and calls.
//! - [`run()`]: the checks; [`events`] and [`segments`] say where the first
//!   difference is.
//! - [`report`]: expected failures, report lines, summary, JUnit.
//! - [`integrity`]: the corpus's `VERSION` and `SHA256SUMS`.

mod check;
pub mod corpus;
pub mod events;
pub mod integrity;
pub mod plan;
pub mod process;
mod reader;
pub mod report;
pub mod run;
pub mod segments;
mod source_diff;
pub mod template;
mod writer;

pub use corpus::{Corpus, ENV_DIR};
pub use run::{run, verify_corpus, CaseResult, KitOptions, Verdict};
pub use template::Template;
pub use writer::settings_json;
