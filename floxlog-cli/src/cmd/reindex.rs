//! `floxlog reindex`: rebuild segment indexes.

use super::common::CmdResult;
use floxlog::tape::check::reindex_segment;
use floxlog::tape::check::repack_lz4;
use floxlog::tape::dir::lock_dirs;
use floxlog::tape::dir::write_file_atomic;
use floxlog::tape::{OpenOptions, Tape};
use std::path::PathBuf;

/// Rebuild the index (and header) of segments, keeping every frame in its file order.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Rebuild the sparse index of segments, \
keeping every frame and every LZ4 block byte for byte: only the index trailer and the header's \
index fields are written anew (uncompressed: an entry every N frames; LZ4: one per block). The \
segment must be finished and readable to its end (use `floxlog recover` for damaged or unfinished \
ones). For LZ4 segments the interval is the number of events per block, so --index-interval \
re-packs the blocks: every frame is copied byte for byte and in the same file order (unlike a \
writer, which sorts each block it packs), and the Sorted flag is set only if the events never \
go back in time as written. Files are replaced crash-atomically (a temporary file, fsync, a \
rename, fsync of the directory); a tape's manifest.json is rebuilt afterwards.")]
pub struct Args {
    /// Segment files or tape directories.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Events between index entries (LZ4: per block) [default: keep the segment's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub index_interval: Option<u16>,
    /// Write the result here (one input segment only).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Runs `reindex`.
pub fn run(a: Args) -> CmdResult {
    let tape = Tape::open_for_rewrite(&a.inputs, a.output.is_some())?;
    // A live writer's segments are not rewritten under it.
    let _locks = lock_dirs(tape.segments.iter().map(|s| s.path.as_path()), "reindexing")?;
    for s in &tape.segments {
        let f = s.open()?;
        let lz4 = floxlog::core::Segment::parse(f.bytes()).is_ok_and(|g| g.is_compressed());
        let out = match a.index_interval {
            Some(n) if lz4 => repack_lz4(f.bytes(), &s.path, n)?,
            _ => reindex_segment(f.bytes(), &s.path, a.index_interval)?,
        };
        drop(f);
        let dst = a.output.clone().unwrap_or_else(|| s.path.clone());
        write_file_atomic(&dst, &out.bytes, true)?;
        outln!(
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
                let (mut m, _, _) = floxlog::tape::check::build_manifests(&t, 0, &mut |_| {})?;
                m.created_ns = old.created_ns;
                m.exchange_id = old.exchange_id;
                m.save(&d.path, true)?;
            }
        }
    }
    Ok(0)
}
