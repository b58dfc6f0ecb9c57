//! The `symbol` column: symbol ids mapped to the names a tape's
//! `metadata.json` gives them, as dictionary keys into one shared array of
//! names.

use crate::columns::fresh::Fresh;
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, Int32Array, StringArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::ArrowError;
use floxlog::tape::Tape;
use std::sync::{Arc, Mutex};

/// Ids below this are looked up in a dense table (4 bytes an id); larger
/// ones by binary search.
const DENSE_LIMIT: u32 = 1 << 16;

/// Symbol names by id.
#[derive(Clone, Debug)]
pub struct Symbols {
    /// The dictionary: every name once.
    values: ArrayRef,
    /// `dense[id]` = key of `id`, or -1.
    dense: Vec<i32>,
    /// (id, key) of the ids at or above `DENSE_LIMIT`, sorted.
    sparse: Vec<(u32, i32)>,
}

impl Symbols {
    /// No names: the `symbol` column is all null.
    pub fn none() -> Symbols {
        Symbols::from_pairs(Vec::new())
    }

    /// The names of a tape's `metadata.json` files.
    pub fn from_tape(tape: &Tape) -> Symbols {
        Symbols::from_pairs(tape.symbol_names())
    }

    /// Names from `(id, name)` pairs (the last pair of an id wins).
    pub fn from_pairs(mut pairs: Vec<(u32, String)>) -> Symbols {
        pairs.reverse();
        pairs.sort_by_key(|p| p.0);
        pairs.dedup_by_key(|p| p.0);
        let values: ArrayRef = Arc::new(StringArray::from_iter_values(
            pairs.iter().map(|(_, n)| n.as_str()),
        ));
        let mut dense = Vec::new();
        let mut sparse = Vec::new();
        for (key, (id, _)) in pairs.iter().enumerate() {
            // At most one key per id, fewer ids than i32::MAX in practice;
            // a key that does not fit is left unnamed.
            let Ok(key) = i32::try_from(key) else { break };
            if *id < DENSE_LIMIT {
                let i = *id as usize;
                if dense.len() <= i {
                    dense.resize(i + 1, -1);
                }
                dense[i] = key;
            } else {
                sparse.push((*id, key));
            }
        }
        Symbols {
            values,
            dense,
            sparse,
        }
    }

    /// Whether any id has a name.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The name of `id`, if the tape gives one.
    pub fn name(&self, id: u32) -> Option<&str> {
        let key = self.key(id)?;
        self.values
            .as_any()
            .downcast_ref::<StringArray>()
            .map(|a| a.value(key as usize))
    }

    fn key(&self, id: u32) -> Option<i32> {
        if id < DENSE_LIMIT {
            self.dense.get(id as usize).copied().filter(|&k| k >= 0)
        } else {
            self.sparse
                .binary_search_by_key(&id, |p| p.0)
                .ok()
                .map(|i| self.sparse[i].1)
        }
    }

    /// The `symbol` column of rows with these symbol ids.
    pub fn column(&self, ids: &[u32]) -> Result<ArrayRef, ArrowError> {
        if self.is_empty() {
            // As `new_null_array`: keys 0, every row null; both buffers
            // are slices of one shared (immutable) run of zeros, so a
            // tape without names costs no writes here.
            let n = ids.len();
            let keys = ScalarBuffer::new(zeros(n.saturating_mul(4)), 0, n);
            let bits = BooleanBuffer::new(zeros(n.div_ceil(8)), 0, n);
            let keys = Int32Array::new(keys, Some(NullBuffer::new(bits)));
            return Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
                keys,
                self.values.clone(),
            )?));
        }
        let mut keys = Fresh::<i32>::with_capacity(ids.len());
        let mut all_valid = true;
        // Runs of one symbol are the common case: remember the last lookup.
        let mut last: Option<(u32, Option<i32>)> = None;
        for (slot, &id) in keys.room(ids.len()).iter_mut().zip(ids) {
            let k = match last {
                Some((l, k)) if l == id => k,
                _ => {
                    let k = self.key(id);
                    last = Some((id, k));
                    k
                }
            };
            all_valid &= k.is_some();
            *slot = k.unwrap_or(0);
        }
        keys.set_len(ids.len());
        // The validity bits only when some id has no name (rare: a second
        // pass then).
        let nulls = (!all_valid)
            .then(|| NullBuffer::from_iter(ids.iter().map(|&id| self.key(id).is_some())));
        let keys = Int32Array::new(keys.take_buffer(), nulls);
        Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(
            keys,
            self.values.clone(),
        )?))
    }
}

/// `bytes` zero bytes (8-byte aligned) as a slice of one buffer shared by
/// every call, grown (to the next power of two) when too short. Arrow
/// buffers are immutable, so sharing them between results is safe; the
/// shared one is as large as the largest batch asked for, a few MB.
fn zeros(bytes: usize) -> Buffer {
    static ZEROS: Mutex<Option<Buffer>> = Mutex::new(None);
    let make = |len: usize| Buffer::from_vec(vec![0u64; len.div_ceil(8)]);
    let Ok(mut shared) = ZEROS.lock() else {
        return make(bytes).slice_with_length(0, bytes);
    };
    match &*shared {
        Some(b) if b.len() >= bytes => b.slice_with_length(0, bytes),
        _ => {
            let b = make(bytes.checked_next_power_of_two().unwrap_or(bytes));
            *shared = Some(b.clone());
            b.slice_with_length(0, bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::symbol_type;
    use arrow_array::{Array, ArrayAccessor};

    #[test]
    fn names_dense_sparse_and_unknown() {
        let s = Symbols::from_pairs(vec![
            (1, "BTC".into()),
            (70_000, "ETH".into()),
            (1, "BTC-PERP".into()),
        ]);
        assert_eq!(s.name(1), Some("BTC-PERP"));
        assert_eq!(s.name(70_000), Some("ETH"));
        assert_eq!(s.name(2), None);
        let col = s.column(&[1, 1, 2, 70_000]).unwrap();
        let d = col
            .as_any()
            .downcast_ref::<DictionaryArray<Int32Type>>()
            .unwrap();
        let names = d.downcast_dict::<StringArray>().unwrap();
        assert_eq!(names.value(0), "BTC-PERP");
        assert!(d.is_null(2));
        assert_eq!(names.value(3), "ETH");
        assert_eq!(col.data_type(), &symbol_type());
    }

    #[test]
    fn no_names_is_an_all_null_column() {
        let col = Symbols::none().column(&[1, 2, 3]).unwrap();
        assert_eq!(col.len(), 3);
        assert_eq!(col.null_count(), 3);
        assert_eq!(col.data_type(), &symbol_type());
        col.to_data().validate_full().unwrap();
        // Longer than any column before (the shared zeros grow), then
        // shorter again: keys 0, every row null.
        for n in [100_000, 7, 0] {
            let col = Symbols::none().column(&vec![9; n]).unwrap();
            col.to_data().validate_full().unwrap();
            let d = col
                .as_any()
                .downcast_ref::<DictionaryArray<Int32Type>>()
                .unwrap();
            assert_eq!(d.len(), n);
            assert_eq!(d.null_count(), n);
            assert!(d.keys().values().iter().all(|&k| k == 0));
        }
    }
}
