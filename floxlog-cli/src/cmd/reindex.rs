//! `floxlog reindex`: rebuild segment indexes.

use super::common::CmdResult;
use floxlog::tape::recover::{rewrite_segment, RewriteOptions};
use floxlog::tape::source::SegmentFile;
use floxlog::tape::{OpenOptions, Tape, TapeError};
use std::io::Write;
use std::path::PathBuf;

/// Rebuild the index (and header) of segments, copying every frame.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Rebuild the sparse index and header of \
segments from their frames, copying every frame byte for byte. The segment must be readable to \
its end (use `floxlog recover` for damaged ones). For LZ4 segments the interval is the number of \
events per block, so a new interval also re-packs the blocks. Files are replaced in place (through \
a temporary file and a rename); a tape's manifest.json is rebuilt afterwards.")]
pub struct Args {
    /// Segment files or tape directories.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Events between index entries (LZ4: per block) [default: keep the segment's].
    #[arg(long, value_name = "N")]
    pub index_interval: Option<u16>,
    /// Write the result here (one input segment only).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs `reindex`.
pub fn run(a: Args) -> CmdResult {
    if a.index_interval == Some(0) {
        return Err(TapeError::usage("--index-interval must be at least 1"));
    }
    let tape = Tape::open(
        &a.inputs,
        OpenOptions {
            ignore_manifest: true,
        },
    )?;
    if a.output.is_some() && tape.segments.len() != 1 {
        return Err(TapeError::usage("--output needs exactly one input segment"));
    }
    let opts = RewriteOptions {
        index_interval: a.index_interval,
        create_index: Some(true),
        ..RewriteOptions::default()
    };
    for s in &tape.segments {
        let f = SegmentFile::open(&s.path)?;
        let out = rewrite_segment(f.bytes(), &s.path, &opts)?;
        drop(f);
        let dst = a.output.clone().unwrap_or_else(|| s.path.clone());
        let dir = dst
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let tmp = dir.join(format!(".{}.reindex.tmp", s.name));
        {
            let mut w =
                std::fs::File::create(&tmp).map_err(|e| TapeError::io(&tmp, "creating", e))?;
            w.write_all(&out.bytes)
                .map_err(|e| TapeError::io(&tmp, "writing", e))?;
            w.sync_all()
                .map_err(|e| TapeError::io(&tmp, "syncing", e))?;
        }
        std::fs::rename(&tmp, &dst)
            .map_err(|e| TapeError::io(&dst, "moving the new segment into place", e))?;
        println!(
            "{}: {} events, index every {} events ({} bytes)",
            dst.display(),
            out.events,
            out.config.index_interval,
            out.bytes.len()
        );
    }
    if a.output.is_none() {
        for d in &tape.dirs {
            if let Ok(Some(old)) = floxlog::tape::Manifest::load(&d.path) {
                let t = Tape::open(
                    std::slice::from_ref(&d.path),
                    OpenOptions {
                        ignore_manifest: true,
                    },
                )?;
                let (mut m, _, _) = floxlog::tape::rebuild::build_manifests(&t, 0, &mut |_| {})?;
                m.created_ns = old.created_ns;
                m.exchange_id = old.exchange_id;
                m.save(&d.path, true)?;
            }
        }
    }
    Ok(0)
}
