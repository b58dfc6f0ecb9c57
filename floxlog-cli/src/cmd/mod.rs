//! One module per subcommand, and the helpers they share.

pub mod book;
pub mod cat;
pub mod cat_follow;
pub mod common;
pub mod conformance;
pub mod convert;
pub mod demo;
pub mod diff;
pub mod encode;
pub mod export;
pub mod gaps;
pub mod inspect;
pub mod local;
pub mod manifest;
pub mod recover;
pub mod reindex;
pub mod report;
pub mod settings;
pub mod staging;
pub mod verify;
pub mod words;
