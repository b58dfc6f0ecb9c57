//! Seeing a tape at a glance: [`gaps`] finds what a recording may have
//! missed (quiet spans, trade-id and book-sequence jumps, damage); the
//! report front ends draw on the same pass. Events come only through
//! [`source::read_events`], the one place that wires the read engine.

pub mod gaps;
pub mod ids;
pub mod report;
pub mod source;
