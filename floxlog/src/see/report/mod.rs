//! `report`: one self-contained HTML page of a tape, built in one
//! bounded-memory pass ([`buckets`]): the summary, a timeline of segments
//! per series with damage and gaps marked, events per second per record
//! type, per symbol the last-trade price and volume, spread and top-of-book
//! depth of a chosen (or the busiest) symbol, and the gaps table.

mod books;
pub mod buckets;
pub mod charts;
pub mod html;

use crate::see::gaps::feed::read_finding_gaps;
use crate::see::gaps::{GapFinder, GapKind, GapReport, TapeInfo, DEFAULT_MIN_GAP_NS};
use crate::tape::check::{inspect_tape, InspectOptions, Inspection};
use crate::tape::{Filter, Tape, TapeError};
use crate::time::{format_duration, format_ns};
use buckets::{Buckets, SymbolSeries, BUCKETS};
use charts::{Line, Span, TimeAxis, AMBER, PALETTE, PURPLE, RED};
use floxlog_core::segment_header::flags;
use floxlog_core::{frame_type, ReadOptions};
use html::{escape, kv};
use std::collections::HashSet;
use std::fmt::Write;

/// Symbols given price and volume charts (the busiest by trades).
pub const PRICE_CHARTS: usize = 6;

/// Options of [`build`].
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The symbol whose book is charted (`None`: the one with the most
    /// book events).
    pub symbol: Option<u32>,
    /// Shortest quiet gap, ns (as `gaps --min-gap`).
    pub min_gap_ns: i64,
    /// Codec options.
    pub read: ReadOptions,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            symbol: None,
            min_gap_ns: DEFAULT_MIN_GAP_NS,
            read: ReadOptions::default(),
        }
    }
}

/// What one pass over a tape gathered.
pub struct Seen {
    /// Headers and listing (inspect without reading frames).
    pub insp: Inspection,
    /// The downsampled events.
    pub buckets: Buckets,
    /// Per segment: first and last exchange_ts_ns read.
    pub spans: Vec<Option<(i64, i64)>>,
    /// The gaps.
    pub gaps: GapReport,
    /// Events per frame type.
    pub by_type: [u64; 6],
    /// Distinct symbols.
    pub symbols: usize,
    /// Tape path(s) as given.
    pub title: String,
    /// The symbol charted for the book.
    pub book_symbol: Option<u32>,
}

/// Reads `tape` once and gathers everything the page shows.
pub fn see(tape: Tape, opts: &ReportOptions) -> Result<Seen, TapeError> {
    let insp = inspect_tape(&tape, InspectOptions { quick: true }, &mut |_| {});
    let info = TapeInfo::of(&tape);
    let title = tape
        .dirs
        .iter()
        .map(|d| d.path.display().to_string())
        .chain(
            tape.segments
                .iter()
                .filter(|s| s.dir.is_none())
                .map(|s| s.path.display().to_string()),
        )
        .collect::<Vec<_>>()
        .join(", ");
    let n = info.series.len();
    let finder = GapFinder::new(opts.min_gap_ns, n);
    let mut buckets = Buckets::default();
    // Events per type and each segment's time span come from what the
    // buckets and the gap finder (on its own thread) keep anyway: nothing
    // more per event on the reading thread.
    let (end, finder) = read_finding_gaps(tape, Filter::default(), opts.read, finder, |_, ev| {
        buckets.push(ev)
    })?;
    buckets.finish();
    let symbols = buckets.distinct_symbols();
    let by_type = buckets.events_by_type();
    let spans = finder.spans();
    let gaps = finder.finish(&info, &end);
    let book_symbol = opts.symbol.or_else(|| {
        buckets
            .symbols
            .iter()
            .filter(|(_, s)| s.book_events > 0)
            .max_by_key(|(id, s)| (s.book_events, std::cmp::Reverse(*id)))
            .map(|(id, _)| id)
    });
    Ok(Seen {
        insp,
        buckets,
        spans,
        gaps,
        by_type,
        symbols,
        title,
        book_symbol,
    })
}

impl Seen {
    fn name(&self, id: u32) -> String {
        match self.insp.symbol_names.iter().find(|n| n.0 == id) {
            Some((_, n)) => format!("{n} ({id})"),
            None => format!("symbol {id}"),
        }
    }

    fn axis(&self) -> TimeAxis {
        let origin = self.buckets.origin.unwrap_or(0);
        let last = self.buckets.last_ts.unwrap_or(origin);
        TimeAxis {
            origin,
            span_s: ((last - origin) as f64 / 1e9).max(1e-3),
        }
    }

    /// The summary table (what `inspect` totals give).
    pub fn summary(&self, out: &mut String) {
        let t = &self.insp.total;
        let events: u64 = self.by_type.iter().sum();
        let types = (1..6)
            .filter(|&i| self.by_type[i] > 0)
            .map(|i| {
                format!(
                    "{} {}",
                    frame_type::name(i as u8).unwrap_or("?"),
                    self.by_type[i]
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let time = match (self.buckets.origin, self.buckets.last_ts) {
            (Some(a), Some(b)) => format!(
                "{} .. {} ({})",
                format_ns(a),
                format_ns(b),
                format_duration(b - a)
            ),
            _ => "no events".into(),
        };
        let mut names: Vec<String> = self
            .buckets
            .symbols
            .iter()
            .map(|(id, _)| self.name(id))
            .collect();
        names.sort();
        let shown = names
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let more = names.len().saturating_sub(30);
        let count = |k: GapKind| self.gaps.gaps.iter().filter(|g| g.kind == k).count();
        kv(
            out,
            &[
                ("segments", format!("{} ({} bytes)", t.segments, t.bytes)),
                ("events", format!("{events} ({})", escape(&types))),
                ("time (UTC, exchange)", time),
                (
                    "symbols",
                    format!(
                        "{}: {}{}",
                        self.symbols,
                        escape(&shown),
                        if more > 0 {
                            format!(", ... ({more} more)")
                        } else {
                            String::new()
                        }
                    ),
                ),
                (
                    "findings",
                    format!(
                        "{} damage, {} quiet gaps, {} trade-id gaps, {} book-seq gaps",
                        count(GapKind::Damage),
                        count(GapKind::Quiet),
                        count(GapKind::TradeId),
                        count(GapKind::BookSeq)
                    ),
                ),
            ],
        );
    }

    /// The timeline: one row per series of segments (lz4 / none,
    /// damaged in red), and a row of findings.
    pub fn timeline(&self, out: &mut String, size: (u32, u32)) {
        let axis = self.axis();
        let mut rows: Vec<String> = Vec::new();
        let mut spans = Vec::new();
        let damaged: HashSet<&std::path::Path> = self
            .gaps
            .gaps
            .iter()
            .filter(|g| g.kind == GapKind::Damage)
            .filter_map(|g| g.file.as_deref())
            .collect();
        for (i, s) in self.insp.segments.iter().enumerate() {
            let row = match rows.iter().position(|r| r == &s.series) {
                Some(r) => r,
                None => {
                    rows.push(s.series.clone());
                    rows.len() - 1
                }
            };
            let Some((from, to)) = self.spans.get(i).copied().flatten() else {
                continue;
            };
            let lz4 = s.header.as_ref().is_some_and(|h| h.has(flags::COMPRESSED));
            let color = if damaged.contains(s.path.as_path()) {
                RED
            } else if lz4 {
                PALETTE[0]
            } else {
                PALETTE[2]
            };
            spans.push(Span {
                row,
                from,
                to,
                color,
            });
        }
        let gap_row = rows.len();
        rows.push("findings".into());
        for g in &self.gaps.gaps {
            let (Some(from), Some(to)) = (g.from_ns.or(g.to_ns), g.to_ns.or(g.from_ns)) else {
                continue;
            };
            let color = match g.kind {
                GapKind::Quiet => AMBER,
                GapKind::Damage => RED,
                _ => PURPLE,
            };
            spans.push(Span {
                row: gap_row,
                from,
                to,
                color,
            });
        }
        out.push_str(&charts::timeline(
            "Segments and findings over time (UTC)",
            axis,
            &rows,
            &spans,
            size,
        ));
        let legend = |c: charts::RGBColor, what: &str| {
            format!(
                "<span style=\"background:rgb({},{},{})\"></span>{what}",
                c.0, c.1, c.2
            )
        };
        let _ = write!(
            out,
            "<p class=\"legend\">{}{}{}{}{}</p>",
            legend(PALETTE[0], "segment (lz4)"),
            legend(PALETTE[2], "segment (uncompressed)"),
            legend(RED, "damage"),
            legend(AMBER, "quiet gap"),
            legend(PURPLE, "trade-id / book-seq gap"),
        );
    }

    fn xs(&self) -> Vec<f64> {
        let axis = self.axis();
        (0..self.buckets.used().min(BUCKETS))
            .map(|i| axis.x(self.buckets.start(i)))
            .collect()
    }

    fn points(&self, v: &[f64], scale: f64) -> Vec<(f64, f64)> {
        self.xs()
            .into_iter()
            .zip(v)
            .map(|(x, y)| (x, y * scale))
            .collect()
    }

    /// Events per second per record type.
    pub fn rates(&self, out: &mut String) {
        let per_s = 1e9 / self.buckets.width as f64;
        let pts: Vec<(String, Vec<(f64, f64)>)> = (1..6)
            .filter(|&i| self.by_type[i] > 0)
            .map(|i| {
                (
                    frame_type::name(i as u8).unwrap_or("?").to_string(),
                    self.points(&self.buckets.by_type[i].v, per_s),
                )
            })
            .collect();
        let lines: Vec<Line<'_>> = pts
            .iter()
            .map(|(n, p)| Line {
                name: n.clone(),
                points: p,
            })
            .collect();
        out.push_str(&charts::lines(
            &format!(
                "Events per second (buckets of {})",
                format_duration(self.buckets.width)
            ),
            "events/s",
            self.axis(),
            &lines,
            (1000, 300),
        ));
    }

    fn busiest(&self) -> Vec<(u32, &SymbolSeries)> {
        let mut v: Vec<(u32, &SymbolSeries)> = self
            .buckets
            .symbols
            .iter()
            .filter(|(_, s)| s.trades > 0)
            .collect();
        v.sort_by_key(|(id, s)| (std::cmp::Reverse(s.trades), *id));
        v.truncate(PRICE_CHARTS);
        v
    }

    /// Per symbol (the busiest [`PRICE_CHARTS`]): last-trade price and
    /// volume per bucket.
    pub fn trades(&self, out: &mut String) {
        for (id, s) in self.busiest() {
            let name = self.name(id);
            let price = self.points(&s.price.v, 1.0);
            let volume = self.points(&s.volume.v, 1.0);
            let _ = write!(
                out,
                "<h3>{} ({} trades)</h3><div class=\"pair\">",
                escape(&name),
                s.trades
            );
            out.push_str(&charts::lines(
                &format!("{name}: last trade price"),
                "price",
                self.axis(),
                &[Line {
                    name: String::new(),
                    points: &price,
                }],
                (500, 240),
            ));
            out.push_str(&charts::lines(
                &format!("{name}: volume per bucket"),
                "qty",
                self.axis(),
                &[Line {
                    name: String::new(),
                    points: &volume,
                }],
                (500, 240),
            ));
            out.push_str("</div>");
        }
    }

    /// Spread and top-of-book depth of the book symbol.
    pub fn book(&self, out: &mut String) {
        let Some(id) = self.book_symbol else {
            out.push_str("<p>No book events.</p>");
            return;
        };
        let Some(s) = self.buckets.symbols.get(id) else {
            let _ = write!(out, "<p>No book events of {}.</p>", escape(&self.name(id)));
            return;
        };
        let name = self.name(id);
        let spread = self.points(&s.spread.v, 1.0);
        let bid = self.points(&s.bid_qty.v, 1.0);
        let ask = self.points(&s.ask_qty.v, 1.0);
        let _ = write!(
            out,
            "<h3>{} ({} book events)</h3><div class=\"pair\">",
            escape(&name),
            s.book_events
        );
        out.push_str(&charts::lines(
            &format!("{name}: spread (best ask - best bid)"),
            "spread",
            self.axis(),
            &[Line {
                name: String::new(),
                points: &spread,
            }],
            (500, 260),
        ));
        out.push_str(&charts::lines(
            &format!("{name}: top-of-book quantity"),
            "qty",
            self.axis(),
            &[
                Line {
                    name: "best bid qty".into(),
                    points: &bid,
                },
                Line {
                    name: "best ask qty".into(),
                    points: &ask,
                },
            ],
            (500, 260),
        ));
        out.push_str("</div>");
    }

    /// The whole page.
    pub fn page(&self) -> String {
        let mut o = String::with_capacity(1 << 20);
        let title = escape(&self.title);
        let _ = write!(
            o,
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>floxlog report: {title}</title>\
<style>{}</style></head><body><h1>floxlog report</h1><p><code>{title}</code>, written by floxlog {}</p>",
            html::STYLE,
            env!("CARGO_PKG_VERSION")
        );
        o.push_str("<section id=\"summary\"><h2>Summary</h2>");
        self.summary(&mut o);
        o.push_str("</section><section id=\"timeline\"><h2>Timeline</h2>");
        let rows = self
            .insp
            .segments
            .iter()
            .map(|s| &s.series)
            .collect::<HashSet<_>>()
            .len();
        self.timeline(&mut o, (1000, 90 + 34 * (rows as u32 + 1)));
        o.push_str("</section><section id=\"rates\"><h2>Events per second per record type</h2>");
        self.rates(&mut o);
        o.push_str(
            "</section><section id=\"trades\"><h2>Last-trade price and volume per symbol</h2>",
        );
        self.trades(&mut o);
        o.push_str("</section><section id=\"book\"><h2>Spread and top-of-book depth</h2>");
        self.book(&mut o);
        let _ = write!(
            o,
            "</section><section id=\"gaps-section\"><h2>Gaps and damage ({})</h2>",
            self.gaps.gaps.len()
        );
        if self.gaps.gaps.is_empty() {
            o.push_str("<p>No gaps or damage found.</p>");
        }
        html::gaps_table(&mut o, &self.gaps.gaps, self.gaps.not_kept);
        let _ = write!(
            o,
            "</section><p id=\"status\">report not rendered (script did not run)</p><script>{}</script></body></html>",
            html::SCRIPT
        );
        o
    }

    /// A small HTML summary with the timeline (notebooks' `_repr_html_`).
    pub fn card(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<div><b>floxlog tape</b> <code>{}</code>",
            escape(&self.title)
        );
        self.summary(&mut o);
        self.timeline(&mut o, (640, 70 + 26 * 3));
        o.push_str("</div>");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{generate, metadata, SynthConfig};
    use crate::tape::{OpenOptions, TapeWriter, TapeWriterConfig};

    #[test]
    fn the_page_shows_summary_timeline_charts_and_gaps() {
        let d = tempfile::tempdir().unwrap();
        let synth = SynthConfig {
            trades: 6000,
            book_deltas: 4000,
            ..SynthConfig::default()
        };
        let cfg = TapeWriterConfig {
            max_segment_bytes: 64 << 10,
            ..TapeWriterConfig::default()
        };
        let mut w = TapeWriter::create(d.path(), cfg).unwrap();
        generate(&synth, |ev| w.append(ev)).unwrap();
        w.set_metadata(metadata(&synth, 6000, 4000));
        w.close().unwrap();
        let tape = Tape::open(&[d.path().to_path_buf()], OpenOptions::default()).unwrap();
        let seen = see(tape, &ReportOptions::default()).unwrap();
        assert_eq!(seen.by_type.iter().sum::<u64>(), seen.gaps.events);
        assert!(seen.gaps.gaps.is_empty(), "{:?}", seen.gaps.gaps);
        let page = seen.page();
        if let Some(p) = std::env::var_os("FLOXLOG_REPORT_SAMPLE") {
            std::fs::write(p, &page).unwrap();
        }
        for want in [
            "<section id=\"summary\">",
            "BTCUSDT (1)",
            "SOLUSDT (3)",
            "segment (lz4)",
            "Events per second",
            "last trade price",
            "spread (best ask - best bid)",
            "No gaps or damage found.",
            "data-rendered",
        ] {
            assert!(page.contains(want), "page lacks {want}");
        }
        // One SVG per chart: timeline, rates, 3 symbols x 2, book x 2.
        assert_eq!(page.matches("<svg").count(), 1 + 1 + 6 + 2);
        assert!(!page.contains("chart not drawn"));
        // Nothing is fetched: no sources or links off the page.
        assert!(!page.contains("src=") && !page.contains("href=\"http"));
    }
}
