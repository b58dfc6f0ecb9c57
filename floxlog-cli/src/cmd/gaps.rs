//! `floxlog gaps`: what a recording may have missed (see
//! `floxlog::see::gaps`).

use super::common::{parse_duration, report_listing, CmdResult, FilterArgs, TapeArgs};
use floxlog::see::gaps::{find_gaps, Gap, GapKind, GapOptions, GapReport};
use floxlog::time::{format_duration, format_ns};

/// Find quiet spans, trade-id and book-sequence jumps and damage.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Find what a recording may have missed, \
per symbol and record type, in one pass over the tape in time order.\n\n\
quiet: no event of a symbol and type for longer than --min-gap and than 10 times the series' \
typical interval (the median of the 32 intervals before and the 32 after the silence; a silence \
with fewer than 8 intervals around it is not judged), so a thin symbol's normal pace is not a gap.\n\
trade_id: a symbol's trade ids advance by 1 on at least 99% of steps, and jump here.\n\
book_seq: a symbol's non-zero book seq advances by 1 on at least 99% of steps, and jumps here.\n\
damage: a segment that fails its checks (file and byte offset), with the last event read from \
it and the first of its series' next segment; a listed segment that is missing.\n\n\
Times are exchange_ts_ns (UTC), with recv_ts_ns beside. Exit 0 when nothing was found, 1 when \
something was, 2 on usage errors, 3 when the tape cannot be read at all.")]
pub struct Args {
    #[command(flatten)]
    pub tape: TapeArgs,
    /// Shortest silence reported (e.g. 500ms, 1s, 5m).
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DURATION")]
    pub min_gap: i64,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// JSON Lines: one object per finding.
    #[arg(long)]
    pub json: bool,
    /// Skip frames of record types 1.0 does not define instead of stopping.
    #[arg(long)]
    pub skip_unknown: bool,
}

/// Runs `gaps`.
pub fn run(a: Args) -> CmdResult {
    let tape = a.tape.open()?;
    let filter = a.filter.filter(&tape)?;
    // Missing segments are findings of their own (damage).
    let _ = report_listing(&tape);
    let segments = tape.segments.len();
    let opts = GapOptions {
        min_gap_ns: a.min_gap,
        filter,
        read: super::common::read_options(a.skip_unknown),
    };
    let rep = find_gaps(tape, &opts)?;
    let unopened = rep
        .gaps
        .iter()
        .filter(|g| g.kind == GapKind::Damage && g.offset.is_none() && g.from_ns.is_none())
        .count();
    if rep.events == 0 && segments > 0 && unopened >= segments {
        for g in &rep.gaps {
            eprintln!("floxlog: error: {}", text(g));
        }
        return Ok(3);
    }
    if a.json {
        for g in &rep.gaps {
            outln!("{}", g.to_json());
        }
    } else {
        for g in &rep.gaps {
            outln!("{}", text(g));
        }
        outln!("{}", summary(&rep));
    }
    Ok(u8::from(!rep.gaps.is_empty()))
}

fn time(ns: Option<i64>) -> String {
    ns.map_or_else(|| "?".to_string(), format_ns)
}

/// One finding as a line for people.
fn text(g: &Gap) -> String {
    let who = match (g.symbol_id, &g.symbol) {
        (Some(id), Some(n)) => format!("{n} ({id}) {}", g.type_name.unwrap_or("")),
        (Some(id), None) => format!("symbol {id} {}", g.type_name.unwrap_or("")),
        _ => String::new(),
    };
    let span = format!(
        "{} .. {}{}",
        time(g.from_ns),
        time(g.to_ns),
        g.duration_ns()
            .map_or(String::new(), |d| format!(" ({})", format_duration(d)))
    );
    let recv = match (g.from_recv_ns, g.to_recv_ns) {
        (None, None) => String::new(),
        (f, t) => format!("; received {} .. {}", time(f), time(t)),
    };
    match g.kind {
        GapKind::Quiet => format!(
            "quiet     {who}: no events {span}, typically one every {}{recv}",
            format_duration(g.typical_ns.unwrap_or(0))
        ),
        GapKind::TradeId | GapKind::BookSeq => {
            let (f, l) = (g.first_missing.unwrap_or(0), g.last_missing.unwrap_or(0));
            format!(
                "{:9} {who}: {} {f}..{l} missing ({}) between {span}{recv}",
                g.kind.as_str(),
                if g.kind == GapKind::TradeId {
                    "trade ids"
                } else {
                    "seq"
                },
                l.saturating_sub(f).saturating_add(1)
            )
        }
        GapKind::Damage => {
            format!(
            "damage    {}{}: {}; readable events around it: last before {}, next after {}{recv}",
            g.file.as_ref().map_or("?".into(), |p| p.display().to_string()),
            g.offset.map_or(String::new(), |o| format!(" at byte {o}")),
            g.message.as_deref().unwrap_or(""),
            time(g.from_ns),
            time(g.to_ns),
        )
        }
    }
}

fn summary(rep: &GapReport) -> String {
    let count = |k: GapKind| rep.gaps.iter().filter(|g| g.kind == k).count();
    format!(
        "{}: {} quiet, {} trade_id, {} book_seq, {} damage in {} events{}",
        if rep.gaps.is_empty() {
            "no gaps"
        } else {
            "gaps found"
        },
        count(GapKind::Quiet),
        count(GapKind::TradeId),
        count(GapKind::BookSeq),
        count(GapKind::Damage),
        rep.events,
        if rep.not_kept > 0 {
            format!(" ({} more not listed)", rep.not_kept)
        } else {
            String::new()
        }
    )
}
