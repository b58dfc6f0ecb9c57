//! `gaps`: what a recording may have missed, per symbol and record type,
//! found in one time-ordered pass with memory bounded per series:
//!
//! - quiet gaps ([`quiet`]): silences longer than the minimum gap and
//!   than [`quiet::QUIET_MULTIPLE`] times the series' typical pace;
//! - trade-id and book-sequence jumps ([`steps`]) in counters that
//!   otherwise advance by 1;
//! - damage: segments that fail their checks, with the file, byte offset
//!   and the readable events on either side; listed segments that are
//!   missing.
//!
//! Gaps are judged on `exchange_ts_ns`, with `recv_ts_ns` beside.

pub mod feed;
pub mod quiet;
pub mod steps;

use crate::see::ids::IdTable;
use crate::see::source::ReadEnd;
use crate::tape::{Filter, FindingKind, Tape, TapeError};
use feed::{read_finding_gaps, Counted, Key};
use floxlog_core::{frame_type, Event, ReadOptions};
use quiet::{Quiet, QuietSeries};
use std::collections::HashMap;
use std::path::PathBuf;
use steps::Steps;

/// Default `--min-gap`: one second.
pub const DEFAULT_MIN_GAP_NS: i64 = 1_000_000_000;
/// Findings kept in all (a tape with more reports the count).
pub const MAX_FINDINGS: usize = 100_000;

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GapKind {
    /// No events of a series for longer than its pace explains.
    Quiet,
    /// A symbol's trade ids jump.
    TradeId,
    /// A symbol's book sequence numbers jump.
    BookSeq,
    /// A segment fails its checks or is missing.
    Damage,
}

impl GapKind {
    /// Its name in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            GapKind::Quiet => "quiet",
            GapKind::TradeId => "trade_id",
            GapKind::BookSeq => "book_seq",
            GapKind::Damage => "damage",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// What it is.
    pub kind: GapKind,
    /// The symbol (none for damage).
    pub symbol_id: Option<u32>,
    /// Its name, where the tape's metadata gives one.
    pub symbol: Option<String>,
    /// Record type: a frame type name, or `book` for sequence gaps.
    pub type_name: Option<&'static str>,
    /// exchange_ts_ns of the last event before (damage: the last event
    /// read from the damaged segment).
    pub from_ns: Option<i64>,
    /// exchange_ts_ns of the first event after (damage: the first event
    /// of the series' next segment).
    pub to_ns: Option<i64>,
    /// recv_ts_ns beside `from_ns`.
    pub from_recv_ns: Option<i64>,
    /// recv_ts_ns beside `to_ns`.
    pub to_recv_ns: Option<i64>,
    /// Id and sequence gaps: first value missing.
    pub first_missing: Option<u64>,
    /// Id and sequence gaps: last value missing.
    pub last_missing: Option<u64>,
    /// Quiet gaps: the typical interval of the series around it.
    pub typical_ns: Option<i64>,
    /// Damage: the file.
    pub file: Option<PathBuf>,
    /// Damage: the byte offset.
    pub offset: Option<u64>,
    /// Damage: what failed.
    pub message: Option<String>,
}

impl Gap {
    fn new(kind: GapKind) -> Gap {
        Gap {
            kind,
            symbol_id: None,
            symbol: None,
            type_name: None,
            from_ns: None,
            to_ns: None,
            from_recv_ns: None,
            to_recv_ns: None,
            first_missing: None,
            last_missing: None,
            typical_ns: None,
            file: None,
            offset: None,
            message: None,
        }
    }

    /// Its span in ns, when both ends are known.
    pub fn duration_ns(&self) -> Option<i64> {
        Some(self.to_ns?.saturating_sub(self.from_ns?))
    }

    /// As one JSON object (`gaps --json` writes one a line).
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), self.kind.as_str().into());
        let mut put = |k: &str, v: serde_json::Value| {
            if !v.is_null() {
                m.insert(k.into(), v);
            }
        };
        put("symbol_id", self.symbol_id.into());
        put("symbol", self.symbol.clone().into());
        put("type", self.type_name.into());
        put("from_ns", self.from_ns.into());
        put("to_ns", self.to_ns.into());
        put("duration_ns", self.duration_ns().into());
        put("from_recv_ns", self.from_recv_ns.into());
        put("to_recv_ns", self.to_recv_ns.into());
        put("first_missing", self.first_missing.into());
        put("last_missing", self.last_missing.into());
        put("typical_ns", self.typical_ns.into());
        put(
            "file",
            self.file.as_ref().map(|p| p.display().to_string()).into(),
        );
        put("offset", self.offset.into());
        put("message", self.message.clone().into());
        serde_json::Value::Object(m)
    }
}

/// Options of [`find_gaps`].
#[derive(Clone, Debug)]
pub struct GapOptions {
    /// Shortest silence reported, ns.
    pub min_gap_ns: i64,
    /// Which events are looked at.
    pub filter: Filter,
    /// Codec options.
    pub read: ReadOptions,
}

impl Default for GapOptions {
    fn default() -> Self {
        GapOptions {
            min_gap_ns: DEFAULT_MIN_GAP_NS,
            filter: Filter::default(),
            read: ReadOptions::default(),
        }
    }
}

/// What [`find_gaps`] found.
#[derive(Debug, Default)]
pub struct GapReport {
    /// Findings in time order (damage without times last).
    pub gaps: Vec<Gap>,
    /// Findings beyond those kept ([`MAX_FINDINGS`], [`steps::JUMPS_KEPT`]).
    pub not_kept: u64,
    /// Events read.
    pub events: u64,
}

/// First and last event (exchange, recv) of a segment.
type Ends = ((i64, i64), (i64, i64));

/// The detector, fed event by event (the report feeds it from its own
/// pass); [`GapFinder::finish`] adds the damage and orders the findings.
pub struct GapFinder {
    min_gap_ns: i64,
    /// Per symbol, its record types' paces (a few types: a short search).
    /// Tables by id, not hash maps: they are looked up on every event.
    quiet: IdTable<Vec<(u8, QuietSeries)>>,
    trades: IdTable<Steps>,
    books: IdTable<Steps>,
    found: Vec<(u32, u8, Quiet)>,
    scratch: Vec<Quiet>,
    ends: Vec<Option<Ends>>,
}

impl GapFinder {
    /// A detector for a tape of `segments` segments.
    pub fn new(min_gap_ns: i64, segments: usize) -> GapFinder {
        GapFinder {
            min_gap_ns,
            quiet: IdTable::default(),
            trades: IdTable::default(),
            books: IdTable::default(),
            found: Vec::new(),
            scratch: Vec::new(),
            ends: vec![None; segments],
        }
    }

    /// Takes the next event (time order) of segment `segment`.
    pub fn push(&mut self, segment: usize, ev: &Event<'_>) {
        self.push_key(&Key::of(segment, ev));
    }

    /// [`GapFinder::push`] of the event `k` was taken from.
    pub fn push_key(&mut self, k: &Key) {
        let (ts, recv, sym, ft) = (k.ts, k.recv, k.symbol, k.frame_type);
        if let Some(e) = self.ends.get_mut(k.segment as usize) {
            match e {
                Some((_, last)) => *last = (ts, recv),
                None => *e = Some(((ts, recv), (ts, recv))),
            }
        }
        let types = self.quiet.get_or_insert_with(sym, Vec::new);
        let i = match types.iter().position(|(t, _)| *t == ft) {
            Some(i) => i,
            None => {
                types.push((ft, QuietSeries::default()));
                types.len() - 1
            }
        };
        types[i]
            .1
            .push(ts, recv, self.min_gap_ns, &mut self.scratch);
        // Rare: not a drain per event.
        if !self.scratch.is_empty() {
            if self.found.len() < MAX_FINDINGS {
                self.found
                    .extend(self.scratch.drain(..).map(|g| (sym, ft, g)));
            }
            self.scratch.clear();
        }
        let counters = match k.counted {
            Counted::Trade => &mut self.trades,
            Counted::Book => &mut self.books,
            Counted::Nothing => return,
        };
        counters
            .get_or_insert_with(sym, Steps::default)
            .push(k.counter, ts, recv);
    }

    /// Each segment's first and last exchange_ts_ns among the events
    /// taken (in time order, its earliest and latest).
    pub fn spans(&self) -> Vec<Option<(i64, i64)>> {
        self.ends
            .iter()
            .map(|e| e.map(|((first, _), (last, _))| (first, last)))
            .collect()
    }

    /// The findings: the series' gaps, then the read's damage and the
    /// tape's missing segments.
    pub fn finish(mut self, tape: &TapeInfo, end: &ReadEnd) -> GapReport {
        let mut rep = GapReport {
            events: end.events,
            ..GapReport::default()
        };
        for (sym, types) in std::mem::take(&mut self.quiet).into_entries() {
            for (ft, mut q) in types {
                q.finish(&mut self.scratch);
                self.found
                    .extend(self.scratch.drain(..).map(|g| (sym, ft, g)));
            }
        }
        let name = |id: u32| tape.names.get(&id).cloned();
        for (sym, ft, g) in std::mem::take(&mut self.found) {
            rep.gaps.push(Gap {
                symbol_id: Some(sym),
                symbol: name(sym),
                type_name: frame_type::name(ft),
                from_ns: Some(g.from_ns),
                to_ns: Some(g.to_ns),
                from_recv_ns: Some(g.from_recv_ns),
                to_recv_ns: Some(g.to_recv_ns),
                typical_ns: Some(g.typical_ns),
                ..Gap::new(GapKind::Quiet)
            });
        }
        for (kind, type_name, counters) in [
            (GapKind::TradeId, "trade", std::mem::take(&mut self.trades)),
            (GapKind::BookSeq, "book", std::mem::take(&mut self.books)),
        ] {
            for (sym, s) in counters.into_entries() {
                if s.consecutive() {
                    rep.not_kept += s.jumps_seen.saturating_sub(steps::JUMPS_KEPT as u64);
                }
                for j in s.into_jumps() {
                    rep.gaps.push(Gap {
                        symbol_id: Some(sym),
                        symbol: name(sym),
                        type_name: Some(type_name),
                        from_ns: Some(j.from_ns),
                        to_ns: Some(j.to_ns),
                        from_recv_ns: Some(j.from_recv_ns),
                        to_recv_ns: Some(j.to_recv_ns),
                        first_missing: Some(j.first_missing),
                        last_missing: Some(j.last_missing),
                        ..Gap::new(kind)
                    });
                }
            }
        }
        for p in &end.damaged {
            let e = p.to_error();
            rep.gaps.push(self.damage_at(tape, p.segment, e));
        }
        for e in &end.open_errors {
            let seg = tape
                .series
                .iter()
                .position(|s| Some(&s.0) == e.path.as_ref());
            let mut g = Gap {
                file: e.path.clone(),
                offset: e.offset,
                message: Some(e.message.clone()),
                ..Gap::new(GapKind::Damage)
            };
            if let Some(i) = seg {
                g = self.damage_at(tape, i, e.clone());
            }
            rep.gaps.push(g);
        }
        for (path, what) in &tape.missing {
            rep.gaps.push(Gap {
                file: Some(path.clone()),
                message: Some(what.clone()),
                ..Gap::new(GapKind::Damage)
            });
        }
        rep.gaps
            .sort_by_key(|g| (g.from_ns.is_none(), g.from_ns, g.to_ns, g.kind, g.symbol_id));
        if rep.gaps.len() > MAX_FINDINGS {
            rep.not_kept += (rep.gaps.len() - MAX_FINDINGS) as u64;
            rep.gaps.truncate(MAX_FINDINGS);
        }
        rep
    }

    /// Damage in segment `i`: its file and offset, the last event read
    /// from it, and the first event of the next segment of its series.
    fn damage_at(&self, tape: &TapeInfo, i: usize, e: TapeError) -> Gap {
        let before = self.ends.get(i).copied().flatten().map(|(_, last)| last);
        let after = tape.series.get(i).and_then(|(_, series)| {
            (i + 1..tape.series.len())
                .filter(|&k| &tape.series[k].1 == series)
                .find_map(|k| self.ends.get(k).copied().flatten())
                .map(|(first, _)| first)
        });
        Gap {
            file: e.path.clone(),
            offset: e.offset,
            message: Some(e.message),
            from_ns: before.map(|b| b.0),
            from_recv_ns: before.map(|b| b.1),
            to_ns: after.map(|a| a.0),
            to_recv_ns: after.map(|a| a.1),
            ..Gap::new(GapKind::Damage)
        }
    }
}

/// What the findings need of the tape once its read has taken it: each
/// segment's path and series, symbol names, missing segments.
#[derive(Debug, Default)]
pub struct TapeInfo {
    /// Per segment, in tape order: path and series.
    pub series: Vec<(PathBuf, String)>,
    /// Symbol names from the metadata.
    pub names: HashMap<u32, String>,
    /// Listed segments that were not read: path and why.
    pub missing: Vec<(PathBuf, String)>,
}

impl TapeInfo {
    /// Takes what the findings need from `tape`.
    pub fn of(tape: &Tape) -> TapeInfo {
        TapeInfo {
            series: tape
                .segments
                .iter()
                .map(|s| (s.path.clone(), s.series.clone()))
                .collect(),
            names: tape.symbol_names().into_iter().collect(),
            missing: tape
                .findings
                .iter()
                .filter(|f| f.kind == FindingKind::MissingSegment)
                .map(|f| (f.path.clone().unwrap_or_default(), f.message.clone()))
                .collect(),
        }
    }
}

/// Reads `tape` once and reports its gaps.
pub fn find_gaps(tape: Tape, opts: &GapOptions) -> Result<GapReport, TapeError> {
    let info = TapeInfo::of(&tape);
    let finder = GapFinder::new(opts.min_gap_ns, info.series.len());
    let (end, finder) = read_finding_gaps(tape, opts.filter.clone(), opts.read, finder, |_, _| {})?;
    Ok(finder.finish(&info, &end))
}
