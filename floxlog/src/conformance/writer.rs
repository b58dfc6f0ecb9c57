//! The writer adapter's check: the case's events written with its
//! settings, the segments compared with the reference's.

use super::check::{Ctx, Verdict};
use super::corpus::Case;
use super::segments::{compare_exact, compare_lz4};
use super::source_diff::first_source_diff;
use super::template::Template;
use crate::tape::read::source::SegmentFile;
use floxlog_core::Compression;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A scratch directory removed when dropped, unless it is kept.
struct Scratch(PathBuf, bool);

impl Scratch {
    /// `keep/<name>` (emptied first) when outputs are kept, else a fresh
    /// folder in the temporary directory.
    fn for_case(keep: Option<&Path>, name: &str) -> Result<Scratch, String> {
        let Some(k) = keep else {
            return Scratch::new();
        };
        let p = k.join(name);
        let err = |e: std::io::Error| format!("--keep: {}: {e}", p.display());
        match std::fs::remove_dir_all(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(err(e)),
            _ => {}
        }
        std::fs::create_dir_all(&p).map_err(err)?;
        Ok(Scratch(p, true))
    }

    fn new() -> Result<Scratch, String> {
        static N: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let p = base.join(format!(
                "floxlog-conformance-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(Scratch(p, false)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating a scratch directory {}: {e}", p.display())),
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.1 {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The protocol's settings file for `c`.
pub fn settings_json(c: &Case) -> Result<serde_json::Value, String> {
    let w = c
        .writer
        .as_ref()
        .ok_or("corpus: the case has no writer settings")?;
    let created = c
        .segments
        .iter()
        .map(|s| {
            s.created_ns
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| {
                    format!(
                        "corpus: {}: segment {} has no created_ns (a writer case needs one per segment)",
                        c.dir.join("case.json").display(),
                        s.file_name()
                    )
                })
        })
        .collect::<Result<Vec<u64>, String>>()?;
    Ok(serde_json::json!({
        "compression": match w.compression {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
        },
        "create_index": w.create_index,
        "index_interval": w.index_interval,
        "exchange_id": w.exchange_id,
        "max_segment_bytes": w.max_segment_bytes,
        "profile": w.profile,
        "created_ns": created,
    }))
}

fn utf8(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("path {} is not UTF-8", p.display()))
}

/// The `.floxlog` files a writer left in `dir`, in file-name order.
fn outputs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("listing the writer's output {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        // Not through links: the kit reads nothing outside its scratch.
        .filter(|p| {
            p.symlink_metadata().is_ok_and(|m| m.is_file())
                && p.extension().is_some_and(|x| x == "floxlog")
        })
        .collect();
    v.sort();
    Ok(v)
}

/// `p` mapped, not read into memory: a writer's output may be any size
/// (a sparse file of terabytes costs nothing here). Regular files only;
/// a link is not followed.
fn read(p: &Path, what: &str, follow: bool) -> Result<SegmentFile, String> {
    SegmentFile::open_with(p, follow).map_err(|e| format!("{what} {}: {e}", p.display()))
}

/// `write/cases/*`.
pub(crate) fn write_case(c: &Case, t: Option<&Template>, ctx: &Ctx) -> Result<Verdict, String> {
    let t = t.ok_or("no writer adapter given")?;
    let events = c
        .events_path
        .as_ref()
        .ok_or("corpus: the case has no events.jsonl")?;
    let settings = settings_json(c)?;
    let tmp = Scratch::for_case(ctx.keep.as_deref(), &c.name)?;
    let out_dir = tmp.0.join("out");
    std::fs::create_dir(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let settings_path = tmp.0.join("settings.json");
    std::fs::write(&settings_path, settings.to_string())
        .map_err(|e| format!("{}: {e}", settings_path.display()))?;
    let out = ctx.call(
        t,
        &[
            ("{events}", utf8(events)?),
            ("{out_dir}", utf8(&out_dir)?),
            ("{settings}", utf8(&settings_path)?),
        ],
    )?;
    if !out.status.success() {
        return Err(format!(
            "the writer failed ({}; {})",
            out.status_text(),
            out.last_stderr_line().map_or_else(
                || "stderr empty".into(),
                |l| format!("last stderr line: {l}")
            )
        ));
    }
    let got = outputs(&out_dir)?;
    if got.len() != c.segments.len() {
        let names: Vec<String> = got
            .iter()
            .map(|p| p.file_name().unwrap_or_default().to_string_lossy().into())
            .collect();
        return Err(format!(
            "expected {} segments, the writer wrote {} [{}]",
            c.segments.len(),
            got.len(),
            names.join(", ")
        ));
    }
    // --lz4-decoded: compressed cases by decoded blocks whatever the case
    // says (uncompressed ones stay byte for byte: nothing may differ).
    let exact = !ctx.lz4_decoded && (c.byte_exact || ctx.lz4_exact);
    for (i, (g, e)) in got.iter().zip(&c.segments).enumerate() {
        let gb = read(g, "reading the writer's output", false)?;
        let eb = read(&e.path, "corpus: reading", true)?;
        let r = if exact {
            compare_exact(gb.bytes(), eb.bytes())
        } else {
            compare_lz4(gb.bytes(), eb.bytes())
        };
        // Name the field the writer got wrong, not one derived from it.
        let r = r.map_err(|m| match first_source_diff(gb.bytes(), eb.bytes(), exact) {
            Some(src) => format!("{src} [byte level: {m}]"),
            None => m,
        });
        r.map_err(|m| {
            format!(
                "segment {i} (output {}, expected {}): {m}",
                g.file_name().unwrap_or_default().to_string_lossy(),
                e.file_name()
            )
        })?;
    }
    Ok(Verdict::Pass)
}
