"""Following a live tape: ``floxlog.follow``."""

from __future__ import annotations

import os
from typing import Any, Iterator, Union

import pyarrow as pa

from . import _args, _floxlog, _prices
from ._errors import FloxlogError

#: What ``start=`` takes besides a saved position.
STARTS = ("beginning", "end")
#: How a follower waits for the writer.
WAITS = ("blocking", "spin_yield", "busy_spin")

StartLike = Union[str, bytes]


class Follow:
    """The record batches of one record type of a live tape, as its writer
    appends them (see :func:`follow`). Iterate it for ``pyarrow.RecordBatch``
    es; the iteration stops after ``timeout`` seconds without a new event
    (:attr:`status` ``"timeout"``) or when the writer closed the tape
    (``"end"``), and raises :class:`FloxlogError` with kind
    ``"writer_gone"`` when the writer died without closing it. Iterating
    again carries on where it stopped (a restarted writer's events too)."""

    __slots__ = ("_f", "_path", "type", "prices", "timeout", "status")

    def __init__(self, native: Any, path: str, type: str, prices: str, timeout: float | None) -> None:
        self._f = native
        self._path = path
        #: The record type followed (``"trade"``, ``"book"``, ...).
        self.type = type
        #: The ``prices=`` of the batches.
        self.prices = prices
        #: Seconds to wait for a new event before the iteration stops (None: no limit).
        self.timeout = timeout
        #: What the last step found: ``"batch"``, ``"timeout"``, ``"end"`` or ``"writer_gone"``.
        self.status = "batch"

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return self

    def __next__(self) -> pa.RecordBatch:
        status, batch = self._f.next_batch(self.timeout)
        self.status = status
        if batch is not None:
            return batch
        if status == "writer_gone":
            raise FloxlogError(
                f"{self._path}: the writer is gone: no process holds the tape and it was not closed "
                "(killed or crashed); every event it wrote was returned",
                kind="writer_gone",
                path=self._path,
                hint="floxlog.recover or `floxlog recover` finishes its last segment; "
                "iterating again follows a restarted writer",
            )
        raise StopIteration

    @property
    def position(self) -> bytes:
        """Where the follower stands, after the last batch's last row: in
        each series of the tape, after the last event read from it
        (segments named by their ``created_ns``). Plain bytes (a
        little-endian, CRC-checked record): store them anywhere and pass
        them as ``position=`` to :func:`follow` to carry on with the next
        event, none missed or repeated."""
        return self._f.position()

    def __repr__(self) -> str:
        return f"<floxlog.Follow {self._path!r} type={self.type!r} status={self.status!r}>"


def follow(
    path: str | os.PathLike[str],
    type: str = "trade",
    start: StartLike = "beginning",
    timeout: float | None = None,
    *,
    position: bytes | None = None,
    rows: int = 65536,
    prices: str = "decimal",
    verify_crc: bool = True,
    wait: str = "blocking",
) -> Follow:
    """Follows a tape as its writer appends to it: a :class:`Follow`
    iterating ``pyarrow.RecordBatch`` es of record type ``type`` (events of
    other types are skipped), each holding the events that arrived since
    the previous one (at most ``rows``), in file order (segment after
    segment, as written; not merged by time), across rotations and writer
    restarts.

    ``start``: ``"beginning"`` or ``"end"`` (new events only).
    ``position``: bytes from :attr:`Follow.position`: carry on where that
    follower stood, in every series of the tape (also accepted as
    ``start=``). ``timeout``: seconds without a new event
    after which the iteration stops (``None``: no limit; a tape whose
    writer is gone never makes it wait). Half-written frames and a journal
    segment's zero tail are "nothing yet", never damage; damage raises
    :class:`FloxlogError` naming the file and byte offset.

    >>> for batch in floxlog.follow("tape", "trade", timeout=5):  # doctest: +SKIP
    ...     print(batch.num_rows)
    """
    p = os.fspath(path)
    rtype = _floxlog.record_type_name(type)
    prices = _prices.check(prices)
    rows = _args.count(rows, "rows")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise _args.usage(f"timeout: expected seconds >= 0 or None, not {timeout!r}")
        timeout = float(timeout)
    if isinstance(start, (bytes, bytearray, memoryview)):
        if position is not None:
            raise _args.usage("give a saved position as position= or start=, not both")
        position = bytes(start)
    if position is not None:
        if not isinstance(position, (bytes, bytearray, memoryview)):
            raise _args.usage(
                f"position: expected the bytes of Follow.position, not {position.__class__.__name__}"
            )
        if start not in ("beginning",) and not isinstance(start, (bytes, bytearray, memoryview)):
            raise _args.usage(f"position= resumes a saved position: start={start!r} cannot go with it")
        pos = bytes(position)
        kind = "position"
    else:
        kind, pos = _args.choice(start, "start", STARTS), None
    native = _floxlog.NativeFollow(
        p,
        rtype,
        start=kind,
        position=pos,
        verify_crc=_args.flag(verify_crc, "verify_crc"),
        wait=_args.choice(wait, "wait", WAITS),
        rows=rows,
        prices=prices,
    )
    return Follow(native, p, rtype, prices, timeout)
