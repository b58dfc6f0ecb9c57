//! Turning verdicts into the kit's report: expected-failure lists, one
//! line per case, the summary, JUnit XML.

use super::check::Verdict;
use super::run::CaseResult;
use std::collections::BTreeSet;
use std::path::Path;

/// An expected-failure list: one case id a line; `#` starts a comment;
/// blank lines are ignored.
#[derive(Clone, Debug, Default)]
pub struct ExpectFail {
    /// (line number, id), in file order.
    pub entries: Vec<(usize, String)>,
    ids: BTreeSet<String>,
}

impl ExpectFail {
    /// Parses the text of a list.
    pub fn parse(text: &str) -> ExpectFail {
        let mut x = ExpectFail::default();
        for (i, l) in text.lines().enumerate() {
            let id = l.split('#').next().unwrap_or("").trim();
            if !id.is_empty() {
                x.entries.push((i + 1, id.to_string()));
                x.ids.insert(id.to_string());
            }
        }
        x
    }

    /// Reads and parses the list at `path`.
    pub fn load(path: &Path) -> Result<ExpectFail, String> {
        std::fs::read_to_string(path)
            .map(|t| ExpectFail::parse(&t))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Whether `id` is listed.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// Entries naming no id of `known`.
    pub fn unknown<'a>(&'a self, known: &BTreeSet<String>) -> Vec<&'a (usize, String)> {
        self.entries
            .iter()
            .filter(|(_, id)| !known.contains(id))
            .collect()
    }
}

/// A verdict seen through the expected-failure list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Passed, not listed.
    Ok,
    /// Failed, not listed.
    Fail(String),
    /// Failed, listed.
    XFail(String),
    /// Passed, listed: unexpected.
    XPass,
    /// Not checked.
    Skip(String),
    /// Failed, but the check is recommended (a reference quirk), not
    /// required: reported, not failing the run.
    Warn(String),
}

impl Outcome {
    /// Classifies `r` against `expect`.
    pub fn of(r: &CaseResult, expect: &ExpectFail) -> Outcome {
        let listed = expect.contains(&r.id);
        match (&r.verdict, listed) {
            (Verdict::Fail(m), false) if r.recommended => Outcome::Warn(m.clone()),
            (Verdict::Pass, false) => Outcome::Ok,
            (Verdict::Pass, true) => Outcome::XPass,
            (Verdict::Fail(m), false) => Outcome::Fail(m.clone()),
            (Verdict::Fail(m), true) => Outcome::XFail(m.clone()),
            (Verdict::Skip(m), _) => Outcome::Skip(m.clone()),
        }
    }

    /// The report line for case `id`.
    pub fn line(&self, id: &str) -> String {
        match self {
            Outcome::Ok => format!("ok {id}"),
            Outcome::Fail(m) => format!("FAIL {id}: {m}"),
            Outcome::XFail(_) => format!("xfail {id}"),
            Outcome::XPass => format!("XPASS {id}: listed in --expect-fail but passed"),
            Outcome::Skip(m) => format!("skip {id}: {m}"),
            Outcome::Warn(m) => format!("warn {id} (recommended, not required): {m}"),
        }
    }

    /// The report lines for `r`: its line, then for a failure the end of
    /// the adapter's stderr, indented.
    pub fn lines(&self, r: &CaseResult) -> String {
        let mut s = self.line(&r.id);
        if let (Outcome::Fail(_) | Outcome::Warn(_), Some(tail)) = (self, &r.stderr) {
            s.push_str("\n    adapter stderr (last lines):");
            for l in tail.lines() {
                s.push_str("\n    | ");
                s.push_str(l);
            }
        }
        s
    }

    /// Whether this result makes the run fail (FAIL or XPASS).
    pub fn unexpected(&self) -> bool {
        matches!(self, Outcome::Fail(_) | Outcome::XPass)
    }
}

/// Counts of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// `ok`.
    pub passed: usize,
    /// `FAIL` and `XPASS`.
    pub failed: usize,
    /// `skip`.
    pub skipped: usize,
    /// `xfail`.
    pub expected_failures: usize,
    /// `warn`: recommended checks that failed.
    pub recommended_failed: usize,
    /// Index checks skipped because the reader answered `index unsupported`.
    pub index_unsupported: usize,
}

impl Summary {
    /// Counts `outcomes`.
    pub fn of<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Summary {
        let mut s = Summary::default();
        for o in outcomes {
            match o {
                Outcome::Ok => s.passed += 1,
                Outcome::Fail(_) | Outcome::XPass => s.failed += 1,
                Outcome::Skip(m) => {
                    s.skipped += 1;
                    if m == super::reader::UNSUPPORTED {
                        s.index_unsupported += 1;
                    }
                }
                Outcome::XFail(_) => s.expected_failures += 1,
                Outcome::Warn(_) => s.recommended_failed += 1,
            }
        }
        s
    }

    /// `N passed, M failed, K skipped`, then what a reader should not
    /// overlook: the index half unanswered, recommended checks failed.
    pub fn line(&self) -> String {
        let mut l = format!(
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        );
        if self.index_unsupported > 0 {
            l.push_str(&format!(
                "; index unsupported: the reader checked no index ({} index checks skipped; --require-index fails them)",
                self.index_unsupported
            ));
        }
        if self.recommended_failed > 0 {
            l.push_str(&format!(
                "; {} recommended (not required) checks failed",
                self.recommended_failed
            ));
        }
        l
    }
}

use crate::markup::escape as xml_escape;

/// JUnit XML of a run: one `testsuite` (`name`), one `testcase` a case id
/// (classname: the id's `half.group`). FAIL and XPASS are `failure`s;
/// skips are `skipped`; an expected failure is `skipped` too, with the
/// message `expected failure: ...` (as pytest reports xfail).
///
/// The corpus version is a suite property (`corpus_version`), and a
/// failure's adapter stderr tail its `system-err`.
pub fn junit(name: &str, version: &str, rows: &[(CaseResult, Outcome)]) -> String {
    let s = Summary::of(rows.iter().map(|r| &r.1));
    let total: f64 = rows.iter().map(|r| r.0.seconds).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let head = format!(
        "tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{total:.3}\"",
        rows.len(),
        s.failed,
        s.skipped + s.expected_failures + s.recommended_failed
    );
    x.push_str(&format!(
        "<testsuites name=\"{}\" {head}>\n",
        xml_escape(name)
    ));
    x.push_str(&format!(
        "  <testsuite name=\"{}\" {head}>\n",
        xml_escape(name)
    ));
    x.push_str(&format!(
        "    <properties>\n      <property name=\"corpus_version\" value=\"{}\"/>\n      <property name=\"summary\" value=\"{}\"/>\n    </properties>\n",
        xml_escape(version),
        xml_escape(&s.line())
    ));
    for (r, o) in rows {
        let mut parts = r.id.splitn(3, '/');
        let class = format!(
            "{}.{}",
            parts.next().unwrap_or(""),
            parts.next().unwrap_or("")
        );
        x.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            xml_escape(&class),
            xml_escape(&r.id),
            r.seconds
        ));
        let body = match o {
            Outcome::Ok => None,
            Outcome::Fail(m) => Some(format!(
                "<failure message=\"{0}\">{0}</failure>",
                xml_escape(m)
            )),
            Outcome::XPass => Some(
                "<failure message=\"listed in --expect-fail but passed\">XPASS</failure>".into(),
            ),
            Outcome::XFail(m) => Some(format!(
                "<skipped message=\"expected failure: {}\"/>",
                xml_escape(m)
            )),
            Outcome::Skip(m) => Some(format!("<skipped message=\"{}\"/>", xml_escape(m))),
            Outcome::Warn(m) => Some(format!(
                "<skipped message=\"recommended check failed: {}\"/>",
                xml_escape(m)
            )),
        };
        let body = match (body, &r.stderr) {
            (Some(b), Some(e)) if matches!(o, Outcome::Fail(_) | Outcome::Warn(_)) => Some(
                format!("{b}\n      <system-err>{}</system-err>", xml_escape(e)),
            ),
            (b, _) => b,
        };
        match body {
            None => x.push_str("/>\n"),
            Some(b) => x.push_str(&format!(">\n      {b}\n    </testcase>\n")),
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(id: &str, v: Verdict) -> CaseResult {
        CaseResult {
            id: id.into(),
            verdict: v,
            seconds: 0.5,
            stderr: Some("Error: boom\nNode.js v20".into()),
            recommended: false,
        }
    }

    #[test]
    fn expected_failures_turn_fail_into_xfail_and_pass_into_xpass() {
        let x = ExpectFail::parse("# list\n\nread/cases/a  # flaky\nwrite/cases/b\n");
        assert_eq!(
            x.entries,
            [
                (3, "read/cases/a".to_string()),
                (4, "write/cases/b".to_string())
            ]
        );
        let a = Outcome::of(&res("read/cases/a", Verdict::Fail("x".into())), &x);
        assert_eq!(a, Outcome::XFail("x".into()));
        assert!(!a.unexpected());
        let b = Outcome::of(&res("write/cases/b", Verdict::Pass), &x);
        assert!(b.unexpected());
        assert_eq!(
            b.line("write/cases/b"),
            "XPASS write/cases/b: listed in --expect-fail but passed"
        );
        let known: BTreeSet<String> = ["read/cases/a".to_string()].into();
        assert_eq!(x.unknown(&known), [&(4, "write/cases/b".to_string())]);
        let s = Summary::of([&a, &b, &Outcome::Ok, &Outcome::Skip("s".into())]);
        assert_eq!(s.line(), "1 passed, 1 failed, 1 skipped");
        assert_eq!(s.expected_failures, 1);
    }

    #[test]
    fn junit_escapes_messages() {
        let r = res("read/cases/a", Verdict::Fail("<&\"'\u{1}>".into()));
        let o = Outcome::of(&r, &ExpectFail::default());
        assert_eq!(
            o.lines(&r),
            "FAIL read/cases/a: <&\"'\u{1}>\n    adapter stderr (last lines):\n    | Error: boom\n    | Node.js v20"
        );
        let x = junit("kit", "1.1.0", &[(r, o)]);
        assert!(
            x.contains("<system-err>Error: boom\nNode.js v20</system-err>"),
            "{x}"
        );
        assert!(x.contains("name=\"corpus_version\" value=\"1.1.0\""), "{x}");
        assert!(
            x.contains("message=\"&lt;&amp;&quot;&#39;\u{fffd}&gt;\""),
            "{x}"
        );
        assert!(x.contains("tests=\"1\" failures=\"1\""), "{x}");
        assert!(x.contains("classname=\"read.cases\""), "{x}");
    }
}
