//! What one check of the kit is given (its deadline, the output caps, the
//! adapter call helper) and what it gives back (its verdict); the read and
//! write checks and the run loop share them.

use super::process::{self, Caps, Output, RunError};
use super::template::Template;
use std::time::{Duration, Instant};

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
}

impl Ctx {
    /// Runs `t` with `subs`; a call that could not give output is the
    /// check's failure message.
    pub fn call(&self, t: &Template, subs: &[(&str, &str)]) -> Result<Output, String> {
        let argv = t.expand(subs);
        process::run(&argv, self.deadline, self.caps).map_err(|e| match e {
            RunError::TimedOut => format!("timed out after {} s", fmt_secs(self.timeout)),
            e @ RunError::PipesHeld(_) => {
                format!("timed out after {} s: {e}", fmt_secs(self.timeout))
            }
            e => e.to_string(),
        })
    }
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}
