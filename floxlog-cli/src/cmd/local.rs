//! Writers stay local: a command that writes, given an object URL where it
//! writes, is a usage error that says how to upload instead (reading
//! commands take `s3://` URLs; see docs/object-storage.md).

use super::common::CmdResult;
use crate::Cmd;
use floxlog::tape::remote::{is_url, refuse_writing};
use std::path::Path;

/// The usage error for the first path `cmd` would write to that is a URL.
pub fn check(cmd: &Cmd) -> CmdResult {
    let one = |p: &Path| {
        if is_url(p) {
            Err(refuse_writing(p))
        } else {
            Ok(0)
        }
    };
    let some = |p: &Option<std::path::PathBuf>| p.as_deref().map_or(Ok(0), one);
    match cmd {
        Cmd::Encode(a) => one(&a.output),
        Cmd::Convert(a) => one(&a.output),
        // `export -o s3://...` builds locally, then uploads (export.rs).
        Cmd::Report(a) => one(&a.output),
        Cmd::Book(a) => some(&a.output),
        Cmd::Manifest(a) => one(&a.dir),
        Cmd::Demo(a) => one(&a.dir),
        Cmd::Conformance(a) => some(&a.keep).and_then(|_| some(&a.junit)),
        // Both rewrite their inputs in place unless given an output.
        Cmd::Recover(a) => a
            .inputs
            .iter()
            .chain(&a.output)
            .try_for_each(|p| one(p).map(|_| ()))
            .map(|_| 0),
        Cmd::Reindex(a) => a
            .inputs
            .iter()
            .chain(&a.output)
            .try_for_each(|p| one(p).map(|_| ()))
            .map(|_| 0),
        Cmd::Cat(a) if a.follow.follow => match a.tape.inputs.iter().find(|p| is_url(p)) {
            Some(p) => Err(floxlog::tape::TapeError::usage(format!(
                "{}: --follow tails local tapes only (object storage has no live writer to follow)",
                p.display()
            ))),
            None => Ok(0),
        },
        _ => Ok(0),
    }
}
