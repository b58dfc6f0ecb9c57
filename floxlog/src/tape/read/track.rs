//! The timestamps a range's read handed on: what time order needs to
//! know to concatenate ranges ([`super::concat_order`]).

/// The timestamps a read handed to its sink: first, last, and whether they
/// never went back.
#[derive(Clone, Copy, Debug)]
pub struct Track {
    /// First timestamp (`None`: no event).
    pub first: Option<i64>,
    /// Last timestamp.
    pub last: i64,
    /// Whether they never went back.
    pub in_order: bool,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            first: None,
            last: i64::MIN,
            in_order: true,
        }
    }
}

impl Track {
    /// Notes the next timestamp.
    #[inline]
    pub fn see(&mut self, ts: i64) {
        self.first.get_or_insert(ts);
        self.in_order &= ts >= self.last;
        self.last = ts;
    }

    /// Notes the timestamps `next` saw, after these.
    pub fn then(&mut self, next: &Track) {
        if let Some(f) = next.first {
            self.see(f);
            self.in_order &= next.in_order;
            self.last = next.last;
        }
    }
}
