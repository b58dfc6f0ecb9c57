//! The report page: self-contained HTML (inline SVG, inline style and
//! script, nothing fetched), readable offline and attachable to a ticket.

use crate::see::gaps::{Gap, GapKind};
use crate::time::{format_duration, format_ns};
use std::fmt::Write;

/// Gap rows shown in the table (the rest are counted).
pub const MAX_TABLE_ROWS: usize = 2000;

pub use crate::markup::escape;

/// The page's style: plain, printable.
pub const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1100px}\
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}\
table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.num{text-align:right}.k-damage{color:#d62728;font-weight:bold}\
.k-quiet{color:#b36b00}.k-trade_id,.k-book_seq{color:#a0a}.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}\
.err{color:#d62728}.pair{display:flex;flex-wrap:wrap;gap:6px}";

/// The script: marks the page as rendered (the headless test looks for
/// the mark) and counts what was drawn.
pub const SCRIPT: &str = "(function(){var n=document.querySelectorAll('svg').length;\
var s=document.getElementById('status');\
s.textContent='report rendered: '+n+' charts, '+document.querySelectorAll('#gaps tbody tr').length+' gap rows';\
document.body.setAttribute('data-rendered','yes');})();";

/// A table row of label/value pairs.
pub fn kv(out: &mut String, rows: &[(&str, String)]) {
    out.push_str("<table>");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(k), v);
    }
    out.push_str("</table>");
}

fn opt_time(ns: Option<i64>) -> String {
    ns.map_or_else(String::new, format_ns)
}

/// The gaps table.
pub fn gaps_table(out: &mut String, gaps: &[Gap], not_kept: u64) {
    let _ = write!(
        out,
        "<table id=\"gaps\"><thead><tr><th>kind</th><th>symbol</th><th>type</th><th>from (UTC, exchange)</th>\
<th>to</th><th>duration</th><th>missing</th><th>received</th><th>file / offset / what</th></tr></thead><tbody>"
    );
    for g in gaps.iter().take(MAX_TABLE_ROWS) {
        let sym = match (g.symbol_id, &g.symbol) {
            (Some(id), Some(n)) => format!("{} ({id})", escape(n)),
            (Some(id), None) => id.to_string(),
            _ => String::new(),
        };
        let missing = match (g.first_missing, g.last_missing) {
            (Some(f), Some(l)) => format!("{f}..{l} ({})", l.saturating_sub(f).saturating_add(1)),
            _ => String::new(),
        };
        let recv = match (g.from_recv_ns, g.to_recv_ns) {
            (None, None) => String::new(),
            (f, t) => format!("{} .. {}", opt_time(f), opt_time(t)),
        };
        let what = if g.kind == GapKind::Damage {
            format!(
                "{}{}: {}",
                escape(
                    &g.file
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                ),
                g.offset.map_or(String::new(), |o| format!(" at byte {o}")),
                escape(g.message.as_deref().unwrap_or(""))
            )
        } else if let Some(t) = g.typical_ns {
            format!("typically one every {}", format_duration(t))
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<tr class=\"k-{k}\"><td>{k}</td><td>{sym}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{missing}</td><td>{recv}</td><td>{what}</td></tr>",
            g.type_name.unwrap_or(""),
            opt_time(g.from_ns),
            opt_time(g.to_ns),
            g.duration_ns().map_or(String::new(), format_duration),
            k = g.kind.as_str(),
        );
    }
    out.push_str("</tbody></table>");
    let more = (gaps.len().saturating_sub(MAX_TABLE_ROWS)) as u64 + not_kept;
    if more > 0 {
        let _ = write!(
            out,
            "<p>{more} more findings not listed (see <code>floxlog gaps</code>).</p>"
        );
    }
}
