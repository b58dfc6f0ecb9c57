//! The reader adapter's checks: events against `expected.jsonl`, damaged
//! segments' outcomes, index verdicts.

use super::check::{Ctx, Verdict};
use super::corpus::{read_jsonl, Case, CorruptCase, Expect};
use super::events::{compare_events, GotEvent};
use super::process::{last_line, Output};
use super::template::Template;
use std::path::Path;

const SEGMENT: &str = "{segment}";

fn need(t: Option<&Template>) -> Result<&Template, String> {
    t.ok_or_else(|| "no reader adapter given".to_string())
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into()
}

fn segment_arg(p: &Path) -> Result<String, String> {
    match std::fs::metadata(p) {
        Err(_) => return Err(format!("corpus: segment file {} is missing", p.display())),
        Ok(md) => {
            if let Some(what) = crate::tape::dir::files::not_regular(&md) {
                return Err(format!(
                    "corpus: segment file {} is {what}, not a regular file",
                    p.display()
                ));
            }
        }
    }
    p.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("corpus: path {} is not UTF-8", p.display()))
}

fn stderr_last(out: &Output) -> String {
    out.last_stderr_line().map_or_else(
        || "stderr empty".into(),
        |l| format!("last stderr line: {l}"),
    )
}

/// The events a reader printed for one segment (blank lines skipped).
fn parse_events(out: &Output, segment: &str) -> Result<Vec<GotEvent>, String> {
    let text = std::str::from_utf8(&out.stdout).map_err(|e| {
        format!(
            "{segment}: reader stdout is not UTF-8 (byte {})",
            e.valid_up_to()
        )
    })?;
    let mut v = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(l).map_err(|e| {
            let shown: String = l.chars().take(120).collect();
            format!(
                "{segment}: reader output line {} is not JSON ({e}): {shown}",
                i + 1
            )
        })?;
        v.push(GotEvent {
            value,
            segment: segment.to_string(),
            line: i + 1,
        });
    }
    Ok(v)
}

/// `read/cases/*`, `read/real/*`: every segment read in file-name order,
/// the events concatenated and compared with `expected.jsonl`.
pub(crate) fn read_case(c: &Case, t: Option<&Template>, ctx: &Ctx) -> Result<Verdict, String> {
    let t = need(t)?;
    let expected = read_jsonl(&c.expected_path).map_err(|e| format!("corpus: {e}"))?;
    if c.segments.is_empty() {
        return Err(format!("corpus: {} lists no segments", c.dir.display()));
    }
    let mut got = Vec::new();
    for s in &c.segments {
        let arg = segment_arg(&s.path)?;
        let name = s.file_name();
        let out = ctx
            .call(t, &[(SEGMENT, &arg)])
            .map_err(|e| format!("{name}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{name}: the reader failed on a clean segment ({}; {}) after {} events",
                out.status_text(),
                stderr_last(&out),
                parse_events(&out, &name).map_or(0, |v| v.len())
            ));
        }
        got.extend(parse_events(&out, &name)?);
    }
    compare_events(&got, &expected)?;
    Ok(Verdict::Pass)
}

/// Parses the protocol's `error <kind> <offset>` line.
fn error_line(l: &str) -> Option<(String, u64)> {
    let w: Vec<&str> = l.split_whitespace().collect();
    match w.as_slice() {
        ["error", kind, off] => Some((kind.to_string(), off.parse().ok()?)),
        _ => None,
    }
}

/// `read/corrupt/*`: the events before the damage, then the error's kind
/// and offset (or, for an index-only case, a clean read).
pub(crate) fn read_corrupt(
    c: &CorruptCase,
    t: Option<&Template>,
    ctx: &Ctx,
) -> Result<Verdict, String> {
    let t = need(t)?;
    let arg = segment_arg(&c.segment)?;
    let name = name_of(&c.segment);
    let out = ctx.call(t, &[(SEGMENT, &arg)])?;
    let got = parse_events(&out, &name)?;
    let n = got.len() as u64;
    // The events before the damage are the source case's first ones, each
    // compared (a count alone would pass a reader printing `{}`).
    if let Some(src) = &c.source {
        let want = match &c.expect {
            Expect::Error { events, .. } | Expect::IndexError { events, .. } => *events,
        };
        let mut expected = read_jsonl(src).map_err(|e| format!("corpus: {e}"))?;
        if (expected.len() as u64) < want {
            return Err(format!(
                "corpus: {} has {} events, fewer than the {want} this case expects",
                src.display(),
                expected.len()
            ));
        }
        expected.truncate(want as usize);
        let k = got.len().min(expected.len());
        compare_events(&got[..k], &expected[..k]).map_err(|e| format!("before the damage: {e}"))?;
    }
    match &c.expect {
        Expect::Error {
            events,
            kind,
            offset,
        } => {
            let want = format!("{events} events then error {kind} at offset {offset}");
            if out.status.success() {
                return Err(format!(
                    "expected {want}; the reader exited 0 after {n} events (it accepted the damaged segment)"
                ));
            }
            let last = out.last_stderr_line();
            let Some((k, o)) = last.as_deref().and_then(error_line) else {
                return Err(format!(
                    "expected {want}; the reader failed ({}) after {n} events, but its last stderr line is not `error <kind> <offset>`: {}",
                    out.status_text(),
                    last.unwrap_or_else(|| "(stderr empty)".into())
                ));
            };
            if n != *events || k != *kind || o != *offset {
                return Err(format!(
                    "expected {want}; got {n} events then error {k} at offset {o}"
                ));
            }
            Ok(Verdict::Pass)
        }
        Expect::IndexError { events, .. } => {
            if !out.status.success() {
                return Err(format!(
                    "expected {events} events and a clean read (only the index is damaged); the reader failed ({}; {}) after {n} events",
                    out.status_text(),
                    stderr_last(&out)
                ));
            }
            if n != *events {
                return Err(format!("expected {events} events, got {n}"));
            }
            Ok(Verdict::Pass)
        }
    }
}

/// What an index check answered.
enum IndexAnswer {
    Ok,
    Error(String),
    Unsupported,
}

fn index_call(t: &Template, path: &Path, ctx: &Ctx) -> Result<IndexAnswer, String> {
    let arg = segment_arg(path)?;
    let name = name_of(path);
    let t = t.with_flag_before("--index", SEGMENT);
    let out = ctx
        .call(&t, &[(SEGMENT, &arg)])
        .map_err(|e| format!("{name}: index check: {e}"))?;
    let last = last_line(&out.stdout);
    let w: Vec<&str> = last.as_deref().unwrap_or("").split_whitespace().collect();
    let answer = match w.as_slice() {
        ["index", "unsupported"] if ctx.require_index => {
            return Err(format!(
                "{name}: the reader answered `index unsupported` and --require-index was given"
            ))
        }
        ["index", "unsupported"] => return Ok(IndexAnswer::Unsupported),
        ["index", "ok"] => IndexAnswer::Ok,
        ["index_error", kind] => IndexAnswer::Error(kind.to_string()),
        _ => {
            return Err(format!(
                "{name}: index check: the last stdout line is not `index ok`, `index_error <kind>` or `index unsupported`: {} ({})",
                last.unwrap_or_else(|| "(stdout empty)".into()),
                out.status_text()
            ))
        }
    };
    if !out.status.success() {
        return Err(format!(
            "{name}: index check answered but did not exit 0 ({}; {})",
            out.status_text(),
            stderr_last(&out)
        ));
    }
    Ok(answer)
}

/// The skip message of an index check the reader does not answer (the
/// report counts these).
pub const UNSUPPORTED: &str = "the reader adapter does not check indexes (index unsupported)";

/// `index/cases/*`, `index/real/*`: every segment's index is fine (a
/// segment without an index counts as fine).
pub(crate) fn index_case(c: &Case, t: Option<&Template>, ctx: &Ctx) -> Result<Verdict, String> {
    let t = need(t)?;
    if c.segments.is_empty() {
        return Err(format!("corpus: {} lists no segments", c.dir.display()));
    }
    for s in &c.segments {
        match index_call(t, &s.path, ctx)? {
            IndexAnswer::Ok => {}
            IndexAnswer::Unsupported => return Ok(Verdict::Skip(UNSUPPORTED.into())),
            IndexAnswer::Error(k) => {
                return Err(format!(
                    "{}: expected index ok, got index_error {k}",
                    s.file_name()
                ))
            }
        }
    }
    Ok(Verdict::Pass)
}

/// `index/corrupt/*`: `index_error <kind>` where the case expects one,
/// else `index ok`. Where the segment header itself is damaged (an error
/// at offset 0) a checker cannot reach the index, so reporting that very
/// error as `index_error <kind>` is accepted too.
pub(crate) fn index_corrupt(
    c: &CorruptCase,
    t: Option<&Template>,
    ctx: &Ctx,
) -> Result<Verdict, String> {
    let t = need(t)?;
    let answer = index_call(t, &c.segment, ctx)?;
    let got = match &answer {
        IndexAnswer::Unsupported => return Ok(Verdict::Skip(UNSUPPORTED.into())),
        IndexAnswer::Ok => "index ok".to_string(),
        IndexAnswer::Error(k) => format!("index_error {k}"),
    };
    let ok = match (&c.expect, &answer) {
        (Expect::IndexError { kind, .. }, IndexAnswer::Error(k)) => k == kind,
        (Expect::IndexError { .. }, _) => false,
        (Expect::Error { .. }, IndexAnswer::Ok) => true,
        (
            Expect::Error {
                kind, offset: 0, ..
            },
            IndexAnswer::Error(k),
        ) => k == kind,
        (Expect::Error { .. }, _) => false,
    };
    if ok {
        return Ok(Verdict::Pass);
    }
    let want = match &c.expect {
        Expect::IndexError { kind, .. } => format!("index_error {kind}"),
        Expect::Error {
            kind, offset: 0, ..
        } => {
            format!("index ok (or index_error {kind}: the segment header is damaged)")
        }
        Expect::Error { .. } => "index ok (only the frames are damaged)".into(),
    };
    Err(format!("expected {want}, got {got}"))
}

/// The skip message of a tape case the reader does not read.
pub const TAPE_UNSUPPORTED: &str = "the reader adapter does not read tapes (tape unsupported)";

/// `read/tapes/*`: the tape directory read whole (`--tape` inserted before
/// the `{segment}` word, which names the directory): its events in time
/// order equal `expected.jsonl`; a case with `expect.error` must then fail.
pub(crate) fn read_tape(c: &Case, t: Option<&Template>, ctx: &Ctx) -> Result<Verdict, String> {
    let t = need(t)?.with_flag_before("--tape", SEGMENT);
    let dir = c.tape.as_ref().ok_or("internal error: not a tape case")?;
    let arg = dir
        .to_str()
        .ok_or_else(|| format!("corpus: path {} is not UTF-8", dir.display()))?;
    let expected = read_jsonl(&c.expected_path).map_err(|e| format!("corpus: {e}"))?;
    let out = ctx.call(&t, &[(SEGMENT, arg)])?;
    if last_line(&out.stdout).as_deref() == Some("tape unsupported") {
        return Ok(Verdict::Skip(TAPE_UNSUPPORTED.into()));
    }
    let got = parse_events(&out, "tape")?;
    compare_events(&got, &expected)?;
    match (&c.tape_error, out.status.success()) {
        (None, true) => Ok(Verdict::Pass),
        // The last stderr line names the kind: `error <kind> <file or offset>`.
        (Some(e), false) => {
            let last = out.last_stderr_line();
            let kind = last.as_deref().and_then(|l| l.strip_prefix("error "));
            match kind.and_then(|k| k.split_whitespace().next()) {
                Some(k) if k == e => Ok(Verdict::Pass),
                _ => Err(format!(
                    "the read failed as it must, but the last stderr line is not \
                     `error {e} <file>` ({})",
                    stderr_last(&out)
                )),
            }
        }
        (None, false) => Err(format!(
            "the reader failed on a sound tape ({}; {}) after its events",
            out.status_text(),
            stderr_last(&out)
        )),
        (Some(e), true) => Err(format!(
            "expected the read to fail ({e}) after {} events; the reader exited 0",
            expected.len()
        )),
    }
}
