//! `floxlog conformance`: the conformance kit's front end (the kit itself
//! is `floxlog::conformance`).

use super::common::CmdResult;
use floxlog::conformance::integrity;
use floxlog::conformance::plan::all_ids;
use floxlog::conformance::report::{junit, ExpectFail, Outcome, Summary};
use floxlog::conformance::{run as run_kit, verify_corpus, Corpus, KitOptions, Template, ENV_DIR};
use floxlog::tape::TapeError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Run the conformance corpus against any implementation, through adapter
/// programs.
#[derive(clap::Args)]
#[command(after_help = crate::EXIT_CODES, long_about = "Run the conformance corpus against any \
.floxlog implementation through adapter programs (protocol: docs/conformance.md).\n\n\
--reader TEMPLATE is run once per segment file, `{segment}` replaced by its absolute path: it \
prints the events as JSON lines (the `floxlog cat` schema) and, on a damaged segment, exits \
non-zero with `error <kind> <offset>` as the last stderr line. The kit also runs it with \
`--index` inserted before the `{segment}` word: it then prints `index ok`, \
`index_error <kind>` or `index unsupported`.\n\n\
--writer TEMPLATE is run once per writer case with `{events}` (input JSON lines), `{out_dir}` \
(an empty directory for its .floxlog files) and `{settings}` (a JSON settings file) replaced.\n\n\
Templates are split into words like a POSIX shell would (quotes honoured); no shell is run.\n\n\
The corpus is the first of: --corpus DIR; $FLOXLOG_CONFORMANCE_DIR; next to this binary, \
<exe dir>/conformance, <exe dir>/../conformance, <exe dir>/../share/floxlog/conformance, <exe dir>/../../conformance (a \
cargo build in target/<profile>/ finds the repository's conformance/).\n\n\
The corpus is checked against its SHA256SUMS first: a file that does not match is corpus damage \
(exit 2, the file named), never a failure of the implementation.\n\n\
Output: the corpus version line, one line per case id (`ok ID`, `FAIL ID: first difference` \
followed by the adapter's last stderr lines, `xfail ID`, `XPASS ID: ...`, `skip ID: why`, \
`warn ID (recommended, not required): ...`), then `N passed, M failed, K skipped` (saying so \
when the reader answered `index unsupported`; and `X expected failures` when there are). Exit 0 when nothing failed unexpectedly, 1 when a case \
failed (FAIL or XPASS), 2 for usage or corpus errors.")]
pub struct Args {
    /// Reader adapter command template; must contain {segment}.
    #[arg(long, value_name = "TEMPLATE", required_unless_present = "writer")]
    pub reader: Option<String>,
    /// Writer adapter command template; must contain {events}, {out_dir} and {settings}.
    #[arg(long, value_name = "TEMPLATE")]
    pub writer: Option<String>,
    /// Corpus root (a folder with cases/, corrupt/, real/) [default: see above].
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Seconds a case's adapter calls may take together; then they are killed and the case fails.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_secs)]
    pub timeout: f64,
    /// Compare LZ4 segments byte for byte too (cases with "byte_exact": false).
    #[arg(long, conflicts_with = "lz4_decoded")]
    pub lz4_exact: bool,
    /// Judge LZ4 writer cases by decoded blocks and structure, even byte-exact ones (another LZ4 encoder).
    #[arg(long)]
    pub lz4_decoded: bool,
    /// Fail the index checks when the reader answers `index unsupported` (else they are skipped).
    #[arg(long)]
    pub require_index: bool,
    /// Keep each writer case's output (segments, settings.json) in DIR/<case name>/.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Case ids expected to fail, one a line (# comments): they report xfail, and XPASS if they pass.
    #[arg(long, value_name = "FILE")]
    pub expect_fail: Option<PathBuf>,
    /// Only case ids containing this text (e.g. read/corrupt/, lz4).
    #[arg(long, value_name = "SUBSTRING")]
    pub filter: Option<String>,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1e6)
        .ok_or_else(|| format!("`{s}` is not a number of seconds (e.g. 30, 0.5)"))
}

/// Where the corpus is: the option, the environment, or beside the binary.
fn find_corpus(opt: Option<&Path>) -> Result<PathBuf, TapeError> {
    if let Some(p) = opt {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(ENV_DIR) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| TapeError::usage(format!("cannot find this program's path: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let tried = [
        dir.join("conformance"),
        // The downloadable kit: bin/floxlog-conformance beside conformance/.
        dir.join("../conformance"),
        dir.join("../share/floxlog/conformance"),
        dir.join("../../conformance"),
    ];
    for p in &tried {
        if p.is_dir() {
            return Ok(p.clone());
        }
    }
    let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(TapeError::usage(format!(
        "no conformance corpus found: no --corpus, no ${ENV_DIR}, and none of {}",
        list.join(", ")
    ))
    .with_hint("pass --corpus DIR (the repository's conformance/ folder)"))
}

/// Whether `prog` can be started: a path to an executable file, or a name
/// found on PATH.
fn check_program(opt: &str, t: &Template) -> Result<(), TapeError> {
    let prog = t.expand(&[]).into_iter().next().unwrap_or_default();
    let p = Path::new(&prog);
    let found = if prog.contains('/') {
        Some(p.to_path_buf()).filter(|p| p.exists())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(&prog))
                .find(|c| c.is_file())
        })
    };
    let Some(found) = found else {
        return Err(
            TapeError::usage(format!("{opt}: adapter program `{prog}` not found"))
                .with_hint("give a path to the adapter (or put it on PATH)"),
        );
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(&found)
            .map_err(|e| TapeError::io(&found, "checking the adapter", e))?;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            return Err(TapeError::usage(format!(
                "{opt}: adapter program {} is not an executable file",
                found.display()
            ))
            .with_hint(
                "chmod +x it, or name its interpreter first (e.g. `python3 adapter.py {segment}`)",
            ));
        }
    }
    Ok(())
}

fn template(
    opt: &str,
    text: &Option<String>,
    required: &[&str],
) -> Result<Option<Template>, TapeError> {
    let Some(text) = text else { return Ok(None) };
    let t = Template::parse(text, required).map_err(|e| TapeError::usage(format!("{opt}: {e}")))?;
    check_program(opt, &t)?;
    Ok(Some(t))
}

/// Runs `conformance`.
pub fn run(a: Args) -> CmdResult {
    let reader = template("--reader", &a.reader, &["{segment}"])?;
    let writer = template(
        "--writer",
        &a.writer,
        &["{events}", "{out_dir}", "{settings}"],
    )?;
    let root = find_corpus(a.corpus.as_deref())?;
    let corpus = Corpus::load(&root).map_err(TapeError::usage)?;
    if corpus.is_empty() {
        return Err(TapeError::usage(format!(
            "corpus {} has no cases",
            root.display()
        )));
    }
    let expect = match &a.expect_fail {
        Some(p) => {
            ExpectFail::load(p).map_err(|e| TapeError::usage(format!("--expect-fail: {e}")))?
        }
        None => ExpectFail::default(),
    };
    let known = all_ids(&corpus);
    for (line, id) in expect.unknown(&known) {
        eprintln!(
            "floxlog: warning: --expect-fail {}:{line}: `{id}` names no case of the corpus at {}",
            a.expect_fail.as_deref().unwrap_or(Path::new("")).display(),
            corpus.root.display()
        );
    }
    for b in &corpus.broken {
        eprintln!(
            "floxlog: warning: case {}/{} cannot be loaded: {}",
            b.group.as_str(),
            b.name,
            b.error
        );
    }
    let opts = KitOptions {
        timeout: Duration::from_secs_f64(a.timeout),
        lz4_exact: a.lz4_exact,
        lz4_decoded: a.lz4_decoded,
        require_index: a.require_index,
        keep: a.keep.clone(),
        filter: a.filter.clone(),
        ..KitOptions::new(reader, writer)
    };
    if let Some(k) = &a.keep {
        std::fs::create_dir_all(k)
            .map_err(|e| TapeError::io(k, "creating the --keep folder", e))?;
    }
    // A damaged corpus is the corpus's fault: exit 2 before any adapter runs.
    let checked = verify_corpus(&corpus, &opts).map_err(TapeError::usage)?;
    let version = corpus.version.as_deref().unwrap_or("unversioned");
    outln!(
        "corpus {} version {version}: {}",
        corpus.root.display(),
        if checked.listed {
            format!("{} files match {}", checked.files, integrity::SUMS)
        } else {
            format!(
                "no {} (corpus damage cannot be told from a failure)",
                integrity::SUMS
            )
        }
    );
    let mut rows = Vec::new();
    let results = run_kit(&corpus, &opts, |r| {
        outln!("{}", Outcome::of(r, &expect).lines(r));
    });
    for r in results {
        let o = Outcome::of(&r, &expect);
        rows.push((r, o));
    }
    if rows.is_empty() {
        return Err(TapeError::usage(format!(
            "no case id of the corpus at {} matches --filter {}",
            corpus.root.display(),
            a.filter.as_deref().unwrap_or("")
        )));
    }
    let s = Summary::of(rows.iter().map(|r| &r.1));
    outln!("{}", s.line());
    if s.expected_failures > 0 {
        outln!("{} expected failures", s.expected_failures);
    }
    if let Some(p) = &a.junit {
        std::fs::write(p, junit("floxlog-conformance", version, &rows))
            .map_err(|e| TapeError::io(p, "writing the JUnit report", e))?;
    }
    Ok(u8::from(rows.iter().any(|r| r.1.unexpected())))
}
