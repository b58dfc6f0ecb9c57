//! Running the planned checks against adapters: the shared call helper,
//! the verdicts, and the loop over the plan.

use super::check::Ctx;
pub use super::check::Verdict;
use super::corpus::Corpus;
use super::plan::{plan, Half, Planned, Target};
use super::process::Caps;
use super::template::Template;
use super::{reader, writer};
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Settings of a run.
#[derive(Clone, Debug)]
pub struct KitOptions {
    /// Reader adapter (`{segment}`); also answers the index checks.
    pub reader: Option<Template>,
    /// Writer adapter (`{events} {out_dir} {settings}`).
    pub writer: Option<Template>,
    /// Time a case's adapter calls may take together.
    pub timeout: Duration,
    /// Compare LZ4 segments byte for byte even where the case allows
    /// other compressed bytes.
    pub lz4_exact: bool,
    /// Judge LZ4 writer cases by decoded blocks and structure, even where
    /// the case is byte-exact (for writers whose compressor is not liblz4).
    pub lz4_decoded: bool,
    /// A reader answering `index unsupported` fails the index checks.
    pub require_index: bool,
    /// Keep each writer case's output under `DIR/<case name>/`.
    pub keep: Option<PathBuf>,
    /// Only case ids containing this.
    pub filter: Option<String>,
    /// Output caps per call.
    pub caps: Caps,
}

impl KitOptions {
    /// Options with the default timeout (30 s) and caps.
    pub fn new(reader: Option<Template>, writer: Option<Template>) -> KitOptions {
        KitOptions {
            reader,
            writer,
            timeout: Duration::from_secs(30),
            lz4_exact: false,
            lz4_decoded: false,
            require_index: false,
            keep: None,
            filter: None,
            caps: Caps::default(),
        }
    }
}

/// One check's id, verdict and duration.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// Case id.
    pub id: String,
    /// Outcome.
    pub verdict: Verdict,
    /// Wall time taken.
    pub seconds: f64,
    /// The end of the adapter's stderr (last 20 lines) when the check
    /// failed and the adapter printed any.
    pub stderr: Option<String>,
    /// Whether the check is recommended, not required (it tests a
    /// reference quirk): its failure does not fail the run.
    pub recommended: bool,
}

fn recommended(p: &Planned<'_>) -> bool {
    let list = match p.target {
        Target::Case(c) => &c.recommended,
        Target::Corrupt(c) => &c.recommended,
        Target::Broken(_) => return false,
    };
    list.iter().any(|h| h == p.half.as_str())
}

/// One line, whatever the message held (a case's report is one line).
fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn check(p: &Planned<'_>, opts: &KitOptions, ctx: &Ctx) -> Verdict {
    let r = match (p.half, p.target) {
        (_, Target::Broken(b)) => Err(b.error.clone()),
        (Half::Read, Target::Case(c)) if c.tape.is_some() => {
            reader::read_tape(c, opts.reader.as_ref(), ctx)
        }
        (Half::Read, Target::Case(c)) => reader::read_case(c, opts.reader.as_ref(), ctx),
        (Half::Read, Target::Corrupt(c)) => reader::read_corrupt(c, opts.reader.as_ref(), ctx),
        (Half::Index, Target::Case(c)) => reader::index_case(c, opts.reader.as_ref(), ctx),
        (Half::Index, Target::Corrupt(c)) => reader::index_corrupt(c, opts.reader.as_ref(), ctx),
        (Half::Write, Target::Case(c)) => writer::write_case(c, opts.writer.as_ref(), ctx),
        (Half::Write, Target::Corrupt(_)) => Err("internal error: write check on corrupt/".into()),
    };
    match r {
        Ok(v) => v,
        Err(m) => Verdict::Fail(one_line(&m)),
    }
}

/// The planned checks the options select (adapters given, `--filter`).
fn selected<'c>(corpus: &'c Corpus, opts: &KitOptions) -> impl Iterator<Item = Planned<'c>> {
    let filter = opts.filter.clone();
    plan(corpus, opts.reader.is_some(), opts.writer.is_some())
        .into_iter()
        .filter(move |p| filter.as_ref().is_none_or(|f| p.id.contains(f.as_str())))
}

/// Runs every check of `corpus` the options ask for, in plan order,
/// handing each result to `on_result` as it is known.
pub fn run(
    corpus: &Corpus,
    opts: &KitOptions,
    mut on_result: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let mut out = Vec::new();
    for p in selected(corpus, opts) {
        let t0 = Instant::now();
        let ctx = Ctx {
            deadline: t0 + opts.timeout,
            timeout: opts.timeout,
            caps: opts.caps,
            lz4_exact: opts.lz4_exact,
            lz4_decoded: opts.lz4_decoded,
            require_index: opts.require_index,
            keep: opts.keep.clone(),
            last_stderr: RefCell::new(Vec::new()),
        };
        let verdict = match check(&p, opts, &ctx) {
            Verdict::Fail(m) => Verdict::Fail(one_line(&m)),
            Verdict::Skip(m) => Verdict::Skip(one_line(&m)),
            v => v,
        };
        let stderr = match verdict {
            Verdict::Fail(_) => super::check::stderr_tail(&ctx.last_stderr.borrow()),
            _ => None,
        };
        let r = CaseResult {
            recommended: recommended(&p),
            id: p.id,
            verdict,
            seconds: t0.elapsed().as_secs_f64(),
            stderr,
        };
        on_result(&r);
        out.push(r);
    }
    out
}

/// Checks the corpus files the planned checks use (their case folders,
/// and the source case of a damaged segment) against `SHA256SUMS`.
pub fn verify_corpus(
    corpus: &Corpus,
    opts: &KitOptions,
) -> Result<super::integrity::Checked, String> {
    let mut dirs = Vec::new();
    for p in selected(corpus, opts) {
        match p.target {
            Target::Case(c) => dirs.push(c.dir.clone()),
            Target::Corrupt(c) => {
                dirs.extend(c.segment.parent().map(PathBuf::from));
                dirs.extend(
                    c.source
                        .as_ref()
                        .and_then(|s| s.parent())
                        .map(PathBuf::from),
                );
            }
            Target::Broken(_) => {}
        }
    }
    dirs.sort();
    dirs.dedup();
    super::integrity::verify(&corpus.root, Some(&dirs))
}
