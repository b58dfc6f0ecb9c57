//! What one check of the kit is given (its deadline, the output caps, the
//! adapter call helper) and what it gives back (its verdict); the read and
//! write checks and the run loop share them.

use super::process::{self, Caps, Output, RunError};
use super::template::Template;
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Lines of an adapter's stderr a failure report quotes (its end).
pub const STDERR_TAIL_LINES: usize = 20;

/// The outcome of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Everything matched.
    Pass,
    /// The first difference (one line).
    Fail(String),
    /// Not checked, and why.
    Skip(String),
}

/// What one check may use: its deadline, the caps.
pub(crate) struct Ctx {
    pub deadline: Instant,
    pub timeout: Duration,
    pub caps: Caps,
    pub lz4_exact: bool,
    /// Judge LZ4 writer cases by decoded blocks even where byte-exact.
    pub lz4_decoded: bool,
    /// `index unsupported` fails the index checks instead of skipping them.
    pub require_index: bool,
    /// Keep writer outputs under this folder (one subfolder per case).
    pub keep: Option<PathBuf>,
    /// The stderr of the check's last adapter call (for failure reports).
    pub last_stderr: RefCell<Vec<u8>>,
}

impl Ctx {
    /// Runs `t` with `subs`; a call that could not give output is the
    /// check's failure message.
    pub fn call(&self, t: &Template, subs: &[(&str, &str)]) -> Result<Output, String> {
        let argv = t.expand(subs);
        self.last_stderr.borrow_mut().clear();
        let r = process::run(&argv, self.deadline, self.caps);
        if let Ok(o) = &r {
            self.last_stderr.borrow_mut().clone_from(&o.stderr);
        }
        r.map_err(|e| match e {
            RunError::TimedOut => format!("timed out after {} s", fmt_secs(self.timeout)),
            e @ RunError::PipesHeld(_) => {
                format!("timed out after {} s: {e}", fmt_secs(self.timeout))
            }
            e => e.to_string(),
        })
    }
}

/// The last [`STDERR_TAIL_LINES`] lines of `b` (trailing blank lines
/// dropped), each cut as a report line is (`process::shown`), so a report
/// stays readable whatever an adapter printed; `None` if there are none.
pub fn stderr_tail(b: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(b);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.is_empty() {
        return None;
    }
    let from = lines.len().saturating_sub(STDERR_TAIL_LINES);
    let tail: Vec<String> = lines[from..]
        .iter()
        .map(|l| super::process::shown(l))
        .collect();
    Some(tail.join("\n"))
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}
