//! Which checks a corpus holds: one case id per check,
//! `<half>/<group>/<name>` (e.g. `read/cases/trades-7`,
//! `index/corrupt/index-crc`, `write/cases/rotation`).

use super::corpus::{BrokenCase, Case, Corpus, CorruptCase, Group};

/// What a check exercises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Half {
    /// The reader adapter's events (and errors).
    Read,
    /// The reader adapter's index check.
    Index,
    /// The writer adapter's segments.
    Write,
}

impl Half {
    /// The first part of a case id.
    pub fn as_str(self) -> &'static str {
        match self {
            Half::Read => "read",
            Half::Index => "index",
            Half::Write => "write",
        }
    }
}

/// The case folder a check is about.
#[derive(Clone, Copy, Debug)]
pub enum Target<'c> {
    /// A case of `cases/` or `real/`.
    Case(&'c Case),
    /// A case of `corrupt/`.
    Corrupt(&'c CorruptCase),
    /// A folder whose `case.json` could not be loaded: every check fails.
    Broken(&'c BrokenCase),
}

/// One check to run.
#[derive(Clone, Debug)]
pub struct Planned<'c> {
    /// Its case id.
    pub id: String,
    /// What it exercises.
    pub half: Half,
    /// What it is about.
    pub target: Target<'c>,
}

fn id(half: Half, group: Group, name: &str) -> String {
    format!("{}/{}/{name}", half.as_str(), group.as_str())
}

/// Every check of the corpus for the halves asked (`read` also plans the
/// index checks, which the reader adapter answers), in run order: by half,
/// then group, then name.
pub fn plan(corpus: &Corpus, read: bool, write: bool) -> Vec<Planned<'_>> {
    let mut v = Vec::new();
    for half in [Half::Read, Half::Index, Half::Write] {
        let on = if half == Half::Write { write } else { read };
        if !on {
            continue;
        }
        for group in Group::ALL {
            let mut group_targets: Vec<(&str, Target<'_>)> = Vec::new();
            // A tape is read whole (`--tape`), never index-checked or written.
            if group == Group::Tapes && half != Half::Read {
                continue;
            }
            let cases: &[Case] = match group {
                Group::Cases => &corpus.cases,
                Group::Real => &corpus.real,
                Group::Tapes => &corpus.tapes,
                Group::Corrupt => &[],
            };
            for c in cases {
                let writes = c.writer.is_some() && c.events_path.is_some();
                // A writer case with no segments (empty input) has nothing
                // to read; a read-only case without segments stays a corpus
                // error, reported by its read.
                if half != Half::Write && writes && c.segments.is_empty() {
                    continue;
                }
                if half != Half::Write || (group == Group::Cases && writes) {
                    group_targets.push((&c.name, Target::Case(c)));
                }
            }
            if group == Group::Corrupt && half != Half::Write {
                for c in &corpus.corrupt {
                    group_targets.push((&c.name, Target::Corrupt(c)));
                }
            }
            for b in corpus.broken.iter().filter(|b| b.group == group) {
                if half != Half::Write || (group == Group::Cases && b.has_events) {
                    group_targets.push((&b.name, Target::Broken(b)));
                }
            }
            group_targets.sort_by(|a, b| a.0.cmp(b.0));
            for (name, target) in group_targets {
                v.push(Planned {
                    id: id(half, group, name),
                    half,
                    target,
                });
            }
        }
    }
    v
}

/// Every case id the corpus defines, whatever adapters are given (to check
/// an expected-failure list against).
pub fn all_ids(corpus: &Corpus) -> std::collections::BTreeSet<String> {
    plan(corpus, true, true).into_iter().map(|p| p.id).collect()
}
