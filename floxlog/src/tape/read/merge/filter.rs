//! Which events a read keeps: time range, symbols, record types.

use crate::tape::error::TapeError;
use floxlog_core::Event;

/// Which events to keep.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Keep `exchange_ts_ns >= from`.
    pub from: Option<i64>,
    /// Keep `exchange_ts_ns < to`.
    pub to: Option<i64>,
    /// Keep these symbol ids only (sorted).
    pub symbols: Option<Vec<u32>>,
    /// Keep these frame types only (index = frame type).
    pub types: Option<[bool; 6]>,
}

impl Filter {
    /// Parses record type names into the [`Filter::types`] mask (index =
    /// frame type): `trade`, `book_snapshot`, `book_delta`, `book` (both
    /// book types), `option_quote`, `pool_state`, and the short forms
    /// `trades`, `snapshot`, `delta`, `option`, `options`, `pool`, `pools`
    /// (case-insensitive; surrounding blanks ignored). No names means no
    /// filter (`None`); an unknown name is a usage error.
    pub fn types_from_names<S: AsRef<str>>(names: &[S]) -> Result<Option<[bool; 6]>, TapeError> {
        if names.is_empty() {
            return Ok(None);
        }
        let mut m = [false; 6];
        for n in names {
            let n = n.as_ref().trim().to_ascii_lowercase();
            let idx: &[usize] = match n.as_str() {
                "trade" | "trades" => &[1],
                "book_snapshot" | "snapshot" => &[2],
                "book_delta" | "delta" => &[3],
                "book" => &[2, 3],
                "option_quote" | "option" | "options" => &[4],
                "pool_state" | "pool" | "pools" => &[5],
                _ => {
                    return Err(TapeError::usage(format!(
                        "unknown --type `{n}` (trade, book_snapshot, book_delta, book, option_quote, pool_state)"
                    )))
                }
            };
            for &i in idx {
                m[i] = true;
            }
        }
        Ok(Some(m))
    }

    /// Whether an event passes.
    #[inline]
    pub fn accepts(&self, ev: &Event<'_>, frame_type: u8) -> bool {
        let ts = ev.exchange_ts_ns();
        if self.from.is_some_and(|f| ts < f) || self.to.is_some_and(|t| ts >= t) {
            return false;
        }
        if let Some(t) = &self.types {
            if !t.get(frame_type as usize).copied().unwrap_or(false) {
                return false;
            }
        }
        if let Some(s) = &self.symbols {
            if s.binary_search(&ev.symbol_id()).is_err() {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_from_names_builds_the_mask() {
        assert_eq!(Filter::types_from_names::<&str>(&[]).unwrap(), None);
        assert_eq!(
            Filter::types_from_names(&[" Trade", "book"]).unwrap(),
            Some([false, true, true, true, false, false])
        );
        assert_eq!(
            Filter::types_from_names(&["options".to_string(), "POOL_STATE".to_string()]).unwrap(),
            Some([false, false, false, false, true, true])
        );
        let e = Filter::types_from_names(&["quote"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message.starts_with("unknown --type `quote`"), "{e}");
    }
}
