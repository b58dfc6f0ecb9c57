//! `diff --bytes`: the segment files compared byte for byte, pairwise in
//! listing order. Nothing is decoded, so damage is not looked for: equal
//! bytes are equal whatever they hold.

use crate::tape::diff::report::{ByteDifference, DiffOutcome, DiffReport, TypeCounts};
use crate::tape::dir::discover::Tape;
use crate::tape::error::TapeError;

/// Compares the files; `equal` counts the bytes that compared equal
/// (every segment before the first difference, and its equal prefix).
pub fn diff_segment_bytes(a: &Tape, b: &Tape) -> Result<DiffReport, TapeError> {
    let mut rep = DiffReport {
        outcome: DiffOutcome::Identical,
        mode: "bytes",
        equal: 0,
        first: None,
        bytes: None,
        damage: Vec::new(),
        counts_a: TypeCounts::default(),
        counts_b: TypeCounts::default(),
    };
    // File names matter for tapes (a segment's name is its series and
    // creation time), not for two single segment files.
    let names_matter = a.segments.len() > 1 || b.segments.len() > 1;
    let n = a.segments.len().max(b.segments.len());
    for i in 0..n {
        let (sa, sb) = (a.segments.get(i), b.segments.get(i));
        let (Some(sa), Some(sb)) = (sa, sb) else {
            rep.bytes = Some(ByteDifference {
                segment: i,
                file_a: sa.map(|s| s.path.clone()),
                file_b: sb.map(|s| s.path.clone()),
                offset: 0,
                reason: "segment_count",
            });
            break;
        };
        let diff = |offset, reason| ByteDifference {
            segment: i,
            file_a: Some(sa.path.clone()),
            file_b: Some(sb.path.clone()),
            offset,
            reason,
        };
        if names_matter && sa.name != sb.name {
            rep.bytes = Some(diff(0, "name"));
            break;
        }
        let (fa, fb) = (sa.open()?, sb.open()?);
        let (x, y) = (fa.bytes(), fb.bytes());
        let same = first_difference(x, y);
        rep.equal += same as u64;
        if same < x.len().max(y.len()) {
            let reason = if same == x.len().min(y.len()) {
                "length"
            } else {
                "bytes"
            };
            rep.bytes = Some(diff(same as u64, reason));
            break;
        }
    }
    if rep.bytes.is_some() {
        rep.outcome = DiffOutcome::Different;
    }
    Ok(rep)
}

/// Length of the common prefix of `x` and `y`. Compares 64 KiB chunks with
/// slice equality (a memcmp) and looks for the byte only in the chunk that
/// differs.
fn first_difference(x: &[u8], y: &[u8]) -> usize {
    const CHUNK: usize = 64 << 10;
    let n = x.len().min(y.len());
    let mut at = 0;
    while at < n {
        let end = (at + CHUNK).min(n);
        if x[at..end] != y[at..end] {
            let k = x[at..end].iter().zip(&y[at..end]).position(|(p, q)| p != q);
            return at + k.unwrap_or(0);
        }
        at = end;
    }
    n
}

#[cfg(test)]
mod tests {
    use crate::tape::diff::bytes::first_difference;

    #[test]
    fn common_prefix() {
        let a = vec![7u8; 200_000];
        let mut b = a.clone();
        assert_eq!(first_difference(&a, &b), 200_000);
        b[150_001] = 0;
        assert_eq!(first_difference(&a, &b), 150_001);
        assert_eq!(first_difference(&a[..10], &a), 10);
        assert_eq!(first_difference(&[], &a), 0);
    }
}
