//! `floxlog manifest`: rebuild manifest.json (and flox's .manifest).

use super::common::{print_findings, progress, CmdResult};
use floxlog::tape::check::build_manifests;
use floxlog::tape::dir::write_atomic;
use floxlog::tape::dir::FLOX_MANIFEST_FILE;
use floxlog::tape::{OpenOptions, Tape, TapeError};
use std::path::PathBuf;

/// Rebuild a tape directory's manifest.json from its segment files.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Rebuild manifest.json (spec 1.0 schema) of a \
tape directory from a full read of its segment files: name, type, size, earliest and latest \
timestamp and event count of each. --flox also writes flox's binary .manifest cache. A segment \
that cannot be read to its end is listed with its readable events and reported (exit 1).")]
pub struct Args {
    /// Tape directory.
    pub dir: PathBuf,
    /// Also write flox's binary .manifest.
    #[arg(long)]
    pub flox: bool,
    /// Print the manifest on stdout instead of writing it.
    #[arg(long)]
    pub print: bool,
}

/// Runs `manifest`.
pub fn run(a: Args) -> CmdResult {
    if !a.dir.is_dir() {
        return Err(TapeError::usage(format!(
            "{} is not a directory",
            a.dir.display()
        )));
    }
    let tape = Tape::open(
        std::slice::from_ref(&a.dir),
        OpenOptions {
            ignore_manifest: true,
        },
    )?;
    let old = floxlog::tape::Manifest::load(&a.dir).ok().flatten();
    let total = tape.file_bytes();
    let pb = progress(total, "manifest");
    let (mut m, fman, findings) = build_manifests(&tape, 0, &mut |b| pb.set_position(b))?;
    pb.finish_and_clear();
    if let Some(old) = old {
        m.created_ns = old.created_ns;
        m.exchange_id = old.exchange_id;
    }
    print_findings(&findings);
    if a.print {
        out!("{}", m.to_text());
    } else {
        m.save(&a.dir, true)?;
        eprintln!(
            "wrote {} ({} segments)",
            a.dir.join("manifest.json").display(),
            m.segments.len()
        );
        if a.flox {
            write_atomic(&a.dir, FLOX_MANIFEST_FILE, &fman.to_bytes(), true)?;
            eprintln!("wrote {}", a.dir.join(FLOX_MANIFEST_FILE).display());
        }
    }
    Ok(u8::from(!findings.is_empty()))
}
