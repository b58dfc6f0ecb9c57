//! Findings of checks (verify, tape discovery): a severity, where, and what.

use super::hint::{Hint, Vocabulary};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Info,
    /// Suspicious but readable (fails `verify` only with `--strict`).
    Warning,
    /// Integrity failure.
    Error,
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Severity.
    pub severity: Severity,
    /// A stable name: a corpus error kind (`crc_mismatch`...) or a check name
    /// (`header_event_count`, `manifest_mismatch`...).
    pub kind: String,
    /// The file concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Byte offset in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// What was found.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<Hint>,
}

impl Finding {
    /// A new finding.
    pub fn new(
        severity: Severity,
        kind: impl Into<String>,
        path: Option<&Path>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity,
            kind: kind.into(),
            path: path.map(Path::to_path_buf),
            offset: None,
            message: message.into(),
            hint: None,
        }
    }

    /// With a byte offset.
    pub fn at(mut self, offset: u64) -> Finding {
        self.offset = Some(offset);
        self
    }

    /// With a hint.
    pub fn hint(mut self, hint: impl Into<Hint>) -> Finding {
        self.hint = Some(hint.into());
        self
    }

    /// From a codec error in `path`.
    pub fn from_error(severity: Severity, path: &Path, e: &floxlog_core::Error) -> Finding {
        let mut message = e.what.to_string();
        if let Some(p) = e.in_block {
            message.push_str(&format!(" (frame at +{p} inside the decompressed block)"));
        }
        Finding::new(severity, e.kind.as_str(), Some(path), message)
            .at(e.offset)
            .hint(super::error::hint_for(e))
    }

    /// The same finding with its hint in `v`'s words.
    pub fn localized(&self, v: &dyn Vocabulary) -> Finding {
        let mut f = self.clone();
        f.hint = f.hint.map(|h| h.localized(v));
        f
    }

    /// One line for humans: `error crc_mismatch path@offset: message (hint)`.
    pub fn line(&self) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        };
        let mut s = format!("{sev}[{}]", self.kind);
        if let Some(p) = &self.path {
            s.push_str(&format!(" {}", p.display()));
            if let Some(o) = self.offset {
                s.push_str(&format!(" at byte {o}"));
            }
        } else if let Some(o) = self.offset {
            s.push_str(&format!(" at byte {o}"));
        }
        s.push_str(&format!(": {}", self.message));
        if let Some(h) = &self.hint {
            s.push_str(&format!("\n    hint: {h}"));
        }
        s
    }
}
