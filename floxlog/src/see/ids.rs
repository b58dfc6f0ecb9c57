//! Per-symbol state looked up on every event without hashing: symbol ids
//! are small counters on every feed we know, so ids below [`DENSE_IDS`]
//! index a vector (grown to the largest id seen, not allocated up front)
//! and only larger ones go to a map. Iteration is by id, so what is built
//! from it does not depend on a hasher's seed.

use std::collections::BTreeMap;

/// Ids below this are kept in the vector: at most this many slots, a few
/// MiB for the largest per-symbol state, however the ids are spread.
pub const DENSE_IDS: u32 = 16_384;

/// Values by symbol id; see the module docs.
#[derive(Clone, Debug)]
pub struct IdTable<T> {
    dense: Vec<Option<T>>,
    /// Ids at or past [`DENSE_IDS`]; a B-tree so that iteration stays in
    /// id order (rare: only feeds with large ids pay its lookups).
    sparse: BTreeMap<u32, T>,
    len: usize,
}

impl<T> Default for IdTable<T> {
    fn default() -> Self {
        IdTable {
            dense: Vec::new(),
            sparse: BTreeMap::new(),
            len: 0,
        }
    }
}

impl<T> IdTable<T> {
    /// Ids with a value.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id has a value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        if id < DENSE_IDS {
            self.dense.get(id as usize)?.as_ref()
        } else {
            self.sparse.get(&id)
        }
    }

    /// The value of `id`, mutable.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        if id < DENSE_IDS {
            self.dense.get_mut(id as usize)?.as_mut()
        } else {
            self.sparse.get_mut(&id)
        }
    }

    /// The value of `id`, made by `make` if it has none.
    #[inline]
    pub fn get_or_insert_with(&mut self, id: u32, make: impl FnOnce() -> T) -> &mut T {
        if id >= DENSE_IDS {
            let len = &mut self.len;
            return self.sparse.entry(id).or_insert_with(|| {
                *len += 1;
                make()
            });
        }
        let i = id as usize;
        if i >= self.dense.len() {
            self.dense.resize_with(i + 1, || None);
        }
        let slot = &mut self.dense[i];
        if slot.is_none() {
            self.len += 1;
        }
        slot.get_or_insert_with(make)
    }

    /// Ids and values, by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        let dense = self.dense.iter().enumerate();
        let dense = dense.filter_map(|(i, v)| Some((i as u32, v.as_ref()?)));
        dense.chain(self.sparse.iter().map(|(&id, v)| (id, v)))
    }

    /// Values, mutable, by id.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        let dense = self.dense.iter_mut().filter_map(Option::as_mut);
        dense.chain(self.sparse.values_mut())
    }

    /// Ids and values, by id, taken out.
    pub fn into_entries(self) -> impl Iterator<Item = (u32, T)> {
        let dense = self.dense.into_iter().enumerate();
        let dense = dense.filter_map(|(i, v)| Some((i as u32, v?)));
        dense.chain(self.sparse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_ids_keep_their_values_in_id_order() {
        let mut t: IdTable<u64> = IdTable::default();
        assert!(t.is_empty() && t.get(0).is_none() && t.get(u32::MAX).is_none());
        let ids = [7, u32::MAX, 0, DENSE_IDS, DENSE_IDS - 1, 7, 40_000];
        for id in ids {
            *t.get_or_insert_with(id, || 100) += 1;
        }
        assert_eq!(t.len(), 6);
        assert_eq!(t.get(7), Some(&102));
        assert_eq!(t.get(DENSE_IDS), Some(&101));
        assert_eq!(t.get(8), None);
        assert_eq!(t.get(DENSE_IDS + 1), None);
        *t.get_mut(u32::MAX).unwrap() = 5;
        assert!(t.get_mut(1).is_none());
        // Large ids never grow the vector.
        assert_eq!(t.dense.len(), DENSE_IDS as usize);
        let want = [0, 7, DENSE_IDS - 1, DENSE_IDS, 40_000, u32::MAX];
        let got: Vec<u32> = t.iter().map(|(id, _)| id).collect();
        assert_eq!(got, want);
        for v in t.values_mut() {
            *v += 1;
        }
        let all: Vec<(u32, u64)> = t.into_entries().collect();
        assert_eq!(all[5], (u32::MAX, 6));
        assert_eq!(all[1], (7, 103));
        assert_eq!(all.len(), 6);
    }
}
