//! A read's outcome, judged once: which of its problems are errors (every
//! one when strict; otherwise all but the torn tail of a segment whose
//! writer is running or died), and the warning a tolerated torn tail gets.
//! Front ends (`cat`, `export`, book replay, the C tape reader, Arrow and
//! Python reads) only format what [`ReadOutcome`] says; the worst finding
//! of a verify is [`crate::tape::check::verify::VerifyReport::worst`].

use crate::tape::error::TapeError;
use crate::tape::read::problem::Problem;

/// What a read did with the events it kept: the verb of the torn-tail
/// warning ("read its 12 complete events").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// Read (or listed, decoded...).
    Read,
    /// Replayed into books.
    Replayed,
    /// Exported to files.
    Exported,
}

impl Kept {
    fn verb(self) -> &'static str {
        match self {
            Kept::Read => "read",
            Kept::Replayed => "replayed",
            Kept::Exported => "exported",
        }
    }
}

/// How a read went: the events it handed out and the segments that
/// stopped early, judged strict or lenient.
#[derive(Clone, Copy, Debug)]
pub struct ReadOutcome<'a> {
    /// Events handed out (0 where the front end does not count them).
    pub events: u64,
    /// Segments that stopped early, in the order the read found them
    /// ([`crate::tape::read::Session::problems`]).
    pub problems: &'a [Problem],
    /// A torn tail is an error too.
    pub strict: bool,
}

impl<'a> ReadOutcome<'a> {
    /// The outcome of a read that found `problems`.
    pub fn new(problems: &'a [Problem], strict: bool) -> ReadOutcome<'a> {
        ReadOutcome {
            events: 0,
            problems,
            strict,
        }
    }

    /// With the count of events handed out.
    pub fn with_events(self, events: u64) -> ReadOutcome<'a> {
        ReadOutcome { events, ..self }
    }

    /// Whether `p` is an error of this read (not a tolerated torn tail of
    /// a lenient one): each problem is an error or a warning.
    pub fn is_error(&self, p: &Problem) -> bool {
        self.strict || !p.tolerated
    }

    /// The problems that are errors, in order.
    pub fn errors(&self) -> impl Iterator<Item = &'a Problem> + 'a {
        let strict = self.strict;
        self.problems.iter().filter(move |p| strict || !p.tolerated)
    }

    /// The first error, as a [`TapeError`].
    pub fn error(&self) -> Option<TapeError> {
        self.errors().next().map(Problem::to_error)
    }

    /// Whether the read found no error.
    pub fn passed(&self) -> bool {
        self.errors().next().is_none()
    }

    /// Segments that ended in a torn tail (errors too when strict).
    pub fn torn_tails(&self) -> u64 {
        self.problems.iter().filter(|p| p.tolerated).count() as u64
    }

    /// The warnings of a lenient read's torn tails, in order.
    pub fn warnings(&self, kept: Kept) -> impl Iterator<Item = String> + 'a {
        let strict = self.strict;
        let tolerated = self.problems.iter().filter(move |p| !strict && p.tolerated);
        tolerated.map(move |p| p.torn_warning(kept))
    }
}

impl Problem {
    /// The warning of a tolerated torn tail: where the segment ends, why
    /// (a running or a dead writer), and the complete events `kept`.
    pub fn torn_warning(&self, kept: Kept) -> String {
        format!(
            "{} ends in a torn record at byte {} ({}); {} its {} complete events",
            self.path.display(),
            self.error.offset,
            self.torn_why(),
            kept.verb(),
            self.events_before
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use floxlog_core::{Error, ErrorKind};

    fn problem(tolerated: bool) -> Problem {
        Problem {
            segment: 0,
            path: "t/1.floxlog".into(),
            error: Error::new(ErrorKind::Truncated, 640, "torn"),
            events_before: 12,
            tolerated,
            writer_live: false,
            short: None,
        }
    }

    #[test]
    fn a_torn_tail_is_a_warning_unless_strict() {
        let ps = [problem(true), problem(false)];
        let lenient = ReadOutcome::new(&ps, false);
        assert_eq!(lenient.errors().count(), 1);
        assert!(!lenient.errors().next().unwrap().tolerated);
        assert_eq!(
            lenient.warnings(Kept::Replayed).collect::<Vec<_>>(),
            [
                "t/1.floxlog ends in a torn record at byte 640 (its writer did not close it; \
              no writer holds the tape now); replayed its 12 complete events"
            ]
        );
        let strict = ReadOutcome::new(&ps, true);
        assert_eq!(strict.errors().count(), 2);
        assert_eq!(strict.warnings(Kept::Read).count(), 0);
        assert_eq!(strict.torn_tails(), 1);
        assert!(ReadOutcome::new(&ps[..1], false).passed());
        assert!(!ReadOutcome::new(&ps[..1], true).passed());
    }

    #[test]
    fn the_worst_finding_of_a_verify_is_its_first_error_or_strict_warning() {
        use crate::tape::check::verify::VerifyReport;
        use crate::tape::report::{Finding, FindingKind, Severity};
        let f = |sev, kind| Finding::new(sev, kind, None, "x");
        let mut rep = VerifyReport::default();
        rep.findings.push(f(Severity::Info, FindingKind::Io));
        rep.findings
            .push(f(Severity::Warning, FindingKind::TrailingBytes));
        assert!(rep.worst(false).is_none());
        let kind = |r: &VerifyReport, strict| r.worst(strict).map(|f| f.kind);
        assert_eq!(kind(&rep, true), Some(FindingKind::TrailingBytes));
        rep.findings.push(f(Severity::Error, FindingKind::BadIndex));
        rep.findings.push(f(Severity::Error, FindingKind::Internal));
        assert_eq!(kind(&rep, false), Some(FindingKind::BadIndex));
        assert_eq!(kind(&rep, true), Some(FindingKind::BadIndex));
    }
}
