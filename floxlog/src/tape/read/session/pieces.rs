//! A tape read in pieces on several threads, judged as one sequential
//! read: the front end supplies what to do with a piece's events.

use super::Session;
use crate::tape::error::TapeError;
use crate::tape::read::merge::{OpenedTape, Order};
use crate::tape::read::parallel::{concat_order, run_parallel};
use crate::tape::read::problem::Problem;
use crate::tape::read::ranges::{ColumnSink, RangeRead, Split};
use crate::tape::read::Request;
use std::cell::Cell;
use std::path::Path;

/// How the cuts between pieces are proven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proof {
    /// Before any read (index entries walked on the frame chain): the
    /// pieces always settle.
    Before,
    /// By the reads themselves (saves a pass over every frame header; a
    /// cut they do not prove gives no pieces).
    ByReads,
}

/// What work on a piece returns (see [`Session::pieces`]).
pub type PieceWork<'w, T> = dyn Fn(&Piece<'_>) -> Result<T, TapeError> + Sync + 'w;

/// One piece of a tape as a worker reads it (see [`Session::pieces`]).
pub struct Piece<'a> {
    pub(super) split: &'a Split<'a>,
    pub(super) index: usize,
    /// How its read went ([`Piece::read`]): what the session judges.
    pub(super) read: Cell<RangeRead>,
}

impl<'a> Piece<'a> {
    pub(super) fn new(split: &'a Split<'a>, index: usize) -> Piece<'a> {
        Piece {
            split,
            index,
            read: Cell::default(),
        }
    }

    /// Its place among the pieces (tape order).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The segment (index in the tape) it belongs to.
    pub fn segment(&self) -> Option<usize> {
        self.split.segment(self.index)
    }

    /// Its segment file's path.
    pub fn path(&self) -> Option<&Path> {
        self.split.path(self.index)
    }

    /// Its events into `sink` with their frame (or block) offsets, runs of
    /// trades through the core's batch kernel into the sink's columns
    /// (the engine's one batch loop). An error of the sink ends the read.
    /// Work reads its piece once.
    pub fn read<K: ColumnSink + ?Sized>(&self, sink: &mut K) -> Result<(), TapeError> {
        if let Some(s) = self.segment() {
            sink.segment(s);
        }
        self.read.set(self.split.read(self.index, sink)?);
        Ok(())
    }
}

/// What [`Session::pieces`] read, judged as a sequential read.
pub struct Pieces<T> {
    /// Every piece's result with its segment and whether a sequential
    /// read reaches it (a piece it does not reach holds no event of the
    /// tape's), in tape order.
    pub all: Vec<(T, Option<usize>, bool)>,
    /// The pieces to concatenate for the request's order (indexes into
    /// `all`, reached pieces only).
    pub order: Vec<usize>,
    /// The problems a sequential read reports.
    pub problems: Vec<Problem>,
}

impl Session {
    /// Reads the tape cut into pieces of at least `min_piece_bytes` on
    /// `jobs` threads (0: one per core), `work` reading each (calling
    /// [`Piece::read`] once), the cuts proven before any read; `None` when
    /// the pieces are no sequential read's (time order that concatenation
    /// cannot give): the caller then reads in one pass.
    pub fn pieces<T: Send>(
        &self,
        jobs: usize,
        min_piece_bytes: u64,
        work: &PieceWork<'_, T>,
    ) -> Result<Option<Pieces<T>>, TapeError> {
        let cfg = self.request.clone();
        pieces(
            &self.opened,
            &cfg,
            jobs,
            min_piece_bytes,
            Proof::Before,
            work,
        )
    }

    /// [`Session::pieces`] with index entries cut at on trust, proven by
    /// the reads themselves (saves a pass over every frame header); also
    /// `None` when a cut is not proven.
    pub fn pieces_on_trust<T: Send>(
        &self,
        jobs: usize,
        min_piece_bytes: u64,
        work: &PieceWork<'_, T>,
    ) -> Result<Option<Pieces<T>>, TapeError> {
        let cfg = self.request.clone();
        pieces(
            &self.opened,
            &cfg,
            jobs,
            min_piece_bytes,
            Proof::ByReads,
            work,
        )
    }
}

/// [`Session::pieces`] of `opened` read with `cfg`, cuts proven as `proof`
/// says.
fn pieces<T: Send>(
    opened: &OpenedTape,
    cfg: &Request,
    jobs: usize,
    min_piece_bytes: u64,
    proof: Proof,
    work: &PieceWork<'_, T>,
) -> Result<Option<Pieces<T>>, TapeError> {
    let split = match proof {
        Proof::Before => Split::new(opened, cfg, jobs, min_piece_bytes),
        Proof::ByReads => Split::on_trust(opened, cfg, jobs, min_piece_bytes),
    };
    let done = run_parallel(split.len(), jobs, &|i| {
        let p = Piece::new(&split, i);
        let t = work(&p)?;
        Ok((t, p.read.get()))
    })?;
    let segments: Vec<Option<usize>> = (0..split.len()).map(|i| split.segment(i)).collect();
    let reads: Vec<RangeRead> = done.iter().map(|d| d.1).collect();
    let Some((keep, problems)) = split.settle(&reads) else {
        return Ok(None);
    };
    let reached: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
    let order = match cfg.order {
        Order::File => reached,
        Order::Time => {
            let tracks: Vec<_> = reached.iter().map(|&i| reads[i].track).collect();
            match concat_order(&tracks) {
                Some(o) => o.into_iter().map(|k| reached[k]).collect(),
                // Pieces that overlap in time need the engine's merge.
                None => return Ok(None),
            }
        }
    };
    let all = done
        .into_iter()
        .zip(segments)
        .zip(keep)
        .map(|(((t, _), s), k)| (t, s, k))
        .collect();
    Ok(Some(Pieces {
        all,
        order,
        problems,
    }))
}
