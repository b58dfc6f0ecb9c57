//! Following a segment that a recorder is still writing: the file is
//! re-mapped on every poll and read from where the last poll stopped, up to
//! its last complete frame (or LZ4 block).

use super::error::TapeError;
use super::source::{header_is_unfinished, SegmentFile};
use floxlog_core::{
    decode_frame, BlockHeader, ErrorKind, Event, FrameOptions, RawFrame, Segment, SegmentHeader,
    MAGIC_BLOCK,
};
use std::path::{Path, PathBuf};

/// What a poll found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOutcome {
    /// This many new events.
    Events(u64),
    /// The segment is closed (final header) and fully read.
    Finished,
}

/// Incremental reader of one growing segment.
pub struct Follower {
    path: PathBuf,
    pos: u64,
    scratch: Vec<u8>,
    opts: FrameOptions,
    events: u64,
}

impl Follower {
    /// A follower from the start of `path`.
    pub fn new(path: &Path, opts: FrameOptions) -> Follower {
        Follower {
            path: path.to_path_buf(),
            pos: SegmentHeader::LEN as u64,
            scratch: Vec::new(),
            opts,
            events: 0,
        }
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Reads the complete events added since the last poll, calling `f`
    /// for each (frame bytes included).
    pub fn poll(
        &mut self,
        f: &mut dyn FnMut(&Event<'_>, &RawFrame<'_>) -> Result<(), TapeError>,
    ) -> Result<PollOutcome, TapeError> {
        let file = SegmentFile::open(&self.path)?;
        let data = file.bytes();
        if data.len() < SegmentHeader::LEN {
            return Ok(PollOutcome::Events(0));
        }
        let seg = Segment::parse(data).map_err(|e| TapeError::data(&self.path, e))?;
        let h = *seg.header();
        let closed = !header_is_unfinished(&h);
        let end = seg.frames_end();
        let before = self.events;
        while self.pos < end {
            let at = self.pos as usize;
            let rest = &data[at..end as usize];
            if seg.is_compressed() {
                let Some(bh) = BlockHeader::parse(rest) else {
                    break;
                };
                if !closed && super::source::index_trailer_at(data, self.pos) {
                    // The writer is closing the segment: the final header
                    // comes next, and with it the end of the frames.
                    break;
                }
                if bh.magic != MAGIC_BLOCK {
                    return Err(TapeError::data(
                        &self.path,
                        floxlog_core::Error::new(
                            ErrorKind::BadBlockMagic,
                            self.pos,
                            "block magic is not FBLK",
                        ),
                    ));
                }
                let body_end = BlockHeader::LEN as u64 + bh.compressed_size as u64;
                if body_end > rest.len() as u64 {
                    break;
                }
                let orig = bh.original_size as usize;
                if orig > crate::read::MAX_BLOCK_BYTES {
                    return Err(TapeError::data(
                        &self.path,
                        floxlog_core::Error::new(
                            ErrorKind::DecompressionFailed,
                            self.pos,
                            "block original_size is implausibly large",
                        ),
                    ));
                }
                self.scratch.resize(orig, 0);
                let body = &rest[BlockHeader::LEN..body_end as usize];
                match lz4_flex::block::decompress_into(body, &mut self.scratch) {
                    Ok(n) if n == orig => {}
                    _ => {
                        return Err(TapeError::data(
                            &self.path,
                            floxlog_core::Error::new(
                                ErrorKind::DecompressionFailed,
                                self.pos,
                                "LZ4 block does not decode to original_size bytes",
                            ),
                        ))
                    }
                }
                let mut p = 0usize;
                let mut n = 0u32;
                while p < orig {
                    let (ev, len) =
                        decode_frame(&self.scratch[p..orig], self.opts).map_err(|e| {
                            TapeError::data(
                                &self.path,
                                floxlog_core::Error {
                                    offset: self.pos,
                                    ..e
                                }
                                .in_block(p as u32),
                            )
                        })?;
                    if let Some(ev) = ev {
                        let frame = raw(&self.scratch[p..p + len]);
                        f(&ev, &frame)?;
                        self.events += 1;
                    }
                    n += 1;
                    p += len;
                }
                if n != bh.event_count as u32 {
                    return Err(TapeError::data(
                        &self.path,
                        floxlog_core::Error::new(
                            ErrorKind::MalformedRecord,
                            self.pos,
                            "block event_count does not match the frames it holds",
                        ),
                    ));
                }
                self.pos += body_end;
            } else {
                match decode_frame(rest, self.opts) {
                    Ok((ev, len)) => {
                        if let Some(ev) = ev {
                            let frame = raw(&rest[..len]);
                            f(&ev, &frame)?;
                            self.events += 1;
                        }
                        self.pos += len as u64;
                    }
                    Err(e) if e.kind == ErrorKind::Truncated && !closed => break,
                    Err(e) => {
                        return Err(TapeError::data(
                            &self.path,
                            floxlog_core::Error {
                                offset: self.pos,
                                ..e
                            },
                        ));
                    }
                }
            }
        }
        if closed && self.pos >= end {
            if self.events > before {
                return Ok(PollOutcome::Events(self.events - before));
            }
            return Ok(PollOutcome::Finished);
        }
        if closed && self.pos < end {
            return Err(TapeError::data(
                &self.path,
                floxlog_core::Error::new(
                    ErrorKind::Truncated,
                    self.pos,
                    "closed segment ends inside a frame or block",
                ),
            ));
        }
        Ok(PollOutcome::Events(self.events - before))
    }
}

fn raw(bytes: &[u8]) -> RawFrame<'_> {
    RawFrame {
        header: floxlog_core::FrameHeader::parse(bytes).unwrap_or_default(),
        payload: bytes
            .get(floxlog_core::FrameHeader::LEN..)
            .unwrap_or_default(),
    }
}
